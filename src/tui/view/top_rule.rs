//! A panel's top border with its title on it: the cells that
//! `Block::default().borders(Borders::TOP).title(title)` draws, and only
//! those. The block also styles its whole area with its style, which with
//! no style changes no cell but still visits every cell of the panel at
//! every frame (with the paragraphs inside, a few percent of what the
//! screen cost when nothing changed). The tests hold it to the block.

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Widget;

use super::plain_lines;

/// The line a plain block's top border is drawn with.
const RULE: &str = "─";

/// A cell of the rule, its symbol copied to the rule's cells.
static RULE_CELL: Cell = Cell::new(RULE);

/// A top border with a title at its left.
#[derive(Debug, Clone)]
pub struct TopRule<'a> {
    title: Line<'a>,
}

impl<'a> TopRule<'a> {
    /// A rule under `title` (a span or a line, as a block takes it).
    pub fn new(title: impl Into<Line<'a>>) -> Self {
        TopRule {
            title: title.into(),
        }
    }

    /// What lies below the rule in `area`, as `Block::inner` says.
    pub fn inner(area: Rect) -> Rect {
        Rect {
            y: area.y.saturating_add(1).min(area.bottom()),
            height: area.height.saturating_sub(1),
            ..area
        }
    }
}

impl Widget for TopRule<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        // The rule's row of cells, found once (the area is inside the buffer).
        let at = usize::from(area.y - buf.area.y) * usize::from(buf.area.width)
            + usize::from(area.x - buf.area.x);
        if let Some(cells) = buf.content.get_mut(at..at + usize::from(area.width)) {
            for cell in cells {
                plain_lines::copy_symbol(cell, &RULE_CELL);
            }
        }
        // A title of characters that each stand alone (one a cell, as
        // every panel's is) draws as `set_line` draws it; other text (a
        // combining mark at its start) goes through the line's own render.
        if self.title.alignment.is_none() && plain_lines::alone(&self.title) {
            plain_lines::set_line(buf, area.x, area.y, &self.title, area.width);
            return;
        }
        // A title wider than the panel is cut at its edge, as the block's.
        let width = u16::try_from(self.title.width()).unwrap_or(u16::MAX);
        let title_area = Rect {
            width: width.min(area.width),
            height: 1,
            ..area
        };
        self.title.render(title_area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::view::hostile_text::{hostile, style};
    use proptest::prelude::*;
    use ratatui::style::Style;
    use ratatui::text::Span;
    use ratatui::widgets::{Block, Borders};

    /// A buffer already drawn on (styles and wide characters), as a frame
    /// is when a panel's rule goes over what was drawn before it.
    fn drawn_on(area: Rect, text: &str, style: Style) -> Buffer {
        let mut buf = Buffer::empty(area);
        for y in area.top()..area.bottom() {
            buf.set_stringn(area.x, y, text, usize::from(area.width), style);
        }
        buf
    }

    proptest! {
        /// Every cell is what the block draws, the area below the rule is
        /// the block's inside, wherever the panel lies in the buffer (in
        /// part or wholly outside it).
        #[test]
        fn draws_what_a_top_bordered_block_draws(
            title in hostile(40),
            under in hostile(40),
            title_style in style(),
            under_style in style(),
            screen in (0u16..4, 0u16..4, 0u16..50, 0u16..6),
            panel in (0u16..60, 0u16..12, 0u16..60, 0u16..10),
        ) {
            let screen = Rect::new(screen.0, screen.1, screen.2, screen.3);
            let panel = Rect::new(panel.0, panel.1, panel.2, panel.3);
            let mut ours = drawn_on(screen, &under, under_style);
            let mut block = ours.clone();
            let span = Span::styled(title.clone(), title_style);
            TopRule::new(span.clone()).render(panel, &mut ours);
            let theirs = Block::default().borders(Borders::TOP).title(span);
            prop_assert_eq!(TopRule::inner(panel), theirs.inner(panel));
            theirs.render(panel, &mut block);
            prop_assert_eq!(ours, block);
        }
    }

    /// The rule runs the panel's width, the title over its start.
    #[test]
    fn the_title_sits_on_the_rule() {
        let area = Rect::new(0, 0, 12, 2);
        let mut buf = Buffer::empty(area);
        TopRule::new(" CPUs ").render(area, &mut buf);
        assert_eq!(buf, Buffer::with_lines([" CPUs ──────", "            "]));
        assert_eq!(TopRule::inner(area), Rect::new(0, 1, 12, 1));
    }
}
