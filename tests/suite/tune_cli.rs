//! `plugtop tune` end to end: the knobs it finds, a recommendation that
//! stops the oscillating guest's flapping, `--knob` pinning and narrowing
//! (and refusing what a knob cannot take), `--write` (a file cpuplugd
//! loads, with only numbers changed; its target checked before the
//! search), JSON, determinism whatever the thread count.

use crate::common;

use common::{plugtop, tempdir};

const SCENARIO: &str = "examples/scenarios/oscillating.toml";
const RULES: &str = "examples/rules/oscillating-tight.conf";

fn tune(extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "tune",
        SCENARIO,
        "-c",
        RULES,
        "--duration",
        "3m",
        "--budget",
        "60",
        // The portfolio has a test of its own: judging on it costs a
        // debug build seconds a candidate.
        "--only-workload",
        // The numbers of the file alone; the forms have tests of their own.
        "--only-thresholds",
    ];
    args.extend_from_slice(extra);
    plugtop(&args)
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    crate::common::said(o)
}

/// `plugtop ARGS --format json`, its report parsed.
fn json_report(args: &[&str]) -> serde_json::Value {
    let o = plugtop(&[args, &["--format", "json"]].concat());
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)))
}

#[test]
fn tuning_the_oscillating_rules_recommends_a_file_that_does_not_flap() {
    let dir = tempdir();
    let out = dir.path().join("tuned.conf");
    let o = tune(&["--write", &out.display().to_string()]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}{}", stderr(&o));
    assert!(
        text.lines()
            .any(|l| l.contains("12:41") && l.contains("HOTPLUG") && l.contains("0.3  threshold")),
        "knobs with line:col: {text}"
    );
    assert!(text.contains("FLAPS"), "the start flaps: {text}");
    let rec = text
        .lines()
        .find(|l| l.contains("★ recommended"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        rec.trim_end().ends_with("no"),
        "the recommendation does not flap: {rec}"
    );
    assert!(
        text.contains("on what it was never tuned or checked on"),
        "{text}"
    );
    assert!(
        text.contains("Changed: "),
        "the summary names the changes: {text}"
    );
    // --write: a new file cpuplugd loads, the same lines but for numbers.
    let written = std::fs::read_to_string(&out).expect("written");
    // A comment on top names the tune; then the same lines but numbers.
    let (comment, tuned) = written.split_once('\n').unwrap_or(("", ""));
    assert!(
        comment.starts_with("# Written by plugtop tune on "),
        "{comment}"
    );
    let original = std::fs::read_to_string(RULES).expect("rules");
    assert_eq!(tuned.lines().count(), original.lines().count());
    for (a, b) in original.lines().zip(tuned.lines()) {
        let strip = |s: &str| {
            s.chars()
                .filter(|c| !c.is_ascii_digit() && *c != '.' && *c != '-')
                .collect::<String>()
        };
        assert_eq!(strip(a), strip(b), "only numbers change: {a:?} -> {b:?}");
    }
    let check = plugtop(&[
        "check",
        &out.display().to_string(),
        "--root",
        "tests/fixtures/roots/newkernel",
    ]);
    assert!(check.status.success(), "{}", stdout(&check));
    // Never over an existing file.
    let again = tune(&["--write", &out.display().to_string()]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("never overwritten"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn the_same_seed_gives_the_same_tune_and_pinned_knobs_stay() {
    let a = tune(&["--seed", "7", "--knob", "UPDATE=1", "--knob", "CPU_MAX=4"]);
    let b = tune(&["--seed", "7", "--knob", "UPDATE=1", "--knob", "CPU_MAX=4"]);
    assert_eq!(stdout(&a), stdout(&b), "deterministic for a seed");
    let text = stdout(&a);
    assert!(!text.contains("+UPDATE"), "UPDATE is pinned: {text}");
    assert!(!text.contains("+CPU_MAX"), "CPU_MAX is pinned: {text}");
    let o = tune(&["--knob", "NOPE=1..2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the knobs are"), "{}", stderr(&o));
}

#[test]
fn json_lists_the_knobs_the_front_and_the_recommendation() {
    let o = tune(&["--format", "json"]);
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    // The budget, and the recommendation in fewer digits when that keeps
    // its score.
    assert!(matches!(v["candidates"].as_u64(), Some(60 | 61)), "{v}");
    // UPDATE and the two thresholds; CPU_MIN and CPU_MAX="0" (every CPU)
    // are the site's limits, left alone unless asked for.
    assert!(v["knobs"].as_array().is_some_and(|k| k.len() >= 3), "{v}");
    assert!(
        !v["knobs"].to_string().contains("CPU_MAX"),
        "an unlimited CPU_MAX is not tuned: {v}"
    );
    assert!(v["front"].as_array().is_some_and(|f| !f.is_empty()));
    assert!(v["recommended"]["score"]["flapping"] == false, "{v}");
    assert!(
        v["recommended_diff"]
            .as_str()
            .is_some_and(|d| d.starts_with("--- "))
    );
    assert_eq!(v["held_out"].as_array().map(Vec::len), Some(6));
}

#[test]
fn one_thread_and_eight_print_the_same_bytes() {
    for format in ["text", "json"] {
        let a = tune(&["--threads", "1", "--seed", "3", "--format", format]);
        let b = tune(&["--threads", "8", "--seed", "3", "--format", format]);
        assert!(a.status.success(), "{}", stderr(&a));
        assert_eq!(a.status.code(), b.status.code());
        assert!(
            a.stdout == b.stdout,
            "{format}: one thread\n{}\neight\n{}",
            stdout(&a),
            stdout(&b)
        );
    }
    let three = tune(&["--threads", "3", "--seed", "3"]);
    let one = tune(&["--threads", "1", "--seed", "3"]);
    assert!(three.stdout == one.stdout, "{}", stdout(&three));
}

/// The values of every front candidate and of the recommendation.
fn front_values(v: &serde_json::Value) -> Vec<Vec<f64>> {
    let values = |c: &serde_json::Value| -> Vec<f64> {
        c["values"]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default()
    };
    let mut out: Vec<Vec<f64>> = v["front"]
        .as_array()
        .into_iter()
        .flatten()
        .map(values)
        .collect();
    out.push(values(&v["recommended"]));
    out
}

fn knob_index(v: &serde_json::Value, owner: &str) -> usize {
    v["knobs"]
        .as_array()
        .and_then(|k| k.iter().position(|k| k["owner"] == owner))
        .unwrap_or_else(|| panic!("no {owner}: {v}"))
}

#[test]
fn a_pinned_knob_takes_its_value_in_every_candidate_and_the_start_stays_the_file() {
    let o = tune(&["--knob", "UPDATE=3", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let update = knob_index(&v, "UPDATE");
    assert_eq!(v["knobs"][update]["value"], 1.0, "the file's UPDATE=\"1\"");
    assert_eq!(v["knobs"][update]["range"], serde_json::json!([3.0, 3.0]));
    let rows = front_values(&v);
    assert!(rows.len() > 1, "{v}");
    for values in rows {
        assert_eq!(values[update], 3.0, "{values:?}");
    }
    let diff = v["recommended_diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+UPDATE=\"3\""), "{diff}");
    // The text's start row is the file as written: another score than a
    // start of UPDATE="3" would have.
    let pinned = tune(&["--knob", "UPDATE=3"]);
    let unpinned = tune(&[]);
    let start = |o: &std::process::Output| {
        stdout(o)
            .lines()
            .find(|l| l.trim_start().starts_with("start"))
            .map(str::to_string)
    };
    assert!(start(&pinned).is_some());
    assert_eq!(start(&pinned), start(&unpinned));
}

#[test]
fn nothing_outside_a_narrowed_range_reaches_the_front() {
    // The file's HOTPLUG threshold (0.3) lies outside 0.5..0.7 and its
    // CPU_MAX (all 4) outside 2..3: the start row is still the file, and
    // the search starts from 0.5 and 3.
    let o = tune(&[
        "--knob",
        "HOTPLUG=0.5..0.7",
        "--knob",
        "CPU_MAX=2..3",
        "--format",
        "json",
    ]);
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    let (hotplug, cpu_max) = (knob_index(&v, "HOTPLUG"), knob_index(&v, "CPU_MAX"));
    assert_eq!(v["knobs"][hotplug]["value"], 0.3);
    let rows = front_values(&v);
    assert!(!rows.is_empty(), "{v}");
    for values in rows.iter().filter(|r| !r.is_empty()) {
        assert!((0.5..=0.7).contains(&values[hotplug]), "{values:?}");
        assert!((2.0..=3.0).contains(&values[cpu_max]), "{values:?}");
    }
    assert_ne!(v["start"], serde_json::Value::Null);
}

#[test]
fn impossible_knobs_are_refused_before_any_search_with_the_valid_range() {
    for (knob, words) in [
        (
            "CPU_MAX=5",
            "CPU_MAX takes a whole number in 1..4 (the CPUs present); 5 is not one",
        ),
        ("UPDATE=0", "UPDATE takes a whole number in 1..86400"),
        ("UPDATE=0.5..2", "0.5 is not one"),
        ("HOTPLUG=0.7..0.5", "the range is inverted"),
        ("HOTPLUG=nan", "\"nan\" is not a number"),
        ("12:40=1", "no knob is named or written at \"12:40\""),
        ("NOPE=1", "the knobs are"),
    ] {
        let o = tune(&["--knob", knob]);
        assert_eq!(o.status.code(), Some(2), "{knob}: {}", stderr(&o));
        assert!(stderr(&o).contains(words), "{knob}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{knob}: no search ran");
    }
    let o = tune(&["--knob", "CPU_MIN=3", "--knob", "CPU_MAX=1..2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("CPU_MIN is at least 3"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_run_shorter_than_an_update_the_tune_may_try_is_refused() {
    let run = |duration: &str, extra: &[&str]| {
        let mut args = vec!["tune", SCENARIO, "-c", RULES, "--budget", "4"];
        let duration = format!("--duration={duration}");
        args.push(&duration);
        args.extend_from_slice(extra);
        plugtop(&args)
    };
    // UPDATE is searched over 1..10 s.
    let o = run("5s", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("shorter than UPDATE=10") && stderr(&o).contains("--knob UPDATE=1..5"),
        "{}",
        stderr(&o)
    );
    let o = run("60s", &["--knob", "UPDATE=1..5"]);
    assert!(!o.stdout.is_empty(), "narrowed, it runs: {}", stderr(&o));
    // Long enough for one interval, too short for one decision: the rules
    // look back at least one interval.
    let o = run("11s", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("decides nothing"), "{}", stderr(&o));
    for bad in ["0", "0s", "-5s", "nan", "inf"] {
        let o = run(bad, &[]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stdout(&o));
        assert!(stderr(&o).contains("--duration"), "{bad}: {}", stderr(&o));
    }
}

#[test]
fn write_refuses_a_target_it_could_not_create_before_the_search() {
    let dir = tempdir();
    let existing = dir.path().join("existing.conf");
    std::fs::write(&existing, "keep me\n").expect("write");
    let link = dir.path().join("link.conf");
    std::os::unix::fs::symlink(dir.path().join("nowhere.conf"), &link).expect("symlink");
    let file_as_dir = existing.join("below.conf");
    let cases = [
        (dir.path().join("sub/.."), "names no file"),
        (dir.path().join("sub"), "that is a directory"),
        (
            dir.path().join("missing/out.conf"),
            "cannot open the directory",
        ),
        (file_as_dir, "cannot open the directory"),
        (existing.clone(), "exists already and is never overwritten"),
        (link.clone(), "a symbolic link"),
        // Not even root creates a file in /proc.
        (
            std::path::PathBuf::from("/proc/plugtop-tune-test.conf"),
            "/proc",
        ),
    ];
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    for (target, words) in cases {
        // A budget that a search would take minutes over in a debug build:
        // the refusal comes first.
        let o = plugtop(&[
            "tune",
            SCENARIO,
            "-c",
            RULES,
            "--budget",
            "100000",
            "--write",
            &target.display().to_string(),
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", target.display());
        assert!(
            err.contains("--write") && err.contains(words),
            "{}: {err}",
            target.display()
        );
        assert!(o.stdout.is_empty(), "{}: no search ran", target.display());
    }
    assert_eq!(std::fs::read(&existing).expect("read"), b"keep me\n");
    assert!(std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()));
    assert!(
        !dir.path().join("nowhere.conf").exists(),
        "not written through the link"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 3, "no temporary file left behind: {left:?}");
}

/// The run of `rules` on a scenario and on the recording of that run
/// turned back into a workload: (original, replayed) as JSON scores.
fn round_trip(
    scenario: &str,
    rules: &str,
    intervals: usize,
) -> (serde_json::Value, serde_json::Value) {
    let dir = tempdir();
    let rec = dir.path().join("run.rec").display().to_string();
    let o = plugtop(&[
        "sim",
        scenario,
        "-c",
        rules,
        "--fast",
        "--record",
        &rec,
        "--report",
        "--report-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let original: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the report");
    let o = plugtop(&[
        "tune", "--replay", &rec, "--whole", "-c", rules, "--budget", "1", "--format", "json",
    ]);
    assert!(
        stderr(&o).contains(&format!("as a workload: {intervals} intervals")),
        "{}",
        stderr(&o)
    );
    let tuned: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the tune");
    (original, tuned["start"].clone())
}

#[test]
fn a_recording_turned_back_into_a_workload_runs_as_the_original_did() {
    for (scenario, intervals) in [("daytrader", 750), ("webserver", 600)] {
        let (a, b) = round_trip(
            &format!("examples/scenarios/{scenario}.toml"),
            "examples/rules/recommended-modern.conf",
            intervals,
        );
        round_trip_agrees(&a, &b);
    }
}

/// The replayed run's report is the original's within a few percent: the
/// unmet demand too, whose censored intervals are estimated.
fn round_trip_agrees(a: &serde_json::Value, b: &serde_json::Value) {
    let close = |key: &str, tolerance: f64| {
        let (x, y) = (
            a[key].as_f64().unwrap_or(f64::NAN),
            b[key].as_f64().unwrap_or(f64::NAN),
        );
        assert!(
            (x - y).abs() <= tolerance * x.abs().max(1e-9),
            "{key}: {x} then {y}"
        );
    };
    close("avg_online_cpus", 0.02);
    close("guest_to_working_set", 0.03);
    close("throughput_ratio", 0.01);
    close("unmet_cpu_seconds", 0.02);
    let stalls = |v: &serde_json::Value| v["direct_scan_stalls"].as_f64().unwrap_or(0.0);
    assert!((stalls(a) - stalls(b)).abs() <= 2.0, "{a} {b}");
}

/// Scores of the JSON output's reference, recommendation and held-out rows.
fn acceptance(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["tune"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--old-kernel", "--format", "json", "--only-workload"]);
    let o = plugtop(&all);
    assert!(o.status.success(), "nothing recommended: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

/// Whether `v` (the JSON of a tune against a reference) recommends a file
/// that is `better` than the reference at no more CPUs or stalls, without
/// flapping, on the tuned seed and on each of three others.
fn beats_the_reference_on_every_seed(v: &serde_json::Value, better: &str) {
    let f = |v: &serde_json::Value, key: &str| v[key].as_f64().unwrap_or(f64::NAN);
    let rows = v["held_out"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        rows.len(),
        9,
        "three seeds × start, reference, recommended: {v}"
    );
    let mut pairs = vec![(v["reference"].clone(), v["recommended"]["score"].clone())];
    for seed in rows.chunks(3) {
        pairs.push((seed[1]["score"].clone(), seed[2]["score"].clone()));
    }
    for (reference, tuned) in pairs {
        assert!(
            f(&tuned, better) < f(&reference, better),
            "{better}: {tuned} vs {reference}"
        );
        // At most 5% more CPUs, or more where they leave a fifth less
        // demand unmet (issue 26's tolerance).
        assert!(
            f(&tuned, "avg_online_cpus") <= f(&reference, "avg_online_cpus") * 1.05 + 1e-9
                || f(&tuned, "unmet_cpu_seconds") <= f(&reference, "unmet_cpu_seconds") * 0.8,
            "CPUs: {tuned} vs {reference}"
        );
        assert!(f(&tuned, "direct_scan_stalls") <= f(&reference, "direct_scan_stalls"));
        assert_eq!(tuned["flapping"], false);
    }
}

/// Issue 14's acceptance, with the default budget: the paper's loadavg
/// rules tuned on daytrader leave less unmet demand than its real-load
/// rules at no more CPUs; its memory-config-3 rules tuned on combo make a
/// smaller guest than its recommended memory rules at no more stalls, CPUs
/// or unmet demand; neither flaps, and both hold on three other seeds.
/// 4,000 simulated runs take a minute in a debug build, so `cargo test`
/// leaves it to `scripts/tune-acceptance.sh` (a release build, seconds);
/// the test below checks the same on a narrowed search.
#[test]
#[ignore = "the default budget takes a minute in a debug build: scripts/tune-acceptance.sh"]
fn the_paper_s_files_tuned_beat_the_paper_s_recommendations_on_other_seeds_too() {
    let cpu = acceptance(&[
        "examples/scenarios/daytrader.toml",
        "-c",
        "examples/rules/cpu-loadavg.conf",
        "--against",
        "examples/rules/cpu-real-load.conf",
    ]);
    beats_the_reference_on_every_seed(&cpu, "unmet_cpu_seconds");
    let mem = acceptance(&[
        "examples/scenarios/combo.toml",
        "-c",
        "examples/rules/memory-config-3.conf",
        "--against",
        "examples/rules/recommended-default.conf",
        "--objective",
        "memory",
    ]);
    beats_the_reference_on_every_seed(&mem, "guest_to_working_set");
}

/// The memory half of issue 14's acceptance on a search narrowed to where
/// the default budget finds its recommendation (20 candidates instead of
/// 2,000): the tuned file makes a smaller guest than the paper's
/// recommended rules at no more stalls or CPUs, on four seeds.
#[test]
fn a_narrowed_search_beats_the_paper_s_memory_rules_on_other_seeds_too() {
    let mem = acceptance(&[
        "examples/scenarios/combo.toml",
        "-c",
        "examples/rules/memory-config-3.conf",
        "--against",
        "examples/rules/recommended-default.conf",
        "--objective",
        "memory",
        "--budget",
        "20",
        "--knob",
        "UPDATE=1",
        "--knob",
        "CPU_MIN=1",
        "--knob",
        "CPU_MAX=6",
        "--knob",
        "20:44=0.15..0.25",
        "--knob",
        "21:38=0.8..1.0",
        "--knob",
        "30:28=5..8",
        "--knob",
        "31:29=20..30",
        "--knob",
        "32:23=50..80",
    ]);
    assert!(matches!(mem["candidates"].as_u64(), Some(20 | 21)), "{mem}");
    beats_the_reference_on_every_seed(&mem, "guest_to_working_set");
}

#[test]
fn with_the_portfolio_the_recommendation_is_judged_on_every_built_in_scenario_and_steady_load() {
    let o = plugtop(&[
        "tune",
        SCENARIO,
        "-c",
        RULES,
        "--duration",
        "3m",
        "--budget",
        "24",
        "--format",
        "json",
    ]);
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    let judged = v["judged"].as_array().cloned().unwrap_or_default();
    if v["recommended"].is_null() {
        // Nothing held up: every judged candidate says why.
        assert!(o.status.code() == Some(1), "{v}");
        for j in &judged {
            assert_ne!(j["verdict"], "holds on every workload", "{v}");
        }
        return;
    }
    let rows = v["portfolio"].as_array().cloned().unwrap_or_default();
    let steady = rows.iter().filter(|r| !r["steady"].is_null()).count();
    assert_eq!(steady, 40, "{v}");
    // Every built-in scenario but the oscillating one trained on, and all
    // seven at 60% and 140% of their threads.
    assert_eq!(rows.len() - steady, 6 + 14, "{v}");
    assert!(
        rows.iter().any(|r| r["workload"] == "oscillating at 140%"),
        "{v}"
    );
    for r in rows.iter().filter(|r| !r["steady"].is_null()) {
        assert_eq!(r["recommended"]["flapping"], false, "{r}");
    }
    assert_eq!(
        judged.last().map(|j| j["verdict"].clone()),
        Some(serde_json::json!("holds on every workload")),
        "{v}"
    );
}

#[test]
fn an_unlimited_cpu_max_is_tuned_only_when_asked_for() {
    let o = tune(&["--knob", "CPU_MAX=1..4", "--format", "json"]);
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert!(v["knobs"].to_string().contains("CPU_MAX"), "{v}");
}

/// A memory tune leaves the CPU rules alone: whatever it recommends or
/// puts on the front, HOTPLUG, HOTUNPLUG, the variables they read,
/// CPU_MIN, CPU_MAX and UPDATE keep their text; named with --knob, a CPU
/// rule's number is searched after all.
#[test]
fn a_memory_tune_never_changes_a_cpu_rule_s_text() {
    let o = plugtop(&[
        "tune",
        "examples/scenarios/combo.toml",
        "-c",
        "examples/rules/memory-config-3.conf",
        "--objective",
        "memory",
        "--old-kernel",
        "--only-workload",
        "--only-thresholds",
        "--budget",
        "40",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
    let owners: Vec<String> = v["knobs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|k| k["owner"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(!owners.is_empty(), "{v}");
    for owner in &owners {
        assert!(
            [
                "MEMPLUG",
                "MEMUNPLUG",
                "CMM_INC",
                "CMM_DEC",
                "pgscanrate",
                "avail_cache"
            ]
            .contains(&owner.as_str()),
            "a memory tune searched {owner}: {owners:?}"
        );
    }
    if let Some(diff) = v["recommended_diff"].as_str() {
        for line in diff.lines().filter(|l| l.starts_with(['-', '+'])) {
            assert!(
                line.starts_with("---")
                    || line.starts_with("+++")
                    || ["MEMPLUG", "MEMUNPLUG", "CMM_INC", "CMM_DEC"]
                        .iter()
                        .any(|r| line[1..].starts_with(r)),
                "{line}"
            );
        }
    }
    let named = plugtop(&[
        "tune",
        "examples/scenarios/combo.toml",
        "-c",
        "examples/rules/memory-config-3.conf",
        "--objective",
        "memory",
        "--old-kernel",
        "--budget",
        "5",
        "--knob",
        "HOTPLUG=0.05..0.1",
        "--format",
        "json",
    ]);
    let v: serde_json::Value =
        serde_json::from_slice(&named.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&named)));
    assert!(
        v["knobs"]
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k["owner"] == "HOTPLUG")),
        "{v}"
    );
}

#[test]
fn the_portfolio_s_judging_is_the_same_whatever_the_threads() {
    let run = |threads: &str| {
        plugtop(&[
            "tune",
            SCENARIO,
            "-c",
            RULES,
            "--duration",
            "3m",
            "--budget",
            "24",
            "--threads",
            threads,
            "--format",
            "json",
        ])
    };
    let one = run("1");
    let eight = run("8");
    assert_eq!(stdout(&one), stdout(&eight), "{}", stderr(&one));
    let v: serde_json::Value = serde_json::from_slice(&one.stdout).expect("json");
    // What was judged ends at the recommendation, if there is one.
    // (or at what the recommendation is written in fewer digits of).
    if let (Some(judged), false) = (v["judged"].as_array(), v["recommended"].is_null()) {
        let recommended = if v["rounded_from"].is_null() {
            v["recommended"]["index"].clone()
        } else {
            v["rounded_from"].clone()
        };
        assert_eq!(
            judged.last().map(|j| j["index"].clone()),
            Some(recommended),
            "{v}"
        );
    }
}

#[test]
fn a_file_naming_what_the_kernel_lacks_is_refused_before_the_search() {
    // The paper's memory files name zone-suffixed /proc/vmstat fields.
    let o = plugtop(&[
        "tune",
        SCENARIO,
        "-c",
        "examples/rules/memory-config-3.conf",
        "--budget",
        "100000",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(o.stdout.is_empty(), "nothing searched: {}", stdout(&o));
    let said = stderr(&o);
    assert!(said.contains("would stop at its first interval"), "{said}");
    assert!(said.contains("--old-kernel"), "{said}");
}

/// Issue 40: a two-minute guest whose load pulses, so a debug build tunes
/// it with the forms in seconds.
const SHORT_PULSES: &str = "name = \"short-pulses\"\ncpus = 4\nonline = 1\nmemory_mib = 2048\n\
contention = 0.02\nduration = \"2:00\"\nseed = 7\n\n[[phases]]\nname = \"quiet\"\nstart = \"0:00\"\n\
threads = 0.3\ncpu_per_thread = 0.5\nworking_set_mib = 300\n\n[[phases]]\nname = \"pulses\"\n\
start = \"0:20\"\nthreads = 3.0\ncpu_per_thread = 1.0\nworking_set_mib = 500\npulse_period_s = 6\n";

/// Rules no number can fix: they never plug a CPU.
const NEVER_PLUGS: &str =
    "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n";

/// A form of one's own: plug on runnable tasks, with a named number.
const USER_FORM: &str = "#@form my-runnable\n#@group cpu\n#@intent runnable tasks against CPUs\n\
#@number up 0.5 0.1..3\nUPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n\
HOTPLUG=\"runnable_proc > onumcpus + ${up}\"\nHOTUNPLUG=\"runnable_proc < onumcpus - 1.5\"\n";

/// The short scenario and the never-plugging rules in `dir`.
fn short_case(dir: &std::path::Path) -> (String, String) {
    let scenario = dir.join("short.toml");
    std::fs::write(&scenario, SHORT_PULSES).expect("scenario");
    let rules = dir.join("never.conf");
    std::fs::write(&rules, NEVER_PLUGS).expect("rules");
    (scenario.display().to_string(), rules.display().to_string())
}

#[test]
fn a_form_is_recommended_where_no_number_helps_and_written_as_check_passes_it() {
    let dir = tempdir();
    let (scenario, rules) = short_case(dir.path());
    let out = dir.path().join("tuned.conf");
    let o = plugtop(&[
        "tune",
        &scenario,
        "-c",
        &rules,
        "--budget",
        "40",
        "--only-workload",
        "--write",
        &out.display().to_string(),
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}{}", stderr(&o));
    assert!(text.contains("Form changed: the "), "{text}");
    assert!(text.contains("Cost against your file"), "{text}");
    assert!(text.contains("peak 1 → "), "the peak CPUs: {text}");
    let written = std::fs::read_to_string(&out).expect("written");
    let first = written.lines().next().unwrap_or("");
    assert!(
        first.starts_with("# Written by plugtop tune") && first.contains(" form"),
        "{first}"
    );
    // The form's rules replaced the never-plugging ones; the limits stay.
    assert!(!written.contains("HOTPLUG=\"0\""), "{written}");
    assert!(written.contains("CPU_MAX=\"0\""), "{written}");
    let check = plugtop(&[
        "check",
        &out.display().to_string(),
        "--root",
        "tests/fixtures/roots/newkernel",
    ]);
    let said = stdout(&check);
    assert!(check.status.success(), "{said}");
    assert!(said.contains("0 errors, 0 warnings"), "{said}");
    // With --only-thresholds and UPDATE pinned there is nothing to move.
    let only = plugtop(&[
        "tune",
        &scenario,
        "-c",
        &rules,
        "--only-thresholds",
        "--knob",
        "UPDATE=1",
    ]);
    assert!(!only.status.success());
    assert!(
        stderr(&only).contains("has no numbers to tune"),
        "{}",
        stderr(&only)
    );
}

/// Adversary F7: `--budget` is a cap on the candidates evaluated, every
/// form's share included; a budget too small for every form says how many
/// it reached.
#[test]
fn the_budget_caps_the_candidates_and_says_how_many_forms_it_reached() {
    let dir = tempdir();
    let (scenario, _) = short_case(dir.path());
    let args = [
        "tune",
        &scenario,
        "-c",
        RULES,
        "--budget",
        "20",
        "--only-workload",
    ];
    let v = json_report(&args);
    let rounded = u64::from(!v["rounded_from"].is_null());
    let ran = v["candidates"].as_u64().unwrap_or_default() - rounded;
    assert!((1..=20).contains(&ran), "{v}");
    let text = plugtop(&args);
    // Prose wraps at 80 columns: read it as one line.
    let text = stdout(&text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains(&format!("{ran} candidates")), "{text}");
    assert!(text.contains("(the budget reached no more)"), "{text}");
}

/// Adversary F8: `--only-thresholds` recommended UPDATE 3 and HOTUNPLUG
/// 110 for the paper's loadavg file: the same unmet demand, stalls,
/// changes and throughput, 1.36 → 1.40 CPUs (a guest / working set 0.7%
/// lower only as the work ran). A point the start beats by more than
/// noise while no worse anywhere is never recommended.
#[test]
fn a_point_the_start_dominates_is_never_recommended() {
    let v = json_report(&[
        "tune",
        "examples/scenarios/daytrader.toml",
        "-c",
        "examples/rules/cpu-loadavg.conf",
        "--only-thresholds",
        "--budget",
        "20",
        "--only-workload",
        "--duration",
        "3:00",
    ]);
    let start = &v["start"];
    let rec = &v["recommended"]["score"];
    if rec.is_null() {
        return;
    }
    let f = |s: &serde_json::Value, k: &str| s[k].as_f64().unwrap_or(f64::NAN);
    let cheaper = f(rec, "avg_online_cpus") <= f(start, "avg_online_cpus") + 0.01;
    let less_unmet = f(rec, "unmet_cpu_seconds") < f(start, "unmet_cpu_seconds") * 0.99 - 0.1;
    let steadier = [
        "cpu_changes",
        "pool_changes",
        "reversals",
        "direct_scan_stalls",
    ]
    .iter()
    .any(|k| f(rec, k) < f(start, k));
    assert!(cheaper || less_unmet || steadier, "{v}");
}

#[test]
fn a_user_s_form_in_a_forms_directory_is_searched_and_a_broken_one_refused() {
    let dir = tempdir();
    let (scenario, _) = short_case(dir.path());
    let forms = dir.path().join("forms");
    std::fs::create_dir(&forms).expect("forms dir");
    std::fs::write(forms.join("runnable.conf"), USER_FORM).expect("form");
    let o = plugtop(&[
        "tune",
        &scenario,
        "-c",
        RULES,
        "--budget",
        "40",
        "--only-workload",
        "--forms",
        &forms.display().to_string(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
    let searched = v["forms_searched"].as_array().cloned().unwrap_or_default();
    let mine = searched
        .iter()
        .find(|f| f["form"] == "my-runnable")
        .unwrap_or_else(|| panic!("the user's form is not searched: {searched:?}"));
    assert!(
        mine["candidates"].as_u64().is_some_and(|n| n >= 6),
        "{mine}"
    );
    assert!(
        mine["origin"]
            .as_str()
            .is_some_and(|p| p.ends_with("runnable.conf")),
        "{mine}"
    );
    assert!(
        searched.iter().any(|f| f["form"]
            .as_str()
            .is_some_and(|n| n.starts_with("cpu-real-load"))),
        "the shipped forms are searched too"
    );
    // --only-thresholds searches none.
    let only = plugtop(&[
        "tune",
        &scenario,
        "-c",
        RULES,
        "--budget",
        "10",
        "--only-workload",
        "--only-thresholds",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&only.stdout).expect("json");
    assert_eq!(v["forms_searched"].as_array().map(Vec::len), Some(0), "{v}");
    // A broken form: refused with its place before anything is tuned.
    std::fs::write(
        forms.join("zbroken.conf"),
        "#@form broken\n#@group cpu\n#@number a 5 0..1\nHOTPLUG=\"${a}\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("form");
    let bad = plugtop(&[
        "tune",
        &scenario,
        "-c",
        RULES,
        "--forms",
        &forms.display().to_string(),
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("zbroken.conf:3:"), "{}", stderr(&bad));
    assert!(stdout(&bad).is_empty(), "nothing tuned: {}", stdout(&bad));
    // A FIFO where a form should be is refused, never waited on.
    let fifo_dir = dir.path().join("fifo");
    std::fs::create_dir(&fifo_dir).expect("dir");
    let made = std::process::Command::new("mkfifo")
        .arg(fifo_dir.join("x.conf"))
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let fifo = plugtop(&[
            "tune",
            &scenario,
            "-c",
            RULES,
            "--forms",
            &fifo_dir.display().to_string(),
        ]);
        assert!(!fifo.status.success(), "{}", stdout(&fifo));
    } else {
        eprintln!("skipped the FIFO case: mkfifo is not available");
    }
}

#[test]
fn a_memory_tune_s_forms_never_touch_a_cpu_rule() {
    let o = plugtop(&[
        "tune",
        "examples/scenarios/combo.toml",
        "-c",
        "examples/rules/memory-config-3.conf",
        "--objective",
        "memory",
        "--old-kernel",
        "--only-workload",
        "--duration",
        "3m",
        "--budget",
        "30",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
    let searched = v["forms_searched"].as_array().cloned().unwrap_or_default();
    assert!(!searched.is_empty(), "{v}");
    assert!(
        searched
            .iter()
            .all(|f| f["form"].as_str().is_some_and(|n| n.starts_with("mem-"))),
        "a memory tune searches memory forms only: {searched:?}"
    );
    // Only the zone-named variants: this kernel has no other names.
    assert!(
        searched.iter().all(|f| f["form"]
            .as_str()
            .is_some_and(|n| n.contains("2.6 kernels"))),
        "{searched:?}"
    );
    if let Some(diff) = v["recommended_diff"].as_str() {
        for line in diff.lines().filter(|l| l.starts_with(['-', '+'])) {
            assert!(
                !line[1..].starts_with("HOTPLUG") && !line[1..].starts_with("HOTUNPLUG"),
                "{line}"
            );
        }
    }
}

/// `--judge N` bounds the candidates judged on the portfolio, and a
/// judge of 0 is refused before anything runs.
#[test]
fn judge_bounds_the_candidates_judged_on_the_portfolio() {
    let o = plugtop(&[
        "tune",
        SCENARIO,
        "-c",
        RULES,
        "--duration",
        "2m",
        "--budget",
        "30",
        "--only-thresholds",
        "--judge",
        "2",
        "--format",
        "json",
    ]);
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    let judged = v["judged"].as_array().cloned().unwrap_or_default();
    assert!(!judged.is_empty() && judged.len() <= 2, "{v}");
    for j in &judged {
        assert!(j["score"]["unmet_cpu_seconds"].is_number(), "{j}");
    }
    let refused = plugtop(&["tune", SCENARIO, "-c", RULES, "--judge", "0"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--judge"), "{}", stderr(&refused));
    // Without the portfolio nothing is judged: the two are refused together.
    let both = plugtop(&[
        "tune",
        SCENARIO,
        "-c",
        RULES,
        "--judge",
        "5",
        "--only-workload",
    ]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert!(
        stderr(&both).contains("--only-workload"),
        "{}",
        stderr(&both)
    );
}

/// Issue 45: `plugtop tune` said `1961 candidates` where its screen's box
/// said 2000 (the budget), with no word of why; the three other seeds read
/// as the workload did, unexplained; a change of nothing read `(-0.00)`;
/// and a file whose CPU group is off was CPU-tuned without a word of
/// `--objective memory`.
#[test]
fn fewer_candidates_than_the_budget_seeds_that_read_alike_and_a_memory_file_are_said() {
    // One knob of three values: the search runs out long before 60.
    let o = tune(&[
        "--knob",
        "UPDATE=1..3",
        "--knob",
        "HOTPLUG=0.3",
        "--knob",
        "HOTUNPLUG=0.8",
    ]);
    // Prose is wrapped (at 80 into a pipe): read it with its blanks joined.
    let words =
        |o: &std::process::Output| stdout(o).split_whitespace().collect::<Vec<_>>().join(" ");
    let text = words(&o);
    assert!(
        text.contains(" 3 candidates (budget 60) on "),
        "the budget beside a smaller count: {text}"
    );
    // Daytrader's jitter moves no decision of the recommended rules.
    let o = plugtop(&[
        "tune",
        "examples/scenarios/daytrader.toml",
        "-c",
        "examples/rules/recommended-modern.conf",
        "--duration",
        "4m",
        "--budget",
        "60",
        "--only-workload",
    ]);
    let text = words(&o);
    // Into a pipe the held-out table fits 80 columns: a seed's name heads its rows.
    assert!(text.contains(" s2: start "), "{text}");
    assert!(
        text.contains("On the other seeds (s2, s3, s4) both files changed CPUs and the pool exactly as on the workload"),
        "{text}"
    );
    assert!(!text.contains("-0.00"), "{text}");
    // A file with memory rules only: the CPU tune says what it can do.
    let dir = tempdir();
    let memory_only = dir.path().join("memory-only.conf");
    let bytes = std::fs::read_to_string("examples/rules/recommended-modern.conf")
        .expect("the shipped file");
    let kept: String = bytes
        .lines()
        .filter(|l| !l.starts_with("HOTPLUG") && !l.starts_with("HOTUNPLUG"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&memory_only, kept).expect("write");
    let path = memory_only.to_string_lossy().into_owned();
    let o = plugtop(&[
        "tune",
        "examples/scenarios/daytrader.toml",
        "-c",
        &path,
        "--duration",
        "2m",
        "--budget",
        "10",
        "--only-workload",
        "--only-thresholds",
    ]);
    let err = stderr(&o);
    assert!(
        err.contains("its CPU group is off (it needs HOTPLUG, HOTUNPLUG)")
            && err.contains("--objective memory tunes its memory rules"),
        "{err}"
    );
}
