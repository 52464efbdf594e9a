//! `plugtop run` in the daemon's own small program, `plugtop-run`
//! (src/bin/plugtop-run.rs): the same run built without the screen, the
//! tuner, the trainer, the fleet view and the language server, so that a
//! daemon that stays for months keeps fewer of its pages resident (about
//! half; scripts/README.md, `plugtop run` RSS).
//!
//! `plugtop run` replaces itself with it (same process, same arguments,
//! same standard streams and environment) only when it is installed beside
//! the running program (the directory of /proc/self/exe, never PATH) as a
//! regular file, not a link, an ELF program executable by, owned by and
//! writable only by the running program's owner, in a directory nobody
//! else may write to.
//! Anything else, or an `exec` that fails, and the run goes on in this
//! process, unchanged.

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

/// The daemon's own program's name, beside `plugtop`.
pub const NAME: &str = "plugtop-run";

/// Replaces this process with `plugtop-run` and this command line if it
/// is installed beside this program; returns if not, or if that fails.
pub fn exec_beside() {
    let Some(lean) = beside() else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("plugtop"));
    // Returns only on failure; the run then goes on here.
    let _ = std::process::Command::new(lean)
        .arg0(arg0)
        .args(args)
        .exec();
}

/// `plugtop-run` beside the running program, if it may be run in its place.
fn beside() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let lean = dir.join(NAME);
    let ours = std::fs::metadata(&exe).ok()?;
    fit(&lean, dir, ours.uid()).then_some(lean)
}

/// Whether `lean` in `dir` may stand in for the program owned by `owner`:
/// a regular file (not a link, opened without following one and without
/// waiting), owned by `owner`, executable by its owner and writable by
/// nobody else, an ELF program (a file of text would be run by the shell),
/// in a directory nobody else may write to.
fn fit(lean: &Path, dir: &Path, owner: u32) -> bool {
    use rustix::fs::{Mode, OFlags};
    let others_write = 0o022;
    let Ok(dir) = std::fs::metadata(dir) else {
        return false;
    };
    if dir.uid() != owner || dir.permissions().mode() & others_write != 0 {
        return false;
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(lean, flags, Mode::empty()) else {
        return false;
    };
    let file = std::fs::File::from(fd);
    let Ok(meta) = file.metadata() else {
        return false;
    };
    let mode = meta.permissions().mode();
    if !meta.file_type().is_file()
        || meta.uid() != owner
        || mode & 0o100 == 0
        || mode & others_write != 0
    {
        return false;
    }
    let mut magic = [0u8; 4];
    std::io::Read::read_exact(&mut &file, &mut magic).is_ok() && magic == *b"\x7fELF"
}
