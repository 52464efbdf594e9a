//! `?` on the fleet screen: every key of every view in a box over the
//! screen, the view the user is in first; `?` or Esc closes it. The key
//! line has room for a few keys only; this is where all of them are said.
//! A pure render of [`FleetApp`], like the rest of the screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::tui::view::boxes::{centered, clear_under};

use super::app::{FleetApp, FleetView};
use super::format::fit;

/// One section of the help: the view it is about (`None`: every view), its
/// title, and (keys, what they do).
pub type HelpSection = (
    Option<FleetView>,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// Every key of each view as the help lists it: (view, its title, (keys,
/// what they do)). `super::screen` maps the keys; a test holds every key
/// of the key line ([`super::app::KEYS`]) to be here under its views.
pub const HELP: &[HelpSection] = &[
    (
        Some(FleetView::Table),
        "the fleet table",
        &[
            ("↑↓ j k", "select a guest (PgUp PgDn: a page)"),
            ("Enter", "open the guest: its window in detail"),
            ("/", "filter (Enter keeps it, Esc clears it)"),
            ("s S", "sort by the next column, reverse it"),
            ("d", "drift: guests grouped by rule file"),
            ("r", "refresh now"),
            ("Esc", "back: clear the filter"),
        ],
    ),
    (
        Some(FleetView::Drift),
        "drift",
        &[
            ("↑↓ j k", "select a group"),
            ("D Enter", "diff its file against the most common"),
            ("Esc", "back to the table"),
        ],
    ),
    (
        Some(FleetView::Diff),
        "diff",
        &[
            ("↑↓ j k", "scroll; PgUp PgDn a page, Home End the ends"),
            ("Esc", "back to the groups"),
        ],
    ),
    (
        Some(FleetView::GuestDetail),
        "one guest",
        &[
            ("←→ h l", "move the window by its length"),
            ("r", "refresh now"),
            ("Esc", "back to the table"),
        ],
    ),
    (
        None,
        "everywhere",
        &[
            ("?", "this help (? or Esc closes it)"),
            ("q Ctrl-C", "quit"),
        ],
    ),
];

/// Width of the keys' column.
const KEY: usize = 9;

/// The widest the box gets.
const WIDTH: u16 = 56;

/// The help's lines, the sections of `view` and of every view first.
pub fn lines(view: FleetView) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut sections: Vec<_> = HELP.iter().collect();
    // The view the user is in first, the other views after.
    sections.sort_by_key(|(v, _, _)| match v {
        Some(v) if *v == view => 0,
        None => 1,
        Some(_) => 2,
    });
    let mut out = Vec::new();
    for (v, title, keys) in sections {
        let here = if *v == Some(view) { " (here)" } else { "" };
        out.push(Line::styled(format!("{title}{here}"), bold));
        for (k, what) in keys.iter() {
            out.push(Line::from(vec![
                Span::styled(format!(" {}", fit(k, KEY)), bold),
                Span::raw(*what),
            ]));
        }
    }
    out
}

/// The help over `area` (the whole screen), centred, as tall as it fits.
pub fn draw(frame: &mut Frame, app: &FleetApp, area: Rect) {
    let lines = lines(app.view);
    let w = WIDTH.min(area.width);
    let h = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let boxed = centered(area, w, h);
    clear_under(frame, boxed);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" keys: ? or Esc closes ");
    frame.render_widget(Paragraph::new(lines).block(block), boxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::app::KEYS;

    #[test]
    fn every_key_of_the_key_line_is_in_the_help_under_its_views() {
        for (key, views, _) in KEYS {
            for view in *views {
                let listed = HELP.iter().any(|(v, _, keys)| {
                    (v.is_none() || *v == Some(*view))
                        && keys.iter().any(|(k, _)| k.split(' ').any(|k| k == *key))
                });
                assert!(listed, "{key} of {view:?} is not in the help");
            }
        }
    }
}
