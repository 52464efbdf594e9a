//! Lines drawn one to a row, cut at the area's width, straight into the
//! buffer: the cells a `Paragraph` of the same lines (no wrapping, no
//! scrolling, no alignment, no style of its own) draws, without its
//! passes over every cell of the area and its line composer.
//! Drawn for the panels that change every interval; the tests hold it to
//! the paragraph on hostile text.

use ratatui::buffer::{Buffer, CellWidth};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

/// Draws `lines` in `area`, one a row, from the top; lines past its height
/// are left out. A line ends at the first character that does not fit in
/// what is left of the row; one wider than the whole row is passed over,
/// as the paragraph does.
pub fn put(buf: &mut Buffer, area: Rect, lines: &[Line<'_>]) {
    let area = area.intersection(buf.area);
    for (y, line) in (area.y..area.bottom()).zip(lines) {
        let mut used = 0u16;
        for grapheme in line.styled_graphemes(Style::default()) {
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
    }
}
