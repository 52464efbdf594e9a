//! Files written whole beneath a directory plugtop fills (a served
//! simulated guest, exported snapshots). plugtop runs as root, so each file
//! goes first into a new file under an unpredictable name beside it,
//! created exclusively and never through a link, and is then renamed over
//! its final name — only over a regular file or over nothing: a FIFO, a
//! directory or a link there is refused, never replaced or written
//! through. Every path resolves beneath the directory as in a chroot
//! ([`Beneath`]), so a link on the way cannot lead outside it. A reader of
//! the directory sees each file old or new, never half written. Files that
//! must survive a crash (the restore journal) are staged
//! [`durable`](StagedFiles::durable): flushed to disk before the rename,
//! their directory after it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use super::beneath::{Beneath, BeneathError};
use crate::placed_file::{PlaceError, temporary_name};

/// How many unpredictable temporary names are tried: each is 64 random
/// bits, so a second try is already only for a planted name.
const NAME_TRIES: usize = 16;

/// Why a file could not be written into place.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// Resolving or writing beneath the directory failed (a link leading
    /// out, a loop, the disk).
    #[error(transparent)]
    Beneath(#[from] BeneathError),
    /// Something other than a regular file stands at the final name.
    #[error(
        "{path} is {kind}; plugtop replaces only a regular file below {root} (or creates a new one), refusing"
    )]
    NotRegular {
        path: String,
        root: String,
        kind: &'static str,
    },
    /// No temporary name could be made or taken.
    #[error(transparent)]
    TemporaryName(#[from] PlaceError),
}

/// A written temporary file and the name it is to have.
#[derive(Debug)]
struct Staged {
    temporary: PathBuf,
    name: PathBuf,
}

/// Files staged beneath one directory, renamed into place together by
/// [`commit`](StagedFiles::commit); what is never committed is removed
/// when this is dropped.
#[derive(Debug)]
pub struct StagedFiles<'b> {
    beneath: &'b Beneath,
    staged: Vec<Staged>,
    durable: bool,
}

impl<'b> StagedFiles<'b> {
    /// Nothing staged yet, beneath `beneath`.
    pub fn new(beneath: &'b Beneath) -> Self {
        StagedFiles {
            beneath,
            staged: Vec::new(),
            durable: false,
        }
    }

    /// Nothing staged yet, beneath `beneath`, for files that must be on
    /// disk once committed (the restore journal, read after a crash): each
    /// file is flushed before its rename and its directory after it.
    pub fn durable(beneath: &'b Beneath) -> Self {
        StagedFiles {
            beneath,
            staged: Vec::new(),
            durable: true,
        }
    }

    /// Writes `bytes` into a new temporary file beside `rel` (making the
    /// directories on the way when missing); [`commit`](Self::commit) puts
    /// it at `rel`.
    pub fn stage(&mut self, rel: impl AsRef<Path>, bytes: &[u8]) -> Result<(), StageError> {
        let name = rel.as_ref().to_path_buf();
        let dir = name.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut made_dirs = false;
        let mut tries = 0;
        loop {
            let temporary = dir.join(temporary_name()?);
            match self.beneath.create_new(&temporary) {
                Ok(mut file) => {
                    let written = file.write_all(bytes).and_then(|()| {
                        if self.durable {
                            file.sync_all()
                        } else {
                            Ok(())
                        }
                    });
                    if let Err(source) = written {
                        // Never renamed into place half written.
                        let _ = self.beneath.remove(&temporary);
                        return Err(StageError::Beneath(BeneathError::Io {
                            path: Path::new("/").join(&temporary).display().to_string(),
                            source,
                        }));
                    }
                    self.staged.push(Staged { temporary, name });
                    return Ok(());
                }
                Err(e) if e.is_not_found() && !made_dirs => {
                    self.beneath.create_dirs(&dir)?;
                    made_dirs = true;
                }
                Err(e) if is_taken(&e) && tries + 1 < NAME_TRIES => tries += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Renames every staged file into place, in the order staged; stops at
    /// the first that may not be placed (its temporary file and the rest
    /// are removed).
    pub fn commit(&mut self) -> Result<(), StageError> {
        let staged = std::mem::take(&mut self.staged);
        let mut rest = staged.into_iter();
        while let Some(file) = rest.next() {
            if let Err(e) = self.place(&file) {
                let _ = self.beneath.remove(&file.temporary);
                self.staged.extend(rest);
                self.discard();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Stages and commits one file (with whatever was staged before it).
    pub fn put(&mut self, rel: impl AsRef<Path>, bytes: &[u8]) -> Result<(), StageError> {
        self.stage(rel, bytes)?;
        self.commit()
    }

    /// Renames `file` into place, if what stands at its name may be
    /// replaced. Checked just before; a rename never writes through what it
    /// replaces, so what changes in between can only be replaced, not
    /// reached (a directory made there makes the rename fail).
    fn place(&self, file: &Staged) -> Result<(), StageError> {
        let kind = match self.beneath.entry_kind(&file.name)? {
            None | Some(FileType::RegularFile) => {
                self.beneath.rename(&file.temporary, &file.name)?;
                if self.durable {
                    let dir = file.name.parent().unwrap_or(Path::new(""));
                    self.beneath.sync_dir(dir)?;
                }
                return Ok(());
            }
            Some(other) => crate::placed_file::kind_in_words(other),
        };
        Err(StageError::NotRegular {
            path: Path::new("/").join(&file.name).display().to_string(),
            root: self.beneath.root().display().to_string(),
            kind,
        })
    }

    /// Removes the temporary files not committed.
    fn discard(&mut self) {
        for file in self.staged.drain(..) {
            let _ = self.beneath.remove(&file.temporary);
        }
    }
}

impl Drop for StagedFiles<'_> {
    fn drop(&mut self) {
        self.discard();
    }
}

/// Whether creating a new file failed because its name is taken.
fn is_taken(e: &BeneathError) -> bool {
    matches!(e, BeneathError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::os::unix::fs::symlink;

    const UNTOUCHED: &str = "outside, untouched\n";

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().join("root");
        std::fs::create_dir(&root).expect("root");
        let outside = dir.path().join("precious");
        std::fs::write(&outside, UNTOUCHED).expect("outside");
        (dir, root, outside)
    }

    fn leftovers(root: &Path, rel: &str) -> Vec<OsString> {
        std::fs::read_dir(root.join(rel))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .filter(|n| crate::placed_file::is_temporary(n))
            .collect()
    }

    #[test]
    fn files_are_placed_whole_over_nothing_or_a_regular_file() {
        let (_dir, root, _outside) = setup();
        let b = Beneath::open(&root).expect("root");
        let mut files = StagedFiles::new(&b);
        files.stage("proc/stat", b"cpu 1\n").expect("stage");
        files.stage("proc/loadavg", b"0.00\n").expect("stage");
        assert!(!root.join("proc/stat").exists(), "nothing placed yet");
        files.commit().expect("commit");
        files.put("proc/stat", b"cpu 2\n").expect("again");
        assert_eq!(
            std::fs::read_to_string(root.join("proc/stat"))
                .ok()
                .as_deref(),
            Some("cpu 2\n")
        );
        assert!(root.join("proc/loadavg").is_file());
        assert!(leftovers(&root, "proc").is_empty());
    }

    #[test]
    fn a_link_a_fifo_or_a_directory_at_the_name_is_refused_and_cleaned_up() {
        let (_dir, root, outside) = setup();
        std::fs::create_dir_all(root.join("proc/dir")).expect("dir");
        symlink(&outside, root.join("proc/link")).expect("link");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            root.join("proc/fifo"),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .expect("fifo");
        let b = Beneath::open(&root).expect("root");
        for (name, kind) in [
            ("proc/link", "a symbolic link"),
            ("proc/fifo", "a FIFO"),
            ("proc/dir", "a directory"),
        ] {
            let mut files = StagedFiles::new(&b);
            files.stage("proc/first", b"1\n").expect("stage");
            files.stage(name, b"x\n").expect("stage");
            files.stage("proc/after", b"2\n").expect("stage");
            match files.commit() {
                Err(StageError::NotRegular { kind: k, .. }) => assert_eq!(k, kind),
                other => panic!("{name}: {other:?}"),
            }
            assert!(root.join("proc/first").is_file(), "placed before");
            assert!(!root.join("proc/after").exists(), "never placed");
            assert!(leftovers(&root, "proc").is_empty(), "{name}");
        }
        assert_eq!(
            std::fs::read_to_string(&outside).ok().as_deref(),
            Some(UNTOUCHED)
        );
    }

    #[test]
    fn durable_files_are_placed_and_refused_as_the_others() {
        let (_dir, root, outside) = setup();
        symlink(&outside, root.join("link")).expect("link");
        let b = Beneath::open(&root).expect("root");
        let mut files = StagedFiles::durable(&b);
        files.put("run/state", b"1\n").expect("placed");
        files.put("run/state", b"2\n").expect("replaced");
        assert_eq!(
            std::fs::read_to_string(root.join("run/state"))
                .ok()
                .as_deref(),
            Some("2\n")
        );
        let e = files.put("link", b"x\n").expect_err("a link");
        assert!(matches!(e, StageError::NotRegular { .. }), "{e}");
        assert!(leftovers(&root, "run").is_empty());
        assert!(leftovers(&root, "").is_empty());
        assert_eq!(
            std::fs::read_to_string(&outside).ok().as_deref(),
            Some(UNTOUCHED)
        );
    }

    #[test]
    fn links_on_the_way_stay_inside_and_dropping_removes_what_was_staged() {
        let (dir, root, outside) = setup();
        symlink("/elsewhere", root.join("sys")).expect("absolute link");
        symlink("../", root.join("up")).expect("climbing link");
        let b = Beneath::open(&root).expect("root");
        let mut files = StagedFiles::new(&b);
        files.put("sys/x/online", b"1\n").expect("inside");
        assert!(root.join("elsewhere/x/online").is_file());
        let e = files.put("up/precious", b"x\n").expect_err("outside");
        assert!(e.to_string().contains("leads outside the root"), "{e}");
        files.stage("proc/stat", b"cpu\n").expect("stage");
        drop(files);
        assert!(!root.join("proc/stat").exists());
        assert!(leftovers(&root, "proc").is_empty());
        assert!(!dir.path().join("x").exists());
        assert_eq!(
            std::fs::read_to_string(&outside).ok().as_deref(),
            Some(UNTOUCHED)
        );
    }
}
