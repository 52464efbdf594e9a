//! Every read under `--root` resolves as in a chroot: a link in the root
//! (absolute, or climbing out by `..`) leads to the root's own file of
//! that name, never to the machine's. Each case puts different text at the
//! outside target and at the same name inside the root, and checks which
//! one plugtop saw.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::{FakeRoot, climbing_to};
use plugtop::kernel::cpu_choice::Online;
use plugtop::kernel::live::LiveSource;
use plugtop::kernel::root::RootReader;
use plugtop::kernel::{Sample, Source, Stamp};

const CPU_DIR: &str = "sys/devices/system/cpu";

/// A valid /proc/stat whose user ticks are `user` (one CPU).
fn stat_text(user: u64) -> String {
    format!(
        "cpu  {user} 0 0 1000 0 0 0 0 0 0\ncpu0 {user} 0 0 1000 0 0 0 0 0 0\nintr 1\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n"
    )
}

/// `path` (absolute, outside the root) as the same name inside the root.
fn inside(root: &FakeRoot, path: &Path) -> PathBuf {
    root.path()
        .join(path.strip_prefix("/").expect("an absolute path"))
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("dirs");
    }
    std::fs::write(path, text).expect("write");
}

/// Reads `root` three times (the reader decides what to keep open at the
/// second): every reading's result.
fn three_readings(root: &FakeRoot) -> Vec<Result<Sample, String>> {
    let mut t = 0;
    let clock = Box::new(move || {
        t += 1;
        Stamp::new(t, 0)
    });
    let mut source = LiveSource::with_clock(root.path(), clock);
    (0..3)
        .map(|_| match source.next_sample() {
            Some(Ok(s)) => Ok(s),
            Some(Err(e)) => Err(e.to_string()),
            None => Err("no sample".into()),
        })
        .collect()
}

/// The two ways out of a root to `target`: an absolute link (a chroot
/// reads it from the root) and `..` beyond the root (a chroot stays there).
fn links_to(target: &Path) -> [PathBuf; 2] {
    [target.to_path_buf(), climbing_to(target)]
}

#[test]
fn proc_stat_linked_outside_reads_the_root_s_own_file_or_fails() {
    let outside = common::tempdir();
    let target = outside.path().join("stat");
    write(&target, &stat_text(777_777));
    for link in links_to(&target) {
        let root = FakeRoot::guest(2);
        root.remove("proc/stat");
        symlink(&link, root.path().join("proc/stat")).expect("link");
        // Nothing at the same name inside: an error, never the outside text.
        for reading in three_readings(&root) {
            let e = reading.expect_err("no stat inside the root");
            assert!(e.contains("proc/stat"), "{link:?}: {e}");
        }
        // The same name inside: that file is read.
        write(&inside(&root, &target), &stat_text(4242));
        for reading in three_readings(&root) {
            let s = reading.unwrap_or_else(|e| panic!("{link:?}: {e}"));
            assert_eq!(s.ticks.user, 4242, "{link:?}");
        }
    }
}

#[test]
fn a_cpu_directory_linked_outside_is_never_read_and_the_actuator_sees_the_same() {
    let outside = common::tempdir();
    let target = outside.path().join("cpu");
    write(&target.join("online"), "1\n");
    write(&target.join("configure"), "1\n");
    let file_target = outside.path().join("online");
    write(&file_target, "1\n");
    for link in links_to(&target) {
        let root = FakeRoot::guest(4);
        for id in 0..4 {
            root.write(&format!("{CPU_DIR}/cpu{id}/online"), "0\n");
        }
        // cpu3 a link to the outside directory, cpu2's flag a link to the
        // outside file, cpu1 a link inside (to cpu0), cpu4 a loop.
        std::fs::remove_dir_all(root.path().join(format!("{CPU_DIR}/cpu3"))).expect("cpu3");
        symlink(&link, root.path().join(format!("{CPU_DIR}/cpu3"))).expect("link");
        root.remove(&format!("{CPU_DIR}/cpu2/online"));
        let flag_link = if link.is_absolute() {
            file_target.clone()
        } else {
            climbing_to(&file_target)
        };
        symlink(
            &flag_link,
            root.path().join(format!("{CPU_DIR}/cpu2/online")),
        )
        .expect("link");
        std::fs::remove_dir_all(root.path().join(format!("{CPU_DIR}/cpu1"))).expect("cpu1");
        symlink("cpu0", root.path().join(format!("{CPU_DIR}/cpu1"))).expect("link");
        symlink("cpu4", root.path().join(format!("{CPU_DIR}/cpu4"))).expect("loop");
        root.write(&format!("{CPU_DIR}/cpu0/online"), "1\n");
        let flags = |s: &Sample| -> Vec<(u32, Option<bool>, Option<bool>)> {
            s.cpus
                .iter()
                .map(|c| (c.id, c.online, c.configured))
                .collect()
        };
        for reading in three_readings(&root) {
            let s = reading.unwrap_or_else(|e| panic!("{link:?}: {e}"));
            assert_eq!(
                flags(&s),
                [
                    (0, Some(true), None),
                    (1, Some(true), None),
                    (2, None, None),
                    (3, None, None),
                    (4, None, None)
                ],
                "{link:?}: nothing outside is seen"
            );
        }
        // An absolute link leads from the root: the same names inside are
        // what is read. A `..` climbing out is refused (unreadable), as the
        // actuator resolves the same flags before it writes them: the
        // screen shows what the actuator sees (issue 44).
        write(&inside(&root, &target).join("online"), "0\n");
        write(&inside(&root, &target).join("configure"), "0\n");
        write(&inside(&root, &file_target), "1\n");
        let absolute = link.is_absolute();
        for reading in three_readings(&root) {
            let s = reading.unwrap_or_else(|e| panic!("{link:?}: {e}"));
            let (two, three) = if absolute {
                (Some(true), (Some(false), Some(false)))
            } else {
                (None, (None, None))
            };
            assert_eq!(s.cpus[2].online, two, "{link:?}");
            assert_eq!((s.cpus[3].online, s.cpus[3].configured), three, "{link:?}");
        }
        let actuator = plugtop::kernel::cpu_dir::CpuDir::new(root.path());
        let sees = |id| match actuator.online(id) {
            Online::Reads(Some(v)) => Some(v == 1),
            _ => None,
        };
        if absolute {
            assert_eq!((sees(2), sees(3)), (Some(true), Some(false)), "{link:?}");
        } else {
            assert_eq!(actuator.online(2), Online::Unreadable, "{link:?}");
            assert_eq!(sees(3), None, "{link:?}");
        }
    }
}

#[test]
fn cmm_pages_linked_outside_counts_only_when_the_root_has_it() {
    let outside = common::tempdir();
    let target = outside.path().join("cmm_pages");
    write(&target, "123\n");
    for link in links_to(&target) {
        let root = FakeRoot::guest(2);
        root.remove("proc/sys/vm/cmm_pages");
        symlink(&link, root.path().join("proc/sys/vm/cmm_pages")).expect("link");
        let facts = RootReader::new().facts(root.path());
        assert!(
            !facts.cmm_pages,
            "{link:?}: the outside file is not the root's"
        );
        for reading in three_readings(&root) {
            let s = reading.unwrap_or_else(|e| panic!("{link:?}: {e}"));
            assert_eq!(s.cmm_pages, None, "{link:?}");
        }
        write(&inside(&root, &target), "7\n");
        assert!(RootReader::new().facts(root.path()).cmm_pages, "{link:?}");
        for reading in three_readings(&root) {
            let s = reading.unwrap_or_else(|e| panic!("{link:?}: {e}"));
            assert_eq!(s.cmm_pages, Some(7), "{link:?}");
        }
    }
}

#[test]
fn the_machine_s_names_linked_outside_are_the_root_s_own() {
    let outside = common::tempdir();
    let target = outside.path().join("hostname");
    write(&target, "outside-host\n");
    for link in links_to(&target) {
        let root = FakeRoot::guest(2);
        std::fs::create_dir_all(root.path().join("proc/sys/kernel")).expect("dir");
        symlink(&link, root.path().join("proc/sys/kernel/hostname")).expect("link");
        let host = plugtop::kernel::machine::describe(root.path()).host;
        assert_eq!(host, "unknown", "{link:?}");
        write(&inside(&root, &target), "inside-host\n");
        let host = plugtop::kernel::machine::describe(root.path()).host;
        assert_eq!(host, "inside-host", "{link:?}");
    }
}

#[test]
fn a_root_s_proc_linked_outside_shows_no_outside_tasks() {
    // ROOT/proc → /proc would list this machine's tasks; in a chroot it is
    // the root's own proc, which has none.
    let root = FakeRoot::guest(2);
    let proc_dir = root.path().join("proc");
    let kept = root.path().join("kept-proc");
    std::fs::rename(&proc_dir, &kept).expect("move proc");
    symlink("/proc", &proc_dir).expect("link");
    assert!(
        plugtop::kernel::tasks::task_cpus(root.path()).is_empty(),
        "this machine's tasks are outside the root"
    );
    std::fs::remove_file(&proc_dir).expect("unlink");
    std::fs::rename(&kept, &proc_dir).expect("move back");
    write(
        &proc_dir.join("42/status"),
        "Name:\tinside\nVmRSS:\t1 kB\nCpus_allowed_list:\t0\n",
    );
    let tasks = plugtop::kernel::tasks::task_cpus(root.path());
    let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["inside"]);
}

/// The tree read is the one opened at the start: renaming the root's path
/// away and putting another tree (or a link to `/`) there later does not
/// make plugtop read one tree while it acts on another.
#[test]
fn a_root_swapped_at_its_path_mid_run_is_not_followed() {
    let parent = common::tempdir();
    let at = parent.path().join("guest");
    let original = FakeRoot::guest(1);
    write(&original.path().join("proc/stat"), &stat_text(100));
    std::fs::rename(original.path(), &at).expect("place the root");
    let mut t = 0;
    let clock = Box::new(move || {
        t += 1;
        Stamp::new(t, 0)
    });
    let mut source = LiveSource::with_clock(&at, clock);
    let user = |s: Option<Result<Sample, plugtop::kernel::SourceError>>| match s {
        Some(Ok(s)) => s.ticks.user,
        other => panic!("{other:?}"),
    };
    assert_eq!(user(source.next_sample()), 100);
    // Moved away, and another tree at its path, then a link to /.
    let moved = parent.path().join("moved");
    std::fs::rename(&at, &moved).expect("move it away");
    let other = FakeRoot::guest(1);
    write(&other.path().join("proc/stat"), &stat_text(999));
    symlink(other.path(), &at).expect("another tree at its path");
    write(&moved.join("proc/stat"), &stat_text(200));
    assert_eq!(
        user(source.next_sample()),
        200,
        "the tree opened at the start"
    );
    std::fs::remove_file(&at).expect("unlink");
    symlink("/", &at).expect("a link to /");
    write(&moved.join("proc/stat"), &stat_text(300));
    assert_eq!(user(source.next_sample()), 300, "still that tree, not /");
    // Keep the moved tree from being cleaned up twice.
    std::fs::rename(&moved, original.path()).expect("put it back");
}
