//! Roots that try to lead plugtop's writes elsewhere: links swapped in while
//! it writes, a planted temporary journal, a lock directory linked outside.
//! Nothing outside the root may ever change.

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::FakeRoot;
use plugtop::control::journal::{self, StartState};
use plugtop::control::lock;
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
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, dir, precious) = (Arc::clone(&stop), dir.clone(), precious.clone());
        std::thread::spawn(move || {
            let (link, file) = (dir.join("link.tmp"), dir.join("file.tmp"));
            let mut swaps = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let _ = std::fs::remove_file(&link);
                let _ = symlink(&precious, &link);
                let _ = std::fs::rename(&link, dir.join("online"));
                let _ = std::fs::write(&file, "0\n");
                let _ = std::fs::rename(&file, dir.join("online"));
                swaps += 1;
            }
            swaps
        })
    };
    let mut actuator = RootActuator::new(root.path()).expect("actuator");
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut attempts = 0u64;
    while Instant::now() < deadline {
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
    let swaps = swapper.join().unwrap_or(0);
    assert!(
        swaps > 100 && attempts > 100,
        "{swaps} swaps, {attempts} attempts"
    );
    assert!(untouched(&precious));
}

fn start() -> StartState {
    StartState {
        pid: std::process::id(),
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
    journal::write(root.path(), &state, &start()).expect("journal written");
    assert!(
        untouched(&precious),
        "the journal went through the planted link"
    );
    assert_eq!(
        journal::read(&state).ok().flatten().map(|s| s.online),
        Some(vec![0])
    );
}

#[test]
fn a_journal_directory_linked_outside_is_refused() {
    let root = FakeRoot::guest(1);
    let outside = common::tempdir();
    std::fs::create_dir_all(root.path().join("run")).expect("run");
    symlink(outside.path(), root.path().join("run/plugtop")).expect("link");
    let state = root.path().join("run/plugtop/state");
    let e = journal::write(root.path(), &state, &start());
    assert!(e.is_err(), "a journal outside the root was written");
    assert!(
        std::fs::read_dir(outside.path()).is_ok_and(|mut d| d.next().is_none()),
        "nothing created outside"
    );
}

#[test]
fn a_lock_directory_linked_outside_is_refused_and_says_so() {
    for linked in ["var/lock", "var"] {
        let root = FakeRoot::guest(1);
        let outside = common::tempdir();
        let link = root.path().join(linked);
        if let Some(parent) = link.parent() {
            std::fs::create_dir_all(parent).expect("parent");
        }
        symlink(outside.path(), &link).expect("link");
        let e = lock::acquire(root.path()).map(|_| ());
        let message = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("outside the root") || message.contains("symbolic link"),
            "{linked}: {message}"
        );
        assert!(
            std::fs::read_dir(outside.path()).is_ok_and(|mut d| d.next().is_none()),
            "{linked}: nothing created outside"
        );
    }
}
