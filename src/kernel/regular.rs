//! Opening kernel files without ever blocking: a FIFO (or a device) where
//! a /proc or /sys file should be would hang a plain `open` or `read`
//! forever, and `/dev/zero` would never end. Files are opened non-blocking
//! and refused unless they are regular files, which /proc and /sys files
//! are.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `O_NONBLOCK`, as `OpenOptions::custom_flags` takes it.
const NONBLOCK: i32 = rustix::fs::OFlags::NONBLOCK.bits().cast_signed();

/// `file` when it is a regular file; an error naming `path` otherwise.
pub fn must_be_regular(file: File, path: &Path) -> std::io::Result<File> {
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(std::io::Error::other(format!(
        "{} is not a regular file (a FIFO, a device or a socket?); refusing to use it",
        path.display()
    )))
}

/// Opens `path` for reading without blocking. Not checked for being a
/// regular file (that costs a `stat` per file and interval): a FIFO opened
/// this way reads as empty or fails at once, and [`explain_empty`] says why.
pub fn open_for_reading(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(NONBLOCK)
        .open(path)
}

/// Why a file read as nothing: an error naming it when it is no regular
/// file, `Ok` when it really is an empty file.
pub fn explain_empty(file: &File, path: &Path) -> std::io::Result<()> {
    if file.metadata()?.file_type().is_file() {
        return Ok(());
    }
    Err(std::io::Error::other(format!(
        "{} is not a regular file (a FIFO, a device or a socket?); refusing to use it",
        path.display()
    )))
}

/// Reads a small file whole (at most `limit` bytes), regular files only.
pub fn read_small(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = must_be_regular(open_for_reading(path)?, path)?;
    let mut out = Vec::new();
    file.take(limit).read_to_end(&mut out)?;
    Ok(out)
}

/// Opens a file a user named (a recording, a rule file, a scenario, a
/// journal given with `--state`) for reading: without blocking, a regular
/// file only, and not one of the kernel's (/proc, /sys): those are read by
/// what they are, and reading some of them takes their data away
/// (`/proc/kmsg` hands each kernel message to one reader only).
pub fn open_named(path: &Path) -> std::io::Result<File> {
    let file = must_be_regular(open_for_reading(path)?, path)?;
    if is_kernel_file(&file) {
        return Err(std::io::Error::other(format!(
            "{} is a kernel file (on /proc or /sys), not one plugtop reads by name; refusing to use it",
            path.display()
        )));
    }
    Ok(file)
}

/// [`open_named`], read whole up to `limit` bytes.
pub fn read_named(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    open_named(path)?.take(limit).read_to_end(&mut out)?;
    Ok(out)
}

/// sysfs's file system number (`SYSFS_MAGIC` in linux/magic.h).
const SYSFS_MAGIC: rustix::fs::FsWord = 0x6265_6572;

/// Whether `file` lies in /proc or /sys, told by its file system rather
/// than its name: right in a chroot and for a kernel file bind-mounted into
/// a root, at one `fstatfs` instead of resolving a path.
pub fn is_kernel_file(file: impl std::os::fd::AsFd) -> bool {
    rustix::fs::fstatfs(file)
        .is_ok_and(|fs| fs.f_type == rustix::fs::PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)
}
