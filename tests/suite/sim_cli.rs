//! `plugtop sim` end to end: reports, comparisons, recordings, and the
//! simulated guest published as a root directory for other tools.

use crate::common;
use crate::common::text;

use std::process::Output;

use common::{plugtop, tempdir};

const DAYTRADER: &str = "examples/scenarios/daytrader.toml";
const MODERN: &str = "examples/rules/recommended-modern.conf";

#[test]
fn json_report_has_the_documented_keys() {
    let o = plugtop(&[
        "sim",
        DAYTRADER,
        "-c",
        MODERN,
        "--fast",
        "--report",
        "--report-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = match serde_json::from_slice(&o.stdout) {
        Ok(v) => v,
        Err(e) => panic!("{e}: {}", text(&o)),
    };
    for key in [
        "intervals",
        "avg_online_cpus",
        "unmet_cpu_seconds",
        "avg_guest_mib",
        "avg_working_set_mib",
        "direct_scan_stalls",
        "throughput_ratio",
        "cpu_changes",
        "pool_changes",
        "reversals",
        "flapping",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["intervals"], 748);
    assert_eq!(v["flapping"], false);
}

#[test]
fn without_report_every_action_is_printed_with_its_time() {
    let o = plugtop(&["sim", DAYTRADER, "-c", MODERN, "--fast"]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("0:03 unplugged cpu0"), "{out}");
    assert!(out.contains("throughput vs ideal"), "{out}");
}

/// `plugtop sim` of daytrader at --speed 0.001 (days of real time), its
/// standard output piped, its standard error to `stderr`.
fn daytrader_for_days(stderr: std::process::Stdio) -> common::Spawned {
    common::Spawned::new(
        std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
            .args(["sim", DAYTRADER, "-c", MODERN, "--speed", "0.001"])
            .stdout(std::process::Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("sim"),
    )
}

/// adv52 #9: a run in real time (no --report) says at once, before any
/// action, what it simulates, how fast, and how to stop it; --fast says so
/// too.
#[test]
fn a_run_in_real_time_says_what_it_simulates_at_once() {
    use std::io::BufRead;
    let mut child = daytrader_for_days(std::process::Stdio::null());
    let stdout = child.child().stdout.take().expect("stdout");
    // The first line arrives while the run goes on (it would take days at
    // this speed): read off the test's thread, bounded by the hang guard.
    let (tx, rx) = std::sync::mpsc::channel();
    // The line wraps at 80 columns in a pipe: read its rows up to the
    // last (four at most), to compare as words.
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(stdout);
        let mut note = String::new();
        for _ in 0..4 {
            let mut row = String::new();
            if reader.read_line(&mut row).unwrap_or(0) == 0 {
                break;
            }
            note.push_str(&row);
            if row.trim_end().ends_with("Ctrl-C stops") {
                break;
            }
        }
        let _ = tx.send(note);
    });
    let first = rx.recv_timeout(common::hang_guard()).expect("a first line");
    assert!(!child.has_ended(), "still running");
    child.signal(rustix::process::Signal::TERM);
    let _ = child.finish("plugtop sim after SIGTERM");
    assert!(
        first.lines().all(|row| row.chars().count() <= 80),
        "{first}"
    );
    assert_eq!(
        first.split_whitespace().collect::<Vec<_>>().join(" "),
        format!(
            "simulating 12:30 of daytrader under {MODERN} at --speed 0.001: actions print as they \
             happen, the report in about 208:20:00; Ctrl-C stops"
        ),
    );
    let fast = text(&plugtop(&["sim", DAYTRADER, "-c", MODERN, "--fast"]));
    let fast_words = fast.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        fast_words.starts_with(&format!(
            "simulating 12:30 of daytrader under {MODERN} as fast as it runs (--fast)"
        )),
        "{fast}"
    );
}

#[test]
fn compare_prints_both_rule_files_side_by_side() {
    let o = plugtop(&[
        "sim",
        DAYTRADER,
        "-c",
        "examples/rules/cpu-loadavg.conf",
        "--compare",
        "examples/rules/cpu-real-load.conf",
        "--fast",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let header = out.lines().nth(1).unwrap_or_default();
    assert!(
        header.contains("cpu-loadavg.conf") && header.contains("cpu-real-load.conf"),
        "{out}"
    );
    assert!(out.contains("unmet CPU demand"), "{out}");
}

#[test]
fn a_recorded_run_replays_with_the_same_decisions() {
    let dir = tempdir();
    let rec = dir.path().join("run.rec");
    let rec = rec.to_string_lossy();
    let o = plugtop(&[
        "sim",
        DAYTRADER,
        "-c",
        "examples/rules/cpu-real-load.conf",
        "--fast",
        "--duration",
        "2:00",
        "--record",
        &rec,
    ]);
    let live = text(&o);
    assert!(o.status.success(), "{live}");
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/cpu-real-load.conf",
        "--replay",
        &rec,
        "--jsonl",
    ]);
    let replay = text(&o);
    assert!(o.status.success(), "{replay}");
    // 121 readings (0:00 to 2:00); the first three fill the history.
    let decided = replay
        .lines()
        .filter(|l| l.contains("\"snapshot\""))
        .count();
    assert_eq!(decided, 118, "{replay}");
    // The replay decides exactly the actions the simulated run took.
    let taken: Vec<&str> = live
        .lines()
        .filter_map(|l| {
            if l.contains(" unplugged cpu") {
                Some("unplug")
            } else if l.contains(" plugged cpu") {
                Some("plug")
            } else {
                None
            }
        })
        .collect();
    let decided: Vec<&str> = replay
        .lines()
        .filter_map(|l| {
            if l.contains("\"action\":\"unplug\"") {
                Some("unplug")
            } else if l.contains("\"action\":\"plug\"") {
                Some("plug")
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        taken,
        ["unplug", "unplug", "unplug", "plug", "plug"],
        "{live}"
    );
    assert_eq!(decided, taken, "{replay}");
}

#[test]
fn the_guest_can_be_published_as_a_root_for_other_tools() {
    let dir = tempdir();
    let root = dir.path().to_string_lossy().into_owned();
    let o = plugtop(&[
        "sim",
        DAYTRADER,
        "--serve",
        &root,
        "--fast",
        "--duration",
        "0:05",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = plugtop(&["eval", "-c", MODERN, "--root", &root, "--count", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = plugtop(&["check", MODERN, "--root", &root]);
    assert!(o.status.success(), "{}", text(&o));
    let stat = std::fs::read_to_string(dir.path().join("proc/stat")).unwrap_or_default();
    assert_eq!(stat.lines().filter(|l| l.starts_with("cpu")).count(), 5);
    assert!(!dir.path().join(".staging").exists());
}

#[test]
fn a_bad_scenario_is_refused_with_where_and_why() {
    let dir = tempdir();
    let path = dir.path().join("bad.toml");
    let written = std::fs::write(
        &path,
        "name = \"x\"\ncpus = 2\nmemory_mib = 1024\nduration = \"1:00\"\n\n[[phases]]\nstart = \"0\"\nthreads = 1\nworkingset_mib = 3\n",
    );
    assert!(written.is_ok());
    let o = plugtop(&["sim", &path.to_string_lossy(), "-c", MODERN, "--fast"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("workingset_mib") && out.contains("bad.toml:9:1: error: "),
        "{out}"
    );
}

fn stderr(o: &Output) -> String {
    crate::common::said(o)
}

#[test]
fn durations_are_taken_as_people_write_them() {
    for (d, seconds) in [
        ("90s", 90.0),
        ("15m", 900.0),
        ("1h", 3600.0),
        ("12:00", 720.0),
        ("1h30m", 5400.0),
    ] {
        let o = plugtop(&[
            "sim",
            DAYTRADER,
            "-c",
            MODERN,
            "--fast",
            "--report",
            "--report-format",
            "json",
            "--duration",
            d,
        ]);
        assert!(o.status.success(), "{d}: {}", text(&o));
        let v: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{d}: {e}"));
        assert_eq!(v["seconds"].as_f64(), Some(seconds), "{d}");
    }
    let o = plugtop(&["sim", DAYTRADER, "-c", MODERN, "--fast", "--duration", "5x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is not a duration like 1h"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_json_report_is_all_that_standard_output_holds() {
    let o = plugtop(&[
        "sim",
        DAYTRADER,
        "-c",
        MODERN,
        "--fast",
        "--duration",
        "5m",
        "--report-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: Result<serde_json::Value, _> = serde_json::from_slice(&o.stdout);
    assert!(
        v.is_ok(),
        "stdout is one JSON value: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        stderr(&o).contains("plugged cpu"),
        "the action lines go to stderr: {}",
        stderr(&o)
    );
}

#[test]
fn rules_that_stop_cpuplugd_fail_clearly_with_the_old_kernel_hint() {
    let o = plugtop(&[
        "sim",
        DAYTRADER,
        "-c",
        "examples/rules/recommended-default.conf",
        "--fast",
        "--duration",
        "2m",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("stopped the simulated cpuplugd"), "{err}");
    assert!(err.contains("pgscan_direct_dma not found"), "{err}");
    assert!(err.contains("--old-kernel"), "{err}");
    assert!(
        !text(&o).contains("throughput"),
        "no report of zeros: {}",
        text(&o)
    );
    // With --old-kernel the same file runs.
    let o = plugtop(&[
        "sim",
        DAYTRADER,
        "-c",
        "examples/rules/recommended-default.conf",
        "--fast",
        "--duration",
        "2m",
        "--old-kernel",
        "--report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn sim_help_says_which_rules_run_without_a_file() {
    let o = plugtop(&["sim", "--help"]);
    let help = text(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("default: the built-in recommended rules"),
        "{}",
        text(&o)
    );
}

#[test]
fn without_a_rule_file_the_built_in_rules_run_as_on_the_screen() {
    let o = plugtop(&["sim", DAYTRADER, "--duration", "2m", "--report"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // The simulated kernel has the modern vmstat names; with --old-kernel
    // the paper's own file fits it.
    assert!(
        out.starts_with("daytrader with built-in recommended-modern.conf"),
        "{out}"
    );
    let old = plugtop(&[
        "sim",
        DAYTRADER,
        "--duration",
        "2m",
        "--old-kernel",
        "--report",
    ]);
    assert!(old.status.success(), "{}", text(&old));
    assert!(
        String::from_utf8_lossy(&old.stdout).contains("built-in recommended-default.conf"),
        "{}",
        text(&old)
    );
    // What the file names is compared against the built-in rules.
    let both = plugtop(&["sim", DAYTRADER, "--duration", "2m", "--compare", MODERN]);
    assert!(both.status.success(), "{}", text(&both));
    let table = String::from_utf8_lossy(&both.stdout);
    // (At 80 columns the built-in file's name is cut in its middle.)
    assert!(
        table.contains("built-in rec") && table.contains("modern.conf"),
        "{table}"
    );
    let wide = plugtop(&[
        "sim",
        DAYTRADER,
        "--duration",
        "2m",
        "--compare",
        MODERN,
        "--wide",
    ]);
    let wide = String::from_utf8_lossy(&wide.stdout);
    assert!(
        wide.contains("built-in recommended-modern.conf")
            && wide.contains("recommended-modern.conf"),
        "{wide}"
    );
}

#[test]
fn a_report_at_a_pace_says_when_it_comes_and_without_one_needs_no_wait() {
    // Nothing is shown until the report: without --speed it comes as with
    // --fast, so it says nothing of waiting.
    let quick = plugtop(&["sim", DAYTRADER, "-c", MODERN, "--compare", MODERN]);
    assert!(quick.status.success(), "{}", text(&quick));
    assert!(
        !crate::common::said(&quick).contains("the report comes at the end"),
        "{}",
        text(&quick)
    );
    let paced = plugtop(&[
        "sim",
        DAYTRADER,
        "-c",
        MODERN,
        "--report",
        "--duration",
        "10s",
        "--speed",
        "1000000",
    ]);
    assert!(paced.status.success(), "{}", text(&paced));
    let said = crate::common::said(&paced);
    let said = said.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        said.contains(
            "simulating 0:10 of daytrader at --speed 1000000: the report comes at the end"
        ),
        "{said}"
    );
}

#[test]
fn serve_with_rules_is_refused_with_where_the_rules_go() {
    // nu53 M16: clap's conflict alone did not say where the rules belong.
    for args in [
        [
            "sim",
            DAYTRADER,
            "--serve",
            "/nonexistent/served",
            "-c",
            MODERN,
        ],
        [
            "sim",
            DAYTRADER,
            "-c",
            MODERN,
            "--serve",
            "/nonexistent/served",
        ],
    ] {
        let o = plugtop(&args);
        // As written: each line is measured below.
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("cannot be used with"), "{err}");
        assert!(
            err.contains("tip: --serve publishes a simulated guest")
                && err.contains("`plugtop run --root DIR -c RULES`")
                && err.contains("`plugtop --root DIR -c RULES`"),
            "{err}"
        );
        assert!(err.lines().all(|l| l.chars().count() <= 80), "{err}");
    }
    // Another conflict gets no such tip.
    let o = plugtop(&["sim", DAYTRADER, "--fast", "--speed", "3"]);
    assert!(!crate::common::said(&o).contains("tip:"));
}

/// nu54 M13: Ctrl-C ends a run in real time with the report of the part
/// simulated (it printed nothing of it, rc 130), said on standard error;
/// the exit status stays 128 + the signal.
#[test]
fn ctrl_c_ends_a_run_with_the_report_of_the_part_simulated() {
    use std::io::Read;
    let mut child = daytrader_for_days(std::process::Stdio::piped());
    let mut stdout = child.child().stdout.take().expect("stdout");
    // All of standard output, read off the test's thread; the start note
    // (said at once) is sent as soon as it is whole.
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut said = false;
        while let Ok(n) = stdout.read(&mut chunk) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&chunk[..n]);
            if !said && String::from_utf8_lossy(&all).contains("Ctrl-C stops") {
                said = true;
                let _ = tx.send(());
            }
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    rx.recv_timeout(common::hang_guard())
        .expect("the start note");
    child.signal(rustix::process::Signal::INT);
    let o = child.finish("plugtop sim after SIGINT");
    let out = reader.join().unwrap_or_default();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(130), "{out}{err}");
    let err_words = err.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        err_words.starts_with("plugtop: stopped by SIGINT after 0:0")
            && err_words.ends_with("of 12:30: the report is of the part simulated"),
        "{err}"
    );
    assert!(
        out.contains(&format!("daytrader with {MODERN}")) && out.contains("simulated time"),
        "{out}"
    );
}
