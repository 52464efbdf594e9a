//! The log: decisions, actions, proposals, mode switches, faults, errors.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::theme::Theme;
use crate::rules::eval::Outcome;
use crate::tui::app::{App, LogKind};

/// Draws the newest log lines (or, in the log view, the scrolled ones).
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme, full: bool) {
    let travelling = app.cursor.is_some();
    let title = match (full, travelling) {
        (true, false) => " Log (↑↓ scroll, e exports) ".to_string(),
        (true, true) => " Log up to the interval shown (↑↓ scroll, e exports) ".to_string(),
        (false, false) => " Log ".to_string(),
        (false, true) => " Log up to the interval shown ".to_string(),
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let room = inner.height as usize;
    let shown = app.log_shown().count();
    let scroll = if full {
        app.log_scroll.min(shown.saturating_sub(room))
    } else {
        0
    };
    let lines: Vec<Line<'_>> = app
        .log_shown()
        .rev()
        .skip(scroll)
        .take(room)
        .collect::<Vec<_>>()
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
    frame.render_widget(Paragraph::new(lines), inner);
}
