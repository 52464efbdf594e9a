//! `plugtop fleet` in a pseudo-terminal against a fake Prometheus: the
//! table trouble first, a filter, one guest in detail, Prometheus going
//! down and coming back, and the terminal given back on `q`.

use std::sync::atomic::Ordering;

use crate::fleet_fake;
use crate::ui_pty::{
    Session, a_plain_terminal_is_asked_for_no_paste_or_mouse, an_unfinished_reply_then_q_quits,
    ctrl_z_stops_and_sigcont_redraws, sigterm_gives_the_terminal_back,
};

#[test]
fn the_screen_follows_prometheus_down_and_back() {
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let mut s = Session::start(
        &[
            "fleet",
            "--prometheus",
            &fake.url,
            "--refresh",
            "0.5",
            "--timeout",
            "2",
        ],
        24,
        80,
    );
    s.wait_for("stopped   10.0.0.3:9866");
    let screen = s.screen();
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains(":9866")).collect();
    assert!(
        rows[0].starts_with("stopped") && rows[1].starts_with("faulting"),
        "{screen}"
    );
    assert!(
        screen.contains("1 guest runs other rules: other.conf"),
        "{screen}"
    );

    s.press("/LINUX02\r");
    s.wait_gone("10.0.0.3:9866");
    assert!(
        s.screen().contains("flapping  10.0.0.2:9866"),
        "{}",
        s.screen()
    );
    s.press("\r");
    s.wait_for("changes of decision");
    s.wait_for("HOTPLUG false → true");
    // Issue 45: the detail refreshes like the list, and the header counts
    // its refreshes (it stood still at the list's last).
    let counted = |screen: &str| -> Option<u64> {
        let at = screen.find("(refresh ")? + "(refresh ".len();
        screen[at..].split(')').next()?.parse().ok()
    };
    let first = counted(&s.screen()).unwrap_or_else(|| panic!("{}", s.screen()));
    s.wait_for(&format!("(refresh {})", first + 2));
    assert!(s.screen().contains("changes of decision"), "{}", s.screen());
    s.press("\x1b");
    s.wait_for("TROUBLE");

    fake.down.store(true, Ordering::SeqCst);
    s.wait_for("Prometheus DOWN");
    // The last answer stays on the screen.
    assert!(s.screen().contains("10.0.0.2:9866"), "{}", s.screen());
    fake.down.store(false, Ordering::SeqCst);
    s.wait_for("Prometheus answered");

    s.press("q");
    let (code, raw) = s.wait_exit();
    assert_eq!(code, Some(0));
    assert!(
        raw.contains("\u{1b}[?1049l"),
        "the alternate screen is left"
    );
}

#[test]
fn a_guest_whose_plugtop_stops_is_stopped_at_once_with_its_last_values_marked() {
    // newuser51 #18: the guest's target stopped answering (`up == 0`, its
    // series stale in Prometheus) a second ago: stopped at the next
    // refresh, not --stale-after (60 s) later, and its CPUs and pool are
    // the last it exported, marked so, not what the guest has now.
    let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stops = down.clone();
    let fake = fleet_fake::start(move |path, params| {
        let mut guests = fleet_fake::five();
        guests[0].gone = stops.load(Ordering::SeqCst);
        fleet_fake::answer(&guests, path, params)
    });
    let mut s = Session::start(
        &["fleet", "--prometheus", &fake.url, "--refresh", "0.5"],
        24,
        80,
    );
    s.wait_for("ok        10.0.0.1:9866   LINUX01  2/4 ");
    assert!(s.screen().contains("1 stopped"), "{}", s.screen());
    down.store(true, Ordering::SeqCst);
    s.wait_for("stopped   10.0.0.1:9866   LINUX01  (2/4) ");
    let screen = s.screen();
    assert!(screen.contains("2 stopped"), "{screen}");
    let row = screen
        .lines()
        .find(|l| l.contains("10.0.0.1:9866"))
        .unwrap_or_default();
    assert!(row.contains("(100/200)"), "{screen}");
    // A guest still reading keeps its values as they are.
    assert!(
        screen.contains("ok        10.0.0.5:9866   LINUX05  2/4 "),
        "{screen}"
    );
    s.press("q");
    let (code, _) = s.wait_exit();
    assert_eq!(code, Some(0));
}

#[test]
fn ctrl_c_quits_while_a_filter_is_typed_and_question_mark_opens_the_help() {
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let mut s = Session::start(&["fleet", "--prometheus", &fake.url], 24, 80);
    s.wait_for("stopped   10.0.0.3:9866");
    s.press("?");
    s.wait_for("keys: ? or Esc closes");
    s.press("?");
    s.wait_gone("keys: ? or Esc closes");
    s.press("/LINUX");
    s.wait_for("/LINUX█");
    // Raw mode: Ctrl-C is a key, not SIGINT; it quits, not types `c`.
    s.press("\x03");
    let (code, raw) = s.wait_exit();
    assert_eq!(code, Some(0));
    assert!(
        raw.contains("\u{1b}[?1049l"),
        "the alternate screen is left"
    );
}

/// nu53 F14: Ctrl-Z suspends `fleet` as it does the main screen (the
/// shell's, not a copy), and `fg` draws it again.
#[test]
fn ctrl_z_stops_fleet_and_sigcont_redraws_it() {
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    ctrl_z_stops_and_sigcont_redraws(
        Session::start(&["fleet", "--prometheus", &fake.url], 24, 80),
        "stopped   10.0.0.3:9866",
    );
}

/// `plugtop fleet` on a fake Prometheus, under a shell at 80×24.
fn fleet_under_shell(url: &str) -> Session {
    Session::start_under_shell(&["fleet", "--prometheus", url], 24, 80, &[])
}

#[test]
fn sigterm_gives_the_fleet_terminal_back_with_143() {
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    sigterm_gives_the_terminal_back(fleet_under_shell(&fake.url), "stopped   10.0.0.3:9866");
}

#[test]
fn an_unfinished_reply_then_q_quits_fleet() {
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    an_unfinished_reply_then_q_quits(fleet_under_shell(&fake.url), "stopped   10.0.0.3:9866");
}

/// It once asked any terminal for bracketed paste.
#[test]
fn fleet_asks_a_vt100_for_no_paste_or_mouse() {
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let s = Session::start_with(
        &["fleet", "--prometheus", &fake.url],
        24,
        80,
        &[("TERM", "vt100")],
    );
    a_plain_terminal_is_asked_for_no_paste_or_mouse(s, "stopped   10.0.0.3:9866");
}

/// newuser51 #2 (issue 45 item 1): the detail's refreshes asked the
/// window that ended at the list's last refresh again and again, so its
/// "now" and its "Ns ago" stood still for as long as it was open. Each
/// refresh now ends the window at the time it is asked: a change made at
/// one moment ages on the screen, and Prometheus is asked a later end
/// each time.
#[test]
fn the_guest_detail_moves_with_the_time_at_each_refresh() {
    use std::sync::{Arc, Mutex};
    let guests = fleet_fake::five();
    let changed_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64().floor())
        - 30.0;
    let ends = Arc::new(Mutex::new(Vec::<f64>::new()));
    let seen = ends.clone();
    let fake = fleet_fake::start(move |path, params| {
        let q = params.get("query").cloned().unwrap_or_default();
        if path == "/api/v1/query_range" && q.starts_with("plugtop_last_change_timestamp_seconds") {
            if let Some(end) = params.get("end").and_then(|t| t.parse().ok())
                && let Ok(mut ends) = seen.lock()
            {
                ends.push(end);
            }
            // One change, made at one moment: its age grows with the time.
            return fleet_fake::Reply::Json(format!(
                r#"{{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{{"job":"plugtop","instance":"10.0.0.2:9866","why":"unplug → plug; HOTPLUG false → true"}},"values":[[{changed_at},"{changed_at}"]]}}]}}}}"#
            ));
        }
        fleet_fake::answer(&guests, path, params)
    });
    let mut s = Session::start(
        &["fleet", "--prometheus", &fake.url, "--refresh", "0.5"],
        24,
        80,
    );
    s.wait_for("flapping  10.0.0.2:9866");
    s.press("/LINUX02\r");
    s.wait_gone("10.0.0.3:9866");
    s.press("\r");
    s.wait_for("HOTPLUG false → true");
    let age = |screen: &str| -> Option<String> {
        let line = screen
            .lines()
            .find(|l| l.contains("HOTPLUG false → true"))?;
        Some(line.split(" ago").next()?.trim().to_string())
    };
    let first = age(&s.screen()).unwrap_or_else(|| panic!("{}", s.screen()));
    s.wait_until(&format!("the change's age stayed {first}"), |s| {
        age(&s.screen()).is_some_and(|now| now != first)
    });
    let ends = ends.lock().map(|e| e.clone()).unwrap_or_default();
    assert!(
        ends.windows(2).any(|w| w[1] > w[0]),
        "every refresh asked the same window: {ends:?}"
    );
    assert!(s.quit());
}

/// nu53 F12: the drift diff showed its first screenful only, at 80×24
/// the files' header comments, never the rules that differ, and no key
/// scrolled it. It now opens at the first rule line that differs and
/// scrolls as the main screen's long lists do (↑↓ PgUp PgDn Home End),
/// saying how much is above and below.
#[test]
fn the_drift_diff_opens_at_the_first_rule_that_differs_and_scrolls() {
    let root = tempfile::tempdir().expect("temporary directory");
    let file = |comment: &str, hotplug: &str| {
        let mut text: String = (1..=20)
            .map(|i| format!("# {comment}, line {i} of its header\n"))
            .collect();
        text.push_str("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n");
        text.push_str(&format!("HOTPLUG=\"{hotplug}\"\n"));
        text.push_str("HOTUNPLUG=\"idle > 300\"\n");
        text
    };
    for (instance, name, text) in [
        (
            "10.0.0.1_9866",
            "cpuplugd.conf",
            file("the recommended rules", "idle < 10"),
        ),
        (
            "10.0.0.5_9866",
            "other.conf",
            file("the incident's rules", "idle < 90"),
        ),
    ] {
        let dir = root.path().join(instance).join("etc");
        std::fs::create_dir_all(&dir).expect("directory");
        std::fs::write(dir.join(name), text).expect("rule file");
    }
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let rules_root = root.path().display().to_string();
    let mut s = Session::start(
        &[
            "fleet",
            "--prometheus",
            &fake.url,
            "--rules-root",
            &rules_root,
        ],
        24,
        80,
    );
    s.wait_for("stopped   10.0.0.3:9866");
    s.press("d");
    s.wait_for("D: diff the selected group's file");
    s.press("D");
    s.wait_for("+ HOTPLUG=\"idle < 90\"");
    let screen = s.screen();
    assert!(screen.contains("- HOTPLUG=\"idle < 10\""), "{screen}");
    assert!(screen.contains("  HOTUNPLUG=\"idle > 300\""), "{screen}");
    assert!(screen.contains("↑↓ scroll"), "the key line: {screen}");
    assert!(screen.contains(" above ↑"), "{screen}");
    // Home: the top, the header comments; End: the last line again.
    s.press("\x1b[H");
    s.wait_for("- # the recommended rules, line 1 of its header");
    assert!(!s.screen().contains("HOTPLUG=\"idle"), "{}", s.screen());
    s.press("\x1b[6~");
    s.wait_gone("recommended rules, line 1 of");
    s.press("\x1b[F");
    s.wait_for("0 below ↓");
    assert!(
        s.screen().contains("  HOTUNPLUG=\"idle > 300\""),
        "{}",
        s.screen()
    );
    // ↑ a line back; Esc back to the groups, Esc again to the table.
    s.press("k");
    s.wait_for("1 below ↓");
    s.press("\x1b");
    s.wait_for("D: diff the selected group's file");
    s.press("\x1b");
    s.wait_for("TROUBLE");
    s.press("q");
    let (code, _) = s.wait_exit();
    assert_eq!(code, Some(0));
}
