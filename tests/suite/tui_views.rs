//! Every view and dialog, drawn into a TestBackend at 80×24 and 160×48 from
//! fixed data, and compared with reviewed snapshots.

use std::path::Path;

use plugtop::control::controller::Mode;
use plugtop::tui::app::View;
use plugtop::tui::keys::KeyAction;
use plugtop::tui::local::Local;
use plugtop::tui::modal::Modal;
use plugtop::tui::run::app_from_snapshots;
use plugtop::tui::view;
use plugtop::tui::whatif::Field;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// An app fed with the first `n` snapshots of `dir`, using `rules`.
fn app(rules: &str, dir: &str, n: usize, mode: Mode) -> Local {
    match app_from_snapshots(Path::new(rules), Path::new(dir), n, mode) {
        Ok(app) => app,
        Err(e) => panic!("{e}"),
    }
}

/// The screen as text, one line per row.
pub fn screen(app: &Local, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|f| view::draw(f, app.app())).expect("draw");
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

const RECOMMENDED: &str = "examples/rules/recommended-default.conf";
const SERIES: &str = "tests/fixtures/series/oldkernel";

fn both(name: &str, app: &Local) {
    assert_snapshot_of!("tui_views", format!("{name}_80x24"), screen(app, 80, 24));
    assert_snapshot_of!("tui_views", format!("{name}_160x48"), screen(app, 160, 48));
}

#[test]
fn overview_of_a_busy_guest() {
    // Interval 5 of the series: CPUs busy, memory under pressure.
    both("overview_busy", &app(RECOMMENDED, SERIES, 6, Mode::Observe));
}

#[test]
fn overview_of_an_idle_guest() {
    both("overview_idle", &app(RECOMMENDED, SERIES, 9, Mode::Observe));
}

#[test]
fn a_fault_interval() {
    let a = app(
        "tests/fixtures/cases/fpe-div-zero-hotplug/cpuplugd.conf",
        "tests/fixtures/cases/fpe-div-zero-hotplug/snapshots",
        4,
        Mode::Observe,
    );
    both("fault", &a);
    let mut rules = a;
    rules.app_mut().selection_mut().show(View::Rules);
    both("fault_trace", &rules);
}

#[test]
fn a_disabled_memory_group() {
    both(
        "memory_off",
        &app(
            "tests/fixtures/cases/syntax-memory-disabled-without-cmm-pages/cpuplugd.conf",
            "tests/fixtures/cases/syntax-memory-disabled-without-cmm-pages/snapshots",
            3,
            Mode::Observe,
        ),
    );
}

#[test]
fn a_pending_proposal_in_step_confirm_mode() {
    both("proposal", &app(RECOMMENDED, SERIES, 4, Mode::Step));
}

#[test]
fn the_truth_trace_with_variables_expanded() {
    let mut a = app(RECOMMENDED, SERIES, 6, Mode::Observe);
    a.key(KeyAction::NextView);
    a.key(KeyAction::NextRule);
    a.key(KeyAction::Expand);
    both("trace_hotunplug", &a);
}

#[test]
fn graphs_log_and_help() {
    let mut a = app(RECOMMENDED, SERIES, 20, Mode::Observe);
    a.app_mut().selection_mut().show(View::Graphs);
    both("graphs", &a);
    a.app_mut().selection_mut().show(View::Log);
    both("log", &a);
    a.app_mut().selection_mut().show(View::Overview);
    a.key(KeyAction::Help);
    both("help", &a);
}

#[test]
fn autonomous_asks_first_and_says_when_it_cannot() {
    let mut a = app(RECOMMENDED, SERIES, 6, Mode::Observe);
    a.key(KeyAction::Autonomous);
    both("confirm_auto", &a);
    let mut b = app(RECOMMENDED, SERIES, 6, Mode::Observe);
    b.core_mut()
        .set_cannot_act("this is a recording; only a live guest can be changed".into());
    b.key(KeyAction::Autonomous);
    both("cannot_act", &b);
}

#[test]
fn time_travel_shows_an_earlier_interval() {
    let mut a = app(RECOMMENDED, SERIES, 9, Mode::Observe);
    a.key(KeyAction::Back);
    a.key(KeyAction::Back);
    a.key(KeyAction::Back);
    both("three_back", &a);
}

#[test]
fn a_small_terminal_gets_a_message_not_a_garbled_screen() {
    assert_snapshot_of!(
        "tui_views",
        "too_small",
        screen(&app(RECOMMENDED, SERIES, 4, Mode::Observe), 60, 20)
    );
}

/// The daytrader scenario on the simulator, in autonomous mode, after
/// `readings` simulated seconds: the whole loop, with no machine involved.
fn simulated(readings: usize) -> Local {
    simulated_with("daytrader", None, readings)
}

/// A simulated guest's app and source: `scenario` (a path) under `rules`
/// (the built-in ones when `None`), autonomous, nothing read yet.
fn prepare_sim(
    scenario: impl Into<std::path::PathBuf>,
    rules: Option<&str>,
) -> (Local, Box<dyn plugtop::kernel::source::Source + Send>) {
    let options = plugtop::tui::run::Options {
        rules: rules.map(Into::into),
        root: "/".into(),
        replay: None,
        mode: Mode::Auto,
        batch: true,
        mono: false,
        interval: None,
        count: None,
        sim: Some(scenario.into()),
        old_kernel: false,
        allow_non_zvm: false,
    };
    match plugtop::tui::run::prepare(&options) {
        Ok(x) => x,
        Err(e) => panic!("{e}"),
    }
}

/// `scenario` under `rules` (the built-in ones when `None`), autonomous.
fn simulated_with(scenario: &str, rules: Option<&str>, readings: usize) -> Local {
    let (mut app, mut source) = prepare_sim(format!("examples/scenarios/{scenario}.toml"), rules);
    for _ in 0..readings {
        match source.next_sample() {
            Some(Ok(s)) => app.ingest(s),
            other => panic!("the simulator stopped: {:?}", other.map(|r| r.err())),
        }
    }
    app
}

#[test]
fn a_simulated_guest_under_load() {
    // 2:10 into daytrader: the workload runs and the guest has grown to three CPUs.
    let mut app = simulated(131);
    both("sim_overview", &app);
    app.app_mut().selection_mut().show(View::Graphs);
    both("sim_graphs", &app);
}

#[test]
fn the_flips_view_of_an_oscillating_guest() {
    // 1:20 into the oscillating scenario under its incident rules.
    let mut app = simulated_with(
        "oscillating",
        Some("examples/rules/oscillating-tight.conf"),
        81,
    );
    app.app_mut().selection_mut().show(View::Flips);
    both("flips_oscillating", &app);
    // Oldest first like the Log; ↑ goes back to older changes.
    // The last line with text above the status line.
    let bottom = |app: &Local| {
        screen(app, 80, 24)
            .lines()
            .rev()
            .skip(1)
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string()
    };
    assert!(bottom(&app).ends_with("0.3"), "{}", screen(&app, 80, 24));
    app.key(KeyAction::Up);
    let s = screen(&app, 80, 24);
    assert!(s.contains("… 1 newer (↓)"), "{s}");
    assert!(!s.contains("#79 "), "{s}");
    app.key(KeyAction::Down);
    assert!(screen(&app, 80, 24).contains("#79 "));
    // The Log scrolls the same way.
    app.app_mut().selection_mut().show(View::Log);
    let newest = bottom(&app);
    app.key(KeyAction::Up);
    assert_ne!(bottom(&app), newest, "↑ shows older log lines");
    app.key(KeyAction::Down);
    assert_eq!(bottom(&app), newest);
}

#[test]
fn the_whatif_editor_with_an_error_and_with_a_result() {
    use crossterm::event::{KeyCode, KeyEvent};
    let mut app = simulated_with(
        "oscillating",
        Some("examples/rules/oscillating-tight.conf"),
        81,
    );
    app.key(KeyAction::WhatIf);
    app.app_mut().whatif_key(KeyEvent::from(KeyCode::Char('(')));
    both("whatif_error", &app);
    for key in [
        KeyCode::Backspace,
        KeyCode::Backspace,
        KeyCode::Backspace,
        KeyCode::Backspace,
        KeyCode::Char('0'),
        KeyCode::Char('.'),
        KeyCode::Char('0'),
        KeyCode::Char('5'),
        KeyCode::Enter,
    ] {
        app.app_mut().whatif_key(KeyEvent::from(key));
    }
    both("whatif_result", &app);
}

#[test]
fn the_whatif_editor_can_try_a_whole_rule_file() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut app = simulated_with(
        "oscillating",
        Some("examples/rules/oscillating-tight.conf"),
        81,
    );
    app.key(KeyAction::WhatIf);
    app.app_mut()
        .whatif_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let type_text = |app: &mut Local, text: &str| {
        for c in text.chars() {
            app.app_mut().whatif_key(KeyEvent::from(KeyCode::Char(c)));
        }
    };
    type_text(&mut app, "examples/rules/missing.conf");
    let error = app.app().modals().whatif().and_then(|e| e.error().cloned());
    assert!(
        error
            .as_ref()
            .is_some_and(|(m, _)| m.contains("cannot read examples/rules/missing.conf")),
        "{error:?}"
    );
    for _ in 0.."missing.conf".len() {
        app.app_mut().whatif_key(KeyEvent::from(KeyCode::Backspace));
    }
    type_text(&mut app, "oscillating-damped.conf");
    app.app_mut().whatif_key(KeyEvent::from(KeyCode::Enter));
    let editor = app
        .app()
        .modals()
        .whatif()
        .unwrap_or_else(|| panic!("closed"));
    assert_eq!(editor.error(), None);
    let result = editor.result().unwrap_or_else(|| panic!("no result"));
    assert!(result.closed_loop);
    assert!(result.reversals.1 < result.reversals.0, "{result:?}");
    assert!(screen(&app, 80, 24).contains("What-if: a rule file"));
}

#[test]
fn the_same_log_line_in_a_row_is_counted_not_repeated() {
    use plugtop::tui::app::LogKind;
    let mut a = app(RECOMMENDED, SERIES, 4, Mode::Observe);
    let before = a.app().log().lines().len();
    for _ in 0..12 {
        a.app_mut()
            .note(LogKind::Decision, "would unplug a CPU (HOTUNPLUG true)");
    }
    a.app_mut().note(LogKind::Decision, "something else");
    assert_eq!(a.app().log().lines().len(), before + 2);
    let counted = &a.app().log().lines()[before];
    assert_eq!(counted.times, 12);
    assert!(counted.shown().contains("×12"), "{}", counted.shown());
    a.app_mut().selection_mut().show(View::Log);
    assert!(screen(&a, 80, 24).contains("×12"));
}

#[test]
fn cp_active_avg_can_be_pinned_and_travel_is_marked_on_the_graphs() {
    let (mut app, mut source) = prepare_sim("examples/scenarios/daytrader.toml", None);
    for _ in 0..40 {
        if let Some(Ok(s)) = source.next_sample() {
            app.ingest(s);
        }
    }
    // The cursor starts on CP_ActiveAVG, which leads the Values panel.
    assert_eq!(app.app().pinnable().first().copied(), Some("CP_ActiveAVG"));
    app.key(KeyAction::Pin);
    assert_eq!(
        app.app().timeline().pinned(),
        vec!["CP_ActiveAVG".to_string()]
    );
    app.key(KeyAction::Down);
    app.key(KeyAction::Pin);
    assert_eq!(
        app.app().timeline().pinned().len(),
        2,
        "{:?}",
        app.app().timeline().pinned()
    );
    for _ in 0..30 {
        if let Some(Ok(s)) = source.next_sample() {
            app.ingest(s);
        }
    }
    app.app_mut().selection_mut().show(View::Graphs);
    let now = screen(&app, 80, 24);
    let row = now
        .lines()
        .find(|l| l.starts_with("CP_ActiveAVG"))
        .unwrap_or_else(|| panic!("no pinned row:\n{now}"));
    // Pinned 30 intervals ago: the newest value is at the right edge.
    assert!(!row.ends_with(' ') && row.chars().count() == 80, "{row:?}");
    // Un-pinning leaves no row behind.
    app.app_mut().selection_mut().show(View::Overview);
    while app.app().selection().value_cursor() > 0 {
        app.key(KeyAction::Up);
    }
    app.key(KeyAction::Pin);
    app.app_mut().selection_mut().show(View::Graphs);
    assert!(!screen(&app, 80, 24).contains("CP_ActiveAVG"));
    // Three intervals back: a marker under that column.
    for _ in 0..3 {
        app.key(KeyAction::Back);
    }
    let back = screen(&app, 80, 24);
    assert!(back.contains("▲ the one shown (3 back)"), "{back}");
    let marker = back
        .lines()
        .find(|l| l.starts_with("interval shown"))
        .unwrap_or_else(|| panic!("no marker:\n{back}"));
    assert_eq!(
        marker.find('▲').map(|i| marker[..i].chars().count()),
        Some(80 - 1 - 3)
    );
}

#[test]
fn a_reached_cpu_limit_leads_its_rule_and_every_rule_keeps_its_line() {
    // A busy guest with every CPU online: HOTPLUG is true, CPU_MAX holds it back.
    let dir = tempfile::tempdir().expect("temporary directory");
    let idle = dir.path().join("idle.toml");
    std::fs::write(
        &idle,
        "name = \"busy\"\ncpus = 2\nonline = 2\nmemory_mib = 2048\nduration = \"10:00\"\n\n[[phases]]\nstart = \"0\"\nthreads = 6\nworking_set_mib = 100\n",
    )
    .expect("scenario");
    let (mut app, mut source) = prepare_sim(idle.clone(), None);
    let mut found = false;
    for _ in 0..100 {
        match source.next_sample() {
            Some(Ok(s)) => app.ingest(s),
            _ => break,
        }
        let limited = app
            .app()
            .frame()
            .and_then(|f| f.decision.as_ref())
            .and_then(|d| d.cpu)
            .is_some_and(|c| c.limited && c.action == plugtop::engine::CpuAction::None);
        if limited {
            found = true;
            break;
        }
    }
    assert!(found, "the busy guest never reached CPU_MAX");
    let text = screen(&app, 80, 24);
    assert!(text.contains("reached"), "{text}");
    for kind in [
        "HOTPLUG",
        "HOTUNPLUG",
        "MEMPLUG",
        "MEMUNPLUG",
        "CMM_INC",
        "CMM_DEC",
    ] {
        assert!(
            text.lines()
                .any(|l| l.trim_start_matches(['▸', ' ']).starts_with(kind)),
            "{kind} lost its line:\n{text}"
        );
    }
}

#[test]
fn enter_on_a_variable_expands_that_one_only() {
    let mut a = app(RECOMMENDED, SERIES, 6, Mode::Observe);
    a.app_mut().selection_mut().show(View::Rules);
    a.key(KeyAction::NextRule); // HOTUNPLUG = (CP_idleAVG * onumcpus) > 1.15
    let on_variable = |a: &Local| {
        let Some(frame) = a.app().frame() else {
            return false;
        };
        let tree = plugtop::report::trace::rows(
            a.app().rules(),
            a.app().file(),
            &frame.trace,
            plugtop::rules::RuleKind::Hotunplug,
            &|n| a.app().selection().is_expanded(n),
        );
        tree.get(a.app().selection().tree_scroll())
            .is_some_and(|r| r.variable && r.label.starts_with("CP_idleAVG"))
    };
    for _ in 0..20 {
        if on_variable(&a) {
            break;
        }
        a.key(KeyAction::Down);
    }
    assert!(on_variable(&a), "the cursor reaches CP_idleAVG");
    a.key(KeyAction::Expand);
    assert_eq!(
        a.app().selection().expanded().len(),
        1,
        "one variable expanded"
    );
    let after = screen(&a, 80, 24);
    assert!(after.contains("▾ CP_idleAVG"), "{after}");
    assert!(after.contains("▸ "), "the others stay folded:\n{after}");
    a.key(KeyAction::Expand);
    assert!(
        a.app().selection().expanded().is_empty(),
        "Enter again folds it"
    );
}

#[test]
fn the_whatif_editor_changes_hotplug_and_hotunplug_together() {
    use crossterm::event::{KeyCode, KeyEvent};
    let mut app = simulated_with(
        "oscillating",
        Some("examples/rules/oscillating-tight.conf"),
        81,
    );
    let type_text = |app: &mut Local, text: &str| {
        for _ in 0..200 {
            app.app_mut().whatif_key(KeyEvent::from(KeyCode::Backspace));
        }
        for c in text.chars() {
            app.app_mut().whatif_key(KeyEvent::from(KeyCode::Char(c)));
        }
    };
    app.key(KeyAction::WhatIf);
    type_text(&mut app, "idle < 0.2");
    app.app_mut().whatif_key(KeyEvent::from(KeyCode::Tab));
    type_text(&mut app, "idle > 0.9");
    let editor = app
        .app()
        .modals()
        .whatif()
        .cloned()
        .expect("the editor is open");
    assert_eq!(
        editor.edited_fields(app.app().rules(), app.app().file()),
        vec![
            Field::Rule(plugtop::rules::RuleKind::Hotplug),
            Field::Rule(plugtop::rules::RuleKind::Hotunplug)
        ]
    );
    let (file, _) = editor.edited_file(app.app().rules(), app.app().file());
    let text = String::from_utf8_lossy(file.bytes()).into_owned();
    assert!(text.contains("HOTPLUG=\"idle < 0.2\""), "{text}");
    assert!(text.contains("HOTUNPLUG=\"idle > 0.9\""), "{text}");
    // Back to HOTPLUG: its edit is still there.
    app.app_mut().whatif_key(KeyEvent::from(KeyCode::BackTab));
    assert_eq!(
        app.app().modals().whatif().map(|e| e.input().text()),
        Some("idle < 0.2")
    );
    app.app_mut().whatif_key(KeyEvent::from(KeyCode::Enter));
    let screen_now = screen(&app, 80, 24);
    assert!(screen_now.contains("(2 edited)"), "{screen_now}");
    assert!(screen_now.contains("differ in "), "{screen_now}");
    let marks = screen_now
        .lines()
        .find(|l| l.contains("differ    "))
        .unwrap_or_default();
    assert!(
        marks.contains('^'),
        "the timelines part somewhere:\n{screen_now}"
    );
}

#[test]
fn brackets_jump_between_decision_changes() {
    use plugtop::control::flap::Moves;
    let mut app = simulated_with(
        "oscillating",
        Some("examples/rules/oscillating-tight.conf"),
        81,
    );
    let moves = |app: &Local, k: usize| {
        app.app()
            .timeline()
            .frames()
            .get(k)
            .and_then(|f| f.decision.as_ref())
            .map(Moves::of)
    };
    let newest = moves(&app, 0);
    app.key(KeyAction::PreviousChange);
    let k = app
        .app()
        .timeline()
        .cursor()
        .expect("a change back in time");
    assert!(k > 0);
    assert_ne!(moves(&app, k), newest, "the interval it stops at differs");
    for between in 1..k {
        assert_eq!(
            moves(&app, between),
            newest,
            "no change skipped at {between}"
        );
    }
    app.key(KeyAction::NextChange);
    let back = app.app().timeline().cursor().expect("still travelling");
    assert!(back < k);
    assert_ne!(moves(&app, back), moves(&app, k));
}

#[test]
fn slash_searches_the_log() {
    use crossterm::event::{KeyCode, KeyEvent};
    let mut a = app(RECOMMENDED, SERIES, 20, Mode::Observe);
    a.key(KeyAction::Search);
    assert_eq!(a.app().selection().view(), View::Log);
    for c in "FLAPPING".chars() {
        a.app_mut().search_key(KeyEvent::from(KeyCode::Char(c)));
    }
    let typing = screen(&a, 80, 24);
    assert!(typing.contains("Search the log: FLAPPING"), "{typing}");
    a.app_mut().search_key(KeyEvent::from(KeyCode::Enter));
    let found = screen(&a, 80, 24);
    assert!(found.contains("Log lines with \"FLAPPING\": 1"), "{found}");
    let body: Vec<&str> = found
        .lines()
        .skip(3)
        .filter(|l| l.starts_with("12:"))
        .collect();
    assert_eq!(body.len(), 1, "{found}");
    assert!(body[0].to_lowercase().contains("flapping"), "{found}");
    // Esc while searching drops the filter.
    a.key(KeyAction::Search);
    a.app_mut().search_key(KeyEvent::from(KeyCode::Esc));
    assert!(a.app().log().filter().is_none());
}

#[test]
fn clicks_pick_a_view_tab_or_a_rule_and_m_frees_the_mouse() {
    let mut a = app(RECOMMENDED, SERIES, 6, Mode::Observe);
    a.app_mut().set_screen_size(
        80,
        24,
        view::cpu_panel_size(ratatui::layout::Rect::new(0, 0, 80, 24)),
    );
    let text = screen(&a, 80, 24);
    let tabs = text.lines().nth(1).unwrap_or_default();
    let column = tabs
        .find("Graphs")
        .map(|b| tabs[..b].chars().count() as u16)
        .unwrap_or_else(|| panic!("no Graphs tab:\n{text}"));
    view::click(a.app_mut(), column + 1, 1);
    assert_eq!(a.app().selection().view(), View::Graphs);
    a.app_mut().selection_mut().show(View::Overview);
    let text = screen(&a, 80, 24);
    let row = text
        .lines()
        .position(|l| l.trim_start_matches(['▸', ' ']).starts_with("MEMPLUG"))
        .unwrap_or_else(|| panic!("no MEMPLUG line:\n{text}")) as u16;
    view::click(a.app_mut(), 3, row);
    assert_eq!(
        a.app().selection().rule(),
        plugtop::rules::RuleKind::Memplug
    );
    a.key(KeyAction::Mouse);
    assert!(!a.app().mouse());
    assert!(screen(&a, 80, 24).contains("mouse off (m)"));
}

#[test]
fn the_whatif_editor_reaches_limits_and_variables_and_matches_paces() {
    use crossterm::event::{KeyCode, KeyEvent};
    let mut app = simulated_with(
        "oscillating",
        Some("examples/rules/oscillating-tight.conf"),
        81,
    );
    let key = |app: &mut Local, code: KeyCode| app.app_mut().whatif_key(KeyEvent::from(code));
    let replace = |app: &mut Local, text: &str| {
        for _ in 0..200 {
            app.app_mut().whatif_key(KeyEvent::from(KeyCode::Backspace));
        }
        for c in text.chars() {
            app.app_mut().whatif_key(KeyEvent::from(KeyCode::Char(c)));
        }
    };
    app.key(KeyAction::WhatIf);
    // HOTPLUG, then the five other rules, then UPDATE, CPU_MIN, CPU_MAX.
    for _ in 0..8 {
        key(&mut app, KeyCode::Tab);
    }
    let editor = app.app().modals().whatif().cloned().expect("open");
    assert_eq!(editor.field(), &Field::Limit(2));
    assert_eq!(editor.input().text(), "0", "CPU_MAX as the file sets it");
    replace(&mut app, "2");
    // Back to UPDATE.
    key(&mut app, KeyCode::BackTab);
    key(&mut app, KeyCode::BackTab);
    assert_eq!(
        app.app().modals().whatif().map(|e| e.field().clone()),
        Some(Field::Limit(0))
    );
    replace(&mut app, "2");
    for _ in 0..3 {
        key(&mut app, KeyCode::BackTab);
    }
    for _ in 0..4 {
        key(&mut app, KeyCode::BackTab);
    }
    // Back past the rules, round to the last variable.
    assert_eq!(
        app.app().modals().whatif().map(|e| e.field().clone()),
        Some(Field::Variable("CP_idle".into()))
    );
    let editor = app.app().modals().whatif().cloned().expect("open");
    let (file, _) = editor.edited_file(app.app().rules(), app.app().file());
    let text = String::from_utf8_lossy(file.bytes()).into_owned();
    assert!(text.contains("\nCPU_MAX=\"2\"\n"), "{text}");
    assert!(text.contains("\nUPDATE=\"2\"\n"), "{text}");
    assert_eq!(
        text.lines().count(),
        app.app()
            .file()
            .bytes()
            .iter()
            .filter(|b| **b == b'\n')
            .count(),
        "lines are replaced in place, none added"
    );
    key(&mut app, KeyCode::Enter);
    let result = app
        .app()
        .modals()
        .whatif()
        .and_then(|e| e.result().cloned())
        .expect("a result");
    assert!(result.pace.is_some(), "an UPDATE edit says how paces match");
    let s = screen(&app, 80, 24);
    assert!(s.contains("(2 edited)"), "{s}");
    assert!(s.contains("UPDATE 2 s"), "{s}");
    // 81 readings do not fit 68 columns: two a column, and it says so.
    assert!(s.contains("2 intervals a column"), "{s}");
    assert!(
        s.contains("50 decided, 50 applied"),
        "autonomous applies:\n{s}"
    );
    both("whatif_limits", &app);
}

#[test]
fn the_whatif_counts_observe_modes_would_as_decided_not_applied() {
    use crossterm::event::{KeyCode, KeyEvent};
    let (mut app, mut source) = prepare_sim(
        "examples/scenarios/oscillating.toml",
        Some("examples/rules/oscillating-tight.conf"),
    );
    app.set_mode(Mode::Observe);
    for _ in 0..40 {
        if let Some(Ok(s)) = source.next_sample() {
            app.ingest(s);
        }
    }
    app.key(KeyAction::WhatIf);
    app.app_mut().whatif_key(KeyEvent::from(KeyCode::Enter));
    let r = app
        .app()
        .modals()
        .whatif()
        .and_then(|e| e.result().cloned())
        .expect("a result");
    assert!(r.changes.0 > 0, "the loaded rules decided something");
    assert_eq!(r.applied, 0, "observe applied nothing");
    let s = screen(&app, 160, 48);
    assert!(
        s.contains(&format!("loaded: {} decided, 0 applied", r.changes.0)),
        "{s}"
    );
}

#[test]
fn e_asks_where_to_write_the_log() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut app = simulated(20);
    app.key(KeyAction::Export);
    let offered = match app.app().modals().top() {
        Some(Modal::Export(input)) => input.text().to_string(),
        other => panic!("no prompt: {other:?}"),
    };
    assert!(
        offered.contains("plugtop-log-"),
        "a default file is offered: {offered}"
    );
    // A fixed path, so the snapshot does not hold this machine's home.
    app.app_mut()
        .export_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    for c in "/var/tmp/plugtop-incident.txt".chars() {
        app.app_mut().export_key(KeyEvent::from(KeyCode::Char(c)));
    }
    both("export_prompt", &app);
    assert_eq!(
        app.app_mut().export_key(KeyEvent::from(KeyCode::Enter)),
        Some(std::path::PathBuf::from("/var/tmp/plugtop-incident.txt"))
    );
    assert!(
        !app.app()
            .modals()
            .is_open(&Modal::Export(Default::default()))
    );
    app.key(KeyAction::Export);
    assert_eq!(app.app_mut().export_key(KeyEvent::from(KeyCode::Esc)), None);
    assert!(
        !app.app()
            .modals()
            .is_open(&Modal::Export(Default::default())),
        "Esc cancels"
    );
}

#[test]
fn a_click_on_a_cpu_row_selects_it_on_any_page_and_p_pins_its_busy_share() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let scenario = dir.path().join("big.toml");
    std::fs::write(
        &scenario,
        "name = \"big\"\ncpus = 64\nonline = 64\nmemory_mib = 8192\nduration = \"1:00:00\"\n\n[[phases]]\nstart = \"0\"\nthreads = 8\nworking_set_mib = 300\n",
    )
    .expect("scenario written");
    let (mut a, mut source) = prepare_sim(&scenario, None);
    let mut feed = |a: &mut Local, n: usize| {
        for _ in 0..n {
            if let Some(Ok(s)) = source.next_sample() {
                a.ingest(s);
            }
        }
    };
    feed(&mut a, 3);
    a.app_mut().set_screen_size(
        80,
        24,
        view::cpu_panel_size(ratatui::layout::Rect::new(0, 0, 80, 24)),
    );
    // All 64 fit as meters; `c` shows the table, which pages.
    a.key(KeyAction::CpuLayout);
    a.key(KeyAction::CpusDown);
    let text = screen(&a, 80, 24);
    let (row, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("cpu") && !l.starts_with("cpu0 "))
        .unwrap_or_else(|| panic!("no CPU row on page two:\n{text}"));
    let id: u32 = line[3..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no CPU number in {line:?}"));
    view::click(a.app_mut(), 2, row as u16);
    assert_eq!(
        a.app().selection().selected_cpu(),
        Some(id),
        "the row under the click:\n{text}"
    );
    // Clicks on the column heads or the `all` row select nothing.
    let heads = text
        .lines()
        .position(|l| l.starts_with("% now"))
        .unwrap_or_default() as u16;
    a.app_mut().selection_mut().drop_cpu();
    view::click(a.app_mut(), 2, heads);
    view::click(a.app_mut(), 2, heads + 1);
    assert_eq!(a.app().selection().selected_cpu(), None);
    view::click(a.app_mut(), 2, row as u16);
    let text = screen(&a, 80, 24);
    assert!(
        text.contains(&format!("cpu{id}: p pins its busy %")),
        "{text}"
    );
    a.key(KeyAction::Pin);
    assert_eq!(a.app().timeline().pinned(), vec![format!("cpu{id} busy%")]);
    feed(&mut a, 5);
    a.app_mut().selection_mut().show(View::Graphs);
    let graphs = screen(&a, 160, 48);
    let pinned = graphs
        .lines()
        .find(|l| l.starts_with(&format!("cpu{id} busy%")))
        .unwrap_or_else(|| panic!("no graph row for cpu{id}:\n{graphs}"));
    assert!(pinned.chars().any(|c| "▁▂▃▄▅▆▇█".contains(c)), "{pinned}");
    // Moving the value cursor gives `p` back to the values.
    a.app_mut().selection_mut().show(View::Overview);
    a.key(KeyAction::Down);
    assert_eq!(a.app().selection().selected_cpu(), None);
}

#[test]
fn t_tunes_the_simulated_rules_and_a_picked_point_opens_in_the_whatif() {
    use crossterm::event::{KeyCode, KeyEvent};
    let mut app = simulated_with(
        "oscillating",
        Some("examples/rules/oscillating-tight.conf"),
        81,
    );
    app.key(KeyAction::Tune);
    assert!(app.app().modals().is_open(&Modal::Tune));
    if let Some(job) = app.app_mut().tune_mut() {
        job.wait();
    }
    let s = screen(&app, 80, 24);
    assert!(s.contains("Tune: the front of 200 candidates"), "{s}");
    assert!(s.contains("★ recommended"), "{s}");
    both("tune_front", &app);
    // Pick the recommended row and open it.
    let rows = app.app().tune().map(|j| j.front()).unwrap_or_default();
    let at = rows
        .iter()
        .position(|r| r.recommended)
        .expect("a recommendation");
    for _ in 0..at {
        app.app_mut().tune_key(KeyEvent::from(KeyCode::Down));
    }
    app.app_mut().tune_key(KeyEvent::from(KeyCode::Enter));
    assert!(!app.app().modals().is_open(&Modal::Tune));
    let editor = app
        .app()
        .modals()
        .whatif()
        .cloned()
        .expect("the what-if editor opened");
    assert!(!editor.edits().is_empty(), "the tuned numbers are edits");
    let result = editor.result().expect("and it ran");
    assert!(result.closed_loop);
    assert!(
        result.reversals.1 < result.reversals.0,
        "the tuned rules reverse less: {:?}",
        result.reversals
    );
}

#[test]
fn t_without_a_simulator_says_why() {
    let mut a = app(RECOMMENDED, SERIES, 6, Mode::Observe);
    a.key(KeyAction::Tune);
    assert!(a.app().tune().is_none());
    assert!(screen(&a, 80, 24).contains("start plugtop with --sim"));
}
