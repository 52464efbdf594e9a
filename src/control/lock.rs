//! One controller per guest: plugtop refuses to act while cpuplugd runs or
//! another plugtop acts on the same root, and holds cpuplugd's own lock so
//! cpuplugd cannot start beside it.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use super::restore_journal::pid_alive;
use crate::kernel::fs::{FsError, Resolve, Root};
use crate::kernel::processes::{self, LockedFile};

/// cpuplugd's lock file, below a root.
pub const LOCK_FILE: &str = "var/lock/cpuplugd.lock";
/// cpuplugd's pid file, below a root.
pub const CPUPLUGD_PID: &str = "run/cpuplugd.pid";
/// plugtop's pid file when running as a daemon, below a root.
pub use super::pid_file::PLUGTOP_PID;

/// Held for as long as plugtop may act; dropping it releases the lock.
#[derive(Debug)]
pub struct GuestLock {
    _file: File,
    path: PathBuf,
}

impl GuestLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Why plugtop may not act on this guest now.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "cpuplugd is running (pid {pid}, `{name}`, in {file}); stop it first, e.g. `systemctl stop cpuplugd`"
    )]
    CpuplugdRuns {
        pid: u32,
        name: String,
        file: String,
    },
    /// cpuplugd's pid file is there but names no cpuplugd that runs:
    /// cpuplugd refuses to start over any pid file, stale or not, so
    /// plugtop does too (`why` says why it is stale, terminal-safe).
    #[error(
        "{file} exists but {why}: cpuplugd would refuse to start too; remove the file if no cpuplugd runs"
    )]
    StalePidFile { file: String, why: String },
    /// The lock file (at `path`) is held by another process: `holder`
    /// says which, as this machine's lock table names it, and `who` what
    /// that means (another plugtop, cpuplugd, or either when not told).
    #[error("{} is locked{holder}: {who}", path.display())]
    Held {
        path: std::path::PathBuf,
        holder: String,
        who: &'static str,
    },
    #[error(transparent)]
    Beneath(#[from] FsError),
}

/// The most a pid file may hold: a number and a newline, with room to spare.
const PID_FILE_LIMIT: u64 = 4096;

/// The command names of a process that a pid in cpuplugd's pid file may
/// name and still be taken for one that acts (plugtop's daemon and its
/// own small program included).
const ACTING_NAMES: [&str; 3] = ["cpuplugd", "plugtop", "plugtop-run"];

/// What cpuplugd's pid file below a root says about who acts there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PidFileSays {
    /// A process of that name runs on this machine under that pid.
    Acting { pid: u32, name: String },
    /// Nothing acts by it (a stale file): why, in words, terminal-safe.
    Stale { why: String },
}

/// Judges the text of cpuplugd's pid file: on this machine's own `/`
/// (`system_root`) its pid counts as acting only when that process runs
/// and `name_of` says it is cpuplugd (or plugtop); any other process under
/// that pid (a pid reused after cpuplugd was killed) makes the file stale.
/// Below another root (`--root`: a copy of a guest, a served simulator) the
/// pid is one of the guest the root belongs to, not of this machine, and
/// is not looked up: a cpuplugd acting on that root holds its lock file,
/// and the lock is what tells.
pub fn judge_pid_file(
    text: &str,
    system_root: bool,
    name_of: impl Fn(u32) -> Option<String>,
) -> PidFileSays {
    let shown =
        || crate::safe_text::terminal_safe(&crate::safe_text::cut_to(text.trim(), 20)).into_owned();
    let Ok(pid) = text.trim().parse::<u32>() else {
        return PidFileSays::Stale {
            why: format!("holds `{}`, not a pid", shown()),
        };
    };
    if pid == 0 {
        return PidFileSays::Stale {
            why: "holds 0, which is no process's pid".to_string(),
        };
    }
    if !system_root {
        return PidFileSays::Stale {
            why: format!(
                "names pid {pid}, a pid of the guest this root belongs to, not looked up on this machine (a cpuplugd acting here would hold the lock)"
            ),
        };
    }
    match name_of(pid) {
        Some(name) if ACTING_NAMES.contains(&name.as_str()) => PidFileSays::Acting { pid, name },
        Some(name) => PidFileSays::Stale {
            why: format!(
                "names pid {pid}, which is `{}`, not cpuplugd",
                crate::safe_text::terminal_safe(&name)
            ),
        },
        None => PidFileSays::Stale {
            why: format!("names pid {pid}, which does not run"),
        },
    }
}

/// What cpuplugd's pid file below `beneath` says, or `None` when there is
/// none. Read beneath the root (a link there resolves as in a chroot),
/// without blocking on a FIFO and bounded; a pid file that cannot be read
/// says nothing about cpuplugd, so that is an error (a refusal).
fn cpuplugd_pid_file(beneath: &Root) -> Result<Option<PidFileSays>, LockError> {
    let text = match beneath.read(Path::new(CPUPLUGD_PID), PID_FILE_LIMIT, Resolve::Beneath) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let me = std::process::id();
    Ok(Some(judge_pid_file(
        &text,
        beneath.is_system_root(),
        |pid| {
            (pid != me && pid_alive(pid))
                .then(|| processes::command_name(pid))
                .flatten()
        },
    )))
}

/// Refuses when cpuplugd's pid file exists, as cpuplugd refuses to start
/// while it does, even a stale one: saying that a cpuplugd runs only when
/// [`judge_pid_file`] finds one, otherwise why the file is stale.
fn refuse_beside_cpuplugd(root: &Path, beneath: &Root) -> Result<(), LockError> {
    let file = || root.join(CPUPLUGD_PID).display().to_string();
    match cpuplugd_pid_file(beneath)? {
        Some(PidFileSays::Acting { pid, name }) => Err(LockError::CpuplugdRuns {
            pid,
            name: crate::safe_text::terminal_safe(&name).into_owned(),
            file: file(),
        }),
        Some(PidFileSays::Stale { why }) => Err(LockError::StalePidFile { file: file(), why }),
        None => Ok(()),
    }
}

/// Checks that no cpuplugd runs and takes the lock below `root`.
pub fn acquire(root: &Path) -> Result<GuestLock, LockError> {
    let path = root.join(LOCK_FILE);
    let io = |source| LockError::Beneath(FsError::io(&path, source));
    // Resolved beneath the root as in a chroot: `var/lock` → `/run/lock`
    // (Debian) is followed inside the root, and no link leads outside it.
    let beneath = Root::open_for_own_files(root).map_err(|source| FsError::io(root, source))?;
    refuse_beside_cpuplugd(root, &beneath)?;
    let rel = Path::new(LOCK_FILE);
    if let Some(dir) = rel.parent() {
        beneath.create_dirs(dir)?;
    }
    let file = beneath.open_or_create(rel)?;
    match file.try_lock() {
        Ok(()) => Ok(GuestLock { _file: file, path }),
        Err(TryLockError::WouldBlock) => {
            let (holder, who) = holder_words(&beneath);
            Err(LockError::Held {
                holder,
                who,
                path: path.to_path_buf(),
            })
        }
        Err(TryLockError::Error(e)) => Err(io(e)),
    }
}

/// Whether [`acquire`] would be refused now because cpuplugd runs or
/// another process holds the lock below `root`: looked up, never taken
/// (the lock table and cpuplugd's pid file, read bounded), so a question
/// before arming can say so instead of asking. A lock taken after this
/// look-up is still refused by [`acquire`].
pub fn would_refuse(root: &Path) -> Result<(), LockError> {
    let Ok(beneath) = Root::open(root) else {
        // Unopenable: acquire says why.
        return Ok(());
    };
    refuse_beside_cpuplugd(root, &beneath)?;
    if lock_holder(&beneath, Some(std::process::id())).is_none() {
        return Ok(());
    }
    let (holder, who) = holder_words(&beneath);
    Err(LockError::Held {
        holder,
        who,
        path: root.join(LOCK_FILE),
    })
}

/// Who holds the lock below `beneath`, in words for [`LockError::Held`]
/// (" by pid 4242 (plugtop), the pid in run/plugtop.pid"), or nothing
/// when the lock table does not say; and what that holder is: only an
/// unknown one may be either cpuplugd starting or another plugtop.
fn holder_words(beneath: &Root) -> (String, &'static str) {
    const EITHER: &str = "cpuplugd is starting or another plugtop acts on this guest";
    let Some((pid, name)) = lock_holder(beneath, None) else {
        return (String::new(), EITHER);
    };
    let who = match name.as_deref() {
        // As the screen's header says it: "STOPPED: nothing acts" (nu54 M7).
        _ if processes::stopped(pid) => {
            "it is stopped (SIGSTOP or Ctrl-Z): nothing acts now, but it holds the guest and acts again when continued"
        }
        Some("plugtop" | "plugtop-run") => "another plugtop acts on this guest",
        Some("cpuplugd") => "cpuplugd acts on this guest",
        _ => EITHER,
    };
    let name = name.map(|n| format!(" ({n})")).unwrap_or_default();
    let named = if crate::control::pid_file::read(beneath) == Some(pid) {
        format!(", the pid in {}", crate::control::pid_file::PLUGTOP_PID)
    } else {
        String::new()
    };
    (format!(" by pid {pid}{name}{named}"), who)
}

/// The first process this machine's lock table says holds the guest lock
/// below `beneath` (other than `except`), with its command name made
/// terminal-safe when it can be read.
fn lock_holder(beneath: &Root, except: Option<u32>) -> Option<(u32, Option<String>)> {
    processes::flock_holder_of(beneath, Path::new(LOCK_FILE), except)
}

/// A process other than this one that acts on a guest now: cpuplugd (its
/// pid file names a running cpuplugd) or whoever holds the guest lock; or
/// a stale cpuplugd pid file, named as such.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// "cpuplugd", or the lock holder's command name made terminal-safe.
    pub name: String,
    pub pid: u32,
    /// When it started, as this machine's clock says (seconds since the
    /// epoch), when that could be told.
    pub since: Option<i64>,
    /// Nobody acts: cpuplugd's pid file is stale, and this says why
    /// (`name` and `pid` then say nothing).
    pub stale: Option<String>,
    /// It is stopped (SIGSTOP, Ctrl-Z, a tracer): it still holds what it
    /// holds, but nothing acts until it is continued.
    pub stopped: bool,
}

/// Who acts on the guest below `root` now besides this process, looked up
/// and never taken (cpuplugd's pid file read beneath the root, bounded; this
/// machine's lock table): `None` when nobody does or nothing tells, a
/// stale pid file when only that is there.
pub fn acting_on(root: &Path) -> Option<Actor> {
    let beneath = Root::open(root).ok()?;
    let me = std::process::id();
    let pid_file = cpuplugd_pid_file(&beneath).ok().flatten();
    let acting = match &pid_file {
        Some(PidFileSays::Acting { pid, .. }) => Some((*pid, "cpuplugd".to_string())),
        _ => None,
    };
    let Some((pid, name)) = acting.or_else(|| {
        let (pid, name) = lock_holder(&beneath, Some(me))?;
        Some((pid, name.unwrap_or_else(|| "a process".to_string())))
    }) else {
        return match pid_file {
            Some(PidFileSays::Stale { why }) => Some(Actor {
                name: String::new(),
                pid: 0,
                since: None,
                stale: Some(why),
                stopped: false,
            }),
            _ => None,
        };
    };
    // Whole seconds: the same start looked up again is the same.
    let since = processes::started_at(pid)
        .filter(|t| t.is_finite() && *t >= 0.0)
        .map(|t| t as i64);
    Some(Actor {
        name,
        pid,
        since,
        stale: None,
        stopped: processes::stopped(pid),
    })
}

/// Removes the lock file at exit, as cpuplugd does (beneath the root).
pub fn release(root: &Path) {
    if let Ok(b) = Root::open(root) {
        let _ = b.remove(Path::new(LOCK_FILE));
    }
}

/// Whether process `pid` holds the lock below `root` now: looked up in
/// this machine's lock table, never taken, so a plugtop starting at that
/// moment is not turned away. The lock, not a process name, is what tells
/// that a plugtop acts on this root: a renamed binary holds it too, and an
/// observer or a plugtop acting on another root does not.
pub fn held_by(root: &Path, pid: u32) -> bool {
    let Ok(beneath) = Root::open(root) else {
        return false;
    };
    beneath
        .regular_id(Path::new(LOCK_FILE))
        .is_some_and(|(dev, inode)| processes::holds_flock(pid, LockedFile::of(dev, inode)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pid_file_acts_only_for_a_running_cpuplugd_on_this_machines_own_root() {
        let named = |name: &'static str| move |_pid: u32| Some(name.to_string());
        assert_eq!(
            judge_pid_file("4242\n", true, named("cpuplugd")),
            PidFileSays::Acting {
                pid: 4242,
                name: "cpuplugd".into()
            }
        );
        assert!(matches!(
            judge_pid_file("4242\n", true, named("plugtop-run")),
            PidFileSays::Acting { pid: 4242, .. }
        ));
        // A pid reused by another program (cpuplugd killed -9): stale.
        match judge_pid_file("31080\n", true, named("sleep")) {
            PidFileSays::Stale { why } => {
                assert!(why.contains("31080") && why.contains("`sleep`"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        // A name with control characters is shown escaped.
        match judge_pid_file("7", true, named("x\u{1b}[2Jy")) {
            PidFileSays::Stale { why } => assert!(!why.contains('\u{1b}'), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            judge_pid_file("31080", true, |_| None),
            PidFileSays::Stale { why } if why.contains("does not run")
        ));
        assert!(matches!(
            judge_pid_file("\u{1b}]0;owned\u{7}", true, named("cpuplugd")),
            PidFileSays::Stale { why } if !why.contains('\u{1b}') && why.contains("not a pid")
        ));
        // Below another root the pid is not looked up at all.
        let never = |_pid: u32| -> Option<String> { panic!("looked up under --root") };
        assert!(matches!(
            judge_pid_file("4242\n", false, never),
            PidFileSays::Stale { why } if why.contains("not looked up")
        ));
        // adv51: pid 0 was called "a pid of the guest", and 4,000 digits
        // were shown as 20 with no sign of the rest.
        for system_root in [true, false] {
            assert!(matches!(
                judge_pid_file("0\n", system_root, never),
                PidFileSays::Stale { why } if why == "holds 0, which is no process's pid"
            ));
        }
        assert!(matches!(
            judge_pid_file(&"9".repeat(4000), true, never),
            PidFileSays::Stale { why } if why.contains("… (3980 bytes more)`, not a pid")
        ));
    }

    #[test]
    fn pid_file_refusals_under_a_root_name_the_file_below_it_and_what_it_is() {
        // adv51: refusals named `/run/cpuplugd.pid`, which reads as this
        // machine's file under --root, and called a directory "a FIFO, a
        // device or a socket".
        let root = tempfile::tempdir().expect("root");
        let run = root.path().join("run");
        std::fs::create_dir(&run).expect("run");
        let pid = run.join("cpuplugd.pid");
        let full = pid.display().to_string();
        let refused_with = |start: &str| {
            let said = match acquire(root.path()) {
                Ok(_) => panic!("acquired beside {full}"),
                Err(e) => crate::error_chain::text(&e),
            };
            assert!(said.starts_with(&format!("{full}{start}")), "{said}");
        };
        std::fs::create_dir(&pid).expect("a directory");
        refused_with(" is a directory, not a regular file");
        std::fs::remove_dir(&pid).expect("rm");
        crate::kernel::fs::tests::mkfifo(&pid);
        refused_with(" is a FIFO, not a regular file");
        std::fs::remove_file(&pid).expect("rm");
        std::fs::write(&pid, "1".repeat(5000)).expect("a big one");
        refused_with(": larger than 4096 bytes");
        std::fs::remove_file(&pid).expect("rm");
        std::os::unix::fs::symlink("../../../../../etc/hostname", &pid).expect("a link");
        refused_with(" leads outside the root");
    }
}
