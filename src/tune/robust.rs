//! Whether a candidate holds up beyond the workload it was tuned on: it
//! flaps at no steady load, and on no workload of the portfolio does it
//! lose to the reference by more than [`Tolerance`]. The search looks at a
//! few steady loads for every candidate ([`SteadyProxy`], so it does not
//! climb into files that flap), and the recommendation is judged on the
//! whole portfolio ([`Judge`]).

use crate::report::node_text::number;
use serde::Serialize;

use crate::rules::{SourceFile, SystemFacts};

use super::Workload;
use super::portfolio::{Member, Role, steady_sweep};
use super::score::{Objective, Score};

/// How much worse than the reference a recommendation may do on a
/// workload it was not tuned on: 5% more unmet demand (and at least a
/// CPU-second, which is noise on any scenario), 5% more CPUs unless it
/// leaves at least 20% less demand unmet; for memory, a guest 5% bigger,
/// stalls and pool changes 5% more (and at least a few), and half a point
/// less throughput.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    pub worse: f64,
    pub relief: f64,
    pub unmet_floor_cpu_s: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            worse: 0.05,
            relief: 0.20,
            unmet_floor_cpu_s: 1.0,
        }
    }
}

/// Why a candidate does not hold up (or that it does).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Verdict {
    Holds,
    /// It flaps at this steady load (threads).
    Flaps(f64),
    /// It loses to the reference on this workload, and how.
    Loses {
        workload: String,
        how: String,
    },
    /// cpuplugd would refuse it, or stop, on this workload.
    Stops {
        workload: String,
        why: String,
    },
    /// Its HOTPLUG and HOTUNPLUG thresholds on one measure lie `gap` apart,
    /// less than one CPU (`unit`): a plug alone can bring the unplug.
    Narrow {
        gap: f64,
        unit: f64,
    },
}

impl Verdict {
    /// Whether the candidate may be recommended.
    pub fn holds(&self) -> bool {
        matches!(self, Verdict::Holds)
    }

    /// In words, for the report.
    pub fn words(&self) -> String {
        match self {
            Verdict::Holds => "holds on every workload".to_string(),
            Verdict::Flaps(t) => format!("flaps at a steady load of {t:.2} threads"),
            Verdict::Loses { workload, how } => format!("loses on {workload}: {how}"),
            Verdict::Stops { workload, why } => format!("stops cpuplugd on {workload}: {why}"),
            Verdict::Narrow { gap, unit } if *gap < 0.0 => format!(
                "puts its plug and unplug thresholds the wrong way round ({} into each other; \
                 one CPU is {})",
                number(-gap),
                number(*unit)
            ),
            Verdict::Narrow { gap, unit } => format!(
                "puts its plug and unplug thresholds {} apart, less than one CPU ({})",
                number(*gap),
                number(*unit)
            ),
        }
    }
}

/// The narrowest HOTPLUG/HOTUNPLUG pair of `file` loaded on `facts` that
/// lies less than one CPU apart, as (gap, unit), whether the pair decides
/// alone or only with the rules' other halves: a tuned file must keep a
/// CPU's worth of hysteresis either way.
pub fn narrow_pair(file: &SourceFile, facts: &SystemFacts) -> Option<(f64, f64)> {
    let outcome = crate::rules::load(file, facts);
    if outcome.refusal.is_some() {
        return None;
    }
    crate::rules::hysteresis::gaps(&outcome.rules)
        .into_iter()
        .filter(|g| g.too_narrow())
        .map(|g| (g.gap, g.unit))
        .min_by(|a, b| (a.0 / a.1).total_cmp(&(b.0 / b.1)))
}

/// How much less throughput (a share of the work) a memory tune's
/// recommendation may give on a workload of the portfolio: half a point.
const MEMORY_THROUGHPUT: f64 = 0.005;

/// How `c` compares with the reference `r` on one workload of the
/// portfolio, `None` when it is within `tol`.
pub fn loses(c: &Score, r: &Score, objective: Objective, tol: Tolerance) -> Option<String> {
    let figures = [
        c.unmet_cpu_seconds,
        c.avg_online_cpus,
        c.guest_to_working_set,
    ];
    if figures.iter().any(|x| !x.is_finite()) {
        return Some("no figures (the run did not finish)".to_string());
    }
    let more = |x: f64, y: f64, floor: f64| x > y * (1.0 + tol.worse) + floor;
    let unmet_much_less = c.unmet_cpu_seconds <= r.unmet_cpu_seconds * (1.0 - tol.relief);
    if more(
        c.unmet_cpu_seconds,
        r.unmet_cpu_seconds,
        tol.unmet_floor_cpu_s,
    ) {
        return Some(format!(
            "{:.1} unmet CPU-s against {:.1}",
            c.unmet_cpu_seconds, r.unmet_cpu_seconds
        ));
    }
    // A reference that flaps there sets no standard for CPUs: it saves
    // them by taking CPUs away that it gives back a moment later.
    if more(c.avg_online_cpus, r.avg_online_cpus, 0.01) && !unmet_much_less && !r.flapping {
        return Some(format!(
            "{:.2} CPUs on average against {:.2}",
            c.avg_online_cpus, r.avg_online_cpus
        ));
    }
    if c.flapping && !r.flapping {
        return Some("it flaps where the reference does not".to_string());
    }
    if more(c.guest_to_working_set, r.guest_to_working_set, 0.005) {
        return Some(format!(
            "a guest of {:.2} × its working set against {:.2}",
            c.guest_to_working_set, r.guest_to_working_set
        ));
    }
    if more(
        c.direct_scan_stalls as f64,
        r.direct_scan_stalls as f64,
        2.0,
    ) {
        return Some(format!(
            "{} stalls against {}",
            c.direct_scan_stalls, r.direct_scan_stalls
        ));
    }
    // A smaller guest may not cost work: swapping and reclaim show in the
    // throughput before they show as direct-scan stalls.
    if objective == Objective::Memory && c.throughput_ratio < r.throughput_ratio - MEMORY_THROUGHPUT
    {
        return Some(format!(
            "{:.1}% throughput against {:.1}%",
            c.throughput_ratio * 100.0,
            r.throughput_ratio * 100.0
        ));
    }
    if objective == Objective::Memory && more(c.pool_changes as f64, r.pool_changes as f64, 5.0) {
        return Some(format!(
            "{} pool changes against {}",
            c.pool_changes, r.pool_changes
        ));
    }
    None
}

/// What a recommendation must do on the workload: better than the
/// reference within what the objective holds fixed, and usable.
pub fn beats(s: &Score, reference: &Score, objective: Objective) -> bool {
    s.usable() && s.within(reference, objective) && s.improves_on(reference, objective)
}

/// The fallback when nothing that beats the reference holds up: usable,
/// within the tolerance of the reference on the workload, and better than
/// the file being tuned (`start`), so the user still gains by it.
pub fn ties(s: &Score, reference: &Score, start: &Score, objective: Objective) -> bool {
    s.usable()
        && loses(s, reference, objective, Tolerance::default()).is_none()
        && s.improves_on(start, objective)
}

/// A few loads of the steady sweep, run for every candidate of the search
/// so that one that flaps is never a parent: the whole sweep is run only
/// by the [`Judge`].
pub struct SteadyProxy {
    loads: Vec<(f64, Workload, SystemFacts)>,
}

/// Every how many loads of the sweep the proxy takes one: on 4 CPUs 0.3,
/// 0.8, 1.3, … 3.8 threads, among them the loads just short of a whole CPU
/// where a file without enough hysteresis flaps first.
const PROXY_EVERY: usize = 5;

/// Simulated seconds of each proxy load: enough for a flap to repeat at
/// any UPDATE the search tries, less than the judge's whole sweep runs.
const PROXY_SECONDS: f64 = 180.0;

impl SteadyProxy {
    /// Every [`PROXY_EVERY`]th load of `training`'s steady sweep.
    pub fn new(training: &Workload) -> Self {
        let loads = steady_sweep(training)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % PROXY_EVERY == PROXY_EVERY / 2)
            .filter_map(|(_, m)| match m.role {
                Role::Steady(t) => {
                    let facts = m.workload.facts();
                    let workload = Workload {
                        duration: Some(PROXY_SECONDS),
                        ..m.workload
                    };
                    Some((t, workload, facts))
                }
                _ => None,
            })
            .collect();
        SteadyProxy { loads }
    }

    /// No loads: a tune that only looks at its own workload.
    pub fn none() -> Self {
        SteadyProxy { loads: Vec::new() }
    }

    /// The first load (threads) at which `file` flaps, if any.
    pub fn flaps_at(&self, file: &SourceFile) -> Option<f64> {
        self.loads
            .iter()
            .find(|(_, w, facts)| w.score(file, facts).flapping)
            .map(|(t, _, _)| *t)
    }
}

/// The whole portfolio with the reference's score on each workload,
/// computed once; judges candidates against them.
pub struct Judge {
    members: Vec<(Member, SystemFacts, Score)>,
    objective: Objective,
    tolerance: Tolerance,
}

impl Judge {
    /// Scores `reference` on every member of `members`.
    pub fn new(
        members: Vec<Member>,
        reference: &SourceFile,
        objective: Objective,
        tolerance: Tolerance,
    ) -> Self {
        let members = members
            .into_iter()
            .map(|m| {
                let facts = m.workload.facts();
                let score = m.workload.score(reference, &facts);
                (m, facts, score)
            })
            .collect();
        Judge {
            members,
            objective,
            tolerance,
        }
    }

    /// The workloads judged on, with the reference's score on each.
    pub fn members(&self) -> impl Iterator<Item = (&Member, &Score)> {
        self.members.iter().map(|(m, _, s)| (m, s))
    }

    /// Whether `file` holds up: its thresholds a CPU apart, then the
    /// steady loads (a flap is the
    /// commonest failure and the cheapest to find), then the scenarios;
    /// the first failure ends the judging.
    pub fn verdict(&self, file: &SourceFile) -> Verdict {
        if let Some((_, facts, _)) = self.members.first()
            && let Some((gap, unit)) = narrow_pair(file, facts)
        {
            return Verdict::Narrow { gap, unit };
        }
        let steady = self
            .members
            .iter()
            .filter(|(m, _, _)| matches!(m.role, Role::Steady(_)));
        let scenarios = self
            .members
            .iter()
            .filter(|(m, _, _)| matches!(m.role, Role::Scenario | Role::Pressure(_)));
        for (member, facts, reference) in steady.chain(scenarios) {
            let score = member.workload.score(file, facts);
            if let Some(why) = &score.fatal {
                if reference.fatal.is_none() {
                    return Verdict::Stops {
                        workload: member.name.clone(),
                        why: why.clone(),
                    };
                }
                continue;
            }
            match member.role {
                Role::Steady(t) if score.flapping => return Verdict::Flaps(t),
                Role::Steady(_) | Role::HeldOut => {}
                Role::Scenario | Role::Pressure(_) => {
                    if let Some(how) = loses(&score, reference, self.objective, self.tolerance) {
                        return Verdict::Loses {
                            workload: member.name.clone(),
                            how,
                        };
                    }
                }
            }
        }
        Verdict::Holds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(unmet: f64, cpus: f64) -> Score {
        crate::tune::score::example(unmet, cpus)
    }

    #[test]
    fn a_candidate_may_be_a_little_worse_but_not_more() {
        let tol = Tolerance::default();
        let r = score(100.0, 2.0);
        assert_eq!(loses(&score(105.0, 2.0), &r, Objective::Cpu, tol), None);
        assert!(loses(&score(106.5, 2.0), &r, Objective::Cpu, tol).is_some());
        // A CPU-second is noise even where the reference leaves nothing unmet.
        assert_eq!(
            loses(&score(0.9, 2.0), &score(0.0, 2.0), Objective::Cpu, tol),
            None
        );
        assert!(loses(&score(1.1, 2.0), &score(0.0, 2.0), Objective::Cpu, tol).is_some());
        // More CPUs only when they buy at least a fifth less unmet demand.
        assert!(loses(&score(90.0, 2.2), &r, Objective::Cpu, tol).is_some());
        assert_eq!(loses(&score(80.0, 2.2), &r, Objective::Cpu, tol), None);
        let mut flaps = score(50.0, 2.0);
        flaps.flapping = true;
        assert!(loses(&flaps, &r, Objective::Cpu, tol).is_some());
        // Against a reference that flaps, more CPUs are no loss.
        assert_eq!(loses(&score(50.0, 3.0), &flaps, Objective::Cpu, tol), None);
    }

    #[test]
    fn a_fallback_ties_the_reference_and_beats_the_start() {
        let (reference, start) = (score(38.8, 2.70), score(140.2, 2.47));
        // A little worse than the reference, much better than the start.
        let close = score(39.9, 2.70);
        assert!(!beats(&close, &reference, Objective::Cpu));
        assert!(ties(&close, &reference, &start, Objective::Cpu));
        // Better than both: it beats.
        assert!(beats(&score(36.4, 2.72), &reference, Objective::Cpu));
        // Within the tolerance of the reference but no better than the start.
        assert!(!ties(
            &close,
            &reference,
            &score(39.9, 2.70),
            Objective::Cpu
        ));
        // More than 5% worse than the reference: no fallback either.
        assert!(!ties(
            &score(42.0, 2.70),
            &reference,
            &start,
            Objective::Cpu
        ));
        let mut narrow = close.clone();
        narrow.narrow = true;
        assert!(!ties(&narrow, &reference, &start, Objective::Cpu));
    }

    #[test]
    fn a_memory_tune_may_not_cost_throughput_elsewhere() {
        let tol = Tolerance::default();
        let r = score(10.0, 2.0);
        let mut c = r.clone();
        c.throughput_ratio = r.throughput_ratio - 0.004;
        assert_eq!(loses(&c, &r, Objective::Memory, tol), None);
        c.throughput_ratio = r.throughput_ratio - 0.015;
        let said = loses(&c, &r, Objective::Memory, tol);
        assert!(said.is_some_and(|s| s.contains("throughput")));
        // A CPU tune's throughput follows its unmet demand, judged above.
        assert_eq!(loses(&c, &r, Objective::Cpu, tol), None);
    }

    #[test]
    fn a_score_without_figures_loses() {
        let tol = Tolerance::default();
        let r = score(100.0, 2.0);
        assert!(loses(&score(f64::NAN, 2.0), &r, Objective::Cpu, tol).is_some());
        assert!(loses(&score(50.0, f64::NAN), &r, Objective::Cpu, tol).is_some());
        assert!(loses(&score(f64::INFINITY, 2.0), &r, Objective::Cpu, tol).is_some());
    }
}

#[cfg(test)]
mod narrow_tests {
    use super::*;

    fn file(plug: &str, unplug: &str) -> SourceFile {
        let text = format!(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n\
             HOTPLUG=\"(loadavg > onumcpus + 0.75) & (idle < {plug})\"\n\
             HOTUNPLUG=\"(loadavg < onumcpus - 0.25) | (idle > {unplug})\"\n"
        );
        SourceFile::new("t.conf", text.into_bytes())
    }

    #[test]
    fn thresholds_less_than_a_cpu_apart_are_narrow_even_behind_a_conjunct() {
        let facts = SystemFacts::any_machine(4, "test");
        assert_eq!(
            narrow_pair(&file("53.7", "133"), &facts).map(|p| p.1),
            Some(100.0)
        );
        assert_eq!(
            narrow_pair(&file("10", "50"), &facts).map(|p| p.0),
            Some(40.0)
        );
        assert_eq!(narrow_pair(&file("10", "110"), &facts), None);
        assert_eq!(narrow_pair(&file("5", "205"), &facts), None);
        let words = Verdict::Narrow {
            gap: 79.3,
            unit: 100.0,
        }
        .words();
        assert!(
            words.contains("79.3 apart") && words.contains("(100)"),
            "{words}"
        );
    }
}
