//! What each CPU did in the last interval. Offline CPUs vanish from
//! /proc/stat, so they are shown as offline, never as idle; a CPU that comes
//! back has no previous reading to subtract and starts afresh.

use std::collections::HashMap;

use super::{CpuTicks, Sample};

/// One CPU over one interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuLoad {
    /// Online in both readings: ticks spent in each state, and their total.
    Active {
        id: u32,
        delta: CpuTicks,
        total: u64,
    },
    /// Online now but not before (plugged, first reading, or counters reset).
    Fresh { id: u32 },
    /// Not online now.
    Offline { id: u32 },
}

impl CpuLoad {
    /// The CPU number.
    pub fn id(&self) -> u32 {
        match *self {
            CpuLoad::Active { id, .. } | CpuLoad::Fresh { id } | CpuLoad::Offline { id } => id,
        }
    }

    /// Busy share ([`busy_ticks`] over all ticks), when known: the one
    /// definition the CPU panel's bars, its busy order and a pinned
    /// CPU's graph all read, so they never disagree.
    pub fn busy(&self) -> Option<f64> {
        match self {
            CpuLoad::Active { delta, total, .. } if *total > 0 => {
                Some(busy_ticks(delta).min(*total) as f64 / *total as f64)
            }
            _ => None,
        }
    }
}

/// The ticks a CPU was busy: user, nice, system and interrupts (irq,
/// softirq); not idle, I/O wait or steal, which are time the CPU did not
/// work for this guest.
pub fn busy_ticks(delta: &CpuTicks) -> u64 {
    delta
        .user
        .saturating_add(delta.nice)
        .saturating_add(delta.system)
        .saturating_add(delta.irq)
        .saturating_add(delta.softirq)
}

/// `now - before` per column, or `None` if any counter went backwards.
pub fn tick_delta(now: &CpuTicks, before: &CpuTicks) -> Option<CpuTicks> {
    let mut out = [0u64; 10];
    for ((o, n), b) in out.iter_mut().zip(now.columns()).zip(before.columns()) {
        *o = n.checked_sub(b)?;
    }
    Some(CpuTicks::from_columns(out))
}

/// Every CPU that is present, online or listed in /proc/stat, in number order.
/// Each CPU's line and online state are looked up through an index built
/// once per reading, so a guest of 65,536 CPUs costs no search per CPU.
pub fn cpu_loads(before: Option<&Sample>, now: &Sample) -> Vec<CpuLoad> {
    let mut ids: Vec<u32> = now
        .present
        .ids
        .iter()
        .chain(now.online.ids.iter())
        .copied()
        .chain(now.per_cpu.iter().map(|(id, _)| *id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let now_lines = lines_by_cpu(now);
    let before_lines = before.map(lines_by_cpu);
    let now_online = OnlineSet::of(now);
    let before_online = before.map(OnlineSet::of);
    ids.into_iter()
        .map(|id| {
            let Some(ticks) = now_lines.get(&id).filter(|_| now_online.has(id)) else {
                return CpuLoad::Offline { id };
            };
            let was_online = before_online.as_ref().is_some_and(|b| b.has(id));
            match before_lines
                .as_ref()
                .and_then(|b| b.get(&id))
                .filter(|_| was_online)
            {
                Some(old) => match tick_delta(ticks, old) {
                    Some(delta) => CpuLoad::Active {
                        id,
                        total: delta.total(),
                        delta,
                    },
                    None => CpuLoad::Fresh { id },
                },
                None => CpuLoad::Fresh { id },
            }
        })
        .collect()
}

/// A reading's `cpuN` lines by CPU number; of a CPU listed twice (a
/// damaged file), the first line counts.
fn lines_by_cpu(s: &Sample) -> HashMap<u32, CpuTicks> {
    let mut lines = HashMap::with_capacity(s.per_cpu.len());
    for (id, t) in &s.per_cpu {
        lines.entry(*id).or_insert(*t);
    }
    lines
}

/// Which CPUs a reading calls online: all of them when it has no online
/// list (a root without one), else those listed, sorted for bisection.
struct OnlineSet(Option<Vec<u32>>);

impl OnlineSet {
    fn of(s: &Sample) -> Self {
        if s.online.ids.is_empty() {
            return OnlineSet(None);
        }
        let mut ids = s.online.ids.to_vec();
        ids.sort_unstable();
        OnlineSet(Some(ids))
    }

    fn has(&self, id: u32) -> bool {
        self.0
            .as_ref()
            .is_none_or(|ids| ids.binary_search(&id).is_ok())
    }
}
