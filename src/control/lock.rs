//! One controller per guest: plugtop refuses to act while cpuplugd runs or
//! another plugtop acts on the same root, and holds cpuplugd's own lock so
//! cpuplugd cannot start beside it.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::journal::pid_alive;

/// cpuplugd's lock file, below a root.
pub const LOCK_FILE: &str = "var/lock/cpuplugd.lock";
/// cpuplugd's pid file, below a root.
pub const CPUPLUGD_PID: &str = "run/cpuplugd.pid";
/// plugtop's pid file when running as a daemon, below a root.
pub const PLUGTOP_PID: &str = "run/plugtop.pid";

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
        "cpuplugd is running (pid {pid} in {file}); stop it first, e.g. `systemctl stop cpuplugd`"
    )]
    CpuplugdRuns { pid: u32, file: String },
    #[error(
        "{file} exists but no process {pid} runs: cpuplugd would refuse to start too; remove the file if no cpuplugd runs"
    )]
    StalePidFile { pid: String, file: String },
    #[error("{0} is locked: cpuplugd is starting or another plugtop acts on this guest")]
    Held(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Checks that no cpuplugd runs and takes the lock below `root`.
pub fn acquire(root: &Path) -> Result<GuestLock, LockError> {
    // cpuplugd refuses to start while its pid file exists, even a stale one.
    let pid_file = root.join(CPUPLUGD_PID);
    if let Ok(text) = fs::read_to_string(&pid_file) {
        let file = pid_file.display().to_string();
        return Err(match text.trim().parse::<u32>() {
            Ok(pid) if pid_alive(pid) => LockError::CpuplugdRuns { pid, file },
            _ => LockError::StalePidFile {
                pid: text.trim().chars().take(20).collect(),
                file,
            },
        });
    }
    let path = root.join(LOCK_FILE);
    let io = |source| LockError::Io {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => Ok(GuestLock { _file: file, path }),
        Err(TryLockError::WouldBlock) => Err(LockError::Held(path.display().to_string())),
        Err(TryLockError::Error(e)) => Err(io(e)),
    }
}
