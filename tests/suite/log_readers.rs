//! `plugtop run -f` beside a reader of its log that goes away or stops
//! reading. cpuplugd dies of SIGPIPE at its next write in the first case
//! (the guest left as it is) and waits in its write in the second (no
//! signal then puts the guest back); plugtop ends as SIGPIPE would have
//! ended it, guest put back, and never waits on its log.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::{self, FakeRoot, Spawned};

/// `plugtop run -f -V` observing a fake guest every `ms` milliseconds,
/// its stdout and stderr piped to the test.
fn observing(root: &FakeRoot, ms: &str) -> Spawned {
    observing_into(root, ms, Stdio::piped(), "0")
}

/// As [`observing`], its stderr to `stderr`, with `hotplug` as HOTPLUG.
fn observing_into(root: &FakeRoot, ms: &str, stderr: Stdio, hotplug: &str) -> Spawned {
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        format!(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"{hotplug}\"\nHOTUNPLUG=\"0\"\n"
        ),
    )
    .expect("rules");
    let child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args([
            "run",
            "-f",
            "-V",
            "--mode",
            "observe",
            "--interval-ms",
            ms,
            "-c",
        ])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start plugtop run");
    Spawned::new(child)
}

#[test]
fn a_reader_that_goes_away_ends_the_run_as_sigpipe_would() {
    let root = FakeRoot::guest(2);
    let mut run = observing(&root, "20");
    let stdout = run.child().stdout.take().expect("its log");
    // `| head -2`: two lines read, then the pipe closed.
    let mut log = BufReader::new(stdout);
    let mut line = String::new();
    for _ in 0..2 {
        line.clear();
        assert!(
            log.read_line(&mut line).expect("its log") > 0,
            "ended early"
        );
    }
    drop(log);
    let out = run.finish("plugtop run after its log's reader went away");
    let stderr = common::text(&out);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(
        stderr.contains("the log's reader went away") && stderr.contains("SIGPIPE"),
        "said on stderr, which is still open: {stderr}"
    );
}

#[test]
fn a_log_nobody_reads_never_holds_the_run_from_a_stop_signal() {
    let root = FakeRoot::guest(2);
    let mut run = observing(&root, "2");
    let stdout = run.child().stdout.take().expect("its log");
    // Never read: once the pipe is full a write there would wait until
    // a reader came, and SIGTERM would then end nothing.
    let size = rustix::pipe::fcntl_getpipe_size(&stdout).expect("the pipe's size");
    common::wait_until("the log's pipe full", || {
        rustix::io::ioctl_fionread(&stdout).is_ok_and(|n| n as usize + 256 >= size)
    });
    run.signal(rustix::process::Signal::TERM);
    let out = run.finish("plugtop run with a log nobody reads, after SIGTERM");
    // SIGTERM is how a service is stopped: 0, as cpuplugd.
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out));
    drop(stdout);
}

#[test]
fn a_stdout_nobody_reads_never_holds_what_goes_to_a_stderr_file() {
    // The test is the kernel: its ticks move now and then, so a reading
    // just after a move is a row on stdout (-V) and the readings between
    // two moves a warning on stderr (no ticks elapsed, for a rule over
    // them).
    let root = FakeRoot::guest(2);
    let errors = root.path().join("errors.txt");
    let file = std::fs::File::create(&errors).expect("stderr's file");
    let mut run = observing_into(&root, "2", Stdio::from(file), "idle > 50");
    let stdout = run.child().stdout.take().expect("its log");
    let mut ticks = 0;
    let mut tick = || {
        ticks += 100;
        root.stat(&[(0, [ticks, 0, 0, ticks, 0, 0, 0, 0, 0, 0]), (1, [0; 10])]);
    };
    let size = rustix::pipe::fcntl_getpipe_size(&stdout).expect("the pipe's size");
    common::wait_until("the log's pipe full", || {
        tick();
        rustix::io::ioctl_fionread(&stdout).is_ok_and(|n| n as usize + 256 >= size)
    });
    let len = || std::fs::metadata(&errors).map_or(0, |m| m.len());
    let held = len();
    common::wait_until("stderr's file growing while stdout is held", || {
        tick();
        len() > held + 4096
    });
    run.signal(rustix::process::Signal::TERM);
    let out = run.finish("plugtop run with a stdout nobody reads");
    assert_eq!(out.status.code(), Some(0));
    drop(stdout);
}
