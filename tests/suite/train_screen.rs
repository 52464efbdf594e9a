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

fn press(app: &mut TrainApp, code: KeyCode) {
    if let Some(a) = app.action_for(key(code)) {
        app.update(a);
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
    for _ in 0..wrong {
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
