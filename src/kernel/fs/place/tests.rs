use super::*;
use std::ffi::OsString;
use std::os::unix::fs::symlink;

use crate::kernel::fs::tests::{UNTOUCHED, holds, mkfifo, root_and_outside};

fn names(dir: &Path) -> Vec<OsString> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    v.sort();
    v
}

#[test]
fn temporary_names_differ_and_look_temporary() {
    let a = temporary_name().expect("name");
    let b = temporary_name().expect("name");
    assert_ne!(a, b);
    assert!(is_temporary(&a), "{a:?}");
    assert_eq!(a.len(), ".plugtop-".len() + 16 + ".tmp".len());
}

#[test]
fn a_regular_file_is_replaced_and_nothing_else_is() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = Root::dir(tmp.path()).expect("open");
    let name = OsStr::new("a.prom");
    dir.write_file(Path::new(name), b"1\n", Placing::new(Replace::RegularFile))
        .expect("new");
    dir.write_file(Path::new(name), b"2\n", Placing::new(Replace::RegularFile))
        .expect("again");
    assert_eq!(std::fs::read(tmp.path().join(name)).expect("read"), b"2\n");
    let refused = dir.write_file(Path::new(name), b"3\n", Placing::new(Replace::Nothing));
    assert!(
        matches!(refused, Err(FsError::Exists { .. })),
        "{refused:?}"
    );
    assert_eq!(std::fs::read(tmp.path().join(name)).expect("read"), b"2\n");
    assert_eq!(names(tmp.path()), vec![OsString::from("a.prom")]);
}

#[test]
fn a_link_a_fifo_and_a_directory_are_refused_and_left_as_they_were() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let target = tmp.path().join("target");
    std::fs::write(&target, "keep\n").expect("target");
    symlink(&target, tmp.path().join("link")).expect("link");
    mkfifo(&tmp.path().join("fifo"));
    std::fs::create_dir(tmp.path().join("dir")).expect("dir");
    let dir = Root::dir(tmp.path()).expect("open");
    for (name, kind) in [
        ("link", "a symbolic link"),
        ("fifo", "a FIFO"),
        ("dir", "a directory"),
    ] {
        for replace in [Replace::RegularFile, Replace::Nothing] {
            match dir.write_file(Path::new(OsStr::new(name)), b"x\n", Placing::new(replace)) {
                Err(FsError::NotReplaceable { kind: k, .. }) => assert_eq!(k, kind),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
    assert_eq!(std::fs::read(&target).expect("read"), b"keep\n");
    assert!(
        std::fs::symlink_metadata(tmp.path().join("link"))
            .expect("link stays")
            .file_type()
            .is_symlink()
    );
    assert!(!names(tmp.path()).iter().any(|n| is_temporary(n)));
}

#[test]
fn a_missing_directory_and_a_path_without_a_name_are_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        Root::of_file(&tmp.path().join("missing/x.prom")),
        Err(FsError::Dir { .. })
    ));
    assert!(matches!(
        Root::of_file(Path::new("/")),
        Err(FsError::NoName { .. })
    ));
    assert!(matches!(
        Root::of_file(&tmp.path().join("..")),
        Err(FsError::NoName { .. })
    ));
    // A trailing slash names a directory, even one that does not exist.
    assert!(matches!(
        Root::of_file(&tmp.path().join("newdir/")),
        Err(FsError::NoName { .. })
    ));
    let (dir, name) = Root::of_file(Path::new("bare.prom")).expect("current directory");
    assert_eq!(name, "bare.prom");
    assert_eq!(dir.path(), Path::new("."));
}

fn leftovers(root: &Path, rel: &str) -> Vec<OsString> {
    std::fs::read_dir(root.join(rel))
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .filter(|n| is_temporary(n))
        .collect()
}

#[test]
fn files_are_placed_whole_over_nothing_or_a_regular_file() {
    let (_dir, root, _outside) = root_and_outside();
    let b = Root::open(&root).expect("root");
    let mut files = StagedFiles::new(&b, Placing::REPLACE);
    files.stage("proc/stat", b"cpu 1\n").expect("stage");
    files.stage("proc/loadavg", b"0.00\n").expect("stage");
    assert!(!root.join("proc/stat").exists(), "nothing placed yet");
    files.commit().expect("commit");
    files.put("proc/stat", b"cpu 2\n").expect("again");
    holds(root.join("proc/stat"), "cpu 2\n");
    assert!(root.join("proc/loadavg").is_file());
    assert!(leftovers(&root, "proc").is_empty());
}

#[test]
fn a_link_a_fifo_or_a_directory_at_the_name_is_refused_and_cleaned_up() {
    let (_dir, root, outside) = root_and_outside();
    std::fs::create_dir_all(root.join("proc/dir")).expect("dir");
    symlink(&outside, root.join("proc/link")).expect("link");
    mkfifo(&root.join("proc/fifo"));
    let b = Root::open(&root).expect("root");
    for (name, kind) in [
        ("proc/link", "a symbolic link"),
        ("proc/fifo", "a FIFO"),
        ("proc/dir", "a directory"),
    ] {
        let mut files = StagedFiles::new(&b, Placing::REPLACE);
        files.stage("proc/first", b"1\n").expect("stage");
        files.stage(name, b"x\n").expect("stage");
        files.stage("proc/after", b"2\n").expect("stage");
        match files.commit() {
            Err(FsError::NotReplaceable { kind: k, .. }) => assert_eq!(k, kind),
            other => panic!("{name}: {other:?}"),
        }
        assert!(root.join("proc/first").is_file(), "placed before");
        assert!(!root.join("proc/after").exists(), "never placed");
        assert!(leftovers(&root, "proc").is_empty(), "{name}");
    }
    holds(&outside, UNTOUCHED);
}

#[test]
fn durable_files_are_placed_and_refused_as_the_others() {
    let (_dir, root, outside) = root_and_outside();
    symlink(&outside, root.join("link")).expect("link");
    let b = Root::open(&root).expect("root");
    let mut files = StagedFiles::new(&b, Placing::durable());
    files.put("run/state", b"1\n").expect("placed");
    files.put("run/state", b"2\n").expect("replaced");
    holds(root.join("run/state"), "2\n");
    let e = files.put("link", b"x\n").expect_err("a link");
    assert!(matches!(e, FsError::NotReplaceable { .. }), "{e}");
    assert!(leftovers(&root, "run").is_empty());
    assert!(leftovers(&root, "").is_empty());
    holds(&outside, UNTOUCHED);
}

#[test]
fn links_on_the_way_stay_inside_and_dropping_removes_what_was_staged() {
    let (dir, root, outside) = root_and_outside();
    symlink("/elsewhere", root.join("sys")).expect("absolute link");
    symlink("../", root.join("up")).expect("climbing link");
    let b = Root::open(&root).expect("root");
    let mut files = StagedFiles::new(&b, Placing::REPLACE);
    files.put("sys/x/online", b"1\n").expect("inside");
    assert!(root.join("elsewhere/x/online").is_file());
    let e = files.put("up/precious", b"x\n").expect_err("outside");
    assert!(e.to_string().contains("leads outside the root"), "{e}");
    files.stage("proc/stat", b"cpu\n").expect("stage");
    drop(files);
    assert!(!root.join("proc/stat").exists());
    assert!(leftovers(&root, "proc").is_empty());
    assert!(!dir.path().join("x").exists());
    holds(&outside, UNTOUCHED);
}
