//! Why the guest will not settle: flapping with its period, the feedback
//! loops the rules run into, known patterns with their evidence, and the
//! latest changes of decision with the
//! comparisons that flipped ("CP_idleAVG * onumcpus went 1.17 → 1.12
//! across 1.15"), newest first.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::theme::Theme;
use crate::tui::app::App;

/// Draws the Flips view.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        " Flips: why the decisions changed (newest at the bottom, ↑↓ scroll) ",
        theme.title(),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // Lines wrap one column short of the edge (see `super::fit`).
    let inner = Rect {
        width: inner.width.saturating_sub(1).max(1),
        ..inner
    };
    let mut lines: Vec<Line<'_>> = Vec::new();
    let config = app.board().flips().config();
    let flapping = app.board().flips().flapping();
    if flapping.is_empty() {
        lines.push(Line::from(Span::styled(
            format!(
                "not flapping (flapping = {} or more reversals within {} intervals)",
                config.reversals, config.window
            ),
            theme.dim(),
        )));
    }
    for f in flapping {
        lines.push(Line::from(Span::styled(f.to_string(), theme.warning())));
    }
    for l in app.board().flips().loops() {
        lines.push(Line::from(Span::styled(l.to_string(), theme.warning())));
    }
    for h in app.hints() {
        lines.push(Line::from(vec![
            Span::styled(format!("hint [{}] ", h.name), theme.title()),
            Span::raw(format!("{}: {}", h.evidence, h.advice)),
        ]));
    }
    lines.push(Line::from(""));
    if app.board().flips().changes().is_empty() {
        lines.push(Line::from(Span::styled(
            "no decision has changed yet",
            theme.dim(),
        )));
    }
    // The changes read like the Log: oldest first, the newest at the
    // bottom; ↑ goes back. The newest that fit are taken by their
    // wrapped height, so an entry is never cut in half.
    let height = |ls: &[Line<'_>]| {
        Paragraph::new(ls.to_vec())
            .wrap(Wrap { trim: false })
            .line_count(inner.width.max(1))
    };
    let changes = app.board().flips().changes();
    let scroll = app
        .selection()
        .flips_scroll()
        .min(changes.len().saturating_sub(1));
    let room = usize::from(inner.height)
        .saturating_sub(height(&lines))
        .saturating_sub(usize::from(scroll > 0));
    let mut used = 0;
    let mut entries: Vec<(usize, Vec<Line<'_>>)> = Vec::new();
    for c in changes.iter().rev().skip(scroll) {
        let entry = change_lines(c, theme);
        let h = height(&entry);
        if used + h > room && !entries.is_empty() {
            break;
        }
        used += h;
        entries.push((h, entry));
    }
    // One row says how many older ones there are, when any are left out.
    while changes.len() - scroll > entries.len() && used + 1 > room && entries.len() > 1 {
        if let Some((h, _)) = entries.pop() {
            used -= h;
        }
    }
    let older = changes.len().saturating_sub(scroll + entries.len());
    if older > 0 {
        lines.push(Line::from(Span::styled(
            format!("… {older} older (↑)"),
            theme.dim(),
        )));
    }
    let entries: Vec<Vec<Line<'_>>> = entries.into_iter().map(|(_, e)| e).collect();
    lines.extend(entries.into_iter().rev().flatten());
    if scroll > 0 {
        lines.push(Line::from(Span::styled(
            format!("… {scroll} newer (↓)"),
            theme.dim(),
        )));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// One change of decision and the comparisons that flipped it.
fn change_lines<'a>(c: &crate::control::watch::ChangedDecision, theme: &Theme) -> Vec<Line<'a>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("#{} ", c.reading), theme.dim()),
        Span::styled(format!("{} → {}", c.before, c.after), theme.text()),
    ])];
    if c.why.is_empty() {
        lines.push(Line::from(Span::styled(
            "    no comparison flipped (a limit, or a rule not evaluated before)",
            theme.dim(),
        )));
    }
    for w in &c.why {
        lines.push(Line::from(Span::raw(format!("    {w}"))));
    }
    lines
}
