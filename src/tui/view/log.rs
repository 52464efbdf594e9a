//! The log: decisions, actions, proposals, mode switches, faults, errors.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::theme::Theme;
use crate::rules::eval::Outcome;
use crate::tui::app::{App, LogKind, LogLine};
use crate::tui::modal::Modal;

/// The end of a long (pasted) search text, where the typing goes on: no
/// more than `room` characters, a cut marked `…`.
fn tail(text: &str, room: usize) -> String {
    match text.char_indices().rev().nth(room) {
        Some((b, c)) => format!("…{}", &text[b + c.len_utf8()..]),
        None => text.to_string(),
    }
}

/// Draws the newest log lines (or, in the log view, the scrolled ones).
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme, full: bool) {
    let travelling = app.timeline().cursor().is_some();
    // The search applies to the Log view, not the overview's panel.
    let filter = app
        .log()
        .filter()
        .filter(|_| full)
        .map(|f| f.to_lowercase());
    let matches = |l: &&LogLine| {
        filter
            .as_ref()
            .is_none_or(|f| f.is_empty() || l.shown().to_lowercase().contains(f.as_str()))
    };
    let title = match (full, travelling) {
        (true, false) => " Log (↑↓ scroll, e exports) ".to_string(),
        (true, true) => " Log up to the interval shown (↑↓ scroll, e exports) ".to_string(),
        (false, false) => " Log ".to_string(),
        (false, true) => " Log up to the interval shown ".to_string(),
    };
    let title = match (app.log().filter(), full) {
        (Some(f), true) if app.modals().is_open(&Modal::Search) => {
            let f = tail(f, usize::from(area.width));
            format!(" Search the log: {f}▏ (Enter keeps, Esc drops) ")
        }
        (Some(f), true) => format!(
            " Log lines with \"{}\": {} (/ searches again, Esc in the search drops it) ",
            tail(f, usize::from(area.width)),
            app.log_shown().filter(matches).count()
        ),
        _ => title,
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // Lines wrap one column short of the edge (see `super::fit`).
    let inner = Rect {
        width: inner.width.saturating_sub(1).max(1),
        ..inner
    };
    let room = inner.height as usize;
    let shown = app.log_shown().filter(matches).count();
    let scroll = if full {
        app.log().scroll().min(shown.saturating_sub(room))
    } else {
        0
    };
    // Lines wrap (a reason or a fault is never cut), so the newest entries
    // that fit are taken by their wrapped height.
    let width = usize::from(inner.width.max(1));
    let mut used = 0;
    let newest: Vec<&LogLine> = app
        .log_shown()
        .filter(matches)
        .rev()
        .skip(scroll)
        .take_while(|l| {
            // The height ratatui will wrap it to (word by word); a line
            // that fits takes one row without asking.
            let line = Line::from(format!("{} {}", super::clock(l.stamp), l.shown()));
            used += if line.width() <= width {
                1
            } else {
                Paragraph::new(line)
                    .wrap(Wrap { trim: false })
                    .line_count(width as u16)
                    .max(1)
            };
            used <= room
        })
        .collect();
    let lines: Vec<Line<'_>> = newest
        .into_iter()
        .rev()
        .map(|l| {
            let style = match l.kind {
                LogKind::Problem => {
                    theme.outcome(Outcome::Fault(crate::rules::fpu::Fault::Invalid))
                }
                LogKind::Action => theme.outcome(Outcome::Truth(true)),
                LogKind::Decision => theme.text(),
                LogKind::Note => theme.dim(),
            };
            Line::from(vec![
                Span::styled(format!("{} ", super::clock(l.stamp)), theme.dim()),
                Span::styled(l.shown(), style),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
