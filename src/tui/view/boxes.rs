//! Boxes drawn over the screen (dialogs, prompts, the help): centred,
//! cleared beneath, and as tall as their wrapped text, so a dialog grows
//! to its text instead of cutting it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding, Paragraph, Wrap};

use super::theme::Theme;

/// `width`×`height` (at most `area`) in the middle of `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Beside a box, the screen's text is cleared this far (a free column), or
/// to the screen's edge where no more than this many columns would be left.
const NARROW_SIDE: u16 = 3;

/// What a box at `b` over `screen` clears: the box, a free column each
/// side, and all of a side too narrow to show more than a cut word. The
/// screen's text never touches a border, where a letter would read as part
/// of the box (`┐B`, a cut `MiB` beside it).
pub fn backdrop(screen: Rect, b: Rect) -> Rect {
    let b = b.intersection(screen);
    let left_gap = b.x.saturating_sub(screen.x);
    let right_gap = screen.right().saturating_sub(b.right());
    let left = if left_gap <= NARROW_SIDE { left_gap } else { 1 };
    let right = if right_gap <= NARROW_SIDE {
        right_gap
    } else {
        1
    };
    Rect::new(b.x - left, b.y, b.width + left + right, b.height)
}

/// A box at `b` over the screen: its backdrop (see [`backdrop`]) cleared.
pub fn clear_under(frame: &mut Frame<'_>, b: Rect) {
    let screen = frame.area();
    frame.render_widget(Clear, backdrop(screen, b));
}

/// The columns text has inside a box `width` wide: the borders and the
/// free column before the right border (see `fit`) taken off.
pub fn box_inner(width: u16) -> u16 {
    width.saturating_sub(3).max(1)
}

/// The rows `lines` take inside a box `width` wide, wrapped as drawn, with
/// the borders: dialogs grow to their text instead of cutting it.
pub fn box_height(lines: &[Line<'_>], width: u16) -> u16 {
    let inner = box_inner(width);
    let rows = Paragraph::new(lines.to_vec())
        .wrap(Wrap { trim: false })
        .line_count(inner);
    u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2)
}

/// A dialog centred in `area`, as wide as `width` allows and as tall as
/// its wrapped text.
pub fn sized_box(
    frame: &mut Frame<'_>,
    area: Rect,
    width: u16,
    title: &str,
    lines: Vec<Line<'_>>,
    theme: &Theme,
) {
    let w = width.min(area.width);
    let h = box_height(&lines, w);
    boxed(frame, centered(area, w, h), title, lines, theme);
}

/// A bordered box whose last inner column stays free: text wraps one
/// column short of the right border, so a word never touches it (a letter
/// there would read as cut).
pub fn panel() -> Block<'static> {
    Block::bordered().padding(Padding::right(1))
}

/// `lines` in a bordered box over `area`, titled, wrapped.
pub fn boxed(frame: &mut Frame<'_>, area: Rect, title: &str, lines: Vec<Line<'_>>, theme: &Theme) {
    clear_under(frame, area);
    let block = panel().title(Span::styled(format!(" {title} "), theme.title()));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}
