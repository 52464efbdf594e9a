//! Files plugtop creates outside a root (the metrics textfile, generated
//! man pages): plugtop runs as root, so a file is never opened by a name
//! someone else could have planted. It is written beneath its directory,
//! held open, under an unpredictable temporary name, created exclusively
//! and never through a link, then renamed into place — only over a
//! regular file or over nothing, so a link, a FIFO, a device (`/dev/null`)
//! or a directory at the final name is refused, never replaced or written
//! through. Nothing here can block: the temporary file is opened
//! non-blocking and nothing else is opened at all.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

/// How many unpredictable temporary names are tried before giving up: each
/// is 64 random bits, so a second try is already only for a planted name.
const NAME_TRIES: usize = 16;

/// The mode a file is created with (the umask applies), as `File::create`.
const FILE_MODE: u32 = 0o666;

/// What may stand at the final name before the rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// Nothing: an existing entry of any kind is refused (`generate man`
    /// without `--force`).
    Nothing,
    /// Nothing or a regular file, which is replaced whole.
    RegularFile,
}

/// What stands where a regular file was expected, in words for a message.
pub fn kind_in_words(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Directory => "a directory",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Socket => "a socket",
        FileType::Unknown => "not a regular file",
    }
}

/// Why a file could not be placed.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// The path ends in no file name (`/`, `..`).
    #[error("{path} names no file")]
    NoName { path: String },
    /// The directory is missing or is no directory.
    #[error("cannot open the directory {path}: {source}")]
    Dir {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Something other than a regular file stands at the final name.
    #[error(
        "{path} is {kind}; plugtop replaces only a regular file (or creates a new one), refusing"
    )]
    NotRegular { path: String, kind: &'static str },
    /// The final name is taken and may not be replaced.
    #[error("{path} exists already; refusing to replace it")]
    Exists { path: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A directory held open, to place files beneath: opened once, so a link
/// swapped in on its path later cannot redirect the writes.
#[derive(Debug)]
pub struct PlaceDir {
    dir: OwnedFd,
    path: PathBuf,
}

impl PlaceDir {
    /// Opens the directory `path` (links on its path are followed: the
    /// admin named it).
    pub fn open(path: &Path) -> Result<PlaceDir, PlaceError> {
        let shown = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = rustix::fs::open(shown, flags, Mode::empty()).map_err(|e| PlaceError::Dir {
            path: shown.display().to_string(),
            source: e.into(),
        })?;
        Ok(PlaceDir {
            dir,
            path: shown.to_path_buf(),
        })
    }

    /// Opens the directory of the file `path`; the directory and the file's
    /// name.
    pub fn of_file(path: &Path) -> Result<(PlaceDir, OsString), PlaceError> {
        let no_name = || PlaceError::NoName {
            path: path.display().to_string(),
        };
        // `dir/` names a directory, though `file_name` reads `dir` from it.
        if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
            return Err(no_name());
        }
        let name = path.file_name().ok_or_else(no_name)?;
        let parent = path.parent().unwrap_or(Path::new("."));
        Ok((PlaceDir::open(parent)?, name.to_os_string()))
    }

    /// `name` in this directory, for messages.
    fn shown(&self, name: &OsStr) -> String {
        self.path.join(name).display().to_string()
    }

    fn io_error(&self, name: &OsStr, e: impl Into<std::io::Error>) -> PlaceError {
        PlaceError::Io {
            path: self.shown(name),
            source: e.into(),
        }
    }

    /// Whether `name` may be placed now: what stands there, looked at
    /// without following a link, is refused unless `replace` allows it.
    pub fn check(&self, name: &OsStr, replace: Replace) -> Result<(), PlaceError> {
        let stat = match rustix::fs::statat(&self.dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(self.io_error(name, e)),
        };
        let kind = match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile if replace == Replace::RegularFile => return Ok(()),
            FileType::RegularFile => {
                return Err(PlaceError::Exists {
                    path: self.shown(name),
                });
            }
            other => kind_in_words(other),
        };
        Err(PlaceError::NotRegular {
            path: self.shown(name),
            kind,
        })
    }

    /// Writes `bytes` to `name`, whole or not at all: into a new file under
    /// an unpredictable name, then renamed into place if `replace` allows
    /// what stands there (checked just before). The temporary file is
    /// removed on any failure. Not synced: a reader sees the old file or
    /// the new one whole either way, the textfile is written again next
    /// interval and is worth nothing after a crash, and a disk flush each
    /// interval would cost more than the rest of the interval.
    pub fn write(&self, name: &OsStr, bytes: &[u8], replace: Replace) -> Result<(), PlaceError> {
        self.write_with(name, bytes, replace, None)
    }

    /// [`PlaceDir::write`] with the file's mode set to `mode` whatever the
    /// umask: the metrics textfile must be readable by node_exporter's own
    /// user under a unit whose umask is 0077.
    pub fn write_readable(
        &self,
        name: &OsStr,
        bytes: &[u8],
        replace: Replace,
        mode: u32,
    ) -> Result<(), PlaceError> {
        self.write_with(name, bytes, replace, Some(mode))
    }

    fn write_with(
        &self,
        name: &OsStr,
        bytes: &[u8],
        replace: Replace,
        mode: Option<u32>,
    ) -> Result<(), PlaceError> {
        self.write_streamed(name, replace, |file, tmp| {
            mode.map_or(Ok(()), |m| {
                rustix::fs::fchmod(&*file, Mode::from_raw_mode(m))
            })
            .map_err(|e| self.io_error(tmp, e))
            .and_then(|()| file.write_all(bytes).map_err(|e| self.io_error(tmp, e)))
        })
    }

    /// Writes `name` whole or not at all, as [`PlaceDir::write`], from
    /// what `fill` writes to the new file (given with its temporary name,
    /// for messages): a file too long to hold in memory first (an imported
    /// history). Nothing is left behind when `fill` fails.
    pub fn write_streamed<T, E: From<PlaceError>>(
        &self,
        name: &OsStr,
        replace: Replace,
        fill: impl FnOnce(&mut File, &OsStr) -> Result<T, E>,
    ) -> Result<T, E> {
        let (tmp, mut file) = self.create_temporary(name)?;
        let placed = fill(&mut file, &tmp).and_then(|kept| {
            self.check(name, replace)
                .and_then(|()| self.rename(&tmp, name, replace))
                .map_err(E::from)
                .map(|()| kept)
        });
        drop(file);
        if placed.is_err() {
            let _ = rustix::fs::unlinkat(&self.dir, &tmp, AtFlags::empty());
        }
        placed
    }

    /// Removes `name` when it is a regular file (a file plugtop placed);
    /// anything else standing there (a link, a FIFO) is left alone, and
    /// nothing there is no error.
    pub fn remove_regular(&self, name: &OsStr) -> Result<(), PlaceError> {
        match rustix::fs::statat(&self.dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile => {
                match rustix::fs::unlinkat(&self.dir, name, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => Ok(()),
                    Err(e) => Err(self.io_error(name, e)),
                }
            }
            Ok(_) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(self.io_error(name, e)),
        }
    }

    /// Whether a file can be created here now (a command that writes only
    /// after minutes of work asks first): a new file under an
    /// unpredictable name is created and removed again.
    pub fn check_writable(&self) -> Result<(), PlaceError> {
        let (tmp, file) = self.create_temporary(OsStr::new("."))?;
        drop(file);
        rustix::fs::unlinkat(&self.dir, &tmp, AtFlags::empty()).map_err(|e| self.io_error(&tmp, e))
    }

    /// A new, empty file beside `name` under an unpredictable name; never
    /// an existing file, never through a link, never waiting (a FIFO
    /// planted at a guessed name is only an existing name, tried past).
    fn create_temporary(&self, name: &OsStr) -> Result<(OsString, File), PlaceError> {
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC;
        let mut last = None;
        for _ in 0..NAME_TRIES {
            let tmp = temporary_name()?;
            match rustix::fs::openat(&self.dir, &tmp, flags, Mode::from_raw_mode(FILE_MODE)) {
                Ok(fd) => return Ok((tmp, File::from(fd))),
                Err(e) if e == Errno::EXIST => last = Some(e),
                Err(e) => return Err(self.io_error(&tmp, e)),
            }
        }
        Err(self.io_error(name, last.unwrap_or(Errno::EXIST)))
    }

    /// Moves the temporary file `tmp` to `name`: over a regular file when
    /// `replace` allows it, else only where nothing is (atomically, so a
    /// file made in between is not replaced either).
    fn rename(&self, tmp: &OsStr, name: &OsStr, replace: Replace) -> Result<(), PlaceError> {
        let flags = match replace {
            Replace::RegularFile => RenameFlags::empty(),
            Replace::Nothing => RenameFlags::NOREPLACE,
        };
        match rustix::fs::renameat_with(&self.dir, tmp, &self.dir, name, flags) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => Err(PlaceError::Exists {
                path: self.shown(name),
            }),
            // A file system without RENAME_NOREPLACE: a hard link is
            // refused where a name exists just the same.
            Err(Errno::INVAL) if replace == Replace::Nothing => {
                match rustix::fs::linkat(&self.dir, tmp, &self.dir, name, AtFlags::empty()) {
                    Ok(()) => rustix::fs::unlinkat(&self.dir, tmp, AtFlags::empty())
                        .map_err(|e| self.io_error(tmp, e)),
                    Err(Errno::EXIST) => Err(PlaceError::Exists {
                        path: self.shown(name),
                    }),
                    Err(e) => Err(self.io_error(name, e)),
                }
            }
            Err(e) => Err(self.io_error(name, e)),
        }
    }
}

/// `.plugtop-` and 16 random hex digits and `.tmp`: hidden, so node_exporter
/// (which reads `*.prom`) never takes it, and short whatever the final name.
/// Also the temporary names of files written below a root plugtop fills.
pub fn temporary_name() -> Result<OsString, PlaceError> {
    let mut random = [0u8; 8];
    fill_random(&mut random).map_err(|source| PlaceError::Io {
        path: "random bytes for a temporary name".into(),
        source,
    })?;
    let mut name = String::from(".plugtop-");
    for b in random {
        name.push_str(&format!("{b:02x}"));
    }
    name.push_str(".tmp");
    Ok(OsString::from(name))
}

/// Random bytes that never wait for the entropy pool: `getrandom` with
/// GRND_INSECURE (Linux 5.6), else `/dev/urandom`, which does not block.
fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    use rustix::rand::{GetRandomFlags, getrandom};
    if let Ok(n) = getrandom(&mut *buf, GetRandomFlags::INSECURE)
        && n == buf.len()
    {
        return Ok(());
    }
    use std::io::Read as _;
    File::open("/dev/urandom")?.read_exact(buf)
}

/// True when `name` is one of the temporary names this module makes (for
/// tests and clean-up checks).
pub fn is_temporary(name: &OsStr) -> bool {
    let b = name.as_bytes();
    b.starts_with(b".plugtop-") && b.ends_with(b".tmp")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn names(dir: &Path) -> Vec<OsString> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn temporary_names_differ_and_look_temporary() {
        let a = temporary_name().expect("name");
        let b = temporary_name().expect("name");
        assert_ne!(a, b);
        assert!(is_temporary(&a), "{a:?}");
        assert_eq!(a.len(), ".plugtop-".len() + 16 + ".tmp".len());
    }

    #[test]
    fn a_regular_file_is_replaced_and_nothing_else_is() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = PlaceDir::open(tmp.path()).expect("open");
        let name = OsStr::new("a.prom");
        dir.write(name, b"1\n", Replace::RegularFile).expect("new");
        dir.write(name, b"2\n", Replace::RegularFile)
            .expect("again");
        assert_eq!(std::fs::read(tmp.path().join(name)).expect("read"), b"2\n");
        let refused = dir.write(name, b"3\n", Replace::Nothing);
        assert!(
            matches!(refused, Err(PlaceError::Exists { .. })),
            "{refused:?}"
        );
        assert_eq!(std::fs::read(tmp.path().join(name)).expect("read"), b"2\n");
        assert_eq!(names(tmp.path()), vec![OsString::from("a.prom")]);
    }

    #[test]
    fn a_link_a_fifo_and_a_directory_are_refused_and_left_as_they_were() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let target = tmp.path().join("target");
        std::fs::write(&target, "keep\n").expect("target");
        symlink(&target, tmp.path().join("link")).expect("link");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            tmp.path().join("fifo"),
            Mode::from_raw_mode(0o600),
        )
        .expect("fifo");
        std::fs::create_dir(tmp.path().join("dir")).expect("dir");
        let dir = PlaceDir::open(tmp.path()).expect("open");
        for (name, kind) in [
            ("link", "a symbolic link"),
            ("fifo", "a FIFO"),
            ("dir", "a directory"),
        ] {
            for replace in [Replace::RegularFile, Replace::Nothing] {
                match dir.write(OsStr::new(name), b"x\n", replace) {
                    Err(PlaceError::NotRegular { kind: k, .. }) => assert_eq!(k, kind),
                    other => panic!("{name}: {other:?}"),
                }
            }
        }
        assert_eq!(std::fs::read(&target).expect("read"), b"keep\n");
        assert!(
            std::fs::symlink_metadata(tmp.path().join("link"))
                .expect("link stays")
                .file_type()
                .is_symlink()
        );
        assert!(!names(tmp.path()).iter().any(|n| is_temporary(n)));
    }

    #[test]
    fn a_missing_directory_and_a_path_without_a_name_are_errors() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(matches!(
            PlaceDir::of_file(&tmp.path().join("missing/x.prom")),
            Err(PlaceError::Dir { .. })
        ));
        assert!(matches!(
            PlaceDir::of_file(Path::new("/")),
            Err(PlaceError::NoName { .. })
        ));
        assert!(matches!(
            PlaceDir::of_file(&tmp.path().join("..")),
            Err(PlaceError::NoName { .. })
        ));
        // A trailing slash names a directory, even one that does not exist.
        assert!(matches!(
            PlaceDir::of_file(&tmp.path().join("newdir/")),
            Err(PlaceError::NoName { .. })
        ));
        let (dir, name) = PlaceDir::of_file(Path::new("bare.prom")).expect("current directory");
        assert_eq!(name, "bare.prom");
        assert_eq!(dir.path, Path::new("."));
    }
}
