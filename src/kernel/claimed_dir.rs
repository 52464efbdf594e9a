//! A directory plugtop fills with files of its own (`sim --serve DIR`,
//! `record --export-snapshots DIR`), claimed before anything is written:
//! plugtop runs as root, so it never fills `/` (which would mean the real
//! /proc and /sys) nor merges into a directory someone else's files are
//! in. A new or empty directory is taken and marked with a file naming
//! what filled it, so a later run may fill its own directory again — but
//! not while another still fills it: the marker is locked (`flock`) for as
//! long as the directory is held, so a second `sim --serve` on the same
//! directory is refused with the pid that serves it.

use std::fs::{File, TryLockError};
use std::path::Path;

use rustix::fs::FileType;

use super::fs::{FsError, Placing, Replace, Resolve, Root};

/// The most of a marker read: its text is one line.
const MARKER_LIMIT: u64 = 4096;

/// What fills the directory: each kind has its own marker, so a served
/// root is never taken for an export directory or the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirUse {
    /// A simulated guest's root (`plugtop sim --serve`).
    ServedRoot,
    /// Conformance-format snapshots (`plugtop record --export-snapshots`).
    Snapshots,
}

impl DirUse {
    /// The marker file's name, directly in the directory.
    pub fn marker(self) -> &'static str {
        match self {
            DirUse::ServedRoot => ".plugtop-sim",
            DirUse::Snapshots => ".plugtop-snapshots",
        }
    }

    /// What the marker says, for a person who finds it.
    fn marker_text(self) -> &'static str {
        match self {
            DirUse::ServedRoot => {
                "plugtop sim --serve made this directory; a later --serve may rewrite it\n"
            }
            DirUse::Snapshots => {
                "plugtop record --export-snapshots made this directory; a later export may rewrite it\n"
            }
        }
    }
}

/// Why a directory was not taken.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// The directory is `/`, however named.
    #[error(
        "{dir} is / itself: plugtop would write over this machine's own /proc and /sys; give a directory of its own (such as /tmp/guest)"
    )]
    SystemRoot { dir: String },
    /// Not empty, and not marked as plugtop's: `why` says what stands at
    /// the marker's name (nothing, something else, a file plugtop did not
    /// write).
    #[error(
        "{dir} is not empty and plugtop did not fill it ({why}); give a new or empty directory, so nothing in it is overwritten"
    )]
    Foreign { dir: String, why: String },
    /// Something other than a directory stands at its name (`kind` says
    /// what, [`super::fs::kind_in_words`]).
    #[error("{dir} is {kind}, not a directory; give a new or empty directory (plugtop makes it)")]
    NotDirectory { dir: String, kind: &'static str },
    /// It could not be made or opened.
    #[error("cannot use the directory {dir}")]
    Open {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    /// Another process fills it now (holds its marker's lock).
    #[error(
        "{dir} is being filled by another plugtop now{holder} (its {marker} is locked); stop that one first or give another directory"
    )]
    InUse {
        dir: String,
        marker: &'static str,
        /// " (pid 4242, plugtop)", or nothing when the lock table does not say.
        holder: String,
    },
    /// Looking into it or marking it failed.
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// A claimed directory, held open (every file is written beneath it) and
/// locked against a second plugtop for as long as this is kept.
#[derive(Debug)]
pub struct ClaimedDir {
    dir: Root,
    _lock: File,
}

impl std::ops::Deref for ClaimedDir {
    type Target = Root;
    fn deref(&self) -> &Root {
        &self.dir
    }
}

/// Makes `dir` if missing and takes it for `what`: refused when it is `/`,
/// or when it holds anything and no marker of `what`. Nothing is written
/// into a directory that is refused, nor into one another process holds
/// now. The directory is returned held open and locked: every file is then
/// written beneath it.
pub fn claim(dir: &Path, what: DirUse) -> Result<ClaimedDir, ClaimError> {
    let open_error = |source: std::io::Error| match super::fs::non_directory_at(dir) {
        Some(kind) => ClaimError::NotDirectory {
            dir: dir.display().to_string(),
            kind,
        },
        None => ClaimError::Open {
            dir: dir.display().to_string(),
            source,
        },
    };
    std::fs::create_dir_all(dir).map_err(open_error)?;
    let beneath = Root::open(dir).map_err(open_error)?;
    if beneath.is_system_root() {
        return Err(ClaimError::SystemRoot {
            dir: dir.display().to_string(),
        });
    }
    let marker = Path::new(what.marker());
    let name = what.marker();
    match beneath.entry_kind(marker)? {
        Some(FileType::RegularFile) => {
            // Only plugtop's own text marks it: an empty or other file a
            // person put at the name does not.
            let text = beneath.read(marker, MARKER_LIMIT, Resolve::Own);
            if text.is_ok_and(|t| t == what.marker_text().as_bytes()) {
                return lock(dir, beneath, what);
            }
            return Err(foreign(
                dir,
                format!("its {name} does not hold what plugtop writes there"),
            ));
        }
        Some(kind) => {
            return Err(foreign(
                dir,
                format!(
                    "its {name} is {}, not the file plugtop writes there",
                    super::fs::kind_in_words(kind)
                ),
            ));
        }
        None => {}
    }
    if !beneath
        .dir_entries(Path::new(""), 1, Resolve::Beneath)?
        .is_empty()
    {
        return Err(foreign(dir, format!("there is no {name} in it")));
    }
    let text = what.marker_text();
    beneath.write_file(marker, text.as_bytes(), Placing::new(Replace::Nothing))?;
    lock(dir, beneath, what)
}

/// Locks the marker of `what` below `beneath` without waiting: refused,
/// naming the holder, when another process holds it.
fn lock(dir: &Path, beneath: Root, what: DirUse) -> Result<ClaimedDir, ClaimError> {
    let marker = Path::new(what.marker());
    let file = beneath.open_regular(marker, Resolve::Own)?;
    match file.try_lock() {
        Ok(()) => Ok(ClaimedDir {
            dir: beneath,
            _lock: file,
        }),
        Err(TryLockError::WouldBlock) => {
            let holder = crate::kernel::processes::flock_holder_words(&beneath, marker);
            Err(ClaimError::InUse {
                dir: dir.display().to_string(),
                marker: what.marker(),
                holder,
            })
        }
        Err(TryLockError::Error(source)) => Err(ClaimError::Open {
            dir: dir.display().to_string(),
            source,
        }),
    }
}

fn foreign(dir: &Path, why: String) -> ClaimError {
    ClaimError::Foreign {
        dir: dir.display().to_string(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_new_or_empty_directory_is_taken_and_marked_and_taken_again() {
        let dir = tempfile::tempdir().expect("dir");
        let new = dir.path().join("a/b");
        claim(&new, DirUse::ServedRoot).expect("new");
        assert!(new.join(".plugtop-sim").is_file());
        std::fs::write(new.join("proc"), "ours\n").expect("a file of a run");
        claim(&new, DirUse::ServedRoot).expect("its own again");
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).expect("empty");
        claim(&empty, DirUse::Snapshots).expect("empty");
        assert!(empty.join(".plugtop-snapshots").is_file());
    }

    #[test]
    fn a_directory_held_by_another_claim_is_refused_with_its_holder() {
        let dir = tempfile::tempdir().expect("dir");
        let served = dir.path().join("root");
        let first = claim(&served, DirUse::ServedRoot).expect("first");
        std::fs::write(served.join("proc"), "first's\n").expect("a file of the first");
        // newuser51 #4: a second serve on the same directory while the
        // first runs is refused, naming the pid that holds it.
        let e = claim(&served, DirUse::ServedRoot).expect_err("second");
        assert!(matches!(e, ClaimError::InUse { .. }), "{e}");
        let said = e.to_string();
        assert!(
            said.contains(&format!("pid {}", std::process::id())),
            "{said}"
        );
        assert_eq!(
            std::fs::read_to_string(served.join("proc")).ok().as_deref(),
            Some("first's\n")
        );
        drop(first);
        claim(&served, DirUse::ServedRoot).expect("free again once the first is gone");
    }

    #[test]
    fn slash_a_foreign_directory_and_a_planted_marker_are_refused_untouched() {
        for slash in ["/", "/tmp/..", "//"] {
            let e = claim(Path::new(slash), DirUse::ServedRoot).expect_err("/");
            assert!(matches!(e, ClaimError::SystemRoot { .. }), "{slash}: {e}");
        }
        let dir = tempfile::tempdir().expect("dir");
        let link = dir.path().join("to-slash");
        symlink("/", &link).expect("link");
        let e = claim(&link, DirUse::ServedRoot).expect_err("a link to /");
        assert!(e.to_string().contains("is / itself"), "{e}");

        let foreign = dir.path().join("foreign");
        std::fs::create_dir(&foreign).expect("dir");
        std::fs::write(foreign.join(".hidden"), "mine\n").expect("file");
        let e = claim(&foreign, DirUse::ServedRoot).expect_err("foreign");
        assert!(
            e.to_string()
                .contains("is not empty and plugtop did not fill it"),
            "{e}"
        );
        // A served root is not an export directory, and a marker that is
        // a link (or a directory) is nobody's marker.
        claim(&dir.path().join("served"), DirUse::ServedRoot).expect("new");
        let e = claim(&dir.path().join("served"), DirUse::Snapshots);
        assert!(matches!(e, Err(ClaimError::Foreign { .. })), "{e:?}");
        symlink(foreign.join(".hidden"), foreign.join(".plugtop-sim")).expect("link");
        let e = claim(&foreign, DirUse::ServedRoot);
        assert!(matches!(e, Err(ClaimError::Foreign { .. })), "{e:?}");
        // adv51: said "there is no .plugtop-sim in it" of a link there.
        let said = e
            .map(|_| ())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            said.contains("its .plugtop-sim is a symbolic link, not the file plugtop writes there"),
            "{said}"
        );
        assert_eq!(
            std::fs::read_dir(&foreign).expect("list").count(),
            2,
            "nothing written"
        );
        let file = dir.path().join("file");
        std::fs::write(&file, "x\n").expect("file");
        let e = claim(&file, DirUse::ServedRoot).expect_err("not a directory");
        assert!(
            e.to_string().contains("is a regular file, not a directory"),
            "{e}"
        );
    }

    #[test]
    fn a_marker_plugtop_did_not_write_marks_nothing() {
        // adv51: an empty regular .plugtop-sim was taken as plugtop's, and
        // the directory filled beside a person's files.
        let dir = tempfile::tempdir().expect("dir");
        for (name, plant) in [
            ("empty", Some("")),
            ("other", Some("mine\n")),
            (
                "longer",
                Some(
                    "plugtop sim --serve made this directory; a later --serve may rewrite it\nand more\n",
                ),
            ),
            ("fifo", None),
        ] {
            let d = dir.path().join(name);
            std::fs::create_dir(&d).expect("dir");
            std::fs::write(d.join("important"), "keep\n").expect("a person's file");
            let marker = d.join(".plugtop-sim");
            match plant {
                Some(text) => std::fs::write(&marker, text).expect("marker"),
                None => crate::kernel::fs::tests::mkfifo(&marker),
            }
            let said = match claim(&d, DirUse::ServedRoot) {
                Err(e @ ClaimError::Foreign { .. }) => e.to_string(),
                other => panic!("{name}: {other:?}"),
            };
            let why = match plant {
                Some(_) => "its .plugtop-sim does not hold what plugtop writes there",
                None => "its .plugtop-sim is a FIFO, not the file plugtop writes there",
            };
            assert!(said.contains(why), "{name}: {said}");
            assert_eq!(
                std::fs::read_dir(&d).expect("list").count(),
                2,
                "{name}: nothing written"
            );
        }
    }
}
