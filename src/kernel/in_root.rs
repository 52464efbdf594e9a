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
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// Whether files are still opened with `O_NOATIME` (see
    /// [`RootDir::open_with`]); cleared at the first file it is refused for.
    noatime: AtomicBool,
}

impl RootDir {
    /// Opens `root` (a link there is followed: the caller named it).
    pub fn open(root: &Path) -> std::io::Result<RootDir> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(root, flags, Mode::empty())?;
        let system = is_system_root(&fd);
        Ok(RootDir {
            fd,
            system,
            noatime: AtomicBool::new(!system),
        })
    }

    /// Opens `rel` with `flags`, resolved inside the root.
    ///
    /// Below a root that is not `/` the files are plain files, read anew
    /// every interval: reading one would update its access time, and ext4
    /// then writes the inode back, which cost plugtop run more than the
    /// reading itself. They are opened with `O_NOATIME` where the kernel
    /// allows it (the owner or root); where it refuses, from then on
    /// without. /proc and /sys keep no access times.
    pub fn open_with(&self, rel: &CStr, flags: OFlags) -> std::io::Result<OwnedFd> {
        if self.system {
            return Ok(rustix::fs::openat(
                &self.fd,
                rel,
                flags | OFlags::CLOEXEC,
                Mode::empty(),
            )?);
        }
        self.without_atime(flags, |flags| {
            chroot_walk::open_in_root(self.fd.as_fd(), rel, flags).map_err(io_error)
        })
    }

    /// `open` with `O_NOATIME` added while the kernel allows it; again
    /// without it (and from then on) when it says `EPERM`.
    fn without_atime<T>(
        &self,
        flags: OFlags,
        open: impl Fn(OFlags) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let reading = !flags.intersects(OFlags::WRONLY | OFlags::RDWR | OFlags::PATH);
        if !reading || !self.noatime.load(Ordering::Relaxed) {
            return open(flags);
        }
        match open(flags | OFlags::NOATIME) {
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::PERM.raw_os_error()) => {
                self.noatime.store(false, Ordering::Relaxed);
                open(flags)
            }
            other => other,
        }
    }

    /// Opens `rel` for reading without blocking (not checked for being a
    /// regular file: see [`explain_empty`](super::regular::explain_empty)).
    pub fn open_file(&self, rel: &CStr) -> std::io::Result<File> {
        self.open_with(rel, READ).map(File::from)
    }

    /// Opens `rel` for reading and writing, resolved as a write below the
    /// root is (a `..` that climbs above it refused: see
    /// [`Beneath`](super::beneath::Beneath)), without blocking and, below
    /// a root that is not `/`, without access times (an `EPERM` for that
    /// is the caller's to handle: it opens the file as before).
    pub fn open_for_update(&self, rel: &CStr) -> std::io::Result<File> {
        let flags = OFlags::RDWR | OFlags::NONBLOCK;
        if self.system {
            let flags = flags | OFlags::CLOEXEC;
            return Ok(File::from(rustix::fs::openat(
                &self.fd,
                rel,
                flags,
                Mode::empty(),
            )?));
        }
        chroot_walk::open(
            &self.fd,
            rel.to_bytes(),
            flags | OFlags::NOATIME,
            Mode::empty(),
            chroot_walk::Last::Follow,
        )
        .map(File::from)
        .map_err(io_error)
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
        let below = self.without_atime(READ, |flags| {
            chroot_walk::open_unlinked(dir, name, flags).map_err(io_error)
        })?;
        if let Some(fd) = below {
            return Ok(File::from(fd));
        }
        let mut rel = Vec::with_capacity(dir_rel.len() + 2 + name.to_bytes().len());
        rel.extend_from_slice(dir_rel.as_bytes());
        rel.push(b'/');
        rel.extend_from_slice(name.to_bytes_with_nul());
        let rel = CStr::from_bytes_with_nul(&rel)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        self.without_atime(READ, |flags| {
            chroot_walk::open_in_root(self.fd.as_fd(), rel, flags).map_err(io_error)
        })
        .map(File::from)
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

/// Whether the open `fd` is this process's `/` (looked up once: a
/// snapshot series opens a root per snapshot).
fn is_system_root(fd: &OwnedFd) -> bool {
    static SYSTEM_ROOT: OnceLock<Option<(u64, u64)>> = OnceLock::new();
    let id = |st: rustix::fs::Stat| (st.st_dev, st.st_ino);
    let system = SYSTEM_ROOT.get_or_init(|| rustix::fs::stat("/").ok().map(id));
    system.is_some_and(|root| rustix::fs::fstat(fd).is_ok_and(|st| id(st) == root))
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

    /// Reading a root's plain files leaves their access times alone (the
    /// mount here is `relatime`: an access time older than the change
    /// would be updated by a plain read).
    #[test]
    fn reading_a_plain_root_leaves_access_times_alone() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join("sys/cpu/cpu1")).expect("dirs");
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        for rel in ["sys/cpu/online", "sys/cpu/cpu1/online"] {
            let path = dir.path().join(rel);
            std::fs::write(&path, "1\n").expect("file");
            let file = File::options().write(true).open(&path).expect("open");
            file.set_times(std::fs::FileTimes::new().set_accessed(old))
                .expect("set atime");
        }
        let root = RootDir::open(dir.path()).expect("root");
        let mut text = String::new();
        root.open_file(c"sys/cpu/online")
            .and_then(|mut f| f.read_to_string(&mut text))
            .expect("read");
        let cpu_dir = root
            .open_with(c"sys/cpu", OFlags::RDONLY | OFlags::DIRECTORY)
            .expect("dir");
        root.open_below(cpu_dir.as_fd(), "sys/cpu", c"cpu1/online")
            .and_then(|mut f| f.read_to_string(&mut text))
            .expect("read below");
        assert_eq!(text, "1\n1\n");
        for rel in ["sys/cpu/online", "sys/cpu/cpu1/online"] {
            let accessed = std::fs::metadata(dir.path().join(rel))
                .and_then(|m| m.accessed())
                .expect("atime");
            assert_eq!(accessed, old, "{rel}");
        }
        assert!(root.noatime.load(Ordering::Relaxed));
    }

    /// Where the kernel refuses `O_NOATIME` (a file of another user, for
    /// a reader that is not root), the file is opened without it, and so
    /// is every later one.
    #[test]
    fn a_refused_noatime_is_dropped_for_good() {
        let dir = tempfile::tempdir().expect("dir");
        let root = RootDir::open(dir.path()).expect("root");
        let tries = std::cell::RefCell::new(Vec::new());
        let open = |flags: OFlags| {
            tries.borrow_mut().push(flags.contains(OFlags::NOATIME));
            if flags.contains(OFlags::NOATIME) {
                Err(std::io::Error::from(rustix::io::Errno::PERM))
            } else {
                Ok(7)
            }
        };
        assert_eq!(root.without_atime(READ, open).ok(), Some(7));
        assert_eq!(root.without_atime(READ, open).ok(), Some(7));
        assert_eq!(*tries.borrow(), [true, false, false]);
        // Another error is the file's own, not a reason to retry.
        let root = RootDir::open(dir.path()).expect("root");
        let missing = root.without_atime(READ, |_| -> std::io::Result<()> {
            Err(std::io::Error::from(rustix::io::Errno::NOENT))
        });
        assert!(missing.is_err());
        assert!(root.noatime.load(Ordering::Relaxed));
        // Writes and path-only opens never carry it.
        let flags = std::cell::Cell::new(OFlags::empty());
        let seen = |f: OFlags| {
            flags.set(f);
            Ok(())
        };
        root.without_atime(OFlags::WRONLY, seen).expect("write");
        assert!(!flags.get().contains(OFlags::NOATIME));
        root.without_atime(OFlags::PATH, seen).expect("path");
        assert!(!flags.get().contains(OFlags::NOATIME));
    }

    #[test]
    fn only_the_system_root_takes_the_plain_path() {
        assert!(RootDir::open(Path::new("/")).expect("/").system);
        let dir = tempfile::tempdir().expect("dir");
        assert!(!RootDir::open(dir.path()).expect("temp root").system);
    }
}
