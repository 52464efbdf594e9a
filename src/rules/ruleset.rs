//! What a loaded rule file is: its settings, its rules as expression trees
//! and the facts about the machine it was loaded against. Plain data shared
//! by the loader, the linter, the evaluator and everything downstream.

use std::ops::Range;

use super::expr::{Node, NodeId, RuleKind};
use super::parser::{FieldNames, VarDef};
use super::source::Span;

/// The integer settings. `-1` means "not set", as in cpuplugd, because the
/// daemon's checks compare against it (`CPU_MIN` without `CPU_MAX` fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub update: i64,
    pub cpu_min: i64,
    pub cpu_max: i64,
    pub cmm_min: i64,
    pub cmm_max: i64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            update: -1,
            cpu_min: -1,
            cpu_max: -1,
            cmm_min: -1,
            cmm_max: -1,
        }
    }
}

/// What loading needs to know about the machine the rules are for.
#[derive(Debug, Clone)]
pub struct SystemFacts {
    /// How many CPUs `/sys/devices/system/cpu/present` lists (for `CPU_MAX="0"`),
    /// or why that is not known.
    pub present_cpus: Result<u32, PresentCpusError>,
    /// Whether `/proc/sys/vm/cmm_pages` can be read; without it the memory group is off.
    pub cmm_pages: bool,
    /// Field names of `/proc/meminfo`, when known, to find misspelt names before running.
    pub meminfo_names: Option<Vec<String>>,
    /// Field names of `/proc/vmstat`, likewise.
    pub vmstat_names: Option<Vec<String>>,
    /// Where these facts came from, for messages ("the kernel under /").
    pub origin: String,
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
    /// The recording of this name has no sample to take the count from.
    #[error("{0} holds no samples")]
    EmptyRecording(String),
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
            meminfo_names: None,
            vmstat_names: None,
            origin: origin.into(),
        }
    }
}

/// A rule as loaded: its tree, and where it was written.
#[derive(Debug, Clone)]
pub struct Rule {
    pub kind: RuleKind,
    pub root: NodeId,
    /// The arena range of every node built for this rule (variables included).
    pub nodes: Range<u32>,
    pub name_span: Span,
    pub value_span: Span,
    pub line: usize,
}

/// A loaded rule file.
#[derive(Debug, Clone)]
pub struct RuleSet {
    pub settings: Settings,
    /// Indexed by [`RuleKind::index`].
    pub rules: [Option<Rule>; 6],
    pub nodes: Vec<Node>,
    pub variables: Vec<VarDef>,
    /// Largest history index any parsed rule used, at least 1.
    pub history_depth: u32,
    pub fields: FieldNames,
    pub cpu_enabled: bool,
    pub mem_enabled: bool,
    /// Where each setting was written, in the order update, cpu_min, cpu_max, cmm_min, cmm_max.
    pub setting_spans: [Option<Span>; 5],
}

impl RuleSet {
    /// Seconds between readings: UPDATE (at least 1, as cpuplugd never
    /// sleeps less). Every front end paces from this one place.
    pub fn update_seconds(&self) -> f64 {
        self.settings.update.max(1) as f64
    }

    /// [`RuleSet::update_seconds`] as a duration, or `fixed` seconds when
    /// the user set a pace of their own. Saturates: an UPDATE of
    /// 18446744073709551615 is the longest wait there is, not a panic.
    pub fn pace(&self, fixed: Option<f64>) -> std::time::Duration {
        crate::pace::seconds(fixed.unwrap_or(self.update_seconds()))
    }

    /// The rule of this kind, if the file set one.
    pub fn rule(&self, kind: RuleKind) -> Option<&Rule> {
        self.rules[kind.index()].as_ref()
    }

    /// A node of the arena.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }
}

/// Which CPU settings are missing, in words.
pub fn describe_missing_cpu(rules: &RuleSet) -> String {
    let s = rules.settings;
    let mut missing = Vec::new();
    if s.cpu_min < 0 {
        missing.push("CPU_MIN");
    }
    if s.cpu_max < 0 {
        missing.push("CPU_MAX");
    }
    for k in [RuleKind::Hotplug, RuleKind::Hotunplug] {
        if rules.rule(k).is_none() {
            missing.push(k.file_name());
        }
    }
    if missing.is_empty() {
        "nothing more".to_string()
    } else {
        missing.join(", ")
    }
}

/// Which memory settings are missing, in words.
pub fn describe_missing_memory(rules: &RuleSet, facts: &SystemFacts) -> String {
    let s = rules.settings;
    let mut missing: Vec<String> = Vec::new();
    if s.cmm_min < 0 {
        missing.push("CMM_MIN".into());
    }
    if s.cmm_max < 0 {
        missing.push("CMM_MAX".into());
    }
    for k in [RuleKind::Memplug, RuleKind::Memunplug, RuleKind::CmmInc] {
        if rules.rule(k).is_none() {
            missing.push(k.file_name().into());
        }
    }
    if s.cmm_max >= 0 && s.cmm_min >= 0 && s.cmm_max < s.cmm_min {
        missing.push("CMM_MAX >= CMM_MIN".into());
    }
    if !facts.cmm_pages {
        missing.push(format!(
            "/proc/sys/vm/cmm_pages (not found in {})",
            facts.origin
        ));
    }
    if missing.is_empty() {
        "nothing more".to_string()
    } else {
        missing.join(", ")
    }
}
