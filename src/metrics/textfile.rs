//! `plugtop run --metrics-textfile FILE`: the exposition written for
//! node_exporter's textfile collector each interval, atomically (a new
//! file beside it under an unpredictable name, then a rename), so the
//! collector never reads half. plugtop runs as root: FILE is replaced only
//! when it is a regular file or absent — a link, a FIFO, a device
//! (`/dev/null`) or a directory there is refused, at start-up and at every
//! interval, never written through or replaced.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::placed_file::{PlaceDir, PlaceError, Replace};

/// The textfile: its directory held open from start-up on, and its name.
#[derive(Debug)]
pub struct Textfile {
    dir: PlaceDir,
    name: OsString,
    path: PathBuf,
}

impl Textfile {
    /// Opens FILE's directory and checks that FILE is absent or a regular
    /// file, so a bad path refuses the start instead of failing every
    /// interval. Nothing is written.
    pub fn open(path: &Path) -> Result<Textfile, PlaceError> {
        let (dir, name) = PlaceDir::of_file(path)?;
        dir.check(&name, Replace::RegularFile)?;
        Ok(Textfile {
            dir,
            name,
            path: path.to_path_buf(),
        })
    }

    /// The path as given, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the textfile with `text`, whole or not at all.
    pub fn write(&self, text: &str) -> Result<(), PlaceError> {
        self.dir
            .write(&self.name, text.as_bytes(), Replace::RegularFile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_whole_and_no_temp_file_stays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        let textfile = Textfile::open(&path).expect("open");
        assert!(textfile.write("a 1\n").is_ok());
        assert!(textfile.write("a 2\n").is_ok());
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("a 2\n")
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(Textfile::open(&dir.path().join("missing/x.prom")).is_err());
    }

    #[test]
    fn a_textfile_that_became_a_link_after_the_start_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        let textfile = Textfile::open(&path).expect("open");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep\n").expect("victim");
        std::os::unix::fs::symlink(&victim, &path).expect("link");
        assert!(matches!(
            textfile.write("a 1\n"),
            Err(PlaceError::NotRegular { .. })
        ));
        assert_eq!(std::fs::read(&victim).expect("read"), b"keep\n");
        assert!(Textfile::open(&path).is_err());
    }
}
