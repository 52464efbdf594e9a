//! Why the guest will not settle: flapping with its period, the feedback
//! loops the rules run into, known patterns with their evidence, and the
//! latest changes of decision with the
//! comparisons that flipped ("CP_idleAVG * onumcpus went 1.17 → 1.12
//! across 1.15"), newest first.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::theme::Theme;
use super::top_rule::TopRule;
use crate::control::watch::KEPT_FLIPS;
use crate::tui::app::App;
use crate::tui::flip_rows::{self, Tone};

/// Draws the Flips view.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let block = TopRule::new(Span::styled(
        " Flips: why the decisions changed (newest at the bottom; ↑↓ PgUp PgDn) ",
        theme.title(),
    ));
    let inner = super::fit::text_area(TopRule::inner(area));
    frame.render_widget(block, area);
    let width = inner.width.max(1);
    let found = flip_rows::findings(app.flips_shown(), app.hints());
    let mut lines: Vec<Line<'_>> = found.iter().flat_map(|r| rows(r, width, theme)).collect();
    // The changes read like the Log: oldest first, the newest at the
    // bottom; ↑ goes back. The newest that fit are taken by their
    // wrapped height, so an entry is never cut in half.
    let changes = app.flips_shown().changes();
    let scroll = app
        .selection()
        .flips_scroll()
        .min(changes.len().saturating_sub(1));
    let room = usize::from(inner.height)
        .saturating_sub(flip_rows::height(&found, width))
        .saturating_sub(usize::from(scroll > 0));
    let mut used = 0;
    let mut entries: Vec<(usize, Vec<(Tone, String)>)> = Vec::new();
    for c in changes.iter().rev().skip(scroll) {
        let entry = flip_rows::change(c);
        let h = flip_rows::height(&entry, width);
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
    // With the oldest kept shown, the row says how many older changes
    // were not kept and where they are: at an earlier interval, whose
    // Flips list the changes up to it.
    let dropped = app.flips_shown().dropped();
    while dropped > 0
        && changes.len() - scroll == entries.len()
        && used + 1 > room
        && entries.len() > 1
    {
        if let Some((h, _)) = entries.pop() {
            used -= h;
        }
    }
    let older = changes.len().saturating_sub(scroll + entries.len());
    if older > 0 {
        lines.push(Line::from(Span::styled(
            format!("… {older} older (↑ PgUp)"),
            theme.dim(),
        )));
    } else if dropped > 0 {
        lines.push(Line::from(Span::styled(
            format!("… {dropped} older not kept ({KEPT_FLIPS} are): ← or [ goes back to them"),
            theme.dim(),
        )));
    }
    for (_, entry) in entries.iter().rev() {
        lines.extend(entry.iter().flat_map(|r| rows(r, width, theme)));
    }
    if scroll > 0 {
        lines.push(Line::from(Span::styled(
            format!("… {scroll} newer (↓ PgDn)"),
            theme.dim(),
        )));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// One entry's line of the Flips view, wrapped with its continuation
/// indented (as [`flip_rows::height`] counts it), in its style.
fn rows<'a>((tone, text): &(Tone, String), width: u16, theme: &Theme) -> Vec<Line<'a>> {
    crate::tui::list_rows::hanging(text, width)
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            // A hint's name heads its first row only.
            let tone = match tone {
                Tone::Hint if i > 0 => Tone::Plain,
                t => *t,
            };
            styled(&(tone, row), theme)
        })
        .collect()
}

/// One row of the Flips view in its style.
fn styled<'a>((tone, text): &(Tone, String), theme: &Theme) -> Line<'a> {
    match tone {
        Tone::Warning => Line::styled(text.clone(), theme.warning()),
        Tone::Quiet => Line::styled(text.clone(), theme.dim()),
        Tone::Heading => Line::styled(text.clone(), theme.text()),
        Tone::Plain => Line::raw(text.clone()),
        // The pattern's name stands out, its evidence and advice follow.
        Tone::Hint => match text.split_once("] ") {
            Some((name, rest)) => Line::from(vec![
                Span::styled(format!("{name}] "), theme.title()),
                Span::raw(rest.to_string()),
            ]),
            None => Line::raw(text.clone()),
        },
    }
}
