//! Where samples come from. Live roots, recordings, conformance snapshots
//! and the simulator all implement [`Source`], so everything after them can
//! be tested without a real z/VM guest.

use std::path::PathBuf;

use super::SystemFacts;
use super::sample::Sample;

/// Why a reading failed. The messages follow cpuplugd's where it has one.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path} open failed")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot parse {path}: {what}")]
    Malformed { path: PathBuf, what: String },
}

/// What a source's consumer looks at. Reading less of the /proc files is
/// most of what an interval costs, and deciding needs only the aggregate
/// `cpu` line and the fields the rules name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interest {
    /// Whether the `cpuN` lines of /proc/stat are wanted.
    pub per_cpu: bool,
    /// The /proc/meminfo names asked for (`None`: any).
    pub meminfo: Option<Vec<String>>,
    /// The /proc/vmstat names asked for (`None`: any).
    pub vmstat: Option<Vec<String>>,
    /// Whether /proc/loadavg is wanted: only rules that name `loadavg` or
    /// `runnable_proc` look at it, and an unread file is a file less to
    /// open every interval.
    pub loadavg: bool,
    /// Whether /proc/loadavg is read even when `loadavg` is false, its
    /// text checked and kept unconverted in the reading
    /// ([`Sample::loadavg_text`](super::sample::Sample::loadavg_text)):
    /// rules loaded later may read an earlier interval's load.
    pub loadavg_text: bool,
    /// Whether the present CPU list must be fresh in every reading (a
    /// metrics endpoint reports it). Otherwise a reader may re-read it only
    /// when something it bounds could have moved (see
    /// [`RootReader`](super::root::RootReader)): present CPUs change only when
    /// the hypervisor adds one, and deciding uses them only for the start
    /// limits.
    pub present_each_interval: bool,
}

/// Gives one [`Sample`] per interval.
pub trait Source {
    /// What the machine looked like when the source started (for loading rules:
    /// `CPU_MAX="0"`, whether `cmm_pages` exists, which /proc names exist).
    fn facts(&mut self) -> SystemFacts;

    /// The next interval's readings; `None` when a finite source is exhausted.
    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>>;

    /// Says what the samples will be asked for; a source may then leave
    /// the rest unread (the `cpuN` lines empty, other /proc fields checked
    /// only when asked for). Sources that hold everything anyway ignore it.
    fn narrow(&mut self, _interest: &Interest) {}

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

    /// What the guest's own controller did in the interval of the reading
    /// just given (an imported history's cpuplugd log), in words. Taken
    /// once per reading.
    fn events(&mut self) -> Vec<String> {
        Vec::new()
    }
}
