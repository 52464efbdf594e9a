//! Small kernel files that choosing a CPU reads (`cpuN/online`,
//! `cpuN/configure`), kept open and read again from their start. Observe
//! mode names the CPU a rule's change would take at every interval the
//! rule holds; opening each flag file cost a path walk, a `statx` and a
//! `close` each time. A sysfs attribute read again from offset 0 is asked
//! of the kernel afresh, so a kept file reads what a new open would. Only
//! files on sysfs or /proc are kept, and only so many: a plain file (a
//! test root, a simulated guest) may be replaced by a rename, and is
//! opened anew each time, as before; a file that fails to read is dropped,
//! and the caller reads it afresh.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::beneath::Beneath;
use super::regular::is_kernel_file;

/// The most files kept: two per CPU of a guest of this many CPUs; beyond
/// it files are opened each time (descriptors stay few on big guests).
pub const MOST_KEPT: usize = 128;

/// Kept files by their path below the root.
#[derive(Debug, Default)]
pub struct KeptFiles {
    files: Mutex<HashMap<PathBuf, File>>,
}

impl KeptFiles {
    /// What the kept file at `rel` holds now, at most `limit` bytes (`None`
    /// when none is kept; one that fails to read, or holds more, is
    /// dropped, and the caller reads the file afresh, with what that says).
    pub fn read(&self, rel: &Path, limit: u64) -> Option<Vec<u8>> {
        let mut files = self.files.lock().ok()?;
        let file = files.get(rel)?;
        match Beneath::read_whole(file, rel, limit) {
            Ok(bytes) => Some(bytes),
            Err(_) => {
                files.remove(rel);
                None
            }
        }
    }

    /// Keeps `file` (opened at `rel`) when it lies on sysfs or /proc and
    /// there is room.
    pub fn keep(&self, rel: &Path, file: File) {
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        if files.len() < MOST_KEPT && is_kernel_file(&file) {
            files.insert(rel.to_path_buf(), file);
        }
    }

    /// How many files are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.files.lock().map_or(0, |f| f.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel file is kept and read again whole from its start; a plain
    /// one is never kept.
    #[test]
    fn kernel_files_are_kept_and_plain_ones_not() {
        let root = Beneath::open(Path::new("/")).expect("root");
        let kept = KeptFiles::default();
        let rel = Path::new("proc/sys/kernel/ostype");
        assert!(kept.read(rel, 511).is_none());
        let file = root.open_small(rel).expect("ostype");
        let fresh = Beneath::read_whole(&file, rel, 511).expect("read");
        kept.keep(rel, file);
        assert_eq!(kept.len(), 1);
        for _ in 0..2 {
            assert_eq!(kept.read(rel, 511).expect("kept"), fresh);
        }
        // More than asked for: dropped, to be read afresh (and refused so).
        assert!(kept.read(rel, 2).is_none());
        assert_eq!(kept.len(), 0);
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("online"), "1\n").expect("write");
        let plain = Beneath::open(dir.path()).expect("plain root");
        let file = plain.open_small(Path::new("online")).expect("online");
        kept.keep(Path::new("online"), file);
        assert_eq!(kept.len(), 0);
    }
}
