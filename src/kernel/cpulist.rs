//! CPU lists as sysfs prints them (`0-3,8,10-11`).

use super::procfs_text::parse_long;

/// A CPU list, with the count cpuplugd would take from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuList {
    /// The CPU numbers listed, in order.
    pub ids: Vec<u32>,
    /// cpuplugd's count: each `a-b` counts `b - a + 1`, anything else 1.
    pub count: u32,
}

impl CpuList {
    /// Reads the first line of a sysfs CPU list. `None` for text cpuplugd
    /// would call malformed (a range that is not `N-M`).
    pub fn parse(text: &[u8]) -> Option<CpuList> {
        let line = text.split(|b| *b == b'\n').next().unwrap_or(&[]);
        let mut list = CpuList::default();
        for part in line.split(|b| *b == b',') {
            if part.is_empty() {
                continue;
            }
            if let Some(dash) = part.iter().position(|b| *b == b'-') {
                let start = parse_long(&part[..dash])?;
                let end = parse_long(&part[dash + 1..])?;
                list.count = list
                    .count
                    .wrapping_add((end.wrapping_sub(start)).wrapping_add(1) as u32);
                if start >= 0 && end >= start && end - start < 65_536 {
                    list.ids.extend(start as u32..=end as u32);
                }
            } else {
                list.count = list.count.wrapping_add(1);
                if let Some(id) = parse_long(part).filter(|v| *v >= 0) {
                    list.ids.push(id as u32);
                }
            }
        }
        Some(list)
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
    fn lists_count_like_cpuplugd() {
        let l = CpuList::parse(b"0-3,8,10-11\n").unwrap_or_default();
        assert_eq!(l.count, 7);
        assert_eq!(l.ids, vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(CpuList::parse(b"0\n").map(|l| l.count), Some(1));
        assert_eq!(CpuList::parse(b"\n").map(|l| l.count), Some(0));
        assert_eq!(CpuList::parse(b"0-x"), None);
    }
}
