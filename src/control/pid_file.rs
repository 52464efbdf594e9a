//! plugtop's own pid file when it runs as a daemon (`run/plugtop.pid`
//! below the root, as cpuplugd keeps `/run/cpuplugd.pid`): written beneath
//! the root as in a chroot, as a new file renamed into place, so neither a
//! link planted there nor one on the way leads the write outside the root.

use std::io::Write;
use std::path::Path;

use crate::kernel::beneath::{Beneath, BeneathError};

/// plugtop's pid file when running as a daemon, below a root.
pub const PLUGTOP_PID: &str = "run/plugtop.pid";

/// Why the pid file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PidFileError {
    #[error(transparent)]
    Beneath(#[from] BeneathError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Writes this process's pid to `run/plugtop.pid` below `root`, whole or
/// not at all (a reader never sees half a number).
pub fn write(root: &Path) -> Result<(), PidFileError> {
    let shown = root.join(PLUGTOP_PID).display().to_string();
    let io = |source| PidFileError::Io {
        path: shown.clone(),
        source,
    };
    let beneath = Beneath::open(root).map_err(io)?;
    let rel = Path::new(PLUGTOP_PID);
    let tmp = rel.with_extension("pid.tmp");
    if let Some(dir) = rel.parent() {
        beneath.create_dirs(dir)?;
    }
    // A leftover (or planted) temporary file is removed, not followed.
    beneath.remove(&tmp)?;
    let mut file = beneath.create_new(&tmp)?;
    file.write_all(format!("{}\n", std::process::id()).as_bytes())
        .map_err(io)?;
    beneath.rename(&tmp, rel)?;
    Ok(())
}

/// Removes the pid file at exit (the name itself, never what a link
/// there points to); absent is fine.
pub fn remove(root: &Path) {
    if let Ok(b) = Beneath::open(root) {
        let _ = b.remove(Path::new(PLUGTOP_PID));
    }
}
