//! Terminal input applied to the app, a batch at a time. Keys become
//! actions, or edits of the text input that has the focus; a paste, and a
//! run of typed characters, each go in as one insertion; the what-if edit
//! is checked once per batch; the control thread gets what keys ask of it,
//! with at most one `Wake`. A stop signal ends the batch at once.

use std::collections::VecDeque;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

use super::app::{App, Dialog, LogKind};
use super::command::Command;
use super::input::{LONGEST_PASTE, TermInput};
use super::keys::{self, KeyAction, action_for};
use super::modal::Modal;
use super::stop::StopFlag;
use super::view;

/// Applies `queued` to `app` in order, until it is empty or `stop` is
/// raised (the rest is dropped then); what the control thread must do.
///
/// A question that opens (arming, applying rules) takes only keys typed
/// once it is drawn: keys that came with the key that asks for it (typed
/// ahead, or pasted without bracketed paste) and keys queued when it
/// opens are dropped, and the log says so; they never reach the layer
/// under it, and never answer it.
pub fn apply(app: &mut App, queued: &mut VecDeque<TermInput>, stop: &StopFlag) -> Vec<Command> {
    let mut batch = Batch::default();
    while let Some(input) = queued.pop_front() {
        if stop.raised().is_some() {
            queued.clear();
            return Vec::new();
        }
        if batch.asked || app.modals().question_unseen() {
            batch.insert_typed(app);
            batch.dropped += usize::from(matches!(
                input,
                TermInput::Event(
                    Event::Key(KeyEvent {
                        kind: KeyEventKind::Press | KeyEventKind::Repeat,
                        ..
                    }) | Event::Paste(_)
                )
            ));
            continue;
        }
        match input {
            TermInput::Event(Event::Key(k)) if app.typing() && typed_char(k).is_some() => {
                batch.typed.extend(typed_char(k));
            }
            TermInput::Event(ev) => {
                batch.insert_typed(app);
                batch.event(app, ev);
            }
            TermInput::PasteCut(dropped) => app.note(
                LogKind::Problem,
                format!(
                    "the paste was longer than {} MiB: its last {dropped} bytes were dropped",
                    LONGEST_PASTE >> 20
                ),
            ),
        }
    }
    batch.finish(app)
}

/// What a batch has gathered so far.
#[derive(Default)]
struct Batch {
    /// Characters typed into the focused text input, not yet inserted.
    typed: String,
    /// The what-if edit changed and must be checked again.
    recheck: bool,
    commands: Vec<Command>,
    wake: bool,
    /// A key asked the control thread for what may be a question (`s`,
    /// `A`): the rest of the batch is dropped.
    asked: bool,
    /// Keys and pastes dropped ahead of a question.
    dropped: usize,
}

/// Whether the what-if editor has the keys.
fn whatif_on_top(app: &App) -> bool {
    matches!(app.modals().top(), Some(Modal::WhatIf(_)))
}

impl Batch {
    /// Puts the characters typed so far in as one insertion.
    fn insert_typed(&mut self, app: &mut App) {
        if !self.typed.is_empty() {
            self.recheck |= app.insert_text(&self.typed) && whatif_on_top(app);
            self.typed.clear();
        }
    }

    fn event(&mut self, app: &mut App, ev: Event) {
        if let Event::Paste(text) = ev {
            if app.insert_text(&text) {
                self.recheck |= whatif_on_top(app);
            } else {
                app.note(
                    LogKind::Note,
                    "a paste was ignored: it goes into a text input (w, / or e open one), never taken for keys",
                );
            }
            return;
        }
        if let Event::Key(k) = ev
            && k.kind != KeyEventKind::Release
            && whatif_on_top(app)
        {
            self.recheck |= app.whatif_edit(k);
            return;
        }
        match event(app, ev) {
            Some(Command::Wake { .. }) => self.wake = true,
            Some(command) => {
                self.asked |= matches!(
                    command,
                    Command::Act(KeyAction::Step | KeyAction::Autonomous)
                );
                self.commands.push(command);
            }
            None => {}
        }
    }

    fn finish(mut self, app: &mut App) -> Vec<Command> {
        self.insert_typed(app);
        if self.dropped > 0 {
            app.note(
                LogKind::Note,
                format!(
                    "dropped {} typed ahead of a question: it takes only keys pressed once it is shown",
                    crate::report::words::count(self.dropped as f64, "key", "keys")
                ),
            );
        }
        if self.recheck {
            app.check_whatif();
        }
        if self.wake {
            self.commands.push(Command::Wake {
                paused: app.timeline().paused(),
            });
        }
        self.commands
    }
}

/// The character a key types into a text input: a plain or shifted
/// character (with Ctrl or Alt it is an editing key or nothing).
fn typed_char(k: KeyEvent) -> Option<char> {
    match k.code {
        KeyCode::Char(c)
            if k.kind != KeyEventKind::Release
                && (k.modifiers - KeyModifiers::SHIFT).is_empty() =>
        {
            Some(c)
        }
        _ => None,
    }
}

/// One key or mouse event on the app; what the control thread must do.
/// A key goes to the layer on top ([`App::modals`]), the one drawn last.
pub fn event(app: &mut App, ev: Event) -> Option<Command> {
    let action = match ev {
        Event::Key(k) if k.kind != KeyEventKind::Release => match app.modals().top() {
            Some(Modal::Tune) => {
                app.tune_key(k);
                return None;
            }
            Some(Modal::Export(_)) => {
                let path = app.export_key(k)?;
                let text = super::log_export::text(app.log());
                return Some(Command::Export { path, text });
            }
            Some(Modal::WhatIf(_)) => {
                app.whatif_key(k);
                return None;
            }
            Some(Modal::Search) => {
                app.search_key(k);
                return None;
            }
            Some(Modal::GoTo(_)) => return app.goto_key(k),
            Some(Modal::SaveRules(_)) => return app.save_key(k),
            // Any key closes the help or a message, bound or not (the
            // help's paging keys turn its pages).
            Some(
                Modal::Help
                | Modal::Dialog(
                    Dialog::Message(_)
                    | Dialog::ReloadFailed(_)
                    | Dialog::Written(_)
                    | Dialog::Exported(_),
                ),
            ) => Some(action_for(k).unwrap_or(KeyAction::Later)),
            // Ctrl-C closes a question as it closes every other layer
            // (a prompt, the editor, the tune): declined, never a quit.
            Some(Modal::Dialog(_)) if keys::is_ctrl_c(k) => Some(KeyAction::No),
            Some(Modal::Dialog(_)) | None => action_for(k),
        },
        // A layer takes the keys and draws over the screen: a click or the
        // wheel must not change what lies under it (the view behind the
        // arming question, the log behind the what-if editor).
        Event::Mouse(_) if !app.modals().is_empty() => None,
        Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollUp => Some(KeyAction::Up),
            MouseEventKind::ScrollDown => Some(KeyAction::Down),
            MouseEventKind::Down(crossterm::event::MouseButton::Left) => {
                view::click(app, m.column, m.row);
                None
            }
            _ => None,
        },
        _ => None,
    }?;
    Some(app.update(action).unwrap_or(Command::Wake {
        paused: app.timeline().paused(),
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::control::controller::Mode;
    use crate::rules::{SourceFile, SystemFacts, load};
    use crate::tui::app::SourceLabel;
    use crate::tui::local::Local;
    use crate::tui::modal::Modal;

    fn app() -> App {
        let facts = SystemFacts::any_machine(4, "test");
        let file = SourceFile::new(
            "t.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = Arc::new(load(&file, &facts).rules);
        let mut app =
            Local::new(rules, file, SourceLabel::Live("/".into()), Mode::Observe).into_app();
        app.set_facts(facts);
        app
    }

    const WAKE: Command = Command::Wake { paused: false };

    fn keys(text: &str) -> impl Iterator<Item = TermInput> + '_ {
        text.chars()
            .map(|c| TermInput::Event(Event::Key(KeyEvent::from(KeyCode::Char(c)))))
    }

    fn press(code: KeyCode) -> TermInput {
        TermInput::Event(Event::Key(KeyEvent::from(code)))
    }

    fn ctrl(c: char) -> TermInput {
        TermInput::Event(Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::CONTROL,
        )))
    }

    fn paste(text: &str) -> TermInput {
        TermInput::Event(Event::Paste(text.into()))
    }

    /// One batch read after the screen was drawn.
    fn run(app: &mut App, inputs: impl IntoIterator<Item = TermInput>) -> Vec<Command> {
        app.drawn();
        undrawn(app, inputs)
    }

    /// One batch read before the screen was drawn again.
    fn undrawn(app: &mut App, inputs: impl IntoIterator<Item = TermInput>) -> Vec<Command> {
        let mut queued: VecDeque<TermInput> = inputs.into_iter().collect();
        let commands = apply(app, &mut queued, &StopFlag::new());
        assert!(queued.is_empty(), "the whole batch is applied");
        commands
    }

    /// nu53 F6: `Awxyz` in one read opened the what-if editor under the
    /// "Autonomous mode?" question and typed into it; a `y` read before
    /// the question was drawn must not answer it either.
    #[test]
    fn keys_read_with_a_key_that_asks_never_reach_the_layer_under_the_question() {
        for asks in ["A", "s"] {
            let mut a = app();
            let commands = run(&mut a, keys(&format!("{asks}wxyz")).chain([paste("y")]));
            assert_eq!(
                commands.len(),
                1,
                "{asks}: only the key that asks goes out: {commands:?}"
            );
            assert!(
                matches!(
                    commands[0],
                    Command::Act(KeyAction::Autonomous | KeyAction::Step)
                ),
                "{asks}: {commands:?}"
            );
            assert!(a.modals().is_empty(), "{asks}: {:?}", a.modals());
            assert!(
                logged(&a, "dropped 5 keys typed ahead of a question"),
                "{asks}"
            );
        }
        // The question arrives with keys already queued (read in the same
        // batch as the reply, or before it was drawn): they are dropped.
        let mut a = app();
        a.apply(crate::tui::update::Update::Show(Dialog::ConfirmAuto));
        let commands = undrawn(&mut a, keys("wy"));
        assert!(commands.is_empty(), "{commands:?}");
        assert_eq!(a.modals().dialog(), Some(&Dialog::ConfirmAuto));
        assert!(logged(&a, "dropped 2 keys typed ahead of a question"));
        // Once drawn, a `y` answers it.
        let commands = run(&mut a, keys("y"));
        assert!(
            commands.contains(&Command::SetMode(Mode::Auto)),
            "{commands:?}"
        );
        // A message is no question: a key read with it closes it as ever.
        let mut a = app();
        a.show(Dialog::Message("read me".into()));
        undrawn(&mut a, keys("x"));
        assert!(a.modals().is_empty());
    }

    fn logged(app: &App, text: &str) -> bool {
        app.log().lines().iter().any(|l| l.text.contains(text))
    }

    #[test]
    fn a_paste_with_no_text_input_is_ignored_never_taken_for_keys() {
        let mut a = app();
        let commands = run(&mut a, [paste("qAysy?h\r\x1b[A")]);
        assert_eq!(commands, Vec::new(), "no quit, no arming, no approval");
        assert!(!a.quit() && a.modals().is_empty());
        assert!(logged(&a, "a paste was ignored"));
        // A message takes keys but has no text to paste into.
        a.show(Dialog::Message("read me".into()));
        assert!(!a.typing());
        assert_eq!(run(&mut a, [paste("q")]), Vec::new());
        assert!(
            a.modals().dialog().is_some(),
            "the pasted q did not close it"
        );
    }

    #[test]
    fn any_key_closes_a_refused_reload_and_nothing_else_happens() {
        let mut a = app();
        a.show(Dialog::ReloadFailed(
            "r.conf:2:9: error: unknown name `x`\n  |\n2 | HOTPLUG=\"x\"\n  |         ^\n".into(),
        ));
        // Unbound, and bound keys alike: none acts behind the report (the
        // screen only wakes the control thread again).
        let acts = |commands: Vec<Command>| {
            commands
                .into_iter()
                .filter(|c| !matches!(c, Command::Wake { .. }))
                .collect::<Vec<_>>()
        };
        assert_eq!(acts(run(&mut a, keys("x"))), Vec::new());
        assert!(a.modals().is_empty(), "x closed it");
        a.show(Dialog::ReloadFailed("again".into()));
        assert_eq!(acts(run(&mut a, keys("A"))), Vec::new());
        assert!(a.modals().is_empty(), "A closed it and asked nothing");
    }

    #[test]
    fn a_paste_and_typed_keys_in_the_whatif_editor_are_checked_once() {
        let mut a = app();
        a.update(KeyAction::WhatIf);
        let checks = |a: &App| a.modals().whatif().map_or(0, |e| e.checks());
        let before = checks(&a);
        let text = |a: &App| a.modals().whatif().map(|e| e.input().text().to_string());
        let mut batch = vec![ctrl('u'), paste(" or\r\n(")];
        batch.extend(keys(&"1 ".repeat(20_000)));
        batch.push(paste("\x1b[31m1)\n"));
        let commands = run(&mut a, batch);
        assert_eq!(
            commands,
            Vec::new(),
            "editing asks nothing of the control thread"
        );
        assert_eq!(checks(&a), before + 1, "one check for the whole batch");
        let typed = text(&a).unwrap_or_default();
        assert!(typed.starts_with(" or ("), "{:?}", &typed[..20]);
        assert!(
            typed.ends_with("1 [31m1)"),
            "{:?}",
            &typed[typed.len() - 20..]
        );
        assert_eq!(typed.chars().count(), 5 + 40_000 + 6);
        let error = a.modals().whatif().and_then(|e| e.error().cloned());
        assert!(error.is_some(), "the check saw the final text: {error:?}");
        // A key on its own is checked at once, as before.
        run(&mut a, [press(KeyCode::Backspace)]);
        assert_eq!(checks(&a), before + 2);
    }

    #[test]
    fn typed_runs_stop_where_the_focus_changes() {
        let mut a = app();
        // `/` opens the search, the letters are its text, Enter keeps it,
        // and the `q` after it is a key again.
        let mut batch: Vec<TermInput> = keys("/ab").collect();
        batch.push(paste("c\n"));
        batch.extend(keys("D"));
        batch.push(press(KeyCode::Enter));
        batch.extend(keys("q"));
        let commands = run(&mut a, batch);
        assert_eq!(a.log().filter(), Some("abcD"));
        assert!(!a.modals().is_open(&Modal::Search));
        assert!(commands.contains(&Command::Quit), "{commands:?}");
    }

    #[test]
    fn a_pasted_path_in_the_export_prompt_is_not_submitted_by_its_newline() {
        let mut a = app();
        let mut batch: Vec<TermInput> = keys("e").collect();
        batch.extend([ctrl('u'), paste("/tmp/x y\n")]);
        let commands = run(&mut a, batch);
        assert_eq!(commands, vec![WAKE], "only the `e` itself");
        assert_eq!(
            match a.modals().top() {
                Some(Modal::Export(input)) => Some(input.text()),
                _ => None,
            },
            Some("/tmp/x y")
        );
        let commands = run(&mut a, [press(KeyCode::Enter)]);
        assert!(
            matches!(&commands[..], [Command::Export { path, .. }] if path.as_os_str() == "/tmp/x y"),
            "{commands:?}"
        );
    }

    #[test]
    fn many_keys_wake_the_control_thread_once() {
        let mut a = app();
        let batch = std::iter::repeat_n(press(KeyCode::Down), 5_000).chain(keys("jkjk"));
        assert_eq!(run(&mut a, batch), vec![WAKE]);
        // Keys that need the control thread keep their order, the one
        // wake last.
        let commands = run(&mut a, keys("+j-"));
        assert_eq!(
            commands,
            vec![
                Command::Act(KeyAction::Faster),
                Command::Act(KeyAction::Slower),
                WAKE
            ]
        );
    }

    #[test]
    fn a_stop_signal_drops_the_rest_of_the_batch() {
        let mut a = app();
        let stop = StopFlag::new();
        stop.raise(15);
        let mut queued: VecDeque<TermInput> = keys("q/abc").collect();
        assert_eq!(apply(&mut a, &mut queued, &stop), Vec::new());
        assert!(queued.is_empty());
        assert!(
            !a.quit() && a.log().filter().is_none(),
            "nothing of it was applied"
        );
    }

    #[test]
    fn a_cut_paste_is_said_in_the_log() {
        let mut a = app();
        a.update(KeyAction::WhatIf);
        run(&mut a, [paste("x"), TermInput::PasteCut(12_345)]);
        assert!(logged(&a, "its last 12345 bytes were dropped"));
    }

    /// A scenario short enough that a tune of it is cheap.
    fn tiny_scenario() -> crate::sim::Scenario {
        let text = "name = \"tiny\"\ncpus = 2\nonline = 1\nmemory_mib = 1024\nduration = \"0:05\"\nseed = 1\n\n[[phases]]\nname = \"idle\"\nstart = \"0:00\"\nthreads = 1\ncpu_per_thread = 0.1\nworking_set_mib = 100\n";
        crate::sim::Scenario::parse("tiny", text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// One modal state: how it is opened, what shows it on screen, a key
    /// that only this layer handles that way, and what that key did.
    struct Case {
        name: &'static str,
        open: fn(&mut App),
        shown: &'static [&'static str],
        key: TermInput,
        /// Whether the key did this layer's thing, given the layer that
        /// was on top before it.
        did: fn(Option<&Modal>, &App, &[Command]) -> bool,
    }

    fn cases() -> Vec<Case> {
        vec![
            Case {
                name: "help",
                open: |a| {
                    run(a, keys("?"));
                },
                shown: &["this help"],
                // Unbound: only the help takes it (and closes).
                key: press(KeyCode::Char('x')),
                did: |was, a, _| matches!(was, Some(Modal::Help)) && a.modals().is_empty(),
            },
            Case {
                name: "message",
                open: |a| a.show(Dialog::Message("the disk is on fire".into())),
                shown: &["the disk is on fire"],
                key: press(KeyCode::Char('x')),
                did: |was, a, _| {
                    matches!(was, Some(Modal::Dialog(Dialog::Message(_)))) && a.modals().is_empty()
                },
            },
            Case {
                name: "autonomous question",
                open: |a| a.show(Dialog::ConfirmAuto),
                shown: &["Autonomous mode"],
                // Without the question, `y` with nothing proposed asks
                // nothing of the control thread.
                key: press(KeyCode::Char('y')),
                did: |_, a, c| a.modals().is_empty() && c.contains(&Command::SetMode(Mode::Auto)),
            },
            Case {
                name: "export prompt",
                open: |a| {
                    run(a, keys("e"));
                },
                shown: &["Export the log"],
                // `q` would quit anywhere but in a text input.
                key: press(KeyCode::Char('q')),
                did: |_, a, c| {
                    !a.quit()
                        && !c.contains(&Command::Quit)
                        && matches!(a.modals().top(), Some(Modal::Export(i)) if i.text().ends_with('q'))
                },
            },
            Case {
                name: "what-if editor",
                open: |a| {
                    run(a, keys("w"));
                },
                shown: &["What-if:"],
                key: press(KeyCode::Char('q')),
                did: |_, a, c| {
                    !a.quit()
                        && !c.contains(&Command::Quit)
                        && a.modals()
                            .whatif()
                            .is_some_and(|e| e.input().text().ends_with('q'))
                },
            },
        ]
        .into_iter()
        .chain(more_cases())
        .collect()
    }

    /// The layers of keeping an edit (the write prompt, the question
    /// that applies it), the log search and the tune's box.
    fn more_cases() -> Vec<Case> {
        vec![
            Case {
                name: "write prompt",
                open: |a| {
                    run(a, keys("w"));
                    run(a, [ctrl('s')]);
                },
                shown: &["Write the edited rules"],
                key: press(KeyCode::Char('q')),
                did: |_, a, c| {
                    !a.quit()
                        && !c.contains(&Command::Quit)
                        && matches!(a.modals().top(), Some(Modal::SaveRules(p)) if p.input.text().ends_with('q'))
                },
            },
            Case {
                name: "apply question",
                open: |a| {
                    let mut batch: Vec<TermInput> = keys("w0").collect();
                    batch.push(ctrl('r'));
                    run(a, batch);
                },
                shown: &["Apply the edited rules?", "+ HOTPLUG=\"10\""],
                // `y` with nothing proposed asks nothing of the control thread.
                key: press(KeyCode::Char('y')),
                did: |_, a, c| {
                    a.modals().is_empty()
                        && matches!(c, [Command::ApplyRules(r)] if r.bytes.ends_with(b"HOTPLUG=\"10\"\nHOTUNPLUG=\"0\"\n"))
                },
            },
            Case {
                name: "log search",
                open: |a| {
                    run(a, keys("/"));
                },
                shown: &["Search the log: "],
                key: press(KeyCode::Char('q')),
                did: |_, a, c| {
                    !a.quit() && !c.contains(&Command::Quit) && a.log().filter() == Some("q")
                },
            },
            Case {
                name: "tune box",
                open: |a| {
                    a.set_sim(tiny_scenario(), false);
                    run(a, keys("T"));
                },
                shown: &["Tun"],
                // The tune box alone closes on `q` instead of quitting.
                key: press(KeyCode::Char('q')),
                did: |was, a, c| {
                    matches!(was, Some(Modal::Tune))
                        && !a.quit()
                        && !c.contains(&Command::Quit)
                        && a.modals().is_empty()
                },
            },
        ]
    }

    #[test]
    fn the_layer_drawn_on_top_is_the_one_that_takes_the_keys() {
        for case in cases() {
            let mut a = app();
            (case.open)(&mut a);
            let top = a.modals().top().cloned();
            assert!(top.is_some(), "{}: a layer is open", case.name);
            let before = view::drawn_text(&a);
            for text in case.shown {
                assert!(before.contains(text), "{}: drawn:\n{before}", case.name);
            }
            let commands = run(&mut a, [case.key.clone()]);
            assert!(
                (case.did)(top.as_ref(), &a, &commands),
                "{}: the key went to it: {commands:?} {:?}",
                case.name,
                a.modals().top()
            );
            // The same key on a bare screen does something else: it did
            // this because the layer was on top.
            let mut bare = app();
            let bare_commands = run(&mut bare, [case.key.clone()]);
            assert!(
                !(case.did)(None, &bare, &bare_commands),
                "{}: a bare screen does the same with the key",
                case.name
            );
            let after = view::drawn_text(&a);
            if a.modals().is_empty() {
                for text in case.shown {
                    assert!(
                        !after.contains(text),
                        "{}: still drawn:
{after}",
                        case.name
                    );
                }
            }
        }
    }

    #[test]
    fn a_message_over_an_open_layer_takes_the_next_key_and_hands_back_the_rest() {
        for case in cases() {
            let mut a = app();
            (case.open)(&mut a);
            let under = a.modals().top().cloned();
            if matches!(under, Some(Modal::Dialog(_))) {
                // The newest question replaces an older one.
                a.show(Dialog::Message("newer".into()));
                let dialogs = a.modals().layers().iter();
                let dialogs = dialogs.filter(|m| matches!(m, Modal::Dialog(_)));
                assert_eq!(dialogs.count(), 1, "{}", case.name);
                assert_eq!(
                    a.modals().dialog(),
                    Some(&Dialog::Message("newer".into())),
                    "{}",
                    case.name
                );
                continue;
            }
            // The control thread says something while the layer is open.
            a.show(Dialog::Message("reload failed".into()));
            let screen = view::drawn_text(&a);
            assert!(screen.contains("reload failed"), "{}:\n{screen}", case.name);
            assert!(
                matches!(a.modals().top(), Some(Modal::Dialog(_))),
                "{}: the message is on top",
                case.name
            );
            // `q` closes the message: it neither quits nor types.
            let commands = run(&mut a, keys("q"));
            assert!(
                !commands.contains(&Command::Quit) && !a.quit(),
                "{}",
                case.name
            );
            assert_eq!(
                a.modals().top(),
                under.as_ref(),
                "{}: the layer under it is back",
                case.name
            );
            // And the next key is the layer's again.
            let commands = run(&mut a, [case.key.clone()]);
            assert!(
                (case.did)(under.as_ref(), &a, &commands),
                "{}: {commands:?}",
                case.name
            );
        }
    }

    #[test]
    fn a_click_or_the_wheel_changes_nothing_under_an_open_layer() {
        use crossterm::event::{MouseButton, MouseEvent};
        let mouse = |kind, column, row| {
            TermInput::Event(Event::Mouse(MouseEvent {
                kind,
                column,
                row,
                modifiers: KeyModifiers::NONE,
            }))
        };
        // Without a layer, a click along the tabs does change the view.
        let mut bare = app();
        bare.set_screen_size(
            100,
            30,
            view::cpu_panel_size(ratatui::layout::Rect::new(0, 0, 100, 30)),
        );
        for column in 0..100 {
            run(
                &mut bare,
                [mouse(MouseEventKind::Down(MouseButton::Left), column, 1)],
            );
        }
        assert_ne!(bare.selection().view(), crate::tui::app::View::Overview);
        for case in cases() {
            let mut a = app();
            a.set_screen_size(
                100,
                30,
                view::cpu_panel_size(ratatui::layout::Rect::new(0, 0, 100, 30)),
            );
            (case.open)(&mut a);
            let top = a.modals().top().cloned();
            let view = a.selection().view();
            let mut inputs: Vec<TermInput> = (0..100)
                .map(|column| mouse(MouseEventKind::Down(MouseButton::Left), column, 1))
                .collect();
            inputs.extend([
                mouse(MouseEventKind::ScrollDown, 5, 5),
                mouse(MouseEventKind::ScrollUp, 5, 5),
            ]);
            assert_eq!(run(&mut a, inputs), Vec::new(), "{}", case.name);
            assert_eq!(
                a.selection().view(),
                view,
                "{}: the view under it",
                case.name
            );
            assert_eq!(
                a.modals().top(),
                top.as_ref(),
                "{}: still on top",
                case.name
            );
        }
    }

    #[test]
    fn question_mark_in_the_tune_box_opens_the_help_at_its_keys_and_any_key_goes_back() {
        let mut a = app();
        a.set_sim(tiny_scenario(), false);
        run(&mut a, keys("T"));
        assert!(a.modals().is_open(&Modal::Tune));
        run(&mut a, keys("?"));
        assert_eq!(a.modals().top(), Some(&Modal::Help));
        let (w, h) = crate::tui::help::inside(80, 24);
        let layout = crate::tui::help::layout(w, h);
        // At 80×24 the tune box's keys are past the first page.
        assert!(a.help_page() > 0 && layout.pages.len() > 1);
        let page = &layout.pages[a.help_page()];
        assert!(
            page.iter()
                .flatten()
                .any(|r| r.heading && r.text.starts_with("Tune box")),
            "page {} of the help: {page:?}",
            a.help_page()
        );
        // Any other key closes the help; the tune box is still there.
        run(&mut a, keys("x"));
        assert_eq!(a.modals().top(), Some(&Modal::Tune));
    }

    #[test]
    fn ctrl_c_closes_a_question_or_the_tune_declined_and_never_quits() {
        let questions = [Dialog::ConfirmAuto, Dialog::Message("read me".into())];
        for dialog in questions {
            let mut a = app();
            a.show(dialog.clone());
            let commands = run(&mut a, [ctrl('c')]);
            assert!(a.modals().dialog().is_none(), "{dialog:?} stays open");
            assert!(!a.quit(), "{dialog:?}: Ctrl-C quit");
            assert!(
                !commands.contains(&Command::Quit)
                    && !commands.iter().any(|c| matches!(c, Command::SetMode(_))),
                "{dialog:?}: {commands:?}"
            );
        }
        // With Shift held (Caps Lock), over the help.
        let mut a = app();
        a.update(KeyAction::Help);
        a.show(Dialog::ConfirmAuto);
        let shifted = TermInput::Event(Event::Key(KeyEvent::new(
            KeyCode::Char('C'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        )));
        let commands = run(&mut a, [shifted]);
        assert!(a.modals().dialog().is_none());
        assert!(!a.quit() && !commands.contains(&Command::Quit));
        // Ctrl-C with nothing open still quits.
        assert!(run(&mut a, [ctrl('c')]).contains(&Command::Quit));

        let mut a = app();
        let text = "name = \"s\"\ncpus = 2\nonline = 1\nmemory_mib = 1024\nduration = \"0:10\"\nseed = 1\n\n[[phases]]\nname = \"idle\"\nstart = \"0:00\"\nthreads = 1\ncpu_per_thread = 1\nworking_set_mib = 10\n";
        let scenario = crate::sim::Scenario::parse("s", text).expect("scenario");
        a.set_sim(scenario, false);
        run(&mut a, keys("T"));
        assert!(a.modals().is_open(&Modal::Tune));
        let commands = run(&mut a, [ctrl('c')]);
        assert!(!a.modals().is_open(&Modal::Tune), "the tune's box closes");
        assert!(
            !a.quit() && !commands.contains(&Command::Quit),
            "{commands:?}"
        );
    }
}
