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
//!
//! A guest whose pool has settled is not written for long stretches, and
//! opening for writing costs a little more than opening for reading (the
//! type check, the write access): the reading opens so only after an
//! interval that wrote the pool.

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
#[derive(Debug, Clone)]
pub struct PoolHandoff(Arc<Mutex<Handed>>);

/// What the handoff holds.
#[derive(Debug)]
struct Handed {
    /// This interval's opening, until its write takes it.
    open: Option<OpenPool>,
    /// Whether this interval wrote the pool (with an opening or without).
    writing: bool,
    /// Whether the last interval did: this one's reading opens for writing.
    wrote: bool,
}

impl Default for PoolHandoff {
    fn default() -> Self {
        PoolHandoff(Arc::new(Mutex::new(Handed {
            open: None,
            writing: false,
            // The start limits write at the first interval.
            wrote: true,
        })))
    }
}

impl PoolHandoff {
    /// A handoff holding nothing yet.
    pub fn new() -> Self {
        PoolHandoff::default()
    }

    fn slot(&self) -> MutexGuard<'_, Handed> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether this interval's reading is to open the pool's file for
    /// writing: the last interval wrote it.
    pub fn wanted(&self) -> bool {
        self.slot().wrote
    }

    /// Hands over the file this interval's reading opened and read.
    pub fn hand(&self, pool: OpenPool) {
        self.slot().open = Some(pool);
    }

    /// The file handed over in this interval, for its one write (`None`:
    /// the write opens the file itself). Notes that the interval writes.
    pub fn take(&self) -> Option<OpenPool> {
        let mut slot = self.slot();
        slot.writing = true;
        slot.open.take()
    }

    /// Ends the interval: an opening not written through is closed.
    pub fn release(&self) {
        let mut slot = self.slot();
        slot.open = None;
        slot.wrote = std::mem::take(&mut slot.writing);
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
        assert!(handoff.wanted(), "the first interval may write");
        assert!(writer.take().is_none(), "nothing handed yet");
        handoff.hand(open());
        assert_eq!(writer.take().map(|p| p.len), Some(2));
        assert!(writer.take().is_none(), "one write per opening");
        handoff.hand(open());
        handoff.release();
        assert!(writer.take().is_none(), "released at the interval's end");
    }

    #[test]
    fn an_opening_for_writing_is_wanted_only_after_an_interval_that_wrote() {
        let handoff = PoolHandoff::new();
        let mut wanted = Vec::new();
        // Intervals that write (w) or not (-), each ended by a release.
        for writes in [true, false, false, true, true, false] {
            wanted.push(handoff.wanted());
            if writes {
                let _ = handoff.take();
            }
            handoff.release();
        }
        wanted.push(handoff.wanted());
        assert_eq!(wanted, [true, true, false, false, true, true, false]);
    }
}
