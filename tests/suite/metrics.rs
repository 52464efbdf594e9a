//! Metrics for Prometheus and node_exporter: the exposition of a fixed run
//! (a snapshot, and a parse with a Prometheus text parser whose values must
//! match what the run did), the textfile written atomically each interval,
//! and the HTTP endpoint's content negotiation.

use crate::common;

use std::io::{Read, Write};
use std::time::Duration;

use plugtop::control::controller::Mode;
use plugtop::control::flap::FlapConfig;
use plugtop::daemon::{Ending, MetricsOptions, RunOptions, Signals, run_with};
use plugtop::logging::Memory;
use plugtop::sim::run::{SimOptions, guest_for};
use plugtop::sim::{Scenario, SharedGuest, SimActuator, SimSource};

/// A source that keeps what the textfile held when its inner source
/// ended (the run removes it at its clean stop right after).
struct KeepingTextfile<S> {
    inner: S,
    textfile: std::path::PathBuf,
    last: Option<String>,
}

impl<S: plugtop::kernel::Source> plugtop::kernel::Source for KeepingTextfile<S> {
    fn facts(&mut self) -> plugtop::rules::SystemFacts {
        self.inner.facts()
    }
    fn narrow(&mut self, interest: &plugtop::kernel::Interest) {
        self.inner.narrow(interest);
    }
    fn next_sample(
        &mut self,
    ) -> Option<Result<plugtop::kernel::Sample, plugtop::kernel::SourceError>> {
        let next = self.inner.next_sample();
        if next.is_none() {
            self.last = std::fs::read_to_string(&self.textfile).ok();
        }
        next
    }
}

/// `plugtop run`'s loop over two simulated minutes of the oscillating
/// guest under its incident rules, writing the textfile; the log and the
/// textfile's last text.
fn oscillating_run(dir: &std::path::Path) -> (Vec<String>, String) {
    let (log, text) = oscillating_run_in(dir, Mode::Auto);
    (log.lines.into_iter().map(|(_, l)| l).collect(), text)
}

/// As [`oscillating_run`], in `mode`, with the log's structured entries.
fn oscillating_run_in(dir: &std::path::Path, mode: Mode) -> (Memory, String) {
    run_rules_in(dir, mode, "examples/rules/oscillating-tight.conf")
}

/// As [`oscillating_run_in`], under the rule file `rules`.
pub(crate) fn run_rules_in(dir: &std::path::Path, mode: Mode, rules: &str) -> (Memory, String) {
    let scenario = Scenario::load(std::path::Path::new("examples/scenarios/oscillating.toml"))
        .expect("the shipped scenario loads");
    let options = SimOptions {
        duration: Some(120.0),
        ..SimOptions::default()
    };
    let guest = SharedGuest::new(guest_for(&scenario, &options));
    let mut inner = SimSource::new(guest.clone(), 1.0);
    inner.stop_at_end = true;
    let mut actuator = SimActuator::new(guest.clone());
    // The root holds the guest as `sim --serve` publishes it (plugtop acts
    // only on a start state `restore` could put back from it).
    let beneath = plugtop::kernel::fs::Root::open(dir).expect("root");
    plugtop::sim::published_root::publish_all(&guest.borrow(), &beneath).expect("published");
    // The identity comes from the root: a z/VM guest's cpuinfo and sysinfo.
    std::fs::create_dir_all(dir.join("proc/sys/kernel")).expect("root");
    std::fs::write(
        dir.join("proc/cpuinfo"),
        plugtop::sim::published_root::zvm_cpuinfo(4),
    )
    .expect("cpuinfo");
    std::fs::write(
        dir.join("proc/sysinfo"),
        plugtop::sim::published_root::zvm_sysinfo("LINUX07", 4),
    )
    .expect("sysinfo");
    std::fs::write(dir.join("proc/sys/kernel/hostname"), "guest7\n").expect("hostname");
    let textfile = dir.join("plugtop.prom");
    let mut source = KeepingTextfile {
        inner,
        textfile: textfile.clone(),
        last: None,
    };
    let run = RunOptions {
        rules: rules.into(),
        root: dir.to_path_buf(),
        mode,
        state: dir.join("run/plugtop/state"),
        force: false,
        verbose: false,
        table: plugtop::report::Layout::Wide,
        interval: Some(Duration::ZERO),
        allow_non_zvm: false,
        pid_file: false,
        flap: FlapConfig::default(),
        check_lpar: false,
        on_started: None,
        metrics: MetricsOptions {
            listen: None,
            textfile: Some(textfile.clone()),
        },
    };
    let mut log = Memory::default();
    let ended = run_with(
        &run,
        &mut source,
        &mut actuator,
        &mut log,
        &Signals::default(),
    );
    assert!(matches!(ended, Ok(Ending::Stopped)), "{ended:?}");
    assert!(!textfile.exists(), "a clean stop removes the textfile");
    let text = source.last.expect("the textfile was written");
    (log, text)
}

/// The value of the sample `name` with all of `labels`.
fn value_of(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    let sample = scrape
        .samples
        .iter()
        .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .unwrap_or_else(|| panic!("no {name} {labels:?}"));
    match sample.value {
        prometheus_parse::Value::Counter(v)
        | prometheus_parse::Value::Gauge(v)
        | prometheus_parse::Value::Untyped(v) => v,
        _ => panic!("{name} is not a plain number"),
    }
}

#[test]
fn observe_mode_counts_what_the_rules_decided_and_applies_nothing() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (log, text) = oscillating_run_in(dir.path(), Mode::Observe);
    let scrape = parse(&text);
    let would = log
        .lines
        .iter()
        .filter(|(_, l)| l.starts_with("would plug"))
        .count() as f64;
    assert!(would > 3.0, "{:?}", log.lines);
    let decided = value_of(
        &scrape,
        "plugtop_decided_actions_total",
        &[("action", "plug")],
    );
    assert!(
        decided >= would,
        "{decided} decided, {would} logged: {text}"
    );
    for action in ["plug", "unplug", "pool_up", "pool_down"] {
        assert_eq!(
            value_of(
                &scrape,
                "plugtop_applied_actions_total",
                &[("action", action)]
            ),
            0.0
        );
    }
    assert!(
        !text.contains("plugtop_last_action_timestamp_seconds"),
        "{text}"
    );
    assert_eq!(
        value(&scrape, "plugtop_mode", Some(("mode", "observe"))),
        1.0
    );
}

fn parse(text: &str) -> prometheus_parse::Scrape {
    prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("the Prometheus text parser reads it")
}

/// The sample `name` with `label`, if given (see [`value_of`]).
fn value(scrape: &prometheus_parse::Scrape, name: &str, label: Option<(&str, &str)>) -> f64 {
    value_of(scrape, name, label.as_slice())
}

#[test]
fn the_textfile_of_a_run_parses_and_matches_what_the_run_did() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (log, text) = oscillating_run(dir.path());
    let scrape = parse(&text);
    let plugged = log.iter().filter(|l| l.starts_with("plugged cpu")).count() as f64;
    let unplugged = log
        .iter()
        .filter(|l| l.starts_with("unplugged cpu"))
        .count() as f64;
    assert!(plugged > 3.0, "the guest oscillates: {log:?}");
    assert_eq!(
        value(
            &scrape,
            "plugtop_applied_actions_total",
            Some(("action", "plug"))
        ),
        plugged
    );
    assert_eq!(
        value(
            &scrape,
            "plugtop_applied_actions_total",
            Some(("action", "unplug"))
        ),
        unplugged
    );
    assert_eq!(
        value(
            &scrape,
            "plugtop_decided_actions_total",
            Some(("action", "plug"))
        ),
        plugged
    );
    assert_eq!(value(&scrape, "plugtop_flapping", None), 1.0, "it flaps");
    assert!(value(&scrape, "plugtop_reversals_total", None) >= 4.0);
    assert_eq!(value(&scrape, "plugtop_cpus_present", None), 4.0);
    assert_eq!(value(&scrape, "plugtop_mode", Some(("mode", "auto"))), 1.0);
    assert_eq!(value(&scrape, "plugtop_cpu_max", None), 4.0);
    assert_eq!(value(&scrape, "plugtop_cpu_min", None), 1.0);
    // The memory group is off: no CMM limits at all, not −1.
    assert!(
        !text.contains("plugtop_cmm_max_pages") && !text.contains("plugtop_cmm_min_pages"),
        "{text}"
    );
    // Failures counted from 0, by every known action and reason.
    for (action, reason) in [
        ("plug", "write"),
        ("plug", "no_cpu"),
        ("pool_down", "write"),
    ] {
        assert_eq!(
            value_of(
                &scrape,
                "plugtop_failed_actions_total",
                &[("action", action), ("reason", reason)]
            ),
            0.0
        );
    }
    assert_eq!(
        value(&scrape, "plugtop_rules_last_reload_successful", None),
        1.0
    );
    assert_eq!(
        value_of(
            &scrape,
            "plugtop_skipped_intervals_total",
            &[("group", "memory"), ("reason", "group_off")]
        ),
        value(&scrape, "plugtop_readings_total", None),
        "the memory group is off at every reading"
    );
    let guest = scrape
        .samples
        .iter()
        .find(|s| s.metric == "plugtop_guest_info")
        .expect("guest_info");
    assert_eq!(guest.labels.get("zvm_name"), Some("LINUX07"));
    assert_eq!(guest.labels.get("host"), Some("guest7"));
    assert_eq!(guest.labels.get("zvm_guest"), Some("true"));
    // Counters carry their _total name in HELP and TYPE (the text format).
    assert!(
        text.contains("# TYPE plugtop_applied_actions_total counter"),
        "{text}"
    );
    assert!(
        !text.contains("# EOF") && !text.contains("# UNIT"),
        "{text}"
    );
    // The temp file never stays beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        !names.iter().any(|n| n.to_string_lossy().contains(".tmp.")),
        "{names:?}"
    );
    // Time stamps and the version vary; the rest is fixed for this run.
    let fixed: String = text
        .lines()
        .map(|l| {
            if l.starts_with("plugtop_last_interval_timestamp_seconds ")
                || l.starts_with("plugtop_rules_loaded_timestamp_seconds ")
                || l.starts_with("plugtop_interval_duration_seconds ")
            {
                format!("{} [time]", l.split(' ').next().unwrap_or_default())
            } else if l.starts_with("plugtop_build_info{") {
                "plugtop_build_info{version=\"[version]\"} 1".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_snapshot_of!("metrics", "oscillating_textfile", fixed);
}

/// A GET of `path` on `addr` with `accept`; the response head and body.
fn get(addr: std::net::SocketAddr, path: &str, accept: Option<&str>) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(common::hang_guard()))
        .expect("timeout");
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{accept}Connection: close\r\n\r\n"
    )
    .expect("send");
    let mut response = String::new();
    s.read_to_string(&mut response).expect("read");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.to_string(), body.to_string())
}

#[test]
fn the_endpoint_speaks_openmetrics_to_prometheus_and_text_to_everyone_else() {
    let id = plugtop::kernel::machine::identity(std::path::Path::new("/nonexistent"));
    let metrics = plugtop::metrics::Metrics::new(&id);
    metrics.set_mode(Mode::Observe);
    let server =
        plugtop::metrics::endpoint::MetricsServer::start("127.0.0.1:0", metrics.exposition())
            .expect("listens on a free loopback port");
    let (head, body) = get(
        server.addr,
        "/metrics",
        Some("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"),
    );
    assert!(head.contains("200 OK"), "{head}");
    assert!(
        head.contains("Content-Type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");
    let (head, body) = get(server.addr, "/metrics", None);
    assert!(
        head.contains("Content-Type: text/plain; version=0.0.4"),
        "{head}"
    );
    let scrape = parse(&body);
    assert_eq!(
        value(&scrape, "plugtop_mode", Some(("mode", "observe"))),
        1.0
    );
    let guest = scrape
        .samples
        .iter()
        .find(|s| s.metric == "plugtop_guest_info")
        .expect("guest_info");
    assert_eq!(guest.labels.get("zvm_guest"), Some("false"));
    let (head, _) = get(server.addr, "/elsewhere", None);
    assert!(head.contains("404"), "{head}");
    // A second endpoint on the same port is refused with the address.
    let taken = plugtop::metrics::endpoint::MetricsServer::start(
        &server.addr.to_string(),
        metrics.exposition(),
    );
    let error = taken.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains(&server.addr.to_string()), "{error}");
}

#[test]
fn actions_are_journal_notices_with_the_fields_a_site_filters_on() {
    use plugtop::logging::Priority;
    let dir = tempfile::tempdir().expect("temporary directory");
    let (log, _) = oscillating_run_in(dir.path(), Mode::Auto);
    let field = |e: &plugtop::logging::Entry, k: &str| {
        e.fields
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.clone())
    };
    let plugs: Vec<_> = log
        .entries
        .iter()
        .filter(|e| e.message.starts_with("plugged cpu"))
        .collect();
    assert!(!plugs.is_empty());
    for e in &plugs {
        assert_eq!(e.priority, Priority::Notice, "{e:?}");
        assert_eq!(field(e, "PLUGTOP_ACTION").as_deref(), Some("plug_cpu"));
        assert_eq!(field(e, "PLUGTOP_RULE").as_deref(), Some("HOTPLUG"));
        assert_eq!(field(e, "PLUGTOP_MODE").as_deref(), Some("auto"));
        assert_eq!(field(e, "PLUGTOP_APPLIED").as_deref(), Some("1"));
        assert!(field(e, "PLUGTOP_CPU").is_some(), "{e:?}");
        assert!(field(e, "PLUGTOP_READING").is_some(), "{e:?}");
        let values = field(e, "PLUGTOP_VALUES").unwrap_or_default();
        assert!(
            values.contains("onumcpus=") && values.contains("CP_Active="),
            "{values}"
        );
    }
    let flapping = log
        .entries
        .iter()
        .find(|e| e.message.contains("flapping"))
        .expect("the flapping finding is logged");
    assert_eq!(flapping.priority, Priority::Warning);
    // Journal field names are capitals, digits and underscores only.
    for e in &log.entries {
        for (name, _) in &e.fields {
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
                "{name}"
            );
        }
    }
    // In observe mode the same decisions are information, not actions.
    let dir = tempfile::tempdir().expect("temporary directory");
    let (log, _) = oscillating_run_in(dir.path(), Mode::Observe);
    let would = log
        .entries
        .iter()
        .find(|e| e.message.starts_with("would plug"))
        .unwrap_or_else(|| panic!("{:?}", log.lines));
    assert_eq!(would.priority, Priority::Info);
    assert_eq!(field(would, "PLUGTOP_APPLIED").as_deref(), Some("0"));
    // The CPU cpuplugd would take, named in the text and as a field.
    let cpu = field(would, "PLUGTOP_CPU").unwrap_or_else(|| panic!("{would:?}"));
    assert!(
        would.message.starts_with(&format!("would plug cpu{cpu} (")),
        "{would:?}"
    );
    assert_eq!(field(would, "PLUGTOP_MODE").as_deref(), Some("observe"));
}

#[test]
fn a_hostile_identity_cannot_break_or_bloat_the_exposition() {
    let id = plugtop::kernel::machine::Identity {
        host: "h\"o\\st\nname\u{1b}]0;t\u{7}\u{9b}2J\u{202e}".into(),
        zvm_guest: true,
        guest_name: Some("x".repeat(100_000)),
        ..Default::default()
    };
    let metrics = plugtop::metrics::Metrics::new(&id);
    let text = metrics.prometheus_text();
    assert!(text.len() < 8_000, "{} bytes", text.len());
    let scrape = parse(&text);
    let guest = scrape
        .samples
        .iter()
        .find(|s| s.metric == "plugtop_guest_info")
        .expect("guest_info parses");
    assert_eq!(guest.labels.get("zvm_name").map(str::len), Some(128));
    let om = metrics.openmetrics();
    // Quotes and backslashes escaped as the format says; control characters
    // (which `curl .../metrics` would print to a terminal) as the terminal
    // sanitizer writes them, so no raw one is left.
    assert!(
        om.contains(r#"host="h\"o\\st\\x0aname\\x1b]0;t\\x07\\x9b2J\\u202e""#),
        "{om}"
    );
    for out in [&text, &om] {
        assert!(
            !out.chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{out}"
        );
    }
}

#[test]
fn a_taken_metrics_address_refuses_the_start_with_nothing_left_behind() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let root = common::FakeRoot::guest(2);
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let o = common::plugtop(&[
        "run",
        "-f",
        "-c",
        &rules.display().to_string(),
        "--root",
        &root.path().display().to_string(),
        "--metrics-listen",
        &addr,
    ]);
    let err = crate::common::said(&o);
    assert_eq!(o.status.code(), Some(1), "a start-up refusal: {err}");
    assert!(
        err.contains(&format!(
            "cannot listen on {addr} for metrics: address already in use"
        )),
        "{err}"
    );
    // nu54 F5: the system's words, not Rust's "(os error 98)".
    assert!(!err.contains("os error"), "{err}");
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "no journal is left"
    );
}
