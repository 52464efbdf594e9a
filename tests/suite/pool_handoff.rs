//! `plugtop run` reads `cmm_pages` and writes it: each interval reads and
//! writes the file that is there then, each write leaves exactly the new
//! number, and whatever sits at `cmm_pages` (a link out of the root, a
//! FIFO, a device, nothing) is read and refused without reaching outside
//! the root.

use crate::common;

use std::path::Path;

use common::FakeRoot;
use plugtop::kernel::Source;
use plugtop::kernel::actuator::{Actuator, RootActuator};
use plugtop::kernel::live::LiveSource;

const CMM: &str = "proc/sys/vm/cmm_pages";

/// A reader and an actuator of `root`, as `plugtop run` has them.
fn daemon_parts(root: &Path) -> (LiveSource, RootActuator) {
    let source = LiveSource::new(root).without_cpu_dirs();
    let actuator = RootActuator::new(root).expect("actuator");
    (source, actuator)
}

/// The pool as one reading of `source` saw it (`Err`: the reading failed).
fn pool_read(source: &mut LiveSource) -> Result<Option<i64>, String> {
    match source.next_sample() {
        Some(Ok(sample)) => Ok(sample.cmm_pages),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("no reading".into()),
    }
}

/// Replaces `rel` below `root` by a new file holding `text`, as a tool
/// that writes files atomically does (the old file stays reachable as
/// `rel.old`, to see whether it was written).
fn replace(root: &FakeRoot, rel: &str, text: &str) {
    let path = root.path().join(rel);
    std::fs::hard_link(&path, root.path().join(format!("{rel}.old"))).expect("keep the old file");
    let new = root.path().join(format!("{rel}.new"));
    std::fs::write(&new, text).expect("new file");
    std::fs::rename(&new, &path).expect("replace");
}

/// What `rel` holds, if it is a regular file (never waiting on a FIFO).
fn read_file(root: &FakeRoot, rel: &str) -> String {
    let path = root.path().join(rel);
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => std::fs::read_to_string(&path).unwrap_or_else(|e| format!("<{e}>")),
        Ok(m) => format!("<{:?}>", m.file_type()),
        Err(e) => format!("<{e}>"),
    }
}

#[test]
fn a_write_opens_the_file_that_is_there_then() {
    let root = FakeRoot::guest(2);
    let (mut source, mut actuator) = daemon_parts(root.path());
    for _ in 0..3 {
        assert_eq!(pool_read(&mut source), Ok(Some(0)));
    }
    replace(&root, CMM, "77\n");
    actuator.set_pool(5).expect("write");
    assert_eq!(read_file(&root, CMM), "5\n", "the file there now");
    assert_eq!(
        read_file(&root, &format!("{CMM}.old")),
        "0\n",
        "never the old one"
    );
    // And the next interval reads and writes the new file.
    assert_eq!(pool_read(&mut source), Ok(Some(5)));
    actuator.set_pool(9).expect("write");
    assert_eq!(read_file(&root, CMM), "9\n");
}

#[test]
fn each_write_is_one_number_whatever_the_file_held_before() {
    let root = FakeRoot::guest(2);
    let (mut source, mut actuator) = daemon_parts(root.path());
    for (held, write) in [
        ("0\n", 1_245_184),
        ("1245184\n", 7),
        ("7", 0),
        ("18446744073709551615\n", 3),
    ] {
        root.write(CMM, held);
        for _ in 0..3 {
            let _ = pool_read(&mut source);
        }
        actuator.set_pool(write).expect("write");
        assert_eq!(read_file(&root, CMM), format!("{write}\n"), "over {held:?}");
    }
}

/// Makes `cmm_pages` below a root into something else.
type Spoil<'a> = dyn Fn(&FakeRoot) + 'a;

/// What a run of readings and writes does to a root whose `cmm_pages` is
/// made into something else by `spoil` before the third reading: each
/// reading's pool, each write's outcome, and the files' contents.
fn run_spoiled(spoil: &Spoil<'_>) -> Vec<String> {
    let root = FakeRoot::guest(2);
    std::fs::write(root.path().join("outside-target"), "4242\n").expect("target");
    let (mut source, mut actuator) = daemon_parts(root.path());
    let mut seen = Vec::new();
    for reading in 0..6 {
        if reading == 2 {
            spoil(&root);
        }
        seen.push(format!("read {:?}", pool_read(&mut source)));
        let wrote = actuator.set_pool(100 + reading).map_err(|e| e.to_string());
        seen.push(format!("write {wrote:?}"));
        seen.push(format!("file {:?}", read_file(&root, CMM)));
    }
    seen.push(format!("outside {:?}", read_file(&root, "outside-target")));
    // Two roots, one outcome: their paths aside.
    let path = root.path().display().to_string();
    seen.into_iter().map(|l| l.replace(&path, "ROOT")).collect()
}

#[test]
fn whatever_sits_at_cmm_pages_is_read_and_refused_the_same_way_each_time() {
    let outside = common::tempdir();
    let outside_file = outside.path().join("cmm_pages");
    std::fs::write(&outside_file, "31337\n").expect("outside file");
    let spoils: Vec<(&str, Box<Spoil<'_>>)> = vec![
        ("nothing changes", Box::new(|_| {})),
        (
            "a link climbing out of the root",
            Box::new(|root: &FakeRoot| {
                root.remove(CMM);
                std::os::unix::fs::symlink(
                    common::climbing_to(&outside_file),
                    root.path().join(CMM),
                )
                .expect("link");
            }),
        ),
        (
            "an absolute link (inside the root, as in a chroot)",
            Box::new(|root: &FakeRoot| {
                root.remove(CMM);
                std::os::unix::fs::symlink("/outside-target", root.path().join(CMM)).expect("link");
            }),
        ),
        (
            "a FIFO",
            Box::new(|root: &FakeRoot| {
                root.remove(CMM);
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    root.path().join(CMM),
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .expect("fifo");
            }),
        ),
        ("gone", Box::new(|root: &FakeRoot| root.remove(CMM))),
        ("empty", Box::new(|root: &FakeRoot| root.write(CMM, ""))),
        (
            "a directory",
            Box::new(|root: &FakeRoot| {
                root.remove(CMM);
                std::fs::create_dir(root.path().join(CMM)).expect("dir");
            }),
        ),
        (
            "not a number",
            Box::new(|root: &FakeRoot| root.write(CMM, "many\n")),
        ),
    ];
    for (what, spoil) in &spoils {
        let first = run_spoiled(spoil.as_ref());
        assert_eq!(run_spoiled(spoil.as_ref()), first, "{what}");
        assert!(
            first
                .iter()
                .all(|l| !l.starts_with("read") || !l.contains("31337")),
            "{what}: the outside file is never read: {first:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&outside_file).expect("outside file"),
        "31337\n",
        "nothing outside the root is written"
    );
    // A device, where this test may make one.
    let device = |root: &FakeRoot| {
        if common::zero_device_in(root.path()) {
            root.remove(CMM);
            std::os::unix::fs::symlink("/dev/zero", root.path().join(CMM)).expect("link");
        }
    };
    assert_eq!(run_spoiled(&device), run_spoiled(&device));
}
