//! Self-feeding loops: a plug that makes enough idle time to fire the unplug
//! rule (and the reverse), or a pool change that fires the opposite memory
//! rule. For a decision that acts, the check builds the intervals right
//! after the action — the same work spread over the new CPU count, the
//! same memory activity with the new pool — feeds them to a copy of the
//! engine, and says whether the opposite rule would fire, and why.

use std::borrow::Cow;
use std::sync::Arc;

use crate::engine::{CpuAction, Decision, Engine};
use crate::kernel::deltas::tick_delta;
use crate::kernel::fields::FieldTable;
use crate::kernel::{CpuTicks, Sample, Stamp};
use crate::report::trace::explain;
use crate::rules::eval::{NoTrace, Trace};
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

/// The change a decision makes, as the check models it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Change {
    Cpus(i64),
    Pool(i64),
}

/// The interval after `latest` if the guest keeps doing what it did between
/// `previous` and `latest`, after `change`.
fn next_interval(previous: &Sample, latest: &Sample, change: Change) -> Sample {
    let mut next = latest.clone();
    let dt = latest.stamp.micros - previous.stamp.micros;
    next.stamp = Stamp {
        micros: latest.stamp.micros + dt.max(1),
    };
    let now = latest.ticks.columns();
    let mut delta = tick_delta(&latest.ticks, &previous.ticks)
        .unwrap_or_default()
        .columns()
        .map(|t| t as f64);
    if let Change::Cpus(by) = change {
        let n = f64::from(latest.online.count.max(1));
        let n_new = (n + by as f64).max(1.0);
        // The idle columns (idle, iowait) absorb the capacity change; the
        // work stays the same unless it no longer fits.
        let total: f64 = delta.iter().sum::<f64>() - delta[8] - delta[9];
        let capacity = total * n_new / n;
        let idle_share = if delta[3] + delta[4] > 0.0 {
            delta[4] / (delta[3] + delta[4])
        } else {
            0.0
        };
        let mut busy: f64 = total - delta[3] - delta[4];
        if busy > capacity {
            let scale = capacity / busy;
            for (i, d) in delta.iter_mut().enumerate() {
                if i != 3 && i != 4 {
                    *d *= scale;
                }
            }
            busy = capacity;
        }
        let free = (capacity - busy).max(0.0);
        delta[3] = free * (1.0 - idle_share);
        delta[4] = free * idle_share;
        // The hypothetical list stays as long as a real one can be.
        let count = (n_new as u32).min(crate::kernel::cpulist::MAX_CPUS);
        next.online.count = i32::try_from(count).unwrap_or(i32::MAX);
        next.online.ids = (0..count).collect();
    }
    let mut cols = now;
    for i in 0..10 {
        cols[i] = now[i].saturating_add(delta[i].round() as u64);
    }
    next.ticks = CpuTicks::from_columns(cols);
    // Counters keep their pace, levels stay.
    let vm = keep_pace(&previous.vmstat, &latest.vmstat);
    next.vmstat =
        crate::kernel::fields::FieldTable::new(std::sync::Arc::clone(latest.vmstat.layout()), vm);
    if let Change::Pool(to) = change {
        let from = latest.cmm_pages.unwrap_or(0);
        next.cmm_pages = Some(to);
        let kib = (to - from) as f64 * 4.0;
        let mem: Vec<f64> = latest
            .meminfo
            .iter()
            .map(|(name, v)| {
                if name == "MemFree" {
                    (v - kib).max(0.0)
                } else {
                    v
                }
            })
            .collect();
        next.meminfo = crate::kernel::fields::FieldTable::new(
            std::sync::Arc::clone(latest.meminfo.layout()),
            mem,
        );
    }
    next
}

/// `latest`'s values, each counter moved on by as much as it grew since
/// `previous` (a value that fell stays). Readings of one layout (every
/// interval of a steady kernel) are paired by position, without looking
/// each name up in the other reading.
fn keep_pace(previous: &FieldTable, latest: &FieldTable) -> Vec<f64> {
    let layout = latest.layout();
    if Arc::ptr_eq(layout, previous.layout()) {
        return (0..u32::try_from(layout.len()).unwrap_or(u32::MAX))
            .map(|i| {
                let (v, before) = (latest.value_at(i), previous.value_at(i));
                v + (v - before).max(0.0)
            })
            .collect();
    }
    latest
        .iter()
        .map(|(name, v)| v + (v - previous.get(name).unwrap_or(v)).max(0.0))
        .collect()
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
/// most as many as the rules look back plus one. Returns how many it took
/// and the last two readings then.
fn until_fired(
    copy: &mut Engine,
    previous: &Sample,
    latest: &Sample,
    change: Change,
    rule: RuleKind,
) -> Option<(usize, Sample, Sample)> {
    // The reading before the hypothetical one: `latest` itself at first,
    // copied only if the rule fires right after it.
    let mut prev = Cow::Borrowed(latest);
    let mut last = next_interval(previous, latest, change);
    for after in 1..=copy.rules().history_depth as usize + 1 {
        let d = copy.push(&last, &mut NoTrace)?;
        if fired(&d, rule) {
            return Some((after, prev.into_owned(), last));
        }
        let following = next_interval(&prev, &last, Change::Cpus(0));
        prev = Cow::Owned(std::mem::replace(&mut last, following));
    }
    None
}

/// Whether the action `decision` takes would be undone by the opposite rule
/// within as many intervals as the rules look back (plus one), and then
/// the undoing would be undone again — a pair that alternates. A single
/// correction (the load really changed) is not a loop. `engine` has just
/// decided `decision` on `latest`; it is not changed.
pub fn check(
    engine: &Engine,
    source: &SourceFile,
    previous: &Sample,
    latest: &Sample,
    decision: &Decision,
) -> Option<LoopWarning> {
    let (change, back, action, undone_by, again_by) = match (decision.cpu, decision.mem) {
        (Some(c), _) if c.action == CpuAction::Plug => (
            Change::Cpus(1),
            Change::Cpus(-1),
            "plug a CPU",
            RuleKind::Hotunplug,
            RuleKind::Hotplug,
        ),
        (Some(c), _) if c.action == CpuAction::Unplug => (
            Change::Cpus(-1),
            Change::Cpus(1),
            "unplug a CPU",
            RuleKind::Hotplug,
            RuleKind::Hotunplug,
        ),
        (_, Some(m)) if m.cmm_pages_new > m.cmm_pages => (
            Change::Pool(m.cmm_pages_new),
            Change::Pool(m.cmm_pages),
            "grow the CMM pool",
            RuleKind::Memplug,
            RuleKind::Memunplug,
        ),
        (_, Some(m)) if m.cmm_pages_new < m.cmm_pages => (
            Change::Pool(m.cmm_pages_new),
            Change::Pool(m.cmm_pages),
            "shrink the CMM pool",
            RuleKind::Memunplug,
            RuleKind::Memplug,
        ),
        _ => return None,
    };
    let mut copy = engine.clone();
    let (after, prev, last) = until_fired(&mut copy, previous, latest, change, undone_by)?;
    let mut trace = Trace::new();
    let _ = copy.clone().decide(&mut trace);
    let why = explain(copy.rules(), source, &trace, undone_by)
        .unwrap_or_else(|| undone_by.file_name().to_string());
    // And back: undoing it must bring the first rule back.
    until_fired(&mut copy, &prev, &last, back, again_by)?;
    Some(LoopWarning {
        action,
        undone_by,
        after,
        why,
    })
}
