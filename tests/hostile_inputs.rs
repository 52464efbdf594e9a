//! Small inputs with big costs, and kernel files that are not what they
//! should be: every command answers or refuses at once, output and memory
//! stay bounded, and a run that meets them mid-way ends as cpuplugd would.
//! Time bounds here are generous guards against the old behaviour (tens of
//! seconds); the figures themselves come from `scripts/hostile-inputs.sh`.

mod common;

use std::io::Read;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::FakeRoot;

/// A hang guard, not a timing (CI shares a loaded 2-core machine): what
/// these cases cost is measured by `scripts/hostile-inputs.sh`.
const GUARD: Duration = Duration::from_secs(60);

fn rule_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("rule file");
    path.display().to_string()
}

/// Runs plugtop with `args`, killing it past [`GUARD`]; its output and how
/// long it took. Output past 64 MiB is not kept (and fails the caller).
fn timed(args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
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
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if started.elapsed() > GUARD {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = started.elapsed();
    let output = Output {
        status,
        stdout: reader.join().unwrap_or_default(),
        stderr: errors.join().unwrap_or_default(),
    };
    (output, took)
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
fn ten_thousand_unused_variables_are_checked_at_once() {
    let dir = common::tempdir();
    let mut text = String::from(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    );
    for i in 0..10_000 {
        text.push_str(&format!("v{i}=\"{i}\"\n"));
    }
    let rules = rule_file(dir.path(), "unused.conf", &text);
    for args in [vec!["check", rules.as_str()], eval_args(&rules)] {
        let (out, took) = timed(&args);
        assert!(took < GUARD, "{args:?} took {took:?}");
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
    let (out, took) = timed(&["check", &rules]);
    assert!(took < GUARD, "check took {took:?}");
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        report.contains("more than a million terms"),
        "the refusal says why: {report}"
    );
    let (out, took) = timed(&eval_args(&rules));
    assert!(took < GUARD, "eval took {took:?}");
    assert_eq!(out.status.code(), Some(1));
    // Just under the guard, every rule loads and evaluates.
    let mut text = String::from("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\na0=\"1\"\n");
    for i in 1..=16 {
        text.push_str(&format!("a{i}=\"a{}+a{}\"\n", i - 1, i - 1));
    }
    text.push_str("HOTPLUG=\"a16>1\"\nHOTUNPLUG=\"a16<1\"\n");
    let rules = rule_file(dir.path(), "big.conf", &text);
    let (out, took) = timed(&eval_args(&rules));
    assert!(took < GUARD, "eval took {took:?}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let (out, took) = timed(&eval_args(&rules));
    assert!(took < GUARD, "eval took {took:?}");
    assert!(
        out.stdout.len() < 1 << 20,
        "{} bytes of trace",
        out.stdout.len()
    );
    let trace = String::from_utf8_lossy(&out.stdout);
    assert!(trace.contains("× `!` in a row"), "{trace}");
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/series/oldkernel");
    let snapshots = snapshots.display().to_string();
    let (out, took) = timed(&["whatif", "-c", &rules, "--snapshots", &snapshots]);
    assert!(took < GUARD, "whatif took {took:?}");
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
    let (out, took) = timed(&eval_args(&rules));
    assert!(took < GUARD, "eval took {took:?}");
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
        let (out, took) = timed(&[
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
        let err = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(took < GUARD, "{file} {what}: took {took:?}");
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

/// Item 7: an online list that wraps the count or names a billion CPUs
/// appears while `plugtop run` runs: no abort, and SIGTERM still ends it
/// with the guest put back.
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

#[test]
fn a_wrapping_online_list_mid_run_never_aborts_the_daemon() {
    for list in ["3-1\n", "0-1000000000\n", "18446744073709551616\n"] {
        let root = FakeRoot::guest(4);
        for i in 0..4 {
            root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), "1\n");
            root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
        }
        let rules = root.path().join("rules.conf");
        std::fs::write(
            &rules,
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"1\"\n",
        )
        .expect("rules");
        let mut child = spawn_run(root.path(), &rules);
        // Once the journal is there, the run has started.
        let journal = root.path().join("run/plugtop/state");
        let deadline = Instant::now() + GUARD;
        while !journal.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if !journal.exists() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{list:?}: the run never started");
        }
        root.write("sys/devices/system/cpu/online", list);
        // It goes on (or stops as cpuplugd would) without aborting.
        let deadline = Instant::now() + Duration::from_millis(600);
        let mut ended = None;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                ended = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if ended.is_none() {
            let pid = child.id().to_string();
            let _ = Command::new("kill").args(["-TERM", &pid]).status();
            let deadline = Instant::now() + GUARD;
            while ended.is_none() && Instant::now() < deadline {
                ended = child.try_wait().ok().flatten();
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let still_running = ended.is_none();
        let _ = child.kill();
        let waited = child.wait();
        assert!(!still_running, "{list:?}: still running after SIGTERM");
        let Some(status) = ended.or(waited.ok()) else {
            panic!("{list:?}: no exit status");
        };
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
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

/// Item 13: scenario numbers that are not numbers, durations that run
/// backwards or for a century, and ten thousand phases.
#[test]
fn hostile_scenarios_are_refused_or_run_fast() {
    let dir = common::tempdir();
    let base = "name = \"x\"\ncpus = 2\nduration = \"1:00\"\n";
    let phase = "[[phases]]\nstart = \"0\"\nthreads = 1\nworking_set_mib = 3\n";
    for (memory, field) in [
        ("nan", "memory_mib"),
        ("inf", "memory_mib"),
        ("1e308", "memory_mib"),
    ] {
        let path = dir.path().join("s.toml");
        std::fs::write(&path, format!("{base}memory_mib = {memory}\n\n{phase}")).expect("s");
        let scenario = path.display().to_string();
        let (out, took) = timed(&[
            "sim",
            &scenario,
            "-c",
            "examples/rules/recommended-modern.conf",
            "--fast",
            "--report",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(took < GUARD);
        assert!(!out.status.success(), "{memory}: {err}");
        assert!(err.contains(field), "{memory}: {err}");
    }
    let path = dir.path().join("s.toml");
    std::fs::write(&path, format!("{base}memory_mib = 1024\n\n{phase}")).expect("s");
    let scenario = path.display().to_string();
    for duration in ["-0:30:00", "1:-30", "1e18", "876000:00:00"] {
        let flag = format!("--duration={duration}");
        let (out, took) = timed(&[
            "sim",
            &scenario,
            "-c",
            "examples/rules/recommended-modern.conf",
            "--fast",
            "--report",
            &flag,
        ]);
        assert!(took < GUARD, "{duration}: took {took:?}");
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
    std::fs::write(&path, many).expect("many phases");
    let (out, took) = timed(&[
        "sim",
        &scenario,
        "-c",
        "examples/rules/recommended-modern.conf",
        "--fast",
        "--report",
    ]);
    assert!(took < GUARD, "10,000 phases for 10 hours took {took:?}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
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
    let mut child = spawn_run(root.path(), &rules);
    let pool = root.path().join("proc/sys/vm/cmm_pages");
    let deadline = Instant::now() + GUARD;
    while std::fs::read_to_string(&pool).unwrap_or_default().trim() != "100" {
        assert!(Instant::now() < deadline, "the pool never grew");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The pool can no longer be written: the restore at exit fails.
    std::fs::remove_file(&pool).expect("remove");
    std::fs::create_dir(&pool).expect("a directory in its place");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + GUARD;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        assert!(Instant::now() < deadline, "still running after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
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
        let (out, _) = timed(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(
            err.matches("is locked").count(),
            1,
            "detached {detached}: {err}"
        );
    }
}
