//! The Flips view's text: what the watch found (flapping, feedback loops,
//! known patterns) and each change of decision with the comparisons that
//! flipped it. The view styles these rows; paging counts the rows they
//! wrap to, so both agree on what fits.

use super::flips::Flips;
use crate::control::patterns::Hint;
use crate::control::watch::ChangedDecision;

/// How a row of the Flips view is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Something wrong: flapping, a feedback loop.
    Warning,
    /// Something that says nothing is found.
    Quiet,
    /// A known pattern, its name first.
    Hint,
    /// A change's heading: the decision before and after.
    Heading,
    /// A comparison that flipped.
    Plain,
}

/// The rows above the changes: what flaps (or that nothing does), the
/// feedback loops, the hints, and a blank row.
pub fn findings(flips: &Flips, hints: &[Hint]) -> Vec<(Tone, String)> {
    let mut rows = Vec::new();
    let config = flips.config();
    if flips.flapping().is_empty() {
        rows.push((
            Tone::Quiet,
            format!(
                "not flapping (flapping = {} or more reversals within {} intervals)",
                config.reversals, config.window
            ),
        ));
    }
    for f in flips.flapping() {
        rows.push((Tone::Warning, f.to_string()));
        rows.push((Tone::Plain, format!("  {}", f.cause())));
    }
    rows.extend(flips.loops().iter().map(|l| (Tone::Warning, l.to_string())));
    rows.extend(hints.iter().map(|h| (Tone::Hint, h.to_string())));
    rows.push((Tone::Quiet, String::new()));
    if flips.changes().is_empty() {
        rows.push((Tone::Quiet, "no decision has changed yet".into()));
    }
    rows
}

/// One change of decision: its heading, then each comparison that
/// flipped (or why none did).
pub fn change(c: &ChangedDecision) -> Vec<(Tone, String)> {
    let mut rows = vec![(
        Tone::Heading,
        format!("#{} {} → {}", c.reading, c.before, c.after),
    )];
    if c.why.is_empty() {
        rows.push((
            Tone::Quiet,
            "    no comparison flipped (a limit, or a rule not evaluated before)".into(),
        ));
    }
    rows.extend(c.why.iter().map(|w| (Tone::Plain, format!("    {w}"))));
    rows
}

/// The rows `rows` take on a screen `width` columns wide.
pub fn height(rows: &[(Tone, String)], width: u16) -> usize {
    rows.iter()
        .map(|(_, t)| super::list_rows::rows(t, width))
        .sum()
}
