//! What a loaded rule file is: its settings and its rules as expression
//! trees, checked against the facts about the machine it was loaded for
//! ([`SystemFacts`], which the kernel side gathers). Plain data shared by
//! the loader, the linter, the evaluator and everything downstream.

use std::ops::Range;

use super::expr::{Node, NodeId, RuleKind};
use super::parser::{FieldNames, VarDef};
use super::source::Span;
use crate::kernel::SystemFacts;

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
    /// Whether the memory group runs: [`memory_verdict`] found no reason
    /// it should not (`mem_off` says which reason).
    pub mem_enabled: bool,
    /// Why the memory group is off, decided once at load for every front
    /// end; `None` when it runs.
    pub mem_off: Option<MemoryOff>,
    /// Where each setting was written, by [`super::Setting::index`].
    pub setting_spans: [Option<Span>; super::Setting::ALL.len()],
    /// The present CPUs of the machine the file was loaded for, read then
    /// (cpuplugd reads them afresh when it applies the start limits; a
    /// reading may carry an older list).
    pub present_at_load: Option<u32>,
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

    /// "memory group off: WHY" when the file means to manage memory
    /// (CMM_MAX is set) and the group is off ([`memory_verdict`]): the
    /// line `plugtop run` logs, `eval` and the screen show.
    pub fn memory_off_line(&self) -> Option<String> {
        let off = self.mem_off.as_ref()?;
        (self.settings.cmm_max >= 0).then(|| format!("memory group off: {}", off.reason()))
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

/// Why the memory group is off, as cpuplugd decides it at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryOff {
    /// The rule file lacks a setting or rule the group needs, or holds
    /// CMM_MAX below CMM_MIN: what is missing, in words.
    Settings(String),
    /// /proc/cpuinfo has no `version = FF`: not a z/VM guest (an LPAR, a
    /// KVM guest, another architecture).
    NotZvm,
    /// `/proc/sys/vm/cmm_pages` cannot be read below the named origin.
    NoCmmPages(String),
}

impl MemoryOff {
    /// Why, in the words every front end gives: `plugtop run`'s log,
    /// `eval`, `check`, the screen's log.
    pub fn reason(&self) -> String {
        match self {
            MemoryOff::Settings(missing) => format!("needs {missing}"),
            MemoryOff::NotZvm => "not a z/VM guest (no `version = FF` in /proc/cpuinfo); cpuplugd manages memory only inside z/VM, not in an LPAR or elsewhere".to_string(),
            MemoryOff::NoCmmPages(origin) => {
                format!("needs /proc/sys/vm/cmm_pages (not found in {origin})")
            }
        }
    }

    /// The screen header's badge, in its forms longest first.
    pub fn badges(&self) -> Vec<String> {
        let off = "MEM OFF".to_string();
        match self {
            MemoryOff::Settings(_) => vec![off],
            MemoryOff::NotZvm => vec!["MEM OFF: not z/VM".to_string(), off],
            MemoryOff::NoCmmPages(_) => vec!["MEM OFF: no cmm_pages".to_string(), off],
        }
    }
}

/// Whether the memory group runs for `rules` on the machine `facts`
/// describe, and why not: the one verdict `plugtop run`, the screen,
/// `eval`, `check` and the language server share (each loads its rules
/// against the facts of the root it reads). In cpuplugd's order: the
/// settings first, then the machine (z/VM only), then `cmm_pages`.
pub fn memory_verdict(rules: &RuleSet, facts: &SystemFacts) -> Option<MemoryOff> {
    let s = rules.settings;
    let has = |k: RuleKind| rules.rule(k).is_some();
    let complete = s.cmm_max >= 0
        && s.cmm_min >= 0
        && has(RuleKind::Memplug)
        && has(RuleKind::Memunplug)
        && has(RuleKind::CmmInc)
        && s.cmm_max >= s.cmm_min;
    if !complete {
        return Some(MemoryOff::Settings(describe_missing_memory(rules, facts)));
    }
    memory_off_on_machine(facts)
}

/// Whether the machine `facts` describe turns the memory group off, whatever
/// the rule file says: not a z/VM guest, or no `cmm_pages`.
pub fn memory_off_on_machine(facts: &SystemFacts) -> Option<MemoryOff> {
    if facts.zvm_guest == Some(false) {
        return Some(MemoryOff::NotZvm);
    }
    if !facts.cmm_pages {
        return Some(MemoryOff::NoCmmPages(facts.origin.clone()));
    }
    None
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
        missing.push(match &facts.history {
            Some(h) => format!("/proc/sys/vm/cmm_pages ({})", h.lacks("cmm_pages")),
            None => format!("/proc/sys/vm/cmm_pages (not found in {})", facts.origin),
        });
    }
    if missing.is_empty() {
        "nothing more".to_string()
    } else {
        missing.join(", ")
    }
}
