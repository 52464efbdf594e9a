//! The pid file and the restore journal are created as every file plugtop
//! writes: beneath the root, under an unpredictable temporary name,
//! exclusively and never through a link, and renamed only over a regular
//! file or nothing. A FIFO, a socket, a directory or a link at their names
//! is refused with a message and kept as it was, and no temporary file is
//! left behind, whatever failed.

use crate::common;

use std::ffi::OsString;
use std::os::unix::fs::symlink;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::FakeRoot;
use plugtop::control::pid_file;
use plugtop::control::restore_journal::{self, StartState};
use plugtop::kernel::fs::is_temporary;

const UNTOUCHED: &str = "outside, untouched\n";
const PID: &str = "run/plugtop.pid";
const STATE: &str = "run/plugtop/state";

/// What may stand where plugtop creates a file, other than a regular file.
#[derive(Debug, Clone, Copy)]
enum Plant {
    Fifo,
    Socket,
    Directory,
    LinkOutside,
    LinkInside,
    DanglingLink,
}

const PLANTS: [Plant; 6] = [
    Plant::Fifo,
    Plant::Socket,
    Plant::Directory,
    Plant::LinkOutside,
    Plant::LinkInside,
    Plant::DanglingLink,
];

impl Plant {
    /// Puts this at `path` (its directory made); `precious` is a file
    /// outside the root a link may point to.
    fn at(self, path: &Path, precious: &Path) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        match self {
            Plant::Fifo => rustix::fs::mkfifoat(
                rustix::fs::CWD,
                path,
                rustix::fs::Mode::from_raw_mode(0o600),
            )
            .expect("fifo"),
            // The socket file stays when the listener is gone.
            Plant::Socket => drop(UnixListener::bind(path).expect("socket")),
            Plant::Directory => {
                std::fs::create_dir_all(path.join("x")).expect("directory");
            }
            Plant::LinkOutside => symlink(precious, path).expect("link"),
            Plant::LinkInside => symlink("/proc/sys/vm/cmm_pages", path).expect("link"),
            Plant::DanglingLink => symlink("nowhere", path).expect("link"),
        }
    }

    /// The words the refusal uses for it.
    fn words(self) -> &'static str {
        match self {
            Plant::Fifo => "a FIFO",
            Plant::Socket => "a socket",
            Plant::Directory => "a directory",
            Plant::LinkOutside | Plant::LinkInside | Plant::DanglingLink => "a symbolic link",
        }
    }

    /// Whether `path` is still what was planted.
    fn still_at(self, path: &Path) -> bool {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return false;
        };
        use std::os::unix::fs::FileTypeExt as _;
        let kind = meta.file_type();
        match self {
            Plant::Fifo => kind.is_fifo(),
            Plant::Socket => kind.is_socket(),
            Plant::Directory => kind.is_dir() && path.join("x").is_dir(),
            Plant::LinkOutside | Plant::LinkInside | Plant::DanglingLink => kind.is_symlink(),
        }
    }
}

/// A guest, and a precious file outside it.
fn setup() -> (FakeRoot, tempfile::TempDir, PathBuf) {
    let root = FakeRoot::guest(2);
    for i in 0..2 {
        root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), "1\n");
        root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
    }
    let outside = common::tempdir();
    let precious = outside.path().join("precious");
    std::fs::write(&precious, UNTOUCHED).expect("precious");
    (root, outside, precious)
}

/// The temporary files left in `dir`.
fn temporaries(dir: &Path) -> Vec<OsString> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name())
                .filter(|n| is_temporary(n) || n.to_string_lossy().ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default()
}

fn start_state(root: &Path) -> StartState {
    StartState {
        pid: std::process::id(),
        started: Some(1),
        root: std::fs::canonicalize(root)
            .expect("root")
            .display()
            .to_string(),
        online: vec![0, 1],
        cmm_pages: Some(0),
    }
}

/// After a refused write of `rel`: the message names it and what stands
/// there, the plant is kept, nothing outside changed, no temporary file.
fn assert_refused(
    plant: Plant,
    root: &FakeRoot,
    rel: &str,
    precious: &Path,
    e: impl std::fmt::Display,
) {
    let message = e.to_string();
    assert!(
        message.contains(&format!("/{rel}")) && message.contains(plant.words()),
        "{plant:?}: {message}"
    );
    assert!(plant.still_at(&root.path().join(rel)), "{plant:?}: kept");
    let dir = root.path().join(rel);
    let dir = dir.parent().expect("parent");
    assert_eq!(temporaries(dir), Vec::<OsString>::new(), "{plant:?}");
    assert_eq!(
        std::fs::read_to_string(precious).ok().as_deref(),
        Some(UNTOUCHED),
        "{plant:?}: written through"
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("proc/sys/vm/cmm_pages")).ok(),
        Some("0\n".into()),
        "{plant:?}: written through a link inside"
    );
}

#[test]
fn anything_but_a_regular_file_at_the_pid_file_is_refused_and_kept() {
    for plant in PLANTS {
        let (root, _outside, precious) = setup();
        plant.at(&root.path().join(PID), &precious);
        let e = pid_file::write(root.path()).expect_err("refused");
        assert_refused(plant, &root, PID, &precious, e);
    }
}

#[test]
fn anything_but_a_regular_file_at_the_journal_is_refused_and_kept() {
    for plant in PLANTS {
        let (root, _outside, precious) = setup();
        plant.at(&root.path().join(STATE), &precious);
        let state = root.path().join(STATE);
        let e = restore_journal::write(root.path(), &state, &start_state(root.path()))
            .expect_err("refused");
        assert_refused(plant, &root, STATE, &precious, e);
    }
}

#[test]
fn a_journal_given_outside_the_root_is_created_the_same_way() {
    for plant in PLANTS {
        let (root, outside, precious) = setup();
        let state = outside.path().join("dir/state");
        plant.at(&state, &precious);
        let e = restore_journal::write(root.path(), &state, &start_state(root.path()))
            .expect_err("refused");
        let message = e.to_string();
        assert!(message.contains(plant.words()), "{plant:?}: {message}");
        assert!(plant.still_at(&state), "{plant:?}: kept");
        assert!(temporaries(&outside.path().join("dir")).is_empty());
        assert_eq!(
            std::fs::read_to_string(&precious).ok().as_deref(),
            Some(UNTOUCHED)
        );
    }
}

#[test]
fn a_regular_file_is_replaced_whole_and_the_old_temporary_names_are_not_used() {
    let (root, _outside, precious) = setup();
    // Links at the names the temporary files once had (predictable): never
    // followed, removed or replaced.
    for old in ["run/plugtop.pid.tmp", "run/plugtop/state.tmp"] {
        std::fs::create_dir_all(root.path().join(old).parent().expect("parent")).expect("dir");
        symlink(&precious, root.path().join(old)).expect("link");
    }
    root.write(PID, "stale\n");
    root.write(STATE, "stale\n");
    let state = root.path().join(STATE);
    for _ in 0..3 {
        pid_file::write(root.path()).expect("pid file");
        restore_journal::write(root.path(), &state, &start_state(root.path())).expect("journal");
    }
    assert_eq!(
        std::fs::read_to_string(root.path().join(PID)).ok(),
        Some(format!("{}\n", std::process::id()))
    );
    assert_eq!(
        restore_journal::read(root.path(), &state).expect("reads"),
        Some(start_state(root.path()))
    );
    for old in ["run/plugtop.pid.tmp", "run/plugtop/state.tmp"] {
        assert!(
            std::fs::symlink_metadata(root.path().join(old)).is_ok_and(|m| m.is_symlink()),
            "{old} kept"
        );
    }
    for dir in ["run", "run/plugtop"] {
        let left: Vec<_> = temporaries(&root.path().join(dir))
            .into_iter()
            .filter(|n| is_temporary(n))
            .collect();
        assert!(left.is_empty(), "{dir}: {left:?}");
    }
    assert_eq!(
        std::fs::read_to_string(&precious).ok().as_deref(),
        Some(UNTOUCHED)
    );
}

/// A file `chattr +i` made immutable, made mutable again when dropped.
struct Immutable(PathBuf);

impl Immutable {
    /// `None` where the file system or the capabilities do not allow it.
    fn make(path: &Path) -> Option<Immutable> {
        let made = Command::new("chattr")
            .arg("+i")
            .arg(path)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        made.then(|| Immutable(path.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn a_failed_rename_leaves_no_temporary_file() {
    // The reviewer's case: a directory where the pid file goes.
    let (root, _outside, _precious) = setup();
    std::fs::create_dir_all(root.path().join("run/plugtop.pid/x")).expect("dir");
    pid_file::write(root.path()).expect_err("a directory there");
    assert!(temporaries(&root.path().join("run")).is_empty());
    // A regular file the kernel will not let a rename replace (immutable):
    // the check passes, the rename itself fails.
    let (root, _outside, _precious) = setup();
    root.write(PID, "old\n");
    root.write(STATE, "old\n");
    let held: Vec<_> = [PID, STATE]
        .iter()
        .filter_map(|rel| Immutable::make(&root.path().join(rel)))
        .collect();
    if held.len() == 2 {
        let e = pid_file::write(root.path()).expect_err("immutable");
        assert!(e.to_string().contains("/run/plugtop.pid"), "{e}");
        let state = root.path().join(STATE);
        let e = restore_journal::write(root.path(), &state, &start_state(root.path()))
            .expect_err("immutable");
        assert!(e.to_string().contains("/run/plugtop/state"), "{e}");
        assert!(temporaries(&root.path().join("run")).is_empty());
        assert!(temporaries(&root.path().join("run/plugtop")).is_empty());
        assert_eq!(
            std::fs::read_to_string(root.path().join(PID)).ok(),
            Some("old\n".into())
        );
    } else {
        eprintln!("chattr +i is not possible here: the rename failure itself was not tried");
    }
}

/// `plugtop run` as a daemon (without `-f`) on `root`, expected to refuse:
/// exit code and stderr. A daemon that starts after all is stopped (its
/// pid file names it) and the test fails.
fn daemon_refusing(root: &FakeRoot, mode: &str) -> (Option<i32>, String) {
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let out = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "--mode", mode, "-c"])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .stdin(Stdio::null())
        .output()
        .expect("run");
    if out.status.success()
        && let Ok(pid) = std::fs::read_to_string(root.path().join(PID))
    {
        let _ = Command::new("kill").args(["-TERM", pid.trim()]).status();
        panic!("the daemon started over a planted pid file");
    }
    (out.status.code(), crate::common::said(&out))
}

#[test]
fn run_refuses_to_start_over_a_planted_pid_file_and_leaves_nothing() {
    for plant in [
        Plant::Fifo,
        Plant::Socket,
        Plant::Directory,
        Plant::LinkOutside,
    ] {
        for mode in ["observe", "auto"] {
            let (root, _outside, precious) = setup();
            plant.at(&root.path().join(PID), &precious);
            let (code, err) = daemon_refusing(&root, mode);
            assert_eq!(code, Some(1), "{plant:?} {mode}: {err}");
            assert!(
                err.contains("pid file") && err.contains(plant.words()),
                "{plant:?} {mode}: {err}"
            );
            assert!(plant.still_at(&root.path().join(PID)), "{plant:?}: kept");
            assert!(temporaries(&root.path().join("run")).is_empty());
            // Acting, the guest was taken and given back: no journal, no
            // lock file.
            assert!(!root.path().join(STATE).exists(), "{plant:?} {mode}");
            assert!(!root.path().join("var/lock/cpuplugd.lock").exists());
            assert_eq!(
                std::fs::read_to_string(&precious).ok().as_deref(),
                Some(UNTOUCHED)
            );
        }
    }
}
