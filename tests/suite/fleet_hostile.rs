//! The fleet's Prometheus client against a hostile or broken server: every
//! surprise is an error or a warning in bounded time and memory, never a
//! panic, a hang or terminal escapes on the screen.

use std::time::Duration;

use crate::fleet_fake::{self, Reply};
use plugtop::fleet::fetch::{self, Scope};
use plugtop::fleet::query::{MAX_SERIES, PromClient, Prometheus, QueryError};

fn client(url: &str, timeout_ms: u64) -> PromClient {
    PromClient::new(url, Duration::from_millis(timeout_ms)).expect("a client")
}

fn vector_of(n: usize, value: &str, label: &str) -> String {
    let one =
        format!(r#"{{"metric":{{"job":"plugtop","instance":"{label}"}},"value":[1,"{value}"]}}"#);
    let items = vec![one; n].join(",");
    format!(r#"{{"status":"success","data":{{"resultType":"vector","result":[{items}]}}}}"#)
}

#[test]
fn an_answer_that_is_not_json_is_an_error() {
    let fake = fleet_fake::start(|_, _| Reply::Json("<html>proxy says hello</html>".into()));
    let e = client(&fake.url, 5000).instant("up", 1.0);
    assert!(matches!(e, Err(QueryError::NotJson(_))), "{e:?}");
}

#[test]
fn an_error_status_in_plain_text_is_an_error_with_its_code() {
    let fake = fleet_fake::start(|_, _| Reply::Status(502, "bad gateway".into()));
    let e = client(&fake.url, 5000).instant("up", 1.0);
    assert!(
        matches!(e, Err(QueryError::Status { status: 502, .. })),
        "{e:?}"
    );
}

#[test]
fn the_apis_own_error_is_a_refusal_with_its_reason() {
    let fake = fleet_fake::start(|_, _| {
        Reply::Status(
            400,
            r#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#.into(),
        )
    });
    let e = client(&fake.url, 5000).instant("up{", 1.0);
    assert!(
        matches!(&e, Err(QueryError::Refused(t, why)) if t == "bad_data" && why.contains("parse error")),
        "{e:?}"
    );
}

#[test]
fn warnings_of_a_partial_answer_reach_the_health() {
    let fake = fleet_fake::start(|_, _| {
        Reply::Json(
            r#"{"status":"success","warnings":["remote read: store 2 down"],"data":{"resultType":"vector","result":[]}}"#
                .into(),
        )
    });
    let fleet = fetch::fleet(&client(&fake.url, 5000), &Scope::new("", 3600.0, 60.0), 1e9);
    assert_eq!(fleet.health.warnings, ["remote read: store 2 down"]);
    assert!(
        fleet.health.failed.iter().any(|f| f.contains("history")),
        "{:?}",
        fleet.health
    );
}

#[test]
fn nan_inf_and_huge_values_are_no_values_or_stay_finite() {
    for (value, expect) in [
        ("NaN", None),
        ("+Inf", None),
        ("-Inf", None),
        ("1e308", Some(1e308)),
        ("banana", None),
    ] {
        let body = vector_of(1, value, "g");
        let fake = fleet_fake::start(move |_, _| Reply::Json(body.clone()));
        let a = client(&fake.url, 5000).instant("x", 1.0).expect("decoded");
        assert_eq!(a.data[0].value, expect, "{value}");
    }
}

#[test]
fn terminal_escapes_in_labels_never_reach_the_output() {
    let body = vector_of(1, "1", "\\u001b]0;pwned\\u0007\\u001b[2J");
    let fake = fleet_fake::start(move |_, _| Reply::Json(body.clone()));
    let fleet = fetch::fleet(&client(&fake.url, 5000), &Scope::new("", 3600.0, 60.0), 1e9);
    use plugtop::fleet::batch::{Format, write};
    let written = |format: Format| {
        let mut out = Vec::new();
        let layout = plugtop::report::Layout::Wide;
        write(&fleet, (format, layout), 60.0, &mut out).expect("written");
        String::from_utf8(out).expect("utf-8")
    };
    let text = written(Format::Text);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    let text = written(Format::Json);
    assert!(!text.contains('\u{1b}'), "{text:?}");
}

#[test]
fn a_label_value_of_a_megabyte_is_cut() {
    let long = "x".repeat(1 << 20);
    let body = vector_of(1, "1", &long);
    let fake = fleet_fake::start(move |_, _| Reply::Json(body.clone()));
    let a = client(&fake.url, 5000).instant("x", 1.0).expect("decoded");
    assert!(a.data[0].labels["instance"].chars().count() <= 256);
}

#[test]
fn a_hundred_thousand_series_are_cut_with_a_warning() {
    let body = vector_of(100_000, "1", "g");
    let fake = fleet_fake::start(move |_, _| Reply::Json(body.clone()));
    let a = client(&fake.url, 20_000)
        .instant("x", 1.0)
        .expect("decoded");
    assert_eq!(a.data.len(), MAX_SERIES);
    assert!(
        a.warnings.iter().any(|w| w.contains("100000 series")),
        "{:?}",
        a.warnings
    );
}

#[test]
fn a_body_larger_than_the_bound_is_refused_unread() {
    let fake = fleet_fake::start(|_, _| Reply::Huge(65 * 1024 * 1024));
    let e = client(&fake.url, 30_000).instant("x", 1.0);
    assert!(matches!(e, Err(QueryError::TooLarge)), "{e:?}");
}

#[test]
fn a_server_that_never_answers_costs_the_timeout() {
    let fake = fleet_fake::start(|_, _| Reply::Silent);
    let e = client(&fake.url, 300).instant("x", 1.0);
    assert!(matches!(e, Err(QueryError::Timeout(_))), "{e:?}");
}

#[test]
fn a_black_holed_prometheus_costs_one_timeout_per_refresh_not_one_per_query() {
    let fake = fleet_fake::start(|_, _| Reply::Silent);
    let fleet = fetch::fleet(&client(&fake.url, 300), &Scope::new("", 3600.0, 60.0), 1e9);
    assert!(fleet.health.down(), "{:?}", fleet.health);
    assert_eq!(fake.requests.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn a_server_that_trickles_bytes_costs_the_timeout() {
    let fake = fleet_fake::start(|_, _| Reply::Trickle);
    let e = client(&fake.url, 500).instant("x", 1.0);
    assert!(matches!(e, Err(QueryError::Timeout(_))), "{e:?}");
}

#[test]
fn a_closed_port_is_a_transport_error_and_the_fleet_says_down() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let c = client(&format!("http://127.0.0.1:{port}"), 2000);
    let fleet = fetch::fleet(&c, &Scope::new("", 3600.0, 60.0), 1e9);
    assert!(fleet.health.down(), "{:?}", fleet.health);
}

#[test]
fn garbage_after_a_status_line_is_an_error() {
    let fake = fleet_fake::start(|_, _| {
        Reply::Raw(b"HTTP/1.1 200 OK\r\nContent-Length: zz\r\n\r\n{}".to_vec())
    });
    assert!(client(&fake.url, 2000).instant("x", 1.0).is_err());
}

#[test]
fn only_http_urls_are_taken_and_https_is_refused_clearly() {
    let e = PromClient::new("https://prom:9090", Duration::from_secs(1)).err();
    assert!(
        e.as_ref()
            .is_some_and(|e| e.to_string().contains("only http://")),
        "{e:?}"
    );
    assert!(PromClient::new("ftp://x", Duration::from_secs(1)).is_err());
    assert!(PromClient::new("http://", Duration::from_secs(1)).is_err());
}

#[test]
fn a_refresh_asks_a_fixed_number_of_queries_whatever_the_fleet() {
    for n in [1usize, 50] {
        let body = vector_of(n, "1", "g");
        let fake = fleet_fake::start(move |path, _| {
            if path.ends_with("query_range") {
                Reply::Json(
                    r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#.into(),
                )
            } else {
                Reply::Json(body.clone())
            }
        });
        let f = fetch::fleet(&client(&fake.url, 5000), &Scope::new("", 3600.0, 60.0), 1e9);
        assert_eq!(
            f.health.queries,
            Scope::new("", 3600.0, 60.0).instant_queries().len() + 1
        );
        assert_eq!(
            fake.requests.load(std::sync::atomic::Ordering::SeqCst),
            f.health.queries
        );
    }
}

/// The most memory `plugtop fleet --batch` used (VmHWM, in KiB) against
/// `fake`, read while it runs.
fn peak_kib(url: &str) -> u64 {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["fleet", "--prometheus", url, "--batch", "--timeout", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("plugtop runs");
    let mut peak = 0;
    // Sampled while it runs (VmHWM is gone once it exits); its own
    // --timeout ends it.
    while child.try_wait().expect("waits").is_none() {
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
        if let Some(kib) = status.ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak = peak.max(kib);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    peak
}

#[test]
fn an_answer_of_tiny_points_under_the_body_bound_stays_small_in_memory() {
    // 60 MiB of `[1,"1"]`: under the 64 MiB bound, millions of points.
    let points = vec![r#"[1,"1"]"#; 10_000].join(",");
    let one = format!(r#"{{"metric":{{"job":"j","instance":"a"}},"values":[{points}]}}"#);
    let n = (60 << 20) / one.len();
    let matrix = format!(
        r#"{{"status":"success","warnings":[{}],"data":{{"resultType":"matrix","result":[{}]}}}}"#,
        vec![r#""w""#; 1000].join(","),
        vec![one; n].join(",")
    );
    // And a vector of as many tiny labels as 60 MiB hold.
    let labels: String = (0..(6 << 20) / 10)
        .map(|i| format!(r#""l{i}":"","#))
        .collect();
    let vector = format!(
        r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{{labels}"instance":"a"}},"value":[1,"1"]}}]}}}}"#
    );
    let matrix = std::sync::Arc::new(matrix);
    let vector = std::sync::Arc::new(vector);
    let fake = fleet_fake::start(move |path, _| {
        if path.ends_with("query_range") {
            Reply::Json(matrix.as_ref().clone())
        } else {
            Reply::Json(vector.as_ref().clone())
        }
    });
    let kib = peak_kib(&fake.url);
    assert!(kib < 400 * 1024, "{} MiB for answers of 60 MiB", kib / 1024);
}
