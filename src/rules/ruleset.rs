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
    pub mem_enabled: bool,
    /// Where each setting was written, in the order update, cpu_min, cpu_max, cmm_min, cmm_max.
    pub setting_spans: [Option<Span>; 5],
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
