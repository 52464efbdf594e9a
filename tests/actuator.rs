//! Acting on a root: which CPU is chosen, what happens when a write fails,
//! and that nothing outside the root is ever written.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::FakeRoot;
use plugtop::kernel::actuator::{Actuator, RootActuator};

/// CPUs 0-3 with the given online states; cpu2 not configured if asked.
fn cpus(root: &FakeRoot, online: [bool; 4], cpu2_configured: bool) {
    for (i, on) in online.iter().enumerate() {
        root.write(
            &format!("sys/devices/system/cpu/cpu{i}/online"),
            if *on { "1\n" } else { "0\n" },
        );
        let configured = i != 2 || cpu2_configured;
        root.write(
            &format!("sys/devices/system/cpu/cpu{i}/configure"),
            if configured { "1\n" } else { "0\n" },
        );
    }
}

fn state(root: &Path, i: u32) -> String {
    std::fs::read_to_string(root.join(format!("sys/devices/system/cpu/cpu{i}/online")))
        .unwrap_or_default()
}

#[test]
fn plugs_the_lowest_configured_offline_cpu_and_unplugs_the_highest_online() {
    let root = FakeRoot::guest(1);
    cpus(&root, [true, false, false, false], false);
    let mut a = RootActuator::new(root.path()).expect("root");
    let mut failures = Vec::new();
    assert_eq!(a.plug(&mut failures).ok(), Some(1));
    assert_eq!(
        a.plug(&mut failures).ok(),
        Some(3),
        "cpu2 is not configured"
    );
    assert!(a.plug(&mut failures).is_err(), "nothing left to plug");
    assert_eq!(a.unplug(&mut failures).ok(), Some(3));
    assert_eq!(state(root.path(), 3), "0\n");
    a.set_pool(4242).expect("pool");
    assert_eq!(
        std::fs::read_to_string(root.path().join("proc/sys/vm/cmm_pages"))
            .ok()
            .as_deref(),
        Some("4242\n")
    );
    assert!(failures.is_empty());
}

#[test]
fn a_cpu_that_rejects_the_write_is_skipped_for_the_next() {
    let root = FakeRoot::guest(1);
    cpus(&root, [true, true, true, true], true);
    // cpu3/online leads outside the root by `..`: reading works, writing
    // is refused (an absolute link would resolve inside the root).
    let outside = tempfile::tempdir().expect("temporary directory");
    let target = outside.path().join("online");
    std::fs::write(&target, "1\n").expect("outside file");
    let link = root.path().join("sys/devices/system/cpu/cpu3/online");
    std::fs::remove_file(&link).expect("remove");
    std::os::unix::fs::symlink(common::climbing_to(&target), &link).expect("symlink");
    let mut a = RootActuator::new(root.path()).expect("root");
    let mut failures = Vec::new();
    assert_eq!(
        a.unplug(&mut failures).ok(),
        Some(2),
        "cpu3 refused, cpu2 taken"
    );
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].contains("cpu3") && failures[0].contains("outside the root"),
        "{failures:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&target).ok().as_deref(),
        Some("1\n"),
        "nothing written outside the root"
    );
}

/// Every file below `dir` with its bytes and modification time.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).expect("metadata");
            if meta.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap_or_default();
                let mtime = meta.modified().expect("mtime");
                out.push((p.display().to_string(), bytes, mtime));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn make_read_only(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = entry.path();
        if p.is_dir() {
            make_read_only(&p);
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        } else {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        }
    }
}

#[test]
fn observe_mode_writes_nothing_on_a_read_only_root() {
    let root = FakeRoot::guest(2);
    cpus(&root, [true, true, false, false], true);
    // Four CPUs present: CPU_MIN 3 is within reach (cpuplugd refuses more).
    root.write("sys/devices/system/cpu/present", "0-3\n");
    let rules = tempfile::NamedTempFile::new().expect("rules file");
    std::fs::write(
        rules.path(),
        "UPDATE=\"1\"\nCPU_MIN=\"3\"\nCPU_MAX=\"4\"\nCMM_MIN=\"100\"\nCMM_MAX=\"500\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\nCMM_INC=\"10\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n",
    )
    .expect("rules");
    make_read_only(root.path());
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o555))
        .expect("chmod root");
    let before = tree(root.path());
    let out = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "--mode", "observe", "--interval-ms", "5", "-c"])
        .arg(rules.path())
        .arg("--root")
        .arg(root.path())
        .env("PLUGTOP_FAULT", "control:9")
        .output()
        .expect("run");
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(log.contains("would plug a CPU (below CPU_MIN)"), "{log}");
    assert!(log.contains("would set cmm_pages 0 -> 100"), "{log}");
    assert!(log.contains("would plug a CPU (HOTPLUG true"), "{log}");
    assert_eq!(tree(root.path()), before, "observe mode changed the root");
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod back");
}
