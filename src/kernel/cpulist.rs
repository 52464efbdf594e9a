//! CPU lists as sysfs prints them (`0-3,8,10-11`).

use super::integer::parse_long;

/// More CPUs than any kernel supports (NR_CPUS is at most 8192 today): a
/// list naming more is damaged.
pub const MAX_CPUS: u32 = 65_536;

/// A CPU list, with the count cpuplugd would take from it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CpuList {
    /// The CPU numbers listed, in order. Shared: a list that did not
    /// change from one reading to the next is the same list (a recording of
    /// 65,536 CPUs kept 600 copies of it).
    pub ids: std::sync::Arc<[u32]>,
    /// cpuplugd's count, a C `int`: each `a-b` counts `b - a + 1`, anything
    /// else 1. A reversed range (`3-1`) counts as -1, and cpuplugd stops on a
    /// count of 0 or less (edge case E), so the count keeps its sign.
    pub count: i32,
}

impl Clone for CpuList {
    fn clone(&self) -> Self {
        CpuList {
            ids: self.ids.clone(),
            count: self.count,
        }
    }

    /// Into a list copied before, without allocating (a sample copy).
    fn clone_from(&mut self, source: &Self) {
        self.ids = std::sync::Arc::clone(&source.ids);
        self.count = source.count;
    }
}

impl CpuList {
    /// Reads the first line of a sysfs CPU list. `None` for text cpuplugd
    /// would call malformed (a range that is not `N-M`).
    pub fn parse(text: &[u8]) -> Option<CpuList> {
        let line = text.split(|b| *b == b'\n').next().unwrap_or(&[]);
        Self::parse_range(line).or_else(|| Self::parse_line(line))
    }

    /// The usual list, one range `A-B` of short numbers, read directly
    /// (`None` for anything else). Both CPU lists are read every interval.
    fn parse_range(line: &[u8]) -> Option<CpuList> {
        let dash = line.iter().position(|b| *b == b'-')?;
        let number = |digits: &[u8]| -> Option<u32> {
            if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some(digits.iter().fold(0, |a, d| a * 10 + u32::from(d - b'0')))
        };
        let (start, end) = (number(&line[..dash])?, number(&line[dash + 1..])?);
        if start > end || end >= MAX_CPUS {
            return None;
        }
        Some(CpuList {
            ids: (start..end + 1).collect(),
            count: (end - start + 1) as i32,
        })
    }

    /// Any list, as cpuplugd counts it.
    fn parse_line(line: &[u8]) -> Option<CpuList> {
        // Most lists are a range or two: room for a guest's CPUs up front
        // instead of growing range by range.
        let mut ids: Vec<u32> = Vec::with_capacity(16);
        let mut count: i32 = 0;
        for part in line.split(|b| *b == b',') {
            if part.is_empty() {
                continue;
            }
            if let Some(dash) = part.iter().position(|b| *b == b'-') {
                let start = parse_long(&part[..dash])?;
                let end = parse_long(&part[dash + 1..])?;
                let span = (end as i32).wrapping_sub(start as i32).wrapping_add(1);
                count = count.wrapping_add(span);
                // However many ranges a damaged list repeats, the ids never
                // grow past MAX_CPUS (the count then tells it is not exact).
                let room = MAX_CPUS as usize - ids.len();
                if start >= 0
                    && end >= start
                    && end < i64::from(MAX_CPUS)
                    && end - start < room as i64
                {
                    ids.extend(start as u32..=end as u32);
                }
            } else {
                count = count.wrapping_add(1);
                if let Some(id) = parse_long(part).filter(|v| (0..i64::from(MAX_CPUS)).contains(v))
                    && ids.len() < MAX_CPUS as usize
                {
                    ids.push(id as u32);
                }
            }
        }
        Some(CpuList {
            ids: ids.into(),
            count,
        })
    }

    /// CPUs 0 to `n` - 1, as sysfs lists `0-{n-1}`.
    pub fn first(n: u32) -> CpuList {
        CpuList {
            ids: (0..n).collect(),
            count: i32::try_from(n).unwrap_or(i32::MAX),
        }
    }

    /// The count as a number of CPUs (0 when cpuplugd's count is not positive).
    pub fn cpus(&self) -> u32 {
        u32::try_from(self.count).unwrap_or(0)
    }

    /// True when the ids are exactly what the count says (no reversed
    /// range, nothing past [`MAX_CPUS`], no garbage): what a start state
    /// must be to be restored exactly.
    pub fn exact(&self) -> bool {
        !self.ids.is_empty()
            && self.count == self.ids.len() as i32
            && self.ids.windows(2).all(|w| w[0] < w[1])
    }

    /// True when `id` is listed.
    pub fn contains(&self, id: u32) -> bool {
        self.ids.contains(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_lists_never_hold_more_than_max_cpus() {
        // Found by the proc_parsers fuzz target: a repeated range grew the
        // ids without bound.
        let repeated = "0-65535,".repeat(64);
        let l = CpuList::parse(repeated.as_bytes()).unwrap_or_default();
        assert!(l.ids.len() <= MAX_CPUS as usize);
        assert!(!l.exact());
        let l = CpuList::parse(b"0,0\n").unwrap_or_default();
        assert!(!l.exact(), "a CPU listed twice");
        let l = CpuList::parse(b"4294967296,1\n").unwrap_or_default();
        assert_eq!(*l.ids, [1], "an id past MAX_CPUS is not wrapped");
        assert!(!l.exact());
        let crash = include_bytes!("../../tests/data/fuzz/cpulist-unbounded-ids");
        let l = CpuList::parse(crash).unwrap_or_default();
        assert!(l.ids.len() <= MAX_CPUS as usize);
    }

    proptest::proptest! {
        /// The short path for one range reads what the general one reads.
        #[test]
        fn a_single_range_reads_as_any_list(
            line in proptest::collection::vec(proptest::prop_oneof![
                8 => b'0'..=b'9',
                2 => proptest::strategy::Just(b'-'),
                1 => proptest::strategy::Just(b','),
                1 => proptest::strategy::Just(b' '),
                1 => proptest::num::u8::ANY,
            ], 0..14),
        ) {
            if let Some(fast) = CpuList::parse_range(&line) {
                proptest::prop_assert_eq!(Some(fast), CpuList::parse_line(&line));
            }
        }
    }

    #[test]
    fn lists_count_like_cpuplugd() {
        let l = CpuList::parse(b"0-3,8,10-11\n").unwrap_or_default();
        assert_eq!(l.count, 7);
        assert_eq!(*l.ids, [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(CpuList::parse(b"0\n").map(|l| l.count), Some(1));
        assert_eq!(CpuList::parse(b"\n").map(|l| l.count), Some(0));
        assert_eq!(CpuList::parse(b"0-x"), None);
        assert_eq!(CpuList::parse(b"3-1\n").map(|l| l.count), Some(-1));
    }
}
