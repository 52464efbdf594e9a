//! How a candidate rule file did on the workload, in the terms the seed
//! paper compared rule files in, and which candidates are on the Pareto
//! front of unmet demand × resources × stability.

use serde::Serialize;

use crate::sim::report::SimReport;

/// One simulated run's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    /// CPU-seconds of demand that could not run.
    pub unmet_cpu_seconds: f64,
    pub avg_online_cpus: f64,
    /// Average guest size against the working set (1.0 = just enough).
    pub guest_to_working_set: f64,
    pub direct_scan_stalls: u64,
    /// Work done against an ideally sized guest (1.0 = nothing lost).
    pub throughput_ratio: f64,
    pub cpu_changes: usize,
    pub pool_changes: usize,
    pub reversals: usize,
    pub flapping: bool,
    /// The steady load (threads) at which the file flaps, when the tune
    /// drove steady loads and one flapped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaps_at_steady: Option<f64>,
    /// Its HOTPLUG and HOTUNPLUG thresholds lie less than one CPU apart
    /// (when the tune looked): a load between them flaps it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub narrow: bool,
    /// Why cpuplugd would have stopped, if it would.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fatal: Option<String>,
}

impl Score {
    /// The terms of a simulator report.
    pub fn of(r: &SimReport) -> Score {
        Score {
            unmet_cpu_seconds: r.unmet_cpu_seconds,
            avg_online_cpus: r.avg_online_cpus,
            guest_to_working_set: r.guest_to_working_set,
            direct_scan_stalls: r.direct_scan_stalls,
            throughput_ratio: r.throughput_ratio,
            cpu_changes: r.cpu_changes,
            pool_changes: r.pool_changes,
            reversals: r.reversals,
            flapping: r.flapping,
            flaps_at_steady: None,
            narrow: false,
            fatal: r.fatal.clone(),
        }
    }

    /// The worst there is: infinitely many CPUs, unmet demand and memory,
    /// no throughput.
    pub const WORST: Score = Score {
        unmet_cpu_seconds: f64::INFINITY,
        avg_online_cpus: f64::INFINITY,
        guest_to_working_set: f64::INFINITY,
        direct_scan_stalls: u64::MAX,
        throughput_ratio: 0.0,
        cpu_changes: 0,
        pool_changes: 0,
        reversals: 0,
        flapping: false,
        flaps_at_steady: None,
        narrow: false,
        fatal: None,
    };

    /// A file that cpuplugd would refuse, or one that stops it.
    pub fn refused(why: String) -> Score {
        Score {
            fatal: Some(why),
            ..Score::WORST
        }
    }

    /// Never recommended: it flaps (on the workload or at a steady load),
    /// has thresholds less than a CPU apart, or stops cpuplugd.
    pub fn usable(&self) -> bool {
        !self.flapping && self.flaps_at_steady.is_none() && !self.narrow && self.fatal.is_none()
    }

    /// CPU and pool changes: the screen's tune box's `changes` column.
    pub fn changes(&self) -> usize {
        self.cpu_changes + self.pool_changes
    }

    /// Changes of either kind and reversals: the stability term.
    pub fn instability(&self) -> usize {
        self.changes() + self.reversals
    }

    /// The stability term in words, as its parts, so a sentence says the
    /// figures the tables show: "300 CPU or pool changes and 99 reversals".
    pub fn instability_words(&self) -> String {
        use crate::report::words::count;
        format!(
            "{} and {}",
            count(
                self.changes() as f64,
                "CPU or pool change",
                "CPU or pool changes"
            ),
            count(self.reversals as f64, "reversal", "reversals")
        )
    }

    /// The objectives, each to be made small.
    fn objectives(&self) -> [f64; 5] {
        [
            self.unmet_cpu_seconds,
            self.direct_scan_stalls as f64,
            self.avg_online_cpus,
            self.guest_to_working_set,
            self.instability() as f64,
        ]
    }

    /// No worse in every objective and better in one.
    pub fn dominates(&self, other: &Score) -> bool {
        let (a, b) = (self.objectives(), other.objectives());
        a.iter().zip(&b).all(|(x, y)| x <= y) && a.iter().zip(&b).any(|(x, y)| x < y)
    }

    /// No worse than `other` in every objective by more than noise (1%
    /// and a tenth of a CPU-second of unmet demand, a hundredth of a CPU,
    /// 1% of the guest against its working set, which moves with how the
    /// work ran even when the pool is left alone), and better in one by
    /// more: a candidate its start so dominates is never recommended, as
    /// it would cost more for nothing.
    pub fn dominates_beyond_noise(&self, other: &Score) -> bool {
        let (a, b) = (self.objectives(), other.objectives());
        let noise = [b[0] * 0.01 + 0.1, 0.0, 0.01, b[3] * 0.01 + 1e-9, 0.0];
        let no_worse = a.iter().zip(&b).zip(&noise).all(|((x, y), n)| *x <= y + n);
        let better = a.iter().zip(&b).zip(&noise).any(|((x, y), n)| *x < y - n);
        no_worse && better && self.throughput_ratio >= other.throughput_ratio - 0.002
    }

    /// Uses no more of what `objective` holds fixed than `reference`: for
    /// CPUs, no more CPUs or stalls and no more guest memory than noise
    /// (1%: with the pool left alone the guest's size is fixed, and its
    /// ratio to the working set moves only with how the work ran); for
    /// memory, no more stalls, CPUs or unmet demand, and no less throughput.
    pub fn within(&self, reference: &Score, objective: Objective) -> bool {
        let cpus = self.avg_online_cpus <= reference.avg_online_cpus + 1e-9;
        let stalls = self.direct_scan_stalls <= reference.direct_scan_stalls;
        match objective {
            // Up to 5% more CPUs, or more where they leave at least a
            // fifth less demand unmet: the tolerance the portfolio judges
            // by too (a steadier file plugs a little earlier).
            Objective::Cpu => {
                let cpus = self.avg_online_cpus <= reference.avg_online_cpus * 1.05 + 1e-9
                    || self.unmet_cpu_seconds <= reference.unmet_cpu_seconds * 0.8;
                cpus && stalls
                    && self.guest_to_working_set <= reference.guest_to_working_set * 1.01 + 1e-9
            }
            // No more CPUs at all: steadiness bought with CPUs is what a
            // user who asks for it does not want.
            Objective::Steady => {
                cpus && stalls
                    && self.guest_to_working_set <= reference.guest_to_working_set * 1.01 + 1e-9
                    && self.unmet_cpu_seconds <= reference.unmet_cpu_seconds * 1.05 + 1.0
            }
            // Stalls count steps; throughput also weighs how long they
            // were, so a smaller guest may not cost work either.
            Objective::Memory => {
                cpus && stalls
                    && self.unmet_cpu_seconds <= reference.unmet_cpu_seconds * 1.01 + 0.1
                    && self.throughput_ratio >= reference.throughput_ratio - 0.002
            }
        }
    }

    /// Better than `reference` in what `objective` improves by more than
    /// noise: 1% less (unmet demand for CPUs, guest size for memory), or
    /// as little with fewer stalls, changes or CPUs.
    pub fn improves_on(&self, reference: &Score, objective: Objective) -> bool {
        let steadier = self.instability() < reference.instability()
            || (reference.flapping || reference.flaps_at_steady.is_some()) && self.usable();
        let (x, r) = match objective {
            Objective::Cpu | Objective::Steady => {
                (self.unmet_cpu_seconds, reference.unmet_cpu_seconds)
            }
            Objective::Memory => (self.guest_to_working_set, reference.guest_to_working_set),
        };
        if objective == Objective::Steady {
            return steadier;
        }
        let slack = if objective == Objective::Cpu {
            0.1
        } else {
            0.001
        };
        if x < r * 0.99 - slack {
            return true;
        }
        // As good, and better in something else: fewer stalls or changes,
        // no flapping, fewer CPUs or (for CPUs) a smaller guest.
        x <= r * 1.01 + slack
            && (self.direct_scan_stalls < reference.direct_scan_stalls
                || steadier
                || self.avg_online_cpus < reference.avg_online_cpus - 0.01
                || objective == Objective::Cpu
                    && self.guest_to_working_set < reference.guest_to_working_set - 0.01)
    }

    /// The order a recommendation is picked in among candidates within the
    /// reference's resources: the objective's measure, then stalls, then
    /// the steadiest, then the fewest CPUs.
    pub fn preference(&self, objective: Objective) -> (f64, u64, usize, f64) {
        match objective {
            Objective::Cpu => (
                self.unmet_cpu_seconds,
                self.direct_scan_stalls,
                self.instability(),
                self.avg_online_cpus,
            ),
            Objective::Memory => (
                self.guest_to_working_set,
                self.direct_scan_stalls,
                self.instability(),
                self.avg_online_cpus,
            ),
            // The steadiest, then the fewest CPUs, then the least unmet.
            Objective::Steady => (
                self.instability() as f64,
                self.direct_scan_stalls,
                (self.avg_online_cpus * 100.0).round() as usize,
                self.unmet_cpu_seconds,
            ),
        }
    }
}

/// A plausible score for tests elsewhere in `tune`: a steady run, no stalls,
/// the guest 1.2 × its working set.
#[cfg(test)]
pub(crate) fn example(unmet: f64, cpus: f64) -> Score {
    Score {
        unmet_cpu_seconds: unmet,
        avg_online_cpus: cpus,
        guest_to_working_set: 1.2,
        direct_scan_stalls: 0,
        throughput_ratio: 0.95,
        cpu_changes: 4,
        ..Score::WORST
    }
}

/// What a tune improves while holding the rest to the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Objective {
    /// Less unmet CPU demand at no more CPUs, memory or stalls.
    #[default]
    Cpu,
    /// A smaller guest (more memory given back) at no more stalls, CPUs or
    /// unmet demand.
    Memory,
    /// Fewer changes (no flapping) at no more CPUs, memory or stalls, and
    /// about as little unmet demand (5% more at most).
    Steady,
}

impl Objective {
    /// Its name on the command line.
    pub fn word(self) -> &'static str {
        match self {
            Objective::Cpu => "cpu",
            Objective::Memory => "memory",
            Objective::Steady => "steady",
        }
    }

    /// The rules a tune for it moves, and the forms it searches.
    pub fn group(self) -> super::forms::RuleGroup {
        match self {
            Objective::Memory => super::forms::RuleGroup::Memory,
            Objective::Cpu | Objective::Steady => super::forms::RuleGroup::Cpu,
        }
    }

    /// What a recommendation must do, in words.
    pub fn wanted(self) -> &'static str {
        match self {
            Objective::Cpu => {
                "less unmet demand at no more stalls or memory, and 5% more CPUs at most \
                 unless a fifth less demand is left unmet"
            }
            Objective::Memory => "a smaller guest at no more stalls, CPUs or unmet demand",
            Objective::Steady => "fewer changes at no more CPUs, memory or stalls",
        }
    }
}

/// The indices of the usable scores no usable score dominates.
pub fn pareto_front(scores: &[&Score]) -> Vec<usize> {
    (0..scores.len())
        .filter(|&i| scores[i].usable())
        .filter(|&i| {
            !scores
                .iter()
                .any(|other| other.usable() && other.dominates(scores[i]))
        })
        .collect()
}

/// The front as both the report and the screen list it, with `also` (the
/// recommendation, which a memory tune may pick off the front) when it is
/// not on it: the fewest CPUs first, then the least unmet demand.
pub fn front_by_cpus(scores: &[&Score], also: Option<usize>) -> Vec<usize> {
    let mut front = pareto_front(scores);
    if let Some(i) = also.filter(|i| !front.contains(i)) {
        front.push(i);
    }
    front.sort_by(|&a, &b| {
        scores[a]
            .avg_online_cpus
            .total_cmp(&scores[b].avg_online_cpus)
            .then(
                scores[a]
                    .unmet_cpu_seconds
                    .total_cmp(&scores[b].unmet_cpu_seconds),
            )
    });
    front
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each objective wants reads as one sentence: no run of blanks
    /// (a string continued without its `\\` kept the next line's indent).
    #[test]
    fn what_a_recommendation_must_do_has_no_run_of_blanks() {
        for o in [Objective::Cpu, Objective::Memory, Objective::Steady] {
            assert!(!o.wanted().contains("  "), "{:?}", o.wanted());
        }
    }

    fn score(unmet: f64, cpus: f64, flapping: bool) -> Score {
        Score {
            unmet_cpu_seconds: unmet,
            avg_online_cpus: cpus,
            guest_to_working_set: 1.0,
            direct_scan_stalls: 0,
            throughput_ratio: 1.0,
            cpu_changes: 2,
            pool_changes: 0,
            reversals: 0,
            flapping,
            flaps_at_steady: None,
            narrow: false,
            fatal: None,
        }
    }

    #[test]
    fn the_front_holds_the_trade_offs_and_never_a_flapping_candidate() {
        let a = score(10.0, 3.0, false);
        let b = score(30.0, 2.0, false);
        let c = score(40.0, 3.0, false); // dominated by a
        let d = score(0.0, 1.0, true); // best, but flaps
        assert_eq!(pareto_front(&[&a, &b, &c, &d]), vec![0, 1]);
        assert!(a.within(&c, Objective::Cpu) && !c.within(&b, Objective::Cpu));
        // More CPUs where they leave a fifth less demand unmet, or 5% more.
        assert!(a.within(&b, Objective::Cpu));
        assert!(!score(25.0, 3.0, false).within(&b, Objective::Cpu));
        assert!(score(29.0, 2.1, false).within(&b, Objective::Cpu));
        assert!(!score(29.0, 2.11, false).within(&b, Objective::Cpu));
        assert!(!Score::refused("x".into()).usable());
    }

    #[test]
    fn the_memory_objective_wants_a_smaller_guest_at_no_more_stalls_or_unmet_demand() {
        let mut reference = score(10.0, 3.0, false);
        reference.guest_to_working_set = 1.23;
        reference.pool_changes = 247;
        let mut smaller = reference.clone();
        smaller.guest_to_working_set = 1.17;
        smaller.pool_changes = 15;
        assert!(smaller.within(&reference, Objective::Memory));
        assert!(smaller.improves_on(&reference, Objective::Memory));
        // Not by a CPU tune: the unmet demand did not go down.
        assert!(
            !smaller.improves_on(&reference, Objective::Cpu)
                || smaller.instability() < reference.instability()
        );
        let mut stalls = smaller.clone();
        stalls.direct_scan_stalls = 5;
        assert!(!stalls.within(&reference, Objective::Memory), "more stalls");
        let mut hungry = smaller.clone();
        hungry.unmet_cpu_seconds = 20.0;
        assert!(
            !hungry.within(&reference, Objective::Memory),
            "more unmet demand"
        );
        let mut slower = smaller.clone();
        slower.throughput_ratio = 0.98;
        assert!(
            !slower.within(&reference, Objective::Memory),
            "less throughput"
        );
        let mut noise = reference.clone();
        noise.guest_to_working_set = 1.229;
        assert!(
            !noise.improves_on(&reference, Objective::Memory),
            "within noise"
        );
    }
}
