//! Flapping: a guest whose CPU count or pool keeps changing direction. The
//! detector watches the decisions (not the writes, so observe mode and
//! replays see it too) and reports when direction reversals within a
//! sliding window of intervals reach a threshold, with the period.
//!
//! Defaults: a window of 30 intervals and 4 reversals. A guest that follows
//! its load changes direction a few times an hour; four reversals in thirty
//! intervals is a guest chasing its own tail. Both are configurable
//! (`--flap-window`, `--flap-reversals`).

use std::collections::VecDeque;
use std::fmt;

use crate::engine::{CpuAction, Decision};
use crate::kernel::Sample;

/// Which way one interval moves the CPU count and the pool: -1, 0 or +1
/// each. Decisions, recorded guests and counterfactual runs all reduce to
/// this, so the detector, the what-if tallies and the timelines share it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moves {
    pub cpu: i8,
    pub pool: i8,
}

impl Moves {
    /// What `decision` does.
    pub fn of(decision: &Decision) -> Moves {
        Moves {
            cpu: match decision.cpu.map(|c| c.action) {
                Some(CpuAction::Plug) => 1,
                Some(CpuAction::Unplug) => -1,
                _ => 0,
            },
            pool: decision
                .mem
                .map_or(0, |m| (m.cmm_pages_new - m.cmm_pages).signum() as i8),
        }
    }

    /// What a guest did between two of its readings.
    pub fn between(before: &Sample, after: &Sample) -> Moves {
        Moves {
            cpu: after.online.count.cmp(&before.online.count) as i8,
            pool: match (before.cmm_pages, after.cmm_pages) {
                (Some(a), Some(b)) => b.cmp(&a) as i8,
                _ => 0,
            },
        }
    }

    /// Neither moves.
    pub fn is_none(self) -> bool {
        self == Moves::default()
    }
}

impl fmt::Display for Moves {
    /// "nothing", "plug", "unplug", "pool+", "pool-", or both ("plug pool+").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpu = match self.cpu {
            1 => "plug",
            -1 => "unplug",
            _ => "",
        };
        let pool = match self.pool {
            1 => "pool+",
            -1 => "pool-",
            _ => "",
        };
        match (cpu, pool) {
            ("", "") => f.write_str("nothing"),
            (c, "") | ("", c) => f.write_str(c),
            (c, p) => write!(f, "{c} {p}"),
        }
    }
}

/// When to call it flapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlapConfig {
    /// Intervals in the sliding window.
    pub window: usize,
    /// Reversals within the window that make it flapping (at least 2).
    pub reversals: usize,
}

impl Default for FlapConfig {
    fn default() -> Self {
        FlapConfig {
            window: 30,
            reversals: 4,
        }
    }
}

/// What flaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    Cpus,
    Pool,
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantity::Cpus => "CPU count",
            Quantity::Pool => "CMM pool",
        })
    }
}

/// A finding: this quantity flaps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flapping {
    pub what: Quantity,
    /// Reversals within the window.
    pub reversals: usize,
    pub window: usize,
    /// Intervals per full cycle (there and back), from the reversals seen.
    pub period: f64,
}

impl fmt::Display for Flapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} flapping: {} reversals in the last {} intervals, a cycle every {:.1} intervals",
            self.what, self.reversals, self.window, self.period
        )
    }
}

impl Flapping {
    /// The likely cause and the fix the course teaches: the rules decide on
    /// one interval and follow each swing of a load whose cycle is a few
    /// intervals long; averaging over more intervals than a cycle sees the
    /// mean, and a wider gap between the plug and unplug thresholds keeps
    /// one action from undoing itself.
    pub fn cause(&self) -> String {
        let cycle = self.period.round().max(2.0) as usize;
        let (rules, example) = match self.what {
            Quantity::Cpus => (
                "HOTPLUG and HOTUNPLUG",
                format!("cpustat.idle[0] - cpustat.idle[{cycle}]"),
            ),
            Quantity::Pool => (
                "MEMPLUG and MEMUNPLUG",
                format!("vmstat.pgscan_kswapd[0] - vmstat.pgscan_kswapd[{cycle}]"),
            ),
        };
        format!(
            "likely cause: a load that swings every ~{cycle} intervals, and rules that \
             look at one interval follow each swing; average over more \
             than {cycle} intervals (e.g. {example}) or widen the gap between the \
             {rules} thresholds"
        )
    }
}

/// One quantity's recent changes of direction.
#[derive(Debug, Clone, Default)]
struct Track {
    last: i8,
    /// Interval numbers of the reversals still inside the window.
    reversals: VecDeque<usize>,
    total: usize,
}

impl Track {
    fn observe(&mut self, interval: usize, direction: i8, window: usize) {
        while self
            .reversals
            .front()
            .is_some_and(|r| interval.saturating_sub(*r) >= window)
        {
            self.reversals.pop_front();
        }
        if direction == 0 {
            return;
        }
        if self.last != 0 && self.last != direction {
            self.reversals.push_back(interval);
            self.total += 1;
        }
        self.last = direction;
    }

    fn finding(&self, what: Quantity, config: FlapConfig) -> Option<Flapping> {
        let n = self.reversals.len();
        if n < config.reversals.max(2) {
            return None;
        }
        let (first, last) = (*self.reversals.front()?, *self.reversals.back()?);
        // Two reversals make one cycle.
        let period = 2.0 * (last - first) as f64 / (n - 1) as f64;
        Some(Flapping {
            what,
            reversals: n,
            window: config.window,
            period,
        })
    }
}

/// Watches decisions for flapping.
#[derive(Debug, Clone, Default)]
pub struct FlapDetector {
    config: FlapConfig,
    cpu: Track,
    pool: Track,
    /// Whether each quantity was flapping after the previous decision.
    was: [bool; 2],
}

/// What changed with one decision.
#[derive(Debug, Clone, PartialEq)]
pub enum FlapEvent {
    Started(Flapping),
    Stopped(Quantity),
}

impl FlapDetector {
    /// A detector with these thresholds.
    pub fn new(config: FlapConfig) -> Self {
        FlapDetector {
            config,
            ..FlapDetector::default()
        }
    }

    /// The thresholds in use.
    pub fn config(&self) -> FlapConfig {
        self.config
    }

    /// Takes what the interval numbered `interval` decided (or did);
    /// returns flapping that started or stopped.
    pub fn observe(&mut self, interval: usize, moves: Moves) -> Vec<FlapEvent> {
        let Moves { cpu, pool } = moves;
        self.cpu.observe(interval, cpu, self.config.window);
        self.pool.observe(interval, pool, self.config.window);
        let mut events = Vec::new();
        for (i, what) in [Quantity::Cpus, Quantity::Pool].into_iter().enumerate() {
            let now = self.finding(what);
            match (self.was[i], now) {
                (false, Some(f)) => events.push(FlapEvent::Started(f)),
                (true, None) => events.push(FlapEvent::Stopped(what)),
                _ => {}
            }
            self.was[i] = now.is_some();
        }
        events
    }

    /// Whether `what` flaps now.
    pub fn finding(&self, what: Quantity) -> Option<Flapping> {
        match what {
            Quantity::Cpus => self.cpu.finding(what, self.config),
            Quantity::Pool => self.pool.finding(what, self.config),
        }
    }

    /// Everything that flaps now.
    pub fn findings(&self) -> Vec<Flapping> {
        [Quantity::Cpus, Quantity::Pool]
            .into_iter()
            .filter_map(|q| self.finding(q))
            .collect()
    }

    /// Whether `more` reversals of one quantity could make it flap (the
    /// window sliding on only takes reversals away).
    pub fn within(&self, more: usize) -> bool {
        let threshold = self.config.reversals.max(2);
        [&self.cpu, &self.pool]
            .iter()
            .any(|t| t.reversals.len() + more >= threshold)
    }

    /// Reversals since the start, CPU and pool together.
    pub fn total_reversals(&self) -> usize {
        self.cpu.total + self.pool.total
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::{CpuDecision, GroupStatus};

    /// A CPU-only decision of `action` on reading `reading`.
    pub(crate) fn cpu(reading: usize, action: CpuAction) -> Decision {
        Decision {
            reading,
            cpu: Some(CpuDecision {
                status: GroupStatus::Ok,
                hotplug: Some(action == CpuAction::Plug),
                hotunplug: Some(action == CpuAction::Unplug),
                action,
                limited: false,
                onumcpus: 2.0,
            }),
            mem: None,
            fatal: None,
        }
    }

    /// nu54 M11: a cycle of ten intervals (UPDATE is one) was said to be
    /// "close to UPDATE".
    #[test]
    fn the_likely_cause_names_the_cycle_without_calling_it_close_to_update() {
        let f = Flapping {
            what: Quantity::Cpus,
            reversals: 6,
            window: 30,
            period: 10.0,
        };
        let cause = f.cause();
        assert!(cause.contains("swings every ~10 intervals"), "{cause}");
        assert!(!cause.contains("close to UPDATE"), "{cause}");
    }

    #[test]
    fn alternating_plugs_are_flapping_with_their_period() {
        let mut d = FlapDetector::default();
        let mut started = None;
        for i in 0..20 {
            let action = match i % 3 {
                0 => CpuAction::Plug,
                1 => CpuAction::Unplug,
                _ => CpuAction::None,
            };
            for e in d.observe(i, Moves::of(&cpu(i, action))) {
                if let FlapEvent::Started(f) = e {
                    started.get_or_insert((i, f));
                }
            }
        }
        // Reversals at 1, 3, 4, 6, 7, ... the fourth comes at interval 6.
        let (at, f) = started.unwrap_or_else(|| panic!("never flagged"));
        assert_eq!(at, 6);
        assert_eq!(f.what, Quantity::Cpus);
        assert!((f.period - 10.0 / 3.0).abs() < 1e-9, "{f}");
    }

    #[test]
    fn following_the_load_is_not_flapping() {
        let mut d = FlapDetector::default();
        // Up three, hold, down three, hold: two reversals per 40 intervals.
        for i in 0..400 {
            let action = match i % 40 {
                0..=2 => CpuAction::Plug,
                20..=22 => CpuAction::Unplug,
                _ => CpuAction::None,
            };
            assert!(
                d.observe(i, Moves::of(&cpu(i, action))).is_empty(),
                "at {i}"
            );
        }
        assert!(d.findings().is_empty());
        assert_eq!(d.total_reversals(), 19);
    }

    #[test]
    fn flapping_stops_when_the_window_empties() {
        let mut d = FlapDetector::new(FlapConfig {
            window: 10,
            reversals: 2,
        });
        let mut events = Vec::new();
        for (i, a) in [CpuAction::Plug, CpuAction::Unplug, CpuAction::Plug]
            .into_iter()
            .enumerate()
        {
            events.extend(d.observe(i, Moves::of(&cpu(i, a))));
        }
        for i in 3..20 {
            events.extend(d.observe(i, Moves::default()));
        }
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(matches!(events[0], FlapEvent::Started(_)));
        assert_eq!(events[1], FlapEvent::Stopped(Quantity::Cpus));
    }
}
