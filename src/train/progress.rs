//! A trainee's progress through a course, kept in the state directory
//! (`$XDG_STATE_HOME/plugtop/train/<course>.json`) so a session can be
//! left and taken up again. Written whole through
//! [`crate::kernel::fs::Root`] (a new file under an unpredictable
//! name, created exclusively and never through a link, then renamed over
//! a regular file only); read bounded and never through a link, so a
//! planted link or a huge file is refused, not followed or read to the
//! end.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::kernel::fs::{Placing, Resolve, Root};

/// The largest progress file read: a course of 200 exercises is well under.
pub const MAX_PROGRESS_BYTES: u64 = 1 << 20;

/// Why progress could not be read or kept.
#[derive(Debug, thiserror::Error)]
pub enum ProgressError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a progress file: {message}")]
    Format { path: String, message: String },
    #[error("cannot create the directory {path}")]
    Dir {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Place(#[from] crate::kernel::fs::FsError),
}

/// One exercise's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExerciseProgress {
    /// Submissions judged (passed or not).
    pub attempts: u32,
    pub solved: bool,
    /// Solved only after the exercise's time limit had passed.
    #[serde(default)]
    pub late: bool,
    /// Seconds spent in the exercise, over every session.
    pub seconds: f64,
}

impl ExerciseProgress {
    /// Failed submissions, which unlock hints.
    pub fn failed(&self) -> u32 {
        self.attempts.saturating_sub(u32::from(self.solved))
    }
}

/// A course's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CourseProgress {
    pub version: u32,
    /// By exercise id.
    pub exercises: BTreeMap<String, ExerciseProgress>,
}

/// Reads at most `limit` bytes of the regular file `path` (more is an
/// error), never through a link at its last component and never waiting
/// on a FIFO.
pub fn read_no_follow(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let (dir, name) = Root::of_file(path)?;
    Ok(dir.read(Path::new(&name), limit, Resolve::Own)?)
}

impl CourseProgress {
    /// The progress file of the course named `stem` under `state`.
    pub fn path(state: &Path, stem: &str) -> PathBuf {
        let safe: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(100)
            .collect();
        state.join("train").join(format!("{safe}.json"))
    }

    /// Reads the progress at `path`; none yet is empty progress.
    pub fn load(path: &Path) -> Result<CourseProgress, ProgressError> {
        let shown = path.display().to_string();
        let bytes = match read_no_follow(path, MAX_PROGRESS_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(CourseProgress::default());
            }
            Err(source) => {
                return Err(ProgressError::Read {
                    path: shown,
                    source,
                });
            }
        };
        serde_json::from_slice(&bytes).map_err(|e| ProgressError::Format {
            path: shown,
            message: e.to_string(),
        })
    }

    /// Writes the progress to `path` whole, creating its directory (for
    /// the user only) when missing.
    pub fn save(&self, path: &Path) -> Result<(), ProgressError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|source| ProgressError::Dir {
                    path: dir.display().to_string(),
                    source,
                })?;
        }
        let place = Root::dir(dir)?;
        let name: OsString = path
            .file_name()
            .map_or_else(|| OsString::from("progress.json"), |n| n.to_os_string());
        let mut bytes = serde_json::to_vec_pretty(&CourseProgress {
            version: 1,
            exercises: self.exercises.clone(),
        })
        .unwrap_or_default();
        bytes.push(b'\n');
        place.write_file(Path::new(&name), &bytes, Placing::REPLACE)?;
        Ok(())
    }

    /// The progress of exercise `id`, made when missing.
    pub fn of(&mut self, id: &str) -> &mut ExerciseProgress {
        self.exercises.entry(id.to_string()).or_default()
    }
}

use std::os::unix::fs::DirBuilderExt as _;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_round_trips_and_a_link_or_a_huge_file_is_refused() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = CourseProgress::path(d.path(), "cpuplugd-basics");
        assert_eq!(
            CourseProgress::load(&path).expect("none yet"),
            CourseProgress::default()
        );
        let mut p = CourseProgress::default();
        p.of("loadavg").attempts = 2;
        p.save(&path).expect("save");
        p.of("loadavg").solved = true;
        p.save(&path).expect("save again");
        let back = CourseProgress::load(&path).expect("load");
        assert!(back.exercises["loadavg"].solved);
        assert_eq!(back.exercises["loadavg"].failed(), 1);

        std::fs::remove_file(&path).expect("rm");
        let secret = d.path().join("secret");
        std::fs::write(&secret, "{}").expect("write");
        std::os::unix::fs::symlink(&secret, &path).expect("ln");
        assert!(
            crate::error_chain::text(&CourseProgress::load(&path).expect_err("link"))
                .contains("symbolic link")
        );
        assert!(
            p.save(&path).is_err(),
            "a link at the name is never replaced"
        );
        assert_eq!(std::fs::read_to_string(&secret).expect("read"), "{}");

        std::fs::remove_file(&path).expect("rm");
        std::fs::write(&path, vec![b' '; (MAX_PROGRESS_BYTES + 10) as usize]).expect("big");
        assert!(
            crate::error_chain::text(&CourseProgress::load(&path).expect_err("big"))
                .contains("larger")
        );
        std::fs::write(&path, "not json").expect("junk");
        assert!(
            crate::error_chain::text(&CourseProgress::load(&path).expect_err("junk"))
                .contains("not a progress")
        );
    }
}
