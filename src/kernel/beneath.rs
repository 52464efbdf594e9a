//! Files opened beneath a root at the system-call level: every component is
//! resolved inside the root (`openat2` with `RESOLVE_BENEATH` where the
//! kernel has it, component by component otherwise, through cap-std), so a
//! symbolic link swapped in between a check and the open cannot lead a
//! write outside the root. plugtop runs as root and writes to the kernel:
//! every write it makes goes through here.

use std::io::Write;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// Why a file beneath the root could not be written.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    /// The path (or a link on it) leads outside the root.
    #[error("{path} leads outside the root {root}; refusing to write there")]
    Outside { path: String, root: String },
    /// A directory on the path is a symbolic link.
    #[error(
        "{path} is a symbolic link; plugtop does not write through links below the root {root}"
    )]
    Link { path: String, root: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A root directory, held open.
#[derive(Debug)]
pub struct Beneath {
    dir: Dir,
    root: PathBuf,
}

impl Beneath {
    /// Opens `root` for confined access.
    pub fn open(root: &Path) -> std::io::Result<Beneath> {
        Ok(Beneath {
            dir: Dir::open_ambient_dir(root, ambient_authority())?,
            root: root.to_path_buf(),
        })
    }

    /// The root as given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn error(&self, rel: &Path, source: std::io::Error) -> BeneathError {
        let path = Path::new("/").join(rel).display().to_string();
        // cap-std reports an escape as its own error, with no errno.
        if source.raw_os_error().is_none() && source.kind() == std::io::ErrorKind::PermissionDenied
        {
            BeneathError::Outside {
                path,
                root: self.root.display().to_string(),
            }
        } else {
            BeneathError::Io { path, source }
        }
    }

    /// Writes `text` into the existing file `rel` (a sysfs attribute,
    /// `cmm_pages`), truncating it.
    /// Opened without blocking and refused unless it is a regular file, so
    /// a FIFO planted there cannot hang plugtop.
    pub fn write_existing(&self, rel: &Path, text: &[u8]) -> Result<(), BeneathError> {
        use cap_std::fs::OpenOptionsExt;
        let mut options = OpenOptions::new();
        options
            .write(true)
            .truncate(true)
            .custom_flags(libc::O_NONBLOCK);
        self.dir
            .open_with(rel, &options)
            .map(|f| f.into_std())
            .and_then(|f| super::regular::must_be_regular(f, rel))
            .and_then(|mut f| f.write_all(text))
            .map_err(|e| self.error(rel, e))
    }

    /// Creates the directories of `rel` beneath the root; a link where a
    /// directory should be is refused by name.
    pub fn create_dirs(&self, rel: &Path) -> Result<(), BeneathError> {
        self.dir.create_dir_all(rel).map_err(|e| {
            let mut at = std::path::PathBuf::new();
            for part in rel.components() {
                at.push(part);
                if self
                    .dir
                    .symlink_metadata(&at)
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    return BeneathError::Link {
                        path: Path::new("/").join(&at).display().to_string(),
                        root: self.root.display().to_string(),
                    };
                }
            }
            self.error(rel, e)
        })
    }

    /// Creates `rel` as a new file (never an existing one, never through a
    /// link): for temporary files.
    pub fn create_new(&self, rel: &Path) -> Result<std::fs::File, BeneathError> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        self.dir
            .open_with(rel, &options)
            .map(|f| f.into_std())
            .map_err(|e| self.error(rel, e))
    }

    /// Opens `rel` for writing, creating it if needed (the lock file).
    pub fn open_or_create(&self, rel: &Path) -> Result<std::fs::File, BeneathError> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(false);
        self.dir
            .open_with(rel, &options)
            .map(|f| f.into_std())
            .map_err(|e| self.error(rel, e))
    }

    /// Renames `from` to `to`, both beneath the root (a link at `to` is
    /// replaced, never followed).
    pub fn rename(&self, from: &Path, to: &Path) -> Result<(), BeneathError> {
        self.dir
            .rename(from, &self.dir, to)
            .map_err(|e| self.error(to, e))
    }

    /// Removes `rel` (a link itself, not what it points to); absent is fine.
    pub fn remove(&self, rel: &Path) -> Result<(), BeneathError> {
        match self.dir.remove_file(rel) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(self.error(rel, e)),
            _ => Ok(()),
        }
    }

    /// `path` relative to the root, when it lies beneath it by name.
    pub fn relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.root).ok()
    }
}
