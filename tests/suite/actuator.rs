//! Acting on a root: which CPU is chosen (cpuplugd's: the first `cpuN`
//! directory by name, so cpu10 before cpu2), what happens when a write
//! fails, that the last online CPU is never taken, that the simulator
//! chooses as the root does, and that nothing outside the root is ever
//! written.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::FakeRoot;
use plugtop::kernel::actuator::{Actuator, NoWrites, RootActuator};
use plugtop::kernel::cpu_choice::CpuChange;
use proptest::prelude::*;

const CPU_DIR: &str = "sys/devices/system/cpu";

/// CPUs 0-3 with the given online states; cpu2 not configured if asked.
fn cpus(root: &FakeRoot, online: [bool; 4], cpu2_configured: bool) {
    for (i, on) in online.iter().enumerate() {
        root.write(
            &format!("{CPU_DIR}/cpu{i}/online"),
            if *on { "1\n" } else { "0\n" },
        );
        let configured = i != 2 || cpu2_configured;
        root.write(
            &format!("{CPU_DIR}/cpu{i}/configure"),
            if configured { "1\n" } else { "0\n" },
        );
    }
}

/// One CPU's files: `online` (absent when `None`) and `configure`.
fn cpu(root: &FakeRoot, id: u32, online: Option<&str>, configure: Option<&str>) {
    std::fs::create_dir_all(root.path().join(format!("{CPU_DIR}/cpu{id}"))).expect("cpu dir");
    match online {
        Some(text) => root.write(&format!("{CPU_DIR}/cpu{id}/online"), text),
        None => root.remove(&format!("{CPU_DIR}/cpu{id}/online")),
    }
    match configure {
        Some(text) => root.write(&format!("{CPU_DIR}/cpu{id}/configure"), text),
        None => root.remove(&format!("{CPU_DIR}/cpu{id}/configure")),
    }
}

/// A guest of `n` CPUs, `online` of them online (by number), all configured.
fn guest(n: u32, online: u32) -> FakeRoot {
    let root = FakeRoot::guest(n);
    for i in 0..n {
        cpu(
            &root,
            i,
            Some(if i < online { "1\n" } else { "0\n" }),
            Some("1\n"),
        );
    }
    root
}

fn state(root: &Path, i: u32) -> String {
    std::fs::read_to_string(root.join(format!("{CPU_DIR}/cpu{i}/online"))).unwrap_or_default()
}

fn actuator(root: &FakeRoot) -> RootActuator {
    RootActuator::new(root.path()).expect("root")
}

#[test]
fn plugs_and_unplugs_the_first_cpu_by_name_like_cpuplugd() {
    let root = FakeRoot::guest(1);
    cpus(&root, [true, false, false, false], false);
    let mut a = actuator(&root);
    let mut failures = Vec::new();
    assert_eq!(a.plug(&mut failures).ok(), Some(1));
    assert_eq!(
        a.plug(&mut failures).ok(),
        Some(3),
        "cpu2 is not configured"
    );
    assert!(a.plug(&mut failures).is_err(), "nothing left to plug");
    assert_eq!(a.unplug(&mut failures).ok(), Some(0), "cpu0 comes first");
    assert_eq!(state(root.path(), 0), "0\n");
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
fn twelve_cpus_are_walked_cpu0_cpu1_cpu10_cpu11_cpu2() {
    let root = guest(12, 2);
    let mut a = actuator(&root);
    let mut failures = Vec::new();
    let expected = [10, 11, 2, 3, 4, 5, 6, 7, 8, 9];
    assert_eq!(a.would_take(CpuChange::Plug, 99), expected);
    let mut plugged = Vec::new();
    while let Ok(id) = a.plug(&mut failures) {
        plugged.push(id);
    }
    assert_eq!(plugged, expected);
    assert_eq!(a.would_take(CpuChange::Unplug, 3), [0, 1, 10]);
    let mut unplugged = Vec::new();
    while let Ok(id) = a.unplug(&mut failures) {
        unplugged.push(id);
    }
    assert_eq!(
        unplugged,
        [0, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8],
        "cpu9 stays, the last online"
    );
    assert_eq!(state(root.path(), 9), "1\n");
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn a_cpu_without_an_online_file_or_not_configured_is_passed_over() {
    let root = guest(12, 0);
    // cpu0 cannot go offline (no online file), as on most machines.
    cpu(&root, 0, None, Some("1\n"));
    cpu(&root, 1, Some("1\n"), Some("1\n"));
    cpu(&root, 10, None, Some("1\n"));
    cpu(&root, 11, Some("0\n"), Some("0\n"));
    cpu(&root, 2, Some("0\n"), None);
    cpu(&root, 3, Some(" 0 \n"), Some("1\n"));
    // Not directories, or not names the kernel makes: no CPUs at all.
    root.write(&format!("{CPU_DIR}/cpu20"), "0\n");
    cpu(&root, 4, Some("0\n"), Some("1\n"));
    std::fs::rename(
        root.path().join(format!("{CPU_DIR}/cpu4")),
        root.path().join(format!("{CPU_DIR}/cpu04")),
    )
    .expect("rename");
    let mut a = actuator(&root);
    let mut failures = Vec::new();
    assert_eq!(a.would_take(CpuChange::Plug, 1), [3]);
    assert_eq!(
        a.plug(&mut failures).ok(),
        Some(3),
        "the first offline, configured, by name"
    );
    assert_eq!(
        a.would_take(CpuChange::Plug, 9),
        [5, 6, 7, 8, 9],
        "cpu04 and the file cpu20 are no CPUs"
    );
    assert_eq!(a.unplug(&mut failures).ok(), Some(1));
    assert_eq!(
        a.unplug(&mut failures).ok(),
        Some(3),
        "cpu0 and cpu10 cannot go offline and keep the guest up"
    );
    assert!(a.unplug(&mut failures).is_err());
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn offline_cpus_without_configure_files_are_never_plugged() {
    let root = guest(4, 1);
    for i in 1..4 {
        cpu(&root, i, Some("0\n"), None);
    }
    let mut a = actuator(&root);
    let mut failures = Vec::new();
    let err = a.plug(&mut failures).expect_err("nothing to plug");
    assert!(
        err.to_string()
            .contains("3 offline CPUs have no `configure` file"),
        "{err}"
    );
    assert!(a.would_take(CpuChange::Plug, 1).is_empty());
}

/// Every write to `cpuN/online` fails from now on (the test build's fault
/// injection), while the file still reads as it is.
fn refuse_writes(root: &FakeRoot, id: u32) {
    plugtop::faults::fail_writes_to(&root.path().join(format!("{CPU_DIR}/cpu{id}/online")));
}

#[test]
fn a_cpu_that_rejects_the_write_is_skipped_for_the_next_by_name() {
    let root = guest(12, 12);
    for id in [0, 1, 10] {
        refuse_writes(&root, id);
    }
    let mut a = actuator(&root);
    let mut failures = Vec::new();
    assert_eq!(
        a.unplug(&mut failures).ok(),
        Some(11),
        "cpu0, cpu1 and cpu10 refused, cpu11 taken"
    );
    assert_eq!(failures.len(), 3, "{failures:?}");
    for (f, id) in failures.iter().zip(["cpu0", "cpu1", "cpu10"]) {
        assert!(
            f.starts_with(&format!("{id}:")) && f.contains("the write failed"),
            "{failures:?}"
        );
        assert_eq!(state(root.path(), id[3..].parse().expect("id")), "1\n");
    }
    // Plugs retry in the same order: cpu11 is back first.
    let mut failures = Vec::new();
    assert_eq!(a.plug(&mut failures).ok(), Some(11));
    assert!(failures.is_empty());
}

#[test]
fn the_last_online_cpu_is_never_unplugged_whatever_the_online_list_says() {
    let root = guest(12, 0);
    cpu(&root, 5, Some("1\n"), Some("1\n"));
    // A stale aggregate list (a served root between two rewrites) claims
    // all twelve: the per-CPU files decide.
    root.write(&format!("{CPU_DIR}/online"), "0-11\n");
    let mut a = actuator(&root);
    let mut failures = Vec::new();
    let err = a.unplug(&mut failures).expect_err("refused");
    assert!(
        err.to_string().contains("cpu5 is the last online CPU"),
        "{err}"
    );
    assert_eq!(state(root.path(), 5), "1\n");
    assert!(a.would_take(CpuChange::Unplug, 1).is_empty());
    // The files are read again at each call: with cpu7 up, cpu5 may go,
    // then cpu7 is the last.
    cpu(&root, 7, Some("1\n"), Some("1\n"));
    assert_eq!(a.unplug(&mut failures).ok(), Some(5));
    assert!(a.unplug(&mut failures).is_err());
    assert_eq!(state(root.path(), 7), "1\n");
    // A CPU whose write failed stays online, so the next may go.
    cpu(&root, 1, Some("1\n"), Some("1\n"));
    refuse_writes(&root, 1);
    assert_eq!(a.unplug(&mut failures).ok(), Some(7));
    assert!(
        failures.iter().any(|f| f.starts_with("cpu1:")),
        "{failures:?}"
    );
    // Unreadable or odd online files never count as online.
    cpu(&root, 3, Some("2\n"), Some("1\n"));
    cpu(&root, 4, Some("\n1\n"), Some("1\n"));
    cpu(&root, 6, Some("one\n"), Some("1\n"));
    let mut failures = Vec::new();
    assert!(a.unplug(&mut failures).is_err(), "cpu1 is the last");
}

#[test]
fn observe_mode_names_the_cpu_from_the_root_and_writes_nothing() {
    let root = guest(12, 12);
    let mut observer = NoWrites::seeing(root.path());
    assert_eq!(observer.would_take(CpuChange::Unplug, 2), [0, 1]);
    let mut failures = Vec::new();
    assert!(observer.unplug(&mut failures).is_err());
    assert_eq!(state(root.path(), 0), "1\n");
    assert!(
        NoWrites::blind()
            .would_take(CpuChange::Unplug, 2)
            .is_empty()
    );
}

/// The same CPUs through the simulator's actuator and through the root
/// it serves: each step takes the same CPU.
#[test]
fn the_simulator_chooses_as_its_served_root_does() {
    use plugtop::sim::published_root::{publish_all, take_writes};
    use plugtop::sim::{Guest, Scenario, SharedGuest, SimActuator};
    let text = "name = \"t\"\ncpus = 12\nonline = 3\nmemory_mib = 1024\nduration = \"1:00\"\nphases = []\n";
    let scenario = Scenario::parse("t", text).expect("scenario");
    let mut served = Guest::new(&scenario, false);
    let dir = common::tempdir();
    let beneath = plugtop::kernel::fs::Root::open(dir.path()).expect("served root");
    publish_all(&served, &beneath).expect("publish");
    let shared = SharedGuest::new(Guest::new(&scenario, false));
    let mut sim = SimActuator::new(shared.clone());
    let mut root = RootActuator::new(dir.path()).expect("root");
    let mut failures = Vec::new();
    let steps = "PPPPPPPPPPUUUUUUUUUUUUPPPUUU";
    let mut taken = Vec::new();
    for step in steps.chars() {
        let (a, b) = if step == 'P' {
            (sim.plug(&mut failures), root.plug(&mut failures))
        } else {
            (sim.unplug(&mut failures), root.unplug(&mut failures))
        };
        assert_eq!(a.as_ref().ok(), b.as_ref().ok(), "{step} after {taken:?}");
        take_writes(&mut served, &beneath);
        taken.push(a.ok());
    }
    assert_eq!(
        taken.iter().flatten().copied().collect::<Vec<u32>>(),
        [
            10, 11, 3, 4, 5, 6, 7, 8, 9, 0, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 0, 1, 10, 0, 1, 10
        ],
        "plugs by name from cpu10, unplugs by name from cpu0, cpu9 kept"
    );
    for id in 0..12 {
        assert_eq!(
            shared.borrow().cpu_online(id),
            served.cpu_online(id),
            "cpu{id}"
        );
    }
}

/// A CPU's state in a generated guest: its `online` file and `configure`.
fn any_cpu() -> impl Strategy<Value = (Option<&'static str>, Option<&'static str>)> {
    let online = proptest::sample::select(vec![Some("1\n"), Some("0\n"), None, Some("x\n")]);
    let configure = proptest::sample::select(vec![Some("1\n"), Some("0\n"), None]);
    (online, configure)
}

/// cpuplugd's walk written out plainly: names sorted as strings.
fn reference(states: &[(Option<&str>, Option<&str>)], plug: bool) -> Option<u32> {
    let mut names: Vec<(String, u32)> = (0..states.len() as u32)
        .map(|i| (format!("cpu{i}"), i))
        .collect();
    names.sort();
    let online = |i: usize| matches!(states[i].0, None | Some("1\n"));
    let up = (0..states.len()).filter(|i| online(*i)).count();
    names.into_iter().map(|(_, i)| i).find(|&i| {
        let (on, conf) = states[i as usize];
        if plug {
            on == Some("0\n") && conf == Some("1\n")
        } else {
            on == Some("1\n") && up > 1
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_twelve_cpu_guest_gets_cpuplugds_choice(states in proptest::collection::vec(any_cpu(), 12)) {
        for plug in [true, false] {
            let root = FakeRoot::guest(12);
            for (i, (online, configure)) in states.iter().enumerate() {
                cpu(&root, i as u32, *online, *configure);
            }
            let mut a = actuator(&root);
            let change = if plug { CpuChange::Plug } else { CpuChange::Unplug };
            let expected = reference(&states, plug);
            prop_assert_eq!(a.would_take(change, 1).first().copied(), expected);
            let mut failures = Vec::new();
            let done = if plug { a.plug(&mut failures) } else { a.unplug(&mut failures) };
            prop_assert_eq!(done.ok(), expected);
            if let Some(id) = expected {
                prop_assert_eq!(state(root.path(), id), if plug { "1\n" } else { "0\n" });
            }
        }
    }
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
    // Named as cpuplugd would take them, read from the read-only root.
    assert!(log.contains("would plug cpu2 (below CPU_MIN)"), "{log}");
    assert!(log.contains("would set cmm_pages 0 -> 100"), "{log}");
    assert!(log.contains("would plug cpu2 (HOTPLUG true"), "{log}");
    assert_eq!(tree(root.path()), before, "observe mode changed the root");
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod back");
}

#[test]
fn a_cpu_directory_linked_out_of_the_root_is_read_inside_it() {
    // cpu3 is an absolute link to a CPU directory: as in a chroot it means
    // the root's own cpu1 (offline), never the machine's.
    let root = guest(4, 1);
    std::fs::remove_dir_all(root.path().join(format!("{CPU_DIR}/cpu3"))).expect("cpu3");
    std::os::unix::fs::symlink(
        "/sys/devices/system/cpu/cpu1",
        root.path().join(format!("{CPU_DIR}/cpu3")),
    )
    .expect("link");
    root.write(&format!("{CPU_DIR}/online"), "0,3\n");
    let mut a = actuator(&root);
    let mut failures = Vec::new();
    assert!(
        a.unplug(&mut failures).is_err(),
        "cpu0 is the only CPU online below the root: it stays"
    );
    assert_eq!(state(root.path(), 0), "1\n");
    assert_eq!(a.would_take(CpuChange::Plug, 4), [1, 2, 3]);
}

#[test]
fn a_restore_that_cannot_read_a_cpu_writes_it_and_counts_a_failure() {
    let root = guest(4, 3);
    // cpu2 should go offline, but its `online` is a FIFO now: unreadable,
    // and no file to write either.
    let fifo = root.path().join(format!("{CPU_DIR}/cpu2/online"));
    std::fs::remove_file(&fifo).expect("online");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let mut a = actuator(&root);
    let mut failures = Vec::new();
    a.set_online(&[0, 1], &mut failures).expect("restore runs");
    assert!(
        failures.iter().any(|f| f.starts_with("cpu2:")),
        "an unknown CPU is no complete restore: {failures:?}"
    );
}
