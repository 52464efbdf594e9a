//! The training screen drawn into a TestBackend at 80×24 from its state
//! alone: a practice run driven through the simulator (no clock), the
//! what-if editor, a submission that passes with its explanation, hints
//! unlocked by failed attempts, a diagnosis.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use plugtop::train::Course;
use plugtop::train::progress::CourseProgress;
use plugtop::train::screen::app::{TrainAction, TrainApp};
use plugtop::train::screen::draw;

const COURSE: &str = "examples/courses/cpuplugd-basics.toml";

fn app(at: &str) -> TrainApp {
    let course = Course::load(std::path::Path::new(COURSE)).expect("course");
    let mut app = TrainApp::new(course, CourseProgress::default(), None, None, Some(at));
    app.mono = true;
    app
}

fn screen(app: &TrainApp) -> String {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("test backend");
    terminal.draw(|f| draw::draw(app, f)).expect("draw");
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..24 {
        let mut line = String::new();
        for x in 0..80 {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

/// A key as the event loop takes it: first how far the screen scrolls at
/// 80×24, then the key's action.
fn press(app: &mut TrainApp, code: KeyCode) {
    let fit = draw::fit(app, 80, 24);
    app.update(TrainAction::Fit(fit));
    if let Some(a) = app.action_for(key(code)) {
        app.update(a);
    }
}

/// Takes the judging thread's news until the verdict, as the event loop
/// would (waiting on the channel, never sleeping).
fn settle(app: &mut TrainApp) {
    while app.judging.is_some() {
        let news = app
            .wait_judge_news(std::time::Duration::from_secs(120))
            .expect("a verdict within two minutes");
        app.update(TrainAction::Judge(news));
    }
}

fn type_text(app: &mut TrainApp, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

#[test]
fn a_practice_run_scores_the_goal_live() {
    let mut a = app("loadavg");
    assert_snapshot_of!("train_screen", "loadavg_start_80x24", screen(&a));
    a.update(TrainAction::Run(150));
    assert_snapshot_of!("train_screen", "loadavg_half_run_80x24", screen(&a));
    a.update(TrainAction::Run(10_000));
    let practice = a.current.practice.as_ref().expect("a run");
    assert!(practice.run.ended());
    assert!(
        practice.checks.iter().any(|c| !c.met),
        "the start misses the goal"
    );
}

#[test]
fn editing_in_the_what_if_editor_then_submitting_solves_the_exercise() {
    let mut a = app("cpu-max");
    press(&mut a, KeyCode::Char('s'));
    settle(&mut a);
    assert!(!a.solved());
    assert_snapshot_of!("train_screen", "cpu_max_failed_once_80x24", screen(&a));
    press(&mut a, KeyCode::Char('e'));
    // Tab to CPU_MAX (after the rules, UPDATE and CPU_MIN).
    for _ in 0..20 {
        if a.current
            .editor
            .as_ref()
            .is_some_and(|e| e.field().name() == "CPU_MAX")
        {
            break;
        }
        press(&mut a, KeyCode::Tab);
    }
    press(&mut a, KeyCode::Backspace);
    type_text(&mut a, "x");
    press(&mut a, KeyCode::Enter);
    assert!(a.editing(), "a refused edit keeps the editor open");
    assert_snapshot_of!("train_screen", "cpu_max_refused_edit_80x24", screen(&a));
    press(&mut a, KeyCode::Backspace);
    type_text(&mut a, "4");
    press(&mut a, KeyCode::Enter);
    assert!(!a.editing());
    a.update(TrainAction::Run(10_000));
    let practice = a.current.practice.as_ref().expect("a run");
    assert!(
        practice.checks.iter().all(|c| c.met),
        "{:?}",
        practice.checks
    );
    press(&mut a, KeyCode::Char('s'));
    settle(&mut a);
    assert!(a.solved());
    assert_snapshot_of!("train_screen", "cpu_max_solved_80x24", screen(&a));
}

#[test]
fn a_diagnosis_is_answered_by_pointing_at_the_comparison() {
    let mut a = app("diagnose-flap");
    assert_snapshot_of!("train_screen", "diagnosis_80x24", screen(&a));
    let wrong = a
        .current
        .choices
        .iter()
        .position(|c| c.rule.file_name() == "HOTUNPLUG")
        .expect("a HOTUNPLUG comparison");
    // Enter before pointing at anything is not an answer.
    press(&mut a, KeyCode::Enter);
    assert!(!a.solved());
    assert!(a.status.contains("choose a comparison"), "{}", a.status);
    for _ in 0..=wrong {
        press(&mut a, KeyCode::Down);
    }
    press(&mut a, KeyCode::Enter);
    assert!(!a.solved());
    for _ in 0..wrong {
        press(&mut a, KeyCode::Up);
    }
    press(&mut a, KeyCode::Enter);
    assert!(a.solved());
    assert_snapshot_of!("train_screen", "diagnosis_solved_80x24", screen(&a));
}

#[test]
fn any_terminal_size_draws_without_a_panic() {
    let mut a = app("guest-size");
    a.update(TrainAction::Run(30));
    for (w, h) in [(1, 1), (20, 5), (40, 10), (79, 23), (200, 60)] {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("test backend");
        terminal.draw(|f| draw::draw(&a, f)).expect("draw");
    }
}

#[test]
fn question_mark_opens_the_help_and_question_mark_or_esc_closes_it() {
    let mut a = app("loadavg");
    assert!(screen(&a).contains("? help"), "the footer names the help");
    press(&mut a, KeyCode::Char('?'));
    assert!(a.help);
    let first = screen(&a);
    assert_snapshot_of!("train_screen", "loadavg_help_80x24", first.clone());
    // What does not fit is said at the bottom, and PgDn brings it.
    assert!(first.contains("more ↓ PgDn"), "{first}");
    press(&mut a, KeyCode::PageDown);
    assert!(a.help, "PgDn scrolls the help, it does not close it");
    let rest = screen(&a);
    assert_snapshot_of!("train_screen", "loadavg_help_scrolled_80x24", rest.clone());
    assert!(
        !rest.contains("more ↓ PgDn"),
        "the end of the help:\n{rest}"
    );
    let shown = format!("{first}{rest}");
    // Every key of the table is listed, the goal's clauses are explained,
    // and where the files are is said.
    for words in [
        "e Enter",
        "s ",
        "space",
        "n ",
        "p ",
        "PgDn",
        "PgUp",
        "q Ctrl-C",
        "unmet_cpu_seconds < 80",
        "CPU-seconds of demand that could not run",
        "working copy",
        "progress",
    ] {
        assert!(shown.contains(words), "{words:?} missing:\n{shown}");
    }
    // Keys behind the help do nothing; `?` closes it.
    press(&mut a, KeyCode::Char('e'));
    assert!(!a.editing() && a.help);
    press(&mut a, KeyCode::Char('?'));
    assert!(!a.help);
    press(&mut a, KeyCode::Char('?'));
    press(&mut a, KeyCode::Esc);
    assert!(!a.help);
    // A diagnosis's help has its own keys and the question.
    let mut d = app("diagnose-flap");
    press(&mut d, KeyCode::Char('?'));
    let shown = screen(&d);
    assert!(shown.contains("point at the comparison above"), "{shown}");
    assert!(shown.contains("Why does"), "{shown}");
    press(&mut d, KeyCode::Char('q'));
    assert!(d.quit, "q quits from the help");
}

#[test]
fn the_help_names_the_working_copy_and_the_progress_file() {
    let state = tempfile::tempdir().expect("tempdir");
    let course = Course::load(std::path::Path::new(COURSE)).expect("course");
    let progress = state.path().join("train/cpuplugd-basics.json");
    let mut a = TrainApp::new(
        course,
        CourseProgress::default(),
        Some(progress),
        Some(state.path().join("train/cpuplugd-basics")),
        Some("loadavg"),
    );
    a.mono = true;
    press(&mut a, KeyCode::Char('?'));
    let mut terminal = Terminal::new(TestBackend::new(200, 40)).expect("test backend");
    terminal.draw(|f| draw::draw(&a, f)).expect("draw");
    let text = plugtop::tui::export::text(terminal.backend().buffer());
    let root = state.path().display().to_string();
    assert!(
        text.contains(&format!("{root}/train/cpuplugd-basics/loadavg.conf")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{root}/train/cpuplugd-basics.json")),
        "{text}"
    );
}

/// Submitting judges on a thread of its own: `update` returns at once,
/// the screen says how far judging is, keys go on working, and the
/// verdict arrives as news (waited for on the channel, not slept for).
#[test]
fn judging_runs_off_the_screen_thread_and_the_screen_stays_responsive() {
    let mut a = app("cpu-max");
    press(&mut a, KeyCode::Char('s'));
    let (done, of) = {
        let j = a.judging.as_ref().expect("judging under way");
        (j.done, j.of)
    };
    assert_eq!(done, 0);
    assert!(of >= 2, "several held-out runs: {of}");
    assert!(a.current.verdict.is_none(), "no verdict before the news");
    assert!(
        screen(&a).contains(&format!("judging… 0 of {of} runs")),
        "{}",
        screen(&a)
    );
    // The screen goes on: the practice run steps, the speed changes, the
    // help opens and closes, a second `s` is refused politely.
    a.update(TrainAction::Run(20));
    assert!(a.current.practice.as_ref().expect("run").run.seconds() > 0.0);
    press(&mut a, KeyCode::Char('+'));
    assert_eq!(a.speed, 3);
    press(&mut a, KeyCode::Char('s'));
    assert!(a.status.contains("still judging"), "{}", a.status);
    // The news, as the event loop takes it.
    let mut seen = Vec::new();
    while a.judging.is_some() {
        let news = a
            .wait_judge_news(std::time::Duration::from_secs(120))
            .expect("news within two minutes");
        seen.push(news.clone());
        a.update(TrainAction::Judge(news));
        if let Some(j) = &a.judging {
            assert!(
                screen(&a).contains(&format!("judging… {} of {of} runs", j.done)),
                "{}",
                screen(&a)
            );
        }
    }
    assert!(
        seen.iter().any(
            |n| matches!(n, plugtop::train::screen::app::JudgeNews::Ran { done, .. } if *done == of)
        ),
        "{seen:?}"
    );
    let verdict = a.current.verdict.clone().expect("a verdict");
    assert!(!verdict.passed, "the start file fails: {verdict:?}");
    assert_eq!(a.progress.exercises["cpu-max"].attempts, 1);
}

/// Quitting, or moving to another exercise, while judging stops the
/// thread and counts no attempt.
#[test]
fn quitting_or_moving_on_while_judging_stops_it() {
    let mut a = app("cpu-max");
    press(&mut a, KeyCode::Char('s'));
    assert!(a.judging.is_some());
    press(&mut a, KeyCode::Char('n'));
    assert!(a.judging.is_none());
    assert_eq!(a.exercise().id, "refused");
    assert!(
        a.progress
            .exercises
            .get("cpu-max")
            .is_none_or(|p| p.attempts == 0)
    );
    press(&mut a, KeyCode::Char('p'));
    press(&mut a, KeyCode::Char('s'));
    press(&mut a, KeyCode::Char('q'));
    assert!(a.quit && a.judging.is_none());
}

#[test]
fn the_help_draws_at_any_size() {
    let mut a = app("loadavg");
    press(&mut a, KeyCode::Char('?'));
    for (w, h) in [(1, 1), (20, 5), (40, 10), (80, 24), (200, 60)] {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("test backend");
        terminal.draw(|f| draw::draw(&a, f)).expect("draw");
    }
}

/// The working copy replaced by a link while the screen runs: the reload
/// refuses it, an edit applied on the screen is not written through it,
/// and the status line says so (not "applied").
#[test]
fn a_working_copy_replaced_by_a_link_is_neither_read_nor_written_through() {
    let state = tempfile::tempdir().expect("tempdir");
    let course = Course::load(std::path::Path::new(COURSE)).expect("course");
    let work = state.path().join("train/cpuplugd-basics");
    let mut a = TrainApp::new(
        course,
        CourseProgress::default(),
        None,
        Some(work.clone()),
        Some("cpu-max"),
    );
    let copy = work.join("cpu-max.conf");
    assert!(copy.is_file(), "the working copy is made");
    let precious = state.path().join("precious");
    std::fs::write(&precious, "untouched\n").expect("write");
    std::fs::remove_file(&copy).expect("rm");
    std::os::unix::fs::symlink(&precious, &copy).expect("ln");
    let reload = a
        .current
        .copy
        .as_mut()
        .expect("a copy")
        .changed()
        .expect("seen as changed");
    assert!(
        plugtop::error_chain::text(&reload.expect_err("a link is not read"))
            .contains("symbolic link"),
        "refused as a link"
    );
    press(&mut a, KeyCode::Char('e'));
    for _ in 0..20 {
        if a.current
            .editor
            .as_ref()
            .is_some_and(|e| e.field().name() == "CPU_MAX")
        {
            break;
        }
        press(&mut a, KeyCode::Tab);
    }
    press(&mut a, KeyCode::Backspace);
    type_text(&mut a, "4");
    press(&mut a, KeyCode::Enter);
    assert_eq!(
        std::fs::read_to_string(&precious).expect("read"),
        "untouched\n"
    );
    assert!(
        std::fs::symlink_metadata(&copy)
            .expect("stat")
            .file_type()
            .is_symlink(),
        "the link is left as it is"
    );
    assert!(a.status.contains("not saved"), "{}", a.status);
}

/// A terminal smaller than the main screen's 80×24 is told so, as the
/// main screen tells it (nu54: at 60 columns the panels cut values, and
/// `CMM_MAX=1245184` showed as `CMM_MAX=124518`); at 80×24 the header,
/// the status line (where the verdict is) and the keys keep their rows.
#[test]
fn a_terminal_under_80x24_is_told_so_and_80x24_keeps_the_verdict_and_the_keys() {
    let mut a = app("diagnose-flap");
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Enter);
    for (w, h) in [(40, 10), (80, 20), (79, 24), (60, 24)] {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("test backend");
        terminal.draw(|f| draw::draw(&a, f)).expect("draw");
        let text = plugtop::tui::export::text(terminal.backend().buffer());
        assert!(
            text.contains("plugtop needs at least 80×24"),
            "{w}×{h}:\n{text}"
        );
        assert!(
            text.contains(&format!("this terminal is {w}×{h}: make it larger")),
            "{w}×{h}:\n{text}"
        );
    }
    let text = screen(&a);
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows.iter().any(|r| r.contains("plugtop train")), "{text}");
    assert!(text.contains("PASSED"), "{text}");
    assert!(text.contains("? help"), "{text}");
}

/// Tabs the open editor to the field `name`.
fn tab_to(a: &mut TrainApp, name: &str) {
    for _ in 0..30 {
        if a.current
            .editor
            .as_ref()
            .is_some_and(|e| e.field().name() == name)
        {
            return;
        }
        press(a, KeyCode::Tab);
    }
    panic!("no field {name}");
}

/// A memory exercise failed at 80×24: the result at the top of the
/// exercise panel with every missed clause and its value in full (once
/// cut at "(was…" in the status line), the hint it unlocked, and the
/// brief below them, reached by scrolling; the border says how much is
/// below and which keys bring it.
#[test]
fn a_failed_result_its_hints_and_the_brief_are_all_reachable_at_80x24() {
    let mut a = app("guest-size");
    press(&mut a, KeyCode::Char('s'));
    settle(&mut a);
    let verdict = a.current.verdict.clone().expect("a verdict");
    assert!(!verdict.passed && !verdict.missed.is_empty(), "{verdict:?}");
    let shown = screen(&a);
    assert_snapshot_of!("train_screen", "guest_size_result_80x24", shown.clone());
    assert!(shown.contains("Not yet"), "{shown}");
    assert!(shown.contains("guest_to_working_set was"), "{shown}");
    assert!(shown.contains("Hint 1"), "{shown}");
    assert!(shown.contains("more ↓ PgDn"), "{shown}");
    // Down a page, then to the end: the brief whole, then the goal and
    // the attempts; the top border says what is above.
    press(&mut a, KeyCode::PageDown);
    let page = screen(&a);
    assert_snapshot_of!("train_screen", "guest_size_brief_80x24", page.clone());
    assert!(page.contains("more ↑ PgUp"), "{page}");
    for _ in 0..40 {
        press(&mut a, KeyCode::Down);
    }
    let end = screen(&a);
    assert_snapshot_of!("train_screen", "guest_size_end_80x24", end.clone());
    assert!(end.contains("attempts 1"), "{end}");
    assert!(!end.contains("more ↓"), "nothing below the end:\n{end}");
    // Every word of the brief was on one of the screens.
    let seen = format!("{shown}{page}{end}");
    for word in a.exercise().brief.split_whitespace() {
        assert!(seen.contains(word), "{word:?} never shown:\n{seen}");
    }
    // Back up to the top.
    for _ in 0..3 {
        press(&mut a, KeyCode::PageUp);
    }
    assert_eq!(a.current.scroll, 0);
}

/// The loadavg exercise's editor at HOTPLUG, its text replaced by `rule`
/// as pasted.
fn hotplug_pasted(rule: &str) -> TrainApp {
    let mut a = app("loadavg");
    press(&mut a, KeyCode::Char('e'));
    tab_to(&mut a, "HOTPLUG");
    a.update(TrainAction::EditorKey(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    a.update(TrainAction::Paste(rule.into()));
    a
}

/// newuser51 #10: a rule longer than a row wraps with its start in
/// sight (it was cut to `…` although rows were free), and the caret
/// stands on the row right under the character it points at, as on the
/// main screen (it stood where a one-row text would have put it).
#[test]
fn a_long_rule_wraps_whole_and_its_caret_stands_under_its_character() {
    let rule = "(1 - (cpustat.idle[0] - cpustat.idle[3]) / (cpustat.total_ticks[0] - cpustat.total_ticks[3])) * onumcpus >= 0.5";
    let a = hotplug_pasted(rule);
    let shown = screen(&a);
    assert!(
        shown.contains("│HOTPLUG=(1 - (cpustat.idle[0]"),
        "the rule's start is shown: {shown}"
    );
    let rows: Vec<&str> = shown.lines().collect();
    let caret_row = rows
        .iter()
        .position(|r| r.contains("^ cpuplugd has no `>=`"))
        .unwrap_or_else(|| panic!("a caret line: {shown}"));
    let caret = rows[caret_row]
        .chars()
        .position(|c| c == '^')
        .expect("the caret");
    let above: Vec<char> = rows[caret_row - 1].chars().collect();
    assert_eq!(
        above
            .get(caret..caret + 2)
            .map(|c| c.iter().collect::<String>()),
        Some(">=".to_string()),
        "{shown}"
    );
}

/// An error in the part of a long text cut off past the cursor is said
/// without a caret (a caret there would point at another character).
#[test]
fn an_error_cut_off_past_the_cursor_is_said_without_a_caret() {
    let mut a = hotplug_pasted(&format!("{}1 >= 0.5", "1 + ".repeat(400)));
    a.update(TrainAction::EditorKey(KeyEvent::new(
        KeyCode::Home,
        KeyModifiers::NONE,
    )));
    let shown = screen(&a);
    assert!(
        shown.contains("│HOTPLUG=1 + 1 + "),
        "the cursor's end: {shown}"
    );
    assert!(shown.contains("✗ cpuplugd has no `>=`"), "{shown}");
    assert!(!shown.contains("^ cpuplugd"), "{shown}");
}

/// The editor is the main screen's: the field's name is a label before
/// the text, every key is checked as typed (no Enter needed) with a caret
/// under the error, and the name typed again as text is said to be the
/// label, not cpuplugd's "unknown name".
#[test]
fn the_editor_checks_every_key_with_a_caret_and_keeps_the_label_apart() {
    let mut a = app("guest-size");
    press(&mut a, KeyCode::Char('e'));
    tab_to(&mut a, "MEMUNPLUG");
    let before = screen(&a);
    assert!(before.contains("│MEMUNPLUG="), "{before}");
    assert!(before.contains("✓ cpuplugd would load it"), "{before}");
    // A stray `)` typed: the check says so at once, a caret under it.
    press(&mut a, KeyCode::Char(')'));
    let e = a.current.editor.as_ref().expect("the editor");
    let (_, column) = e.error().cloned().expect("an error at once, no Enter");
    let column = column.expect("in the text typed");
    let shown = screen(&a);
    assert_snapshot_of!(
        "train_screen",
        "guest_size_editor_caret_80x24",
        shown.clone()
    );
    let rows: Vec<&str> = shown.lines().collect();
    let text_row = rows
        .iter()
        .position(|r| r.contains("│MEMUNPLUG="))
        .expect("the text row");
    let caret = rows[text_row + 1]
        .chars()
        .position(|c| c == '^')
        .expect("a caret under the text");
    // One column of border, then the label, then the text.
    assert_eq!(caret, 1 + "MEMUNPLUG=".len() + column, "{shown}");
    // The label typed again as text: said to be the label.
    a.update(TrainAction::EditorKey(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    a.update(TrainAction::Paste(
        "MEMUNPLUG=\"meminfo.MemFree > 100\"".into(),
    ));
    let (message, _) = a
        .current
        .editor
        .as_ref()
        .and_then(|e| e.error().cloned())
        .expect("an error");
    assert!(message.contains("is the label"), "{message}");
    assert!(!message.contains("unknown name"), "{message}");
    let shown = screen(&a);
    assert_snapshot_of!(
        "train_screen",
        "guest_size_editor_label_80x24",
        shown.clone()
    );
    // Enter applies nothing while it is refused.
    press(&mut a, KeyCode::Enter);
    assert!(a.editing());
}

/// A brief as long as a course may write (20,000 characters, one word
/// longer than the panel among them) wraps and scrolls to its last word
/// at 80×24: ↓ and PgDn never go past the end, PgUp back to the top.
#[test]
fn the_longest_brief_scrolls_to_its_end_and_no_further() {
    let mut course = Course::load(std::path::Path::new(COURSE)).expect("course");
    let at = course
        .exercises
        .iter()
        .position(|e| e.id == "cpu-max")
        .expect("cpu-max");
    let mut brief = format!("{} ", "x".repeat(200));
    while brief.chars().count() < 19_980 {
        brief.push_str("word ");
    }
    brief.push_str("LAST");
    course.exercises[at].brief = brief;
    let mut a = TrainApp::new(
        course,
        CourseProgress::default(),
        None,
        None,
        Some("cpu-max"),
    );
    a.mono = true;
    // Page down until a page moves no more (bounded).
    for _ in 0..200 {
        let before = a.current.scroll;
        press(&mut a, KeyCode::PageDown);
        if a.current.scroll == before {
            break;
        }
    }
    let end = screen(&a);
    assert!(end.contains("LAST"), "{end}");
    assert!(!end.contains("more ↓"), "{end}");
    let most = a.current.scroll;
    press(&mut a, KeyCode::Down);
    assert_eq!(a.current.scroll, most, "no further than the end");
    for _ in 0..200 {
        press(&mut a, KeyCode::PageUp);
        if a.current.scroll == 0 {
            break;
        }
    }
    assert_eq!(a.current.scroll, 0);
    assert!(!screen(&a).contains("more ↑"));
}

/// The hand-in: what the screen keeps is what `train grade` reads. Flipping
/// past an exercise leaves no working copy (grade: "not submitted", not a
/// fail), an edit applied on the screen is kept as `ID.conf`, and a
/// diagnosis answered on the screen is kept as `ID.answer`.
#[test]
fn the_working_directory_is_what_grade_reads() {
    let state = tempfile::tempdir().expect("tempdir");
    let course = Course::load(std::path::Path::new(COURSE)).expect("course");
    let work = state.path().join("class/alice");
    let mut a = TrainApp::new(
        Course::load(std::path::Path::new(COURSE)).expect("course"),
        CourseProgress::default(),
        Some(state.path().join("progress.json")),
        Some(work.clone()),
        Some("loadavg"),
    );
    a.mono = true;
    assert!(work.join("loadavg.conf").exists(), "open while shown");
    // Flip past every exercise to the diagnosis, editing cpu-max on the way.
    while a.exercise().id != "diagnose-flap" {
        press(&mut a, KeyCode::Char('n'));
        if a.exercise().id == "cpu-max" {
            press(&mut a, KeyCode::Char('e'));
            tab_to(&mut a, "CPU_MAX");
            press(&mut a, KeyCode::Backspace);
            type_text(&mut a, "4");
            press(&mut a, KeyCode::Enter);
            assert!(!a.editing(), "{}", a.status);
        }
    }
    let right = a
        .current
        .choices
        .iter()
        .position(|c| c.rule.file_name() == "HOTPLUG")
        .expect("a HOTPLUG comparison");
    for _ in 0..=right {
        press(&mut a, KeyCode::Down);
    }
    press(&mut a, KeyCode::Enter);
    assert!(a.solved());
    press(&mut a, KeyCode::Char('q'));
    let mut kept: Vec<String> = std::fs::read_dir(&work)
        .expect("the working directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["cpu-max.conf", "diagnose-flap.answer"]);
    let grades =
        plugtop::train::grade::grade(&course, &state.path().join("class"), 1).expect("grade");
    for table in &grades.tables {
        let row = &table.rows[0];
        match table.id.as_str() {
            "diagnose-flap" => assert!(row.passed, "{row:?}"),
            "cpu-max" => assert_ne!(row.reason, "not submitted", "{row:?}"),
            _ => assert_eq!(row.reason, "not submitted", "{}: {row:?}", table.id),
        }
    }
}

/// Exercise 6 ("a file cpuplugd refuses"): the panels show plugtop's own
/// line:column diagnostic, not cpuplugd's cut message, and `e` opens the
/// what-if editor at the field holding the error, with its caret; fixed
/// there, Enter applies it and the practice run starts.
#[test]
fn a_refused_file_is_fixed_in_the_what_if_editor_with_its_caret() {
    let mut a = app("refused");
    let shown = screen(&a);
    assert!(
        shown.contains("27:25: unknown name `meminfoBuffers`"),
        "{shown}"
    );
    assert!(!shown.contains("position"), "cpuplugd's raw words: {shown}");
    press(&mut a, KeyCode::Char('e'));
    assert!(a.editing(), "{}", a.status);
    let editor = a.current.editor.as_ref().expect("the editor");
    assert_eq!(editor.field().name(), "cache");
    let (message, column) = editor.error().expect("the error").clone();
    assert!(message.contains("meminfoBuffers"), "{message}");
    // The caret under `Buffers`' `B` ... at `meminfo Buffers`'s start.
    let text = editor.input().text().to_string();
    let at = column.expect("a caret in the text");
    assert_eq!(
        text.chars().skip(at).collect::<String>(),
        "meminfo Buffers",
        "{text}"
    );
    assert_snapshot_of!("train_screen", "refused_editor_80x24", screen(&a));
    // Fixed: the space becomes a dot, and Enter applies it.
    for _ in 0.."Buffers".len() + 1 {
        press(&mut a, KeyCode::Backspace);
    }
    type_text(&mut a, ".Buffers");
    press(&mut a, KeyCode::Enter);
    assert!(
        !a.editing(),
        "{:?}",
        a.current.editor.as_ref().map(|e| e.error())
    );
    assert!(a.current.rules.is_ok());
    assert!(a.current.practice.is_some(), "the practice run starts");
}
