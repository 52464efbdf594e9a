//! A recording turned back into a workload (`plugtop tune --replay`) runs
//! as the guest it was recorded on did, under rules that read `loadavg`
//! and with a pulsed load too: the round trip of `scripts/roundtrip.sh`
//! on short runs, and a replay tune's "start" row against a direct
//! simulation of the same rules.

use crate::common;

use common::{plugtop, tempdir};

const LOADAVG: &str = "examples/rules/cpu-loadavg.conf";

fn stderr(o: &std::process::Output) -> String {
    crate::common::said(o)
}

/// The JSON on `o`'s stdout (a tune of one candidate recommends nothing
/// and exits non-zero, but prints its table).
fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)))
}

/// `scenario` under `rules` for `duration`, recorded into `rec`: its report.
fn record(scenario: &str, rules: &str, duration: &str, rec: &str) -> serde_json::Value {
    json(&plugtop(&[
        "sim",
        scenario,
        "-c",
        rules,
        "--duration",
        duration,
        "--fast",
        "--record",
        rec,
        "--report",
        "--report-format",
        "json",
    ]))
}

/// The "start" row of a tune of `rules` on the recording `rec`.
fn replayed_start(rec: &str, rules: &str, whole: bool) -> serde_json::Value {
    let mut args = vec!["tune", "--replay", rec, "-c", rules, "--budget", "1"];
    if whole {
        args.push("--whole");
    }
    args.extend(["--format", "json"]);
    json(&plugtop(&args))["start"].clone()
}

/// Unmet CPU-s and average CPUs of `b` within 10% of `a`'s (near zero:
/// within 1 CPU-s and 0.05 of a CPU, as `scripts/roundtrip.sh` compares).
fn within_ten_percent(what: &str, a: &serde_json::Value, b: &serde_json::Value) {
    for (key, floor) in [("unmet_cpu_seconds", 1.0), ("avg_online_cpus", 0.05)] {
        let (x, y) = (
            a[key].as_f64().unwrap_or(f64::NAN),
            b[key].as_f64().unwrap_or(f64::NAN),
        );
        assert!(
            (x - y).abs() <= (0.10 * x.abs()).max(floor),
            "{what}: {key} {x} directly, {y} replayed"
        );
    }
}

#[test]
fn pulsed_and_saturated_recordings_under_loadavg_rules_replay_as_they_ran() {
    // Pulses of 3 tasks on one CPU (saturated in every pulse, idle between),
    // and a web server short of CPUs for most of its ramp and peak.
    for (scenario, duration) in [("oscillating", "2m"), ("webserver", "10m")] {
        let dir = tempdir();
        let rec = dir.path().join("run.rec").display().to_string();
        let path = format!("examples/scenarios/{scenario}.toml");
        let original = record(&path, LOADAVG, duration, &rec);
        let replayed = replayed_start(&rec, LOADAVG, true);
        within_ten_percent(scenario, &original, &replayed);
    }
}

#[test]
fn a_replay_tune_s_start_row_is_a_direct_simulation_of_the_first_half() {
    // The case: the loadavg rules on daytrader, tuned on the
    // recording's first half (6:15 of 12:30).
    let dir = tempdir();
    let rec = dir.path().join("run.rec").display().to_string();
    let scenario = "examples/scenarios/daytrader.toml";
    record(scenario, LOADAVG, "12:30", &rec);
    let direct = json(&plugtop(&[
        "sim",
        scenario,
        "-c",
        LOADAVG,
        "--duration",
        "375s",
        "--report",
        "--report-format",
        "json",
    ]));
    let start = replayed_start(&rec, LOADAVG, false);
    within_ten_percent("daytrader, first half", &direct, &start);
}
