//! What loading a rule file needs to know about the machine: gathered by
//! each kind of source (a live root, a recording, snapshots) from its
//! files, and checked by `rules` against what a rule file asks for. It
//! lives on the kernel side, which reads it, so the rule language never
//! has to use the readers that use it.

/// What loading needs to know about the machine the rules are for.
#[derive(Debug, Clone)]
pub struct SystemFacts {
    /// How many CPUs `/sys/devices/system/cpu/present` lists (for `CPU_MAX="0"`),
    /// or why that is not known.
    pub present_cpus: Result<u32, PresentCpusError>,
    /// Whether `/proc/sys/vm/cmm_pages` can be read; without it the memory group is off.
    pub cmm_pages: bool,
    /// Whether `/proc/cpuinfo` says a z/VM guest (`version = FF`): cpuplugd
    /// manages memory only there, so `Some(false)` (an LPAR, a KVM guest,
    /// another architecture) turns the memory group off. `None` where it is
    /// not known: no `/proc/cpuinfo` to read (`plugtop run` refuses to
    /// start there, as cpuplugd), or a source that keeps none (a
    /// recording, snapshots, a simulated guest).
    pub zvm_guest: Option<bool>,
    /// Field names of `/proc/meminfo`, when known, to find misspelt names before running.
    pub meminfo_names: Option<Vec<String>>,
    /// Field names of `/proc/vmstat`, likewise.
    pub vmstat_names: Option<Vec<String>>,
    /// Where these facts came from, for messages ("the kernel under /").
    pub origin: String,
    /// When the readings are an imported history (`plugtop import`), not
    /// what plugtop read: what it lacks and how coarse it is.
    pub history: Option<ImportedHistory>,
}

/// An imported history, as loading and the front ends need to know it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedHistory {
    /// The tool it came from (`sysstat`, `node_exporter`).
    pub source: String,
    /// Seconds between its readings.
    pub resolution: f64,
    /// Readings it does not have, as rules spell them (`cpustat.guest`).
    pub absent: Vec<String>,
}

impl ImportedHistory {
    /// What a rule naming `name` (as rules spell it) is told.
    pub fn lacks(&self, name: &str) -> String {
        format!("not in this history ({} has no `{name}`)", self.source)
    }

    /// Why decisions on this history are approximate under rules that
    /// read every `update` seconds, or `None` when they are not.
    pub fn approximate(&self, update: f64) -> Option<String> {
        (self.resolution > update).then(|| {
            format!(
                "decisions are approximate: the {} history has one reading every {} s and the rules read every {update} s, so a {} s average hides what {update} s rules see",
                self.source, self.resolution, self.resolution
            )
        })
    }
}

/// Why the number of present CPUs is not known. Where cpuplugd stops for
/// the same reason the text is its message, for a refusal to quote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresentCpusError {
    /// The file cannot be read; `path` is below the root, `reason` what the
    /// read said.
    #[error("Cannot open /{path} file: {reason}")]
    Unreadable { path: &'static str, reason: String },
    /// The file holds no CPU list.
    #[error("Malformed content of /{0}")]
    Malformed(&'static str),
    /// The list counts no CPU, or fewer than none (a reversed range).
    #[error("number of present cpus ({0}) <= 0")]
    NoneListed(i32),
    /// The recording of this name has no sample to take the count from,
    /// and the damage that ended it before its first, if that is why.
    #[error("{path} holds no samples{}", damage.as_ref().map_or(String::new(), |d| format!(": it {d}")))]
    EmptyRecording {
        path: String,
        damage: Option<String>,
    },
    /// The snapshot directory holds no snapshot.
    #[error("no snapshots")]
    NoSnapshots,
}

impl SystemFacts {
    /// A machine with `present_cpus` CPUs and CMM, whose /proc names are
    /// not known (so none is checked): for rule files loaded away from a
    /// machine — tests and scripted sources.
    pub fn any_machine(present_cpus: u32, origin: &str) -> SystemFacts {
        SystemFacts {
            present_cpus: Ok(present_cpus),
            cmm_pages: true,
            zvm_guest: None,
            meminfo_names: None,
            vmstat_names: None,
            origin: origin.into(),
            history: None,
        }
    }
}
