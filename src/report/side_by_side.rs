//! Two values side by side under a label, as `whatif` compares two rule
//! files and `sim --compare` two runs: the values right-aligned in columns
//! as wide as the widest (counted in columns as drawn, so wide characters
//! line up); narrow, each column keeps to half the room beside the labels
//! and a longer value (a file's name) is cut in its middle, its start and
//! its end (`.conf`) kept.

use std::fmt::Write as _;

use super::Layout;
use super::words::{cols, middle_cut, pad_left, pad_right};

/// The columns a value may take beside labels `label` columns wide (the
/// two-column indent apart): half of what the line leaves, at least 8;
/// unbounded when wide.
pub fn room(label: usize, layout: Layout) -> usize {
    match layout {
        Layout::Narrow { width } => (width.saturating_sub(label + 4) / 2).max(8),
        Layout::Wide => usize::MAX,
    }
}

/// `rows` (a label and two values each; the first is the heading, its
/// label usually empty) as lines indented by two, the labels padded to
/// `label` columns, each value fitted to [`room`]; no line ends in blanks.
pub fn rows(out: &mut String, rows: &[(String, String, String)], label: usize, layout: Layout) {
    let room = room(label, layout);
    let fitted: Vec<(&str, String, String)> = rows
        .iter()
        .map(|(l, a, b)| (l.as_str(), middle_cut(a, room), middle_cut(b, room)))
        .collect();
    let width = fitted
        .iter()
        .flat_map(|(_, a, b)| [cols(a), cols(b)])
        .max()
        .unwrap_or(0);
    for (l, a, b) in fitted {
        let line = format!(
            "  {}{}  {}",
            pad_right(l, label),
            pad_left(&a, width),
            pad_left(&b, width)
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
}
