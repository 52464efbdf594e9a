//! A node of a rule as people read it: numbers the way the trace shows
//! them, and a sub-expression as the user wrote it (a variable by its name
//! and line). The trace, the fault words and the counts all write nodes so.

use crate::rules::expr::{NodeId, NodeKind};
use crate::rules::{RuleSet, SourceFile};

/// A number the way the trace shows it: integers whole, others to four
/// decimals, extremes in exponent form.
pub fn number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        itoa::Buffer::new().format(v as i64).to_owned()
    } else if v.abs() >= 1e-4 && v.abs() < 1e9 {
        let mut s = format!("{v:.4}");
        let kept = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(kept);
        s
    } else {
        format!("{v:.4e}")
    }
}

/// Longest sub-expression text a trace line shows: every sub-expression a
/// person writes fits whole (traces used to cut at 48 characters, in the
/// middle of `cpustat.total_ticks[1]`); only machine-made chains thousands
/// long are shortened, so a line stays bounded.
pub const LABEL_MAX: usize = 200;

/// `text` on one line, at most `max` characters (a longer one ends in `…`).
pub(crate) fn shorten(text: &str, max: usize) -> String {
    // Already flat (single spaces between words, none at the ends, no
    // other blank) and short: the text itself, without splitting it.
    if text.len() <= max
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.contains("  ")
        && !text.chars().any(|c| c != ' ' && c.is_whitespace())
    {
        return text.to_string();
    }
    flattened(text, max)
}

/// [`shorten`] without its shortcut: the words joined by single spaces,
/// cut at `max` characters.
fn flattened(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let mut s: String = flat.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// A node as the user wrote it (a variable by its name and line), shortened.
pub fn label(rules: &RuleSet, source: &SourceFile, node: NodeId) -> String {
    let n = rules.node(node);
    match &n.kind {
        NodeKind::Var { var, .. } => {
            let def = &rules.variables[*var as usize];
            format!("{} (line {})", def.name, def.line)
        }
        _ => shorten(&source.snippet(n.span), LABEL_MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The shortcut gives what splitting and joining the words gives,
        /// whatever the blanks (tabs, no-break spaces, runs, ends).
        #[test]
        fn the_shortcut_is_the_flattened_text(
            text in "[ a\t\u{a0}\u{3000}\n(x+]{0,24}",
            max in 0usize..30,
        ) {
            prop_assert_eq!(shorten(&text, max), flattened(&text, max));
        }
    }
}
