//! Edits you can keep: the what-if editor's edit (and a tune's picked
//! point) applied to the running session after a confirmation that shows
//! the diff, through the same reload as `r` with the history kept, and
//! written to a new file that `plugtop check` and cpuplugd's load accept;
//! an existing file replaced only after a yes, never through a link.
//! Keys go through the same dispatch as the screen's, the commands through
//! the same session as the control thread's.

use std::collections::VecDeque;
use std::path::Path;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use plugtop::tui::command::Command;
use plugtop::tui::dispatch;
use plugtop::tui::input::TermInput;
use plugtop::tui::local::Local;
use plugtop::tui::modal::{Dialog, Modal};
use plugtop::tui::stop::StopFlag;
use plugtop::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The oscillating scenario under its incident rules, `readings` in.
fn simulated(readings: usize) -> Local {
    let options = plugtop::tui::run::Options::simulating(
        "examples/scenarios/oscillating.toml",
        Some("examples/rules/oscillating-tight.conf".into()),
    );
    let (mut local, mut source) = plugtop::tui::run::prepare(&options).expect("prepare");
    for _ in 0..readings {
        let sample = source
            .next_sample()
            .expect("the scenario goes on")
            .expect("a reading");
        local.ingest(sample);
    }
    local
}

fn key(code: KeyCode) -> TermInput {
    TermInput::Event(Event::Key(KeyEvent::from(code)))
}

fn ctrl(c: char) -> TermInput {
    TermInput::Event(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )))
}

fn text(t: &str) -> Vec<TermInput> {
    t.chars().map(|c| key(KeyCode::Char(c))).collect()
}

/// `inputs` through the screen's dispatch, read after the screen was
/// drawn (a question open is seen, so a `y` answers it), and what they
/// ask of the control thread carried out; the commands.
fn press(local: &mut Local, inputs: Vec<TermInput>) -> Vec<Command> {
    local.app_mut().drawn();
    let mut queued: VecDeque<TermInput> = inputs.into();
    let commands = dispatch::apply(local.app_mut(), &mut queued, &StopFlag::new());
    for c in commands.clone() {
        local.run(c);
    }
    commands
}

fn screen(local: &Local, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("backend");
    terminal.draw(|f| view::draw(f, local.app())).expect("draw");
    plugtop::tui::export::text(terminal.backend().buffer())
}

/// Opens the editor on HOTPLUG and types `threshold` over the last `0.3`.
fn edit_hotplug(local: &mut Local, threshold: &str) {
    let mut inputs = text("w");
    inputs.extend(std::iter::repeat_n(key(KeyCode::Backspace), 3));
    inputs.extend(text(threshold));
    press(local, inputs);
    let typed = local
        .app()
        .modals()
        .whatif()
        .map(|e| e.input().text().to_string());
    assert_eq!(
        typed.as_deref(),
        Some(format!("((1 - CP_Active) * onumcpus) < {threshold}").as_str())
    );
}

fn rule_text(local: &Local, kind: plugtop::rules::RuleKind) -> String {
    let app = local.app();
    app.rules()
        .rule(kind)
        .map(|r| app.file().snippet(r.value_span))
        .unwrap_or_default()
}

#[test]
fn an_applied_edit_runs_from_the_next_interval_with_the_history_kept() {
    use plugtop::rules::RuleKind;
    let mut local = simulated(40);
    let history = local.app().timeline().frames().len();
    edit_hotplug(&mut local, "0.05");
    press(&mut local, vec![ctrl('r')]);
    let question = screen(&local, 80, 24);
    assert!(question.contains("Apply the edited rules?"), "{question}");
    assert!(
        question.contains("- HOTPLUG=\"((1 - CP_Active) * onumcpus) < 0.3\""),
        "{question}"
    );
    assert!(
        question.contains("+ HOTPLUG=\"((1 - CP_Active) * onumcpus) < 0.05\""),
        "{question}"
    );
    assert!(question.contains("y apply"), "{question}");
    assert_snapshot_of!("keep_edits", "apply_80x24", question);
    assert_snapshot_of!("keep_edits", "apply_160x48", screen(&local, 160, 48));
    // Nothing is applied before the yes.
    assert!(rule_text(&local, RuleKind::Hotplug).ends_with("< 0.3"));
    let commands = press(&mut local, text("y"));
    assert!(
        matches!(commands.as_slice(), [Command::ApplyRules(_), ..]),
        "{commands:?}"
    );
    assert!(
        local.app().modals().is_empty(),
        "{:?}",
        local.app().modals()
    );
    assert!(rule_text(&local, RuleKind::Hotplug).ends_with("< 0.05"));
    assert_eq!(
        local.app().file().name(),
        "examples/rules/oscillating-tight.conf (edited)"
    );
    assert_eq!(
        local.app().timeline().frames().len(),
        history,
        "the history is kept"
    );
    let log: Vec<&str> = local
        .app()
        .log()
        .lines()
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert!(
        log.iter().any(|l| l.contains("the history is kept")),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l.contains("the edited rules are in force (not saved")),
        "{log:?}"
    );
    // The session decides with them: the header names the edited file.
    let after = screen(&local, 160, 48);
    assert!(after.contains("oscillating-tight.conf (edited)"), "{after}");
}

#[test]
fn no_goes_back_to_the_editor_and_nothing_changes() {
    let mut local = simulated(40);
    edit_hotplug(&mut local, "0.05");
    press(&mut local, vec![ctrl('r')]);
    let commands = press(&mut local, text("n"));
    assert!(
        commands
            .iter()
            .all(|c| !matches!(c, Command::ApplyRules(_)))
    );
    assert!(matches!(local.app().modals().top(), Some(Modal::WhatIf(_))));
    assert_eq!(
        local.app().file().name(),
        "examples/rules/oscillating-tight.conf"
    );
}

#[test]
fn an_edit_cpuplugd_would_refuse_is_neither_applied_nor_written() {
    let mut local = simulated(10);
    let mut inputs = text("w(");
    inputs.push(ctrl('r'));
    press(&mut local, inputs);
    match local.app().modals().dialog() {
        Some(Dialog::Message(m)) => assert!(m.contains("cpuplugd would refuse"), "{m}"),
        other => panic!("{other:?}"),
    }
    press(&mut local, vec![key(KeyCode::Esc), ctrl('s')]);
    assert!(
        matches!(local.app().modals().dialog(), Some(Dialog::Message(_))),
        "no write prompt: {:?}",
        local.app().modals().top()
    );
    // Nothing edited: nothing to apply.
    let mut fresh = simulated(10);
    press(&mut fresh, vec![key(KeyCode::Char('w')), ctrl('r')]);
    match fresh.app().modals().dialog() {
        Some(Dialog::Message(m)) => assert!(m.contains("nothing to apply"), "{m}"),
        other => panic!("{other:?}"),
    }
}

fn write_to(local: &mut Local, path: &Path) -> Vec<Command> {
    let mut inputs = vec![ctrl('s'), ctrl('u')];
    inputs.extend(text(&path.display().to_string()));
    inputs.push(key(KeyCode::Enter));
    press(local, inputs)
}

fn check(path: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["check", &path.display().to_string()])
        .output()
        .expect("plugtop check runs")
}

#[test]
fn written_rules_pass_check_and_load_as_cpuplugd_loads_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tuned.conf");
    let mut local = simulated(20);
    edit_hotplug(&mut local, "0.05");
    press(&mut local, vec![ctrl('s')]);
    let prompt = screen(&local, 80, 24);
    assert!(prompt.contains("Write the edited rules"), "{prompt}");
    assert!(prompt.contains("1 line changed"), "{prompt}");
    press(&mut local, vec![key(KeyCode::Esc)]);
    let commands = write_to(&mut local, &path);
    assert!(
        matches!(
            commands.as_slice(),
            [Command::WriteRules { replace: false, .. }]
        ),
        "{commands:?}"
    );
    assert!(
        matches!(local.app().modals().dialog(), Some(Dialog::Written(p)) if Path::new(p) == path),
        "{:?}",
        local.app().modals().top()
    );
    let written = std::fs::read_to_string(&path).expect("written");
    let original =
        std::fs::read_to_string("examples/rules/oscillating-tight.conf").expect("original");
    assert_eq!(
        written,
        original.replace(
            "HOTPLUG=\"((1 - CP_Active) * onumcpus) < 0.3\"",
            "HOTPLUG=\"((1 - CP_Active) * onumcpus) < 0.05\""
        ),
        "the file as it was, one line changed, comments and layout kept"
    );
    let out = check(&path);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("cpuplugd would load it"),
        "{out:?}"
    );
    let facts = plugtop::rules::SystemFacts::any_machine(4, "test");
    let (rules, _) = plugtop::rules::load_path(&path, &facts).expect("loads");
    assert!(rules.cpu_enabled);
    // The editor is still there under the news: more edits can follow.
    press(&mut local, text("x"));
    assert!(matches!(local.app().modals().top(), Some(Modal::WhatIf(_))));
}

#[test]
fn an_existing_file_is_replaced_only_after_a_yes_and_a_link_never() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("plug.conf");
    std::fs::write(&path, "KEEP=\"me\"\n").expect("existing");
    let mut local = simulated(20);
    edit_hotplug(&mut local, "0.05");
    write_to(&mut local, &path);
    assert!(
        matches!(local.app().modals().dialog(), Some(Dialog::Replace(_))),
        "{:?}",
        local.app().modals().top()
    );
    let question = screen(&local, 80, 24);
    assert!(question.contains("exists already"), "{question}");
    // No: back to the path, to pick another; the file is untouched.
    press(&mut local, text("n"));
    assert!(matches!(
        local.app().modals().top(),
        Some(Modal::SaveRules(p)) if p.input.text() == path.display().to_string()
    ));
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "KEEP=\"me\"\n"
    );
    press(&mut local, vec![key(KeyCode::Enter)]);
    let commands = press(&mut local, text("y"));
    assert!(
        matches!(
            commands.as_slice(),
            [Command::WriteRules { replace: true, .. }]
        ),
        "{commands:?}"
    );
    assert!(check(&path).status.success());
    assert!(
        std::fs::read_to_string(&path)
            .expect("read")
            .contains("< 0.05")
    );
    // A link at the name is refused, even after a yes.
    let target = dir.path().join("target");
    std::fs::write(&target, "target\n").expect("target");
    let link = dir.path().join("link.conf");
    std::os::unix::fs::symlink(&target, &link).expect("link");
    press(&mut local, vec![key(KeyCode::Esc)]);
    write_to(&mut local, &link);
    match local.app().modals().dialog() {
        Some(Dialog::Message(m)) => assert!(m.contains("symbolic link"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "target\n");
}

#[test]
fn the_write_prompt_offers_a_new_file_in_the_state_directory() {
    let mut local = simulated(20);
    edit_hotplug(&mut local, "0.05");
    press(&mut local, vec![ctrl('s')]);
    let Some(Modal::SaveRules(prompt)) = local.app().modals().top() else {
        panic!("{:?}", local.app().modals().top());
    };
    let offered = prompt.input.text().to_string();
    let name = Path::new(&offered)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    assert!(
        name.starts_with("oscillating-tight-") && name.ends_with(".conf"),
        "{offered}"
    );
    assert!(!Path::new(&offered).exists(), "a new file: {offered}");
    assert_snapshot_of!(
        "keep_edits",
        "save_prompt_80x24",
        screen(&local, 80, 24).replace(
            &offered,
            &format!("{:<1$}", "<offered path>", offered.chars().count())
        )
    );
    // An empty path writes nothing and keeps the prompt open.
    let commands = press(&mut local, vec![ctrl('u'), key(KeyCode::Enter)]);
    assert!(commands.is_empty(), "{commands:?}");
    assert!(matches!(
        local.app().modals().top(),
        Some(Modal::SaveRules(_))
    ));
}

#[test]
fn a_tunes_picked_point_can_be_applied() {
    let text_toml = "name = \"tiny\"\ncpus = 2\nonline = 1\nmemory_mib = 1024\nduration = \"0:20\"\nseed = 1\n\n[[phases]]\nname = \"busy\"\nstart = \"0:00\"\nthreads = 2\ncpu_per_thread = 1\nworking_set_mib = 100\n";
    let scenario = plugtop::sim::Scenario::parse("tiny", text_toml).expect("scenario");
    let mut local = simulated(20);
    local.app_mut().set_sim(scenario, false);
    local.app_mut().set_tune_budget(Some(30));
    press(&mut local, text("T"));
    if let Some(job) = local.app_mut().tune_mut() {
        job.wait();
    }
    // A point of the front that is not the start (index 0): up to the
    // first row (the cursor starts on the recommendation), then down.
    let front = local.app().tune().map(|j| j.front()).unwrap_or_default();
    let other = front
        .iter()
        .position(|r| r.index != 0)
        .expect("the tune found another point");
    press(
        &mut local,
        std::iter::repeat_n(key(KeyCode::Up), front.len()).collect(),
    );
    press(
        &mut local,
        std::iter::repeat_n(key(KeyCode::Down), other).collect(),
    );
    press(&mut local, vec![ctrl('r')]);
    match local.app().modals().top() {
        Some(Modal::Dialog(Dialog::Apply(rules))) => {
            assert!(rules.diff.iter().any(|d| d.added), "{:?}", rules.diff);
            assert!(rules.diff.iter().any(|d| !d.added), "{:?}", rules.diff);
        }
        other => panic!("{other:?}"),
    }
    // Under the question, the editor holds the point.
    assert!(local.app().modals().whatif().is_some());
}

/// New-user finding 15: `^S` on an edit already applied read
/// "Write x.conf (edited) (the rules in force, unchanged)"; it says which
/// rules it writes without contradicting itself.
#[test]
fn writing_the_rules_in_force_after_an_applied_edit_says_so_plainly() {
    let mut local = simulated(20);
    edit_hotplug(&mut local, "0.05");
    press(&mut local, vec![ctrl('r')]);
    press(&mut local, text("y"));
    press(&mut local, text("w"));
    press(&mut local, vec![ctrl('s')]);
    let prompt = screen(&local, 160, 48);
    assert!(
        prompt.contains("Write the rules in force (examples/rules/oscillating-tight.conf as")
            && prompt.contains("edited in this session) to"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("unchanged") && !prompt.contains("(edited) ("),
        "{prompt}"
    );
}
