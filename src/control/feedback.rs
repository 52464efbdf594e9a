//! Self-feeding loops: a plug that makes enough idle time to fire the unplug
//! rule (and the reverse), or a pool change that fires the opposite memory
//! rule. For a decision that acts, the check builds the intervals right
//! after the action — the same work spread over the new CPU count, the
//! same memory activity with the new pool — feeds them to a copy of the
//! engine, and says whether the opposite rule would fire, and why.

use crate::engine::{Change, CpuAction, Decision, Engine};
use crate::report::trace::explain;
use crate::rules::eval::Trace;
use crate::rules::{RuleKind, SourceFile};

/// A loop the rules would run into.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopWarning {
    /// What was decided ("plug a CPU", ...).
    pub action: &'static str,
    /// The rule that would undo it.
    pub undone_by: RuleKind,
    /// Intervals after the action until it would fire (1 = the next one).
    pub after: usize,
    /// That rule's explanation in the hypothetical interval.
    pub why: String,
}

impl std::fmt::Display for LoopWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "feedback loop: after \"{}\", {} would fire {} later ({}); the pair would alternate",
            self.action,
            self.undone_by.file_name(),
            if self.after == 1 {
                "one interval".to_string()
            } else {
                format!("{} intervals", self.after)
            },
            self.why
        )
    }
}

/// What the check copies, kept from one acting interval to the next so
/// that a check, once warm, allocates nothing: the engine copy.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    engine: Option<Engine>,
}

/// Whether a decision of `copy` does what `rule` asks for.
fn fired(d: &Decision, rule: RuleKind) -> bool {
    match rule {
        RuleKind::Hotunplug => d.cpu.is_some_and(|c| c.action == CpuAction::Unplug),
        RuleKind::Hotplug => d.cpu.is_some_and(|c| c.action == CpuAction::Plug),
        RuleKind::Memplug => d.mem.is_some_and(|m| m.cmm_pages_new < m.cmm_pages),
        _ => d.mem.is_some_and(|m| m.cmm_pages_new > m.cmm_pages),
    }
}

/// Feeds `copy` the steady intervals after `change` until `rule` acts, at
/// most as many as the rules look back plus one, each decided only as far
/// as `rule` needs ([`Engine::push_steady`]). Returns how many it took.
fn until_fired(copy: &mut Engine, change: Change, rule: RuleKind) -> Option<usize> {
    let mut change = change;
    for after in 1..=copy.rules().history_depth as usize + 1 {
        match copy.push_steady(change, rule) {
            Some(d) if fired(&d, rule) => return Some(after),
            Some(_) => change = Change::Cpus(0),
            None => break,
        }
    }
    None
}

/// What the check models for a decision that acts: the change, the change
/// back, the action's words, the rule that would undo it and the one that
/// would act again (`None` for a decision that does not act).
fn kind_of(decision: &Decision) -> Option<(Change, Change, &'static str, RuleKind, RuleKind)> {
    match (decision.cpu, decision.mem) {
        (Some(c), _) if c.action == CpuAction::Plug => Some((
            Change::Cpus(1),
            Change::Cpus(-1),
            "plug a CPU",
            RuleKind::Hotunplug,
            RuleKind::Hotplug,
        )),
        (Some(c), _) if c.action == CpuAction::Unplug => Some((
            Change::Cpus(-1),
            Change::Cpus(1),
            "unplug a CPU",
            RuleKind::Hotplug,
            RuleKind::Hotunplug,
        )),
        (_, Some(m)) if m.cmm_pages_new > m.cmm_pages => Some((
            Change::Pool(m.cmm_pages_new),
            Change::Pool(m.cmm_pages),
            "grow the CMM pool",
            RuleKind::Memplug,
            RuleKind::Memunplug,
        )),
        (_, Some(m)) if m.cmm_pages_new < m.cmm_pages => Some((
            Change::Pool(m.cmm_pages_new),
            Change::Pool(m.cmm_pages),
            "shrink the CMM pool",
            RuleKind::Memunplug,
            RuleKind::Memplug,
        )),
        _ => None,
    }
}

/// The words [`check`] uses for the action `decision` takes, if it acts: a
/// watch that has found a loop for that action already need not check again.
pub fn action_of(decision: &Decision) -> Option<&'static str> {
    kind_of(decision).map(|(_, _, action, _, _)| action)
}

/// Whether the action `decision` takes would be undone by the opposite rule
/// within as many intervals as the rules look back (plus one), and then
/// the undoing would be undone again — a pair that alternates. A single
/// correction (the load really changed) is not a loop. `engine` has just
/// decided `decision` on its newest reading; it is not changed. The
/// intervals after it are built from the engine's own history, the values
/// its rules read (no reading is copied), and each is decided only as far
/// as the rule asked about needs.
pub fn check(
    engine: &Engine,
    source: &SourceFile,
    decision: &Decision,
    scratch: &mut Scratch,
) -> Option<LoopWarning> {
    let (change, back, action, undone_by, again_by) = kind_of(decision)?;
    let copy = match &mut scratch.engine {
        Some(copy) => {
            copy.clone_from(engine);
            copy
        }
        kept @ None => kept.insert(engine.clone()),
    };
    let after = until_fired(copy, change, undone_by)?;
    let mut trace = Trace::new();
    let _ = copy.clone().decide(&mut trace);
    let why = explain(copy.rules(), source, &trace, undone_by)
        .unwrap_or_else(|| undone_by.file_name().to_string());
    // And back: undoing it must bring the first rule back.
    until_fired(copy, back, again_by)?;
    Some(LoopWarning {
        action,
        undone_by,
        after,
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words the watch looks up before a check are the check's own.
    #[test]
    fn each_acting_decision_names_its_action() {
        use crate::engine::{CpuDecision, GroupStatus, MemDecision};
        let cpu = |action| CpuDecision {
            status: GroupStatus::Ok,
            hotplug: None,
            hotunplug: None,
            action,
            limited: false,
            onumcpus: 2.0,
        };
        let mem = |from, to| MemDecision {
            status: GroupStatus::Ok,
            memplug: None,
            memunplug: None,
            cmm_inc: None,
            cmm_dec: None,
            cmm_pages: from,
            cmm_pages_new: to,
        };
        let decision = |c: Option<CpuDecision>, m: Option<MemDecision>| Decision {
            reading: 3,
            cpu: c,
            mem: m,
            fatal: None,
        };
        let cases = [
            (
                decision(Some(cpu(CpuAction::Plug)), Some(mem(5, 9))),
                Some("plug a CPU"),
            ),
            (
                decision(Some(cpu(CpuAction::Unplug)), None),
                Some("unplug a CPU"),
            ),
            (
                decision(Some(cpu(CpuAction::None)), Some(mem(5, 9))),
                Some("grow the CMM pool"),
            ),
            (decision(None, Some(mem(9, 5))), Some("shrink the CMM pool")),
            (decision(Some(cpu(CpuAction::None)), Some(mem(5, 5))), None),
        ];
        for (d, words) in cases {
            assert_eq!(action_of(&d), words);
            assert_eq!(kind_of(&d).map(|k| k.2), words);
        }
    }
}
