//! Small inputs with big costs, and kernel files that are not what they
//! should be: every command answers or refuses at once, output and memory
//! stay bounded, and a run that meets them mid-way ends as cpuplugd would.
//! No time bound decides a pass here (CI shares a loaded 2-core machine):
//! a hang fails past `common::hang_guard()`, and what these cases cost is
//! measured by `scripts/hostile-inputs.sh`.

use crate::common;

use std::io::{BufRead, Read};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use std::sync::mpsc::RecvTimeoutError;
use std::time::Instant;

use common::FakeRoot;
use rustix::process::Signal;

fn rule_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("rule file");
    path.display().to_string()
}

/// Runs plugtop with `args` to its end (a hang fails the test, past
/// [`common::hang_guard()`]); output past 64 MiB is not kept (and fails the
/// caller).
fn capped(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("plugtop");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut stdout).take(64 << 20).read_to_end(&mut kept);
        kept
    });
    let mut stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut stderr).take(64 << 20).read_to_end(&mut kept);
        kept
    });
    let status = common::Spawned::new(child)
        .finish(&format!("plugtop {args:?}"))
        .status;
    Output {
        status,
        stdout: reader.join().unwrap_or_default(),
        stderr: errors.join().unwrap_or_default(),
    }
}

fn eval_args(rules: &str) -> Vec<&str> {
    vec![
        "eval",
        "-c",
        rules,
        "--root",
        "tests/fixtures/roots/oldkernel",
        "--count",
        "3",
        "--interval",
        "0.001",
        "--trace",
    ]
}

/// Item 10: ten thousand unused variables.
#[test]
fn ten_thousand_unused_variables_are_checked_and_evaluated() {
    let dir = common::tempdir();
    let mut text = String::from(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    );
    for i in 0..10_000 {
        text.push_str(&format!("v{i}=\"{i}\"\n"));
    }
    let rules = rule_file(dir.path(), "unused.conf", &text);
    for args in [vec!["check", rules.as_str()], eval_args(&rules)] {
        let out = capped(&args);
        assert!(out.status.code().is_some(), "{args:?} ended by a signal");
    }
}

/// Item 11: twelve rule lines, each reaching the million-node guard
/// through variables that double at every level.
#[test]
fn rules_that_expand_past_a_million_terms_are_refused_at_once() {
    let dir = common::tempdir();
    let mut text = String::from("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\na0=\"1\"\n");
    for i in 1..=20 {
        text.push_str(&format!("a{i}=\"a{}+a{}\"\n", i - 1, i - 1));
    }
    for k in 0..12 {
        text.push_str(&format!("HOTPLUG=\"a20>{k}\"\n"));
    }
    text.push_str("HOTUNPLUG=\"0\"\n");
    assert!(text.len() < 600);
    let rules = rule_file(dir.path(), "expand.conf", &text);
    let out = capped(&["check", &rules]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned() + &crate::common::said(&out);
    assert!(
        report.contains("more than a million terms"),
        "the refusal says why: {report}"
    );
    let out = capped(&eval_args(&rules));
    assert_eq!(out.status.code(), Some(1));
    // Just under the guard, every rule loads and evaluates.
    let mut text = String::from("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\na0=\"1\"\n");
    for i in 1..=16 {
        text.push_str(&format!("a{i}=\"a{}+a{}\"\n", i - 1, i - 1));
    }
    text.push_str("HOTPLUG=\"a16>1\"\nHOTUNPLUG=\"a16<1\"\n");
    let rules = rule_file(dir.path(), "big.conf", &text);
    let out = capped(&eval_args(&rules));
    assert!(out.status.success(), "{}", crate::common::said(&out));
    let trace = String::from_utf8_lossy(&out.stdout);
    assert!(trace.contains("(as above)"), "a variable is drawn once");
}

/// Item 12: `!` runs thousands deep, through variables: the trace stays
/// small, and so does `whatif`'s output.
#[test]
fn deep_prefix_chains_print_a_bounded_trace() {
    let dir = common::tempdir();
    let bangs = "!".repeat(2000);
    let mut text = format!(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nv0=\"{bangs}1\"\nv1=\"{bangs}v0\"\n"
    );
    for rule in ["HOTPLUG", "HOTUNPLUG", "MEMPLUG", "MEMUNPLUG"] {
        text.push_str(&format!("{rule}=\"{bangs}v1\"\n"));
    }
    // A left-leaning chain 600 deep, and a variable used many times.
    let sum = vec!["v0"; 300].join("+");
    text.push_str(&format!("CMM_INC=\"{sum}\"\n"));
    text.push_str(&format!("CMM_DEC=\"{}\"\n", vec!["1"; 600].join("-")));
    let rules = rule_file(dir.path(), "bang.conf", &text);
    let out = capped(&eval_args(&rules));
    assert!(
        out.stdout.len() < 1 << 20,
        "{} bytes of trace",
        out.stdout.len()
    );
    let trace = String::from_utf8_lossy(&out.stdout);
    assert!(trace.contains("× `!` in a row"), "{trace}");
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/series/oldkernel");
    let snapshots = snapshots.display().to_string();
    let out = capped(&["whatif", "-c", &rules, "--snapshots", &snapshots]);
    assert!(out.stdout.len() < 4 << 20, "{} bytes", out.stdout.len());
}

/// The trace never grows with the square of the depth, for any shape.
#[test]
fn trace_lines_never_grow_with_depth() {
    let dir = common::tempdir();
    let parens = format!("{}1{}", "(".repeat(900), ")".repeat(900));
    let text = format!(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"{parens}\"\nHOTUNPLUG=\"{}\"\n",
        vec!["1"; 900].join("+")
    );
    let rules = rule_file(dir.path(), "deep.conf", &text);
    let out = capped(&eval_args(&rules));
    let trace = String::from_utf8_lossy(&out.stdout);
    let widest = trace.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    // Indentation stops at MAX_INDENT levels (3 columns each), a label at
    // LABEL_MAX characters; the rest is the depth, the value and the frame.
    let bound = 3 * plugtop::report::trace::MAX_INDENT + plugtop::report::trace::LABEL_MAX + 60;
    assert!(widest < bound, "a line of {widest} characters");
    assert!(trace.contains("the rest is left out"), "{trace}");
}

/// Item 8: kernel files that never end, or are far too long.
#[test]
fn endless_or_huge_kernel_files_are_refused_with_their_name() {
    let dir = common::tempdir();
    let rules = rule_file(
        dir.path(),
        "r.conf",
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    );
    for (file, what) in [
        ("proc/stat", "zero"),
        ("proc/sys/vm/cmm_pages", "zero"),
        ("proc/stat", "huge"),
        ("proc/meminfo", "huge"),
    ] {
        let root = FakeRoot::guest(2);
        let path = root.path().join(file);
        let _ = std::fs::remove_file(&path);
        // The link resolves inside the root, as in a chroot: it leads to
        // /dev/zero only where the root has one (made when this test may
        // make device files); elsewhere the file is simply missing.
        let mut endless = true;
        if what == "zero" {
            symlink("/dev/zero", &path).expect("link");
            endless = common::zero_device_in(root.path());
        } else {
            std::fs::write(&path, vec![b'7'; 32 << 20]).expect("huge file");
        }
        let root_arg = root.path().display().to_string();
        let out = capped(&[
            "eval",
            "-c",
            &rules,
            "--root",
            &root_arg,
            "--count",
            "2",
            "--interval",
            "0.001",
        ]);
        let err = String::from_utf8_lossy(&out.stdout).into_owned() + &crate::common::said(&out);
        let named = file.rsplit('/').next().unwrap_or(file);
        if endless || file == "proc/stat" {
            assert!(!out.status.success(), "{file} {what}: {err}");
            assert!(err.contains(named), "{file} {what}: {err}");
        } else {
            // No /dev/zero in the root: cmm_pages reads as absent, and the
            // machine's own /dev/zero is never opened.
            assert!(out.status.success(), "{file} {what}: {err}");
        }
    }
}

/// `plugtop run -f` on `root` with `rules`, an interval every 20 ms, its
/// stderr kept for the assertions.
fn spawn_run(root: &std::path::Path, rules: &std::path::Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "--interval-ms", "20", "-c"])
        .arg(rules)
        .arg("--root")
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run")
}

/// The reading number and CMM_INC of a verbose log's interval line
/// (`TIME READING HOTPLUG HOTUNPLUG CPU MEMPLUG MEMUNPLUG CMM_INC CMM_DEC
/// POOL`), counting columns from the end as the CPU column may be empty.
fn interval_line(line: &str) -> Option<(u64, String)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let reading = words.get(1)?.parse().ok()?;
    let inc = words.len().checked_sub(3).and_then(|i| words.get(i))?;
    Some((reading, (*inc).to_string()))
}

/// Item 7: an online list that wraps the count or names a billion CPUs
/// appears while `plugtop run` runs: no abort, and SIGTERM still ends it
/// with the guest put back.
#[test]
fn a_wrapping_online_list_mid_run_never_aborts_the_daemon() {
    for list in ["3-1\n", "0-1000000000\n", "18446744073709551616\n"] {
        let root = FakeRoot::guest(4);
        for i in 0..4 {
            root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), "1\n");
            root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
        }
        // CMM_INC shows the load average in the verbose log: the mark
        // that says which intervals read the files after the list came.
        let rules = root.path().join("rules.conf");
        std::fs::write(
            &rules,
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"1\"\n\
             CMM_MIN=\"0\"\nCMM_MAX=\"0\"\nCMM_INC=\"loadavg\"\nCMM_DEC=\"1\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"0\"\n",
        )
        .expect("rules");
        let mut child = common::Spawned::new(
            Command::new(env!("CARGO_BIN_EXE_plugtop"))
                .args(["run", "-f", "-V", "--interval-ms", "20", "-c"])
                .arg(&rules)
                .arg("--root")
                .arg(root.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run"),
        );
        // The verbose log's interval lines come on stdout.
        let stdout = child.child().stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Reads the log until `want` holds for an interval line: its
        // reading number, or None when the run ended first.
        let until = |want: &dyn Fn(u64, &str) -> bool| {
            let deadline = Instant::now() + common::hang_guard();
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match lines.recv_timeout(left) {
                    Ok(line) => match interval_line(&line) {
                        Some((n, inc)) if want(n, &inc) => return Some(n),
                        _ => {}
                    },
                    Err(RecvTimeoutError::Disconnected) => return None,
                    Err(RecvTimeoutError::Timeout) => {
                        panic!("{list:?}: not seen in {:?}", common::hang_guard())
                    }
                }
            }
        };
        assert!(
            until(&|_, _| true).is_some(),
            "{list:?}: the run never started"
        );
        root.write("sys/devices/system/cpu/online", list);
        root.write("proc/loadavg", "9.00 0.30 0.20 2/150 4242\n");
        // An interval that saw the new load average may have read the
        // list before it changed; the one after it read the list for sure.
        // It goes on (or stops as cpuplugd would) without aborting.
        let running = match until(&|_, inc| inc == "9") {
            Some(marked) => until(&|n, _| n > marked).is_some(),
            None => false,
        };
        if running {
            child.signal(Signal::TERM);
        }
        let out = child.finish(&format!("{list:?}: plugtop run after SIGTERM"));
        let (status, err) = (out.status, crate::common::said(&out));
        assert!(
            status.code().is_some_and(|c| c == 0 || c == 1),
            "{list:?}: ended by {status:?}: {err}"
        );
        for i in 0..4 {
            let on = std::fs::read_to_string(
                root.path()
                    .join(format!("sys/devices/system/cpu/cpu{i}/online")),
            )
            .unwrap_or_default();
            assert_eq!(on, "1\n", "{list:?}: cpu{i} back online: {err}");
        }
    }
}

/// `plugtop sim` on the scenario `text` (written to DIR/s.toml) with the
/// modern rules, fast, to its report, `extra` arguments after.
fn sim_report(dir: &Path, text: &str, extra: &[&str]) -> Output {
    let path = dir.join("s.toml");
    std::fs::write(&path, text).expect("scenario");
    let scenario = path.display().to_string();
    let mut args = vec![
        "sim",
        &scenario,
        "-c",
        "examples/rules/recommended-modern.conf",
        "--fast",
        "--report",
    ];
    args.extend_from_slice(extra);
    capped(&args)
}

/// Item 13: scenario numbers that are not numbers, durations that run
/// backwards or for a century, and ten thousand phases.
#[test]
fn hostile_scenarios_are_refused_or_run_to_the_end() {
    let dir = common::tempdir();
    let base = "name = \"x\"\ncpus = 2\nduration = \"1:00\"\n";
    let phase = "[[phases]]\nstart = \"0\"\nthreads = 1\nworking_set_mib = 3\n";
    for (memory, field) in [
        ("nan", "memory_mib"),
        ("inf", "memory_mib"),
        ("1e308", "memory_mib"),
    ] {
        let out = sim_report(
            dir.path(),
            &format!("{base}memory_mib = {memory}\n\n{phase}"),
            &[],
        );
        let err = crate::common::said(&out);
        assert!(!out.status.success(), "{memory}: {err}");
        assert!(err.contains(field), "{memory}: {err}");
    }
    let fine = format!("{base}memory_mib = 1024\n\n{phase}");
    for duration in ["-0:30:00", "1:-30", "1e18", "876000:00:00"] {
        let flag = format!("--duration={duration}");
        let out = sim_report(dir.path(), &fine, &[&flag]);
        assert!(!out.status.success(), "{duration} is refused");
    }
    let mut many =
        "name = \"x\"\ncpus = 2\nmemory_mib = 1024\nduration = \"10:00:00\"\n".to_string();
    for i in 0..10_000 {
        many.push_str(&format!(
            "[[phases]]\nstart = \"{}\"\nthreads = {}\nworking_set_mib = 3\n",
            i * 3,
            i % 3
        ));
    }
    let out = sim_report(dir.path(), &many, &[]);
    assert!(out.status.success(), "{}", crate::common::said(&out));
}

/// adv51: what `sim` says of a hostile scenario is bounded and placed: a
/// syntax error on a line of almost 1 MB is one short `FILE:LINE:COL:
/// error:` line (it was the line and a caret row, twice its size), a
/// name as long is cut in the report, and a file past 1 MiB (a 10 MB file
/// of phases took 347 MB to parse) is refused before it is parsed, the
/// limit named.
#[test]
fn hostile_scenarios_get_bounded_placed_answers() {
    let dir = common::tempdir();
    let head = "name = \"x\"\ncpus = 2\nmemory_mib = 1024\nduration = \"0:10\"\n";
    let sim = |text: &str| sim_report(dir.path(), text, &[]);
    let out = sim(&format!("{head}zz = \"{}\" x\n", "B".repeat(1_000_000)));
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(2), "{err:.300}");
    assert!(
        err.len() < 2000 && err.lines().count() == 1,
        "{} bytes: {err:.300}",
        err.len()
    );
    assert!(
        err.contains("s.toml:5:") && err.contains(": error: "),
        "{err}"
    );
    let out = sim(&head.replace("\"x\"", &format!("\"{}\"", "A".repeat(1_000_000))));
    assert!(out.status.success(), "{}", crate::common::said(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.len() < 20_000, "{} bytes of report", report.len());
    assert!(
        report.contains("bytes more)"),
        "says it cut the name: {report:.400}"
    );
    let phase = "[[phases]]\nstart = \"1\"\nthreads = 1\n";
    let out = sim(&format!("{head}{}", phase.repeat(400_000)));
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(2), "{err:.300}");
    assert!(
        err.contains("larger than 1 MiB (1048576 bytes), the most a scenario file holds"),
        "{err:.300}"
    );
}

/// Item 4: a restore that fails at exit keeps the journal, exits non-zero
/// and says what is left and how to retry.
#[test]
fn a_failed_restore_at_exit_keeps_the_journal() {
    let root = FakeRoot::guest(2);
    // The online CPUs' directories: without them `run` would not act (a
    // journal of them could not be restored).
    for i in 0..2 {
        root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), "1\n");
    }
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nCMM_INC=\"10\"\nCMM_DEC=\"1\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n",
    )
    .expect("rules");
    let mut child = common::Spawned::new(spawn_run(root.path(), &rules));
    let pool = root.path().join("proc/sys/vm/cmm_pages");
    common::wait_until("the pool never grew", || {
        std::fs::read_to_string(&pool).unwrap_or_default().trim() == "100"
    });
    // The pool can no longer be written: the restore at exit fails.
    std::fs::remove_file(&pool).expect("remove");
    std::fs::create_dir(&pool).expect("a directory in its place");
    child.signal(Signal::TERM);
    let out = child.finish("plugtop run after SIGTERM");
    let (status, err) = (out.status, crate::common::said(&out));
    assert!(!status.success(), "a failed restore is a failure: {err}");
    assert!(
        root.path().join("run/plugtop/state").exists(),
        "the journal is kept"
    );
    assert!(err.contains("plugtop restore"), "says how to retry: {err}");
}

/// The lock refusal is said once.
#[test]
fn a_held_lock_is_reported_once() {
    let root = FakeRoot::guest(2);
    let lock = root.path().join("var/lock/cpuplugd.lock");
    std::fs::create_dir_all(root.path().join("var/lock")).expect("dir");
    let held = std::fs::File::create(&lock).expect("lock file");
    held.lock().expect("hold the lock");
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let (rules, root_arg) = (
        rules.display().to_string(),
        root.path().display().to_string(),
    );
    for detached in [false, true] {
        let mut args = vec!["run", "-c", &rules, "--root", &root_arg];
        if !detached {
            args.insert(1, "-f");
        }
        let out = capped(&args);
        let err = crate::common::said(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(
            err.matches("is locked").count(),
            1,
            "detached {detached}: {err}"
        );
    }
}

/// nu53 F4: a recording given as a rule file (`check`, every command's
/// `-c`) printed a diagnostic for each of its lines, binary quoted, 4,910
/// lines for six minutes of readings. What it is and what cpuplugd would
/// do with it are said in one message (wrapped at 80 columns), as `train
/// grade` says it; so for a file of NUL bytes or one that is no text.
#[test]
fn a_recording_or_a_binary_file_given_as_rules_is_said_in_one_message() {
    let dir = common::tempdir();
    let rec = dir.path().join("osc.rec");
    common::record_simulated("oscillating", "oscillating-tight", 360.0, 1.0, &rec);
    let rec = rec.display().to_string();
    let nul = dir.path().join("nul.conf");
    let mut bytes = b"UPDATE=\"1\"\n".repeat(50);
    bytes.extend([0, 1, 2, b'\n']);
    std::fs::write(&nul, bytes).expect("a file with NUL bytes");
    let nul = nul.display().to_string();
    let noise = dir.path().join("noise.conf");
    let noise_bytes: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 0x80)
        .collect();
    std::fs::write(&noise, noise_bytes).expect("a file of no text");
    let noise = noise.display().to_string();
    // One message: its rows after the first indented.
    let one_message = |text: &str| {
        let rows: Vec<&str> = text.trim_end().lines().collect();
        !rows.is_empty() && rows[1..].iter().all(|r| r.starts_with("  ")) && rows.len() <= 4
    };
    for (file, what) in [
        (
            &rec,
            "is a plugtop recording, not a rule file (--replay plays it)",
        ),
        (&nul, "is a binary file, not a rule file"),
        (&noise, "is a binary file, not a rule file"),
    ] {
        let check = capped(&["check", file]);
        let said = String::from_utf8_lossy(&check.stdout).into_owned();
        let flat = said.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(check.status.code(), Some(1), "{said}");
        assert!(one_message(&said), "check {file}:\n{said}");
        assert!(
            flat.contains(&format!(
                "{file}: error: {file} {what}; cpuplugd would refuse it: "
            )),
            "{said}"
        );
        for args in [
            vec!["-c", file, "--batch"],
            vec!["sim", "examples/scenarios/oscillating.toml", "-c", file],
        ] {
            let o = capped(&args);
            let err = crate::common::said(&o);
            assert!(!o.status.success(), "{args:?}");
            assert!(one_message(&err), "{args:?}:\n{err}");
            assert!(err.contains("not a rule file"), "{args:?}:\n{err}");
        }
    }
    let recording = capped(&["check", &rec]);
    let said = String::from_utf8_lossy(&recording.stdout).replace("\n  ", " ");
    assert!(
        said.contains("cpuplugd would refuse it: Line is too long"),
        "{said}"
    );
}
