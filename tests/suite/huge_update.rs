//! An UPDATE as large as a rule file can write (18446744073709551615, more
//! than any deadline can hold) is taken by every loop that paces from it:
//! `plugtop run`'s loop and the screen's control thread act on the first
//! reading and then wait "forever" for a signal or a key, as cpuplugd with
//! such an UPDATE sleeps for as long as `sleep()` takes. They used to panic
//! adding the interval to the clock ("overflow when adding duration to
//! instant") right after acting.
//!
//! Time is never waited for here: the stop signal is raised before the
//! loop starts (it checks it only after the first reading and after it
//! computed its deadline), and the screen's thread is told to quit.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::channel;

use plugtop::control::controller::Mode;
use plugtop::control::flap::FlapConfig;
use plugtop::daemon::{Ending, RunOptions, Signals, run_with};
use plugtop::logging::Memory;
use plugtop::sim::run::{SimOptions, guest_for};
use plugtop::sim::{SharedGuest, SimActuator, SimSource};
use plugtop::tui::arming::Progress;
use plugtop::tui::command::Command;
use plugtop::tui::run::{Options, ScreenEnd, prepare};
use plugtop::tui::update::Update;

/// UPDATEs past what a deadline holds: u64::MAX, i64::MAX, and a number
/// of more digits than any integer type has.
const HUGE: [&str; 3] = [
    "18446744073709551615",
    "9223372036854775807",
    "99999999999999999999999999999999",
];

/// Rules with `update` that unplug CPUs on the first reading (CPU_MAX 2).
fn rules(dir: &Path, update: &str) -> PathBuf {
    let path = dir.join("huge.conf");
    std::fs::write(
        &path,
        format!(
            "UPDATE=\"{update}\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"
        ),
    )
    .expect("rules");
    path
}

#[test]
fn plugtop_runs_loop_acts_then_waits_for_the_signal_without_panicking() {
    for update in HUGE {
        let dir = common::tempdir();
        let rules = rules(dir.path(), update);
        let root = dir.path().join("root");
        std::fs::create_dir_all(&root).expect("root");
        let scenario = common::scenario("daytrader");
        let options = SimOptions {
            duration: Some(60.0),
            ..SimOptions::default()
        };
        let guest = SharedGuest::new(guest_for(&scenario, &options));
        // The root holds the guest as `sim --serve` publishes it (plugtop
        // acts only on a start state `restore` could put back from it).
        let beneath = plugtop::kernel::fs::Root::open(&root).expect("root");
        plugtop::sim::published_root::publish_all(&guest.borrow(), &beneath).expect("published");
        let before = guest.borrow().sample().online.count;
        let mut source = SimSource::new(guest.clone(), 1.0);
        let mut actuator = SimActuator::new(guest);
        let run = RunOptions {
            rules,
            root: root.clone(),
            mode: Mode::Auto,
            state: root.join("run/plugtop/state"),
            force: false,
            verbose: false,
            table: plugtop::report::Layout::Wide,
            // No pace of its own: the loop paces from UPDATE.
            interval: None,
            allow_non_zvm: false,
            pid_file: false,
            flap: FlapConfig::default(),
            check_lpar: false,
            on_started: None,
            metrics: plugtop::daemon::MetricsOptions::default(),
        };
        let signals = Signals::default();
        signals.stop.store(true, Ordering::SeqCst);
        let mut log = Memory::default();
        let ended = run_with(&run, &mut source, &mut actuator, &mut log, &signals);
        let lines: Vec<String> = log.lines.into_iter().map(|(_, l)| l).collect();
        assert!(matches!(ended, Ok(Ending::Stopped)), "{update}: {ended:?}");
        assert!(before > 2, "the guest starts above CPU_MAX: {before}");
        assert!(
            lines.iter().any(|l| l.contains("unplugged cpu")),
            "{update}: the first reading is acted on: {lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("restored the start state")),
            "{update}: the stop puts the guest back: {lines:?}"
        );
    }
}

#[test]
fn the_screens_control_thread_takes_a_huge_update_and_still_answers_keys() {
    for update in HUGE {
        let dir = common::tempdir();
        let rules = rules(dir.path(), update);
        let root = common::FakeRoot::guest(4);
        let options = Options {
            rules: Some(rules),
            root: root.path().to_path_buf(),
            replay: None,
            mode: Mode::Observe,
            batch: false,
            mono: true,
            // No pace of its own: the thread paces from UPDATE.
            interval: None,
            count: None,
            sim: None,
            old_kernel: false,
            tune_budget: None,
            allow_non_zvm: false,
        };
        let (local, mut source) = prepare(&options).expect("the screen starts");
        let (core, _) = local.into_parts();
        let stop = Default::default();
        let progress: Progress = Arc::new(|_| {});
        let (commands, command_rx) = channel();
        let (reports, report_rx) = channel::<Vec<Update>>();
        let end = std::thread::scope(|scope| {
            let stop = &stop;
            let source = source.as_mut();
            let control = options.clone();
            let worker = scope.spawn(move || {
                plugtop::tui::control::run(
                    control,
                    core,
                    source,
                    &command_rx,
                    stop,
                    progress,
                    |r| reports.send(r).is_ok(),
                )
            });
            // The first reading is taken at once; the next one would be
            // due after UPDATE, which is when it used to panic.
            let first = report_rx
                .iter()
                .flatten()
                .any(|u| matches!(u, Update::Reading(_)));
            assert!(first, "{update}: the control thread ended before reading");
            commands.send(Command::Quit).expect("the thread listens");
            let end = report_rx.iter().flatten().find_map(|u| match u {
                Update::Ended(end) => Some(end),
                _ => None,
            });
            assert!(worker.join().is_ok(), "{update}: the thread panicked");
            end
        });
        assert!(matches!(end, Some(ScreenEnd::Quit)), "{update}: {end:?}");
    }
}
