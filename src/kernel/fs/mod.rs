//! The one file layer: every file plugtop opens below a root (the machine's
//! `/`, `--root DIR`, a snapshot, a directory it fills), or by a name a
//! user gave, is opened here.
//!
//! - [`Root`]: a directory held open, every path resolved from it as in a
//!   chroot ([`walk`]: one `openat2`, or a walk one component at a time on
//!   kernels without it). How a `..` at the root and a link at the end are
//!   taken is the [`Resolve`] the caller's job asks for.
//! - [`read_bounded`]: the one bounded read; more than its limit is an
//!   error unless the caller asks for a cut ([`PastLimit::Cut`]).
//! - [`Root::write_file`] and [`StagedFiles`] (in [`place`]): create-or-replace,
//!   through a new file under an unpredictable name, created exclusively,
//!   never through a link, renamed into place, flushed when asked.
//! - [`Kept`] (in [`kept`]): kernel files and directories kept open
//!   between readings.
//! - [`FsError`]: what went wrong, with the path as seen inside the root.
//!
//! Every open is non-blocking (a FIFO where a kernel file should be reads
//! as nothing or fails at once) and reads are refused unless the file is a
//! regular file, which /proc and /sys files are.

mod kept;
mod place;
mod walk;

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io::ErrorKind;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

pub use kept::{KeptFiles, Listing};
pub use place::{Placing, Replace, StagedFiles, is_temporary, kind_in_words};
use walk::{Last, WalkError};

/// How a path below a root is resolved: chosen by what the caller does
/// with the file, so the same file is read the same way everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolve {
    /// As a process chrooted at the root would: an absolute link leads
    /// from the root and a `..` at the root stays there. For reading what
    /// plugtop shows (the kernel's files).
    InRoot,
    /// An absolute link leads from the root; a `..` that climbs above it
    /// is refused and named. For writes, for the reads that decide
    /// whether plugtop may act at all (cpuplugd's pid file, the pool a
    /// restore needs), and for the CPU flags, which the screen and the
    /// actuator read alike.
    Beneath,
    /// As [`Resolve::Beneath`], and a link at the last component is
    /// refused, never followed: files plugtop creates, locks, or reads back
    /// as its own (the journal, the lock, a temporary file).
    Own,
}

/// How a read takes a file longer than its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PastLimit {
    /// An error ([`ErrorKind::FileTooLarge`]): a cut reading is never taken
    /// for the whole file.
    Fail,
    /// The first `limit` bytes (a description, the start of a status file).
    Cut,
}

/// Why a file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The path ends in no file name (`/`, `..`).
    #[error("{path} names no file")]
    NoName { path: String },
    /// The directory is missing or is no directory.
    #[error("cannot open the directory {path}")]
    Dir {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The directory a file the user named goes in does not exist, and
    /// plugtop makes no directory but its own state directory (a path
    /// mistyped, or a shell line typed into a prompt, makes none).
    #[error("the directory {path} does not exist; plugtop creates no directory there")]
    NoDir { path: String },
    /// The path (or a link on it) climbs above the root by `..`.
    #[error("{path} leads outside the root {root}; refusing to {act} there")]
    Outside {
        path: String,
        root: String,
        act: &'static str,
    },
    /// The last component is a link where plugtop creates or locks a file.
    #[error(
        "{path} is a symbolic link; plugtop does not follow a link at the end of a file it creates or locks below the root {root}"
    )]
    Link { path: String, root: String },
    /// More links on the way than Linux follows.
    #[error(
        "{path}: more than {max} symbolic links on the way below the root {root} (a loop?)",
        max = walk::MAX_LINKS
    )]
    Loop { path: String, root: String },
    /// A FIFO, a device, a socket or a directory where a regular file
    /// should be (`kind` says which, [`kind_in_words`]).
    #[error("{path} is {kind}, not a regular file; refusing to use it")]
    NotRegular { path: String, kind: &'static str },
    /// A file on /proc or /sys given by name.
    #[error(
        "{path} is a kernel file (on /proc or /sys), not one plugtop reads by name; refusing to use it"
    )]
    KernelFile { path: String },
    /// Something other than a regular file stands where one is replaced.
    #[error(
        "{path} is {kind}; plugtop replaces only a regular file{below} (or creates a new one), refusing"
    )]
    NotReplaceable {
        path: String,
        kind: &'static str,
        /// ` below ROOT`, or nothing for a directory named by the user.
        below: String,
    },
    /// The final name is taken and may not be replaced.
    #[error("{path} exists already; refusing to replace it")]
    Exists { path: String },
    /// A regular file plugtop did not write stands where it replaces or
    /// removes only its own ([`Replace::Own`]).
    #[error("{path} {why}: plugtop replaces or removes only a file it wrote itself; refusing")]
    NotOurs { path: String, why: &'static str },
    /// A file another process keeps locked (`flock`) as its own while it
    /// runs: a second plugtop given the same metrics textfile.
    #[error(
        "{path} is {who}{holder} (it holds the file's lock); stop that one first or give each plugtop a file of its own"
    )]
    InUse {
        path: String,
        /// "written by another plugtop now", or "locked by another
        /// program" when the lock table names one that is not plugtop.
        who: &'static str,
        /// " (pid 4242, plugtop)", or nothing when the lock table does not say.
        holder: String,
    },
    #[error("{path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl FsError {
    /// What the system said about `path`.
    pub fn io(path: &Path, source: std::io::Error) -> FsError {
        FsError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// True when the file (or a directory on its way) does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FsError::Io { source, .. } if source.kind() == ErrorKind::NotFound)
    }
}

/// For callers whose own error names the path: the system's error as it
/// is, anything else in words.
impl From<FsError> for std::io::Error {
    fn from(e: FsError) -> Self {
        match e {
            FsError::Io { source, .. } => source,
            FsError::Loop { .. } => rustix::io::Errno::LOOP.into(),
            FsError::Dir { ref source, .. } => {
                std::io::Error::new(source.kind(), crate::error_chain::text(&e))
            }
            other => std::io::Error::other(crate::error_chain::text(&other)),
        }
    }
}

/// The file [`Root::write_kept`] writes at one name, kept open between
/// writes (nothing before the first write). A copy keeps nothing: it
/// opens its own at its first write.
#[derive(Debug, Default)]
pub struct WriteTarget {
    kept: Option<Kept>,
}

/// A file kept open for writing, with where the kernel says it is.
#[derive(Debug)]
struct Kept {
    file: File,
    /// `/proc/self/fd/N` of `file`.
    link: std::ffi::CString,
    /// What that link read just after the file was opened beneath the
    /// root by its name: the file's place below this process's `/`.
    at: std::ffi::CString,
    /// A plain file (a simulated root's), not a procfs or sysfs
    /// attribute: it is cut to each new value, as a sysctl takes it whole.
    plain: bool,
}

impl Kept {
    /// Whether the file still stands where it was opened: its place, as
    /// the kernel reads it, unchanged. A file renamed over the name, the
    /// name removed, or a directory on the way moved elsewhere (outside
    /// the root, a link left in its place) all move or cut that place.
    fn in_place(&self) -> bool {
        rustix::fs::readlinkat(rustix::fs::CWD, self.link.as_c_str(), Vec::new())
            .is_ok_and(|now| now == self.at)
    }
}

impl Clone for WriteTarget {
    fn clone(&self) -> Self {
        WriteTarget::default()
    }
}

/// `file`, just opened beneath the root by its name and written, kept
/// with where the kernel says it is; nothing where /proc does not say.
fn kept_at(file: File) -> Option<Kept> {
    use std::os::fd::AsRawFd as _;
    let link = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    let at = rustix::fs::readlinkat(rustix::fs::CWD, link.as_c_str(), Vec::new()).ok()?;
    let plain = !is_kernel_file(&file);
    Some(Kept {
        file,
        link,
        at,
        plain,
    })
}

/// Writes all of `text` at offset 0 of `file`.
fn write_at_start(file: &File, text: &[u8]) -> std::io::Result<()> {
    match rustix::io::pwrite(file, text, 0)? {
        n if n == text.len() => Ok(()),
        _ => Err(std::io::Error::from(ErrorKind::WriteZero)),
    }
}

/// Which file a name stands for, as far as `stat` tells: its device and
/// inode, and its size and modification time, which tell a file removed
/// and another made at the name (that may get the same inode) apart.
/// A rename changes none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    size: i64,
    modified: (i64, i64),
}

impl From<&rustix::fs::Stat> for FileStamp {
    fn from(stat: &rustix::fs::Stat) -> Self {
        FileStamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: stat.st_size,
            modified: (stat.st_mtime, i64::from(stat.st_mtime_nsec as u32)),
        }
    }
}

impl FileStamp {
    /// The stamp of an open file.
    pub fn of(file: &File) -> std::io::Result<FileStamp> {
        Ok(FileStamp::from(&rustix::fs::fstat(file)?))
    }
}

/// A root directory, held open: every path is resolved from it.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    path: PathBuf,
    /// The root is this process's own `/`: reading in it as in a chroot is
    /// what a plain `openat` does, with no checks to pay for.
    system: bool,
    /// A directory the user named, or a root opened for plugtop's own
    /// files ([`Root::open_for_own_files`]): files are shown by their full
    /// path, not as seen inside a root (`/proc/stat`).
    named_dir: bool,
}

/// How a root's files are opened for reading: never blocking.
const READ: OFlags = OFlags::RDONLY.union(OFlags::NONBLOCK);

impl Root {
    /// Opens `root` (a link there is followed: the caller named it).
    pub fn open(root: &Path) -> std::io::Result<Root> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(root, flags, Mode::empty())?;
        Ok(Root {
            system: is_system_root(&fd),
            fd,
            path: root.to_path_buf(),
            named_dir: false,
        })
    }

    /// Opens `root` as [`Root::open`] does, for plugtop's own files below
    /// it (the guest lock, cpuplugd's and plugtop's pid files, the restore
    /// journal): a refusal names them by their full path
    /// (`R/run/cpuplugd.pid`), so under `--root R` it never reads as this
    /// machine's `/run/cpuplugd.pid`.
    pub fn open_for_own_files(root: &Path) -> std::io::Result<Root> {
        let mut opened = Root::open(root)?;
        opened.named_dir = true;
        Ok(opened)
    }

    /// Opens the directory `path` a user named, to place files in (`.`
    /// when empty); its files are shown by their full path.
    pub fn dir(path: &Path) -> Result<Root, FsError> {
        let path = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let mut root = Root::open(path).map_err(|source| FsError::Dir {
            path: path.display().to_string(),
            source,
        })?;
        root.named_dir = true;
        Ok(root)
    }

    /// Opens the directory of the file `path`: the directory and the
    /// file's name.
    pub fn of_file(path: &Path) -> Result<(Root, OsString), FsError> {
        let no_name = || FsError::NoName {
            path: path.display().to_string(),
        };
        // `dir/` names a directory, though `file_name` reads `dir` from it.
        if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
            return Err(no_name());
        }
        let name = path.file_name().ok_or_else(no_name)?;
        let parent = path.parent().unwrap_or(Path::new("."));
        Ok((Root::dir(parent)?, name.to_os_string()))
    }

    /// The root as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the root is the system's `/` itself (by device and inode,
    /// however it was named).
    pub fn is_system_root(&self) -> bool {
        self.system
    }

    /// `path` relative to the root, when it lies beneath it by name.
    pub fn relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.path).ok()
    }

    /// `rel` for messages: as seen inside a root, or the full path in a
    /// directory a user named.
    fn shown(&self, rel: &Path) -> String {
        if self.named_dir {
            self.path.join(rel).display().to_string()
        } else {
            Path::new("/").join(rel).display().to_string()
        }
    }

    fn io(&self, rel: &Path, source: impl Into<std::io::Error>) -> FsError {
        FsError::Io {
            path: self.shown(rel),
            source: source.into(),
        }
    }

    fn error(&self, rel: &Path, e: WalkError, act: &'static str) -> FsError {
        let path = self.shown(rel);
        let root = self.path.display().to_string();
        match e {
            WalkError::Outside => FsError::Outside { path, root, act },
            WalkError::Loop => FsError::Loop { path, root },
            WalkError::LastIsLink => FsError::Link { path, root },
            WalkError::Io(source) => FsError::Io { path, source },
        }
    }

    /// `Ok` when `file`, opened at `rel`, is a regular file.
    fn regular(&self, file: &File, rel: &Path) -> Result<(), FsError> {
        match file.metadata() {
            Ok(m) if m.file_type().is_file() => Ok(()),
            Ok(m) => Err(FsError::NotRegular {
                path: self.shown(rel),
                kind: kind_of(&m),
            }),
            Err(e) => Err(self.io(rel, e)),
        }
    }

    /// Opens `rel` with `flags` (and `mode` when it creates), resolved as
    /// `resolve` says.
    pub fn open_at(
        &self,
        rel: &Path,
        flags: OFlags,
        mode: Mode,
        resolve: Resolve,
    ) -> Result<OwnedFd, FsError> {
        let act = if flags.intersects(OFlags::WRONLY | OFlags::RDWR | OFlags::CREATE) {
            "write"
        } else {
            "read"
        };
        let bytes = rel.as_os_str().as_bytes();
        let opened = match resolve {
            Resolve::InRoot => {
                let c = CString::new(bytes)
                    .map_err(|e| self.io(rel, std::io::Error::new(ErrorKind::InvalidInput, e)))?;
                self.open_in_root(&c, flags)
            }
            Resolve::Beneath => walk::open(&self.fd, bytes, flags, mode, Last::Follow),
            Resolve::Own => walk::open(&self.fd, bytes, flags, mode, Last::Refuse),
        };
        opened.map_err(|e| self.error(rel, e, act))
    }

    /// `rel` opened in the root as a chroot would (a plain `openat` in the
    /// system's own `/`): the way the daemon opens its files every interval,
    /// with the C string handed to the kernel as it is.
    fn open_in_root(&self, rel: &CStr, flags: OFlags) -> Result<OwnedFd, WalkError> {
        if self.system {
            let flags = flags | OFlags::CLOEXEC;
            return Ok(rustix::fs::openat(&self.fd, rel, flags, Mode::empty())?);
        }
        walk::open_in_root(self.fd.as_fd(), rel, flags)
    }

    /// Opens `rel` for reading in the root ([`Resolve::InRoot`]) without
    /// blocking; not checked for being a regular file (that costs a `stat`
    /// per file and interval: see [`check_regular`] for an empty reading).
    /// The per-interval readers' open: what the system said comes back as
    /// it is (an absent optional file is routine there, and a path written
    /// into an error nobody shows costs more than the open); only a
    /// refusal of the walk's own is described.
    pub fn open_read(&self, rel: &CStr) -> std::io::Result<File> {
        match self.open_in_root(rel, READ) {
            Ok(fd) => Ok(File::from(fd)),
            Err(WalkError::Io(e)) => Err(e),
            Err(e) => Err(self
                .error(Path::new(OsStr::from_bytes(rel.to_bytes())), e, "read")
                .into()),
        }
    }

    /// Opens the directory `rel` for listing, without blocking.
    pub fn open_dir(&self, rel: &Path, resolve: Resolve) -> Result<OwnedFd, FsError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK;
        self.open_at(rel, flags, Mode::empty(), resolve)
    }

    /// Opens `name` (plain names, like `cpu3/online`) below `dir`, a
    /// directory opened in this root at `dir_rel`, for reading without
    /// blocking, as `resolve` would from the root. One lookup from `dir`
    /// when no link is on the way; where one is, the whole path is resolved
    /// from the root, so a `cpuN` that is a link never leads outside.
    pub fn open_below(
        &self,
        dir: BorrowedFd<'_>,
        dir_rel: &str,
        name: &CStr,
        resolve: Resolve,
    ) -> Result<File, FsError> {
        let shown = || Path::new(dir_rel).join(OsStr::from_bytes(name.to_bytes()));
        if self.system {
            return rustix::fs::openat(dir, name, READ | OFlags::CLOEXEC, Mode::empty())
                .map(File::from)
                .map_err(|e| self.io(&shown(), e));
        }
        match walk::open_unlinked(dir, name, READ) {
            Ok(Some(fd)) => return Ok(File::from(fd)),
            Ok(None) => {}
            Err(e) => return Err(self.error(&shown(), e, "read")),
        }
        let mut rel = Vec::with_capacity(dir_rel.len() + 2 + name.to_bytes().len());
        rel.extend_from_slice(dir_rel.as_bytes());
        rel.push(b'/');
        rel.extend_from_slice(name.to_bytes_with_nul());
        if resolve != Resolve::InRoot {
            return self
                .open_at(&shown(), READ, Mode::empty(), resolve)
                .map(File::from);
        }
        let rel = CStr::from_bytes_with_nul(&rel)
            .map_err(|e| self.io(&shown(), std::io::Error::new(ErrorKind::InvalidInput, e)))?;
        self.open_in_root(rel, READ)
            .map(File::from)
            .map_err(|e| self.error(&shown(), e, "read"))
    }

    /// Whether `rel` is a regular file (links followed inside the root).
    pub fn is_file(&self, rel: &CStr) -> bool {
        self.open_in_root(rel, OFlags::PATH)
            .and_then(|fd| Ok(rustix::fs::fstat(&fd)?))
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
    }

    /// Whether `rel` is a directory, links followed inside the root.
    pub fn is_dir(&self, rel: &Path, resolve: Resolve) -> bool {
        let flags = OFlags::PATH | OFlags::DIRECTORY;
        self.open_at(rel, flags, Mode::empty(), resolve).is_ok()
    }

    /// The regular file `rel` opened for reading without blocking (a FIFO,
    /// a socket or a device there is refused, not waited on).
    pub fn open_regular(&self, rel: &Path, resolve: Resolve) -> Result<File, FsError> {
        let opened = match self.open_at(rel, READ, Mode::empty(), resolve) {
            // Opening a socket (or a device without its driver) fails so.
            Err(FsError::Io { source, .. })
                if source.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) =>
            {
                return Err(FsError::NotRegular {
                    path: self.shown(rel),
                    kind: "a socket or a device without its driver",
                });
            }
            other => File::from(other?),
        };
        self.regular(&opened, rel)?;
        Ok(opened)
    }

    /// The regular file `rel` read whole; more than `limit` bytes is an
    /// error (see [`PastLimit::Fail`]).
    pub fn read(&self, rel: &Path, limit: u64, resolve: Resolve) -> Result<Vec<u8>, FsError> {
        let file = self.open_regular(rel, resolve)?;
        read_bounded(&file, limit, PastLimit::Fail).map_err(|e| self.io(rel, e))
    }

    /// The names in the directory `rel` (`.` and `..` left out), each with
    /// the kind the directory gives for it (`Unknown` on file systems that
    /// do not say), at most `limit` of them: a damaged root cannot make a
    /// listing without end.
    pub fn dir_entries(
        &self,
        rel: &Path,
        limit: usize,
        resolve: Resolve,
    ) -> Result<Vec<(Vec<u8>, FileType)>, FsError> {
        let fd = self.open_dir(rel, resolve)?;
        let mut dir = rustix::fs::Dir::new(fd).map_err(|e| self.io(rel, e))?;
        entries_of(&mut dir, limit).map_err(|e| self.io(rel, e))
    }

    /// Writes `text` into the existing file `rel` (a sysfs attribute,
    /// `cmm_pages`), so that it holds `text` and nothing else; never
    /// created. Opened beneath the root without blocking, and not asked
    /// what it is first (a `statx` before every write of the control
    /// loop): what could stand there in its place is refused by the open
    /// or the write itself. A FIFO without a reader fails to open (ENXIO),
    /// one with a reader takes the bytes without blocking, a socket fails
    /// to open, a directory to open for writing; a device node needs the
    /// privilege to make one, which /proc and /sys do not give.
    pub fn write_existing(&self, rel: &Path, text: &[u8]) -> Result<(), FsError> {
        self.write_kept(&mut WriteTarget::default(), rel, text)
    }

    /// As [`Root::write_existing`], for a name written again and again
    /// (the pool's `cmm_pages`, every interval it moves): the file opened
    /// and checked at the first write is kept in `target` and written
    /// again at offset 0 (as a sysctl file takes a new value; a plain
    /// file is cut to the new value), for as long as the name leads to it.
    /// One `readlink` of the kept file's `/proc/self/fd` link and one
    /// `pwrite` a write, where a fresh one costs an open, an fstat, a write
    /// and a close. The kernel's name for the kept file must be the one it
    /// had when it was opened beneath the root by its name: a file renamed
    /// over it, the name removed or replaced by a link, FIFO or device, a
    /// directory on the way moved out of the root with a link left in its
    /// place, all change it, and the name is then opened and checked as a
    /// first write is, beneath the root. So each write goes to the file
    /// that stands at the name beneath the root then, never outside it.
    /// Where /proc cannot be read, every write opens the name afresh.
    pub fn write_kept(
        &self,
        target: &mut WriteTarget,
        rel: &Path,
        text: &[u8],
    ) -> Result<(), FsError> {
        use std::io::Write as _;
        if let Some(kept) = target.kept.take().filter(Kept::in_place) {
            write_at_start(&kept.file, text)
                .and_then(|()| {
                    if kept.plain {
                        kept.file.set_len(text.len() as u64)
                    } else {
                        Ok(())
                    }
                })
                .map_err(|e| self.io(rel, e))?;
            // Kept only after a write that went through: a file that
            // failed (its module unloaded) is opened afresh next time.
            target.kept = Some(kept);
            return Ok(());
        }
        let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::TRUNC;
        let mut file = File::from(self.open_at(rel, flags, Mode::empty(), Resolve::Beneath)?);
        // One fstat a fresh write, kept on purpose: a device node planted
        // at a flag's or the pool's name (a disk in a chroot's /dev,
        // reached by a link) would take the bytes; sysfs and procfs
        // attributes are regular files.
        self.regular(&file, rel)?;
        file.write_all(text).map_err(|e| self.io(rel, e))?;
        target.kept = kept_at(file);
        Ok(())
    }

    /// Creates the directories of `rel` beneath the root, also where a
    /// link on the way leads (inside the root all the same).
    pub fn create_dirs(&self, rel: &Path) -> Result<(), FsError> {
        walk::create_dirs(&self.fd, rel.as_os_str().as_bytes())
            .map_err(|e| self.error(rel, e, "write"))
    }

    /// Creates `rel` as a new file, never an existing one, never through a
    /// link, without blocking.
    pub fn create_new(&self, rel: &Path) -> Result<File, FsError> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NONBLOCK;
        self.open_at(rel, flags, place::file_mode(), Resolve::Own)
            .map(File::from)
    }

    /// Opens `rel` for writing, creating it if needed (the lock file): a
    /// link there is refused, never followed, and so is anything but a
    /// regular file (opened without blocking, so a FIFO cannot hang it).
    pub fn open_or_create(&self, rel: &Path) -> Result<File, FsError> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NONBLOCK;
        let file = File::from(self.open_at(rel, flags, place::file_mode(), Resolve::Own)?);
        self.regular(&file, rel)?;
        Ok(file)
    }

    /// The directory holding the last component of `rel`, and that
    /// component (never followed: for renaming and removing the name).
    fn parent(&self, rel: &Path, act: &'static str) -> Result<(OwnedFd, Vec<u8>), FsError> {
        walk::parent(&self.fd, rel.as_os_str().as_bytes()).map_err(|e| self.error(rel, e, act))
    }

    /// Removes `rel` (a link itself, not what it points to); absent is fine.
    pub fn remove(&self, rel: &Path) -> Result<(), FsError> {
        let removed = self.parent(rel, "write").and_then(|(dir, name)| {
            rustix::fs::unlinkat(&dir, name, AtFlags::empty()).map_err(|e| self.io(rel, e))
        });
        match removed {
            Err(e) if !e.is_not_found() => Err(e),
            _ => Ok(()),
        }
    }

    /// What stands at `rel` (the last component never followed, so a link
    /// is a link), or `None` when nothing does.
    pub fn entry_kind(&self, rel: &Path) -> Result<Option<FileType>, FsError> {
        let found = self.parent(rel, "read").and_then(|(dir, name)| {
            rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| self.io(rel, e))
        });
        match found {
            Ok(stat) => Ok(Some(FileType::from_raw_mode(stat.st_mode))),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The device and inode (`st_dev`, `st_ino`) of the regular file at
    /// `rel` (never followed when it is a link), or `None` when there is
    /// none: to find the file in the kernel's lock table.
    pub fn regular_id(&self, rel: &Path) -> Option<(u64, u64)> {
        self.regular_stamp(rel).map(|s| (s.dev, s.ino))
    }

    /// Which regular file stands at `rel` (never followed when it is a
    /// link), or `None` when there is none: to know a file plugtop placed
    /// ([`Replace::Own`]).
    pub fn regular_stamp(&self, rel: &Path) -> Option<FileStamp> {
        let (dir, name) = self.parent(rel, "read").ok()?;
        let stat = rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        (FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile)
            .then(|| FileStamp::from(&stat))
    }
}

/// The entries `dir` lists from where it stands (`.` and `..` left out),
/// at most `limit`.
pub fn entries_of(
    dir: &mut rustix::fs::Dir,
    limit: usize,
) -> std::io::Result<Vec<(Vec<u8>, FileType)>> {
    let mut names = Vec::new();
    while names.len() < limit {
        let Some(entry) = dir.read() else { break };
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push((name.to_vec(), entry.file_type()));
        }
    }
    Ok(names)
}

/// What `file` holds from its start to its end, read at explicit offsets
/// (its own offset is left as it is, so a kept file reads afresh), at most
/// `limit` bytes: past it an error ([`PastLimit::Fail`], of kind
/// [`ErrorKind::FileTooLarge`]) or the first `limit` bytes ([`PastLimit::Cut`]).
pub fn read_bounded(file: &File, limit: u64, past: PastLimit) -> std::io::Result<Vec<u8>> {
    let extra = u64::from(past == PastLimit::Fail);
    let cap = usize::try_from(limit.saturating_add(extra)).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    let mut chunk = [0u8; 512];
    loop {
        let want = chunk.len().min(cap - out.len());
        if want == 0 {
            break;
        }
        let at = u64::try_from(out.len()).unwrap_or(u64::MAX);
        let n = match rustix::io::pread(file, &mut chunk[..want], at) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        if n == 0 {
            break;
        }
        out.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
    if out.len() as u64 > limit {
        return Err(std::io::Error::new(
            ErrorKind::FileTooLarge,
            format!("larger than {limit} bytes; refusing to read it"),
        ));
    }
    Ok(out)
}

/// What `file` holds, from one `pread` at its start into `buf`: for the
/// files that give all they hold to one read shorter than asked (a sysfs
/// attribute, a plain file), so the read that gives nothing more is not
/// made. Filling `buf` is an error of kind [`ErrorKind::FileTooLarge`]:
/// size it one past the most the caller takes.
pub fn read_attribute<'b>(file: &File, buf: &'b mut [u8]) -> std::io::Result<&'b [u8]> {
    let n = loop {
        match rustix::io::pread(file, &mut *buf, 0) {
            Ok(n) => break n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    };
    if n >= buf.len() {
        return Err(std::io::Error::new(
            ErrorKind::FileTooLarge,
            format!(
                "larger than {} bytes; refusing to read it",
                n.saturating_sub(1)
            ),
        ));
    }
    Ok(&buf[..n])
}

/// `Ok` when `file` is a regular file; an error naming it as `shown`
/// otherwise (also why a file read as nothing: a FIFO).
pub fn check_regular(file: &File, shown: &str) -> std::io::Result<()> {
    let metadata = file.metadata()?;
    if metadata.file_type().is_file() {
        return Ok(());
    }
    Err(FsError::NotRegular {
        path: shown.to_string(),
        kind: kind_of(&metadata),
    }
    .into())
}

/// What an open file that is not a regular file is, in words.
fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::MetadataExt as _;
    kind_in_words(FileType::from_raw_mode(metadata.mode()))
}

/// What stands at `path` when it is not a directory (a link is not
/// followed), in words, for a message about a path given as a directory;
/// `None` when it is a directory or nothing is there.
pub fn non_directory_at(path: &Path) -> Option<&'static str> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    (!metadata.is_dir()).then(|| kind_of(&metadata))
}

/// Opens the system's own file `path` (`/proc/locks`, `/proc/PID/stat`)
/// for reading without blocking, a regular file only.
pub fn open_path(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits().cast_signed())
        .open(path)?;
    check_regular(&file, &path.display().to_string())?;
    Ok(file)
}

/// Opens a file a user named (a recording, a rule file, a scenario, a
/// journal given with `--state`) for reading: without blocking, a regular
/// file only, and not one of the kernel's (/proc, /sys): those are read by
/// what they are, and reading some of them takes their data away
/// (`/proc/kmsg` hands each kernel message to one reader only).
pub fn open_named(path: &Path) -> std::io::Result<File> {
    let file = open_path(path)?;
    if is_kernel_file(&file) {
        return Err(FsError::KernelFile {
            path: path.display().to_string(),
        }
        .into());
    }
    Ok(file)
}

/// [`open_named`], read whole; more than `limit` bytes is an error of
/// kind [`ErrorKind::FileTooLarge`].
pub fn read_named(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    read_bounded(&open_named(path)?, limit, PastLimit::Fail)
}

/// sysfs's file system number (`SYSFS_MAGIC` in linux/magic.h).
const SYSFS_MAGIC: rustix::fs::FsWord = 0x6265_6572;

/// Whether `file` lies in /proc or /sys, told by its file system rather
/// than its name: right in a chroot and for a kernel file bind-mounted into
/// a root, at one `fstatfs` instead of resolving a path.
pub fn is_kernel_file(file: impl AsFd) -> bool {
    rustix::fs::fstatfs(file)
        .is_ok_and(|fs| fs.f_type == rustix::fs::PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)
}

/// Whether the open `fd` is this process's `/` (looked up once: a
/// snapshot series opens a root per snapshot).
fn is_system_root(fd: &OwnedFd) -> bool {
    static SYSTEM_ROOT: OnceLock<Option<(u64, u64)>> = OnceLock::new();
    let id = |st: rustix::fs::Stat| (st.st_dev, st.st_ino);
    let system = SYSTEM_ROOT.get_or_init(|| rustix::fs::stat("/").ok().map(id));
    system.is_some_and(|root| rustix::fs::fstat(fd).is_ok_and(|st| id(st) == root))
}

#[cfg(test)]
pub(crate) mod tests;
