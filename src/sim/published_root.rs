//! The simulated guest as a root directory: its /proc and /sys files are
//! rewritten every step of the model (a tenth of a simulated second), and whatever another program writes to
//! `cpuN/online` or `cmm_pages` is applied to the model. So `plugtop run
//! --root DIR`, a chrooted cpuplugd or a script can drive the simulator.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;

use super::Guest;
use crate::kernel::claimed_dir::DirUse;
use crate::kernel::fs::{FsError, Placing, StagedFiles};
use crate::kernel::fs::{Resolve, Root};
use crate::kernel::recording::export::write_root;
use crate::kernel::root::paths;

/// Files that change on their own; rewritten every step of the model.
const MOVING: [&str; 5] = [
    paths::STAT,
    paths::LOADAVG,
    paths::MEMINFO,
    paths::VMSTAT,
    paths::ONLINE,
];

/// The most a control file (`cpuN/online`, `cmm_pages`) may hold when it
/// is read back: one number and a newline, with room to spare.
const CONTROL_LIMIT: u64 = 64;

/// Writes the whole guest below `root` (the controls included), with the
/// /proc/cpuinfo and /proc/sysinfo of a z/VM guest, as cpuplugd expects.
/// `root` is a directory plugtop claimed
/// ([`claim`](crate::kernel::claimed_dir::claim)): every file is written
/// beneath it, whole, never through a link.
pub fn publish_all(guest: &Guest, root: &Root) -> Result<(), FsError> {
    let mut files = StagedFiles::new(root, Placing::REPLACE);
    write_root(&mut files, &guest.sample())?;
    let cpus = guest.scenario().cpus;
    let name = guest.scenario().name.to_uppercase();
    files.stage("proc/cpuinfo", zvm_cpuinfo(cpus).as_bytes())?;
    files.stage("proc/sysinfo", zvm_sysinfo(&name, cpus).as_bytes())?;
    files.stage(
        "proc/sys/kernel/hostname",
        format!("{}\n", guest.scenario().name.to_lowercase()).as_bytes(),
    )?;
    files.commit()
}

/// /proc/sysinfo as a z/VM guest named `name` (at most 8 characters, as
/// z/VM user IDs are) with `cpus` configured CPUs shows it.
pub fn zvm_sysinfo(name: &str, cpus: u32) -> String {
    format!(
        "Manufacturer:         IBM\nType:                 8561\nLPAR Name:            SIMLPAR\nLPAR CPUs Configured: 16\n\nVM00 Name:            {name:.8}\nVM00 Control Program: z/VM    7.3.0\nVM00 CPUs Total:      {cpus}\nVM00 CPUs Configured: {cpus}\nVM00 CPUs Standby:    0\n"
    )
}

/// /proc/cpuinfo as an s390x z/VM guest with `cpus` CPUs shows it.
pub fn zvm_cpuinfo(cpus: u32) -> String {
    let mut text = format!(
        "vendor_id       : IBM/S390\n# processors    : {cpus}\nbogomips per cpu: 3033.00\n"
    );
    for i in 0..cpus {
        text.push_str(&format!(
            "processor {i}: version = FF,  identification = 0ABCDE,  machine = 8561\n"
        ));
    }
    text
}

/// Rewrites the moving files below `root`: each written whole, then all
/// renamed into place together, so a reader's interval sees one second.
pub fn publish(guest: &Guest, root: &Root) -> Result<(), FsError> {
    let mut files = StagedFiles::new(root, Placing::REPLACE);
    let mut moving = |rel: &str, text: &str| {
        if MOVING.contains(&rel) {
            files.stage(rel, text.as_bytes())
        } else {
            Ok(())
        }
    };
    write_root(&mut moving, &guest.sample())?;
    files.commit()
}

/// A control file's text, trimmed; `None` when it is missing, unreadable,
/// not a regular file (a FIFO there is refused at once, never waited on)
/// or too long.
fn read_control(root: &Root, rel: &str) -> Option<String> {
    let bytes = root
        .read(Path::new(rel), CONTROL_LIMIT, Resolve::Beneath)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).trim().to_string())
}

/// Applies what someone wrote to the controls below `root`; returns what
/// changed, for the log.
pub fn take_writes(guest: &mut Guest, root: &Root) -> Vec<String> {
    let mut changes = Vec::new();
    for id in 0..guest.scenario().cpus {
        let online = read_control(root, &format!("{}/cpu{id}/online", paths::CPU_DIR));
        let want = match online.as_deref() {
            Some("1") => true,
            Some("0") => false,
            _ => continue,
        };
        if guest.cpu_online(id) != Some(want) {
            guest.set_cpu(id, want);
            changes.push(format!(
                "cpu{id} {}",
                if want { "online" } else { "offline" }
            ));
        }
    }
    if let Some(pages) = read_control(root, paths::CMM_PAGES).and_then(|t| t.parse::<i64>().ok())
        && pages != guest.pool()
    {
        guest.set_pool(pages);
        changes.push(format!("cmm_pages {pages}"));
        if guest.pool() != pages {
            // The pool could not grow that far: show what it really is.
            let shown = format!("{}\n", guest.pool());
            if let Err(e) =
                StagedFiles::new(root, Placing::REPLACE).put(paths::CMM_PAGES, shown.as_bytes())
            {
                changes.push(format!(
                    "cmm_pages not rewritten: {}",
                    crate::error_chain::text(&e)
                ));
            }
        }
    }
    changes
}

/// What [`serve`] does once the scenario has played to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtEnd {
    /// The guest goes on idle ([`Guest::go_idle`]): its ticks keep
    /// advancing (idle on the online CPUs), memory stays as at the end,
    /// until `stop` is set. A daemon on the files never sees time stand
    /// still.
    GoIdle,
    /// Serving ends (`--duration`); the files stay as they were.
    Stop,
}

/// Which part of serving a simulated second belongs to, for its pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Scenario,
    Idle,
}

/// How [`serve`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// `stop` was set (a signal).
    Stopped,
    /// The scenario ended and [`AtEnd::Stop`] was asked for.
    Ended,
}

/// How far the served guest moves between two publications: the model's
/// own step. A reader on a clock of its own (a daemon reading every second)
/// then sees the ticks move between any two of its readings; published a
/// whole second at a time, two readings a little less than a second apart
/// sometimes fell between the same two publications and saw no tick
/// elapse ("division by zero: no ticks elapsed", issue 45).
pub const PUBLISHED_STEP: f64 = super::model::STEP;

/// Plays `guest` below `root`, [`PUBLISHED_STEP`] of simulated time per
/// `wait` call, until
/// `stop` is set, or until the scenario's end when `at_end` says
/// [`AtEnd::Stop`]; with [`AtEnd::GoIdle`] it goes on as an idle guest
/// after the end (saying so through `on_line`).
pub fn serve(
    guest: &mut Guest,
    root: &Root,
    at_end: AtEnd,
    stop: &AtomicBool,
    wait: &mut dyn FnMut(Duration, Part),
    on_line: &mut dyn FnMut(&str),
) -> Result<Served, FsError> {
    publish_all(guest, root)?;
    let end = guest.scenario().length();
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(Served::Stopped);
        }
        if !guest.is_idle() && guest.t + 1e-9 >= end {
            match at_end {
                AtEnd::Stop => return Ok(Served::Ended),
                AtEnd::GoIdle => {
                    guest.go_idle();
                    on_line(&format!(
                        "{} the scenario ended: the guest goes on idle (idle ticks on its online CPUs, memory as it is) until stopped",
                        super::report::clock(guest.t)
                    ));
                }
            }
        }
        let part = if guest.is_idle() {
            Part::Idle
        } else {
            Part::Scenario
        };
        wait(Duration::from_secs_f64(PUBLISHED_STEP), part);
        if stop.load(Ordering::SeqCst) {
            return Ok(Served::Stopped);
        }
        for change in take_writes(guest, root) {
            on_line(&format!("{} {change}", super::report::clock(guest.t)));
        }
        guest.advance(PUBLISHED_STEP);
        publish(guest, root)?;
    }
}

/// `sim --serve DIR`: `guest` published below `root` at `pace` (simulated
/// seconds per real second; `None` is `--fast`), until a signal, or until
/// its end when `--duration` gave one (`until_duration`); without it, an
/// idle guest after the scenario's end. Says on `err` at the start how
/// long it runs and what comes at the end, every change written to the
/// controls, and at the end why it ended.
pub fn serve_below(
    root: &Path,
    mut guest: Guest,
    until_duration: bool,
    pace: Option<f64>,
    err: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    use crate::report::terminal_safe;
    // Refused before anything is written: `/`, or a directory that holds
    // someone else's files.
    let dir = crate::kernel::claimed_dir::claim(root, DirUse::ServedRoot)?;
    let signals = crate::daemon::Signals::install()?;
    let at_end = if until_duration {
        AtEnd::Stop
    } else {
        AtEnd::GoIdle
    };
    let said = format!("plugtop: {}", plan(root, guest.scenario(), at_end, pace));
    write!(
        err,
        "{}",
        crate::report::prose(&said, crate::report::stderr_width())
    )?;
    let mut wait = |d: Duration, part: Part| {
        // After the scenario, an idle guest at real time even under
        // --fast: as fast as it can, forever, would only burn a CPU.
        let speed = match (part, pace) {
            (_, Some(speed)) => speed,
            (Part::Idle, None) => 1.0,
            (Part::Scenario, None) => return,
        };
        let until = crate::pace::deadline(std::time::Instant::now(), crate::pace::scaled(d, speed));
        crate::pace::park_until(until, &|| signals.stop.load(Ordering::SeqCst));
    };
    let served = serve(
        &mut guest,
        &dir,
        at_end,
        &signals.stop,
        &mut wait,
        &mut |l| {
            let _ = writeln!(err, "{}", terminal_safe(l));
        },
    )
    .with_context(|| format!("cannot write below {}", root.display()))?;
    let why = match served {
        Served::Ended => "--duration reached".to_string(),
        Served::Stopped => format!(
            "ended by {}",
            crate::stop_signals::name(signals.stopped_by.load(Ordering::SeqCst))
        ),
    };
    let said = format!(
        "plugtop: {why} at {}: serving stopped; the files below {} stay as they are (a daemon on them sees no time pass)",
        super::report::clock(guest.t),
        terminal_safe(&root.display().to_string())
    );
    write!(
        err,
        "{}",
        crate::report::prose(&said, crate::report::stderr_width())
    )?;
    Ok(())
}

/// What `sim --serve` says at its start: where, how long, at what pace,
/// and what comes at the end.
fn plan(root: &Path, scenario: &super::Scenario, at_end: AtEnd, pace: Option<f64>) -> String {
    use crate::report::terminal_safe;
    let pace_text = |speed: Option<f64>| match speed {
        None => "as fast as it can (--fast)".to_string(),
        Some(1.0) => "at real time".to_string(),
        Some(s) => format!("at --speed {s}"),
    };
    let length = super::report::clock(scenario.length());
    let then = match at_end {
        AtEnd::Stop => format!(
            "for {length} (--duration) {}, then it stops and the files stay as they are at {length}",
            pace_text(pace)
        ),
        AtEnd::GoIdle => format!(
            "for the scenario's {length} {}, then as an idle guest (idle ticks on its online CPUs, memory as at the end) {} until stopped (--duration sets an end)",
            pace_text(pace),
            pace_text(Some(pace.unwrap_or(1.0)))
        ),
    };
    let root = root.display().to_string();
    let root = terminal_safe(&root);
    format!(
        "simulating {} below {root} {then}; point `plugtop --root {root}` or `plugtop run --root {root}` at it; Ctrl-C or SIGTERM stops it",
        terminal_safe(&scenario.name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Scenario;
    use std::fs;

    fn guest() -> Guest {
        let text = "name = \"t\"\ncpus = 3\nonline = 3\nmemory_mib = 1024\nduration = \"1:00\"\nphases = []\n";
        match Scenario::parse("t", text) {
            Ok(s) => Guest::new(&s, false),
            Err(e) => panic!("{e}"),
        }
    }

    /// [`guest`], and a root to publish it to in a new temporary directory.
    fn guest_and_root() -> (tempfile::TempDir, Guest, Root) {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        let root = Root::open(dir.path()).expect("root");
        (dir, guest(), root)
    }

    #[test]
    fn writes_to_the_controls_reach_the_model() {
        let (dir, mut g, root) = guest_and_root();
        assert!(publish_all(&g, &root).is_ok());
        assert!(take_writes(&mut g, &root).is_empty(), "nothing changed yet");
        let cpu2 = dir.path().join(format!("{}/cpu2/online", paths::CPU_DIR));
        assert!(fs::write(&cpu2, "0\n").is_ok());
        assert!(fs::write(dir.path().join(paths::CMM_PAGES), "1000\n").is_ok());
        let changes = take_writes(&mut g, &root);
        assert_eq!(changes, ["cpu2 offline", "cmm_pages 1000"]);
        assert_eq!((g.online_count(), g.pool()), (2, 1000));
        g.advance(1.0);
        assert!(publish(&g, &root).is_ok());
        let online = fs::read_to_string(dir.path().join(paths::ONLINE)).unwrap_or_default();
        assert_eq!(online, "0-1\n");
    }

    #[test]
    fn the_root_actuator_that_plugtop_run_uses_drives_the_model() {
        use crate::kernel::actuator::{Actuator, RootActuator};
        let (dir, mut g, root) = guest_and_root();
        assert!(publish_all(&g, &root).is_ok());
        let mut actuator = match RootActuator::new(dir.path()) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        };
        let mut failures = Vec::new();
        // Every served CPU has an `online` file: cpu0 comes first by name,
        // as cpuplugd on this root would take it.
        assert_eq!(actuator.unplug(&mut failures).ok(), Some(0));
        assert!(actuator.set_pool(2048).is_ok());
        assert_eq!(
            take_writes(&mut g, &root),
            ["cpu0 offline", "cmm_pages 2048"]
        );
        g.advance(1.0);
        assert!(publish(&g, &root).is_ok());
        assert_eq!(*g.sample().online.ids, [1, 2]);
        assert!(failures.is_empty());
    }

    /// Issue 45: a daemon reading every second beside a guest published a
    /// second at a time sometimes read twice between two publications and
    /// saw no tick elapse. Here the reader's clock runs 1% fast (0.99 s),
    /// as two unsynchronised one-second clocks drift; `wait` is where the
    /// real time passes, so the reads it makes see what is published.
    #[test]
    fn a_reader_every_second_on_a_clock_of_its_own_always_sees_ticks_elapse() {
        let (dir, mut g, root) = guest_and_root();
        let stat = dir.path().join(paths::STAT);
        let cpu_line = || {
            fs::read_to_string(&stat)
                .unwrap_or_default()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let (mut now, mut next_read) = (0.0_f64, 0.5_f64);
        let mut reads: Vec<String> = Vec::new();
        let served = serve(
            &mut g,
            &root,
            AtEnd::Stop,
            &AtomicBool::new(false),
            &mut |d, _| {
                now += d.as_secs_f64();
                while next_read <= now {
                    reads.push(cpu_line());
                    next_read += 0.99;
                }
            },
            &mut |_| {},
        );
        assert_eq!(served.ok(), Some(Served::Ended));
        assert!(reads.len() > 50, "{} reads", reads.len());
        for (i, pair) in reads.windows(2).enumerate() {
            assert_ne!(
                pair[0],
                pair[1],
                "no tick elapsed between reads {i} and {}",
                i + 1
            );
        }
    }
}
