//! Files beneath a root, resolved as in a chroot at the system-call level
//! (see [`chroot_walk`](super::chroot_walk)): an absolute link inside the
//! root leads from the root (`/var/lock` → `/run/lock` on Debian, also in
//! `--root DIR`), and a `..` that would climb above it is refused, so a
//! link swapped in between a check and the open cannot lead a write
//! outside the root. plugtop runs as root and writes to the kernel: every
//! write it makes below a root goes through here, and so do the reads that
//! decide whether it may act (cpuplugd's pid file, the journal).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::chroot_walk::{self, Last, WalkError};
use super::pool_file::OpenPool;

/// Why a file beneath the root could not be used.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
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
        max = chroot_walk::MAX_LINKS
    )]
    Loop { path: String, root: String },
    /// A FIFO, a device or a socket where a regular file should be.
    #[error("{path} is not a regular file (a FIFO, a device or a socket?); refusing to use it")]
    NotRegular { path: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl BeneathError {
    /// True when the file (or a directory on its way) does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, BeneathError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// A root directory, held open: every path is resolved from it.
#[derive(Debug)]
pub struct Beneath {
    dir: OwnedFd,
    root: PathBuf,
}

/// How a file is created: readable by all, as before (the umask applies).
const FILE_MODE: u32 = 0o666;

impl Beneath {
    /// Opens `root` for confined access (the root itself may be a link).
    pub fn open(root: &Path) -> std::io::Result<Beneath> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Beneath {
            dir: rustix::fs::open(root, flags, Mode::empty())?,
            root: root.to_path_buf(),
        })
    }

    /// The root as given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `rel` as seen inside the root, for messages.
    fn shown(rel: &Path) -> String {
        Path::new("/").join(rel).display().to_string()
    }

    fn error(&self, rel: &Path, e: WalkError, act: &'static str) -> BeneathError {
        let path = Self::shown(rel);
        let root = self.root.display().to_string();
        match e {
            WalkError::Outside => BeneathError::Outside { path, root, act },
            WalkError::Loop => BeneathError::Loop { path, root },
            WalkError::LastIsLink => BeneathError::Link { path, root },
            WalkError::Io(source) => BeneathError::Io { path, source },
        }
    }

    fn io_error(rel: &Path, source: std::io::Error) -> BeneathError {
        BeneathError::Io {
            path: Self::shown(rel),
            source,
        }
    }

    /// `file` when it is a regular file.
    fn regular(file: File, rel: &Path) -> Result<File, BeneathError> {
        match file.metadata() {
            Ok(m) if m.file_type().is_file() => Ok(file),
            Ok(_) => Err(BeneathError::NotRegular {
                path: Self::shown(rel),
            }),
            Err(e) => Err(Self::io_error(rel, e)),
        }
    }

    fn open_file(
        &self,
        rel: &Path,
        flags: OFlags,
        last: Last,
        act: &'static str,
    ) -> Result<File, BeneathError> {
        let mode = Mode::from_raw_mode(FILE_MODE);
        chroot_walk::open(&self.dir, rel.as_os_str().as_bytes(), flags, mode, last)
            .map(File::from)
            .map_err(|e| self.error(rel, e, act))
    }

    /// Writes `text` into the existing file `rel` (a sysfs attribute,
    /// `cmm_pages`), so that it holds `text` and nothing else.
    /// Opened without blocking and refused unless it is a regular file, so
    /// a FIFO planted there cannot hang plugtop. Not opened with `O_TRUNC`:
    /// see [`overwrite`](super::overwrite) for why and what is done instead.
    pub fn write_existing(&self, rel: &Path, text: &[u8]) -> Result<(), BeneathError> {
        let flags = OFlags::WRONLY | OFlags::NONBLOCK;
        let file = self.open_file(rel, flags, Last::Follow, "write")?;
        let stat = rustix::fs::fstat(&file).map_err(|e| Self::io_error(rel, e.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(BeneathError::NotRegular {
                path: Self::shown(rel),
            });
        }
        let old_len = u64::try_from(stat.st_size).unwrap_or(0);
        super::overwrite::overwrite(&file, old_len, text)
            .map(drop)
            .map_err(|e| Self::io_error(rel, e))
    }

    /// [`Beneath::write_existing`] through `pool`, the file `rel` as this
    /// interval's reading opened it (for reading and writing, resolved as
    /// a write is, checked to be a regular file `pool.len` bytes long).
    pub fn write_opened(
        &self,
        pool: &OpenPool,
        rel: &Path,
        text: &[u8],
    ) -> Result<(), BeneathError> {
        super::overwrite::overwrite(&pool.file, pool.len, text)
            .map(drop)
            .map_err(|e| Self::io_error(rel, e))
    }

    /// Reads the regular file `rel` whole, without blocking (a FIFO there
    /// is refused, not waited on); more than `limit` bytes is an error, so
    /// a cut reading is never taken for the whole file.
    pub fn read_small(&self, rel: &Path, limit: u64) -> Result<Vec<u8>, BeneathError> {
        self.read_bounded(rel, limit, Last::Follow)
    }

    /// [`Beneath::read_small`] for a file plugtop itself writes there (the
    /// journal, the lock): it is never a link, so a link at its name is
    /// refused rather than followed (even where it leads inside the root).
    pub fn read_own(&self, rel: &Path, limit: u64) -> Result<Vec<u8>, BeneathError> {
        self.read_bounded(rel, limit, Last::Refuse)
    }

    fn read_bounded(&self, rel: &Path, limit: u64, last: Last) -> Result<Vec<u8>, BeneathError> {
        let file = self.open_bounded(rel, last)?;
        Self::read_whole(&file, rel, limit)
    }

    /// The regular file `rel` opened for reading as
    /// [`Beneath::read_small`] opens it, to be read by
    /// [`Beneath::read_whole`] (now, and again later).
    pub fn open_small(&self, rel: &Path) -> Result<File, BeneathError> {
        self.open_bounded(rel, Last::Follow)
    }

    fn open_bounded(&self, rel: &Path, last: Last) -> Result<File, BeneathError> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK;
        let opened = match self.open_file(rel, flags, last, "read") {
            // Opening a socket (or a device without its driver) fails so.
            Err(BeneathError::Io { source, .. })
                if source.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) =>
            {
                return Err(BeneathError::NotRegular {
                    path: Self::shown(rel),
                });
            }
            other => other?,
        };
        Self::regular(opened, rel)
    }

    /// What `file` (opened at `rel`) holds from its start to its end, read
    /// at explicit offsets (its own offset is left as it is); more than
    /// `limit` bytes is an error, as for [`Beneath::read_small`].
    pub fn read_whole(file: &File, rel: &Path, limit: u64) -> Result<Vec<u8>, BeneathError> {
        let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
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
                Err(e) => return Err(Self::io_error(rel, e.into())),
            };
            if n == 0 {
                break;
            }
            out.extend_from_slice(chunk.get(..n).unwrap_or_default());
        }
        if out.len() as u64 > limit {
            return Err(Self::io_error(
                rel,
                std::io::Error::other(format!(
                    "more than {limit} bytes; not the small file plugtop expects there"
                )),
            ));
        }
        Ok(out)
    }

    /// The names in the directory `rel` (`.` and `..` left out), at most
    /// `limit` of them: a damaged root cannot make a listing without end.
    pub fn dir_names(&self, rel: &Path, limit: usize) -> Result<Vec<Vec<u8>>, BeneathError> {
        Ok(self
            .dir_entries(rel, limit)?
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }

    /// As [`dir_names`](Self::dir_names), each with the kind the directory
    /// gives for it (`Unknown` on file systems that do not say): a caller
    /// that needs directories checks only the entries not listed as one.
    pub fn dir_entries(
        &self,
        rel: &Path,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, FileType)>, BeneathError> {
        let fd = self.open_dir(rel)?;
        // The directory is listed through the descriptor just opened (as
        // `read_from` would through a second one, at three calls more).
        let mut dir = rustix::fs::Dir::new(fd).map_err(|e| Self::io_error(rel, e.into()))?;
        Self::entries_of(&mut dir, rel, limit)
    }

    /// The directory `rel` opened for listing, links followed inside the
    /// root.
    pub fn open_dir(&self, rel: &Path) -> Result<OwnedFd, BeneathError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK;
        chroot_walk::open(
            &self.dir,
            rel.as_os_str().as_bytes(),
            flags,
            Mode::empty(),
            Last::Follow,
        )
        .map_err(|e| self.error(rel, e, "read"))
    }

    /// The entries `dir` (opened at `rel`) lists from where it stands, as
    /// [`dir_entries`](Self::dir_entries) gives them.
    pub fn entries_of(
        dir: &mut rustix::fs::Dir,
        rel: &Path,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, FileType)>, BeneathError> {
        let mut names = Vec::new();
        while names.len() < limit {
            let Some(entry) = dir.read() else { break };
            let entry = entry.map_err(|e| Self::io_error(rel, e.into()))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push((name.to_vec(), entry.file_type()));
            }
        }
        Ok(names)
    }

    /// Whether `rel` is a directory, links followed inside the root.
    pub fn is_dir(&self, rel: &Path) -> bool {
        let flags = OFlags::PATH | OFlags::DIRECTORY;
        chroot_walk::open(
            &self.dir,
            rel.as_os_str().as_bytes(),
            flags,
            Mode::empty(),
            Last::Follow,
        )
        .is_ok()
    }

    /// Creates the directories of `rel` beneath the root, also where a
    /// link on the way leads (inside the root all the same).
    pub fn create_dirs(&self, rel: &Path) -> Result<(), BeneathError> {
        chroot_walk::create_dirs(&self.dir, rel.as_os_str().as_bytes())
            .map_err(|e| self.error(rel, e, "write"))
    }

    /// Creates `rel` as a new file (never an existing one, never through a
    /// link): for temporary files.
    pub fn create_new(&self, rel: &Path) -> Result<File, BeneathError> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        self.open_file(rel, flags, Last::Refuse, "write")
    }

    /// Opens `rel` for writing, creating it if needed (the lock file): a
    /// link there is refused, never followed, and so is anything but a
    /// regular file (opened without blocking, so a FIFO cannot hang it).
    pub fn open_or_create(&self, rel: &Path) -> Result<File, BeneathError> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NONBLOCK;
        Self::regular(self.open_file(rel, flags, Last::Refuse, "write")?, rel)
    }

    /// Renames `from` to `to`, both beneath the root (a link at `to` is
    /// replaced, never followed).
    pub fn rename(&self, from: &Path, to: &Path) -> Result<(), BeneathError> {
        let (from_dir, from_name) = chroot_walk::parent(&self.dir, from.as_os_str().as_bytes())
            .map_err(|e| self.error(from, e, "write"))?;
        let (to_dir, to_name) = chroot_walk::parent(&self.dir, to.as_os_str().as_bytes())
            .map_err(|e| self.error(to, e, "write"))?;
        rustix::fs::renameat(&from_dir, from_name, &to_dir, to_name)
            .map_err(|e| Self::io_error(to, e.into()))
    }

    /// Removes `rel` (a link itself, not what it points to); absent is fine.
    pub fn remove(&self, rel: &Path) -> Result<(), BeneathError> {
        let removed = chroot_walk::parent(&self.dir, rel.as_os_str().as_bytes())
            .map_err(|e| self.error(rel, e, "write"))
            .and_then(|(dir, name)| {
                rustix::fs::unlinkat(&dir, name, AtFlags::empty())
                    .map_err(|e| Self::io_error(rel, e.into()))
            });
        match removed {
            Err(e) if !e.is_not_found() => Err(e),
            _ => Ok(()),
        }
    }

    /// Flushes the directory `rel` to disk (after a rename into it).
    pub fn sync_dir(&self, rel: &Path) -> Result<(), BeneathError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        self.open_file(rel, flags, Last::Follow, "write")?
            .sync_all()
            .map_err(|e| Self::io_error(rel, e))
    }

    /// What stands at `rel` (the last component never followed, so a link
    /// is a link), or `None` when nothing does: so a rename replaces only
    /// what it may (a regular file), never a FIFO, a directory or a link.
    pub fn entry_kind(&self, rel: &Path) -> Result<Option<FileType>, BeneathError> {
        let found = chroot_walk::parent(&self.dir, rel.as_os_str().as_bytes())
            .map_err(|e| self.error(rel, e, "read"))
            .and_then(|(dir, name)| {
                rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| Self::io_error(rel, e.into()))
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
        let (dir, name) = chroot_walk::parent(&self.dir, rel.as_os_str().as_bytes()).ok()?;
        let stat = rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        (FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile)
            .then_some((stat.st_dev, stat.st_ino))
    }

    /// Whether the root is the system's `/` itself (by device and inode,
    /// however it was named): nothing that fills a directory may fill that.
    pub fn is_system_root(&self) -> std::io::Result<bool> {
        let here = rustix::fs::fstat(&self.dir)?;
        let slash = rustix::fs::stat("/")?;
        Ok(here.st_dev == slash.st_dev && here.st_ino == slash.st_ino)
    }

    /// `path` relative to the root, when it lies beneath it by name.
    pub fn relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.root).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const UNTOUCHED: &str = "outside, untouched\n";

    /// A root with `run/lock` and `var/lock` → `/run/lock`, and a file
    /// outside it that must never change.
    fn debian_like() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("run/lock")).expect("run/lock");
        std::fs::create_dir_all(root.join("var")).expect("var");
        symlink("/run/lock", root.join("var/lock")).expect("link");
        let outside = dir.path().join("precious");
        std::fs::write(&outside, UNTOUCHED).expect("outside");
        (dir, root, outside)
    }

    fn mkfifo(path: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
    }

    #[test]
    fn an_escape_by_dot_dot_names_the_path_inside_the_root_and_the_root() {
        let (_dir, root, outside) = debian_like();
        let b = Beneath::open(&root).expect("root");
        let e = b
            .write_existing(Path::new("var/lock/../../../precious"), b"x")
            .expect_err("refused");
        assert_eq!(
            e.to_string(),
            format!(
                "/var/lock/../../../precious leads outside the root {}; refusing to write there",
                root.display()
            )
        );
        let e = b
            .read_small(Path::new("../precious"), 64)
            .expect_err("refused");
        assert!(e.to_string().contains("refusing to read there"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&outside).ok().as_deref(),
            Some(UNTOUCHED)
        );
    }

    #[test]
    fn writers_follow_absolute_links_inside_the_root() {
        let (_dir, root, _outside) = debian_like();
        let b = Beneath::open(&root).expect("root");
        b.create_dirs(Path::new("var/lock/sub")).expect("dirs");
        assert!(root.join("run/lock/sub").is_dir());
        let lock = Path::new("var/lock/sub/cpuplugd.lock");
        drop(b.open_or_create(lock).expect("lock file"));
        assert!(root.join("run/lock/sub/cpuplugd.lock").is_file());
        b.write_existing(lock, b"42\n").expect("write");
        assert_eq!(b.read_small(lock, 64).expect("read"), b"42\n");
        let tmp = Path::new("var/lock/sub/state.tmp");
        drop(b.create_new(tmp).expect("new"));
        b.rename(tmp, Path::new("var/lock/sub/state"))
            .expect("rename");
        assert!(root.join("run/lock/sub/state").is_file());
        b.sync_dir(Path::new("var/lock/sub")).expect("sync");
        b.remove(lock).expect("remove");
        assert!(!root.join("run/lock/sub/cpuplugd.lock").exists());
        b.remove(lock).expect("absent is fine");
    }

    #[test]
    fn a_last_link_is_never_followed_by_what_creates_renames_or_removes() {
        let (_dir, root, outside) = debian_like();
        let b = Beneath::open(&root).expect("root");
        for name in ["run/lock/planted", "run/lock/planted.tmp", "run/lock/gone"] {
            symlink(&outside, root.join(name)).expect("link");
        }
        let e = b
            .open_or_create(Path::new("var/lock/planted"))
            .expect_err("refused");
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        let e = b
            .create_new(Path::new("var/lock/planted.tmp"))
            .expect_err("refused");
        assert!(e.to_string().contains("File exists"), "{e}");
        drop(b.create_new(Path::new("run/lock/new")).expect("new"));
        b.rename(Path::new("run/lock/new"), Path::new("var/lock/planted"))
            .expect("the link is replaced");
        assert!(
            std::fs::symlink_metadata(root.join("run/lock/planted")).is_ok_and(|m| m.is_file())
        );
        b.remove(Path::new("var/lock/gone"))
            .expect("the link itself goes");
        assert!(std::fs::symlink_metadata(root.join("run/lock/gone")).is_err());
        assert_eq!(
            std::fs::read_to_string(&outside).ok().as_deref(),
            Some(UNTOUCHED)
        );
    }

    #[test]
    fn fifos_and_long_files_are_refused_at_once() {
        let (_dir, root, _outside) = debian_like();
        let b = Beneath::open(&root).expect("root");
        mkfifo(&root.join("run/lock/fifo"));
        for result in [
            b.read_small(Path::new("var/lock/fifo"), 64).map(|_| ()),
            b.write_existing(Path::new("var/lock/fifo"), b"1"),
            b.open_or_create(Path::new("var/lock/fifo")).map(|_| ()),
        ] {
            let e = result.expect_err("refused");
            assert!(
                matches!(e, BeneathError::NotRegular { .. })
                    || e.to_string().contains("No such device or address"),
                "{e}"
            );
        }
        std::fs::write(root.join("run/lock/long"), [b'7'; 65]).expect("long");
        let e = b
            .read_small(Path::new("run/lock/long"), 64)
            .expect_err("too long");
        assert!(e.to_string().contains("more than 64 bytes"), "{e}");
        assert_eq!(
            b.read_small(Path::new("run/lock/long"), 65)
                .map(|v| v.len())
                .ok(),
            Some(65)
        );
    }

    /// The value replaces the old one whole, longer or shorter, through a
    /// link inside the root too; a link climbing out, a directory and a
    /// FIFO are refused and nothing outside changes.
    #[test]
    fn an_existing_file_holds_exactly_the_new_value_after_each_write() {
        let (dir, root, outside) = debian_like();
        let b = Beneath::open(&root).expect("root");
        let pages = Path::new("run/lock/cmm_pages");
        std::fs::write(root.join(pages), "262144\n").expect("seed");
        for value in ["0\n", "1000\n", "99\n", "4294967296\n", "5\n"] {
            b.write_existing(pages, value.as_bytes()).expect("write");
            assert_eq!(
                std::fs::read_to_string(root.join(pages)).ok().as_deref(),
                Some(value)
            );
        }
        // Through var/lock -> /run/lock, and through a link at the name.
        symlink("/run/lock/cmm_pages", root.join("run/lock/pages_link")).expect("link");
        b.write_existing(Path::new("var/lock/pages_link"), b"77\n")
            .expect("write through links");
        assert_eq!(
            std::fs::read_to_string(root.join(pages)).ok().as_deref(),
            Some("77\n")
        );
        symlink("../../../precious", root.join("run/lock/escape")).expect("link");
        let e = b.write_existing(Path::new("run/lock/escape"), b"1\n");
        assert!(matches!(e, Err(BeneathError::Outside { .. })), "{e:?}");
        std::fs::create_dir(root.join("run/lock/cpu9")).expect("dir");
        let e = b.write_existing(Path::new("run/lock/cpu9"), b"1\n");
        assert!(e.is_err(), "a directory is not written");
        mkfifo(&root.join("run/lock/online"));
        assert!(
            b.write_existing(Path::new("run/lock/online"), b"1\n")
                .is_err()
        );
        assert!(
            b.write_existing(Path::new("run/lock/absent"), b"1\n")
                .is_err_and(|e| e.is_not_found()),
            "never created"
        );
        assert!(!root.join("run/lock/absent").exists());
        assert_eq!(
            std::fs::read_to_string(&outside).ok().as_deref(),
            Some(UNTOUCHED)
        );
        drop(dir);
    }

    #[test]
    fn a_loop_is_an_error_that_says_so() {
        let (_dir, root, _outside) = debian_like();
        symlink("/run/b", root.join("run/a")).expect("link");
        symlink("a", root.join("run/b")).expect("link");
        let b = Beneath::open(&root).expect("root");
        let e = b.create_dirs(Path::new("run/a/x")).expect_err("a loop");
        assert!(e.to_string().contains("more than 40 symbolic links"), "{e}");
        assert!(matches!(e, BeneathError::Loop { .. }));
    }

    #[test]
    fn a_directory_swapped_for_a_link_between_calls_still_cannot_escape() {
        let (dir, root, outside) = debian_like();
        let b = Beneath::open(&root).expect("root");
        b.create_dirs(Path::new("run/plugtop")).expect("dirs");
        std::fs::write(root.join("run/plugtop/state"), "1\n").expect("state");
        b.write_existing(Path::new("run/plugtop/state"), b"2\n")
            .expect("inside");
        // Between two calls, run/plugtop becomes a link: an absolute one
        // stays inside the root, a relative one climbing out is refused.
        std::fs::remove_dir_all(root.join("run/plugtop")).expect("rm");
        symlink(dir.path(), root.join("run/plugtop")).expect("link");
        let e = b.write_existing(Path::new("run/plugtop/precious"), b"x");
        assert!(
            e.is_err_and(|e| e.is_not_found()),
            "resolved inside the root"
        );
        std::fs::remove_file(root.join("run/plugtop")).expect("rm");
        symlink("../..", root.join("run/plugtop")).expect("link");
        let e = b.write_existing(Path::new("run/plugtop/precious"), b"x");
        assert!(matches!(e, Err(BeneathError::Outside { .. })), "{e:?}");
        assert_eq!(
            std::fs::read_to_string(&outside).ok().as_deref(),
            Some(UNTOUCHED)
        );
    }
}
