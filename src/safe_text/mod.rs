//! Text from files made safe to show: escaped for a terminal or a log
//! ([`terminal_safe`]) and for JSON a terminal may print
//! ([`terminal_safe_json`]). Every part of plugtop that shows a file's
//! text uses it, the rule language's diagnostics and the reports alike, so
//! it depends on neither. Input quoted in a message or a report is cut
//! to a bound first ([`cut_to`]), however long the input is.

mod json;
mod terminal;

pub use json::terminal_safe_json;
pub(crate) use terminal::acts_on_terminal;
pub use terminal::{TerminalText, terminal_safe, terminal_safe_lines};

/// Columns `text` takes on the screen (a wide character two, a combining
/// mark none): the one measure of reports, `check` and the screens.
pub fn cols(text: &str) -> usize {
    ratatui::text::Span::raw(text).width()
}

/// `text` cut to at most `max` bytes at a character boundary, saying how
/// much was left out (`AAAA… (4999990 bytes more)`): input quoted in a
/// message, a log entry or a report stays bounded however long it is.
/// Borrows when it fits.
pub fn cut_to(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}… ({} bytes more)",
        &text[..end],
        text.len() - end
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_text_is_cut_at_a_character_with_the_count() {
        assert_eq!(super::cut_to("short", 10), "short");
        assert_eq!(super::cut_to("abcdef", 3), "abc… (3 bytes more)");
        // Never inside a character: é is two bytes.
        assert_eq!(super::cut_to("éé", 3), "é… (2 bytes more)");
    }
}
