//! The cells a frame changes, worked out cheaply, and the terminal that
//! sends only those ([`DiffTerminal`]).
//!
//! ratatui's `Buffer::diff` compares every cell of the screen with
//! `Cell`'s general equality and works out the display width of every
//! cell's symbol, equal or not: at 160×48 about a million instructions a
//! frame, more than drawing the frame. [`changes`] gives the same cells in
//! the same order (a property test holds it to `Buffer::diff` over
//! buffers with ASCII, wide, emoji, combining and skipped cells): a cell is
//! compared as one number with the [key](CellKeys) kept of the shown cell
//! (field by field when it has none), a one-byte symbol is known to be one
//! column wide, and a longer symbol's width is worked out once for a run
//! of the same symbol (a rule line, a graph's blocks).

use ratatui::backend::Backend;
use ratatui::buffer::{Buffer, Cell, CellDiffOption, CellWidth};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::{Frame, Terminal};

/// A terminal whose frames are compared with the one before by
/// [`changes`] rather than ratatui's diff; what reaches the backend is
/// byte for byte what `Terminal::draw` sends. The frames of plugtop's
/// screens never place the cursor: it stays hidden, as `Terminal::draw`
/// leaves it after a frame that places none.
pub struct DiffTerminal<B: Backend> {
    terminal: Terminal<B>,
    /// What the terminal shows: the last frame sent.
    shown: Buffer,
    /// The keys of `shown`'s cells.
    keys: CellKeys,
}

impl<B: Backend> DiffTerminal<B> {
    /// `terminal`, nothing shown on it yet.
    pub fn new(mut terminal: Terminal<B>) -> Self {
        let shown = Buffer::empty(terminal.current_buffer_mut().area);
        let keys = CellKeys::unknown(shown.content.len());
        let mut screen = DiffTerminal {
            terminal,
            shown,
            keys,
        };
        screen.empty_unused_buffer();
        screen
    }

    /// Frees the cells of ratatui's second buffer, which only its own
    /// diff uses (it grows again with each new size). The buffer drawn in
    /// is left as it was: blank, at the terminal's size.
    fn empty_unused_buffer(&mut self) {
        // `swap_buffers` blanks the buffer it makes current.
        self.terminal.swap_buffers();
        *self.terminal.current_buffer_mut() = Buffer::default();
        self.terminal.swap_buffers();
    }

    /// The terminal (its size, its backend).
    pub fn terminal(&self) -> &Terminal<B> {
        &self.terminal
    }

    /// The terminal, to resize it or write to its backend.
    pub fn terminal_mut(&mut self) -> &mut Terminal<B> {
        &mut self.terminal
    }

    /// The next frame is sent whole, as on a cleared screen.
    pub fn forget_shown(&mut self) {
        self.shown.reset();
        self.keys = CellKeys::unknown(self.shown.content.len());
    }

    /// Takes the terminal's size as it is now. A new size clears the
    /// screen (ratatui's `autoresize`), so the next frame is sent whole,
    /// even when a second resize came back to the size last drawn at.
    pub fn autoresize(&mut self) -> Result<(), B::Error> {
        let before = self.terminal.current_buffer_mut().area;
        self.terminal.autoresize()?;
        if self.terminal.current_buffer_mut().area != before {
            self.forget_shown();
            // ratatui grew its second buffer to the new size too.
            self.empty_unused_buffer();
        }
        Ok(())
    }

    /// Draws a frame with `render` and sends the cells it changed, as
    /// `Terminal::draw` does.
    pub fn draw(&mut self, render: impl FnOnce(&mut Frame<'_>)) -> Result<(), B::Error> {
        self.autoresize()?;
        render(&mut self.terminal.get_frame());
        let drawn = std::mem::take(self.terminal.current_buffer_mut());
        if drawn.area != self.shown.area {
            // A new size: ratatui cleared the screen (`autoresize`).
            self.shown.resize(drawn.area);
            self.forget_shown();
        }
        let sent = self
            .terminal
            .backend_mut()
            .draw(changes(&self.shown, &drawn, &mut self.keys));
        // The frame drawn is what is shown now; the next is drawn on the
        // cells of the one before, emptied.
        let mut next = std::mem::replace(&mut self.shown, drawn);
        next.reset();
        *self.terminal.current_buffer_mut() = next;
        sent?;
        self.terminal.hide_cursor()?;
        self.terminal.backend_mut().flush()
    }
}

/// The keys of the cells a terminal shows, one a cell: a plain cell
/// ([`key_of`]) in one number, or unknown (another cell, or one whose key
/// was not kept). A known key is always the key of the shown cell:
/// [`Changes`] keeps them so as it passes the cells of the next frame, and
/// marks unknown the cells it did not key (those it sent, those it passed
/// as part of a wide cell, those it did not reach).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellKeys(Vec<u64>);

/// The key of a cell not packed (see [`key_of`]); no plain cell packs to
/// it.
const UNKNOWN: u64 = u64::MAX;

/// The bits of a key that hold the symbol.
const SYMBOL_BITS: u64 = (1 << 26) - 1;

impl CellKeys {
    /// `cells` keys, none known.
    pub fn unknown(cells: usize) -> Self {
        CellKeys(vec![UNKNOWN; cells])
    }

    /// The keys of `buffer`'s cells, all known that can be.
    pub fn of(buffer: &Buffer) -> Self {
        CellKeys(buffer.content.iter().map(|c| key_of(c).0).collect())
    }
}

/// A plain cell in one number, and its symbol: a symbol of up to three
/// bytes and its length (26 bits), a named colour or none in front (5) and
/// behind (5), the modifiers (16); no underline colour, no diff option,
/// not skipped. Two plain cells are equal (as `Cell`'s equality says) when
/// their keys are. Any other cell is [`UNKNOWN`].
#[allow(deprecated)]
#[inline(always)]
fn key_of(cell: &Cell) -> (u64, &str) {
    let symbol = cell.symbol();
    let packed = match *symbol.as_bytes() {
        [a] => u64::from(a) | 1 << 24,
        [] => 0,
        [a, b] => u64::from(a) | u64::from(b) << 8 | 2 << 24,
        [a, b, c] => u64::from(a) | u64::from(b) << 8 | u64::from(c) << 16 | 3 << 24,
        _ => return (UNKNOWN, symbol),
    };
    let (Some(fg), Some(bg)) = (named(cell.fg), named(cell.bg)) else {
        return (UNKNOWN, symbol);
    };
    if !matches!(cell.diff_option, CellDiffOption::None)
        || cell.skip
        || cell.underline_color != Color::Reset
    {
        return (UNKNOWN, symbol);
    }
    let key =
        packed | u64::from(fg) << 26 | u64::from(bg) << 31 | u64::from(cell.modifier.bits()) << 36;
    (key, symbol)
}

/// A named colour (or none) as a number below 17.
#[inline(always)]
fn named(color: Color) -> Option<u8> {
    Some(match color {
        Color::Reset => 0,
        Color::Black => 1,
        Color::Red => 2,
        Color::Green => 3,
        Color::Yellow => 4,
        Color::Blue => 5,
        Color::Magenta => 6,
        Color::Cyan => 7,
        Color::Gray => 8,
        Color::DarkGray => 9,
        Color::LightRed => 10,
        Color::LightGreen => 11,
        Color::LightYellow => 12,
        Color::LightBlue => 13,
        Color::LightMagenta => 14,
        Color::LightCyan => 15,
        Color::White => 16,
        Color::Rgb(..) | Color::Indexed(_) => return None,
    })
}

/// The cells of `next` that differ from `prev`, with their places: what
/// `prev.diff(next)` gives, in its order (see the module's comment).
/// `keys` are those of `prev`'s cells; once the changes have been gone
/// through (or dropped) they are those of `next`'s.
///
/// # Panics
///
/// As `Buffer::diff`, when the two buffers' `x`, `y` or width differ; when
/// `keys` are not as many as `prev`'s cells.
pub fn changes<'prev, 'next, 'keys>(
    prev: &'prev Buffer,
    next: &'next Buffer,
    keys: &'keys mut CellKeys,
) -> Changes<'prev, 'next, 'keys> {
    assert_eq!(keys.0.len(), prev.content.len(), "one key a cell shown");
    assert!(
        prev.area.x == next.area.x
            && prev.area.y == next.area.y
            && prev.area.width == next.area.width,
        "buffer areas must have the same x, y, and width: prev={:?}, next={:?}",
        prev.area,
        next.area,
    );
    let mut area = prev.area;
    area.height = area.height.min(next.area.height);
    Changes {
        next: &next.content,
        prev: &prev.content,
        keys: &mut keys.0,
        unkeyed: 0,
        narrow: UNKNOWN,
        area,
        pos: 0,
        trailing: None,
        last_wide: None,
    }
}

/// The iterator of [`changes`].
#[derive(Debug)]
pub struct Changes<'prev, 'next, 'keys> {
    next: &'next [Cell],
    prev: &'prev [Cell],
    /// The keys of `next`'s symbols before `unkeyed` (or unknown), of
    /// `prev`'s from it.
    keys: &'keys mut [u64],
    /// The first cell whose key may still be `prev`'s.
    unkeyed: usize,
    /// The symbol bits of the last key of a symbol of more than one byte
    /// found one column wide (or [`UNKNOWN`]).
    narrow: u64,
    area: Rect,
    /// The next cell to look at.
    pos: usize,
    /// Columns after a wide cell still to be sent or passed.
    trailing: Option<Trailing>,
    /// The last symbol of more than one byte whose width was worked out.
    last_wide: Option<(&'next str, u16)>,
}

/// Columns after a wide cell: `from..end`, all sent (`force`: the wide
/// cell before had a style that shows on blanks) or only those whose
/// symbol changed (after an emoji with U+FE0F, which covers them).
#[derive(Debug)]
struct Trailing {
    from: usize,
    end: usize,
    force: bool,
}

/// Modifiers that show on a blank cell.
const VISIBLE_ON_BLANK: Modifier = Modifier::REVERSED
    .union(Modifier::UNDERLINED)
    .union(Modifier::SLOW_BLINK)
    .union(Modifier::RAPID_BLINK)
    .union(Modifier::CROSSED_OUT);

/// Whether the diff passes `cell` by.
#[allow(deprecated)]
fn is_skip(cell: &Cell) -> bool {
    matches!(cell.diff_option, CellDiffOption::Skip)
        || (cell.skip && matches!(cell.diff_option, CellDiffOption::None))
}

/// `Cell`'s equality (a missing symbol is a space), field by field, the
/// cheap fields first.
fn same(a: &Cell, b: &Cell) -> bool {
    same_style(a, b) && same_symbol(a.symbol(), b.symbol())
}

/// `current` (its symbol `symbol`) has no diff option, is not skipped,
/// and is what `previous` was.
#[allow(deprecated)]
#[inline]
fn plainly_same(current: &Cell, previous: &Cell, symbol: &str) -> bool {
    matches!(current.diff_option, CellDiffOption::None)
        && !current.skip
        && same_style(current, previous)
        && same_symbol(symbol, previous.symbol())
}

/// All of `Cell`'s equality but the symbol.
#[allow(deprecated)]
#[inline(always)]
fn same_style(a: &Cell, b: &Cell) -> bool {
    a.fg == b.fg
        && a.bg == b.bg
        && a.modifier == b.modifier
        && a.underline_color == b.underline_color
        && a.diff_option == b.diff_option
        && a.skip == b.skip
}

/// Two symbols are the same; one byte each compared as bytes.
#[inline(always)]
fn same_symbol(a: &str, b: &str) -> bool {
    match (a.as_bytes(), b.as_bytes()) {
        ([x], [y]) => x == y,
        (x, y) => same_bytes(x, y),
    }
}

/// The same bytes, compared in place (symbols are a few bytes long).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The width of a cell of the previous frame (`Cell::cell_width`).
fn width_of(cell: &Cell) -> u16 {
    match cell.diff_option {
        CellDiffOption::ForcedWidth(w) => w.get(),
        _ if cell.symbol().len() == 1 => 1,
        _ => cell.symbol().cell_width(),
    }
}

impl<'next> Changes<'_, 'next, '_> {
    /// The place of the cell at `index`.
    fn pos_of(&self, index: usize) -> (u16, u16) {
        let w = usize::from(self.area.width);
        let x = index % w + usize::from(self.area.x);
        let y = index / w + usize::from(self.area.y);
        (
            u16::try_from(x).unwrap_or(u16::MAX),
            u16::try_from(y).unwrap_or(u16::MAX),
        )
    }

    /// The width of a cell of the next frame (`Cell::cell_width`).
    fn next_width(&mut self, index: usize) -> u16 {
        let cells = self.next;
        let cell = &cells[index];
        if let CellDiffOption::ForcedWidth(w) = cell.diff_option {
            return w.get();
        }
        self.symbol_width(cell.symbol())
    }

    /// The width of a symbol of the next frame, one of more than one
    /// byte worked out once for a run of it.
    #[inline]
    fn symbol_width(&mut self, symbol: &'next str) -> u16 {
        if symbol.len() == 1 {
            return 1;
        }
        if let Some((last, width)) = self.last_wide
            && same_bytes(last.as_bytes(), symbol.as_bytes())
        {
            return width;
        }
        let width = symbol.cell_width();
        self.last_wide = Some((symbol, width));
        width
    }

    /// The first cell from `from` on (before `len`) that is not plainly
    /// what it was: no diff option, not skipped, the same as before (most
    /// cells, passed here without the general case's questions). An equal
    /// wide cell's trailing columns are passed with it. A plain cell whose
    /// key is the shown cell's is passed on its key alone. The cells passed
    /// take their keys; those the general case went through since the last
    /// call (before `from`) are marked unknown.
    fn first_change(&mut self, from: usize, len: usize) -> usize {
        let keys = std::mem::take(&mut self.keys);
        forget(keys, self.unkeyed, from);
        let (next, prev) = (self.next, self.prev);
        let (next, prev) = (&next[..len], &prev[..len]);
        let mut i = from;
        loop {
            if let (Some(cells), Some(known)) = (next.get(i..), keys.get(i..)) {
                i += plain_run(cells, known, &mut self.narrow);
            }
            let (Some(current), Some(&shown)) = (next.get(i), keys.get(i)) else {
                break;
            };
            let (key, symbol) = key_of(current);
            if key != shown || key == UNKNOWN {
                if key != UNKNOWN && shown != UNKNOWN {
                    break;
                }
                match prev.get(i) {
                    Some(previous) if plainly_same(current, previous, symbol) => keys[i] = key,
                    _ => break,
                }
            }
            i += 1;
            if symbol.len() > 1 {
                let trailing = usize::from(self.symbol_width(symbol).saturating_sub(1));
                forget(keys, i, i + trailing);
                i += trailing;
            }
        }
        self.keys = keys;
        let i = i.min(len);
        self.unkeyed = i;
        i
    }
}

/// How many of `cells`, from the first, have known keys, those in
/// `keys` (they are what is shown), and are one column wide or none; a
/// symbol of more than one byte found narrow is kept in `narrow` (its
/// key's symbol bits), the next cells with it taken on its word.
#[inline(never)]
fn plain_run(cells: &[Cell], keys: &[u64], narrow: &mut u64) -> usize {
    let mut n = 0;
    for (cell, &shown) in cells.iter().zip(keys) {
        let (key, symbol) = key_of(cell);
        if key != shown || key == UNKNOWN {
            break;
        }
        if symbol.len() > 1 {
            let bits = key & SYMBOL_BITS;
            if bits != *narrow {
                if symbol.cell_width() > 1 {
                    break;
                }
                *narrow = bits;
            }
        }
        n += 1;
    }
    n
}

/// Marks the keys of the cells `from..to` unknown (those past the end
/// left alone).
#[inline]
fn forget(keys: &mut [u64], from: usize, to: usize) {
    let to = to.min(keys.len());
    if let Some(keys) = keys.get_mut(from..to) {
        keys.fill(UNKNOWN);
    }
}

impl Drop for Changes<'_, '_, '_> {
    /// The cells not keyed (not reached, or gone through by the general
    /// case last) are marked unknown.
    fn drop(&mut self) {
        forget(self.keys, self.unkeyed, usize::MAX);
    }
}

impl<'next> Iterator for Changes<'_, 'next, '_> {
    type Item = (u16, u16, &'next Cell);

    fn next(&mut self) -> Option<Self::Item> {
        let len = self.next.len().min(self.prev.len());
        if let Some(Trailing { from, end, force }) = self.trailing {
            let (mut from, mut end) = (from, end);
            while from < end {
                let j = from;
                from += usize::from(self.next_width(j).max(1));
                end = end.max(from).min(len);
                if !is_skip(&self.next[j])
                    && (force || self.prev[j].symbol() != self.next[j].symbol())
                {
                    self.trailing = Some(Trailing { from, end, force });
                    let (x, y) = self.pos_of(j);
                    return Some((x, y, &self.next[j]));
                }
            }
            self.pos = end;
            self.trailing = None;
        }
        while self.pos < len {
            self.pos = self.first_change(self.pos, len);
            if self.pos >= len {
                break;
            }
            let i = self.pos;
            self.pos += 1;
            let (next, prev) = (self.next, self.prev);
            let (current, previous) = (&next[i], &prev[i]);
            match current.diff_option {
                CellDiffOption::Skip => {}
                _ if is_skip(current) => {}
                CellDiffOption::ForcedWidth(width) => {
                    self.pos = self
                        .pos
                        .saturating_add(usize::from(width.get().saturating_sub(1)));
                    if !same(current, previous) {
                        let (x, y) = self.pos_of(i);
                        return Some((x, y, current));
                    }
                }
                CellDiffOption::None | CellDiffOption::AlwaysUpdate => {
                    if matches!(current.diff_option, CellDiffOption::None)
                        && same(current, previous)
                    {
                        // An equal wide cell still covers its trailing columns.
                        self.pos += usize::from(self.next_width(i).saturating_sub(1));
                        continue;
                    }
                    let cell_width = usize::from(self.next_width(i));
                    let previous_width = usize::from(width_of(previous));
                    // Emoji with U+FE0F: some terminals leave their trailing
                    // column as it was; it is sent when its symbol changed.
                    let vs16 = cell_width > 1 && current.symbol().contains('\u{FE0F}');
                    if vs16 {
                        self.trailing = Some(Trailing {
                            from: i + 1,
                            end: (i + cell_width).min(len),
                            force: false,
                        });
                    } else if cell_width > 1 {
                        self.pos += cell_width - 1;
                    } else if previous_width > cell_width
                        && (previous.bg != Color::Reset
                            || previous.modifier.intersects(VISIBLE_ON_BLANK))
                    {
                        // The wide cell before showed its style on its
                        // trailing columns: all of them are sent again.
                        self.trailing = Some(Trailing {
                            from: i + 1,
                            end: i + previous_width,
                            force: true,
                        });
                    }
                    let (x, y) = self.pos_of(i);
                    return Some((x, y, current));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::terminal_shell::FrameBuffer;
    use proptest::prelude::*;
    use ratatui::backend::{CrosstermBackend, TestBackend};
    use ratatui::style::Style;
    use ratatui::widgets::Paragraph;
    use ratatui::{TerminalOptions, Viewport};
    use std::num::NonZeroU16;

    /// Symbols of every kind the diff treats apart: one byte, box
    /// drawing, wide (CJK), emoji with and without U+FE0F, a combining
    /// mark, halfwidth katakana sound marks, and none (a space).
    const SYMBOLS: &[&str] = &[
        " ",
        "a",
        "b",
        "─",
        "│",
        "⣿",
        "コ",
        "中",
        "😀",
        "❤\u{FE0F}",
        "e\u{301}",
        "ｶﾞ",
        "ﾟ",
        "",
    ];

    /// One cell: a symbol, colours, modifiers and a diff option.
    fn cell() -> impl Strategy<Value = Cell> {
        (
            0..SYMBOLS.len(),
            0u8..4,
            0u8..4,
            0u8..3,
            0u8..8,
            any::<bool>(),
        )
            .prop_map(|(s, fg, bg, m, opt, skip)| {
                let color = |c: u8| match c {
                    0 => Color::Reset,
                    1 => Color::Red,
                    2 => Color::Indexed(7),
                    _ => Color::Rgb(1, 2, 3),
                };
                let mut cell = Cell::default();
                if !SYMBOLS[s].is_empty() {
                    cell.set_symbol(SYMBOLS[s]);
                }
                cell.fg = color(fg);
                cell.bg = color(bg);
                cell.modifier = match m {
                    0 => Modifier::empty(),
                    1 => Modifier::BOLD,
                    _ => Modifier::UNDERLINED,
                };
                cell.diff_option = match opt {
                    0 => CellDiffOption::Skip,
                    1 => CellDiffOption::AlwaysUpdate,
                    2 => CellDiffOption::ForcedWidth(NonZeroU16::MIN),
                    3 => CellDiffOption::ForcedWidth(NonZeroU16::MIN.saturating_add(1)),
                    _ => CellDiffOption::None,
                };
                #[allow(deprecated)]
                {
                    cell.skip = skip && opt == 4;
                }
                cell
            })
    }

    /// A buffer of `width`×`height` from `cells`, mostly the cell before
    /// (`keep`) so that runs of equal cells occur as on a screen.
    fn buffer(width: u16, height: u16, cells: &[Cell], keep: &[bool], base: &Buffer) -> Buffer {
        let mut b = Buffer::empty(Rect::new(0, 0, width, height));
        for (i, c) in b.content.iter_mut().enumerate() {
            *c = if keep[i % keep.len()] {
                base.content.get(i).cloned().unwrap_or_default()
            } else {
                cells[i % cells.len()].clone()
            };
        }
        b
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The same cells, in the same order, as ratatui's diff, whichever
        /// of the shown cells' keys are known; after it the keys known are
        /// the next frame's.
        #[test]
        fn the_same_cells_as_ratatuis_diff(
            width in 1u16..12,
            height in 1u16..5,
            a in prop::collection::vec(cell(), 1..40),
            b in prop::collection::vec(cell(), 1..40),
            keep in prop::collection::vec(any::<bool>(), 1..20),
            known in prop::collection::vec(any::<bool>(), 1..20),
            shorter in 0u16..2,
        ) {
            let mut prev = buffer(width, height, &a, &[false], &Buffer::empty(Rect::default()));
            let mut next = buffer(width, height.saturating_sub(shorter).max(1), &b, &keep, &prev);
            narrow_last(&mut prev, &mut next);
            let mut keys = some_keys(&prev, &known);
            let ours: Vec<_> = changes(&prev, &next, &mut keys).collect();
            prop_assert_eq!(ours, prev.diff(&next));
            prop_assert!(keys_hold(&keys, &next));
            let mut keys = some_keys(&next, &known);
            let back: Vec<_> = changes(&next, &prev, &mut keys).collect();
            prop_assert_eq!(back, next.diff(&prev));
            prop_assert!(keys_hold(&keys, &prev));
        }

        /// Frames one after another, the keys kept from each to the next
        /// as the terminal keeps them (some iterators dropped half gone
        /// through): each frame's changes are ratatui's.
        #[test]
        fn frame_after_frame_the_same_cells_as_ratatuis_diff(
            width in 1u16..12,
            height in 1u16..4,
            frames in prop::collection::vec(
                (prop::collection::vec(cell(), 1..30), prop::collection::vec(any::<bool>(), 1..20)),
                2..7,
            ),
            stop in prop::collection::vec(0usize..8, 1..8),
        ) {
            let mut shown = Buffer::empty(Rect::new(0, 0, width, height));
            let mut keys = CellKeys::unknown(shown.content.len());
            for (n, (cells, keep)) in frames.iter().enumerate() {
                let mut next = buffer(width, height, cells, keep, &shown);
                narrow_last(&mut shown, &mut next);
                let theirs = shown.diff(&next);
                // Some frames' changes are not all taken (a backend that
                // failed half way): the keys are still right after it.
                let take = match stop[n % stop.len()] {
                    0 => theirs.len() / 2,
                    _ => usize::MAX,
                };
                let ours: Vec<_> = changes(&shown, &next, &mut keys).take(take).collect();
                prop_assert_eq!(&ours[..], &theirs[..take.min(theirs.len())]);
                prop_assert!(keys_hold(&keys, &next));
                shown = next;
            }
        }
    }

    /// A wide last cell (no widget draws one) makes both diffs index past
    /// the end: the last cell of both made narrow.
    fn narrow_last(prev: &mut Buffer, next: &mut Buffer) {
        let last = next.content.len().min(prev.content.len()) - 1;
        for cells in [&mut prev.content, &mut next.content] {
            if width_of(&cells[last]) > 1 {
                cells[last] = Cell::new("z");
            }
        }
    }

    /// `buffer`'s symbol keys, those where `known` (cycled) is false unknown.
    fn some_keys(buffer: &Buffer, known: &[bool]) -> CellKeys {
        let mut keys = CellKeys::of(buffer);
        for (i, key) in keys.0.iter_mut().enumerate() {
            if !known[i % known.len()] {
                *key = UNKNOWN;
            }
        }
        keys
    }

    /// Every known key is the key of `shown`'s symbol at its cell.
    fn keys_hold(keys: &CellKeys, shown: &Buffer) -> bool {
        keys.0.iter().enumerate().all(|(i, &key)| {
            key == UNKNOWN || shown.content.get(i).is_some_and(|c| key == key_of(c).0)
        })
    }

    /// Any cell: a symbol of up to five characters (ASCII, NUL, box
    /// drawing, wide, a mark) or none, any colour, any modifier bits, any
    /// diff option.
    fn any_cell() -> impl Strategy<Value = Cell> {
        let color = (0u8..20, any::<u8>()).prop_map(|(c, v)| match c {
            0 => Color::Reset,
            1 => Color::Black,
            2 => Color::Red,
            3 => Color::Green,
            4 => Color::Yellow,
            5 => Color::Blue,
            6 => Color::Magenta,
            7 => Color::Cyan,
            8 => Color::Gray,
            9 => Color::DarkGray,
            10 => Color::LightRed,
            11 => Color::LightGreen,
            12 => Color::LightYellow,
            13 => Color::LightBlue,
            14 => Color::LightMagenta,
            15 => Color::LightCyan,
            16 => Color::White,
            17 => Color::Indexed(v),
            _ => Color::Rgb(v, 0, v / 2),
        });
        (
            prop::option::of("[ a\\x00─中\u{301}]{0,5}"),
            (color.clone(), color.clone(), color),
            any::<u16>(),
            0u8..5,
            any::<bool>(),
        )
            .prop_map(|(symbol, (fg, bg, underline), bits, opt, skip)| {
                let mut cell = Cell::EMPTY;
                if let Some(symbol) = symbol {
                    cell.set_symbol(&symbol);
                }
                cell.fg = fg;
                cell.bg = bg;
                cell.underline_color = underline;
                cell.modifier = Modifier::from_bits_retain(bits);
                cell.diff_option = match opt {
                    0 => CellDiffOption::Skip,
                    1 => CellDiffOption::AlwaysUpdate,
                    2 => CellDiffOption::ForcedWidth(NonZeroU16::MIN),
                    _ => CellDiffOption::None,
                };
                #[allow(deprecated)]
                {
                    cell.skip = skip && opt == 4;
                }
                cell
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// Two cells with the same known key are equal; two equal plain
        /// cells have the same key; a key is unknown only for a cell that
        /// is not plain.
        #[test]
        fn a_key_is_its_cell(a in any_cell(), b in any_cell(), same in any::<bool>()) {
            let b = if same { a.clone() } else { b };
            let (ka, kb) = (key_of(&a).0, key_of(&b).0);
            if ka != UNKNOWN && kb != UNKNOWN {
                prop_assert_eq!(ka == kb, a == b, "{:?} {:?}", a, b);
            }
            #[allow(deprecated)]
            let plain = |c: &Cell| {
                c.symbol().len() <= 3
                    && named(c.fg).is_some()
                    && named(c.bg).is_some()
                    && c.underline_color == Color::Reset
                    && c.diff_option == CellDiffOption::None
                    && !c.skip
            };
            prop_assert_eq!(ka != UNKNOWN, plain(&a));
            if a == b && ka != UNKNOWN {
                prop_assert_eq!(ka, kb);
            }
        }
    }

    /// The frames of a few screens, sent through crossterm, byte for byte
    /// what `Terminal::draw` sends, a resize and a full redraw included.
    #[test]
    fn the_bytes_sent_are_terminal_draws() {
        let texts = [
            "plain text",
            "wide コ中 and ❤\u{FE0F} 😀",
            "─│⣿ e\u{301}",
            "",
        ];
        let frames = |ours: bool| -> Vec<u8> {
            let area = Rect::new(0, 0, 20, 4);
            let options = || TerminalOptions {
                viewport: Viewport::Fixed(area),
            };
            let sent = FrameBuffer::default();
            let backend = || CrosstermBackend::new(sent.clone());
            let mut screen =
                DiffTerminal::new(Terminal::with_options(backend(), options()).expect("terminal"));
            let mut plain = Terminal::with_options(backend(), options()).expect("terminal");
            for (n, t) in texts.iter().cycle().take(9).enumerate() {
                let render = |f: &mut Frame<'_>| {
                    let bg = if n % 2 == 0 {
                        Color::Blue
                    } else {
                        Color::Reset
                    };
                    f.render_widget(Paragraph::new(*t).style(Style::default().bg(bg)), f.area());
                };
                if ours {
                    screen.draw(render).expect("draw");
                    if n == 5 {
                        screen.forget_shown();
                    }
                } else {
                    plain.draw(render).expect("draw");
                    if n == 5 {
                        plain.current_buffer_mut().reset();
                        plain.swap_buffers();
                    }
                }
            }
            sent.take()
        };
        let ours = frames(true);
        assert!(!ours.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&frames(false))
        );
    }

    /// Two resizes before a frame, the second back to the size last drawn
    /// at: each cleared the screen, so the frame is sent whole (adv52: the
    /// static text stayed blank).
    #[test]
    fn a_size_that_goes_and_comes_back_before_a_frame_draws_every_cell() {
        let mut screen =
            DiffTerminal::new(Terminal::new(TestBackend::new(20, 3)).expect("terminal"));
        let text = "hello world\nsecond line\nthird";
        screen
            .draw(|f| f.render_widget(Paragraph::new(text), f.area()))
            .expect("draw");
        for (w, h) in [(30, 5), (20, 3)] {
            screen.terminal_mut().backend_mut().resize(w, h);
            screen.autoresize().expect("resize");
        }
        screen
            .draw(|f| f.render_widget(Paragraph::new(text), f.area()))
            .expect("draw");
        let shown = screen.terminal().backend().buffer().clone();
        let row = |y: u16| (0..20).map(|x| shown[(x, y)].symbol()).collect::<String>();
        assert_eq!(row(0).trim_end(), "hello world");
        assert_eq!(row(2).trim_end(), "third");
    }

    /// A terminal that changed size is drawn whole again, as ratatui does.
    #[test]
    fn a_new_size_draws_every_cell() {
        let mut screen =
            DiffTerminal::new(Terminal::new(TestBackend::new(6, 2)).expect("terminal"));
        screen
            .draw(|f| f.render_widget(Paragraph::new("abc"), f.area()))
            .expect("draw");
        screen.terminal_mut().backend_mut().resize(8, 3);
        screen
            .draw(|f| f.render_widget(Paragraph::new("abc"), f.area()))
            .expect("draw");
        let shown = screen.terminal().backend().buffer().clone();
        assert_eq!(shown.area, Rect::new(0, 0, 8, 3));
        assert_eq!(shown[(0, 0)].symbol(), "a");
        assert_eq!(shown[(2, 0)].symbol(), "c");
    }
}
