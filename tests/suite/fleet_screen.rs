//! The fleet screen drawn into a TestBackend from a canned fleet (no HTTP,
//! no clock): the table trouble first at 80×24 and 160×48, sorted,
//! filtered, the drift view, one guest in detail, Prometheus down.

use std::collections::HashMap;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::fleet_fake::{self, Canned, Reply};
use plugtop::fleet::app::{FleetAction, FleetApp, Request};
use plugtop::fleet::fetch::{self, Scope};
use plugtop::fleet::model::Fleet;
use plugtop::fleet::query::{
    PromAnswer, PromPoint, PromSeries, Prometheus, QueryError, decode_matrix, decode_vector,
};

/// The canned fleet answering without a server.
struct Canned5(Vec<Canned>);

fn body(reply: Reply) -> Vec<u8> {
    match reply {
        Reply::Json(b) => b.into_bytes(),
        _ => Vec::new(),
    }
}

impl Prometheus for Canned5 {
    fn instant(&self, query: &str, at: f64) -> Result<PromAnswer<Vec<PromPoint>>, QueryError> {
        let params = HashMap::from([
            ("query".to_string(), query.to_string()),
            ("time".to_string(), at.to_string()),
        ]);
        decode_vector(&body(fleet_fake::answer(&self.0, "/api/v1/query", &params)))
    }
    fn range(
        &self,
        query: &str,
        start: f64,
        end: f64,
        _: f64,
    ) -> Result<PromAnswer<Vec<PromSeries>>, QueryError> {
        let params = HashMap::from([
            ("query".to_string(), query.to_string()),
            ("start".to_string(), start.to_string()),
            ("end".to_string(), end.to_string()),
        ]);
        decode_matrix(&body(fleet_fake::answer(
            &self.0,
            "/api/v1/query_range",
            &params,
        )))
    }
}

const AT: f64 = 1_700_000_000.0;

fn scope() -> Scope {
    Scope::new("", 3600.0, 60.0)
}

fn canned_fleet(guests: Vec<Canned>) -> Fleet {
    let mut f = fetch::fleet(&Canned5(guests), &scope(), AT);
    f.health.took_ms = 12;
    f
}

fn app() -> FleetApp {
    let mut app = FleetApp::new("http://prometheus:9090", 3600.0, 60.0);
    app.on_fleet(canned_fleet(fleet_fake::five()), AT);
    app
}

/// The screen as text, one line per row.
pub fn screen(app: &FleetApp, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal
        .draw(|f| plugtop::fleet::table::draw(f, app))
        .expect("draw");
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

#[test]
fn the_table_puts_trouble_first() {
    let app = app();
    assert_snapshot_of!("fleet_screen", "table_80x24", screen(&app, 80, 24));
    assert_snapshot_of!("fleet_screen", "table_160x48", screen(&app, 160, 48));
}

#[test]
fn any_column_sorts_and_a_filter_narrows() {
    let mut app = app();
    app.update(FleetAction::SortNext);
    assert_snapshot_of!(
        "fleet_screen",
        "sorted_by_instance_80x24",
        screen(&app, 80, 24)
    );
    app.update(FleetAction::Filter);
    for c in "LINUX0".chars().chain(['4']) {
        app.filter_key(Some(c), true);
    }
    assert_snapshot_of!("fleet_screen", "filtering_80x24", screen(&app, 80, 24));
}

#[test]
fn the_drift_view_groups_guests_by_rule_file() {
    let mut app = app();
    app.update(FleetAction::Drift);
    app.update(FleetAction::Down);
    // The canned paths are not on this machine: the diff says why not.
    app.update(FleetAction::Diff);
    assert_snapshot_of!("fleet_screen", "drift_80x24", screen(&app, 80, 24));
}

/// Opens the third row (the flapping guest of `guests`) in detail, with
/// the detail `guests` answer; its instance.
fn open_third_row(app: &mut FleetApp, guests: Vec<Canned>) -> String {
    app.update(FleetAction::Down);
    app.update(FleetAction::Down);
    let Some(Request::GuestDetail {
        job,
        instance,
        back,
        window,
    }) = app.update(FleetAction::Open)
    else {
        panic!("Enter asks for the guest's window");
    };
    let end = AT - back;
    let mut d = fetch::detail(
        &Canned5(guests),
        &scope(),
        &job,
        &instance,
        end - window,
        end,
    );
    d.health.took_ms = 0;
    app.on_detail(d, AT);
    instance
}

#[test]
fn a_guest_in_detail_shows_its_rules_and_changes() {
    let mut app = app();
    // The flapping guest is the third row.
    let instance = open_third_row(&mut app, fleet_fake::five());
    assert_eq!(instance, "10.0.0.2:9866");
    assert_snapshot_of!("fleet_screen", "detail_80x24", screen(&app, 80, 24));
    assert_snapshot_of!("fleet_screen", "detail_160x48", screen(&app, 160, 48));
}

/// nu53 M14: at 80 columns a long instance name cut the detail view's key
/// hint, a long drift note cut its `(d: groups)`, and the CPU graph ended
/// 22 columns left of the rule timelines.
#[test]
fn the_detail_view_fits_80_columns_and_its_timelines_end_together() {
    let mut guests = fleet_fake::five();
    guests[1].instance = "127.0.0.1:19866";
    guests[4].file = "/etc/plugtop/examples/rules/a-rather-long-name-for-a-rule-file.conf";
    let mut app = FleetApp::new("http://prometheus:9090", 3600.0, 60.0);
    app.on_fleet(canned_fleet(guests), AT);
    let mut guests = fleet_fake::five();
    guests[1].instance = "127.0.0.1:19866";
    assert_eq!(open_third_row(&mut app, guests), "127.0.0.1:19866");
    let shown = screen(&app, 80, 24);
    let line = |start: &str| {
        shown
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("drift").starts_with("drift (d: groups): "), "{shown}");
    let title = line("127.0.0.1:19866");
    assert_eq!(
        title.trim_end(),
        "127.0.0.1:19866 (plugtop)  window 60m ago … 0s ago",
        "{shown}"
    );
    assert!(
        line("q quit").contains("Esc back"),
        "the keys stay on the bottom line: {shown}"
    );
    // The newest column of the CPU graph and of the rule timeline is the same.
    let end_of = |l: String, marks: &str| {
        l.chars()
            .enumerate()
            .filter(|(_, c)| marks.contains(*c))
            .map(|(i, _)| i)
            .max()
            .unwrap_or(0)
    };
    assert_eq!(
        end_of(line("CPUs online"), "▁▂▃▄▅▆▇█"),
        end_of(line("HOTPLUG"), "·█"),
        "{shown}"
    );
    assert_snapshot_of!("fleet_screen", "detail_long_names_80x24", shown);
}

/// adv52 #10b: a guest that stopped with no point left in the detail's
/// window shows the last values the list shows, marked as last seen,
/// not "no data" beside a list that shows them.
#[test]
fn a_stopped_guest_in_detail_shows_its_last_values() {
    let stopped = || {
        let mut guests = fleet_fake::five();
        guests[0].gone = true;
        guests[0].age = 4000.0;
        guests
    };
    let mut app = FleetApp::new("http://prometheus:9090", 3600.0, 60.0);
    app.on_fleet(canned_fleet(stopped()), AT);
    let list = screen(&app, 80, 24);
    let row = list
        .lines()
        .find(|l| l.contains("10.0.0.1:9866"))
        .unwrap_or_default()
        .to_string();
    assert!(row.contains("stopped") && row.contains("(2/4)"), "{list}");
    let instance = loop {
        match app.update(FleetAction::Open) {
            Some(Request::GuestDetail { instance, .. }) if instance == "10.0.0.1:9866" => {
                break instance;
            }
            _ => {
                app.update(FleetAction::Back);
                app.update(FleetAction::Down);
            }
        }
    };
    let d = fetch::detail(
        &Canned5(stopped()),
        &scope(),
        "plugtop",
        &instance,
        AT - 3600.0,
        AT,
    );
    assert!(d.online.is_empty(), "no point in the window");
    app.on_detail(d, AT);
    let shown = screen(&app, 80, 24);
    assert!(shown.contains("stopped: last 2\n"), "{shown}");
    assert!(shown.contains("stopped: last 4\n"), "{shown}");
    assert!(
        !shown.contains("CPUs online") || !shown.contains("no data\n"),
        "{shown}"
    );
}

#[test]
fn prometheus_down_is_said_and_the_last_answer_kept() {
    let mut app = app();
    let mut down = Fleet::default();
    down.health.queries = 17;
    down.health.failed = vec!["Online: cannot reach Prometheus: connection refused".into(); 17];
    app.on_fleet(down, AT + 45.0);
    assert_snapshot_of!("fleet_screen", "down_80x24", screen(&app, 80, 24));
}

#[test]
fn a_thousand_guests_draw_one_page() {
    let guests: Vec<Canned> = (0..1000)
        .map(|i| {
            let name: &'static str =
                Box::leak(format!("10.1.{}.{}:9866", i / 250, i % 250).into_boxed_str());
            Canned {
                instance: name,
                zvm: "LINUXNN",
                online: f64::from(i % 8 + 1),
                present: 8.0,
                age: 1.0,
                flapping: i % 97 == 0,
                faulting: None,
                faulted_once: None,
                faulting_now: None,
                crc: if i % 300 == 0 { "cccc0003" } else { "aaaa0001" },
                file: "/etc/cpuplugd.conf",
                twin_flapping: false,
                gone: false,
            }
        })
        .collect();
    let mut app = FleetApp::new("http://prometheus:9090", 3600.0, 60.0);
    app.on_fleet(canned_fleet(guests), AT);
    assert_eq!(app.rows.len(), 1000);
    assert_snapshot_of!("fleet_screen", "thousand_80x24", screen(&app, 80, 24));
}

#[test]
fn the_drift_diff_reads_both_files_under_the_rules_root() {
    let root = tempfile::tempdir().expect("temporary directory");
    for (instance, text) in [
        ("10.0.0.1_9866", "UPDATE=\"1\"\nHOTPLUG=\"idle < 10\"\n"),
        ("10.0.0.5_9866", "UPDATE=\"1\"\nHOTPLUG=\"idle < 20\"\n"),
    ] {
        let dir = root.path().join(instance).join("etc");
        std::fs::create_dir_all(&dir).expect("directory");
        let name = if instance.starts_with("10.0.0.5") {
            "other.conf"
        } else {
            "cpuplugd.conf"
        };
        std::fs::write(dir.join(name), text).expect("rule file");
    }
    let mut app = app();
    app.rules_root = Some(root.path().to_path_buf());
    app.update(FleetAction::Drift);
    app.update(FleetAction::Down);
    app.update(FleetAction::Diff);
    let text = screen(&app, 80, 24);
    assert!(text.contains("- HOTPLUG=\"idle < 10\""), "{text}");
    assert!(text.contains("+ HOTPLUG=\"idle < 20\""), "{text}");
    assert!(text.contains("  UPDATE=\"1\""), "{text}");
}

/// nu53 F12: the diff opens at the first rule that differs (below the
/// files' differing header comments), says what `-` and `+` are and how
/// much is above and below; PgDn, End, ↑ and Home move it within it.
#[test]
fn the_drift_diff_opens_at_the_first_differing_rule_and_pages() {
    let root = tempfile::tempdir().expect("temporary directory");
    for (instance, name, who, limit) in [
        ("10.0.0.1_9866", "cpuplugd.conf", "recommended", 10),
        ("10.0.0.5_9866", "other.conf", "incident's", 90),
    ] {
        let mut text: String = (1..=12)
            .map(|i| format!("# the {who} rules ({i})\n"))
            .collect();
        text.push_str(&format!("UPDATE=\"1\"\nHOTPLUG=\"idle < {limit}\"\n"));
        text.push_str(
            &(1..=30)
                .map(|i| format!("# note {i}\n"))
                .collect::<String>(),
        );
        let dir = root.path().join(instance).join("etc");
        std::fs::create_dir_all(&dir).expect("directory");
        std::fs::write(dir.join(name), text).expect("rule file");
    }
    let mut app = app();
    app.rules_root = Some(root.path().to_path_buf());
    app.update(FleetAction::Drift);
    app.update(FleetAction::Diff);
    let text = screen(&app, 80, 24);
    assert_snapshot_of!("fleet_screen", "diff_80x24", text.clone());
    let first = text.lines().nth(5).unwrap_or_default();
    assert_eq!(first, "- HOTPLUG=\"idle < 10\"", "{text}");
    // 57 lines, 17 shown: the end is 40 lines down; a page keeps a line.
    assert_eq!(plugtop::fleet::table::diff_room(&app, 24), app.diff_rows);
    app.update(FleetAction::End);
    assert_eq!(app.diff_scroll, 57 - 17);
    let text = screen(&app, 80, 24);
    assert!(
        text.contains("lines 41–57 of 57: 40 above ↑, 0 below ↓"),
        "{text}"
    );
    app.update(FleetAction::PageUp);
    assert_eq!(app.diff_scroll, 57 - 17 - 16);
    app.update(FleetAction::Up);
    app.update(FleetAction::Home);
    assert_eq!(app.diff_scroll, 0);
    app.update(FleetAction::Up);
    assert_eq!(app.diff_scroll, 0, "never above the top");
    app.update(FleetAction::PageDown);
    assert_eq!(app.diff_scroll, 16);
    // A taller terminal shows more; Esc is back to the groups.
    app.diff_rows = plugtop::fleet::table::diff_room(&app, 48);
    app.update(FleetAction::End);
    assert_eq!(app.diff_scroll, 57 - 41);
    app.update(FleetAction::Back);
    assert_eq!(app.view, plugtop::fleet::app::FleetView::Drift);
    assert!(screen(&app, 80, 24).contains("D: diff the selected group's file"));
}

#[test]
fn a_slow_prometheus_is_said_in_the_header() {
    let mut fleet = canned_fleet(fleet_fake::five());
    fleet.health.took_ms = 2400;
    let mut app = FleetApp::new("http://prometheus:9090", 3600.0, 60.0);
    app.on_fleet(fleet, AT);
    let text = screen(&app, 80, 24);
    assert!(
        text.contains("Prometheus is slow: 19 queries took 2400 ms"),
        "{text}"
    );
}

#[test]
fn question_mark_shows_every_key_and_question_mark_or_esc_closes_it() {
    let mut app = app();
    assert!(
        screen(&app, 80, 24).contains("? help"),
        "the key line says ? help"
    );
    assert_eq!(app.update(FleetAction::Help), None);
    let shown = screen(&app, 80, 24);
    assert_snapshot_of!("fleet_screen", "help_80x24", shown.clone());
    for key in ["Enter", "/", "s S", "d", "D Enter", "←→ h l", "q Ctrl-C"] {
        assert!(shown.contains(key), "{key} missing from\n{shown}");
    }
    // Keys do nothing behind the help, `?` closes it.
    assert_eq!(app.update(FleetAction::Open), None);
    assert_eq!(app.update(FleetAction::Help), None);
    assert!(!screen(&app, 80, 24).contains("keys: ? or Esc closes"));
    // Esc closes it too, in every view, and tiny screens draw it.
    app.update(FleetAction::Drift);
    app.update(FleetAction::Help);
    assert!(screen(&app, 80, 24).contains("drift (here)"));
    for (w, h) in [(20, 5), (1, 1), (21, 4), (200, 3)] {
        let _ = screen(&app, w, h);
    }
    app.update(FleetAction::Back);
    assert!(!app.help);
    assert_eq!(app.view, plugtop::fleet::app::FleetView::Drift);
}
