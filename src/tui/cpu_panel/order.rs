//! The order the CPU panel lists the CPUs in, and what "busy" means there.

use crate::kernel::deltas::CpuLoad;

/// How the CPUs are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuOrder {
    /// By CPU number, as the kernel numbers them.
    #[default]
    Number,
    /// Busiest first (then CPUs without a share: just online, offline), so
    /// on a big guest the few that work are found at a glance.
    Busy,
}

impl CpuOrder {
    /// The other order.
    pub fn toggled(self) -> CpuOrder {
        match self {
            CpuOrder::Number => CpuOrder::Busy,
            CpuOrder::Busy => CpuOrder::Number,
        }
    }
}

/// The ticks the panel counts as busy: the kernel's one definition
/// ([`crate::kernel::deltas::busy_ticks`]), which a pinned CPU's graph
/// reads too, so the table's bar, the meters, the busy order and the graph
/// never disagree.
pub use crate::kernel::deltas::busy_ticks;

/// `loads` (in CPU number order, as the timeline keeps them) in `order`.
pub fn arrange(order: CpuOrder, loads: &[CpuLoad]) -> Vec<&CpuLoad> {
    let mut out: Vec<&CpuLoad> = loads.iter().collect();
    if order == CpuOrder::Busy {
        // Stable: CPUs alike keep their number order.
        out.sort_by_key(|l| std::cmp::Reverse(busy_key(l)));
    }
    out
}

/// Sorts a CPU by its busy share, exactly (compared as fractions, never
/// rounded): CPUs with a share first, then those just online, then offline.
fn busy_key(load: &CpuLoad) -> BusyKey {
    match load {
        CpuLoad::Active { delta, total, .. } if *total > 0 => {
            BusyKey::Share(busy_ticks(delta).min(*total), *total)
        }
        CpuLoad::Active { .. } | CpuLoad::Fresh { .. } => BusyKey::Unknown,
        CpuLoad::Offline { .. } => BusyKey::Offline,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BusyKey {
    Offline,
    Unknown,
    /// Busy ticks of all ticks.
    Share(u64, u64),
}

impl Ord for BusyKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        use BusyKey::Share;
        match (self, other) {
            (Share(a, at), Share(b, bt)) => {
                (u128::from(*a) * u128::from(*bt)).cmp(&(u128::from(*b) * u128::from(*at)))
            }
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl PartialOrd for BusyKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

fn rank(key: &BusyKey) -> u8 {
    match key {
        BusyKey::Offline => 0,
        BusyKey::Unknown => 1,
        BusyKey::Share(..) => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::CpuTicks;

    fn active(id: u32, busy: u64, idle: u64) -> CpuLoad {
        let delta = CpuTicks {
            user: busy,
            idle,
            ..CpuTicks::default()
        };
        CpuLoad::Active {
            id,
            total: delta.total(),
            delta,
        }
    }

    fn ids(loads: Vec<&CpuLoad>) -> Vec<u32> {
        loads.into_iter().map(CpuLoad::id).collect()
    }

    #[test]
    fn busiest_first_then_just_online_then_offline_ties_by_number() {
        let loads = [
            CpuLoad::Offline { id: 0 },
            active(1, 1, 3),
            CpuLoad::Fresh { id: 2 },
            active(3, 3, 1),
            // The same share as cpu1 in other ticks: kept in number order.
            active(4, 10, 30),
            // No ticks at all: no share to sort by.
            active(5, 0, 0),
            active(6, 0, 9),
        ];
        assert_eq!(ids(arrange(CpuOrder::Busy, &loads)), [3, 1, 4, 6, 2, 5, 0]);
        assert_eq!(
            ids(arrange(CpuOrder::Number, &loads)),
            [0, 1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn shares_of_huge_counters_compare_exactly() {
        // 1 tick more of 2^63 is still more: no float rounding.
        let big = 1u64 << 62;
        let loads = [active(0, big, big), active(1, big + 1, big - 1)];
        assert_eq!(ids(arrange(CpuOrder::Busy, &loads)), [1, 0]);
    }

    #[test]
    fn interrupts_count_as_busy_and_nothing_overflows() {
        let d = CpuTicks {
            irq: 2,
            softirq: 3,
            steal: 100,
            iowait: 100,
            ..CpuTicks::default()
        };
        assert_eq!(busy_ticks(&d), 5);
        let d = CpuTicks {
            user: u64::MAX,
            system: 5,
            ..CpuTicks::default()
        };
        assert_eq!(busy_ticks(&d), u64::MAX);
        assert_eq!(CpuOrder::Number.toggled().toggled(), CpuOrder::Number);
    }
}
