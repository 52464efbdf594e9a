//! The CPU panel as compact meters: columns of bars, as htop and btop draw
//! a big machine, so a guest of 64 CPUs fits at 80×24 and one of 256 at
//! 160×48 with every CPU in sight. Bars fill in eighths of a cell; the
//! exact columns are in the table, one key (`c`) away.

use std::fmt::Write as _;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::cpu_page::{Page, more_line};
use super::theme::Theme;
use crate::kernel::CpuTicks;
use crate::kernel::deltas::CpuLoad;
use crate::tui::app::App;
use crate::tui::cpu_panel::{Cell, CpuOrder, MeterGrid, busy_ticks};

/// Partial cells of a bar, one to seven eighths filled.
const EIGHTHS: [char; 7] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];
/// The keys for the other order and the table, after the `all` bar.
const HINTS: &str = "  b sort  c table";
/// The shortest `all` bar drawn beside the hints.
const ALL_BAR: usize = 4;

/// Draws the meters in `inner`: the `all` row, the page of CPUs, and a
/// line for "… more" (paged) or the legend (when a row is spare).
pub fn draw(
    frame: &mut Frame<'_>,
    inner: Rect,
    app: &App,
    theme: &Theme,
    grid: &MeterGrid,
    page: &Page<'_>,
    all: Option<CpuTicks>,
) {
    if inner.height == 0 {
        return;
    }
    let buffer = frame.buffer_mut();
    all_row(buffer, inner, grid, theme, all);
    let selected = app.selection().selected_cpu();
    // One label buffer for every cell: a frame of 256 meters allocates
    // nothing per CPU.
    let mut label = String::new();
    for (i, load) in page.cpus.iter().enumerate() {
        let (x, y) = grid.place(i);
        let (Ok(x), Ok(y)) = (u16::try_from(x), u16::try_from(y + 1)) else {
            continue;
        };
        if y >= inner.height || x >= inner.width {
            continue;
        }
        let mut pen = Pen::at(buffer, inner, inner.x + x, inner.y + y);
        let selected = selected == Some(load.id());
        cell(&mut pen, &mut label, load, grid, selected, theme);
    }
    let last = inner.y + inner.height - 1;
    let width = usize::from(inner.width);
    let footer = if grid.paged {
        more_line(page, "", width)
    } else if grid.rows + 2 <= usize::from(inner.height) {
        Some(legend(
            grid,
            app.selection().cpus().order(),
            app.timeline().travelling(),
        ))
    } else {
        None
    };
    if let Some(text) = footer {
        Pen::at(buffer, inner, inner.x, last).put(&text, theme.dim());
    }
}

/// The CPU at `column`, `row` of a page drawn as `grid` in `inner`.
pub fn id_at(grid: &MeterGrid, inner: Rect, column: u16, row: u16, page: &Page<'_>) -> Option<u32> {
    let y = usize::from(row.checked_sub(inner.y)?).checked_sub(1)?;
    let x = usize::from(column.checked_sub(inner.x)?);
    let i = grid.cell_at(x, y)?;
    page.cpus.get(i).map(|l| l.id())
}

/// `all`: the whole guest's busy share, with the keys that change the
/// panel when there is room for them beside a bar.
fn all_row(
    buffer: &mut Buffer,
    inner: Rect,
    grid: &MeterGrid,
    theme: &Theme,
    all: Option<CpuTicks>,
) {
    let label = label_width(grid).max(4);
    let width = usize::from(inner.width);
    let mut pen = Pen::at(buffer, inner, inner.x, inner.y);
    pen.put(&format!("{:<label$}", "all"), theme.text());
    let room = width.saturating_sub(label + 5);
    let hints = room >= ALL_BAR + HINTS.len();
    let bar = if hints { room - HINTS.len() } else { room };
    match all {
        Some(d) => {
            let total = d.total();
            meter(&mut pen, busy_ticks(&d), total, bar, theme);
            pen.put(
                &format!(" {:>3}%", percent(busy_ticks(&d), total)),
                theme.text(),
            );
        }
        None => pen.put(
            &format!("{:<w$}", "(first reading)", w = bar + 5),
            theme.dim(),
        ),
    }
    if hints {
        pen.put(HINTS, theme.dim());
    }
}

/// What the marks mean, and the order, for a spare row under the grid;
/// the shares are "then" while time-travelling (the header names when).
fn legend(grid: &MeterGrid, order: CpuOrder, travelling: bool) -> String {
    let when = if travelling { "then" } else { "now" };
    let order = match order {
        CpuOrder::Number => "by number",
        CpuOrder::Busy => "busiest first",
    };
    match grid.cell {
        Cell::Bare => format!("busy % {when}, {order} · - offline · + just online"),
        Cell::Named | Cell::Numbered => format!("busy % {when}, {order}"),
    }
}

/// Columns the CPU's name or number takes in a cell, its space included.
fn label_width(grid: &MeterGrid) -> usize {
    match grid.cell {
        Cell::Named => 3 + grid.digits + 1,
        Cell::Numbered => grid.digits + 1,
        Cell::Bare => grid.digits,
    }
}

/// One CPU's meter: its name or number, its bar, its share. `label` is
/// scratch space for the text.
fn cell(
    pen: &mut Pen<'_>,
    label: &mut String,
    load: &CpuLoad,
    grid: &MeterGrid,
    selected: bool,
    theme: &Theme,
) {
    let id = load.id();
    let d = grid.digits;
    label.clear();
    // Writing to a String cannot fail.
    let _ = match grid.cell {
        Cell::Named => write!(label, "cpu{id:<d$} "),
        Cell::Numbered => write!(label, "{id:>d$} "),
        Cell::Bare => write!(label, "{id:>d$}"),
    };
    let style = match load {
        _ if selected => theme.selected(),
        CpuLoad::Offline { .. } => theme.dim(),
        CpuLoad::Active { .. } | CpuLoad::Fresh { .. } => theme.text(),
    };
    pen.put(label, style);
    let with_share = grid.cell != Cell::Bare;
    match load {
        CpuLoad::Active { delta, total, .. } => {
            let busy = busy_ticks(delta);
            meter(pen, busy, *total, grid.bar, theme);
            if with_share {
                label.clear();
                let _ = write!(label, " {:>3}%", percent(busy, *total));
                pen.put(label, theme.text());
            }
        }
        CpuLoad::Fresh { .. } => mark(pen, ["just online", "new", "+"], grid.bar, theme),
        CpuLoad::Offline { .. } => mark(pen, ["offline", "off", "-"], grid.bar, theme),
    }
}

/// The first of `words` that fits in `width`, padded, or the one-letter
/// mark repeated to fill it; dim: a CPU with no share this interval.
fn mark(pen: &mut Pen<'_>, words: [&str; 3], width: usize, theme: &Theme) {
    match words[..2].iter().find(|w| w.len() <= width) {
        Some(w) => {
            pen.put(w, theme.dim());
            pen.repeat(' ', width - w.len(), theme.dim());
        }
        None => {
            let c = words[2].chars().next().unwrap_or('-');
            pen.repeat(c, width, theme.dim());
        }
    }
}

/// A bar of `width` cells for `busy` of `total`, the rest dotted.
fn meter(pen: &mut Pen<'_>, busy: u64, total: u64, width: usize, theme: &Theme) {
    let (full, part) = bar_cells(busy, total, width);
    pen.repeat('█', full, theme.bar(true));
    if let Some(c) = part {
        pen.repeat(c, 1, theme.bar(true));
    }
    pen.repeat('·', width - full - usize::from(part.is_some()), theme.dim());
}

/// A bar of `width` cells for `busy` of `total` in eighths of a cell,
/// rounded up so any work shows: the full cells, and the partial one.
fn bar_cells(busy: u64, total: u64, width: usize) -> (usize, Option<char>) {
    let eighths =
        (u128::from(busy.min(total)) * (width as u128) * 8).div_ceil(u128::from(total.max(1)));
    let eighths = usize::try_from(eighths).map_or(width * 8, |e| e.min(width * 8));
    let part = (eighths % 8).checked_sub(1).and_then(|p| EIGHTHS.get(p));
    (eighths / 8, part.copied())
}

/// `part` of `total` in whole percent, rounded; 0 of nothing.
fn percent(part: u64, total: u64) -> u64 {
    let part = u128::from(part.min(total));
    let total = u128::from(total);
    let share = (part * 100 + total / 2).checked_div(total).unwrap_or(0);
    u64::try_from(share).unwrap_or(100)
}

/// Writes text left to right on one row, never past the panel's edge.
struct Pen<'a> {
    buffer: &'a mut Buffer,
    x: u16,
    y: u16,
    right: u16,
}

impl<'a> Pen<'a> {
    fn at(buffer: &'a mut Buffer, inner: Rect, x: u16, y: u16) -> Self {
        Pen {
            buffer,
            x,
            y,
            right: inner.right(),
        }
    }

    /// `text` from here on. ASCII goes straight into the cells (the
    /// meters' labels and shares, 256 of each a frame); other text is
    /// measured as ratatui measures it.
    fn put(&mut self, text: &str, style: Style) {
        if text.is_ascii() {
            for c in text.chars() {
                self.repeat(c, 1, style);
            }
            return;
        }
        let room = usize::from(self.right.saturating_sub(self.x));
        if room == 0 {
            return;
        }
        let (x, _) = self.buffer.set_stringn(self.x, self.y, text, room, style);
        self.x = x;
    }

    /// `c`, one column wide (the bars' blocks and dots are), `n` times.
    fn repeat(&mut self, c: char, n: usize, style: Style) {
        for _ in 0..n {
            if self.x >= self.right {
                return;
            }
            if let Some(cell) = self.buffer.cell_mut((self.x, self.y)) {
                cell.set_char(c).set_style(style);
            }
            self.x += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_round_and_never_pass_a_hundred() {
        assert_eq!(percent(1, 3), 33);
        assert_eq!(percent(2, 3), 67);
        assert_eq!(percent(5, 0), 0);
        assert_eq!(percent(u64::MAX, u64::MAX), 100);
        assert_eq!(percent(u64::MAX, 7), 100, "more busy than all ticks");
    }

    /// A bar of `width` as drawn, with the cells it fills.
    fn drawn(busy: u64, total: u64, width: usize) -> String {
        let mut buffer = Buffer::empty(Rect::new(0, 0, 12, 1));
        let mut pen = Pen::at(&mut buffer, Rect::new(0, 0, 12, 1), 0, 0);
        meter(&mut pen, busy, total, width, &Theme { color: false });
        let x = pen.x;
        let text: String = (0..x)
            .map(|x| buffer[(x, 0)].symbol().to_string())
            .collect();
        assert_eq!(usize::from(x), width, "a bar is as long as asked: {text}");
        text
    }

    #[test]
    fn bars_fill_in_eighths_and_show_any_work() {
        assert_eq!(drawn(0, 100, 2), "··");
        assert_eq!(drawn(1, 1000, 2), "▏·", "any work shows");
        assert_eq!(drawn(50, 100, 2), "█·");
        assert_eq!(drawn(75, 100, 2), "█▌");
        assert_eq!(drawn(100, 100, 2), "██");
        assert_eq!(drawn(7, 0, 3), "···", "no ticks elapsed");
        assert_eq!(drawn(u64::MAX, 1, 3), "███", "never past the end");
        assert_eq!(drawn(u64::MAX, u64::MAX, 0), "");
        assert_eq!(bar_cells(1, 16, 1), (0, Some('▏')));
    }

    #[test]
    fn nothing_is_drawn_past_the_panel() {
        let mut buffer = Buffer::empty(Rect::new(0, 0, 8, 1));
        let inner = Rect::new(0, 0, 5, 1);
        let mut pen = Pen::at(&mut buffer, inner, 0, 0);
        pen.put("cpu12 ", Style::default());
        meter(&mut pen, 1, 2, 10, &Theme { color: false });
        pen.put("…", Style::default());
        let row: String = (0..8)
            .map(|x| buffer[(x, 0)].symbol().to_string())
            .collect();
        assert_eq!(row, "cpu12   ");
    }
}
