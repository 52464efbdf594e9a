//! How `plugtop sim --serve DIR` ends: it says at its start how long it
//! runs and what comes at the end; after the scenario the guest goes on
//! idle (its /proc/stat ticks keep advancing, so a daemon on DIR never
//! sees time stand still) until a signal; `--duration` ends it instead.
//! Hostile: `--duration 0`, an absurd and a huge duration, and a signal
//! during the longest wait there is.

use crate::common::{Spawned, hang_guard, tempdir, text, wait_until};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

/// A scenario of two seconds: one phase that keeps both CPUs busy.
const TINY: &str = "name = \"tiny\"\ncpus = 2\nonline = 2\nmemory_mib = 1024\nduration = \"0:02\"\n\n[[phases]]\nname = \"busy\"\nstart = \"0:00\"\nthreads = 2\ncpu_per_thread = 1\nworking_set_mib = 100\n";

/// `plugtop sim SCENARIO --serve DIR ARGS…` started, with its standard
/// error's lines arriving on the receiver as they are written.
fn serving(scenario: &Path, dir: &Path, args: &[&str]) -> (Spawned, Receiver<String>) {
    let child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .arg("sim")
        .arg(scenario)
        .arg("--serve")
        .arg(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run plugtop sim --serve");
    let mut child = Spawned::new(child);
    let stderr = child.child().stderr.take().expect("stderr piped");
    let (tx, rx) = channel();
    // A message wraps at 80 columns, its rows after the first indented,
    // and comes in one write: each is sent whole, once the next starts or
    // nothing more has come.
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut message: Option<String> = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = line.trim_end_matches('\n').to_string();
            match message.as_mut() {
                Some(m) if line.starts_with("  ") => {
                    m.push(' ');
                    m.push_str(line.trim_start());
                }
                _ => {
                    if let Some(m) = message.replace(line)
                        && tx.send(m).is_err()
                    {
                        return;
                    }
                }
            }
            if reader.buffer().is_empty()
                && let Some(m) = message.take()
                && tx.send(m).is_err()
            {
                return;
            }
        }
        if let Some(m) = message {
            let _ = tx.send(m);
        }
    });
    (child, rx)
}

/// The next line of standard error that contains `what`, the lines before
/// it included; fails if it ends first or past the hang guard.
fn line_with(rx: &Receiver<String>, what: &str) -> String {
    let mut seen = String::new();
    loop {
        match rx.recv_timeout(hang_guard()) {
            Ok(line) if line.contains(what) => return line,
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
            }
            Err(e) => panic!("no line with {what:?} ({e}); standard error was:\n{seen}"),
        }
    }
}

/// The total of the `cpu` line of the served /proc/stat, when there is one.
fn total_ticks(dir: &Path) -> Option<u64> {
    let stat = std::fs::read_to_string(dir.join("proc/stat")).ok()?;
    let cpu = stat.lines().find(|l| l.starts_with("cpu "))?;
    cpu.split_whitespace()
        .skip(1)
        .map(|n| n.parse::<u64>().ok())
        .sum()
}

fn tiny(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("tiny.toml");
    std::fs::write(&path, TINY).expect("scenario");
    path
}

#[test]
fn after_the_scenario_the_served_guest_goes_on_idle_until_sigterm() {
    let tmp = tempdir();
    let scenario = tiny(tmp.path());
    let served = tmp.path().join("served");
    let (child, rx) = serving(&scenario, &served, &["--fast"]);
    let start = line_with(&rx, "simulating tiny");
    for said in [
        "for the scenario's 0:02",
        "idle guest",
        "until stopped",
        "SIGTERM",
    ] {
        assert!(start.contains(said), "{said:?} not in: {start}");
    }
    let ended = line_with(&rx, "the scenario ended");
    assert!(ended.starts_with("0:02 "), "{ended}");
    // After the end, /proc/stat's ticks still advance: idle ones.
    let at_end = total_ticks(&served).expect("a served /proc/stat");
    wait_until("the idle guest's ticks advance", || {
        total_ticks(&served).is_some_and(|t| t > at_end)
    });
    let stat = std::fs::read_to_string(served.join("proc/stat")).expect("stat");
    let mut child = child;
    assert!(!child.has_ended(), "still serving");
    child.signal(rustix::process::Signal::TERM);
    let o = child.finish("sim --serve after SIGTERM");
    assert!(o.status.success(), "{}", text(&o));
    // Every line it wrote before it ended: the reader thread may still be
    // passing the last ones on, so wait for it to see the end of the pipe
    // (the sender dropped), not only for what has arrived by now.
    let rest: Vec<String> = std::iter::from_fn(|| rx.recv_timeout(hang_guard()).ok()).collect();
    assert!(
        rest.iter()
            .any(|l| l.contains("ended by SIGTERM") && l.contains("serving stopped")),
        "{rest:?}"
    );
    // The ticks that came after the end are idle ones: the busy phase had
    // both CPUs working, the idle guest adds to `idle` only.
    let cpu: Vec<u64> = stat
        .lines()
        .find(|l| l.starts_with("cpu "))
        .expect("cpu line")
        .split_whitespace()
        .skip(1)
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(cpu[3] > 0, "idle ticks: {stat}");
}

#[test]
fn with_a_duration_serving_ends_there_and_says_so() {
    let tmp = tempdir();
    let scenario = tiny(tmp.path());
    let served = tmp.path().join("served");
    let (child, rx) = serving(&scenario, &served, &["--fast", "--duration", "3s"]);
    let start = line_with(&rx, "simulating tiny");
    assert!(
        start.contains("for 0:03 (--duration)") && start.contains("then it stops"),
        "{start}"
    );
    let o = child.finish("sim --serve --duration 3s");
    assert!(o.status.success(), "{}", text(&o));
    let end = line_with(&rx, "--duration reached");
    assert!(end.contains("at 0:03"), "{end}");
    assert!(served.join("proc/stat").is_file());
}

#[test]
fn a_duration_of_nothing_or_beyond_a_year_is_refused_and_nothing_written() {
    let tmp = tempdir();
    let scenario = tiny(tmp.path());
    let served = tmp.path().join("served");
    for d in ["0", "0s", "-5", "99999999h", "1e400", "nan"] {
        let o = crate::common::plugtop(&[
            "sim",
            &scenario.to_string_lossy(),
            "--serve",
            &served.to_string_lossy(),
            "--fast",
            &format!("--duration={d}"),
        ]);
        assert!(!o.status.success(), "--duration {d}: {}", text(&o));
        assert!(text(&o).contains("--duration"), "{d}: {}", text(&o));
        assert!(!served.exists(), "--duration {d}: nothing written");
    }
}

#[test]
fn sigterm_ends_a_year_long_serve_in_its_slowest_wait() {
    // A year at the slowest pace: each simulated second is a wait of
    // 1000 s, which the signal must cut short.
    let tmp = tempdir();
    let scenario = tiny(tmp.path());
    let served = tmp.path().join("served");
    let (mut child, rx) = serving(
        &scenario,
        &served,
        &["--duration", "366d", "--speed", "0.001"],
    );
    let start = line_with(&rx, "simulating tiny");
    assert!(
        start.contains("for 8784:00:00 (--duration) at --speed 0.001"),
        "{start}"
    );
    wait_until("the guest published at the start", || {
        served.join("proc/stat").is_file()
    });
    child.signal(rustix::process::Signal::TERM);
    let o = child.finish("sim --serve --speed 0.001 after SIGTERM");
    assert!(o.status.success(), "{}", text(&o));
    let end = line_with(&rx, "ended by SIGTERM");
    assert!(end.contains("at 0:00"), "{end}");
}
