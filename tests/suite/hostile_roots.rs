//! Roots that try to lead plugtop's writes elsewhere: links swapped in while
//! it writes, a planted temporary journal, a lock directory linked outside.
//! Nothing outside the root may ever change (an absolute link resolves
//! inside the root, as in a chroot; a `..` above the root is refused).

use crate::common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use common::FakeRoot;
use plugtop::control::lock;
use plugtop::control::restore_journal::{self, StartState};
use plugtop::kernel::Source;
use plugtop::kernel::actuator::{Actuator, RootActuator};

const UNTOUCHED: &str = "outside, untouched\n";

fn outside_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("precious");
    std::fs::write(&path, UNTOUCHED).expect("outside file");
    path
}

fn untouched(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t == UNTOUCHED)
}

#[test]
fn a_link_swapped_in_while_plugtop_writes_never_leads_outside() {
    let root = FakeRoot::guest(4);
    let outside = common::tempdir();
    let precious = outside_file(outside.path());
    let dir = root.path().join("sys/devices/system/cpu/cpu2");
    std::fs::create_dir_all(&dir).expect("cpu2");
    let online = dir.join("online");
    std::fs::write(&online, "0\n").expect("online");
    std::fs::write(dir.join("configure"), "1\n").expect("configure");
    // The swapper replaces cpu2/online by a link to the outside file and
    // back, each time atomically, as fast as it can.
    // Both sides go on until each has had its turn many times: a count,
    // never a time (CI shares a loaded 2-core machine).
    const TURNS: u64 = 200;
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (dir, precious) = (dir.clone(), precious.clone());
        let climbing = common::climbing_to(&precious);
        std::thread::spawn(move || {
            let (link, file) = (dir.join("link.tmp"), dir.join("file.tmp"));
            while !stop.load(Ordering::SeqCst) {
                let _ = std::fs::remove_file(&link);
                // Absolute (inside the root, as in a chroot) and climbing
                // out by `..`, in turns.
                if swaps.load(Ordering::SeqCst).is_multiple_of(2) {
                    let _ = symlink(&precious, &link);
                } else {
                    let _ = symlink(&climbing, &link);
                }
                let _ = std::fs::rename(&link, dir.join("online"));
                let _ = std::fs::write(&file, "0\n");
                let _ = std::fs::rename(&file, dir.join("online"));
                swaps.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    let mut actuator = RootActuator::new(root.path()).expect("actuator");
    let mut attempts = 0u64;
    while attempts < TURNS || swaps.load(Ordering::SeqCst) < TURNS {
        let mut failures = Vec::new();
        let _ = actuator.plug(&mut failures);
        let _ = actuator.set_online(&[0, 1], &mut failures);
        attempts += 1;
        assert!(
            untouched(&precious),
            "written through the link after {attempts} attempts"
        );
    }
    stop.store(true, Ordering::SeqCst);
    assert!(swapper.join().is_ok(), "the swapper panicked");
    assert!(untouched(&precious));
}

fn start() -> StartState {
    StartState {
        pid: std::process::id(),
        started: None,
        root: "r".into(),
        online: vec![0],
        cmm_pages: Some(0),
    }
}

#[test]
fn a_planted_temporary_journal_is_replaced_not_written_through() {
    let root = FakeRoot::guest(1);
    let outside = common::tempdir();
    let precious = outside_file(outside.path());
    let state = root.path().join("run/plugtop/state");
    std::fs::create_dir_all(root.path().join("run/plugtop")).expect("dir");
    symlink(&precious, root.path().join("run/plugtop/state.tmp")).expect("link");
    restore_journal::write(root.path(), &state, &start()).expect("journal written");
    assert!(
        untouched(&precious),
        "the journal went through the planted link"
    );
    assert_eq!(
        restore_journal::read(root.path(), &state)
            .ok()
            .flatten()
            .map(|s| s.online),
        Some(vec![0])
    );
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none())
}

#[test]
fn a_journal_directory_linked_outside_by_dot_dot_is_refused_and_an_absolute_link_stays_inside() {
    let root = FakeRoot::guest(1);
    let outside = common::tempdir();
    std::fs::create_dir_all(root.path().join("run")).expect("run");
    let link = root.path().join("run/plugtop");
    let state = root.path().join("run/plugtop/state");
    symlink(common::climbing_to(outside.path()), &link).expect("link");
    let e = restore_journal::write(root.path(), &state, &start());
    let message = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("outside the root"), "{message}");
    assert!(empty(outside.path()), "nothing created outside");
    // The same place as an absolute link is that place inside the root.
    std::fs::remove_file(&link).expect("rm");
    symlink(outside.path(), &link).expect("link");
    restore_journal::write(root.path(), &state, &start()).expect("written inside the root");
    let inside = root
        .path()
        .join(outside.path().strip_prefix("/").expect("absolute"));
    assert!(
        inside.join("state").is_file(),
        "written at ROOT{}",
        outside.path().display()
    );
    assert_eq!(
        restore_journal::read(root.path(), &state)
            .ok()
            .flatten()
            .map(|s| s.online),
        Some(vec![0]),
        "read back where it was written"
    );
    assert!(empty(outside.path()), "nothing created outside");
}

#[test]
fn a_lock_directory_linked_outside_by_dot_dot_is_refused_and_says_so() {
    for linked in ["var/lock", "var"] {
        let root = FakeRoot::guest(1);
        let outside = common::tempdir();
        let link = root.path().join(linked);
        if let Some(parent) = link.parent() {
            std::fs::create_dir_all(parent).expect("parent");
        }
        symlink(common::climbing_to(outside.path()), &link).expect("link");
        let e = lock::acquire(root.path()).map(|_| ());
        let message = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("outside the root"), "{linked}: {message}");
        assert!(empty(outside.path()), "{linked}: nothing created outside");
        // As an absolute link, the lock goes to that place inside the root.
        std::fs::remove_file(&link).expect("rm");
        symlink(outside.path(), &link).expect("link");
        let held = lock::acquire(root.path()).expect("locked inside the root");
        let inside = root
            .path()
            .join(outside.path().strip_prefix("/").expect("absolute"));
        let lock_file = if linked == "var" {
            "lock/cpuplugd.lock"
        } else {
            "cpuplugd.lock"
        };
        assert!(
            inside.join(lock_file).is_file(),
            "{linked}: lock at ROOT{}",
            outside.path().display()
        );
        assert!(empty(outside.path()), "{linked}: nothing created outside");
        drop(held);
        lock::release(root.path());
        assert!(!inside.join(lock_file).exists(), "{linked}: released");
    }
}

/// `plugtop run -f` on `root` with rules that act; its output.
fn run_once(root: &FakeRoot) -> std::process::Output {
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"1\"\n",
    )
    .expect("rules");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "--interval-ms", "10", "-c"])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run");
    // It must refuse: a run that starts instead never ends by itself, and
    // fails the test past the hang guard.
    common::Spawned::new(child).finish("plugtop run, which should have refused")
}

#[test]
fn a_start_state_that_cannot_be_put_back_exactly_is_refused() {
    for (file, text) in [
        ("sys/devices/system/cpu/online", "3-1\n"),
        ("sys/devices/system/cpu/online", "0-1000000000\n"),
        ("sys/devices/system/cpu/online", "\n"),
        ("proc/sys/vm/cmm_pages", "18446744073709551615\n"),
    ] {
        let root = FakeRoot::guest(4);
        for i in 0..4 {
            root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), "1\n");
            root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
        }
        root.write(file, text);
        let out = run_once(&root);
        let err = crate::common::said(&out);
        assert_eq!(out.status.code(), Some(78), "{file} = {text:?}: {err}");
        assert!(
            !root.path().join("run/plugtop/state").exists(),
            "{file} = {text:?}: no journal"
        );
        for i in 0..4 {
            let on = std::fs::read_to_string(
                root.path()
                    .join(format!("sys/devices/system/cpu/cpu{i}/online")),
            )
            .unwrap_or_default();
            assert_eq!(on, "1\n", "{file} = {text:?}: cpu{i} untouched");
        }
    }
}

#[test]
fn a_journal_without_online_cpus_never_takes_every_cpu_offline() {
    let root = FakeRoot::guest(4);
    for i in 0..4 {
        root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), "1\n");
    }
    root.write(
        "run/plugtop/state",
        "plugtop-state 1\npid 999999999\nroot r\nonline \ncmm_pages 0\n",
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["restore", "--root"])
        .arg(root.path())
        .output()
        .expect("restore");
    assert!(!out.status.success());
    assert!(
        crate::common::said(&out).contains("refusing to take every CPU offline"),
        "{}",
        crate::common::said(&out)
    );
    for i in 0..4 {
        let on = std::fs::read_to_string(
            root.path()
                .join(format!("sys/devices/system/cpu/cpu{i}/online")),
        )
        .unwrap_or_default();
        assert_eq!(on, "1\n", "cpu{i} stays online");
    }
    assert!(
        root.path().join("run/plugtop/state").exists(),
        "the journal stays"
    );
}

fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo {}", path.display());
}

#[test]
fn a_fifo_where_a_kernel_file_should_be_never_hangs_plugtop() {
    // proc/stat as a FIFO: plugtop run says so and stops at once.
    let root = FakeRoot::guest(2);
    fifo(&root.path().join("proc/stat"));
    // That it returns at all is the point (a hang would never end).
    let out = run_once(&root);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    // cpu1/online as a FIFO: plugging moves on to the next CPU.
    let root = FakeRoot::guest(1);
    for i in 0..3 {
        root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), "0\n");
        root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
    }
    root.write("sys/devices/system/cpu/cpu0/online", "1\n");
    fifo(&root.path().join("sys/devices/system/cpu/cpu1/online"));
    let mut actuator = RootActuator::new(root.path()).expect("actuator");
    let mut failures = Vec::new();
    let plugged = actuator.plug(&mut failures);
    assert_eq!(plugged.ok(), Some(2), "cpu1 is skipped: {failures:?}");
    // The screen's reading of every cpuN directory reads it as unknown.
    let path = root.path().to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut source = plugtop::kernel::live::LiveSource::new(path);
        let _ = tx.send(
            source
                .next_sample()
                .map(|s| s.map(|s| s.cpus.iter().map(|c| c.online).collect::<Vec<_>>())),
        );
    });
    let cpus = rx.recv_timeout(common::hang_guard());
    let cpus = match cpus {
        Ok(Some(Ok(cpus))) => cpus,
        other => panic!("hung or failed on the FIFO: {other:?}"),
    };
    assert_eq!(cpus, [Some(true), None, Some(true)]);
}

/// Megabytes of /proc text each interval shorten the screen's history
/// instead of multiplying memory by its 600 intervals.
#[test]
fn huge_proc_files_shorten_the_screen_s_history() {
    use plugtop::control::controller::Mode;
    use plugtop::tui::app::{FRAME_BYTES, FRAMES, SourceLabel};
    use plugtop::tui::local::Local;
    let root = FakeRoot::guest(2);
    let pad = "7".repeat(2 << 20);
    root.write(
        "proc/meminfo",
        &format!("MemTotal: 9 kB\nMemFree: 5 kB\nPad: {pad} kB\n"),
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let rules = dir.path().join("r.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let mut source = plugtop::kernel::live::LiveSource::new(root.path());
    let facts = source.facts();
    let (set, file) = plugtop::rules::load_path(&rules, &facts).expect("rules load");
    let mut app = Local::new(
        std::sync::Arc::new(set),
        file,
        SourceLabel::Live("test".into()),
        Mode::Observe,
    );
    let per_sample = (2 << 20) as u64;
    for _ in 0..40 {
        let sample = source.next_sample().expect("live").expect("readable");
        app.ingest(sample);
    }
    let kept = app.app().timeline().frames().len() as u64;
    assert!(kept >= 2, "the last two intervals stay");
    assert!(
        kept <= FRAME_BYTES / per_sample + 1,
        "{kept} intervals of {per_sample} bytes kept"
    );
    assert!(kept < FRAMES as u64);
}
