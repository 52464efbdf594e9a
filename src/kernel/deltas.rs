//! What each CPU did in the last interval. Offline CPUs vanish from
//! /proc/stat, so they are shown as offline, never as idle; a CPU that comes
//! back has no previous reading to subtract and starts afresh.

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

    /// Busy share (user + nice + system over all ticks), when known.
    pub fn busy(&self) -> Option<f64> {
        match self {
            CpuLoad::Active { delta, total, .. } if *total > 0 => {
                Some((delta.user + delta.nice + delta.system) as f64 / *total as f64)
            }
            _ => None,
        }
    }
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
pub fn cpu_loads(before: Option<&Sample>, now: &Sample) -> Vec<CpuLoad> {
    let mut ids: Vec<u32> = now
        .present
        .ids
        .iter()
        .chain(&now.online.ids)
        .copied()
        .chain(now.per_cpu.iter().map(|(id, _)| *id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let line = |s: &Sample, id: u32| s.per_cpu.iter().find(|(i, _)| *i == id).map(|(_, t)| *t);
    ids.into_iter()
        .map(|id| {
            let Some(ticks) =
                line(now, id).filter(|_| now.online.ids.is_empty() || now.online.contains(id))
            else {
                return CpuLoad::Offline { id };
            };
            let was_online =
                before.is_some_and(|b| b.online.ids.is_empty() || b.online.contains(id));
            match before.and_then(|b| line(b, id)).filter(|_| was_online) {
                Some(old) => match tick_delta(&ticks, &old) {
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
