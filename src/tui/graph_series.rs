//! The screen's graphs: a bounded series (the last [`SERIES_LEN`]
//! intervals) of each [`Metric`] derived from the readings, one for each
//! user variable pinned on the screen, and the latest reading, which the
//! next interval's rates are taken against. Bounded whatever the run
//! length. The readings the rules look back on (`cpustat.idle[3]`) are
//! not kept here but by [`crate::engine::Engine`], as deep as the rule
//! file looks.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::kernel::Sample;
use crate::kernel::deltas::tick_delta;

/// How many intervals the graphs keep.
pub const SERIES_LEN: usize = 600;

/// A bounded series of values, oldest first.
#[derive(Debug, Clone)]
pub struct Series {
    cap: usize,
    values: VecDeque<f64>,
}

impl Series {
    /// An empty series keeping at most `cap` values.
    pub fn new(cap: usize) -> Self {
        Series {
            cap,
            values: VecDeque::with_capacity(cap),
        }
    }

    /// Adds the newest value (NaN for "unknown this interval").
    pub fn push(&mut self, v: f64) {
        if self.values.len() == self.cap {
            self.values.pop_front();
        }
        self.values.push_back(v);
    }

    /// The values, oldest first.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.values.iter().copied()
    }

    /// The newest value.
    pub fn last(&self) -> Option<f64> {
        self.values.back().copied()
    }

    /// How many values are kept.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True before the first value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// The values every screen graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    OnlineCpus,
    /// (user + nice + system) / all ticks, the interval's CP_Active.
    Busy,
    /// (idle + iowait) / all ticks, the interval's CP_idle.
    Idle,
    /// steal / all ticks.
    Steal,
    Loadavg,
    /// kswapd page scans per tick (all CPUs), as the paper's pgscanrate counts.
    ScanKswapd,
    /// Direct page scans per tick.
    ScanDirect,
    /// meminfo Cached - Shmem, in kB.
    AvailCache,
    /// Pages stolen (reclaimed) per tick, kswapd and direct.
    PageSteal,
    /// meminfo MemFree, in kB.
    MemFree,
    CmmPages,
}

impl Metric {
    /// All metrics, in display order.
    pub const ALL: [Metric; 11] = [
        Metric::OnlineCpus,
        Metric::Busy,
        Metric::Idle,
        Metric::Steal,
        Metric::Loadavg,
        Metric::ScanKswapd,
        Metric::ScanDirect,
        Metric::AvailCache,
        Metric::PageSteal,
        Metric::MemFree,
        Metric::CmmPages,
    ];
}

/// Sum of a vmstat counter on new kernels (one name) or old ones (per zone).
fn scans(sample: &Sample, base: &str) -> Option<f64> {
    if let Some(v) = sample.vmstat.get(base) {
        return Some(v);
    }
    let zones: Vec<f64> = ["_dma", "_dma32", "_normal", "_movable", "_high"]
        .iter()
        .filter_map(|z| sample.vmstat.get(&format!("{base}{z}")))
        .collect();
    (!zones.is_empty()).then(|| zones.iter().sum())
}

/// The value of `metric` over the interval from `before` to `now`.
pub fn metric(metric: Metric, before: Option<&Sample>, now: &Sample) -> Option<f64> {
    let delta = before.and_then(|b| tick_delta(&now.ticks, &b.ticks));
    let share = |part: fn(&crate::kernel::CpuTicks) -> u64| {
        delta.and_then(|d| (d.total() > 0).then(|| part(&d) as f64 / d.total() as f64))
    };
    let per_tick = |base: &str| {
        let (b, d) = (before?, delta?);
        let diff = scans(now, base)? - scans(b, base)?;
        (d.total() > 0).then(|| diff / d.total() as f64)
    };
    match metric {
        Metric::OnlineCpus => Some(f64::from(now.online.count)),
        Metric::Busy => share(|d| d.user + d.nice + d.system),
        Metric::Idle => share(|d| d.idle + d.iowait),
        Metric::Steal => share(|d| d.steal),
        Metric::Loadavg => Some(now.loadavg),
        Metric::ScanKswapd => per_tick("pgscan_kswapd"),
        Metric::ScanDirect => per_tick("pgscan_direct"),
        Metric::AvailCache => Some(now.meminfo.get("Cached")? - now.meminfo.get("Shmem")?),
        Metric::PageSteal => {
            let (b, d) = (before?, delta?);
            let steal = |s: &Sample| {
                Some(
                    scans(s, "pgsteal_kswapd").unwrap_or(0.0)
                        + scans(s, "pgsteal_direct").unwrap_or(0.0),
                )
            };
            let diff = steal(now)? - steal(b)?;
            (d.total() > 0).then(|| diff / d.total() as f64)
        }
        Metric::MemFree => now.meminfo.get("MemFree"),
        Metric::CmmPages => now.cmm_pages.map(|p| p as f64),
    }
}

/// The graph series, and the latest sample they were computed against.
#[derive(Debug, Clone)]
pub struct History {
    latest: Option<Arc<Sample>>,
    series: Vec<Series>,
    pinned: Vec<(String, Series)>,
}

impl Default for History {
    fn default() -> Self {
        History::new()
    }
}

impl History {
    /// Empty series of every metric.
    pub fn new() -> Self {
        History {
            latest: None,
            series: Metric::ALL
                .iter()
                .map(|_| Series::new(SERIES_LEN))
                .collect(),
            pinned: Vec::new(),
        }
    }

    /// Adds a reading and the graph values it yields.
    pub fn push(&mut self, sample: Arc<Sample>) {
        let before = self.latest.as_deref();
        for (i, m) in Metric::ALL.iter().enumerate() {
            self.series[i].push(metric(*m, before, &sample).unwrap_or(f64::NAN));
        }
        self.latest = Some(sample);
    }

    /// Empty series whose first values are taken against `before` (the
    /// reading before them, when the history starts again after a seek).
    pub fn after(before: Option<Arc<Sample>>) -> Self {
        History {
            latest: before,
            ..History::new()
        }
    }

    /// The newest reading.
    pub fn latest(&self) -> Option<&Arc<Sample>> {
        self.latest.as_ref()
    }

    /// The graph series of a metric.
    pub fn series(&self, metric: Metric) -> &Series {
        let i = Metric::ALL.iter().position(|m| *m == metric).unwrap_or(0);
        &self.series[i]
    }

    /// Starts graphing a user variable (values come through [`History::record_pinned`]).
    pub fn pin(&mut self, name: &str) {
        if !self.pinned.iter().any(|(n, _)| n == name) {
            self.pinned
                .push((name.to_string(), Series::new(SERIES_LEN)));
        }
    }

    /// Starts graphing a user variable with the values it had in the
    /// intervals kept (`kept`, oldest first), so its graph starts full
    /// rather than empty: the series lines up with the metrics' series,
    /// an interval older than those values a gap.
    pub fn pin_filled(&mut self, name: &str, kept: impl ExactSizeIterator<Item = f64>) {
        let mut series = Series::new(SERIES_LEN);
        let len = self.series.first().map_or(0, Series::len);
        for _ in kept.len()..len {
            series.push(f64::NAN);
        }
        for v in kept {
            series.push(v);
        }
        self.unpin(name);
        self.pinned.push((name.to_string(), series));
    }

    /// Stops keeping a variable's series (its graph goes with it).
    pub fn unpin(&mut self, name: &str) {
        self.pinned.retain(|(n, _)| n != name);
    }

    /// Adds this interval's value of a pinned variable.
    pub fn record_pinned(&mut self, name: &str, value: f64) {
        if let Some((_, s)) = self.pinned.iter_mut().find(|(n, _)| n == name) {
            s.push(value);
        }
    }

    /// The pinned variables and their series.
    pub fn pinned(&self) -> impl Iterator<Item = (&str, &Series)> {
        self.pinned.iter().map(|(n, s)| (n.as_str(), s))
    }
}
