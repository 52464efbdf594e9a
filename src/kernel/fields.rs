//! `/proc/meminfo` and `/proc/vmstat` as name/value tables. The names are
//! shared between samples (the kernel prints the same lines in the same
//! order every time), so a new reading only compares names against the last
//! layout and keeps the text: a number is read when something asks for it.
//! The rules name a handful of the hundreds of lines, and reading every
//! number each interval cost more than the whole evaluation.
//!
//! A reader that knows which names its consumer asks for (see
//! [`FieldParser::narrow`]) compares only the lines up to the last of them:
//! cpuplugd scans from the top for the first line with a name, so an
//! unchanged prefix decides those names whatever follows. The rest of the
//! reading is checked the first time anything looks past the prefix.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::bytes::{Probe, find_from, holds_at, same_shape};
use crate::number::{leading_value, value_at};

static NEXT_LAYOUT: AtomicU64 = AtomicU64::new(1);

/// The names of one file's lines, in order. Kept compact: a damaged or
/// hostile file can have a million one-letter lines, and a string and a
/// hash entry for each cost a hundred times the file.
#[derive(Debug)]
pub struct Layout {
    id: u64,
    /// Every name, one after another.
    text: String,
    /// Where each name ends in `text`.
    ends: Vec<usize>,
    /// The position of each name's first line, sorted by name.
    index: Vec<u32>,
}

impl Layout {
    /// A layout of these names (a new identity each time).
    pub fn new(names: Vec<Box<str>>) -> Self {
        Layout::of(names.iter().map(|n| &**n))
    }

    /// A layout of these names, in order.
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut text = String::new();
        let mut ends = Vec::new();
        for name in names {
            text.push_str(name);
            ends.push(text.len());
        }
        let mut layout = Layout {
            id: NEXT_LAYOUT.fetch_add(1, Ordering::Relaxed),
            text,
            ends,
            index: Vec::new(),
        };
        let mut index: Vec<u32> = (0..layout.ends.len() as u32).collect();
        // cpuplugd takes the first line with a name: equal names sort by
        // position, and only the first is kept.
        index.sort_unstable_by(|a, b| layout.name(*a).cmp(layout.name(*b)).then(a.cmp(b)));
        index.dedup_by(|later, first| layout.name(*later) == layout.name(*first));
        layout.index = index;
        layout
    }

    /// Identifies this layout, so lookups can be cached per layout.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The name at `position`.
    fn name(&self, position: u32) -> &str {
        let i = position as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// Position of the first line called `name`.
    pub fn position(&self, name: &str) -> Option<u32> {
        let at = self
            .index
            .binary_search_by(|p| self.name(*p).cmp(name))
            .ok()?;
        Some(self.index[at])
    }

    /// The names in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        (0..self.ends.len() as u32).map(|i| self.name(i))
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when the file had no lines.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// How many lines must match for every one of `names` to be decided:
    /// up to the last of them, or all when one is missing (only the whole
    /// file can show that it is still missing).
    fn lines_deciding(&self, names: Option<&[Box<str>]>) -> usize {
        let Some(names) = names else {
            return self.len();
        };
        let mut upto = 0;
        for name in names {
            match self.position(name) {
                Some(p) => upto = upto.max(p as usize + 1),
                None => return self.len(),
            }
        }
        upto
    }
}

/// One reading of a name/value file.
#[derive(Debug)]
pub struct FieldTable {
    /// The layout the reading was checked against (its first
    /// `starts.len()` lines, when the numbers are still text).
    layout: Arc<Layout>,
    values: Values,
}

// A copy into a table copied before keeps its numbers' buffer when both
// hold numbers (the loop check's hypothetical readings, every interval
// that acts).
impl Clone for FieldTable {
    fn clone(&self) -> Self {
        FieldTable {
            layout: Arc::clone(&self.layout),
            values: self.values.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.layout.clone_from(&source.layout);
        match (&mut self.values, &source.values) {
            (Values::Read(to), Values::Read(from)) => to.clone_from(from),
            (to, from) => *to = from.clone(),
        }
    }
}

/// A reading's numbers: read already, or still in the file's text.
#[derive(Debug, Clone)]
enum Values {
    Read(Vec<f64>),
    /// The text and where each checked line's number starts.
    Text {
        kept: Arc<Kept>,
        rest: Option<Unchecked>,
    },
}

/// A reading's text and where each checked line's number starts (after
/// the separator). The parser keeps a few of these and refills one once
/// no table holds it: a /proc file's text is too large for the
/// allocator's fast path, and allocating two each interval cost a tenth
/// of deciding it.
#[derive(Debug, Default)]
struct Kept {
    text: Vec<u8>,
    starts: Vec<u32>,
}

/// More lines than any kernel's meminfo (about 60) or vmstat (about 200)
/// has: a layout this long is compared by name, without a prepared probe
/// per line, and its names are not listed for rule checks.
pub const KERNEL_LINES: usize = 4096;

/// How many texts a parser keeps for reuse: enough for the readings a
/// daemon holds (its rules' history, up to five back, the one it let go
/// of, the next), so that every reading reuses a text.
const KEPT_TEXTS: usize = 8;

/// The lines of a reading after the checked prefix.
#[derive(Debug, Clone)]
struct Unchecked {
    separator: u8,
    /// Where the first unchecked line starts.
    from: u32,
    checked: OnceLock<Rest>,
}

/// What the unchecked lines turned out to be.
#[derive(Debug, Clone)]
enum Rest {
    /// The layout's remaining names: where their numbers start.
    Same(Box<[u32]>),
    /// Something else: the whole reading, read afresh.
    Other(Box<FieldTable>),
}

impl FieldTable {
    /// A table of `values` in the order of `layout` (for decoders).
    pub fn new(layout: Arc<Layout>, values: Vec<f64>) -> Self {
        FieldTable {
            layout,
            values: Values::Read(values),
        }
    }

    /// The unchecked lines, checked now (once).
    fn rest(&self) -> Option<&Rest> {
        let Values::Text {
            kept,
            rest: Some(rest),
        } = &self.values
        else {
            return None;
        };
        let (text, starts) = (&kept.text, &kept.starts);
        Some(rest.checked.get_or_init(|| {
            let layout = &self.layout;
            let names = (starts.len() as u32..layout.len() as u32).map(|i| layout.name(i));
            match starts_of(text, rest.from as usize, names, rest.separator) {
                Some(more) => Rest::Same(more),
                None => Rest::Other(Box::new(read_afresh(text, rest.separator))),
            }
        }))
    }

    /// The values in layout order (read from the text if still there).
    pub fn values(&self) -> Cow<'_, [f64]> {
        match (&self.values, self.rest()) {
            (Values::Read(v), _) => Cow::Borrowed(v),
            (_, Some(Rest::Other(t))) => t.values(),
            (Values::Text { kept, .. }, more) => {
                let (text, starts) = (&kept.text, &kept.starts);
                let more = match more {
                    Some(Rest::Same(more)) => &more[..],
                    _ => &[],
                };
                Cow::Owned(
                    starts
                        .iter()
                        .chain(more)
                        .map(|s| value_at(text, *s as usize).0)
                        .collect(),
                )
            }
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
        let (layout, checked) = self.checked();
        match layout.position(name) {
            // The same lines up to here: the same first line of that name.
            Some(p) if (p as usize) < checked => Some(self.value_at(p)),
            _ => self.layout().position(name).map(|p| self.value_at(p)),
        }
    }

    /// The layout of the whole reading (checking the unchecked lines).
    pub fn layout(&self) -> &Arc<Layout> {
        match self.rest() {
            Some(Rest::Other(t)) => t.layout(),
            _ => &self.layout,
        }
    }

    /// The layout this reading was checked against and how many of its
    /// first lines were: positions below that count are this reading's
    /// too, without checking the rest (see [`FieldParser::narrow`]).
    pub fn checked(&self) -> (&Arc<Layout>, usize) {
        match &self.values {
            Values::Text {
                kept,
                rest: Some(_),
            } => (&self.layout, kept.starts.len()),
            _ => (&self.layout, self.layout.len()),
        }
    }

    /// The value at a position of [`FieldTable::layout`] (or below the
    /// count [`FieldTable::checked`] gives): what `strtod` reads after the
    /// separator, 0 when there is no number (as cpuplugd reads it).
    pub fn value_at(&self, position: u32) -> f64 {
        let i = position as usize;
        // A decoder's table may hold fewer numbers than names (a damaged
        // recording): those read as a missing number does, 0.
        match &self.values {
            Values::Read(v) => v.get(i).copied().unwrap_or(0.0),
            Values::Text { kept, .. } => match kept.starts.get(i) {
                Some(s) => value_at(&kept.text, *s as usize).0,
                None => match self.rest() {
                    Some(Rest::Same(more)) => more
                        .get(i - kept.starts.len())
                        .map_or(0.0, |s| value_at(&kept.text, *s as usize).0),
                    Some(Rest::Other(t)) => t.value_at(position),
                    None => 0.0,
                },
            },
        }
    }

    /// The names, to check rules against before they run; `None` for a
    /// file longer than any kernel's (the readings decide when they run).
    pub fn kernel_names(&self) -> Option<Vec<String>> {
        let layout = self.layout();
        (layout.len() <= KERNEL_LINES).then(|| layout.names().map(String::from).collect())
    }

    /// Names and values in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.layout()
            .names()
            .enumerate()
            .map(|(i, n)| (n, self.value_at(i as u32)))
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.layout().len()
    }

    /// True when the file had no lines.
    pub fn is_empty(&self) -> bool {
        self.layout().is_empty()
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
    /// The names the consumer asks for (`None`: it may look at any).
    wanted: Option<Box<[Box<str>]>>,
    /// How many of the layout's lines decide the wanted names.
    deciding: usize,
    /// Texts handed to tables, refilled once no table holds them.
    kept: VecDeque<Arc<Kept>>,
    /// Each name of the layout with its separator, ready to compare.
    probes: Vec<Probe>,
    /// The checked lines' bytes as they last held.
    shape: Shape,
}

/// The checked lines of the last reading that had them, as bytes, in
/// blocks of [`SHAPE_LINES`] lines: while a block's bytes have the same
/// names, separators and newlines at the same places (from where the block
/// before it ended) and no newline among its numbers, its lines are the
/// same lines (cpuplugd's scan finds each entry after the newline that
/// follows the separator), so it is compared in one pass ([`same_shape`])
/// instead of line by line. A number that grows a digit, a line moved,
/// renamed or cut moves a byte of its block out of place: that block's
/// lines are checked one by one and its shape taken again, the blocks
/// after it compared from where it now ends. Only for layouts no longer
/// than a kernel's (a hostile file's shape would cost three times its
/// length).
#[derive(Debug, Default)]
struct Shape {
    /// How many lines it covers (0: nothing known).
    lines: usize,
    blocks: Vec<Block>,
}

/// Lines per block of a [`Shape`]: a kernel's numbers change width now and
/// then, and only the block of such a line is checked line by line.
const SHAPE_LINES: usize = 16;

/// The bytes of a few lines, from the start of the first.
#[derive(Debug, Default)]
struct Block {
    /// How many bytes: up to and with the newline that ends the last line.
    len: usize,
    /// The lines' bytes, and the masks: 0xff where a byte must be the
    /// template's (names, separators, newlines), and where one must not
    /// be a newline (the numbers). Rounded up to whole words with zeros.
    template: Vec<u8>,
    fixed: Vec<u8>,
    free: Vec<u8>,
    /// Where each line's number starts, from the block's start.
    starts: Vec<u32>,
}

impl Block {
    /// Takes the shape of the lines of `text` from `from` to `end` whose
    /// numbers start at `starts` (from the text's start), the first line
    /// being line `first` of `layout`. False when the last line does not
    /// end with a newline.
    fn take(
        &mut self,
        text: &[u8],
        from: usize,
        end: usize,
        layout: &Layout,
        first: usize,
        starts: &[u32],
    ) -> bool {
        if end <= from || text.get(end - 1) != Some(&b'\n') {
            return false;
        }
        let len = end - from;
        let padded = len.div_ceil(8) * 8;
        self.template.clear();
        self.template.extend_from_slice(&text[from..end]);
        self.template.resize(padded, 0);
        for mask in [&mut self.fixed, &mut self.free] {
            mask.clear();
            mask.resize(padded, 0);
        }
        self.starts.clear();
        let mut line_start = 0;
        for (i, start) in starts.iter().enumerate() {
            let start = *start as usize - from;
            let next = match starts.get(i + 1) {
                Some(s) => *s as usize - from - layout.name((first + i + 1) as u32).len() - 1,
                None => len,
            };
            self.fixed[line_start..start].fill(0xff);
            self.fixed[next - 1] = 0xff;
            self.free[start..next - 1].fill(0xff);
            self.starts.push(start as u32);
            line_start = next;
        }
        self.len = len;
        true
    }
}

impl Shape {
    /// Checks `text`'s first `lines` lines against the shape, block by
    /// block, a block out of shape line by line with `probes` (and its
    /// shape taken again); notes where each number starts. Where the next
    /// line starts, or `None` when the lines are not the layout's.
    fn check(
        &mut self,
        text: &[u8],
        lines: usize,
        layout: &Layout,
        probes: &[Probe],
        starts: &mut Vec<u32>,
    ) -> Option<usize> {
        if self.lines != lines {
            self.lines = 0;
            self.blocks.clear();
        }
        let mut pos = 0;
        for (b, first) in (0..lines).step_by(SHAPE_LINES).enumerate() {
            let last = (first + SHAPE_LINES).min(lines);
            if let Some(block) = self.blocks.get(b)
                && same_shape(
                    &text[pos.min(text.len())..],
                    block.len,
                    &block.template,
                    &block.fixed,
                    &block.free,
                )
            {
                starts.extend(block.starts.iter().map(|s| s + pos as u32));
                pos += block.len;
                continue;
            }
            let at = starts.len();
            let end = probe_lines_from(text, pos, &probes[first..last], starts);
            let taken = end.is_some_and(|end| {
                if self.blocks.len() <= b {
                    self.blocks.resize_with(b + 1, Block::default);
                }
                self.blocks[b].take(text, pos, end, layout, first, &starts[at..])
            });
            if !taken {
                // Not the layout's lines, or no newline at the end: no
                // shape from here on.
                self.blocks.truncate(b);
            }
            pos = end?;
        }
        self.lines = if self.blocks.len() * SHAPE_LINES >= lines {
            lines
        } else {
            0
        };
        Some(pos)
    }
}

impl FieldParser {
    /// A parser for lines `NAME<separator>VALUE`: `:` for meminfo, ` ` for vmstat.
    pub fn new(separator: u8) -> Self {
        FieldParser {
            separator,
            layout: Arc::new(Layout::new(Vec::new())),
            wanted: None,
            deciding: 0,
            kept: VecDeque::new(),
            probes: Vec::new(),
            shape: Shape::default(),
        }
    }

    /// Says which names the readings will be asked for (`None`: any), so
    /// that each reading compares only the lines up to the last of them.
    /// Asking for others still works: the rest is checked then.
    pub fn narrow(&mut self, wanted: Option<&[String]>) {
        self.wanted = wanted.map(|w| w.iter().map(|n| Box::from(n.as_str())).collect());
        self.deciding = self.layout.lines_deciding(self.wanted.as_deref());
    }

    /// Reads one file's text as cpuplugd would (see `parse_new`); the
    /// numbers stay in the text until asked for.
    pub fn parse(&mut self, text: &[u8]) -> Result<FieldTable, Malformed> {
        if self.layout.is_empty() || u32::try_from(text.len()).is_err() {
            return self.parse_new(text);
        }
        let mut arc = self.take_free_text();
        let checked = match Arc::get_mut(&mut arc) {
            Some(kept) => self.check(kept, text),
            None => None,
        };
        if self.kept.len() < KEPT_TEXTS {
            self.kept.push_back(Arc::clone(&arc));
        }
        match checked {
            Some(rest) => Ok(FieldTable {
                layout: Arc::clone(&self.layout),
                values: Values::Text { kept: arc, rest },
            }),
            None => self.parse_new(text),
        }
    }

    /// Copies `text` into `kept` and checks it against the layout: the
    /// unchecked rest, if any, or `None` when the layout does not hold.
    fn check(&mut self, kept: &mut Kept, text: &[u8]) -> Option<Option<Unchecked>> {
        let (layout, sep) = (&self.layout, self.separator);
        kept.text.clear();
        kept.text.extend_from_slice(text);
        kept.starts.clear();
        let Kept { text, starts } = kept;
        let upto = self.deciding.min(layout.len());
        let end = if self.probes.len() == layout.len() {
            self.shape.check(text, upto, layout, &self.probes, starts)?
        } else {
            check_lines(
                text,
                0,
                (0..upto as u32).map(|i| layout.name(i)),
                sep,
                starts,
            )?
        };
        if upto == layout.len() {
            // More lines than the layout knows: the file changed.
            return find_from(text, end, sep).is_none().then_some(None);
        }
        Some(Some(Unchecked {
            separator: sep,
            from: end as u32,
            checked: OnceLock::new(),
        }))
    }

    /// A kept text no table holds any more (taken out), or a new one.
    /// Texts go back in the order they are handed out, so the first is
    /// the one held longest: in a run that lets readings go in turn, the
    /// free one.
    fn take_free_text(&mut self) -> Arc<Kept> {
        if let Some(first) = self.kept.front_mut()
            && Arc::get_mut(first).is_some()
        {
            return self.kept.pop_front().unwrap_or_default();
        }
        match self.kept.iter_mut().position(|k| Arc::get_mut(k).is_some()) {
            Some(i) => self.kept.remove(i).unwrap_or_default(),
            None => Arc::default(),
        }
    }

    /// A new layout: the kernel added or reordered lines (or first reading).
    #[inline(never)]
    fn parse_new(&mut self, text: &[u8]) -> Result<FieldTable, Malformed> {
        let table = read_afresh(text, self.separator);
        self.layout = Arc::clone(&table.layout);
        // The shape was of the old layout's lines.
        self.shape.lines = 0;
        self.probes = if self.layout.len() <= KERNEL_LINES {
            let mut key = Vec::new();
            (self.layout.names())
                .map(|name| {
                    key.clear();
                    key.extend_from_slice(name.as_bytes());
                    key.push(self.separator);
                    Probe::new(&key)
                })
                .collect()
        } else {
            Vec::new()
        };
        self.deciding = self.layout.lines_deciding(self.wanted.as_deref());
        Ok(table)
    }
}

/// The unchecked lines: from `from` on, the entries are `names`, in
/// order, and nothing follows. Gives where each number starts.
fn starts_of<'a>(
    text: &[u8],
    from: usize,
    names: impl ExactSizeIterator<Item = &'a str>,
    sep: u8,
) -> Option<Box<[u32]>> {
    let mut starts = Vec::with_capacity(names.len());
    let end = check_lines(text, from, names, sep, &mut starts)?;
    // More lines than the layout knows: the file changed.
    if find_from(text, end, sep).is_some() {
        return None;
    }
    Some(starts.into_boxed_slice())
}

/// As [`check_lines`], with each name and its separator ready to compare:
/// the path a line out of its last shape takes.
#[inline(never)]
fn probe_lines_from(
    text: &[u8],
    mut pos: usize,
    probes: &[Probe],
    starts: &mut Vec<u32>,
) -> Option<usize> {
    for probe in probes {
        if !probe.holds_at(text, pos) {
            return None;
        }
        let start = pos + probe.len();
        starts.push(start as u32);
        pos = find_from(text, start, b'\n').map_or(text.len(), |nl| nl + 1);
    }
    Some(pos)
}

/// Checks that the entries from `pos` on start with `names` and notes where
/// each number starts; gives where the next entry starts. An entry's number
/// cannot change where the next entry starts (that is the newline after the
/// separator), so the numbers need not be read to know the layout holds.
fn check_lines<'a>(
    text: &[u8],
    mut pos: usize,
    names: impl IntoIterator<Item = &'a str>,
    sep: u8,
    starts: &mut Vec<u32>,
) -> Option<usize> {
    for name in names {
        let name = name.as_bytes();
        let end = pos + name.len();
        if text.get(end) != Some(&sep) || !holds_at(text, pos, name) {
            return None;
        }
        starts.push((end + 1) as u32);
        pos = find_from(text, end + 1, b'\n').map_or(text.len(), |nl| nl + 1);
    }
    Some(pos)
}

/// Reads a file afresh, with a new layout.
///
/// Read the way cpuplugd's `get_proc_value` scans the file, so that a
/// damaged line decides what it decides (edge case G): from where the
/// last entry ended, the name is everything up to the next separator,
/// the value is what `strtod` reads after it (0 when nothing), and the
/// next entry starts after the newline that follows the separator. A
/// line without a separator therefore swallows the next line's name
/// (`Garbage line\nMemFree`), and neither can be found by a rule, while
/// every later line still can.
fn read_afresh(text: &[u8], separator: u8) -> FieldTable {
    let mut names = String::new();
    let mut ends = Vec::new();
    let mut values = Vec::new();
    let mut pos = 0;
    while let Some(off) = text[pos..].iter().position(|b| *b == separator) {
        let sep = pos + off;
        names.push_str(&String::from_utf8_lossy(&text[pos..sep]));
        ends.push(names.len());
        values.push(leading_value(&text[sep + 1..]));
        pos = match text[sep + 1..].iter().position(|b| *b == b'\n') {
            Some(nl) => sep + 1 + nl + 1,
            None => text.len(),
        };
    }
    let mut from = 0;
    let layout = Layout::of(ends.iter().map(|end| {
        let name = &names[from..*end];
        from = *end;
        name
    }));
    FieldTable::new(Arc::new(layout), values)
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

    #[test]
    fn a_narrowed_reading_checks_lines_only_up_to_the_last_wanted_one() {
        let mut p = FieldParser::new(b':');
        p.narrow(Some(&["MemFree".to_string()]));
        let first = p
            .parse(b"MemTotal: 100 kB\nMemFree: 40 kB\nCached: 5 kB\n")
            .expect("valid");
        assert_eq!(first.checked().1, 3, "a new layout is read whole");
        // The kernel grew a line after the wanted one.
        let second = p
            .parse(b"MemTotal: 100 kB\nMemFree: 41 kB\nNew: 1 kB\nCached: 6 kB\n")
            .expect("valid");
        let (layout, checked) = second.checked();
        assert_eq!((layout.id(), checked), (first.layout().id(), 2));
        assert_eq!(second.get("MemFree"), Some(41.0));
        // Looking past the checked lines finds the new layout.
        assert_eq!(second.get("Cached"), Some(6.0));
        assert_ne!(second.layout().id(), first.layout().id());
        assert_eq!(second.len(), 4);
    }

    #[test]
    fn texts_are_reused_only_once_no_table_holds_them() {
        let mut p = FieldParser::new(b' ');
        let text = |i: usize| format!("nr_free_pages {i}\npgscan {}\n", i * 7);
        // Held tables keep their own text, however many are held.
        let held: Vec<FieldTable> = (0..3 * KEPT_TEXTS)
            .map(|i| p.parse(text(i).as_bytes()).expect("valid"))
            .collect();
        for (i, t) in held.iter().enumerate() {
            assert_eq!(t.get("pgscan"), Some((i * 7) as f64), "held reading {i}");
        }
        drop(held);
        // Dropped ones are refilled: still right, and no more are kept.
        for i in 0..3 * KEPT_TEXTS {
            let t = p.parse(text(i).as_bytes()).expect("valid");
            assert_eq!(t.get("nr_free_pages"), Some(i as f64));
        }
        assert!(p.kept.len() <= KEPT_TEXTS);
    }

    #[test]
    fn a_layout_longer_than_a_kernel_s_is_read_by_name_and_not_listed() {
        let text = |v: usize| {
            let mut t = String::new();
            for i in 0..KERNEL_LINES + 10 {
                t.push_str(&format!("n{}: {}\n", i % 7, v + i));
            }
            t.push_str(&format!("Last: {v}\n"));
            t
        };
        let mut p = FieldParser::new(b':');
        for v in [1, 2, 3] {
            let t = p.parse(text(v).as_bytes()).expect("valid");
            assert_eq!(t.get("n3"), Some((v + 3) as f64), "the first n3");
            assert_eq!(t.get("Last"), Some(v as f64));
            assert_eq!(t.len(), KERNEL_LINES + 11);
            assert_eq!(t.kernel_names(), None);
        }
        let short = p.parse(b"a: 1\nb: 2\na: 3\n").expect("valid");
        assert_eq!(
            short.kernel_names(),
            Some(vec!["a".into(), "b".into(), "a".into()])
        );
        assert_eq!(short.layout().position("a"), Some(0));
        assert_eq!(short.layout().position("c"), None);
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
            let asked: [Option<&[&str]>; 5] = [
                None,
                Some(&["MemFree"]),
                Some(&["Cached", "MemTotal"]),
                Some(&["Active(anon)"]),
                Some(&["MemFree", "Absent"]),
            ];
            for wanted in asked {
                let mut p = FieldParser::new(b':');
                let wanted: Option<Vec<String>> = wanted.map(|w| w.iter().map(|n| n.to_string()).collect());
                p.narrow(wanted.as_deref());
                for text in &texts {
                    let table = p.parse(text).expect("never fails");
                    let afresh = fresh(b':', text);
                    let first_of = |name: &str| afresh.iter().find(|(n, _)| n == name).map(|(_, v)| v.to_bits());
                    // Every name, asked before anything looks past the
                    // checked lines, then the whole table.
                    for name in ["MemTotal", "MemFree", "Cached", "Active(anon)", "Odd", "Absent"] {
                        proptest::prop_assert_eq!(table.clone().get(name).map(f64::to_bits), first_of(name), "{}", name);
                    }
                    let kept: Vec<(String, f64)> = table.iter().map(|(n, v)| (n.to_string(), v)).collect();
                    proptest::prop_assert_eq!(kept.len(), afresh.len());
                    for ((n1, v1), (n2, v2)) in kept.iter().zip(&afresh) {
                        proptest::prop_assert_eq!(n1, n2);
                        proptest::prop_assert_eq!(v1.to_bits(), v2.to_bits());
                    }
                    proptest::prop_assert_eq!(table.values().len(), afresh.len());
                }
            }
        }
    }

    /// `base` (a /proc file separated by `sep`) changed in ways that keep
    /// or break its bytes' places, each with what was done.
    fn hostile_changes(sep: u8, base: &[u8]) -> Vec<(String, Vec<u8>)> {
        let lines: Vec<&[u8]> = base.split(|b| *b == b'\n').collect();
        let line_at = |i: usize| lines[..i].iter().map(|l| l.len() + 1).sum::<usize>();
        let digit = base.iter().rposition(u8::is_ascii_digit).expect("a number");
        let mut changed: Vec<(String, Vec<u8>)> = Vec::new();
        let mut with = |what: String, edit: &dyn Fn(&mut Vec<u8>)| {
            let mut t = base.to_vec();
            edit(&mut t);
            changed.push((what, t));
        };
        for at in [0, 1, 5, lines.len() / 2, lines.len() - 2] {
            let start = line_at(at);
            let value = start + lines[at].iter().position(|b| *b == sep).expect("sep") + 1;
            let number = value
                + lines[at][value - start..]
                    .iter()
                    .position(u8::is_ascii_digit)
                    .unwrap_or(0);
            with(format!("line {at}: a digit more"), &|t| {
                t.insert(number, b'7')
            });
            with(format!("line {at}: a digit less"), &|t| {
                t.remove(number);
            });
            with(format!("line {at}: renamed, same length"), &|t| {
                t[start] ^= 0x20
            });
            with(format!("line {at}: a newline in its number"), &|t| {
                t[number] = b'\n'
            });
            with(format!("line {at}: a separator in its number"), &|t| {
                t[number] = sep
            });
            with(format!("line {at}: no separator"), &|t| t[value - 1] = b'_');
            with(format!("line {at}: moved to the end"), &|t| {
                let line: Vec<u8> = t.drain(start..start + lines[at].len() + 1).collect();
                t.extend_from_slice(&line);
            });
            with(format!("line {at}: moved up"), &|t| {
                let line: Vec<u8> = t.drain(start..start + lines[at].len() + 1).collect();
                let to = if at == 0 {
                    line_at(1) - line.len() + 1
                } else {
                    0
                };
                let to = to.min(t.len());
                t.splice(to..to, line);
            });
            with(format!("line {at}: a copy above"), &|t| {
                let line = t[start..start + lines[at].len() + 1].to_vec();
                t.splice(0..0, line);
            });
            with(format!("cut within line {at}"), &|t| t.truncate(number));
        }
        with("a line more at the end".into(), &|t| {
            t.extend_from_slice(b"extra");
            t.push(sep);
            t.extend_from_slice(b"1\n");
        });
        with("no newline at the end".into(), &|t| {
            t.pop();
        });
        with("the last number a digit more".into(), &|t| {
            t.insert(digit, b'3')
        });
        with("empty".into(), &|t| t.clear());
        changed
    }

    /// The same file read again with its lines changed in ways that keep
    /// or break their bytes' places: every reading reads as one read
    /// afresh, whatever the parser kept (its layout, the shape of the
    /// checked lines) from the readings before it.
    #[test]
    fn hostile_changes_between_readings_read_as_afresh() {
        let files: [(u8, &[u8], &[&str]); 2] = [
            (
                b':',
                include_bytes!("../../tests/fixtures/roots/newkernel/proc/meminfo"),
                &["MemFree", "Shmem", "MemTotal"],
            ),
            (
                b' ',
                include_bytes!("../../tests/fixtures/roots/newkernel/proc/vmstat"),
                &["pgscan_direct", "nr_free_pages"],
            ),
        ];
        for (sep, base, names) in files {
            let changed = hostile_changes(sep, base);
            let narrowed: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            for wanted in [None, Some(&narrowed[..1]), Some(&narrowed[..])] {
                let mut p = FieldParser::new(sep);
                p.narrow(wanted);
                for (what, text) in &changed {
                    // The file as it was (twice: the shape is taken), then
                    // changed, then as it was again.
                    for (when, text) in [
                        ("before", base),
                        ("before", base),
                        (what.as_str(), &text[..]),
                        ("after", base),
                    ] {
                        let table = p.parse(text).expect("never fails");
                        let afresh = fresh(sep, text);
                        for name in names.iter().chain(&["extra", "Absent"]) {
                            let first = afresh
                                .iter()
                                .find(|(n, _)| n == name)
                                .map(|(_, v)| v.to_bits());
                            assert_eq!(
                                table.get(name).map(f64::to_bits),
                                first,
                                "{what} ({when}): {name}"
                            );
                        }
                        let kept: Vec<(String, u64)> = table
                            .iter()
                            .map(|(n, v)| (n.to_string(), v.to_bits()))
                            .collect();
                        let afresh: Vec<(String, u64)> =
                            afresh.into_iter().map(|(n, v)| (n, v.to_bits())).collect();
                        assert_eq!(kept, afresh, "{what} ({when})");
                    }
                }
            }
        }
    }
}
