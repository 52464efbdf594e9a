//! The live machine (or any root laid out like it), read now.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use super::SystemFacts;
use super::root::RootReader;
use super::sample::{Sample, Stamp};
use super::source::{Interest, Source, SourceError};

/// Reads `root` each time a sample is asked for, stamped by a clock (the
/// wall clock, as cpuplugd's `gettimeofday`, unless a test gives its own).
pub struct LiveSource {
    root: PathBuf,
    reader: RootReader,
    clock: Box<dyn FnMut() -> Stamp + Send>,
}

impl std::fmt::Debug for LiveSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSource")
            .field("root", &self.root)
            .finish()
    }
}

impl LiveSource {
    /// A source for the machine under `root` (`/` for this one).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LiveSource::with_clock(root, Box::new(wall_clock))
    }

    /// Skips the per-CPU sysfs directories (the headless runner does not
    /// need them to decide, and reading them costs a directory scan and two
    /// opens per CPU every interval).
    pub fn without_cpu_dirs(mut self) -> Self {
        self.reader.scan_cpu_dirs = false;
        self
    }

    /// A source whose samples are stamped by `clock` (tests drive time here).
    pub fn with_clock(root: impl Into<PathBuf>, clock: Box<dyn FnMut() -> Stamp + Send>) -> Self {
        let mut reader = RootReader::new();
        // The machine plugtop watches or acts on is the tree opened at the
        // start: renaming the root's path or pointing a link there later
        // cannot make it read one tree and act on another.
        reader.pinned = true;
        LiveSource {
            root: root.into(),
            reader,
            clock,
        }
    }
}

/// Now, to the microsecond, as `gettimeofday` gives it.
pub fn wall_clock() -> Stamp {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Stamp::new(
        i64::try_from(now.as_secs()).unwrap_or(i64::MAX),
        now.subsec_micros(),
    )
}

impl Source for LiveSource {
    fn facts(&mut self) -> SystemFacts {
        self.reader.facts(&self.root)
    }

    fn narrow(&mut self, interest: &Interest) {
        self.reader.narrow(interest);
    }

    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
        let stamp = (self.clock)();
        Some(self.reader.read(&self.root, stamp))
    }
}
