//! plugtop's own pid file when it runs as a daemon (`run/plugtop.pid`
//! below the root, as cpuplugd keeps `/run/cpuplugd.pid`): created as
//! every file plugtop writes ([`StagedFiles`]): beneath the root as in a
//! chroot, under an unpredictable temporary name, renamed only over a
//! regular file or nothing, so neither a link, a FIFO nor a socket planted
//! there is replaced or written through.

use std::path::Path;

use crate::kernel::fs::Root;
use crate::kernel::fs::{FsError, Placing, StagedFiles};

/// plugtop's pid file when running as a daemon, below a root.
pub const PLUGTOP_PID: &str = "run/plugtop.pid";

/// Writes this process's pid to `run/plugtop.pid` below `root`, whole or
/// not at all (a reader never sees half a number); no temporary file is
/// left when it cannot be placed.
pub fn write(root: &Path) -> Result<(), FsError> {
    let beneath = Root::open_for_own_files(root).map_err(|source| FsError::io(root, source))?;
    let pid = format!("{}\n", std::process::id());
    StagedFiles::new(&beneath, Placing::REPLACE).put(PLUGTOP_PID, pid.as_bytes())?;
    Ok(())
}

/// The pid in `run/plugtop.pid` below `beneath`, when it holds one: read
/// bounded (64 bytes), beneath the root, never through a link.
pub fn read(beneath: &Root) -> Option<u32> {
    let bytes = beneath
        .read(Path::new(PLUGTOP_PID), 64, crate::kernel::fs::Resolve::Own)
        .ok()?;
    std::str::from_utf8(&bytes).ok()?.trim().parse().ok()
}

/// Removes the pid file at exit (the name itself, never what a link
/// there points to); absent is fine.
pub fn remove(root: &Path) {
    if let Ok(b) = Root::open(root) {
        let _ = b.remove(Path::new(PLUGTOP_PID));
    }
}
