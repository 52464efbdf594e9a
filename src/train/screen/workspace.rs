//! The trainee's working copy of each exercise's rule file, in the state
//! directory (`train/<course>/<exercise>.conf`), so the trainee can edit
//! it in their own editor while the screen reloads it on save, and the
//! answer given to a diagnosis beside it (`<exercise>.answer`): the files
//! `plugtop train grade` reads, so the directory is what a trainee hands
//! in. A copy is made from the start file, created exclusively and never
//! through a link, and put away again when the trainee leaves it
//! untouched and unsubmitted (a copy stands for work done); read bounded
//! and never through a link.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::kernel::fs::{FsError, Placing, Replace, Root};
use crate::train::progress::read_no_follow;

/// The largest working copy read (cpuplugd's own files are a few KB).
pub const MAX_WORKING_BYTES: u64 = 1 << 20;

/// Why a working copy could not be made, read or written.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(transparent)]
    Place(#[from] FsError),
}

/// A working copy: where it is, and what it was when last read (to see a
/// save by another editor).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkingCopy {
    pub path: PathBuf,
    seen: Option<(SystemTime, u64)>,
}

fn io(path: &Path, source: std::io::Error) -> WorkspaceError {
    WorkspaceError::Place(FsError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Makes `dir` (for the user only) when missing.
fn made(dir: &Path) -> Result<(), WorkspaceError> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| io(dir, e))?;
    }
    Ok(())
}

/// Writes the answer `line` (`RULE: comparison`) to diagnosis `id` as
/// `dir/<id>.answer`, where `plugtop train grade` reads it; its path.
pub fn write_answer(dir: &Path, id: &str, line: &str) -> Result<PathBuf, WorkspaceError> {
    made(dir)?;
    let name = format!("{id}.answer");
    let text = format!("{line}\n");
    Root::dir(dir)?.write_file(Path::new(&name), text.as_bytes(), Placing::REPLACE)?;
    Ok(dir.join(name))
}

impl WorkingCopy {
    /// The working copy of exercise `id` under `dir`, made from `start`
    /// when missing; its bytes.
    pub fn open(
        dir: &Path,
        id: &str,
        start: &Path,
    ) -> Result<(WorkingCopy, Vec<u8>), WorkspaceError> {
        made(dir)?;
        let path = dir.join(format!("{id}.conf"));
        if std::fs::symlink_metadata(&path).is_err() {
            let bytes = crate::rules::read_rule_bytes(start).map_err(|e| io(start, e))?;
            let name = format!("{id}.conf");
            Root::dir(dir)?.write_file(Path::new(&name), &bytes, Placing::new(Replace::Nothing))?;
        }
        let mut copy = WorkingCopy { path, seen: None };
        let bytes = copy.read()?;
        Ok((copy, bytes))
    }

    fn stamp(&self) -> Option<(SystemTime, u64)> {
        let m = std::fs::symlink_metadata(&self.path).ok()?;
        Some((m.modified().ok()?, m.len()))
    }

    /// Reads it (bounded, never through a link).
    pub fn read(&mut self) -> Result<Vec<u8>, WorkspaceError> {
        self.seen = self.stamp();
        read_no_follow(&self.path, MAX_WORKING_BYTES).map_err(|e| io(&self.path, e))
    }

    /// Its bytes when another editor saved it since it was last read or
    /// written.
    pub fn changed(&mut self) -> Option<Result<Vec<u8>, WorkspaceError>> {
        let now = self.stamp();
        (now.is_some() && now != self.seen).then(|| self.read())
    }

    /// Removes the copy when it still holds `start` (the start file's
    /// bytes): the trainee left it untouched, so nothing is handed in for
    /// it (`train grade` then says "not submitted", not a fail). A copy
    /// edited, unreadable or gone is left as it is.
    pub fn put_away_untouched(&self, start: &[u8]) -> Result<bool, WorkspaceError> {
        match read_no_follow(&self.path, MAX_WORKING_BYTES) {
            Ok(bytes) if bytes == start => {
                let (dir, name) = Root::of_file(&self.path)?;
                dir.remove(Path::new(&name))?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Writes `bytes` (an edit made on the screen) whole.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), WorkspaceError> {
        let (dir, name) = Root::of_file(&self.path)?;
        dir.write_file(Path::new(&name), bytes, Placing::REPLACE)?;
        self.seen = self.stamp();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_made_once_and_a_save_elsewhere_is_seen() {
        let d = tempfile::tempdir().expect("tempdir");
        let start = d.path().join("start.conf");
        std::fs::write(&start, "UPDATE=\"1\"\n").expect("write");
        let dir = d.path().join("state/train/course");
        let (mut copy, bytes) = WorkingCopy::open(&dir, "e", &start).expect("open");
        assert_eq!(bytes, b"UPDATE=\"1\"\n");
        assert!(copy.changed().is_none());
        copy.write(b"UPDATE=\"2\"\n").expect("write");
        assert!(copy.changed().is_none(), "its own write is no change");
        std::fs::write(&copy.path, "UPDATE=\"3\"\nCPU_MAX=\"2\"\n").expect("save elsewhere");
        let seen = copy.changed().expect("changed").expect("read");
        assert!(seen.starts_with(b"UPDATE=\"3\""));
        // Opened again, the trainee's copy is kept, not the start.
        let (_, again) = WorkingCopy::open(&dir, "e", &start).expect("open");
        assert!(again.starts_with(b"UPDATE=\"3\""));
        // A link planted at the name is never followed.
        std::fs::remove_file(&copy.path).expect("rm");
        std::os::unix::fs::symlink(&start, &copy.path).expect("ln");
        assert!(WorkingCopy::open(&dir, "e", &start).is_err());
    }

    #[test]
    fn an_untouched_copy_is_put_away_and_an_edited_one_kept() {
        let d = tempfile::tempdir().expect("tempdir");
        let start = d.path().join("start.conf");
        std::fs::write(&start, "UPDATE=\"1\"\n").expect("write");
        let dir = d.path().join("work");
        let (copy, bytes) = WorkingCopy::open(&dir, "e", &start).expect("open");
        assert!(copy.put_away_untouched(&bytes).expect("put away"));
        assert!(!copy.path.exists(), "an untouched copy is not handed in");
        let (mut copy, bytes) = WorkingCopy::open(&dir, "e", &start).expect("open");
        copy.write(b"UPDATE=\"2\"\n").expect("write");
        assert!(!copy.put_away_untouched(&bytes).expect("kept"));
        assert!(copy.path.exists(), "an edited copy is kept");
        // A link planted at the name is removed as a link (never
        // followed), and only when it reads as the start: it cannot.
        std::fs::remove_file(&copy.path).expect("rm");
        std::os::unix::fs::symlink(&start, &copy.path).expect("ln");
        assert!(!copy.put_away_untouched(&bytes).expect("a link"));
        assert!(start.exists());
    }

    #[test]
    fn an_answer_is_written_where_grade_reads_it() {
        let d = tempfile::tempdir().expect("tempdir");
        let dir = d.path().join("work");
        let path = write_answer(&dir, "diagnose", "HOTPLUG: loadavg > 1").expect("write");
        assert_eq!(path, dir.join("diagnose.answer"));
        let text = std::fs::read_to_string(&path).expect("read");
        let answer = crate::train::diagnose::parse_answer(&text).expect("grade reads it");
        assert_eq!(answer.comparison, "loadavg > 1");
        // Answered again, the new answer replaces the old one.
        write_answer(&dir, "diagnose", "HOTUNPLUG: idle > 50").expect("again");
        assert!(
            std::fs::read_to_string(&path)
                .expect("read")
                .starts_with("HOTUNPLUG")
        );
        // A link planted at the name is never written through.
        std::fs::remove_file(&path).expect("rm");
        let secret = d.path().join("secret");
        std::fs::write(&secret, "x").expect("write");
        std::os::unix::fs::symlink(&secret, &path).expect("ln");
        assert!(write_answer(&dir, "diagnose", "HOTPLUG: loadavg > 1").is_err());
        assert_eq!(std::fs::read_to_string(&secret).expect("read"), "x");
    }
}
