//! Where in a TOML file (a scenario, a course) a message points, and the
//! TOML reader's own errors as one bounded line with its place, in the
//! form of the checks of the values that follow (a scenario's
//! `FILE:LINE:COL: error: MESSAGE`). The reader's own
//! rendering quotes the whole source line under a caret row, so a 5 MB
//! line made a 10 MB message; here the message is cut ([`cut_to`]) and
//! made safe for a terminal, and the place is given as numbers.

use crate::safe_text::{cut_to, terminal_safe};

/// The most of a TOML reader's message kept (it may quote a key or value
/// of the file): every message about a file a person wrote fits whole.
pub const MESSAGE_MAX: usize = 400;

/// 1-based line and column (characters) of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// `FILE:LINE:COL` of byte `offset` in `text`, the file shown as `name`.
pub fn place(name: &str, text: &str, offset: usize) -> String {
    let (line, column) = line_column(text, offset);
    format!("{name}:{line}:{column}")
}

/// Where a TOML reader's error is (the byte offset in the file, when it
/// says) and what it says, on one line of at most [`MESSAGE_MAX`] bytes of
/// its own text: each kind of file puts the place in the form of its other
/// messages.
pub fn syntax_error(e: &toml::de::Error) -> (Option<usize>, String) {
    let message = briefer_floats(e.message().trim());
    let message = terminal_safe(&cut_to(&message, MESSAGE_MAX)).into_owned();
    (e.span().map(|span| span.start), message)
}

/// The reader's `floating point `1000…0`` (every digit of the value)
/// quoted briefly: `floating point `1e308``.
fn briefer_floats(message: &str) -> String {
    const QUOTE: &str = "floating point `";
    let mut out = String::with_capacity(message.len().min(MESSAGE_MAX));
    let mut rest = message;
    while let Some(at) = rest.find(QUOTE) {
        let (before, after) = rest.split_at(at + QUOTE.len());
        out.push_str(before);
        let end = after.find('`').unwrap_or(after.len());
        match after[..end].parse::<f64>() {
            Ok(v) => out.push_str(&crate::number::brief(v)),
            Err(_) => out.push_str(&after[..end]),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_line_gives_a_short_one_line_error_with_its_place() {
        let text = format!("a = 1\nb = \"{}\" x\n", "B".repeat(5_000_000));
        let e = match toml::from_str::<toml::Table>(&text) {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        };
        let (offset, message) = syntax_error(&e);
        let place = offset.map(|at| place("f.toml", &text, at));
        assert!(
            place.as_deref().is_some_and(|p| p.starts_with("f.toml:2:")),
            "{place:?}"
        );
        assert!(message.len() < 2 * MESSAGE_MAX, "{}", message.len());
        assert!(!message.contains('\n'), "{message}");
        let key = format!("{} = 1\n", "K".repeat(100_000));
        let e = match toml::from_str::<std::collections::BTreeMap<String, String>>(&key) {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        };
        let (_, message) = syntax_error(&e);
        assert!(message.len() < 2 * MESSAGE_MAX, "{}", message.len());
        assert_eq!(line_column("ab\ncé\nx", 6), (2, 3));
    }

    /// adv52 #6e: a float where an integer belongs is quoted briefly.
    #[test]
    fn a_huge_float_is_quoted_briefly() {
        let e = match toml::from_str::<std::collections::BTreeMap<String, u32>>("cpus = 1e308\n") {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        };
        let (_, message) = syntax_error(&e);
        assert!(message.contains("floating point `1e308`"), "{message}");
        assert!(message.len() < 80, "{message}");
    }
}
