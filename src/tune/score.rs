//! How a candidate rule file did on the workload, in the terms the seed
//! paper compared rule files in, and which candidates are on the Pareto
//! front of unmet demand × resources × stability.

use serde::Serialize;

use crate::sim::report::Report;

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
    /// Why cpuplugd would have stopped, if it would.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fatal: Option<String>,
}

impl Score {
    /// The terms of a simulator report.
    pub fn of(r: &Report) -> Score {
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
            fatal: r.fatal.clone(),
        }
    }

    /// A file that cpuplugd would refuse, or one that stops it.
    pub fn refused(why: String) -> Score {
        Score {
            unmet_cpu_seconds: f64::INFINITY,
            avg_online_cpus: f64::INFINITY,
            guest_to_working_set: f64::INFINITY,
            direct_scan_stalls: u64::MAX,
            throughput_ratio: 0.0,
            cpu_changes: 0,
            pool_changes: 0,
            reversals: 0,
            flapping: false,
            fatal: Some(why),
        }
    }

    /// Never recommended: it flaps or stops cpuplugd.
    pub fn usable(&self) -> bool {
        !self.flapping && self.fatal.is_none()
    }

    /// Changes of either kind and reversals: the stability term.
    pub fn instability(&self) -> usize {
        self.cpu_changes + self.pool_changes + self.reversals
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

    /// Uses no more CPUs, guest memory or stalls than `reference` (a
    /// little slack for rounding).
    pub fn within(&self, reference: &Score) -> bool {
        self.avg_online_cpus <= reference.avg_online_cpus + 1e-9
            && self.guest_to_working_set <= reference.guest_to_working_set + 1e-9
            && self.direct_scan_stalls <= reference.direct_scan_stalls
    }

    /// Better than `reference` by more than noise: 1% (and a tenth of a
    /// CPU-second) less unmet demand, or as little unmet demand with fewer
    /// stalls, changes or CPUs.
    pub fn improves_on(&self, reference: &Score) -> bool {
        let (u, r) = (self.unmet_cpu_seconds, reference.unmet_cpu_seconds);
        if u < r * 0.99 - 0.1 {
            return true;
        }
        let same_unmet = u <= r * 1.01 + 0.1;
        same_unmet
            && (self.direct_scan_stalls < reference.direct_scan_stalls
                || self.instability() < reference.instability()
                || self.avg_online_cpus < reference.avg_online_cpus - 0.01)
    }

    /// The order a recommendation is picked in among candidates within the
    /// reference's resources: least unmet demand, then fewest stalls, then
    /// the steadiest, then the fewest CPUs.
    pub fn preference(&self) -> (f64, u64, usize, f64) {
        (
            self.unmet_cpu_seconds,
            self.direct_scan_stalls,
            self.instability(),
            self.avg_online_cpus,
        )
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(a.within(&c) && !a.within(&b));
        assert!(!Score::refused("x".into()).usable());
    }
}
