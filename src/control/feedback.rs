//! Self-feeding loops: a plug that makes enough idle time to fire the unplug
//! rule (and the reverse), or a pool change that fires the opposite memory
//! rule. For a decision that acts, the check builds the intervals right
//! after the action — the same work spread over the new CPU count, the
//! same memory activity with the new pool — feeds them to a copy of the
//! engine, and says whether the opposite rule would fire, and why.

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

/// What the check copies and builds, kept from one acting interval to the
/// next so that a check, once warm, allocates nothing: the engine copy and
/// the hypothetical readings.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    engine: Option<Engine>,
    spare: Spare,
}

/// Readings to build hypothetical ones in.
#[derive(Debug, Clone, Default)]
struct Spare(Vec<Sample>);

/// More readings than one check holds at a time (the two readings in
/// numbers, two hypothetical ones, and the one built).
const SPARE_READINGS: usize = 6;

impl Spare {
    /// The interval after `latest` (see [`next_interval`]), in a spare reading.
    fn next_interval(&mut self, previous: &Sample, latest: &Sample, change: Change) -> Sample {
        let mut next = self.0.pop().unwrap_or_else(|| latest.copy_without_lines());
        next_interval(&mut next, previous, latest, change);
        next
    }

    /// `reading` with its /proc tables as numbers (a reading fresh from
    /// the kernel holds text, and each value would be read from it anew at
    /// every look), in a spare one: the same values, the same layouts.
    fn in_numbers(&mut self, reading: &Sample) -> Sample {
        let mut copy = self.0.pop().unwrap_or_else(|| reading.copy_without_lines());
        copy_but_tables(&mut copy, reading);
        for (to, from) in [
            (&mut copy.meminfo, &reading.meminfo),
            (&mut copy.vmstat, &reading.vmstat),
        ] {
            to.refill(from.layout(), |values| {
                values.extend((0..from.len()).map(|i| from.value_at(i as u32)));
            });
        }
        copy
    }

    /// A copy of `reading` but its `cpuN` lines, in a spare one.
    fn copy_of(&mut self, reading: &Sample) -> Sample {
        match self.0.pop() {
            Some(mut copy) => {
                copy.clone_without_lines_from(reading);
                copy
            }
            None => reading.copy_without_lines(),
        }
    }

    /// Keeps `reading` for a later check.
    fn keep(&mut self, reading: Sample) {
        if self.0.len() < SPARE_READINGS {
            self.0.push(reading);
        }
    }
}

/// `latest` copied into `next`, all but its /proc tables (which the caller
/// fills) and its `cpuN` lines (the engine decides on the aggregate line;
/// a guest's 65,536 lines were copied into every hypothetical reading),
/// each list into the one `next` holds.
fn copy_but_tables(next: &mut Sample, latest: &Sample) {
    let Sample {
        stamp,
        ticks,
        per_cpu,
        loadavg,
        runnable,
        meminfo: _,
        vmstat: _,
        online,
        present,
        possible,
        cpus,
        cmm_pages,
        polarization,
        proc_bytes,
    } = next;
    *stamp = latest.stamp;
    *ticks = latest.ticks;
    per_cpu.clear();
    *loadavg = latest.loadavg;
    *runnable = latest.runnable;
    online.clone_from(&latest.online);
    present.clone_from(&latest.present);
    possible.clone_from(&latest.possible);
    cpus.clone_from(&latest.cpus);
    *cmm_pages = latest.cmm_pages;
    *polarization = latest.polarization;
    *proc_bytes = latest.proc_bytes;
}

/// Makes `next` the interval after `latest` if the guest keeps doing what
/// it did between `previous` and `latest`, after `change`.
fn next_interval(next: &mut Sample, previous: &Sample, latest: &Sample, change: Change) {
    copy_but_tables(next, latest);
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
    next.vmstat.refill(latest.vmstat.layout(), |vm| {
        keep_pace(&previous.vmstat, &latest.vmstat, vm);
    });
    if let Change::Pool(to) = change {
        let from = latest.cmm_pages.unwrap_or(0);
        next.cmm_pages = Some(to);
        let kib = (to - from) as f64 * 4.0;
        next.meminfo.refill(latest.meminfo.layout(), |mem| {
            mem.extend(latest.meminfo.iter().map(|(name, v)| {
                if name == "MemFree" {
                    (v - kib).max(0.0)
                } else {
                    v
                }
            }));
        });
    } else {
        next.meminfo.clone_from(&latest.meminfo);
    }
}

/// `latest`'s values into `out`, each counter moved on by as much as it
/// grew since `previous` (a value that fell stays). Readings of one layout
/// (every interval of a steady kernel) are paired by position, without
/// looking each name up in the other reading.
fn keep_pace(previous: &FieldTable, latest: &FieldTable, out: &mut Vec<f64>) {
    let layout = latest.layout();
    if Arc::ptr_eq(layout, previous.layout()) {
        out.extend(
            (0..u32::try_from(layout.len()).unwrap_or(u32::MAX)).map(|i| {
                let (v, before) = (latest.value_at(i), previous.value_at(i));
                v + (v - before).max(0.0)
            }),
        );
        return;
    }
    out.extend(
        latest
            .iter()
            .map(|(name, v)| v + (v - previous.get(name).unwrap_or(v)).max(0.0)),
    );
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
/// and the last two readings then (spare readings: the caller keeps them).
fn until_fired(
    copy: &mut Engine,
    spare: &mut Spare,
    previous: &Sample,
    latest: &Sample,
    change: Change,
    rule: RuleKind,
) -> Option<(usize, Sample, Sample)> {
    // The reading before the hypothetical one: `latest` itself at first,
    // copied only if the rule fires right after it.
    let mut prev: Option<Sample> = None;
    let mut last = spare.next_interval(previous, latest, change);
    for after in 1..=copy.rules().history_depth as usize + 1 {
        let fired_now = copy.push(&last, &mut NoTrace).map(|d| fired(&d, rule));
        if fired_now == Some(true) {
            let prev = match prev {
                Some(p) => p,
                None => spare.copy_of(latest),
            };
            return Some((after, prev, last));
        }
        if fired_now.is_none() {
            break;
        }
        let following =
            spare.next_interval(prev.as_ref().unwrap_or(latest), &last, Change::Cpus(0));
        if let Some(old) = prev.replace(std::mem::replace(&mut last, following)) {
            spare.keep(old);
        }
    }
    spare.keep(last);
    if let Some(p) = prev {
        spare.keep(p);
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
/// decided `decision` on `latest`; it is not changed.
pub fn check(
    engine: &Engine,
    source: &SourceFile,
    previous: &Sample,
    latest: &Sample,
    decision: &Decision,
    scratch: &mut Scratch,
) -> Option<LoopWarning> {
    let (change, back, action, undone_by, again_by) = kind_of(decision)?;
    let Scratch {
        engine: kept,
        spare,
    } = scratch;
    let copy = match kept {
        Some(copy) => {
            copy.clone_from(engine);
            copy
        }
        None => kept.insert(engine.clone()),
    };
    // The two readings' numbers, read from their text once: the check
    // reads each of them at every hypothetical interval.
    let previous = spare.in_numbers(previous);
    let latest = spare.in_numbers(latest);
    let found = undone_and_back(
        copy,
        spare,
        source,
        (&previous, &latest),
        (change, undone_by),
        (back, again_by),
    );
    spare.keep(previous);
    spare.keep(latest);
    let (after, why) = found?;
    Some(LoopWarning {
        action,
        undone_by,
        after,
        why,
    })
}

/// After `change` (from the two readings), how many intervals until
/// `undone_by` acts, and why it does; then, after `back`, whether
/// `again_by` acts again. `None` unless both happen.
fn undone_and_back(
    copy: &mut Engine,
    spare: &mut Spare,
    source: &SourceFile,
    (previous, latest): (&Sample, &Sample),
    (change, undone_by): (Change, RuleKind),
    (back, again_by): (Change, RuleKind),
) -> Option<(usize, String)> {
    let (after, prev, last) = until_fired(copy, spare, previous, latest, change, undone_by)?;
    let mut trace = Trace::new();
    let _ = copy.clone().decide(&mut trace);
    let why = explain(copy.rules(), source, &trace, undone_by)
        .unwrap_or_else(|| undone_by.file_name().to_string());
    // And back: undoing it must bring the first rule back.
    let back = until_fired(copy, spare, &prev, &last, back, again_by);
    spare.keep(prev);
    spare.keep(last);
    let (_, prev, last) = back?;
    spare.keep(prev);
    spare.keep(last);
    Some((after, why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::fields::FieldParser;

    /// Readings as a kernel gives them: tables still text, from a
    /// narrowed parser (lines checked only up to the last name wanted).
    fn reading(meminfo: &mut FieldParser, vmstat: &mut FieldParser, mem: &str, vm: &str) -> Sample {
        let mut s = Sample::bare(Stamp::new(1, 0), CpuTicks::default(), 2, 4);
        s.meminfo = meminfo
            .parse(mem.as_bytes())
            .unwrap_or_else(|m| panic!("{m:?}"));
        s.vmstat = vmstat
            .parse(vm.as_bytes())
            .unwrap_or_else(|m| panic!("{m:?}"));
        s
    }

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

    /// Every name, value and layout a check reads of a reading is the same
    /// in its copy in numbers: a narrowed reading, one whose kernel grew a
    /// line past the checked ones, and names given twice.
    #[test]
    fn a_reading_in_numbers_reads_as_its_text_does() {
        let mut meminfo = FieldParser::new(b':');
        let mut vmstat = FieldParser::new(b' ');
        meminfo.narrow(Some(&["MemFree".to_string()]));
        vmstat.narrow(Some(&["pgscan_direct".to_string()]));
        let texts = [
            (
                "MemTotal: 100 kB\nMemFree: 40 kB\nCached: 5 kB\n",
                "pgpgin 1\npgscan_direct 7\nnr_x 3\n",
            ),
            (
                "MemTotal: 100 kB\nMemFree: 41 kB\nNew: 1 kB\nCached: 6 kB\nMemFree: 9 kB\n",
                "pgpgin 2\npgscan_direct 9\nnr_y 4\nnr_x 5\n",
            ),
            (
                "MemTotal: 1e3\nMemFree: x\n",
                "pgpgin -3\npgscan_direct 0x10\n",
            ),
        ];
        let mut spare = Spare::default();
        for (mem, vm) in texts {
            let text = reading(&mut meminfo, &mut vmstat, mem, vm);
            let numbers = spare.in_numbers(&text);
            for (a, b) in [
                (&text.meminfo, &numbers.meminfo),
                (&text.vmstat, &numbers.vmstat),
            ] {
                assert!(Arc::ptr_eq(a.layout(), b.layout()), "the same layout");
                let pairs = |t: &FieldTable| -> Vec<(String, u64)> {
                    t.iter()
                        .map(|(n, v)| (n.to_string(), v.to_bits()))
                        .collect()
                };
                assert_eq!(pairs(a), pairs(b));
                for (name, _) in a.iter() {
                    assert_eq!(
                        a.get(name).map(f64::to_bits),
                        b.get(name).map(f64::to_bits),
                        "{name}"
                    );
                }
                assert_eq!(a.get("Absent"), b.get("Absent"));
            }
            assert_eq!(numbers.online, text.online);
            assert_eq!(numbers.cmm_pages, text.cmm_pages);
            spare.keep(numbers);
        }
    }
}
