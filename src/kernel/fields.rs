//! `/proc/meminfo` and `/proc/vmstat` as name/value tables. The names are
//! shared between samples (the kernel prints the same lines in the same
//! order every time), so a new reading only compares names against the last
//! layout and keeps the text: a number is read when something asks for it.
//! The rules name a handful of the hundreds of lines, and reading every
//! number each interval cost more than the whole evaluation.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::bytes::{find_from, holds_at};
use crate::rules::number::{leading_value, value_at};

static NEXT_LAYOUT: AtomicU64 = AtomicU64::new(1);

/// The names of one file's lines, in order.
#[derive(Debug)]
pub struct Layout {
    id: u64,
    names: Vec<Box<str>>,
    index: HashMap<Box<str>, u32>,
}

impl Layout {
    /// A layout of these names (a new identity each time).
    pub fn new(names: Vec<Box<str>>) -> Self {
        let mut index = HashMap::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            // cpuplugd takes the first line with a name.
            index.entry(n.clone()).or_insert(i as u32);
        }
        Layout {
            id: NEXT_LAYOUT.fetch_add(1, Ordering::Relaxed),
            names,
            index,
        }
    }

    /// Identifies this layout, so lookups can be cached per layout.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Position of the first line called `name`.
    pub fn position(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }

    /// The names in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|n| &**n)
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when the file had no lines.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// One reading of a name/value file.
#[derive(Debug, Clone)]
pub struct FieldTable {
    layout: Arc<Layout>,
    values: Values,
}

/// A reading's numbers: read already, or still in the file's text.
#[derive(Debug, Clone)]
enum Values {
    Read(Vec<f64>),
    /// The text and where each line's number starts (after the separator).
    Text {
        text: Box<[u8]>,
        starts: Box<[u32]>,
    },
}

impl FieldTable {
    /// A table of `values` in the order of `layout` (for decoders).
    pub fn new(layout: Arc<Layout>, values: Vec<f64>) -> Self {
        FieldTable {
            layout,
            values: Values::Read(values),
        }
    }

    /// The values in layout order (read from the text if still there).
    pub fn values(&self) -> Cow<'_, [f64]> {
        match &self.values {
            Values::Read(v) => Cow::Borrowed(v),
            Values::Text { text, starts } => Cow::Owned(
                starts
                    .iter()
                    .map(|s| value_at(text, *s as usize).0)
                    .collect(),
            ),
        }
    }

    /// A table from names and values (for tests and the simulator).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, f64)>) -> Self {
        let (names, values): (Vec<Box<str>>, Vec<f64>) =
            pairs.into_iter().map(|(n, v)| (Box::from(n), v)).unzip();
        FieldTable::new(Arc::new(Layout::new(names)), values)
    }

    /// The value on the first line called `name`, as cpuplugd reads it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.layout.position(name).map(|i| self.value_at(i))
    }

    /// The shared layout (names).
    pub fn layout(&self) -> &Arc<Layout> {
        &self.layout
    }

    /// The value at a position of the layout: what `strtod` reads after the
    /// separator, 0 when there is no number (as cpuplugd reads it).
    pub fn value_at(&self, position: u32) -> f64 {
        let i = position as usize;
        // A decoder's table may hold fewer numbers than names (a damaged
        // recording): those read as a missing number does, 0.
        match &self.values {
            Values::Read(v) => v.get(i).copied().unwrap_or(0.0),
            Values::Text { text, starts } => {
                starts.get(i).map_or(0.0, |s| value_at(text, *s as usize).0)
            }
        }
    }

    /// Names and values in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.layout
            .names()
            .enumerate()
            .map(|(i, n)| (n, self.value_at(i as u32)))
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    /// True when the file had no lines.
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }
}

/// A line of a /proc file that cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed {
    /// 1-based line number.
    pub line: usize,
    pub what: &'static str,
}

/// Parses successive readings of one file, reusing the last layout.
#[derive(Debug)]
pub struct FieldParser {
    separator: u8,
    layout: Arc<Layout>,
}

impl FieldParser {
    /// A parser for lines `NAME<separator>VALUE`: `:` for meminfo, ` ` for vmstat.
    pub fn new(separator: u8) -> Self {
        FieldParser {
            separator,
            layout: Arc::new(Layout::new(Vec::new())),
        }
    }

    /// Reads one file's text as cpuplugd would (see `parse_new`); the
    /// numbers stay in the text until asked for.
    pub fn parse(&mut self, text: &[u8]) -> Result<FieldTable, Malformed> {
        match self.parse_known(text) {
            Some(starts) => Ok(FieldTable {
                layout: Arc::clone(&self.layout),
                values: Values::Text {
                    text: Box::from(text),
                    starts,
                },
            }),
            None => self.parse_new(text),
        }
    }

    /// The usual case: the entries are the names of the last layout, in
    /// order. Gives where each number starts; an entry's number cannot
    /// change where the next entry starts (that is the newline after the
    /// separator), so the numbers need not be read to know the layout holds.
    fn parse_known(&self, text: &[u8]) -> Option<Box<[u32]>> {
        let names = &self.layout.names;
        if names.is_empty() || u32::try_from(text.len()).is_err() {
            return None;
        }
        let sep = self.separator;
        let mut starts = vec![0u32; names.len()].into_boxed_slice();
        let mut pos = 0;
        for (name, start) in names.iter().zip(starts.iter_mut()) {
            let name = name.as_bytes();
            let end = pos + name.len();
            if text.get(end) != Some(&sep) || !holds_at(text, pos, name) {
                return None;
            }
            *start = (end + 1) as u32;
            pos = find_from(text, end + 1, b'\n').map_or(text.len(), |nl| nl + 1);
        }
        // More lines than the layout knows: the file changed.
        if find_from(text, pos, sep).is_some() {
            return None;
        }
        Some(starts)
    }

    /// A new layout: the kernel added or reordered lines (or first reading).
    ///
    /// Read the way cpuplugd's `get_proc_value` scans the file, so that a
    /// damaged line decides what it decides (edge case G): from where the
    /// last entry ended, the name is everything up to the next separator,
    /// the value is what `strtod` reads after it (0 when nothing), and the
    /// next entry starts after the newline that follows the separator. A
    /// line without a separator therefore swallows the next line's name
    /// (`Garbage line\nMemFree`), and neither can be found by a rule, while
    /// every later line still can.
    #[inline(never)]
    fn parse_new(&mut self, text: &[u8]) -> Result<FieldTable, Malformed> {
        let mut names: Vec<Box<str>> = Vec::new();
        let mut values = Vec::new();
        let mut pos = 0;
        while let Some(off) = text[pos..].iter().position(|b| *b == self.separator) {
            let sep = pos + off;
            names.push(Box::from(String::from_utf8_lossy(&text[pos..sep]).as_ref()));
            values.push(leading_value(&text[sep + 1..]));
            pos = match text[sep + 1..].iter().position(|b| *b == b'\n') {
                Some(nl) => sep + 1 + nl + 1,
                None => text.len(),
            };
        }
        self.layout = Arc::new(Layout::new(names));
        Ok(FieldTable::new(Arc::clone(&self.layout), values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_reused_while_names_stay_the_same() {
        let mut p = FieldParser::new(b':');
        let a = p
            .parse(b"MemTotal:  100 kB\nMemFree:    40 kB\n")
            .expect("valid");
        let b = p
            .parse(b"MemTotal:  100 kB\nMemFree:    41 kB\n")
            .expect("valid");
        assert_eq!(a.layout().id(), b.layout().id());
        assert_eq!(b.get("MemFree"), Some(41.0));
        let c = p
            .parse(b"MemTotal:  100 kB\nShmem: 3 kB\nMemFree: 42 kB\n")
            .expect("valid");
        assert_ne!(b.layout().id(), c.layout().id());
        assert_eq!(c.get("MemFree"), Some(42.0));
        assert_eq!(c.get("Shmem"), Some(3.0));
        assert_eq!(c.get("Mem"), None);
        // cpuplugd reads a missing number as 0 and lets a line without a
        // colon swallow the next line's name.
        let odd = p
            .parse(b"MemTotal:  100 kB\nMemFree:\nGarbage line\nCached: 5 kB\nShmem: 1 kB\n")
            .expect("read as cpuplugd reads it");
        assert_eq!(odd.get("MemFree"), Some(0.0));
        assert_eq!(odd.get("Cached"), None);
        assert_eq!(odd.get("Shmem"), Some(1.0));
    }

    /// What a parser that has never seen the file reads (the slow path).
    fn fresh(separator: u8, text: &[u8]) -> Vec<(String, f64)> {
        let table = FieldParser::new(separator)
            .parse(text)
            .expect("parse_new never fails");
        table.iter().map(|(n, v)| (n.to_string(), v)).collect()
    }

    fn line() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            8 => (0usize..4, proptest::num::u64::ANY, 0usize..12).prop_map(|(name, v, pad)| {
                let names = ["MemTotal", "MemFree", "Cached", "Active(anon)"];
                format!("{}:{}{} kB", names[name], " ".repeat(pad), v % 10_000_000).into_bytes()
            }),
            1 => Just(b"MemFree:".to_vec()),
            1 => Just(b"Garbage line".to_vec()),
            1 => Just(b"Odd: -1.5e3 kB".to_vec()),
            1 => Just(b"Cached:\t0x10".to_vec()),
        ]
    }

    proptest::proptest! {
        /// A parser that keeps the last layout and reads numbers when asked
        /// reads every file exactly as one reading it afresh.
        #[test]
        fn reading_against_a_kept_layout_reads_as_afresh(
            first in proptest::collection::vec(line(), 0..8),
            second in proptest::collection::vec(line(), 0..8),
            newline_at_end in proptest::bool::ANY,
        ) {
            let join = |lines: &[Vec<u8>]| {
                let mut t = lines.join(&b'\n');
                if newline_at_end && !t.is_empty() {
                    t.push(b'\n');
                }
                t
            };
            let mut p = FieldParser::new(b':');
            // Other digits, same layout: the kept-layout path.
            let shifted = |t: Vec<u8>| -> Vec<u8> {
                t.into_iter()
                    .map(|b| if b.is_ascii_digit() { b'0' + (b - b'0' + 1) % 10 } else { b })
                    .collect()
            };
            let texts = [
                join(&first),
                shifted(join(&first)),
                join(&second),
                shifted(join(&second)),
                join(&first),
            ];
            for text in texts {
                let kept = p.parse(&text).expect("never fails");
                let kept: Vec<(String, f64)> = kept.iter().map(|(n, v)| (n.to_string(), v)).collect();
                let afresh = fresh(b':', &text);
                proptest::prop_assert_eq!(kept.len(), afresh.len());
                for ((n1, v1), (n2, v2)) in kept.iter().zip(&afresh) {
                    proptest::prop_assert_eq!(n1, n2);
                    proptest::prop_assert_eq!(v1.to_bits(), v2.to_bits());
                }
            }
        }
    }
}
