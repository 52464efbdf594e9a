//! `?`: every key ([`crate::tui::help`] lays them out), in a box as large
//! as the screen allows, two columns when it is wide, and pages when even
//! that is not enough, each page saying where it stands.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::boxes::{boxed, centered};
use super::theme::Theme;
use crate::tui::app::App;
use crate::tui::help::{BELOW, GAP, HelpRow, inside, layout};

/// One row of the box: the row of each column side by side.
fn joined<'a>(
    columns: &[Vec<HelpRow>],
    y: usize,
    key_width: usize,
    text_width: usize,
    theme: &Theme,
) -> Line<'a> {
    let mut spans = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw(" ".repeat(GAP)));
        }
        let width = key_width + text_width;
        match column.get(y) {
            Some(row) if row.heading => {
                spans.push(Span::styled(format!("{:<width$}", row.text), theme.title()));
            }
            Some(row) => {
                spans.push(Span::styled(
                    format!("{:<key_width$}", row.keys),
                    theme.title(),
                ));
                spans.push(Span::raw(format!("{:<text_width$}", row.text)));
            }
            None => spans.push(Span::raw(" ".repeat(width))),
        }
    }
    Line::from(spans)
}

/// What the header left out for want of room on a screen `screen`
/// columns wide (`+N in ?` points here), as the rows the help shows
/// above the keys in a box `width` wide inside; none when the header left
/// out only what matters little at a glance (the host, the kernel).
fn header_rows(app: &App, screen: u16, width: usize) -> Vec<String> {
    let hidden = super::header::hidden(app, screen);
    if hidden.iter().all(|h| h.minor) {
        return Vec::new();
    }
    let parts: Vec<&str> = hidden.iter().map(|h| h.text.as_str()).collect();
    let mut rows = crate::tui::help::wrap(
        &format!("Not in the header (no room): {}", parts.join(" · ")),
        width,
    );
    rows.push(String::new());
    rows
}

/// The room the keys have in the help's box on the app's screen: the box's
/// inside less the rows that say what the header left out. The app turns
/// the help's pages by it, as they are drawn.
pub fn keys_inside(app: &App) -> (usize, usize) {
    let (w, h) = app.screen_size();
    let (width, height) = inside(w, h);
    let above = header_rows(app, w, width).len();
    (width, height.saturating_sub(above).max(2))
}

/// The help's page the app is on, over the middle of the screen.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let (width, height) = inside(area.width, area.height);
    let above = header_rows(app, area.width, width);
    let above_width = above.iter().map(|r| r.chars().count()).max().unwrap_or(0);
    let height = height.saturating_sub(above.len()).max(2);
    let area = Rect {
        height: area.height.saturating_sub(BELOW),
        ..area
    };
    let l = layout(width, height);
    let pages = l.pages.len().max(1);
    let page = app.help_page().min(pages - 1);
    let Some(columns) = l.pages.get(page) else {
        return;
    };
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
    let mut lines: Vec<Line<'_>> = above
        .into_iter()
        .map(|row| Line::styled(row, theme.warning()))
        .collect();
    lines.extend((0..rows).map(|y| joined(columns, y, l.key_width, l.text_width, theme)));
    let title = if pages == 1 {
        "Keys (any key closes)".to_string()
    } else {
        lines.push(Line::styled(
            if page + 1 < pages {
                format!("▼ more on page {} of {pages}: PgDn", page + 2)
            } else {
                format!("▲ page {} of {pages}: PgUp goes back", page + 1)
            },
            theme.dim(),
        ));
        format!(
            "Keys (any key closes; PgDn PgUp turn: page {} of {pages})",
            page + 1
        )
    };
    let w = l.width().max(title.chars().count() + 2).max(above_width) + 3;
    let w = u16::try_from(w).unwrap_or(u16::MAX);
    let h = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    boxed(frame, centered(area, w, h), &title, lines, theme);
}
