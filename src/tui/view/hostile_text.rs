//! Hostile text and styles for the property tests that hold the screen's
//! own cell writers to what ratatui's widgets draw: one generator, so
//! every writer is tried on the same kinds of trouble.

use proptest::prelude::*;
use ratatui::style::{Color, Modifier, Style};

/// Wide and zero-width characters, combining marks, box drawing, control
/// characters, emoji with joiners, tabs and line ends, up to `parts` pieces.
pub fn hostile(parts: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a"),
            Just("ab"),
            Just(" "),
            Just("▸"),
            Just("─"),
            Just("漢"),
            Just("\u{301}"),
            Just("\u{200b}"),
            Just("\u{200d}"),
            Just("👩\u{200d}💻"),
            Just("\t"),
            Just("\n"),
            Just("\r"),
            Just("\u{1b}[31m"),
            Just("\u{0}"),
            Just("\u{7f}"),
            Just("\u{85}"),
            Just("\u{feff}"),
            Just("é"),
            Just("🇫🇷"),
            Just("█·…▸"),
            Just("\u{2028}"),
            Just("\u{ad}"),
        ],
        0..parts,
    )
    .prop_map(|parts| parts.concat())
}

/// The styles the screen draws text in, and none.
pub fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        Just(Style::default()),
        Just(
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        ),
        Just(Style::default().fg(Color::DarkGray)),
        Just(Style::default().bg(Color::Blue)),
        Just(Style::default().add_modifier(Modifier::REVERSED)),
        Just(Style::default().add_modifier(Modifier::DIM)),
    ]
}
