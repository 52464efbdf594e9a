//! `/proc/meminfo` and `/proc/vmstat` as name/value tables. The names are
//! shared between samples (the kernel prints the same lines in the same
//! order every time), so a new reading only compares names against the last
//! layout and stores its numbers: no per-field allocation per interval.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
    values: Vec<f64>,
}

impl FieldTable {
    /// A table of `values` in the order of `layout` (for decoders).
    pub fn new(layout: Arc<Layout>, values: Vec<f64>) -> Self {
        FieldTable { layout, values }
    }

    /// The values in layout order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// A table from names and values (for tests and the simulator).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, f64)>) -> Self {
        let (names, values): (Vec<Box<str>>, Vec<f64>) =
            pairs.into_iter().map(|(n, v)| (Box::from(n), v)).unzip();
        FieldTable {
            layout: Arc::new(Layout::new(names)),
            values,
        }
    }

    /// The value on the first line called `name`, as cpuplugd reads it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.layout.position(name).map(|i| self.values[i as usize])
    }

    /// The shared layout (names).
    pub fn layout(&self) -> &Arc<Layout> {
        &self.layout
    }

    /// The value at a position of the layout.
    pub fn value_at(&self, position: u32) -> f64 {
        self.values[position as usize]
    }

    /// Names and values in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.layout.names().zip(self.values.iter().copied())
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when the file had no lines.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
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

    /// Reads one file's text; a line without the separator or without a
    /// number is an error naming the line (1-based).
    pub fn parse(&mut self, text: &[u8]) -> Result<FieldTable, Malformed> {
        match self.parse_known(text) {
            Some(values) => Ok(FieldTable {
                layout: Arc::clone(&self.layout),
                values,
            }),
            None => self.parse_new(text),
        }
    }

    /// The usual case: the lines are the names of the last layout, in order.
    fn parse_known(&self, text: &[u8]) -> Option<Vec<f64>> {
        let names = &self.layout.names;
        if names.is_empty() {
            return None;
        }
        let sep = self.separator;
        let mut values = Vec::with_capacity(names.len());
        let mut pos = 0;
        for name in names.iter() {
            let name = name.as_bytes();
            let end = pos + name.len();
            match text.get(pos..=end) {
                Some(entry) if entry[name.len()] == sep && &entry[..name.len()] == name => {}
                _ => return None,
            }
            let (v, after, ok) = value_at(text, end + 1);
            if !ok {
                return None;
            }
            values.push(v);
            let mut newline = after;
            while newline < text.len() && text[newline] != b'\n' {
                newline += 1;
            }
            pos = newline + 1;
        }
        // More lines than the layout knows: the file changed.
        if text.get(pos..).is_some_and(|rest| rest.contains(&sep)) {
            return None;
        }
        Some(values)
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
        Ok(FieldTable {
            layout: Arc::clone(&self.layout),
            values,
        })
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
}
