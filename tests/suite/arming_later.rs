//! The screen armed after it started acts as `plugtop run` does at its
//! start: the start limits (CPU_MIN, CPU_MAX) apply when step-confirm or
//! autonomous begins, through the screen's real order (observe, `A` or `s`,
//! the arming dialog, `y`), driven on the control thread the screen runs.

use crate::common;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, channel};

use common::FakeRoot;
use plugtop::control::controller::{Action, Mode};
use plugtop::kernel::live::LiveSource;
use plugtop::kernel::{Sample, Source, SourceError, Stamp};
use plugtop::rules::SystemFacts;
use plugtop::tui::app::{App, Dialog};
use plugtop::tui::arming::Progress;
use plugtop::tui::command::Command;
use plugtop::tui::keys::KeyAction;
use plugtop::tui::run::{Options, ScreenEnd, prepare};
use plugtop::tui::update::Update;

const CPU_DIR: &str = "sys/devices/system/cpu";

/// A guest with four CPUs present, `online` of them online.
fn guest(online: u32) -> FakeRoot {
    let root = FakeRoot::guest(4);
    for i in 0..4 {
        root.write(
            &format!("{CPU_DIR}/cpu{i}/online"),
            if i < online { "1\n" } else { "0\n" },
        );
        root.write(&format!("{CPU_DIR}/cpu{i}/configure"), "1\n");
    }
    sync_online(root.path());
    root
}

fn online_ids(root: &Path) -> Vec<u32> {
    (0..4)
        .filter(|i| {
            std::fs::read_to_string(root.join(format!("{CPU_DIR}/cpu{i}/online")))
                .is_ok_and(|t| t.trim() == "1")
        })
        .collect()
}

/// What a kernel does after a write to `cpuN/online`: the aggregate list
/// follows.
fn sync_online(root: &Path) {
    let list: Vec<String> = online_ids(root).iter().map(u32::to_string).collect();
    std::fs::write(
        root.join(format!("{CPU_DIR}/online")),
        list.join(",") + "\n",
    )
    .expect("online list");
}

/// The live root, kept in step like a kernel, its clock one second a reading.
struct Kernel {
    root: PathBuf,
    live: LiveSource,
}

impl Kernel {
    fn new(root: &Path) -> Self {
        let now = Arc::new(AtomicI64::new(1_000));
        let clock = Box::new(move || Stamp::new(now.fetch_add(1, Ordering::SeqCst), 0));
        Kernel {
            root: root.to_path_buf(),
            live: LiveSource::with_clock(root, clock),
        }
    }
}

impl Source for Kernel {
    fn facts(&mut self) -> SystemFacts {
        self.live.facts()
    }
    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
        sync_online(&self.root);
        self.live.next_sample()
    }
}

fn rules(dir: &Path, limits: &str) -> PathBuf {
    let path = dir.join("limits.conf");
    std::fs::write(
        &path,
        format!("UPDATE=\"1\"\n{limits}\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"),
    )
    .expect("rules");
    path
}

fn options(root: &Path, rules: PathBuf) -> Options {
    Options {
        rules: Some(rules),
        root: root.to_path_buf(),
        replay: None,
        mode: Mode::Observe,
        batch: false,
        mono: true,
        interval: Some(0.0),
        count: None,
        sim: None,
        old_kernel: false,
        tune_budget: None,
        allow_non_zvm: false,
    }
}

/// The screen's control thread on `root`, driven by `script` as the
/// screen drives it: `press` hands a key to the screen's state, which
/// sends the control thread what it asks; `until` applies the control
/// thread's updates to that state until it holds. Returns how the control
/// thread ended.
fn drive(
    root: &Path,
    rules: PathBuf,
    script: impl FnOnce(&dyn Fn(KeyAction), &dyn Fn(&dyn Fn(&App) -> bool) -> usize, &RefCell<App>),
) -> ScreenEnd {
    let options = options(root, rules);
    let (local, _) = prepare(&options).expect("the screen starts");
    let (core, app) = local.into_parts();
    let app = RefCell::new(app);
    let stop = Default::default();
    let (commands, command_rx) = channel();
    let (reports, report_rx) = channel::<Vec<Update>>();
    let progress_reports = reports.clone();
    let progress: Progress = Arc::new(move |what| {
        let _ = progress_reports.send(vec![Update::Working(what)]);
    });
    let mut source = Kernel::new(root);
    std::thread::scope(|scope| {
        let source = &mut source;
        let stop = &stop;
        let control_options = options.clone();
        scope.spawn(move || {
            plugtop::tui::control::run(
                control_options,
                core,
                source,
                &command_rx,
                stop,
                progress,
                |r| reports.send(r).is_ok(),
            )
        });
        let send = |c: Command| commands.send(c).expect("control thread listens");
        let press = |action: KeyAction| {
            let asked = app.borrow_mut().update(action);
            if let Some(command) = asked {
                send(command);
            }
        };
        let until = |want: &dyn Fn(&App) -> bool| wait(&report_rx, &app, want);
        script(&press, &until, &app);
        send(Command::Quit);
        loop {
            for update in report_rx
                .recv()
                .expect("the control thread says how it ended")
            {
                match update {
                    Update::Ended(end) => return end,
                    other => app.borrow_mut().apply(other),
                }
            }
        }
    })
}

/// Applies updates until `want` holds of the app; returns how many
/// readings the app had then. Bounded by updates, not by time.
fn wait(reports: &Receiver<Vec<Update>>, app: &RefCell<App>, want: &dyn Fn(&App) -> bool) -> usize {
    for _ in 0..5_000 {
        if want(&app.borrow()) {
            return app.borrow().readings();
        }
        match reports.recv() {
            Ok(updates) => {
                for update in updates {
                    match update {
                        Update::Ended(end) => panic!("the control thread stopped: {end:?}"),
                        other => app.borrow_mut().apply(other),
                    }
                }
            }
            Err(e) => panic!("the control thread stopped: {e}"),
        }
    }
    let app = app.borrow();
    let log: Vec<&str> = app.log().lines().iter().map(|l| l.text.as_str()).collect();
    panic!("never happened; log: {log:#?}");
}

fn is_arm_dialog(app: &App) -> bool {
    matches!(app.modals().dialog(), Some(Dialog::Arm(_)))
}

#[test]
fn autonomous_armed_later_brings_an_idle_guest_up_to_cpu_min() {
    let dir = common::tempdir();
    let root = guest(1);
    let rules = rules(dir.path(), "CPU_MIN=\"3\"\nCPU_MAX=\"0\"");
    let r = root.path().to_path_buf();
    let end = drive(root.path(), rules, move |press, until, _| {
        until(&|app| app.readings() >= 3);
        assert_eq!(online_ids(&r), vec![0], "observe mode changes nothing");
        press(KeyAction::Autonomous);
        let armed_at = until(&is_arm_dialog);
        press(KeyAction::Yes);
        let reached = until(&|_| online_ids(&r).len() == 3);
        assert!(
            reached <= armed_at + 2,
            "3 CPUs within two intervals of y: armed at reading {armed_at}, reached at {reached}"
        );
    });
    assert!(
        matches!(end, ScreenEnd::Quit | ScreenEnd::GaveBack(_)),
        "{end:?}"
    );
    assert_eq!(
        online_ids(root.path()),
        vec![0],
        "quitting puts the start CPUs back"
    );
    assert!(!root.path().join("run/plugtop/state").exists());
}

#[test]
fn autonomous_armed_later_takes_a_guest_down_to_cpu_max() {
    let dir = common::tempdir();
    let root = guest(4);
    let rules = rules(dir.path(), "CPU_MIN=\"1\"\nCPU_MAX=\"2\"");
    let r = root.path().to_path_buf();
    let end = drive(root.path(), rules, move |press, until, _| {
        until(&|app| app.readings() >= 2);
        assert_eq!(online_ids(&r).len(), 4, "observe mode changes nothing");
        press(KeyAction::Autonomous);
        let armed_at = until(&is_arm_dialog);
        press(KeyAction::Yes);
        let reached = until(&|_| online_ids(&r).len() == 2);
        assert!(reached <= armed_at + 2, "{armed_at} → {reached}");
    });
    assert!(
        matches!(end, ScreenEnd::Quit | ScreenEnd::GaveBack(_)),
        "{end:?}"
    );
    assert_eq!(online_ids(root.path()).len(), 4, "quitting puts them back");
}

#[test]
fn step_confirm_armed_later_proposes_the_start_limits() {
    let dir = common::tempdir();
    let root = guest(1);
    let rules = rules(dir.path(), "CPU_MIN=\"3\"\nCPU_MAX=\"0\"");
    let r = root.path().to_path_buf();
    let end = drive(root.path(), rules, move |press, until, app| {
        until(&|app| app.readings() >= 2);
        press(KeyAction::Step);
        until(&is_arm_dialog);
        press(KeyAction::Yes);
        until(&|app| app.board().pending().is_some());
        // Several readings later the proposal still stands (the rules,
        // which decide nothing, do not withdraw it).
        let now = until(&|_| true);
        until(&|app| app.readings() >= now + 3);
        let shown = app
            .borrow()
            .board()
            .pending()
            .cloned()
            .expect("the limits are still proposed");
        assert!(shown.limits, "{shown:?}");
        assert_eq!(shown.actions, vec![Action::PlugCpu, Action::PlugCpu]);
        assert!(shown.why.contains("below CPU_MIN"), "{}", shown.why);
        assert_eq!(online_ids(&r), vec![0], "nothing before the yes");
        // `y` approves the proposal on screen: exactly this one.
        press(KeyAction::Yes);
        until(&|_| online_ids(&r).len() == 3);
        until(&|app| {
            app.log()
                .lines()
                .iter()
                .any(|l| l.text.starts_with("approved: plug a CPU, plug a CPU"))
        });
    });
    assert!(
        matches!(end, ScreenEnd::Quit | ScreenEnd::GaveBack(_)),
        "{end:?}"
    );
    assert_eq!(online_ids(root.path()), vec![0]);
}

#[test]
fn arming_later_on_a_start_state_restore_would_refuse_stays_in_observe_mode() {
    for (pool, named) in [
        ("99999999", "cmm_pages 99999999 is more than"),
        ("-1", "cmm_pages -1 is negative"),
    ] {
        let dir = common::tempdir();
        let root = guest(1);
        root.write("proc/sys/vm/cmm_pages", &format!("{pool}\n"));
        // The memory group on: the pool is what would be put back (with
        // it off, plugtop leaves the pool alone as cpuplugd does).
        let rules = rules(
            dir.path(),
            "CPU_MIN=\"3\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"1000\"\n\
             CMM_INC=\"10\"\nCMM_DEC=\"10\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"0\"",
        );
        let r = root.path().to_path_buf();
        let end = drive(root.path(), rules, move |press, until, app| {
            until(&|app| app.readings() >= 2);
            press(KeyAction::Autonomous);
            until(&is_arm_dialog);
            press(KeyAction::Yes);
            until(&|app| matches!(app.modals().dialog(), Some(Dialog::Message(_))));
            let shown = app.borrow();
            let Some(Dialog::Message(text)) = shown.modals().dialog() else {
                unreachable!("waited for a message")
            };
            for want in [named, "could not be put back", "cpuplugd would start"] {
                assert!(text.contains(want), "says {want:?}: {text}");
            }
            assert_eq!(shown.board().mode(), Mode::Observe, "not armed");
            drop(shown);
            // Readings go on in observe mode, and nothing is written.
            let now = until(&|_| true);
            until(&|app| app.readings() >= now + 2);
            assert_eq!(online_ids(&r), vec![0], "nothing plugged");
        });
        assert!(
            matches!(end, ScreenEnd::Quit | ScreenEnd::GaveBack(_)),
            "{end:?}"
        );
        assert_eq!(
            std::fs::read_to_string(root.path().join("proc/sys/vm/cmm_pages")).ok(),
            Some(format!("{pool}\n")),
            "the pool untouched"
        );
        for rel in ["run/plugtop/state", "var/lock/cpuplugd.lock"] {
            assert!(!root.path().join(rel).exists(), "{rel} left behind");
        }
    }
}
