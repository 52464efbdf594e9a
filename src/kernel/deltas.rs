//! What each CPU did in the last interval. Offline CPUs vanish from
//! /proc/stat, so they are shown as offline, never as idle; a CPU that comes
//! back has no previous reading to subtract and starts afresh.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

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
/// One pass over the lists, merged in number order: a kernel prints its
/// `cpuN` lines and CPU lists ascending, so a guest of 65,536 CPUs costs no
/// sort, search nor hash per CPU, and allocates only the answer. Lists out
/// of order or repeated (a damaged or hand-made source) are sorted once
/// first, the first line of a CPU listed twice counting.
pub fn cpu_loads(before: Option<&Sample>, now: &Sample) -> Vec<CpuLoad> {
    let present = ascending_ids(&now.present.ids);
    let online = ascending_ids(&now.online.ids);
    let lines = ascending_lines(&now.per_cpu);
    // No online list (a root without one) means every CPU is online.
    let all_online = now.online.ids.is_empty();
    let mut earlier = before.map(|b| Earlier {
        online: Ascending::new(ascending_ids(&b.online.ids)),
        all_online: b.online.ids.is_empty(),
        lines: Ascending::new(ascending_lines(&b.per_cpu)),
    });
    let mut out = Vec::with_capacity(present.len().max(online.len()).max(lines.len()));
    let (mut p, mut o, mut l) = (0, 0, 0);
    loop {
        let heads = [
            present.get(p).copied(),
            online.get(o).copied(),
            lines.get(l).map(|(id, _)| *id),
        ];
        let Some(id) = heads.into_iter().flatten().min() else {
            break;
        };
        let is_online = online.get(o) == Some(&id);
        let line = lines.get(l).filter(|(i, _)| *i == id).map(|(_, t)| t);
        p += usize::from(present.get(p) == Some(&id));
        o += usize::from(is_online);
        l += usize::from(line.is_some());
        let Some(ticks) = line.filter(|_| all_online || is_online) else {
            out.push(CpuLoad::Offline { id });
            continue;
        };
        let old = earlier.as_mut().and_then(|e| e.ticks(id));
        out.push(match old.and_then(|old| tick_delta(ticks, old)) {
            Some(delta) => CpuLoad::Active {
                id,
                total: delta.total(),
                delta,
            },
            None => CpuLoad::Fresh { id },
        });
    }
    out
}

/// The reading before, looked up in CPU number order.
struct Earlier<'a> {
    online: Ascending<'a, u32>,
    all_online: bool,
    lines: Ascending<'a, (u32, CpuTicks)>,
}

impl Earlier<'_> {
    /// CPU `id`'s line, if it was online then; ids asked for ascending.
    fn ticks(&mut self, id: u32) -> Option<&CpuTicks> {
        let was_online = self.online.find(id, |i| *i).is_some() || self.all_online;
        let line = self.lines.find(id, |(i, _)| *i).map(|(_, t)| t);
        line.filter(|_| was_online)
    }
}

/// A list in ascending CPU number order, looked up by ids that only grow:
/// each lookup moves on from where the last one stopped.
struct Ascending<'a, T: Clone> {
    items: Cow<'a, [T]>,
    at: usize,
}

impl<'a, T: Clone> Ascending<'a, T> {
    fn new(items: Cow<'a, [T]>) -> Self {
        Ascending { items, at: 0 }
    }

    fn find(&mut self, id: u32, key: impl Fn(&T) -> u32) -> Option<&T> {
        while self.items.get(self.at).is_some_and(|t| key(t) < id) {
            self.at += 1;
        }
        self.items.get(self.at).filter(|t| key(t) == id)
    }
}

/// A CPU list strictly ascending: itself when it is (a kernel's always
/// is), else sorted without repeats.
fn ascending_ids(ids: &[u32]) -> Cow<'_, [u32]> {
    if ids.windows(2).all(|w| w[0] < w[1]) {
        return Cow::Borrowed(ids);
    }
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    Cow::Owned(sorted)
}

/// `cpuN` lines strictly ascending by CPU: themselves when they are, else
/// sorted with the first line of each CPU kept.
fn ascending_lines(lines: &[(u32, CpuTicks)]) -> Cow<'_, [(u32, CpuTicks)]> {
    if lines.windows(2).all(|w| w[0].0 < w[1].0) {
        return Cow::Borrowed(lines);
    }
    let mut sorted = lines.to_vec();
    // Stable: of a CPU's lines, the first stays first and is the one kept.
    sorted.sort_by_key(|(id, _)| *id);
    sorted.dedup_by_key(|(id, _)| *id);
    Cow::Owned(sorted)
}

/// The loads of one interval's CPUs, worked out the first time something
/// reads them (the CPU panel of the interval shown, a pinned CPU): line
/// mode and the readings the screen never shows cost nothing per CPU, and
/// the control loop never works them out at all.
#[derive(Debug, Clone, Default)]
pub struct IntervalLoads {
    /// The reading before (if any) and the interval's own.
    readings: Option<(Option<Arc<Sample>>, Arc<Sample>)>,
    loads: OnceLock<Vec<CpuLoad>>,
    /// How many loads there can be at most.
    most: usize,
}

impl IntervalLoads {
    /// The loads from `before` to `now`, worked out when first read.
    pub fn between(before: Option<Arc<Sample>>, now: Arc<Sample>) -> Self {
        IntervalLoads {
            most: most_cpus(&now),
            readings: Some((before, now)),
            loads: OnceLock::new(),
        }
    }

    /// Loads already known.
    pub fn known(loads: Vec<CpuLoad>) -> Self {
        IntervalLoads {
            readings: None,
            most: loads.len(),
            loads: OnceLock::from(loads),
        }
    }

    /// Every CPU's load, in number order ([`cpu_loads`]).
    pub fn get(&self) -> &[CpuLoad] {
        self.loads.get_or_init(|| match &self.readings {
            Some((before, now)) => cpu_loads(before.as_deref(), now),
            None => Vec::new(),
        })
    }

    /// Whether they were worked out (read) yet.
    pub fn worked_out(&self) -> bool {
        self.loads.get().is_some()
    }

    /// The most loads there can be, worked out or not: a bound for
    /// memory budgets that holds before anything reads them, and does not
    /// change when something does.
    pub fn most(&self) -> usize {
        self.most
    }
}

/// How many CPUs [`cpu_loads`] can list at most: those the lists and lines
/// name, no more than the numbers between the least and the greatest (a
/// guest's lists name the same CPUs: 65,536, not three times as many).
/// One pass, nothing allocated.
fn most_cpus(s: &Sample) -> usize {
    let ids = s.present.ids.iter().chain(s.online.ids.iter()).copied();
    let ids = ids.chain(s.per_cpu.iter().map(|(id, _)| *id));
    let (named, least, greatest) = ids.fold((0usize, u32::MAX, 0u32), |(n, lo, hi), id| {
        (n + 1, lo.min(id), hi.max(id))
    });
    let span = greatest.checked_sub(least).map_or(0, |d| d as usize + 1);
    named.min(span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Stamp;
    use crate::kernel::cpulist::CpuList;
    use proptest::prelude::*;

    /// What [`cpu_loads`] means, said the slow way: every CPU named
    /// anywhere, each looked up by search (its first line counts).
    fn by_search(before: Option<&Sample>, now: &Sample) -> Vec<CpuLoad> {
        let mut ids: Vec<u32> = now
            .present
            .ids
            .iter()
            .chain(now.online.ids.iter())
            .copied()
            .collect();
        ids.extend(now.per_cpu.iter().map(|(id, _)| *id));
        ids.sort_unstable();
        ids.dedup();
        let line = |s: &Sample, id: u32| s.per_cpu.iter().find(|(i, _)| *i == id).map(|(_, t)| *t);
        let online = |s: &Sample, id: u32| s.online.ids.is_empty() || s.online.ids.contains(&id);
        ids.into_iter()
            .map(|id| match line(now, id).filter(|_| online(now, id)) {
                None => CpuLoad::Offline { id },
                Some(t) => match before
                    .filter(|b| online(b, id))
                    .and_then(|b| line(b, id))
                    .and_then(|old| tick_delta(&t, &old))
                {
                    Some(delta) => CpuLoad::Active {
                        id,
                        total: delta.total(),
                        delta,
                    },
                    None => CpuLoad::Fresh { id },
                },
            })
            .collect()
    }

    fn sample(online: Vec<u32>, present: Vec<u32>, lines: Vec<(u32, u64, u64)>) -> Sample {
        let list = |ids: Vec<u32>| CpuList {
            count: ids.len() as i32,
            ids: ids.into(),
        };
        Sample {
            per_cpu: lines
                .into_iter()
                .map(|(id, user, idle)| {
                    (
                        id,
                        CpuTicks {
                            user,
                            idle,
                            ..CpuTicks::default()
                        },
                    )
                })
                .collect(),
            online: list(online),
            present: list(present),
            ..Sample::bare(Stamp::new(0, 0), CpuTicks::default(), 0, 0)
        }
    }

    fn ids() -> impl Strategy<Value = Vec<u32>> {
        prop_oneof![
            (0u32..12).prop_map(|n| (0..n).collect()),
            proptest::collection::vec(0u32..12, 0..12),
        ]
    }

    fn lines() -> impl Strategy<Value = Vec<(u32, u64, u64)>> {
        prop_oneof![
            (0u32..12, 0u64..5, 0u64..5)
                .prop_map(|(n, u, i)| (0..n).map(|id| (id, u + u64::from(id), i)).collect()),
            proptest::collection::vec((0u32..12, 0u64..9, 0u64..9), 0..12),
        ]
    }

    proptest! {
        /// Ascending lists (a kernel's) and any others (damaged, repeated,
        /// out of order, no online list) give what the slow way gives.
        #[test]
        fn the_merge_gives_what_searching_gives(
            a in (ids(), ids(), lines()),
            b in (ids(), ids(), lines()),
            first in any::<bool>(),
        ) {
            let now = sample(a.0, a.1, a.2);
            let before = sample(b.0, b.1, b.2);
            let before = (!first).then_some(&before);
            let loads = cpu_loads(before, &now);
            prop_assert!(loads.len() <= most_cpus(&now));
            prop_assert_eq!(loads, by_search(before, &now));
        }
    }

    #[test]
    fn loads_are_worked_out_when_first_read_and_bounded_before() {
        let now = Arc::new(sample(
            vec![0, 1],
            vec![0, 1, 2],
            vec![(0, 5, 5), (1, 1, 1)],
        ));
        let before = Arc::new(sample(
            vec![0, 1],
            vec![0, 1, 2],
            vec![(0, 1, 1), (1, 1, 1)],
        ));
        let loads = IntervalLoads::between(Some(before), Arc::clone(&now));
        assert!(!loads.worked_out());
        assert_eq!(loads.most(), 3, "CPUs 0 to 2, named 7 times");
        assert_eq!(loads.get().len(), 3);
        assert!(loads.worked_out());
        assert_eq!(loads.most(), 3, "the bound does not move once read");
        assert!(matches!(
            loads.get()[0],
            CpuLoad::Active {
                id: 0,
                total: 8,
                ..
            }
        ));
        assert_eq!(loads.get()[2], CpuLoad::Offline { id: 2 });
    }
}
