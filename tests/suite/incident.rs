//! The incident tools on the oscillating guest: the flap detector, why the
//! decision flips, the feedback-loop check and `plugtop whatif` — and no
//! false alarms on the steady scenarios.

use crate::common;

use std::path::Path;

use common::{plugtop, tempdir};
use plugtop::sim::run::SimOptions;

fn sim(name: &str, rules: &str, duration: Option<f64>) -> plugtop::sim::run::SimOutcome {
    let options = SimOptions {
        duration,
        keep_timeline: true,
        ..SimOptions::default()
    };
    common::simulate(name, rules, &options)
}

/// Seconds into the run of a log line ("0:43 ...").
fn at(line: &str) -> f64 {
    let clock = line.split(' ').next().unwrap_or_default();
    plugtop::sim::scenario::seconds(clock).unwrap_or(f64::MAX)
}

#[test]
fn the_oscillating_guest_is_caught_and_explained() {
    let o = sim("oscillating", "oscillating-tight", None);
    assert!(o.report.flapping, "{:?}", o.report);
    // The pulses start at 0:30; flapping must be reported within 30 intervals.
    let flagged = o
        .log
        .iter()
        .find(|l| l.contains("CPU count flapping"))
        .unwrap_or_else(|| panic!("{:#?}", o.log));
    assert!(at(flagged) <= 60.0, "{flagged}");
    assert!(flagged.contains("every 6.0 intervals"), "{flagged}");
    // It names the rule and the comparison that flipped, with the values.
    let why = o
        .log
        .iter()
        .find(|l| l.contains("HOTPLUG false → true: ((1 - CP_Active) * onumcpus) went"))
        .unwrap_or_else(|| panic!("{:#?}", o.log));
    assert!(why.contains("across 0.3"), "{why}");
    // And the rules feed themselves: a plug makes enough idle to unplug.
    assert_eq!(o.report.feedback_loops.len(), 1, "{:?}", o.report);
    assert!(o.report.feedback_loops[0].contains("after \"plug a CPU\", HOTUNPLUG would fire"));
}

#[test]
fn the_damped_rules_settle() {
    let o = sim("oscillating", "oscillating-damped", None);
    assert!(!o.report.flapping);
    assert!(o.report.feedback_loops.is_empty());
    assert!(o.report.reversals <= 2, "{:?}", o.report);
}

#[test]
fn no_false_alarms_on_steady_guests_over_an_hour() {
    for name in [
        "daytrader",
        "webserver",
        "appserver",
        "database",
        "combo",
        "kernel-compile",
    ] {
        for rules in ["recommended-modern", "cpu-real-load"] {
            let r = sim(name, rules, Some(3600.0)).report;
            assert!(!r.flapping, "{name} with {rules}: {r:?}");
            assert!(r.feedback_loops.is_empty(), "{name} with {rules}: {r:?}");
        }
    }
}

fn record_oscillating(dir: &Path) -> String {
    let rec = dir.join("oscillating.rec").to_string_lossy().into_owned();
    let o = plugtop(&[
        "sim",
        "examples/scenarios/oscillating.toml",
        "-c",
        "examples/rules/oscillating-tight.conf",
        "--fast",
        "--report",
        "--duration",
        "1:30",
        "--record",
        &rec,
    ]);
    assert!(o.status.success(), "{}", crate::common::said(&o));
    rec
}

/// `plugtop whatif` over a fresh recording of the oscillating incident,
/// with `rules` (`-c …` and maybe `--against …`); its output.
fn whatif_oscillating(rules: &[&str]) -> String {
    let dir = tempdir();
    let rec = record_oscillating(dir.path());
    let mut args = vec!["whatif", "--replay", &rec];
    args.extend_from_slice(rules);
    let o = plugtop(&args);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}");
    text
}

#[test]
fn whatif_on_the_recording_shows_the_damped_rules_reverse_less() {
    let text = whatif_oscillating(&[
        "-c",
        "examples/rules/oscillating-damped.conf",
        "--against",
        "examples/rules/oscillating-tight.conf",
    ]);
    assert_snapshot_of!("incident", "whatif_oscillating_damped_vs_tight", text);
    let reversals = text
        .lines()
        .find(|l| l.trim_start().starts_with("reversals"))
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .filter_map(|v| v.parse::<usize>().ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    assert_eq!(reversals.len(), 2, "{text}");
    assert!(reversals[0] < reversals[1], "{text}");
}

#[test]
fn whatif_with_the_rules_that_ran_matches_the_recording() {
    let text = whatif_oscillating(&["-c", "examples/rules/oscillating-tight.conf"]);
    assert!(
        text.contains("they decide the same in every interval"),
        "{text}"
    );
    assert!(text.contains("open loop"), "{text}");
    // The recorded guest flaps too, found from its own CPU counts.
    let flapping = text
        .lines()
        .find(|l| l.trim_start().starts_with("flapping"))
        .unwrap_or_default();
    assert_eq!(flapping.matches("every 6.0").count(), 2, "{text}");
    // Within 30 intervals of the pulses starting (reading 30).
    let from: usize = flapping
        .split("from #")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX);
    assert!(from <= 60, "{flapping}");
    // The rule and the comparison that flips, and the loop.
    assert!(
        text.contains("HOTPLUG false → true: ((1 - CP_Active) * onumcpus) went"),
        "{text}"
    );
    assert!(
        text.contains("feedback loop: after \"plug a CPU\", HOTUNPLUG would fire"),
        "{text}"
    );
}

#[test]
fn whatif_needs_a_history() {
    let o = plugtop(&["whatif", "-c", "examples/rules/oscillating-tight.conf"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(crate::common::said(&o).contains("--replay FILE"));
}

/// Issue 45: against the recording, "they decide the same in every
/// interval" stood beside counts that differ: the intervals where the
/// guest acted while the file's history was still filling, and the file's
/// last decision, which nothing recorded answers, were counted on one side
/// only, unsaid.
#[test]
fn whatif_says_where_the_counts_differ_though_the_decisions_agree() {
    let dir = tempdir();
    let rec = record_oscillating(dir.path());
    // The incident's rules, with a term that always holds but needs 40
    // intervals of history: nothing is decided until the pulses have
    // started and the guest has acted.
    let tight = std::fs::read_to_string("examples/rules/oscillating-tight.conf").expect("rules");
    let deep = tight.replace(
        r#"HOTPLUG="((1 - CP_Active) * onumcpus) < 0.3""#,
        r#"HOTPLUG="(((1 - CP_Active) * onumcpus) < 0.3) & (cpustat.total_ticks[40] > -1)""#,
    );
    assert_ne!(deep, tight);
    let deep_path = dir.path().join("deep.conf");
    std::fs::write(&deep_path, deep).expect("write");
    // Whole lines (--wide): the sentences are looked for as written.
    let o = plugtop(&[
        "whatif",
        "--replay",
        &rec,
        "-c",
        &deep_path.to_string_lossy(),
        "--wide",
    ]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}");
    assert!(
        !text.contains("they decide the same in every interval\n"),
        "{text}"
    );
    assert!(
        text.contains("they decide the same in every interval both decided; in ")
            && text.contains(" intervals the guest acted while the file decided nothing"),
        "{text}"
    );
    assert!(
        text.contains("the file's decision on the last reading has no recorded answer"),
        "{text}"
    );
}

/// nu54 F1: a file that makes cpuplugd exit (a /proc/vmstat name only old
/// kernels have, over a new kernel's recording) is said to, in the words
/// `plugtop sim --compare` uses; nothing is counted after it, and the
/// what-if fails as the comparison does (it counted 10 unplugs, rc 0).
#[test]
fn whatif_says_where_a_file_stops_cpuplugd_and_counts_nothing_after() {
    let dir = tempdir();
    let rec = dir.path().join("web.rec");
    common::record_simulated("webserver", "recommended-modern", 60.0, 1.0, &rec);
    let o = plugtop(&[
        "whatif",
        "--replay",
        &rec.to_string_lossy(),
        "-c",
        "examples/rules/memory-config-4.conf",
        "--wide",
    ]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "memory-config-4.conf would stop cpuplugd at #3 (as cpuplugd would exit): \
             Symbol pgscan_direct_dma not found"
        ),
        "{text}"
    );
    assert!(
        text.contains("which this guest's kernel lacks; it decides nothing after that"),
        "{text}"
    );
    // The file's column counts at most the interval it stopped in.
    let count = |label: &str| -> usize {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.split_whitespace().nth(label.split(' ').count()))
            .and_then(|n| n.parse().ok())
            .unwrap_or(usize::MAX)
    };
    for label in [
        "plug a CPU",
        "unplug a CPU",
        "grow the pool",
        "shrink the pool",
    ] {
        assert!(count(label) <= 1, "{label}: {text}");
    }
    // No interval after the stop is taken for the file deciding nothing.
    assert!(!text.contains("the file decided nothing"), "{text}");
}
