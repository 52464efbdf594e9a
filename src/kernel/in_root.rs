//! A root directory held open, its files opened for reading the way a
//! process chrooted there would open them: an absolute link leads from the
//! root and a `..` at the root stays there, so no link planted in a root
//! can show plugtop a file outside it. For the system's own `/` that is a
//! plain `openat`, the cheap path the daemon takes every interval;
//! elsewhere it is one `openat2(RESOLVE_IN_ROOT)`, or a walk component by
//! component on kernels without it (see [`chroot_walk`](super::chroot_walk)).

use std::ffi::CStr;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::chroot_walk::{self, WalkError};

/// How a root's files are opened for reading: never blocking (a FIFO there
/// reads as nothing at once).
const READ: OFlags = OFlags::RDONLY.union(OFlags::NONBLOCK);

/// A root directory, held open: its files are opened relative to it.
#[derive(Debug)]
pub struct RootDir {
    fd: OwnedFd,
    /// The root is this process's own `/`: resolving in it is what a plain
    /// `openat` does, with no checks to pay for.
    system: bool,
}

impl RootDir {
    /// Opens `root` (a link there is followed: the caller named it).
    pub fn open(root: &Path) -> std::io::Result<RootDir> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(root, flags, Mode::empty())?;
        let system = same_file(&fd, Path::new("/"));
        Ok(RootDir { fd, system })
    }

    /// Opens `rel` with `flags`, resolved inside the root.
    pub fn open_with(&self, rel: &CStr, flags: OFlags) -> std::io::Result<OwnedFd> {
        if self.system {
            return Ok(rustix::fs::openat(
                &self.fd,
                rel,
                flags | OFlags::CLOEXEC,
                Mode::empty(),
            )?);
        }
        chroot_walk::open_in_root(self.fd.as_fd(), rel.to_bytes(), flags).map_err(io_error)
    }

    /// Opens `rel` for reading without blocking (not checked for being a
    /// regular file: see [`explain_empty`](super::regular::explain_empty)).
    pub fn open_file(&self, rel: &CStr) -> std::io::Result<File> {
        self.open_with(rel, READ).map(File::from)
    }

    /// Opens `name` (plain names, like `cpu3/online`) below `dir`, a
    /// directory opened in this root at `dir_rel`, for reading without
    /// blocking. One lookup from `dir` when no link is on the way; where
    /// one is, the whole path is resolved from the root, so a `cpuN` that
    /// is a link leads where it would in a chroot, never outside.
    pub fn open_below(
        &self,
        dir: BorrowedFd<'_>,
        dir_rel: &str,
        name: &CStr,
    ) -> std::io::Result<File> {
        if self.system {
            let flags = READ | OFlags::CLOEXEC;
            return Ok(File::from(rustix::fs::openat(
                dir,
                name,
                flags,
                Mode::empty(),
            )?));
        }
        if let Some(fd) = chroot_walk::open_unlinked(dir, name, READ).map_err(io_error)? {
            return Ok(File::from(fd));
        }
        let mut rel = Vec::with_capacity(dir_rel.len() + 1 + name.to_bytes().len());
        rel.extend_from_slice(dir_rel.as_bytes());
        rel.push(b'/');
        rel.extend_from_slice(name.to_bytes());
        chroot_walk::open_in_root(self.fd.as_fd(), &rel, READ)
            .map(File::from)
            .map_err(io_error)
    }

    /// Whether `rel` is a regular file (links followed inside the root).
    pub fn is_file(&self, rel: &CStr) -> bool {
        self.open_with(rel, OFlags::PATH)
            .and_then(|fd| Ok(rustix::fs::fstat(&fd)?))
            .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_file())
    }

    /// Reads the regular file `rel` whole, at most `limit` bytes of it.
    pub fn read_small(&self, rel: &CStr, limit: u64) -> std::io::Result<Vec<u8>> {
        read_regular(self.open_file(rel)?, rel.to_bytes(), limit)
    }

    /// Reads `name` below `dir` (see [`open_below`](Self::open_below))
    /// whole, at most `limit` bytes of it, if it is a regular file.
    pub fn read_small_below(
        &self,
        dir: BorrowedFd<'_>,
        dir_rel: &str,
        name: &CStr,
        limit: u64,
    ) -> std::io::Result<Vec<u8>> {
        read_regular(self.open_below(dir, dir_rel, name)?, name.to_bytes(), limit)
    }
}

/// At most `limit` bytes of `file` if it is a regular file (`rel` names it
/// in the error otherwise).
fn read_regular(file: File, rel: &[u8], limit: u64) -> std::io::Result<Vec<u8>> {
    let shown = Path::new("/").join(std::ffi::OsStr::from_bytes(rel));
    let file = super::regular::must_be_regular(file, &shown)?;
    let mut out = Vec::new();
    file.take(limit).read_to_end(&mut out)?;
    Ok(out)
}

pub use super::regular::is_kernel_file;

/// Whether the open `fd` is the file at `path`.
fn same_file(fd: &OwnedFd, path: &Path) -> bool {
    match (rustix::fs::fstat(fd), rustix::fs::stat(path)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

fn io_error(e: WalkError) -> std::io::Error {
    match e {
        WalkError::Io(e) => e,
        WalkError::Loop => rustix::io::Errno::LOOP.into(),
        // Neither happens for reads (a `..` at the root stays there, and
        // the last link is followed); named all the same.
        WalkError::Outside => std::io::Error::other("leads outside the root"),
        WalkError::LastIsLink => rustix::io::Errno::LOOP.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_files_are_told_by_their_file_system_not_their_name() {
        let proc_file = File::open("/proc/self/stat").expect("/proc is mounted");
        assert!(is_kernel_file(&proc_file));
        let dir = tempfile::tempdir().expect("dir");
        let plain = dir.path().join("proc/stat");
        std::fs::create_dir_all(dir.path().join("proc")).expect("proc");
        std::fs::write(&plain, "cpu 1 2 3 4\n").expect("file");
        assert!(!is_kernel_file(File::open(&plain).expect("plain")));
    }

    #[test]
    fn only_the_system_root_takes_the_plain_path() {
        assert!(RootDir::open(Path::new("/")).expect("/").system);
        let dir = tempfile::tempdir().expect("dir");
        assert!(!RootDir::open(dir.path()).expect("temp root").system);
    }
}
