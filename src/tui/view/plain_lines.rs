//! Lines drawn one to a row, cut at the area's width, straight into the
//! buffer: the cells a `Paragraph` of the same lines (no wrapping, no
//! scrolling, no alignment, no style of its own) draws, without its
//! passes over every cell of the area and its line composer.
//! Drawn for the panels that change every interval; the tests hold it to
//! the paragraph on hostile text.

use std::sync::LazyLock;

use ratatui::buffer::{Buffer, Cell, CellWidth};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span, StyledGrapheme};

/// Draws `lines` in `area`, one a row, from the top; lines past its height
/// are left out. A line ends at the first character that does not fit in
/// what is left of the row; one wider than the whole row is passed over,
/// as the paragraph does.
pub fn put(buf: &mut Buffer, area: Rect, lines: &[Line<'_>]) {
    let area = area.intersection(buf.area);
    for (y, line) in (area.y..area.bottom()).zip(lines) {
        let mut used = 0u16;
        'spans: for span in &line.spans {
            if let Some(text) = printable_ascii(span) {
                let style = Style::default().patch(line.style).patch(span.style);
                let fits = text.len().min(usize::from(area.width - used));
                put_ascii(buf, area.x + used, y, &text[..fits], style);
                used += u16::try_from(fits).unwrap_or(u16::MAX);
                if fits < text.len() {
                    break 'spans;
                }
                continue;
            }
            for grapheme in styled_graphemes(span, line.style) {
                let width = grapheme.symbol.cell_width();
                if width > area.width {
                    continue;
                }
                if u32::from(used) + u32::from(width) > u32::from(area.width) {
                    break 'spans;
                }
                if width == 0 {
                    continue;
                }
                let symbol = if grapheme.symbol.is_empty() {
                    " "
                } else {
                    grapheme.symbol
                };
                if let Some(cell) = buf.cell_mut((area.x + used, y)) {
                    cell.set_symbol(symbol).set_style(grapheme.style);
                }
                used += width;
            }
        }
    }
}

/// `span`'s text when it is printable ASCII alone: each byte a grapheme
/// one column wide (most of what the screen writes).
fn printable_ascii<'a>(span: &'a Span<'a>) -> Option<&'a str> {
    let text: &str = span.content.as_ref();
    text.bytes()
        .all(|b| (b' '..=b'~').contains(&b))
        .then_some(text)
}

/// Draws printable ASCII `text` from `x`, `y` on, a byte a cell, in
/// `style`: what drawing it grapheme by grapheme draws. The cells must be
/// inside the buffer (else nothing is drawn).
fn put_ascii(buf: &mut Buffer, x: u16, y: u16, text: &str, style: Style) {
    let area = buf.area;
    if x < area.x || y < area.y || y >= area.bottom() {
        return;
    }
    let at = usize::from(y - area.y) * usize::from(area.width) + usize::from(x - area.x);
    if usize::from(x) + text.len() > usize::from(area.right()) {
        return;
    }
    if let Some(cells) = buf.content.get_mut(at..at + text.len()) {
        let ascii = &*ASCII;
        for (cell, byte) in cells.iter_mut().zip(text.bytes()) {
            if let Some(like) = ascii.get(usize::from(byte.wrapping_sub(b' '))) {
                copy_symbol(cell, like);
            }
            cell.set_style(style);
        }
    }
}

/// A cell for each printable ASCII character, from the space on.
static ASCII: LazyLock<Vec<Cell>> = LazyLock::new(|| {
    (b' '..=b'~')
        .map(|b| {
            let mut cell = Cell::EMPTY;
            cell.set_char(char::from(b));
            cell
        })
        .collect()
});

/// Sets `cell`'s symbol to `like`'s, its style left as it was: the
/// symbol copied from a cell built once, where `Cell::set_symbol` builds
/// it again (a third of the cost of drawing a line of text).
#[allow(deprecated)]
#[inline]
pub fn copy_symbol(cell: &mut Cell, like: &Cell) {
    let mut next = like.clone();
    next.fg = cell.fg;
    next.bg = cell.bg;
    next.underline_color = cell.underline_color;
    next.modifier = cell.modifier;
    next.diff_option = cell.diff_option;
    next.skip = cell.skip;
    *cell = next;
}

/// A character that is a grapheme of its own whatever surrounds it: no
/// mark, joiner, selector, control, prepended sign or regional indicator
/// can be one (printable ASCII, Latin letters and signs without the
/// combining marks, general punctuation before the line separator,
/// arrows, box drawing, blocks and geometric shapes: what the screen's
/// text, rules, bars and markers are made of).
fn stands_alone(c: char) -> bool {
    matches!(c,
        ' '..='~'
        | '\u{a1}'..='\u{ac}'
        | '\u{ae}'..='\u{2ff}'
        | '\u{2010}'..='\u{2027}'
        | '\u{2190}'..='\u{21ff}'
        | '\u{2500}'..='\u{25ff}')
}

/// Whether every character of `line` stands alone ([`stands_alone`]).
pub fn alone(line: &Line<'_>) -> bool {
    line.spans
        .iter()
        .all(|span| span.content.chars().all(stands_alone))
}

/// The graphemes of `span`'s text: for text of characters that stand
/// alone, one a character (what the segmenter finds there, for a fraction
/// of its cost), otherwise the segmenter's. Graphemes with a control
/// character are left out, as ratatui leaves them out.
fn graphemes<'a>(span: &'a Span<'a>) -> Box<dyn Iterator<Item = &'a str> + 'a> {
    let text: &'a str = span.content.as_ref();
    if text.chars().all(stands_alone) {
        Box::new(
            text.char_indices()
                .map(move |(i, c)| &text[i..i + c.len_utf8()]),
        )
    } else {
        Box::new(span.styled_graphemes(Style::default()).map(|g| g.symbol))
    }
}

/// The graphemes of `span` under the line's style `line_style`, as
/// [`Line::styled_graphemes`] gives them.
fn styled_graphemes<'a>(
    span: &'a Span<'a>,
    line_style: Style,
) -> impl Iterator<Item = StyledGrapheme<'a>> + 'a {
    let style = Style::default().patch(line_style).patch(span.style);
    graphemes(span).map(move |symbol| StyledGrapheme { symbol, style })
}

/// Draws `line` at `x`, `y` in at most `max_width` columns: the cells
/// [`Buffer::set_line`] draws (each span cut before the first grapheme
/// that does not fit, the line's style under each span's, a wide
/// grapheme's hidden cells reset), its graphemes found as [`graphemes`]
/// finds them. A row outside the buffer is left alone.
pub fn set_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) {
    if y < buf.area.top() || y >= buf.area.bottom() {
        return;
    }
    let mut x = x;
    let mut remaining = max_width;
    for span in &line.spans {
        if remaining == 0 {
            break;
        }
        let style = line.style.patch(span.style);
        let start = x;
        let mut room = buf.area.right().saturating_sub(x).min(remaining);
        if let Some(text) = printable_ascii(span).filter(|_| x >= buf.area.x) {
            let fits = text.len().min(usize::from(room));
            put_ascii(buf, x, y, &text[..fits], style);
            x += u16::try_from(fits).unwrap_or(u16::MAX);
            remaining = remaining.saturating_sub(x - start);
            continue;
        }
        // A run of one symbol (a bar) is measured once.
        let mut last: Option<(&str, u16)> = None;
        for symbol in graphemes(span) {
            let width = match last {
                Some((s, w)) if s == symbol => w,
                _ => {
                    let w = symbol.cell_width();
                    last = Some((symbol, w));
                    w
                }
            };
            if width == 0 {
                continue;
            }
            let Some(left) = room.checked_sub(width) else {
                break;
            };
            room = left;
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.set_symbol(symbol).set_style(style);
            }
            let next = x + width;
            x += 1;
            while x < next {
                if let Some(cell) = buf.cell_mut((x, y)) {
                    cell.reset();
                }
                x += 1;
            }
        }
        remaining = remaining.saturating_sub(x.saturating_sub(start));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::view::hostile_text::{hostile, style};
    use proptest::prelude::*;
    use ratatui::style::{Color, Style};
    use ratatui::text::Span;
    use ratatui::widgets::{Paragraph, Widget};

    fn line() -> impl Strategy<Value = Line<'static>> {
        (
            proptest::collection::vec((hostile(30), style()), 0..4),
            style(),
        )
            .prop_map(|(spans, style)| {
                Line::from(
                    spans
                        .into_iter()
                        .map(|(t, s)| Span::styled(t, s))
                        .collect::<Vec<_>>(),
                )
                .style(style)
            })
    }

    proptest! {
        /// Every cell is what the paragraph draws, on a cleared area or over
        /// what was drawn there before.
        #[test]
        fn draws_what_a_paragraph_draws(
            lines in proptest::collection::vec(line(), 0..6),
            screen in (0u16..3, 0u16..3, 1u16..40, 1u16..8),
            panel in (0u16..40, 0u16..8, 0u16..40, 0u16..8),
            drawn_on in proptest::bool::ANY,
        ) {
            let screen = Rect::new(screen.0, screen.1, screen.2, screen.3);
            let panel = Rect::new(
                screen.x + panel.0 % screen.width,
                screen.y + panel.1 % screen.height,
                panel.2,
                panel.3,
            )
            .intersection(screen);
            let mut ours = Buffer::empty(screen);
            if drawn_on {
                let mut under = ratatui::buffer::Cell::new("漢");
                under.set_style(Style::default().bg(Color::Red));
                ours = Buffer::filled(screen, under);
            }
            let mut theirs = ours.clone();
            put(&mut ours, panel, &lines);
            Paragraph::new(lines.clone()).render(panel, &mut theirs);
            prop_assert_eq!(ours, theirs);
        }

        /// Every cell is what ratatui's `set_line` draws, over what was
        /// drawn there before, at any place and width.
        #[test]
        fn sets_what_set_line_sets(
            line in line(),
            screen in (1u16..40, 1u16..4),
            at in (0u16..45, 0u16..4),
            max_width in 0u16..50,
        ) {
            let screen = Rect::new(0, 0, screen.0, screen.1);
            let mut under = ratatui::buffer::Cell::new("漢");
            under.set_style(Style::default().bg(Color::Red));
            let mut ours = Buffer::filled(screen, under);
            let mut theirs = ours.clone();
            let (x, y) = (at.0.min(screen.width), at.1 % screen.height);
            set_line(&mut ours, x, y, &line, max_width);
            theirs.set_line(x, y, &line, max_width);
            prop_assert_eq!(ours, theirs);
        }
    }
}
