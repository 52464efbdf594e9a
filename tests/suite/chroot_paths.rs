//! Paths below `--root` resolve as in a chroot: an absolute link inside the
//! root leads from the root (Debian's `/var/lock` → `/run/lock`), relative
//! links are followed, and a `..` above the root is refused. Whatever the
//! root holds, nothing outside it is touched.

use crate::common;

use std::io::Read;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::FakeRoot;
use plugtop::control::restore_journal::{self, StartState};
use plugtop::control::{lock, pid_file};

const UNTOUCHED: &str = "outside, untouched\n";

/// A guest with two CPUs (one online, both configurable) and CMM.
fn guest() -> FakeRoot {
    let root = FakeRoot::guest(2);
    for (i, on) in [(0, "1\n"), (1, "0\n")] {
        root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), on);
        root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
    }
    root.write("sys/devices/system/cpu/online", "0\n");
    root
}

/// Rules that change nothing (so the test watches the lock, not the CPUs).
fn rules(root: &FakeRoot) -> PathBuf {
    let path = root.path().join("rules.conf");
    std::fs::write(
        &path,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    path
}

/// `var/lock` → `lock_target` and `var/run` → `/run`, both absolute links.
fn link_var(root: &FakeRoot, lock_target: &Path) {
    std::fs::create_dir_all(root.path().join("var")).expect("var");
    std::fs::create_dir_all(root.path().join("run/lock")).expect("run/lock");
    symlink(lock_target, root.path().join("var/lock")).expect("var/lock");
    symlink("/run", root.path().join("var/run")).expect("var/run");
}

/// `path` (absolute, outside the root) as the same name inside the root.
fn inside(root: &FakeRoot, path: &Path) -> PathBuf {
    root.path()
        .join(path.strip_prefix("/").expect("an absolute path"))
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none())
}

/// A file outside every root, that must keep its text.
fn precious(dir: &Path) -> PathBuf {
    let path = dir.join("precious");
    std::fs::write(&path, UNTOUCHED).expect("outside file");
    path
}

fn untouched(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::read_to_string(path).is_ok_and(|t| t == UNTOUCHED)
}

/// `plugtop run -f --mode auto` on a root, its output collected as it comes.
struct Run {
    child: Option<Child>,
    printed: Arc<Mutex<Vec<u8>>>,
}

impl Run {
    fn start(root: &FakeRoot) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
            .args(["run", "-f", "--mode", "auto", "--interval-ms", "20", "-c"])
            .arg(rules(root))
            .arg("--root")
            .arg(root.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start plugtop run");
        let printed = Arc::new(Mutex::new(Vec::new()));
        for pipe in [
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let into = Arc::clone(&printed);
            std::thread::spawn(move || {
                let mut pipe = pipe;
                let mut chunk = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut p) = into.lock() {
                        p.extend_from_slice(&chunk[..n]);
                    }
                }
            });
        }
        Run {
            child: Some(child),
            printed,
        }
    }

    fn log(&self) -> String {
        String::from_utf8_lossy(&self.printed.lock().map(|p| p.clone()).unwrap_or_default())
            .into_owned()
    }

    /// Waits until it says it started (or fails the test if it ended): no
    /// time limit, the child's end bounds it.
    fn wait_started(&mut self) {
        while !self.log().contains("started in autonomous mode") {
            let ended = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            assert!(ended.is_none(), "ended {ended:?}:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then its exit code.
    fn stop(mut self) -> Option<i32> {
        let child = self.child.take().expect("running");
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(sent, "kill -TERM");
        child.wait_with_output().expect("wait").status.code()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs `f` on another thread; fails the test if it never returns (a FIFO
/// that blocked it) instead of hanging the whole run.
fn never_hangs<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(common::hang_guard())
        .unwrap_or_else(|_| panic!("{what}: hung"))
}

#[test]
fn plugtop_run_on_a_debian_root_locks_run_lock_inside_the_root() {
    let root = guest();
    link_var(&root, Path::new("/run/lock"));
    // The real machine's lock file is none of the test's business.
    let real = Path::new("/run/lock/cpuplugd.lock");
    let real_before = std::fs::symlink_metadata(real)
        .map(|m| m.modified().ok())
        .ok();
    let mut run = Run::start(&root);
    run.wait_started();
    let lock_file = root.path().join("run/lock/cpuplugd.lock");
    assert!(
        lock_file.is_file(),
        "the lock is ROOT/run/lock/cpuplugd.lock"
    );
    // Held: another controller on the same root is refused.
    let again = lock::acquire(root.path()).map(|_| ());
    let message = again.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("is locked"), "{message}");
    // Issue 45: the refusal says who holds the lock (this machine's lock
    // table names the pid; its command name follows).
    let pid = run.child.as_ref().map(Child::id).unwrap_or_default();
    assert!(
        message.contains(&format!("is locked by pid {pid} (plugtop)")),
        "{message}"
    );
    // newuser51 #21: it knows the holder is plugtop; "cpuplugd is
    // starting" is not said of it.
    assert!(
        message.contains("another plugtop acts on this guest")
            && !message.contains("cpuplugd is starting"),
        "{message}"
    );
    let second = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "--mode", "auto", "-c"])
        .arg(rules(&root))
        .arg("--root")
        .arg(root.path())
        .output()
        .expect("second run");
    assert_eq!(second.status.code(), Some(1), "a second run is refused");
    assert_eq!(run.stop(), Some(0));
    assert!(!lock_file.exists(), "the lock file goes at exit");
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "journal removed"
    );
    let real_after = std::fs::symlink_metadata(real)
        .map(|m| m.modified().ok())
        .ok();
    assert_eq!(
        real_before,
        real_after,
        "the real {} is untouched",
        real.display()
    );
}

#[test]
fn the_link_target_outside_the_root_stays_empty_while_the_same_name_inside_is_used() {
    let root = guest();
    let outside = common::tempdir();
    let target = outside.path().join("run/lock");
    std::fs::create_dir_all(&target).expect("outside run/lock");
    link_var(&root, &target);
    std::fs::create_dir_all(inside(&root, &target)).expect("inside run/lock");
    let mut run = Run::start(&root);
    run.wait_started();
    let lock_file = inside(&root, &target).join("cpuplugd.lock");
    assert!(lock_file.is_file(), "locked at ROOT{}", target.display());
    assert!(empty(&target), "nothing created outside while it runs");
    assert_eq!(run.stop(), Some(0));
    assert!(!lock_file.exists(), "the lock file goes at exit");
    assert!(empty(&target), "nothing created outside");
}

#[test]
fn a_lock_directory_climbing_out_of_the_root_refuses_the_start_and_says_so() {
    let root = guest();
    let outside = common::tempdir();
    std::fs::create_dir_all(root.path().join("var")).expect("var");
    let x = outside.path().join("x");
    symlink(common::climbing_to(&x), root.path().join("var/lock")).expect("link");
    // As written: a fixed depth of `..`, also above any temporary root.
    let literal = Path::new("../../../../../../tmp/x");
    for target in [common::climbing_to(&x), literal.to_path_buf()] {
        let _ = std::fs::remove_file(root.path().join("var/lock"));
        symlink(&target, root.path().join("var/lock")).expect("link");
        let out = Command::new(env!("CARGO_BIN_EXE_plugtop"))
            .args(["run", "-f", "--mode", "auto", "-c"])
            .arg(rules(&root))
            .arg("--root")
            .arg(root.path())
            .output()
            .expect("run");
        let err = crate::common::said(&out);
        assert_eq!(out.status.code(), Some(1), "{}: {err}", target.display());
        assert!(
            err.contains("/var/lock leads outside the root")
                && err.contains(&root.path().display().to_string()),
            "{}: {err}",
            target.display()
        );
    }
    assert!(
        !x.exists() && empty(outside.path()),
        "nothing created outside"
    );
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "no journal"
    );
}

#[test]
fn absolute_link_chains_and_dot_dots_inside_the_root_resolve_inside() {
    for (links, lock_dir) in [
        // a → /b, b → /c/d: the lock goes to ROOT/c/d.
        (&[("var/lock", "/b"), ("b", "/c/d")][..], "c/d"),
        // `..` that stays inside.
        (&[("var/lock", "../run/./lock/../lock")][..], "run/lock"),
        // `..` after a link goes up from where the link led: ROOT/c.
        (
            &[("var/lock", "/var/../srv/x/.."), ("srv/x", "/c/d")][..],
            "c",
        ),
    ] {
        let root = guest();
        std::fs::create_dir_all(root.path().join("var")).expect("var");
        std::fs::create_dir_all(root.path().join(lock_dir)).expect("lock dir");
        std::fs::create_dir_all(root.path().join("srv")).expect("srv");
        std::fs::create_dir_all(root.path().join("c/d")).expect("c/d");
        for (at, to) in links {
            symlink(to, root.path().join(at)).expect("link");
        }
        let held = lock::acquire(root.path()).unwrap_or_else(|e| panic!("{links:?}: {e}"));
        let lock_file = root.path().join(lock_dir).join("cpuplugd.lock");
        assert!(lock_file.is_file(), "{links:?}: lock in ROOT/{lock_dir}");
        drop(held);
        lock::release(root.path());
        assert!(!lock_file.exists(), "{links:?}: released");
    }
}

#[test]
fn a_link_loop_is_a_clear_error() {
    let root = guest();
    std::fs::create_dir_all(root.path().join("var")).expect("var");
    symlink("/var/lock2", root.path().join("var/lock")).expect("link");
    symlink("lock", root.path().join("var/lock2")).expect("link");
    let path = root.path().to_path_buf();
    let e = never_hangs("a loop", move || lock::acquire(&path).map(|_| ()));
    let message = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("/var/lock")
            && message.contains("symbolic links")
            && message.contains("loop"),
        "{message}"
    );
}

fn start_state() -> StartState {
    StartState {
        pid: std::process::id(),
        started: None,
        root: "r".into(),
        online: vec![0],
        cmm_pages: Some(0),
    }
}

#[test]
fn a_link_as_the_last_component_is_never_followed() {
    let outside = common::tempdir();
    let precious = precious(outside.path());
    for link_to in [precious.clone(), common::climbing_to(&precious)] {
        let root = guest();
        std::fs::create_dir_all(root.path().join("var/lock")).expect("var/lock");
        std::fs::create_dir_all(root.path().join("run/plugtop")).expect("run/plugtop");
        for at in [
            "var/lock/cpuplugd.lock",
            "run/plugtop/state",
            "run/plugtop/state.tmp",
            "run/plugtop.pid",
            "run/plugtop.pid.tmp",
        ] {
            symlink(&link_to, root.path().join(at)).expect("link");
        }
        let e = lock::acquire(root.path()).map(|_| ());
        let message = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("is a symbolic link"), "{message}");
        // The journal and the pid file are renamed only over a regular
        // file or nothing: the link is refused and kept.
        let state = root.path().join("run/plugtop/state");
        let e = restore_journal::write(root.path(), &state, &start_state()).map(|_| ());
        let message = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("a symbolic link"), "{message}");
        let e = pid_file::write(root.path()).map(|_| ());
        let message = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("a symbolic link"), "{message}");
        for at in ["run/plugtop/state", "run/plugtop.pid"] {
            let meta = std::fs::symlink_metadata(root.path().join(at));
            assert!(meta.is_ok_and(|m| m.is_symlink()), "{at} is kept");
        }
        restore_journal::remove(root.path(), &state).expect("remove");
        pid_file::remove(root.path());
        for at in ["run/plugtop/state", "run/plugtop.pid"] {
            let gone = std::fs::symlink_metadata(root.path().join(at)).is_err();
            assert!(gone, "{at}: the link itself is removed");
        }
        assert!(
            untouched(&precious),
            "{}: written through",
            link_to.display()
        );
    }
}

fn fifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo {}", path.display());
}

#[test]
fn a_fifo_at_the_lock_or_pid_file_refuses_at_once() {
    for at in [
        "var/lock/cpuplugd.lock",
        "run/cpuplugd.pid",
        "run/plugtop/state",
    ] {
        let root = guest();
        std::fs::create_dir_all(root.path().join("var/lock")).expect("var/lock");
        std::fs::create_dir_all(root.path().join("run/plugtop")).expect("run");
        fifo(&root.path().join(at));
        let path = root.path().to_path_buf();
        let e = never_hangs(at, move || {
            let state = restore_journal::default_path(&path);
            restore_journal::read(&path, &state)
                .map(|_| ())
                .map_err(|e| plugtop::error_chain::text(&e))
                .and_then(|()| {
                    lock::acquire(&path)
                        .map(|_| ())
                        .map_err(|e| plugtop::error_chain::text(&e))
                })
        });
        let message = e.err().unwrap_or_default();
        assert!(
            message.contains("not a regular file") || message.contains("no such device"),
            "{at}: {message}"
        );
    }
}

#[test]
fn cpuplugd_s_pid_file_is_read_inside_the_root() {
    // An absolute link to a pid file outside: inside the root there is
    // none, so nothing runs there.
    let outside = common::tempdir();
    let pid = outside.path().join("cpuplugd.pid");
    std::fs::write(&pid, format!("{}\n", std::process::id())).expect("pid");
    let root = guest();
    std::fs::create_dir_all(root.path().join("run")).expect("run");
    symlink(&pid, root.path().join("run/cpuplugd.pid")).expect("link");
    drop(lock::acquire(root.path()).expect("no cpuplugd in this root"));
    lock::release(root.path());
    // The same name inside the root is read through the link.
    std::fs::create_dir_all(inside(&root, outside.path())).expect("inside");
    std::fs::write(inside(&root, &pid), format!("{}\n", std::process::id())).expect("pid");
    // Under --root its pid is not looked up on this machine (newuser51
    // #8): named a stale pid file, read through the link inside the root.
    let said = lock::acting_on(root.path()).and_then(|a| a.stale);
    assert!(
        said.as_deref()
            .is_some_and(|w| w.contains(&std::process::id().to_string())),
        "{said:?}"
    );
    // It still refuses, as cpuplugd does over any pid file.
    let message = lock::acquire(root.path())
        .map(|_| ())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.contains("cpuplugd would refuse to start too"),
        "{message}"
    );
    // A link climbing out refuses: whether cpuplugd runs cannot be told.
    std::fs::remove_file(root.path().join("run/cpuplugd.pid")).expect("rm");
    symlink(
        common::climbing_to(&pid),
        root.path().join("run/cpuplugd.pid"),
    )
    .expect("link");
    let e = lock::acquire(root.path()).map(|_| ());
    let message = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("outside the root"), "{message}");
}

#[test]
fn a_directory_swapped_for_a_link_between_two_writes_cannot_escape() {
    let outside = common::tempdir();
    let root = guest();
    let state = restore_journal::default_path(root.path());
    restore_journal::write(root.path(), &state, &start_state()).expect("first journal");
    let dir = root.path().join("run/plugtop");
    std::fs::rename(&dir, root.path().join("run/moved")).expect("move away");
    symlink(common::climbing_to(outside.path()), &dir).expect("link");
    let e = restore_journal::write(root.path(), &state, &start_state());
    let message = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("outside the root"), "{message}");
    assert!(
        restore_journal::remove(root.path(), &state).is_err(),
        "nothing removed outside"
    );
    assert!(empty(outside.path()), "nothing created outside");
    // Absolute: the journal goes to that name inside the root.
    std::fs::remove_file(&dir).expect("rm");
    symlink(outside.path(), &dir).expect("link");
    restore_journal::write(root.path(), &state, &start_state()).expect("inside");
    assert!(inside(&root, outside.path()).join("state").is_file());
    assert!(empty(outside.path()), "nothing created outside");
}
