//! Where samples come from. Live roots, recordings, conformance snapshots
//! and the simulator all implement [`Source`], so everything after them can
//! be tested without a real z/VM guest.

use std::path::PathBuf;

use super::sample::Sample;
use crate::rules::SystemFacts;

/// Why a reading failed. The messages follow cpuplugd's where it has one.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path} open failed: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot parse {path}: {what}")]
    Malformed { path: PathBuf, what: String },
    #[error("{0}")]
    Other(String),
}

/// Gives one [`Sample`] per interval.
pub trait Source {
    /// What the machine looked like when the source started (for loading rules:
    /// `CPU_MAX="0"`, whether `cmm_pages` exists, which /proc names exist).
    fn facts(&mut self) -> SystemFacts;

    /// The next interval's readings; `None` when a finite source is exhausted.
    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>>;

    /// Something the user should know that did not stop the source (a
    /// recording damaged after some samples). Taken once.
    fn warning(&mut self) -> Option<String> {
        None
    }

    /// Where the source stands, for the header (a simulator's phase, or
    /// that its scenario has ended). Asked after every reading.
    fn status(&self) -> Option<String> {
        None
    }
}
