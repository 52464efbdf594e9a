//! `plugtop fleet --batch` (the real binary) against a fake Prometheus
//! holding a canned fleet: the order, the marks, the drift groups and the
//! exit status a check command reads.

use std::process::Command;

use crate::fleet_fake::{self, Reply};

fn fleet(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .arg("fleet")
        .args(args)
        .output()
        .expect("plugtop runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        crate::common::said(&out),
    )
}

#[test]
fn json_lists_every_guest_trouble_first_and_groups_the_drift() {
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let (code, out, err) = fleet(&["--prometheus", &fake.url, "--batch", "--format", "json"]);
    assert_eq!(code, Some(1), "guests in trouble exit 1: {err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let guests = doc["guests"].as_array().expect("guests");
    let order: Vec<&str> = guests
        .iter()
        .map(|g| g["instance"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        order,
        [
            "10.0.0.3:9866",
            "10.0.0.4:9866",
            "10.0.0.2:9866",
            "10.0.0.1:9866",
            "10.0.0.5:9866"
        ]
    );
    assert_eq!(guests[0]["stopped"], true);
    assert_eq!(guests[1]["faulting"][0], "HOTPLUG");
    assert_eq!(guests[2]["flapping"], true);
    assert_eq!(guests[2]["flap_period_seconds"], 4.0);
    let drift = doc["drift"].as_array().expect("drift");
    assert_eq!(drift.len(), 2);
    assert_eq!(drift[1]["instances"][0], "10.0.0.5:9866");
    assert_eq!(drift[1]["odd"], true);
    assert_eq!(
        drift[1]["note"],
        "1 guest runs other rules: other.conf (crc bbbb0002)"
    );
}

#[test]
fn text_says_the_same_and_a_well_fleet_exits_0() {
    let mut guests = fleet_fake::five();
    let text_guests = fleet_fake::five();
    let fake =
        fleet_fake::start(move |path, params| fleet_fake::answer(&text_guests, path, params));
    let (code, out, _) = fleet(&["--prometheus", &fake.url, "--batch"]);
    assert_eq!(code, Some(1));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("TROUBLE"), "{out}");
    assert!(lines[1].starts_with("stopped"), "{out}");
    assert!(
        out.contains("# drift: 1 guest runs other rules: other.conf"),
        "{out}"
    );
    guests.retain(|g| g.instance == "10.0.0.1:9866");
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let (code, out, _) = fleet(&["--prometheus", &fake.url, "--batch"]);
    assert_eq!(code, Some(0), "{out}");
}

/// Issue 42, item 5: a guest whose clock runs ten days ahead (stopped two
/// hours ago for all anyone can tell) and a guest exported as two
/// `plugtop_flapping` series, one saying it flaps, are trouble, each on
/// its own, and fail the check.
#[test]
fn a_clock_ahead_and_a_duplicated_series_are_trouble_never_ok() {
    let mut ahead = fleet_fake::five();
    ahead.retain(|g| g.instance == "10.0.0.1:9866");
    ahead[0].age = -10.0 * 86_400.0 + 7_200.0;
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&ahead, path, params));
    let (code, out, err) = fleet(&["--prometheus", &fake.url, "--batch", "--format", "json"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(doc["guests"][0]["troubles"][0], "clock_ahead", "{out}");
    let (code, out, _) = fleet(&["--prometheus", &fake.url, "--batch"]);
    assert_eq!(code, Some(1));
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("clock-ahead")),
        "{out}"
    );

    let mut twins = fleet_fake::five();
    twins.retain(|g| g.instance == "10.0.0.1:9866");
    twins[0].twin_flapping = true;
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&twins, path, params));
    let (code, out, err) = fleet(&["--prometheus", &fake.url, "--batch", "--format", "json"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let guest = &doc["guests"][0];
    assert_eq!(guest["flapping"], true, "the worst of the two: {out}");
    let troubles = guest["troubles"].as_array().expect("troubles");
    assert!(
        troubles.contains(&"duplicated".into()) && troubles.contains(&"flapping".into()),
        "{out}"
    );
}

#[test]
fn a_check_that_could_not_look_everywhere_does_not_pass() {
    // The well guest alone, but the faults query fails: not a pass.
    let mut guests = fleet_fake::five();
    guests.retain(|g| g.instance == "10.0.0.1:9866");
    let fake = fleet_fake::start(move |path, params| {
        let query = params.get("query").map(String::as_str).unwrap_or("");
        if query.contains("plugtop_rule_faults_total") {
            return Reply::Status(500, "query failed".into());
        }
        fleet_fake::answer(&guests, path, params)
    });
    let (code, _, err) = fleet(&["--prometheus", &fake.url, "--batch"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("queries failed"), "{err}");
    // No guest at all (a --match that matches nothing): not a pass either.
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&[], path, params));
    let (code, _, err) = fleet(&["--prometheus", &fake.url, "--batch"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no guest matched"), "{err}");
}

/// nu53 F8: pointed at a plugtop daemon's own endpoint (it answers 404
/// with a two-line body) `fleet` said "Prometheus answered HTTP 404"
/// over two lines; at a closed port a raw "io: … (os error 111)". Each
/// says in one line what was reached and what is wrong.
#[test]
fn fleet_pointed_at_something_else_says_what_it_reached_in_one_line() {
    let fake =
        fleet_fake::start(|_, _| Reply::Status(404, "not found; metrics are at /metrics\n".into()));
    let (code, _, err) = fleet(&["--prometheus", &fake.url, "--batch"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{} answered 404 to /api/v1/query: is it a Prometheus server? (a plugtop daemon's \
             /metrics is scraped by Prometheus; give the Prometheus server's URL)",
            fake.url
        )),
        "{err}"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (code, _, err) = fleet(&["--prometheus", &url, "--batch"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("nothing listens at {url} (connection refused)")),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
    // Credentials in the URL are not repeated in the message.
    let (_, _, err) = fleet(&[
        "--prometheus",
        &format!("http://me:secret@127.0.0.1:{port}"),
        "--batch",
    ]);
    assert!(!err.contains("secret"), "{err}");
}

#[test]
fn a_prometheus_that_is_down_exits_2_and_says_so() {
    let fake = fleet_fake::start(|_, _| Reply::Status(503, "down".into()));
    let (code, _, err) = fleet(&["--prometheus", &fake.url, "--batch"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("none of the 19 queries was answered"), "{err}");
    // The error first, then what was asked: no enum name such as "Info:"
    // in the middle of the message (new-user finding 17).
    assert!(
        err.contains(&format!(
            ": {} answered HTTP 503 to /api/v1/query: down (asking for plugtop_guest_info)",
            fake.url
        )),
        "{err}"
    );
    assert!(!err.contains("Info:"), "{err}");
}

#[test]
fn bad_options_are_refused_with_what_to_fix() {
    let (code, _, err) = fleet(&["--prometheus", "https://p:9090", "--batch"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("only http://"), "{err}");
    let (code, _, err) = fleet(&[
        "--prometheus",
        "http://p:9090",
        "--timeout",
        "NaN",
        "--batch",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--timeout"), "{err}");
}

#[test]
fn a_match_that_is_not_label_matchers_is_refused_before_any_query() {
    let fake = fleet_fake::start(|_, _| Reply::Json(String::new()));
    for bad in [
        r#"{job="a"} or vector(1)"#,
        r#"job="a"} or vector(1) or plugtop_guest_info{job="b""#,
        "job=\"a\nb\"",
        r#"job="unclosed"#,
    ] {
        let (code, _, err) = fleet(&["--prometheus", &fake.url, "--match", bad, "--batch"]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(err.contains("--match"), "{err}");
    }
    assert_eq!(
        fake.requests.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing asked"
    );
}

/// Issue 45: FAULTS is "the rules that faulted in the window"
/// (docs/fleet.md), but it listed only the rules that faulted often enough
/// to be trouble, so a guest with a fault in its window showed `-`.
#[test]
fn faults_lists_every_rule_that_faulted_in_the_window_and_only_often_is_trouble() {
    let mut guests = fleet_fake::five();
    guests.retain(|g| g.instance == "10.0.0.1:9866" || g.instance == "10.0.0.4:9866");
    guests[0].faulted_once = Some("HOTUNPLUG");
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let (code, out, err) = fleet(&["--prometheus", &fake.url, "--batch", "--format", "json"]);
    assert_eq!(
        code,
        Some(1),
        "the guest faulting 3 of 40 is trouble: {err}"
    );
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let of = |instance: &str| {
        doc["guests"]
            .as_array()
            .and_then(|g| g.iter().find(|g| g["instance"] == instance))
            .cloned()
            .unwrap_or_default()
    };
    let once = of("10.0.0.1:9866");
    assert_eq!(once["faulted"][0], "HOTUNPLUG", "{once}");
    assert_eq!(once["faulting"].as_array().map(Vec::len), Some(0), "{once}");
    assert!(
        !once["troubles"].to_string().contains("faulting"),
        "one fault in 40 readings is no trouble: {once}"
    );
    let often = of("10.0.0.4:9866");
    assert_eq!(often["faulting"][0], "HOTPLUG", "{often}");
    assert_eq!(often["faulted"][0], "HOTPLUG", "{often}");
    // The text table's FAULTS column says it too.
    let (_, text, _) = fleet(&["--prometheus", &fake.url, "--batch"]);
    let row = text
        .lines()
        .find(|l| l.contains("10.0.0.1:9866"))
        .unwrap_or_default();
    assert!(row.contains("HOTUNPLUG") && row.starts_with("ok"), "{text}");
}

#[test]
fn a_guest_whose_target_went_down_is_stopped_at_once_and_its_values_marked_as_last_seen() {
    // newuser51 #18: `up == 0` a second ago is stopped now (exit 1), not
    // "ok" for --stale-after; its CPUs and pool are the last seen.
    let mut guests = fleet_fake::five();
    guests[0].gone = true;
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let (code, out, err) = fleet(&["--prometheus", &fake.url, "--batch", "--wide"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let row = |instance: &str| {
        out.lines()
            .find(|l| l.contains(instance))
            .unwrap_or_default()
            .to_string()
    };
    let gone = row("10.0.0.1:9866");
    assert!(gone.starts_with("stopped "), "{out}");
    assert!(
        gone.contains(" (2/4) ") && gone.contains(" (100/200) "),
        "{out}"
    );
    assert!(gone.contains(" 1s "), "its last reading is recent: {out}");
    let well = row("10.0.0.5:9866");
    assert!(well.starts_with("ok ") && well.contains(" 2/4 "), "{out}");
    let (_, json, _) = fleet(&["--prometheus", &fake.url, "--batch", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let first = doc["guests"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["instance"] == "10.0.0.1:9866"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(first["stopped"], true, "{json}");
    assert_eq!(first["troubles"][0], "stopped", "{json}");
}

/// nu53 M1: a guest whose rules fault at every reading now was `ok` until
/// the faults reached 5% of the window's readings.
#[test]
fn a_rule_faulting_at_every_recent_reading_is_trouble_at_once() {
    let mut guests = fleet_fake::five();
    guests.retain(|g| g.instance == "10.0.0.1:9866");
    guests[0].faulting_now = Some("HOTPLUG");
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let (code, out, err) = fleet(&["--prometheus", &fake.url, "--batch", "--format", "json"]);
    assert_eq!(code, Some(1), "7 of 3,600 but every recent one: {err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let g = &doc["guests"][0];
    assert_eq!(g["faulting"][0], "HOTPLUG", "{g}");
    assert!(g["troubles"].to_string().contains("faulting"), "{g}");
    let (_, text, _) = fleet(&["--prometheus", &fake.url, "--batch"]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("faulting") && l.contains("10.0.0.1:9866")),
        "{text}"
    );
}
