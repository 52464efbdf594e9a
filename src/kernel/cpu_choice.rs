//! Which CPU a plug or an unplug takes: the one cpuplugd takes, so that
//! plugtop's log names the same CPU as cpuplugd's in the same interval.
//!
//! cpuplugd walks the `cpuN` directories of /sys/devices/system/cpu in
//! alphabetical order of their names (`cpu0, cpu1, cpu10, cpu11, cpu2, …`),
//! passes over a CPU without an `online` file (it cannot be hotplugged),
//! plugs the first whose `configure` reads 1 and `online` reads 0, unplugs
//! the first whose `online` reads 1, and tries the next in the same order
//! when a write fails. Every actuator (the real root, the simulator) orders
//! and filters its CPUs here; only how it reads them differs.
//!
//! One rule is plugtop's own: the last online CPU is never unplugged
//! (cpuplugd would leave it to the kernel to refuse; a root whose files lie
//! would not refuse).

use std::cmp::Ordering;

/// The two changes of a CPU's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuChange {
    Plug,
    Unplug,
}

impl CpuChange {
    /// The verb, for messages ("no CPU can be plugged").
    pub fn done(self) -> &'static str {
        match self {
            CpuChange::Plug => "plugged",
            CpuChange::Unplug => "unplugged",
        }
    }
}

/// What a CPU's `online` file says, as cpuplugd reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Online {
    /// No `online` file: the kernel cannot take this CPU offline, so it
    /// is online and never a candidate.
    Fixed,
    /// The number at the start of its first line (`None`: no number there,
    /// which cpuplugd treats as neither online nor offline).
    Reads(Option<i64>),
    /// The file is there but cannot be read (no permission, not a regular
    /// file): neither online nor offline, as for cpuplugd.
    Unreadable,
}

/// One CPU's state as the choice needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuFlags {
    pub id: u32,
    pub online: Online,
    /// What `configure` reads; `None` when it is absent, unreadable or
    /// holds no number (never configured, then).
    pub configure: Option<i64>,
}

impl CpuFlags {
    /// Whether `change` may take this CPU (before the last-CPU rule).
    pub fn wanted(&self, change: CpuChange) -> bool {
        match change {
            CpuChange::Plug => self.configure == Some(1) && self.online == Online::Reads(Some(0)),
            CpuChange::Unplug => self.online == Online::Reads(Some(1)),
        }
    }

    /// Whether this CPU is online and stays so: its `online` reads 1, or
    /// it has no `online` file and so cannot go offline.
    pub fn online(&self) -> bool {
        matches!(self.online, Online::Fixed | Online::Reads(Some(1)))
    }
}

/// The name order of CPU ids: `cpu10` comes before `cpu2`, as the
/// directory names compare byte by byte (C's `strcmp`, which the C
/// locale's `alphasort` is).
pub fn name_order(a: u32, b: u32) -> Ordering {
    let (mut x, mut y) = ([0u8; 10], [0u8; 10]);
    digits(a, &mut x).cmp(digits(b, &mut y))
}

/// `id` in decimal, written into `buf`.
fn digits(mut id: u32, buf: &mut [u8; 10]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (id % 10) as u8;
        id /= 10;
        if id == 0 {
            return &buf[at..];
        }
    }
}

/// Sorts CPU ids into the order cpuplugd visits them.
pub fn walk_order(ids: &mut [u32]) {
    ids.sort_unstable_by(|a, b| name_order(*a, *b));
}

/// The CPUs the next `count` changes would take, in order, if every write
/// succeeded: the wanted ones in name order, and for unplugs never the
/// last online CPU.
pub fn choose(change: CpuChange, cpus: &[CpuFlags], count: usize) -> Vec<u32> {
    let room = match change {
        CpuChange::Plug => count,
        CpuChange::Unplug => {
            let online = cpus.iter().filter(|c| c.online()).count();
            count.min(online.saturating_sub(1))
        }
    };
    let mut ids: Vec<u32> = cpus
        .iter()
        .filter(|c| c.wanted(change))
        .map(|c| c.id)
        .collect();
    walk_order(&mut ids);
    ids.truncate(room);
    ids
}

/// The CPU id a directory name stands for: `cpu` and a decimal number as
/// the kernel writes it. Other names (`cpufreq`, `cpu01`) are passed over
/// (cpuplugd would stop at one it cannot read a number from; the kernel
/// never makes them).
pub fn cpu_of_name(name: &[u8]) -> Option<u32> {
    let digits = name.strip_prefix(b"cpu")?;
    let canonical = match digits {
        [] => false,
        [b'0'] => true,
        [first, ..] => *first != b'0' && digits.iter().all(u8::is_ascii_digit),
    };
    if !canonical {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(id: u32, online: Option<i64>, configure: Option<i64>) -> CpuFlags {
        CpuFlags {
            id,
            online: Online::Reads(online),
            configure,
        }
    }

    #[test]
    fn ids_are_walked_in_name_order() {
        let mut ids: Vec<u32> = (0..12).rev().collect();
        walk_order(&mut ids);
        assert_eq!(ids, [0, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9]);
        let mut wide = vec![100, 9, 1000, 99, 10, 1, 0, u32::MAX, 429_496_729];
        walk_order(&mut wide);
        assert_eq!(
            wide,
            [0, 1, 10, 100, 1000, 429_496_729, u32::MAX, 9, 99],
            "strcmp order of the decimal names"
        );
    }

    #[test]
    fn the_name_order_is_the_order_of_the_names() {
        for a in [0u32, 1, 2, 9, 10, 11, 19, 20, 99, 100, 101, 255, 256, 1000] {
            for b in [0u32, 1, 2, 9, 10, 11, 19, 20, 99, 100, 101, 255, 256, 1000] {
                assert_eq!(
                    name_order(a, b),
                    format!("cpu{a}").cmp(&format!("cpu{b}")),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn plug_takes_the_first_configured_offline_cpu_by_name() {
        let cpus: Vec<CpuFlags> = (0..12)
            .map(|i| cpu(i, Some(i64::from(i < 2)), Some(1)))
            .collect();
        assert_eq!(choose(CpuChange::Plug, &cpus, 1), [10]);
        assert_eq!(choose(CpuChange::Plug, &cpus, 4), [10, 11, 2, 3]);
        assert_eq!(
            choose(CpuChange::Plug, &cpus, 99),
            [10, 11, 2, 3, 4, 5, 6, 7, 8, 9]
        );
    }

    #[test]
    fn unplug_takes_the_first_online_cpu_by_name_and_never_the_last() {
        let cpus: Vec<CpuFlags> = [0, 1, 10, 11, 2]
            .into_iter()
            .map(|i| cpu(i, Some(1), Some(1)))
            .collect();
        assert_eq!(choose(CpuChange::Unplug, &cpus, 1), [0]);
        assert_eq!(
            choose(CpuChange::Unplug, &cpus, 99),
            [0, 1, 10, 11],
            "cpu2 stays: it would be the last"
        );
        let one = [cpu(7, Some(1), Some(1)), cpu(3, Some(0), Some(1))];
        assert!(choose(CpuChange::Unplug, &one, 1).is_empty());
    }

    #[test]
    fn a_cpu_without_an_online_file_is_never_chosen_but_keeps_the_guest_up() {
        let cpus = [
            CpuFlags {
                id: 0,
                online: Online::Fixed,
                configure: Some(1),
            },
            cpu(1, Some(1), Some(1)),
            cpu(2, Some(0), Some(1)),
        ];
        assert_eq!(
            choose(CpuChange::Unplug, &cpus, 5),
            [1],
            "cpu0 stays online"
        );
        assert_eq!(choose(CpuChange::Plug, &cpus, 5), [2]);
    }

    #[test]
    fn unconfigured_odd_and_unreadable_cpus_are_passed_over() {
        let cpus = [
            cpu(1, Some(0), Some(0)),
            cpu(2, Some(0), None),
            cpu(3, Some(2), Some(1)),
            cpu(4, None, Some(1)),
            CpuFlags {
                id: 5,
                online: Online::Unreadable,
                configure: Some(1),
            },
            cpu(6, Some(-1), Some(1)),
            cpu(7, Some(0), Some(2)),
            cpu(8, Some(0), Some(1)),
            cpu(9, Some(1), Some(1)),
        ];
        assert_eq!(choose(CpuChange::Plug, &cpus, 9), [8]);
        assert!(
            choose(CpuChange::Unplug, &cpus, 9).is_empty(),
            "cpu9 is the only one that reads online"
        );
    }

    #[test]
    fn only_names_the_kernel_makes_are_cpus() {
        assert_eq!(cpu_of_name(b"cpu0"), Some(0));
        assert_eq!(cpu_of_name(b"cpu10"), Some(10));
        assert_eq!(cpu_of_name(b"cpu4294967295"), Some(u32::MAX));
        for bad in [
            &b"cpu"[..],
            b"cpu01",
            b"cpu00",
            b"cpufreq",
            b"cpuidle",
            b"cpu1a",
            b"cpu-1",
            b"cpu+1",
            b"cpu 1",
            b"xcpu1",
            b"CPU1",
            b"cpu4294967296",
            b"cpu\xff",
        ] {
            assert_eq!(cpu_of_name(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
