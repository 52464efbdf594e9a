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
        " Flips: why the decisions changed (↑↓ scroll) ",
        theme.title(),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines: Vec<Line<'_>> = Vec::new();
    let config = app.session.watch().flap.config();
    let flapping = app.session.watch().flapping();
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
    for l in &app.session.watch().loops {
        lines.push(Line::from(Span::styled(l.to_string(), theme.warning())));
    }
    for h in &app.hints {
        lines.push(Line::from(vec![
            Span::styled(format!("hint [{}] ", h.name), theme.title()),
            Span::raw(format!("{}: {}", h.evidence, h.advice)),
        ]));
    }
    lines.push(Line::from(""));
    if app.session.watch().changes.is_empty() {
        lines.push(Line::from(Span::styled(
            "no decision has changed yet",
            theme.dim(),
        )));
    }
    for c in app
        .session
        .watch()
        .changes
        .iter()
        .rev()
        .skip(app.flips_scroll)
    {
        lines.push(Line::from(vec![
            Span::styled(format!("#{} ", c.reading), theme.dim()),
            Span::styled(format!("{} → {}", c.before, c.after), theme.text()),
        ]));
        if c.why.is_empty() {
            lines.push(Line::from(Span::styled(
                "    no comparison flipped (a limit, or a rule not evaluated before)",
                theme.dim(),
            )));
        }
        for w in &c.why {
            lines.push(Line::from(Span::raw(format!("    {w}"))));
        }
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
