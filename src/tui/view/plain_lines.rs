//! Lines drawn one to a row, cut at the area's width, straight into the
//! buffer: the cells a `Paragraph` of the same lines (no wrapping, no
//! scrolling, no alignment, no style of its own) draws, without its
//! passes over every cell of the area and its line composer.
//! Drawn for the panels that change every interval; the tests hold it to
//! the paragraph on hostile text.

use ratatui::buffer::{Buffer, CellWidth};
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
        let graphemes = line
            .spans
            .iter()
            .flat_map(|span| graphemes(span, line.style));
        for grapheme in graphemes {
            let width = grapheme.symbol.cell_width();
            if width > area.width {
                continue;
            }
            if u32::from(used) + u32::from(width) > u32::from(area.width) {
                break;
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

/// Printable ASCII (space to `~`): each byte is a grapheme of one column,
/// with no segmenter needed to find it.
fn plain_ascii(text: &str) -> bool {
    text.bytes().all(|b| (b' '..=b'~').contains(&b))
}

/// The graphemes of `span` under the line's style `line_style`, as
/// [`Line::styled_graphemes`] gives them: for printable ASCII one a byte
/// (what the segmenter finds there, for a fraction of its cost), otherwise
/// the segmenter's.
fn graphemes<'a>(
    span: &'a Span<'a>,
    line_style: Style,
) -> Box<dyn Iterator<Item = StyledGrapheme<'a>> + 'a> {
    let content: &'a str = span.content.as_ref();
    if plain_ascii(content) {
        let style = Style::default().patch(line_style).patch(span.style);
        Box::new((0..content.len()).map(move |i| StyledGrapheme {
            symbol: &content[i..=i],
            style,
        }))
    } else {
        Box::new(span.styled_graphemes(Style::default().patch(line_style)))
    }
}

/// Draws `line` at `x`, `y` in at most `max_width` columns: the cells
/// [`Buffer::set_line`] draws (each span cut where the next grapheme does
/// not fit, the line's style under each span's), with printable ASCII set
/// a byte a cell without the segmenter. A row outside the buffer is left.
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
        let content: &str = span.content.as_ref();
        if !plain_ascii(content) {
            let end = buf
                .set_stringn(
                    x,
                    y,
                    content,
                    usize::from(remaining),
                    line.style.patch(span.style),
                )
                .0;
            remaining = remaining.saturating_sub(end.saturating_sub(x));
            x = end;
            continue;
        }
        let style = line.style.patch(span.style);
        let room = buf.area.right().saturating_sub(x).min(remaining);
        let n = u16::try_from(content.len()).unwrap_or(u16::MAX).min(room);
        for i in 0..n {
            let at = usize::from(i);
            if let Some(cell) = buf.cell_mut((x + i, y)) {
                cell.set_symbol(&content[at..=at]).set_style(style);
            }
        }
        x += n;
        remaining = remaining.saturating_sub(n);
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
