//! `cmm_pages` as one interval's reading opened it, handed to the write
//! that follows in the same interval. `plugtop run` reads the pool's size
//! and, most intervals that the memory rules act, writes it right after:
//! where `cmm_pages` is a plain file (a test or simulated guest, whose
//! files are replaced, never kept open) both would open it, and an open
//! costs more than the read and the write together. The reading opens it
//! for reading and writing instead, and the write uses that opening.
//!
//! The opening is good for one interval only: the runner releases it once
//! the interval's step is done, so a write between intervals (a reload's
//! limits, the restore at the end) opens the file afresh, and a file
//! replaced between two readings is never written through an old opening.

use std::fs::File;
use std::sync::{Arc, Mutex, MutexGuard};

/// `cmm_pages` opened for reading and writing by this interval's reading.
#[derive(Debug)]
pub struct OpenPool {
    /// Opened by the reading, resolved below the root as a write is
    /// (a `..` above the root refused), checked to be a regular file.
    pub file: File,
    /// Its length when it was read.
    pub len: u64,
}

/// Shared by the reader and the actuator of one run.
#[derive(Debug, Clone, Default)]
pub struct PoolHandoff(Arc<Mutex<Option<OpenPool>>>);

impl PoolHandoff {
    /// A handoff holding nothing yet.
    pub fn new() -> Self {
        PoolHandoff::default()
    }

    fn slot(&self) -> MutexGuard<'_, Option<OpenPool>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands over the file this interval's reading opened and read.
    pub fn hand(&self, pool: OpenPool) {
        *self.slot() = Some(pool);
    }

    /// The file handed over in this interval, for its one write (`None`:
    /// the write opens the file itself).
    pub fn take(&self) -> Option<OpenPool> {
        self.slot().take()
    }

    /// Ends the interval: an opening not written through is closed.
    pub fn release(&self) {
        drop(self.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_is_taken_once_and_released_at_the_end_of_the_interval() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("cmm_pages");
        std::fs::write(&path, "7\n").expect("file");
        let open = || OpenPool {
            file: File::open(&path).expect("open"),
            len: 2,
        };
        let handoff = PoolHandoff::new();
        let writer = handoff.clone();
        assert!(writer.take().is_none(), "nothing handed yet");
        handoff.hand(open());
        assert_eq!(writer.take().map(|p| p.len), Some(2));
        assert!(writer.take().is_none(), "one write per opening");
        handoff.hand(open());
        handoff.release();
        assert!(writer.take().is_none(), "released at the interval's end");
    }
}
