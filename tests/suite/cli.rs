//! The real binary, end to end, on the repository's fixture roots.

use crate::common;

use std::process::Output;

use common::{plugtop, record_fixture_series};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn line_mode_prints_one_line_per_decided_interval() {
    // Not a terminal, so line mode. The root never changes: the tick
    // differences are 0, so the paper's rules divide 0 by 0 and cpuplugd
    // skips both groups, which the line says.
    let o = plugtop(&[
        "--root",
        "tests/fixtures/roots/oldkernel",
        "--count",
        "5",
        "--interval",
        "0.01",
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("with built-in recommended-default.conf"),
        "{text}"
    );
    // --count counts the intervals printed, not the readings that only
    // filled the history.
    let decided: Vec<&str> = text.lines().filter(|l| l.contains(" #")).collect();
    assert_eq!(decided.len(), 5, "{text}");
    // In plain terms: 0 / 0 is what the FPU calls an invalid operation.
    assert!(
        decided[0].contains(
            "#3 | cpu: skipped (division by zero: no ticks elapsed) | mem: skipped (division by zero: no ticks elapsed)"
        ),
        "{text}"
    );
}

/// New user nu53 F5: `plugtop --batch … | head` ended with "plugtop:
/// terminal: Broken pipe (os error 32)" and exit 2 (101 was seen with
/// `--sim`). A reader that closed the output is the normal end of a pipe:
/// the line mode stops quietly with 0, as `eval`, `check` and `sim` do,
/// whatever the source (the simulator, a recording, a root).
#[test]
fn line_mode_into_a_closed_pipe_ends_quietly_with_0() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = record_fixture_series(dir.path(), "o.rec");
    let sources: [&[&str]; 3] = [
        &[
            "--sim",
            "examples/scenarios/oscillating.toml",
            "--interval",
            "0.01",
        ],
        &["--replay", &rec],
        &[
            "--root",
            "tests/fixtures/roots/newkernel",
            "--interval",
            "0.01",
        ],
    ];
    for source in sources {
        let mut child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
            .arg("--batch")
            .args(source)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("plugtop");
        // The reader goes at once, as `head` does once it has its lines.
        drop(child.stdout.take());
        let o = child.wait_with_output().expect("plugtop ends");
        let err = crate::common::said(&o);
        assert_eq!(o.status.code(), Some(0), "{source:?}: {err}");
        assert!(err.is_empty(), "{source:?}: said {err:?}");
    }
}

#[test]
fn line_mode_explains_each_decision_from_a_recording() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = record_fixture_series(dir.path(), "o.rec");
    let o = plugtop(&[
        "--batch",
        "--replay",
        &rec,
        "-c",
        "examples/rules/recommended-default.conf",
    ]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "#3 | cpu: would unplug, HOTUNPLUG true because (CP_idleAVG * onumcpus) = 1.8668 CPUs is > 1.15"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "mem: would set pool 1240000 -> 1108928, MEMPLUG true because pgscanrate (line 24)"
        ),
        "{text}"
    );
    // Observe changes nothing: no line says it plugged, unplugged or set.
    for done in ["cpu: plug", "cpu: unplug", "mem: pool 1"] {
        assert!(!text.contains(done), "{done:?} in observe:\n{text}");
    }
}

#[test]
fn a_new_kernel_gets_the_modern_built_in_rules() {
    let o = plugtop(&[
        "--root",
        "tests/fixtures/roots/newkernel",
        "--count",
        "1",
        "--interval",
        "0.001",
    ]);
    assert!(
        stdout(&o).contains("with built-in recommended-modern.conf"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn check_exit_status_follows_errors() {
    let bad = plugtop(&[
        "check",
        "examples/rules/memory-config-1.conf",
        "--root",
        "tests/fixtures/roots/oldkernel",
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let good = plugtop(&[
        "check",
        "examples/rules/recommended-default.conf",
        "--root",
        "tests/fixtures/roots/oldkernel",
    ]);
    assert_eq!(good.status.code(), Some(0), "{}", stdout(&good));
    // A file that cannot be read is an error, as cpuplugd exits 1 on it
    // (nu54 M2).
    let missing = plugtop(&["check", "no/such/file.conf"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(crate::common::said(&missing).contains("cannot read no/such/file.conf"));
}

#[test]
fn eval_jsonl_refuses_what_cpuplugd_refuses() {
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/memory-config-1.conf",
        "--snapshots",
        "tests/fixtures/series/oldkernel",
        "--jsonl",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.starts_with("{\"config\":\"error\",\"message\":\"parsing error at cache"),
        "{text}"
    );
}

#[test]
fn eval_trace_shows_variables_and_short_circuits() {
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/recommended-default.conf",
        "--snapshots",
        "tests/fixtures/series/oldkernel",
        "--trace",
    ]);
    let text = stdout(&o);
    assert!(o.status.success());
    assert!(
        text.contains("HOTPLUG = false    ((1 - CP_ActiveAVG) * onumcpus) < 0.08"),
        "{text}"
    );
    assert!(text.contains("CP_ActiveAVG (line 12) = 0.4949"), "{text}");
    assert!(text.contains("cpustat.user[0] = 499593"), "{text}");
}

#[test]
fn record_a_live_root_then_replay_it() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("x.rec");
    let rec_s = rec.to_string_lossy().into_owned();
    let o = plugtop(&[
        "record",
        "-o",
        &rec_s,
        "--root",
        "tests/fixtures/roots/newkernel",
        "--count",
        "6",
        "--interval",
        "0.001",
    ]);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(stdout(&o).contains("recorded 6 samples"), "{}", stdout(&o));
    let again = plugtop(&[
        "record",
        "-o",
        &rec_s,
        "--root",
        "tests/fixtures/roots/newkernel",
        "--count",
        "1",
    ]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "an existing recording is never overwritten"
    );
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/recommended-modern.conf",
        "--replay",
        &rec_s,
        "--jsonl",
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        1 + 3,
        "header and one line per interval after the history fills: {text}"
    );
    assert!(lines[3].starts_with("{\"snapshot\":5,"), "{text}");
}

#[test]
fn export_snapshots_from_a_recording() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("s.rec").to_string_lossy().into_owned();
    let out = dir.path().join("snaps").to_string_lossy().into_owned();
    let o = plugtop(&[
        "record",
        "-o",
        &rec,
        "--snapshots",
        "tests/fixtures/series/oldkernel",
    ]);
    assert!(stdout(&o).contains("recorded 20 samples"), "{}", stdout(&o));
    let o = plugtop(&["record", "--replay", &rec, "--export-snapshots", &out]);
    assert!(stdout(&o).contains("wrote 20 snapshots"), "{}", stdout(&o));
    let direct = plugtop(&[
        "eval",
        "-c",
        "examples/rules/recommended-default.conf",
        "--snapshots",
        "tests/fixtures/series/oldkernel",
        "--jsonl",
    ]);
    let exported = plugtop(&[
        "eval",
        "-c",
        "examples/rules/recommended-default.conf",
        "--snapshots",
        &out,
        "--jsonl",
    ]);
    assert_eq!(stdout(&direct), stdout(&exported));
}

#[test]
fn a_damaged_recording_replays_up_to_the_damage_with_a_warning() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec_s = record_fixture_series(dir.path(), "d.rec");
    let rec = std::path::PathBuf::from(&rec_s);
    let bytes = std::fs::read(&rec).expect("recording");
    std::fs::write(&rec, &bytes[..bytes.len() - 10]).expect("truncate");
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/recommended-default.conf",
        "--replay",
        &rec_s,
        "--jsonl",
    ]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o).lines().count(),
        1 + 16,
        "19 of 20 samples replay, 16 decided"
    );
    let err = crate::common::said(&o);
    assert!(
        err.contains("warning") && err.contains("at byte") && err.contains("truncated"),
        "{err}"
    );
    let junk = dir.path().join("junk.rec");
    std::fs::write(&junk, "not a recording").expect("write");
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/recommended-default.conf",
        "--replay",
        &junk.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = crate::common::said(&o);
    assert!(
        err.contains("not a plugtop recording") && err.contains("at byte 0"),
        "{err}"
    );
}

#[test]
fn eval_reads_a_live_root_every_interval() {
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/recommended-default.conf",
        "--root",
        "tests/fixtures/roots/oldkernel",
        "--count",
        "5",
        "--interval",
        "0.001",
        "--jsonl",
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}");
    assert_eq!(text.lines().count(), 1 + 2, "{text}");
}

/// The table rows (one per decided interval) of a command's output.
/// The decision rows of `eval` or `run -V` (whose lines start with a time).
fn rows(text: &str) -> Vec<String> {
    let untimed = |l: &str| -> String {
        let b = l.as_bytes();
        let timed = b.len() > 9 && b[2] == b':' && b[5] == b':' && b[8] == b' ';
        if timed { &l[9..] } else { l }.to_string()
    };
    text.lines()
        .map(untimed)
        .filter(|l| {
            l.trim_start()
                .split(' ')
                .next()
                .is_some_and(|w| w.parse::<usize>().is_ok())
        })
        .collect()
}

#[test]
fn run_in_observe_mode_decides_like_eval_interval_by_interval() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = record_fixture_series(dir.path(), "o.rec");
    let rules = "examples/rules/recommended-default.conf";
    let run = plugtop(&[
        "run",
        "-f",
        "-V",
        "--mode",
        "observe",
        "--interval-ms",
        "0",
        "--replay",
        &rec,
        "-c",
        rules,
        "--root",
        "tests/fixtures/roots/oldkernel",
    ]);
    assert!(run.status.success(), "{}", crate::common::said(&run));
    let eval = plugtop(&["eval", "-c", rules, "--replay", &rec]);
    let (a, b) = (rows(&stdout(&run)), rows(&stdout(&eval)));
    assert_eq!(a.len(), 17, "{}", stdout(&run));
    assert_eq!(a, b);
}

#[test]
fn run_speaks_cpuplugd_options_and_refuses_bad_rules_without_writing() {
    let v = plugtop(&["run", "-v"]);
    assert!(stdout(&v).contains(env!("CARGO_PKG_VERSION")));
    let dir = tempfile::tempdir().expect("temporary directory");
    let bad = dir.path().join("bad.conf");
    std::fs::write(&bad, "UPDATE=\"1\"\nHOTPLUG=\"loadavg >= 1\"\n").expect("rules");
    let o = plugtop(&[
        "run",
        "-f",
        "-c",
        &bad.to_string_lossy(),
        "--root",
        "tests/fixtures/roots/oldkernel",
    ]);
    assert_eq!(o.status.code(), Some(1), "a refusal: cpuplugd's status");
    let err = crate::common::said(&o);
    assert!(err.contains("cpuplugd has no `>=`"), "{err}");
    assert!(
        !std::path::Path::new("tests/fixtures/roots/oldkernel/run").exists(),
        "nothing written"
    );
    let missing = plugtop(&[
        "run",
        "-f",
        "-c",
        "no/such.conf",
        "--root",
        "tests/fixtures/roots/oldkernel",
    ]);
    assert_eq!(
        missing.status.code(),
        Some(1),
        "a refusal: cpuplugd exits 1"
    );
}

fn stderr(o: &Output) -> String {
    crate::common::said(o)
}

#[test]
fn a_missing_root_is_one_clear_error_everywhere() {
    for args in [
        vec!["--root", "/nonexistent", "--batch", "--count", "1"],
        vec![
            "eval",
            "-c",
            "examples/rules/recommended-default.conf",
            "--root",
            "/nonexistent",
        ],
        vec![
            "check",
            "examples/rules/recommended-default.conf",
            "--root",
            "/nonexistent",
        ],
        vec![
            "run",
            "-f",
            "-c",
            "examples/rules/recommended-default.conf",
            "--root",
            "/nonexistent",
        ],
        vec![
            "record",
            "-o",
            "/nonexistent/x.rec",
            "--root",
            "/nonexistent",
        ],
    ] {
        let o = plugtop(&args);
        let err = stderr(&o);
        // `plugtop run` says 1 for it, as cpuplugd for every error.
        let want = if args[0] == "run" { 1 } else { 2 };
        assert_eq!(o.status.code(), Some(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(
            err.contains("--root /nonexistent: no such directory"),
            "{args:?}: {err}"
        );
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
    }
    // A directory without proc/stat is no root either.
    let o = plugtop(&["--root", "tests", "--batch", "--count", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read tests/proc/stat"),
        "{}",
        stderr(&o)
    );
}

/// Every command that paces itself from `--interval`, with `value`.
fn each_interval_command(value: &str) -> Vec<Vec<String>> {
    let root = "tests/fixtures/roots/newkernel";
    let interval = format!("--interval={value}");
    [
        vec!["--root", root, "--batch", "--count", "1", &interval],
        vec![
            "eval",
            "-c",
            "examples/rules/recommended-default.conf",
            "--root",
            root,
            "--count",
            "1",
            &interval,
        ],
        vec![
            "record",
            "-o",
            "/tmp/plugtop-never.rec",
            "--root",
            root,
            "--count",
            "1",
            &interval,
        ],
        vec![
            "sim",
            "examples/scenarios/appserver.toml",
            "-c",
            "examples/rules/recommended-default.conf",
            "--fast",
            "--report",
            &interval,
        ],
    ]
    .into_iter()
    .map(|a| a.into_iter().map(String::from).collect())
    .collect()
}

#[test]
fn an_interval_too_short_to_be_a_pace_is_refused_like_update_zero() {
    // 0 and below busy-loop, and so do 1e-300 and a microsecond: the
    // shortest interval is a millisecond, and the message says so.
    for value in ["0", "-1", "1e-300", "5e-324", "0.000999", "-inf"] {
        for args in each_interval_command(value) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = plugtop(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("is too short: the shortest is 0.001 seconds (1 ms)"),
                "{args:?}: {}",
                stderr(&o)
            );
            if value == "1e-300" {
                // The number as written, not 300 zeros.
                assert!(
                    stderr(&o).contains("--interval 1e-300 is too short"),
                    "{}",
                    stderr(&o)
                );
            }
        }
    }
}

#[test]
fn an_interval_too_long_to_be_a_pace_says_the_longest_not_a_sign() {
    // inf, 1e300 and 1.8e19 are not lengths of time; the message used to
    // say ">= 0", which they are.
    for value in ["inf", "1e300", "1.8e19", "86400.5", "1e6"] {
        for args in each_interval_command(value) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = plugtop(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.contains("is too long: the longest is 86400 seconds (a day)"),
                "{args:?}: {err}"
            );
            assert!(!err.contains(">= 0"), "{args:?}: {err}");
        }
    }
    let o = plugtop(
        &each_interval_command("nan")[0]
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--interval must be a number of seconds, from 0.001 to 86400"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_shortest_and_the_longest_interval_are_taken() {
    for value in ["0.001", "86400"] {
        let o = plugtop(&[
            "eval",
            "-c",
            "examples/rules/recommended-default.conf",
            "--root",
            "tests/fixtures/roots/newkernel",
            "--count",
            "1",
            "--interval",
            value,
        ]);
        assert_eq!(o.status.code(), Some(0), "{value}: {}", stderr(&o));
    }
}

#[test]
fn a_speed_that_would_make_a_wait_longer_than_time_is_refused() {
    // 1e-20 and 1e-308 used to panic converting the wait to a Duration.
    let run = |speed: &str| {
        plugtop(&[
            "sim",
            "examples/scenarios/appserver.toml",
            "-c",
            "examples/rules/recommended-default.conf",
            "--report",
            "--duration",
            "5",
            &format!("--speed={speed}"),
        ])
    };
    for (speed, says) in [
        ("1e-20", "is too slow: the slowest is 0.001"),
        ("1e-308", "is too slow: the slowest is 0.001"),
        ("5e-324", "is too slow: the slowest is 0.001"),
        ("0.0009", "is too slow: the slowest is 0.001"),
        ("0", "--speed must be a positive number"),
        ("-2", "--speed must be a positive number"),
        ("nan", "--speed must be a positive number"),
        ("inf", "is too fast: the fastest is 1000000"),
        ("1e300", "is too fast: the fastest is 1000000"),
    ] {
        let o = run(speed);
        assert_eq!(o.status.code(), Some(2), "{speed}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{speed}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{speed}: {}", stderr(&o));
    }
}

#[test]
fn check_dash_reads_standard_input() {
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["check", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("plugtop runs");
    if let Some(mut input) = child.stdin.take() {
        input
            .write_all(b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLGU=\"idle < 1\"\nHOTUNPLUG=\"idle > 2\"\n")
            .expect("stdin written");
    }
    let o = child.wait_with_output().expect("plugtop ends");
    let text = stdout(&o);
    assert!(text.contains("<stdin>:4:1"), "{text}");
    assert!(text.contains("did you mean HOTPLUG"), "{text}");
}

#[test]
fn version_at_the_top_level() {
    for flag in ["-v", "-V", "--version"] {
        let o = plugtop(&[flag]);
        assert!(o.status.success(), "{flag}");
        assert!(
            stdout(&o).contains(env!("CARGO_PKG_VERSION")),
            "{flag}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn man_pages_render_and_completions_load_in_bash() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let man = dir.path().join("man");
    let o = plugtop(&["generate", "man", &man.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Each section in its own directory, as man(1) looks for them.
    let mut pages: Vec<String> = ["man1", "man5"]
        .iter()
        .flat_map(|section| {
            std::fs::read_dir(man.join(section))
                .map(|d| {
                    d.filter_map(Result::ok)
                        .map(|e| format!("{section}/{}", e.file_name().to_string_lossy()))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .collect();
    pages.sort();
    assert_eq!(
        pages,
        [
            "man1/plugtop-check.1",
            "man1/plugtop-eval.1",
            "man1/plugtop-fleet.1",
            "man1/plugtop-generate.1",
            "man1/plugtop-import.1",
            "man1/plugtop-lsp.1",
            "man1/plugtop-record.1",
            "man1/plugtop-restore.1",
            "man1/plugtop-run.1",
            "man1/plugtop-sim.1",
            "man1/plugtop-train.1",
            "man1/plugtop-tune.1",
            "man1/plugtop-whatif.1",
            "man1/plugtop.1",
            "man5/plugtop-rules.5"
        ]
    );
    // The command lists what it wrote, each under DIR.
    assert!(
        stdout(&o).contains("/man5/plugtop-rules.5"),
        "{}",
        stdout(&o)
    );
    for page in &pages {
        let text = std::fs::read_to_string(man.join(page)).unwrap_or_default();
        assert!(
            text.starts_with(".ie") || text.starts_with(".TH"),
            "{page}: {text:.80}"
        );
        assert!(text.contains(".SH NAME"), "{page}");
    }
    let run = std::fs::read_to_string(man.join("man1/plugtop-run.1")).unwrap_or_default();
    assert!(
        run.contains("metrics\\-listen"),
        "every option is there: {run}"
    );
    // `man -l` renders each page without a warning, where man is installed.
    if std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok()
    {
        for page in &pages {
            let o = std::process::Command::new("man")
                .args(["-l", "--warnings"])
                .arg(man.join(page))
                .env("MANWIDTH", "80")
                .env("MAN_KEEP_FORMATTING", "0")
                .output()
                .expect("man runs");
            assert!(o.status.success(), "{page}: {}", stderr(&o));
            // Bold comes as overstrikes (X, backspace, X) in a pipe.
            let plain: String = stdout(&o)
                .split('\u{8}')
                .enumerate()
                .map(|(i, part)| {
                    if i == 0 {
                        part
                    } else {
                        part.get(1..).unwrap_or("")
                    }
                })
                .collect();
            assert!(plain.contains("NAME"), "{page}: {plain:.200}");
            assert!(stderr(&o).trim().is_empty(), "{page}: {}", stderr(&o));
        }
    }
    // `MANPATH=DIR man plugtop` finds the pages (nu53 M11), where man is
    // installed.
    match std::process::Command::new("man")
        .args(["-w", "plugtop", "plugtop-rules"])
        .env("MANPATH", &man)
        .output()
    {
        Ok(o) => {
            assert!(o.status.success(), "{}", stderr(&o));
            assert!(
                stdout(&o).contains("man1/plugtop.1")
                    && stdout(&o).contains("man5/plugtop-rules.5"),
                "{}",
                stdout(&o)
            );
        }
        Err(e) => eprintln!("skipped MANPATH: no man here ({e})"),
    }
    // The bash completion loads and completes subcommands.
    let o = plugtop(&["generate", "completions", "bash"]);
    assert!(o.status.success());
    let script = dir.path().join("plugtop.bash");
    std::fs::write(&script, &o.stdout).expect("completion written");
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p plugtop && COMP_WORDS=(plugtop ru) COMP_CWORD=1 COMP_LINE='plugtop ru' COMP_POINT=10 && _plugtop plugtop ru plugtop && echo \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .expect("bash runs");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("run"), "{}", stdout(&o));
    for shell in ["zsh", "fish"] {
        let o = plugtop(&["generate", "completions", shell]);
        assert!(o.status.success() && !o.stdout.is_empty(), "{shell}");
    }
}

#[test]
fn line_mode_refuses_to_pretend_it_acts() {
    for mode in ["auto", "step"] {
        let o = plugtop(&[
            "--batch",
            "--mode",
            mode,
            "--count",
            "1",
            "--root",
            "tests/fixtures/roots/newkernel",
        ]);
        let err = crate::common::said(&o);
        assert_eq!(o.status.code(), Some(2), "{mode}: {err}");
        assert!(err.contains("only observes"), "{mode}: {err}");
        assert!(stdout(&o).is_empty(), "{mode}: nothing read or printed");
    }
}

/// `plugtop generate editor NAME` prints examples/editors' file for NAME,
/// byte for byte; an unknown name is a bad option (exit 2) that lists the
/// names; the shells complete the names.
#[test]
fn generate_editor_prints_the_kept_files() {
    let files = [
        ("neovim", "examples/editors/neovim.lua"),
        ("vim", "examples/editors/vim.vim"),
        ("emacs", "examples/editors/emacs.el"),
        ("helix", "examples/editors/helix.toml"),
        ("vscode", "examples/editors/vscode/package.json"),
        ("vscode-js", "examples/editors/vscode/extension.js"),
    ];
    for (name, path) in files {
        let o = plugtop(&["generate", "editor", name]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let kept = std::fs::read(path).expect("example file");
        assert!(o.stdout == kept, "{name}: differs from {path}");
        assert!(stderr(&o).is_empty(), "{name}: {}", stderr(&o));
    }
    // nu53 M17: neovim before 0.10 maps no key to hover (K runs `man`):
    // the set-up maps K in the rule file's buffer.
    let o = plugtop(&["generate", "editor", "neovim"]);
    assert!(
        stdout(&o).contains(r#"vim.keymap.set("n", "K", vim.lsp.buf.hover, { buffer = args.buf"#),
        "{}",
        stdout(&o)
    );
    let o = plugtop(&["generate", "editor", "notepad"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    for (name, _) in files {
        assert!(stderr(&o).contains(name), "{name}: {}", stderr(&o));
    }
    let dir = common::tempdir();
    let o = plugtop(&["generate", "completions", "bash"]);
    let script = dir.path().join("plugtop.bash");
    std::fs::write(&script, &o.stdout).expect("completion written");
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && COMP_WORDS=(plugtop generate editor he) COMP_CWORD=3 COMP_LINE='plugtop generate editor he' COMP_POINT=26 && _plugtop plugtop he editor && echo \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .expect("bash runs");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "helix", "{}", stderr(&o));
    for shell in ["zsh", "fish"] {
        let o = plugtop(&["generate", "completions", shell]);
        let script = stdout(&o);
        assert!(script.contains("vscode-js"), "{shell}: no editor names");
    }
    let o = plugtop(&["generate", "completions", "fish"]);
    assert!(
        stdout(&o).contains("__fish_seen_subcommand_from editor; and not"),
        "fish completes the editor names"
    );
}

/// Issue 45: `check a.conf b.conf` was refused. Each file is checked on its
/// own; one that cannot be read is said and the others still checked; the
/// status is the worst; JSON is one array of every file's findings.
#[test]
fn check_takes_several_files_at_once() {
    let dir = common::tempdir();
    let broken = dir.path().join("broken.conf");
    std::fs::write(
        &broken,
        "UPDATE=\"1\"\nHOTPLUG=\"idle < 10 && 1\"\nHOTUNPLUG=\"idle > 100\"\n",
    )
    .expect("write");
    let broken = broken.display().to_string();
    let good = "examples/rules/recommended-default.conf";
    let root = ["--root", "tests/fixtures/roots/oldkernel"];
    let text = common::plugtop(&[
        "check",
        &broken,
        "/nonexistent.conf",
        good,
        root[0],
        root[1],
    ]);
    assert_eq!(text.status.code(), Some(1));
    let said = String::from_utf8_lossy(&text.stdout);
    assert!(said.contains("broken.conf: 1 error"), "{said}");
    assert!(
        said.contains("recommended-default.conf: 0 errors, 0 warnings"),
        "{said}"
    );
    assert!(
        crate::common::said(&text).contains("cannot read /nonexistent.conf"),
        "{}",
        crate::common::said(&text)
    );
    let json = common::plugtop(&["check", &broken, good, "--format", "json", root[0], root[1]]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one JSON array");
    let files: Vec<&str> = v
        .as_array()
        .map(|a| a.iter().filter_map(|d| d["file"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        !files.is_empty() && files.iter().all(|f| f.ends_with("broken.conf")),
        "{v}"
    );
    // Both good: status 0.
    let both = common::plugtop(&["check", good, good, root[0], root[1]]);
    assert_eq!(both.status.code(), Some(0));
}

/// Issue 45: docs/lsp.md sends users to `plugtop generate editor NAME`,
/// which `plugtop --help` did not list.
#[test]
fn help_lists_generate_for_the_editor_set_ups() {
    let o = common::plugtop(&["--help"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("generate ")),
        "{text}"
    );
}

/// newuser51 #16: `record` stopped by Ctrl-C or SIGTERM (the usual way)
/// ends with the summary `--count` gives, status 0, the file whole.
#[test]
fn record_stopped_by_a_signal_says_its_summary() {
    for signal in [rustix::process::Signal::INT, rustix::process::Signal::TERM] {
        let dir = tempfile::tempdir().expect("temporary directory");
        let rec = dir.path().join("x.rec");
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
            .args(["record", "-o"])
            .arg(&rec)
            .args([
                "--root",
                "tests/fixtures/roots/newkernel",
                "--interval",
                "0.01",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("record starts");
        let mut record = common::Spawned::new(child);
        // Two samples written: the header and more than one sample's bytes.
        let header = 200;
        common::wait_until("samples in the recording", || {
            std::fs::metadata(&rec).is_ok_and(|m| m.len() > header)
        });
        record.signal(signal);
        let o = record.finish("record after a stop signal");
        assert!(o.status.success(), "{signal:?}: {}", stdout(&o));
        let said = stdout(&o);
        assert!(
            said.contains("recorded ") && said.contains(" bytes per sample"),
            "{signal:?}: {said}"
        );
        // newuser51 #21: it said nothing at the start either; the first
        // line says what goes where and how it stops.
        let first = said.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            format!(
                "recording tests/fixtures/roots/newkernel every 0.01 s to {}; Ctrl-C stops",
                rec.display()
            ),
            "{signal:?}: {said}"
        );
        let replayed = plugtop(
            &["eval", "-c", "examples/rules/cpu-loadavg.conf", "--replay"]
                .into_iter()
                .chain([rec.to_str().expect("utf-8 path")])
                .collect::<Vec<_>>(),
        );
        assert!(
            !crate::common::said(&replayed).contains("truncated"),
            "{}",
            crate::common::said(&replayed)
        );
    }
}

/// newuser51 #21, plurals: one sample recorded is "1 sample".
#[test]
fn record_of_one_sample_says_one_sample() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("one.rec");
    let record = |to: &std::path::Path, count: &str| {
        plugtop(&[
            "record",
            "-o",
            to.to_str().expect("utf-8 path"),
            "--root",
            "tests/fixtures/roots/newkernel",
            "--count",
            count,
        ])
    };
    let o = record(&rec, "1");
    let said = stdout(&o);
    assert!(o.status.success(), "{said}");
    assert!(said.contains(", 1 sample; Ctrl-C stops"), "{said}");
    assert!(said.contains("recorded 1 sample to "), "{said}");
    // adv52 #9: the same file again is refused in words, not the OS's;
    // `--count 0` is refused as `--interval 0` is, and writes nothing.
    let again = record(&rec, "1");
    let said = crate::common::said(&again);
    assert_ne!(again.status.code(), Some(0), "{said}");
    assert!(
        said.contains("it exists, and plugtop never overwrites a recording"),
        "{said}"
    );
    assert!(!said.contains("os error"), "{said}");
    let none = dir.path().join("none.rec");
    let zero = record(&none, "0");
    let said = crate::common::said(&zero);
    assert_eq!(zero.status.code(), Some(2), "{said}");
    assert!(said.contains("--count 0 would record nothing"), "{said}");
    assert!(!none.exists(), "nothing written");
}

/// nu54 M2: `check` exits 1 for a file it cannot read, alone as among
/// others (cpuplugd exits 1 when it cannot open its file; alone it was 2),
/// says it in words and checks the others; `check --help` names the codes.
#[test]
fn check_exits_1_for_a_missing_file_alone_or_among_others() {
    let dir = crate::common::tempdir();
    let missing = dir.path().join("nonexist.conf");
    let missing = missing.to_str().expect("utf-8");
    for args in [
        vec!["check", missing],
        vec!["check", missing, "examples/rules/cpu-loadavg.conf"],
    ] {
        let o = plugtop(&args);
        let err = crate::common::said(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!("cannot read {missing}: no such file or directory")),
            "{err}"
        );
        assert!(!err.contains("os error"), "{err}");
    }
    let o = plugtop(&["check", missing, "examples/rules/cpu-loadavg.conf"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("cpuplugd would load it"),
        "the other file is still checked"
    );
    let help = plugtop(&["check", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("Exit status: 0 every file would load"),
        "{help}"
    );
}
