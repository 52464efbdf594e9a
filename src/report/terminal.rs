//! Text read from files (a scenario's name, a recorded hostname, a rule
//! file's own text) on its way to a terminal or a log. A file is data: its
//! bytes must not clear a screen, retitle a window, ring a bell or start a
//! new log line, so every output that shows such text passes it through
//! [`terminal_safe`] — one rule for reports, line mode, logs and `check`.

use std::borrow::Cow;

/// Whether a character could act on a terminal instead of being shown:
/// C0 controls (ESC, BEL, newline, tab...), DEL and the C1 controls
/// (U+0080–U+009F, CSI and OSC among them), and the Unicode marks that
/// reorder the text around them, which can make a line read as another.
fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every character that could act on a terminal written as
/// its Rust escape (`\u{1b}`, `\n`, `\t`), the rest as is. Borrows when
/// nothing needed escaping, which is every ordinary line.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(acts_on_terminal) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if acts_on_terminal(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    /// Nothing a terminal would act on is left: no C0, DEL, C1 or bidi mark.
    fn inert(s: &str) -> bool {
        !s.chars().any(|c| {
            c.is_control()
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let s = "guest-01 (LINUX01) é ü 漢 \\ ` ' \"";
        assert!(matches!(terminal_safe(s), std::borrow::Cow::Borrowed(t) if t == s));
    }

    #[test]
    fn escape_sequences_bells_and_c1_controls_are_written_as_escapes() {
        let hostile = "a\x1b[2J\x1b]0;owned\x07b\u{9b}31m\u{9d}8;;x\u{9c}\x00\x7f\r\nc";
        let safe = terminal_safe(hostile);
        assert!(inert(&safe), "{safe:?}");
        assert_eq!(
            safe,
            "a\\u{1b}[2J\\u{1b}]0;owned\\u{7}b\\u{9b}31m\\u{9d}8;;x\\u{9c}\\u{0}\\u{7f}\\r\\nc"
        );
    }

    #[test]
    fn reordering_marks_are_escaped_too() {
        let safe = terminal_safe("user\u{202e}gnp.exe\u{2066}\u{200f}");
        assert!(inert(&safe), "{safe:?}");
        assert_eq!(safe, "user\\u{202e}gnp.exe\\u{2066}\\u{200f}");
    }

    #[test]
    fn every_char_is_either_kept_or_escaped_to_inert_text() {
        for c in (0u32..0x3000).filter_map(char::from_u32) {
            let s = c.to_string();
            let safe = terminal_safe(&s);
            assert!(inert(&safe), "{c:?} -> {safe:?}");
            assert!(safe == s || safe.starts_with('\\'), "{c:?} -> {safe:?}");
        }
    }
}
