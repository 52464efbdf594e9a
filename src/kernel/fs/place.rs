//! Create-or-replace: plugtop runs as root, so a file is never opened by a
//! name someone else could have planted. It is written into a new file
//! beside its final name, under an unpredictable name, created exclusively
//! and never through a link, without blocking, then renamed into place —
//! only over a regular file or over nothing ([`Replace`]): a link, a FIFO,
//! a device or a directory at the final name is refused, never replaced or
//! written through. A reader sees the old file or the new one whole. A
//! file that must survive a crash (the restore journal) is placed
//! [`durable`](Placing::durable): flushed before the rename, its directory
//! after it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, RenameFlags};
use rustix::io::Errno;

use super::{FileStamp, FsError, Root};

/// How many unpredictable temporary names are tried: each is 64 random
/// bits, so a second try is already only for a planted name.
const NAME_TRIES: usize = 16;

/// How a file is created: readable by all, as `File::create` (the umask
/// applies).
pub(super) fn file_mode() -> Mode {
    Mode::from_raw_mode(0o666)
}

/// What may stand at the final name before the rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// Nothing: an existing entry of any kind is refused (`generate man`
    /// without `--force`).
    Nothing,
    /// Nothing or a regular file, which is replaced whole.
    RegularFile,
    /// Nothing or the very file plugtop placed there before (its
    /// [`FileStamp`]): any other file at the name is refused, so a
    /// file a person put there since (or named by mistake) is never
    /// replaced. Checked just before the rename; what a person puts there
    /// in the instant between is the only file that could be replaced.
    Own(FileStamp),
}

/// How a file is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placing {
    pub replace: Replace,
    /// Flushed to disk before the rename, its directory after it.
    pub durable: bool,
    /// The file's mode whatever the umask (the metrics textfile must be
    /// readable by node_exporter's own user under a unit whose umask is
    /// 0077).
    pub mode: Option<u32>,
}

impl Placing {
    /// Over nothing or a regular file, not flushed: a reader sees the old
    /// file or the new one whole either way.
    pub const REPLACE: Placing = Placing {
        replace: Replace::RegularFile,
        durable: false,
        mode: None,
    };

    /// As `replace` says, not flushed.
    pub fn new(replace: Replace) -> Placing {
        Placing {
            replace,
            ..Placing::REPLACE
        }
    }

    /// Over nothing or a regular file, flushed.
    pub fn durable() -> Placing {
        Placing {
            durable: true,
            ..Placing::REPLACE
        }
    }
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

impl Root {
    /// Writes `bytes` to `rel`, whole or not at all (create-or-replace).
    pub fn write_file(&self, rel: &Path, bytes: &[u8], how: Placing) -> Result<(), FsError> {
        self.write_streamed(rel, how, |file, tmp| {
            file.write_all(bytes).map_err(|e| self.io(tmp, e))
        })
    }

    /// Writes `rel` whole or not at all, as [`Root::write_file`], from
    /// what `fill` writes to the new file (given with its temporary name,
    /// for messages): a file too long to hold in memory first. Nothing is
    /// left behind when `fill` fails.
    pub fn write_streamed<T, E: From<FsError>>(
        &self,
        rel: &Path,
        how: Placing,
        fill: impl FnOnce(&mut File, &Path) -> Result<T, E>,
    ) -> Result<T, E> {
        let (tmp, mut file) = self.create_temporary(rel, how)?;
        let placed = fill(&mut file, &tmp).and_then(|kept| {
            self.finish(&file, &tmp, how)
                .and_then(|()| self.place(&tmp, rel, how))
                .map_err(E::from)
                .map(|()| kept)
        });
        drop(file);
        if placed.is_err() {
            let _ = self.remove(&tmp);
        }
        placed
    }

    /// Whether `rel` may be placed now: what stands there, looked at
    /// without following a link, is refused unless `replace` allows it.
    pub fn check(&self, rel: &Path, replace: Replace) -> Result<(), FsError> {
        let kind = match self.entry_kind(rel)? {
            None => return Ok(()),
            Some(FileType::RegularFile) if replace == Replace::RegularFile => return Ok(()),
            Some(FileType::RegularFile) if matches!(replace, Replace::Own(_)) => {
                return match replace {
                    Replace::Own(id) if self.regular_stamp(rel) == Some(id) => Ok(()),
                    _ => Err(FsError::NotOurs {
                        path: self.shown(rel),
                        why: "is no longer the file plugtop wrote there",
                    }),
                };
            }
            Some(FileType::RegularFile) => {
                return Err(FsError::Exists {
                    path: self.shown(rel),
                });
            }
            Some(other) => kind_in_words(other),
        };
        Err(FsError::NotReplaceable {
            path: self.shown(rel),
            kind,
            below: if self.named_dir {
                String::new()
            } else {
                format!(" below {}", self.path.display())
            },
        })
    }

    /// Removes `rel` when it is still the file plugtop placed (`own`, its
    /// device and inode); anything else standing there (another file, a
    /// link, a FIFO) is left alone, and nothing there is no error.
    pub fn remove_own(&self, rel: &Path, own: FileStamp) -> Result<(), FsError> {
        match self.regular_stamp(rel) {
            Some(id) if id == own => self.remove(rel),
            _ => Ok(()),
        }
    }

    /// Whether a file can be created here now (a command that writes only
    /// after minutes of work asks first): a new file under an
    /// unpredictable name is created and removed again.
    pub fn check_writable(&self) -> Result<(), FsError> {
        let (tmp, file) = self.create_temporary(Path::new("."), Placing::REPLACE)?;
        drop(file);
        rustix::fs::unlinkat(&self.fd, tmp.as_os_str(), AtFlags::empty())
            .map_err(|e| self.io(&tmp, e))
    }

    /// A new, empty file beside `rel` under an unpredictable name (the
    /// directories on the way made when missing): never an existing file,
    /// never through a link, never waiting (a FIFO planted at a guessed
    /// name is only an existing name, tried past).
    fn create_temporary(&self, rel: &Path, how: Placing) -> Result<(PathBuf, File), FsError> {
        let dir = rel.parent().unwrap_or(Path::new(""));
        let mut made_dirs = false;
        let mut last = None;
        for _ in 0..NAME_TRIES {
            let tmp = dir.join(temporary_name().map_err(|e| self.io(rel, e))?);
            match self.create_new(&tmp) {
                Ok(file) => {
                    if let Some(mode) = how.mode {
                        rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
                            .map_err(|e| self.io(&tmp, e))?;
                    }
                    return Ok((tmp, file));
                }
                Err(e) if e.is_not_found() && !made_dirs => {
                    self.create_dirs(dir)?;
                    made_dirs = true;
                }
                Err(FsError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AlreadyExists =>
                {
                    last = Some(source);
                }
                Err(e) => return Err(e),
            }
        }
        Err(self.io(rel, last.unwrap_or_else(|| Errno::EXIST.into())))
    }

    /// Flushes the written temporary file when `how` asks for it.
    fn finish(&self, file: &File, tmp: &Path, how: Placing) -> Result<(), FsError> {
        if how.durable {
            file.sync_all().map_err(|e| self.io(tmp, e))?;
        }
        Ok(())
    }

    /// Moves the temporary file `tmp` to `rel`, if what stands there may be
    /// replaced (checked just before; a rename never writes through what it
    /// replaces, so what changes in between can only be replaced, not
    /// reached; with [`Replace::Nothing`] the rename itself refuses a name
    /// taken in between).
    fn place(&self, tmp: &Path, rel: &Path, how: Placing) -> Result<(), FsError> {
        self.check(rel, how.replace)?;
        let (from_dir, from_name) = self.parent(tmp, "write")?;
        let (to_dir, to_name) = self.parent(rel, "write")?;
        let flags = match how.replace {
            Replace::RegularFile | Replace::Own(_) => RenameFlags::empty(),
            Replace::Nothing => RenameFlags::NOREPLACE,
        };
        let exists = || FsError::Exists {
            path: self.shown(rel),
        };
        match rustix::fs::renameat_with(&from_dir, &from_name, &to_dir, &to_name, flags) {
            Ok(()) => {}
            Err(Errno::EXIST) => return Err(exists()),
            // A file system without RENAME_NOREPLACE: a hard link is
            // refused where a name exists just the same.
            Err(Errno::INVAL) if how.replace == Replace::Nothing => {
                match rustix::fs::linkat(&from_dir, &from_name, &to_dir, &to_name, AtFlags::empty())
                {
                    Ok(()) => self.remove(tmp)?,
                    Err(Errno::EXIST) => return Err(exists()),
                    Err(e) => return Err(self.io(rel, e)),
                }
            }
            Err(e) => return Err(self.io(rel, e)),
        }
        if how.durable {
            let dir = rel.parent().unwrap_or(Path::new(""));
            let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY;
            let dir_fd = self.open_at(dir, flags, Mode::empty(), super::Resolve::Beneath)?;
            File::from(dir_fd).sync_all().map_err(|e| self.io(dir, e))?;
        }
        Ok(())
    }
}

/// Files written beneath one root, renamed into place together by
/// [`commit`](StagedFiles::commit) in the order written (a served simulated
/// guest, exported snapshots); what is never committed is removed when
/// this is dropped.
#[derive(Debug)]
pub struct StagedFiles<'r> {
    root: &'r Root,
    how: Placing,
    /// Each written temporary file and the name it is to have.
    staged: Vec<(PathBuf, PathBuf)>,
}

impl<'r> StagedFiles<'r> {
    /// Nothing written yet, beneath `root`, each file placed as `how` says.
    pub fn new(root: &'r Root, how: Placing) -> Self {
        StagedFiles {
            root,
            how,
            staged: Vec::new(),
        }
    }

    /// Writes `bytes` into a new temporary file beside `rel` (making the
    /// directories on the way when missing); [`commit`](Self::commit) puts
    /// it at `rel`.
    pub fn stage(&mut self, rel: impl AsRef<Path>, bytes: &[u8]) -> Result<(), FsError> {
        let rel = rel.as_ref();
        let (tmp, mut file) = self.root.create_temporary(rel, self.how)?;
        let written = file
            .write_all(bytes)
            .map_err(|e| self.root.io(&tmp, e))
            .and_then(|()| self.root.finish(&file, &tmp, self.how));
        if let Err(e) = written {
            // Never renamed into place half written.
            let _ = self.root.remove(&tmp);
            return Err(e);
        }
        self.staged.push((tmp, rel.to_path_buf()));
        Ok(())
    }

    /// Renames every staged file into place, in the order staged; stops at
    /// the first that may not be placed (its temporary file and the rest
    /// are removed).
    pub fn commit(&mut self) -> Result<(), FsError> {
        let staged = std::mem::take(&mut self.staged);
        let mut rest = staged.into_iter();
        while let Some((tmp, rel)) = rest.next() {
            if let Err(e) = self.root.place(&tmp, &rel, self.how) {
                let _ = self.root.remove(&tmp);
                self.staged.extend(rest);
                self.discard();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Stages and commits one file (with whatever was staged before it).
    pub fn put(&mut self, rel: impl AsRef<Path>, bytes: &[u8]) -> Result<(), FsError> {
        self.stage(rel, bytes)?;
        self.commit()
    }

    /// Removes the temporary files not committed.
    fn discard(&mut self) {
        for (tmp, _) in self.staged.drain(..) {
            let _ = self.root.remove(&tmp);
        }
    }
}

impl Drop for StagedFiles<'_> {
    fn drop(&mut self) {
        self.discard();
    }
}

/// `.plugtop-` and 16 random hex digits and `.tmp`: hidden, so node_exporter
/// (which reads `*.prom`) never takes it, and short whatever the final name.
fn temporary_name() -> std::io::Result<OsString> {
    let mut random = [0u8; 8];
    fill_random(&mut random)?;
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
mod tests;
