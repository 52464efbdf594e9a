//! Text read from files (a scenario's name, a recorded hostname, a rule
//! file's own text) on its way to a terminal or a log. A file is data: its
//! bytes must not clear a screen, retitle a window, ring a bell or start a
//! new log line, so every output that shows such text passes it through
//! [`terminal_safe`] — one rule for reports, line mode, logs and `check`.

use std::borrow::Cow;
use std::io::{self, Write};

/// Whether a character could act on a terminal instead of being shown:
/// C0 controls (ESC, BEL, newline, tab...), DEL and the C1 controls
/// (U+0080–U+009F, CSI and OSC among them), and the Unicode marks that
/// reorder the text around them, which can make a line read as another.
pub(crate) fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// The character terminals draw alike for one they do not: the halfwidth
/// katakana sound marks (`ﾊﾟ`, U+FF9E and U+FF9F) extend the letter before
/// them into one cell of two columns for the screen's buffer, while
/// terminals draw them in one column more or less (tmux: none), so cells
/// beside them were left stale. Their standalone forms (U+309B, U+309C)
/// are a cell of their own, two columns wide everywhere.
fn drawn_alike(c: char) -> Option<char> {
    match c {
        '\u{ff9e}' => Some('\u{309b}'),
        '\u{ff9f}' => Some('\u{309c}'),
        _ => None,
    }
}

/// `text` with every character that could act on a terminal written as
/// its Rust escape (`\u{1b}`, `\n`, `\t`), the halfwidth sound marks in
/// the form terminals draw alike ([`drawn_alike`]), the rest as is.
/// Borrows when nothing needed changing, which is every ordinary line.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(|c| acts_on_terminal(c) || drawn_alike(c).is_some()) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if acts_on_terminal(c) {
            out.extend(c.escape_default());
        } else if let Some(alike) = drawn_alike(c) {
            out.push(alike);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` made safe line by line: its line breaks kept as line breaks, and
/// every other character as [`terminal_safe`] has it. For messages of many
/// lines (an error and its causes, a log entry) that quote files.
pub fn terminal_safe_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && acts_on_terminal(c)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<_> = text.split('\n').map(terminal_safe).collect();
    Cow::Owned(lines.join("\n"))
}

/// A writer for text reports on their way to a terminal (`eval`, `check`,
/// `tune`, `sim`, `whatif`, line mode): every line written through it
/// reaches `inner` made safe by [`terminal_safe`], line breaks and tabs
/// kept. The one place a report's text passes, so a rule file's bytes
/// quoted in any of its lines (a refusal, a diff, a reference's verdict)
/// cannot act on the terminal, whichever code path wrote them. Never for
/// JSON, which escapes by its own rules ([`super::json`]) and must stay
/// byte for byte what a parser expects; nor for binary output.
pub struct TerminalText<W: Write> {
    inner: W,
    /// The bytes of a line not yet ended.
    line: Vec<u8>,
}

impl<W: Write> TerminalText<W> {
    /// Text reports for `inner`.
    pub fn new(inner: W) -> Self {
        TerminalText {
            inner,
            line: Vec::new(),
        }
    }

    /// Writes `bytes` (one line or its end, without the line break) safe.
    fn pass(&mut self, bytes: &[u8]) -> io::Result<()> {
        let text = String::from_utf8_lossy(bytes);
        let mut pieces = text.split('\t');
        if let Some(first) = pieces.next() {
            self.inner.write_all(terminal_safe(first).as_bytes())?;
        }
        for piece in pieces {
            self.inner.write_all(b"\t")?;
            self.inner.write_all(terminal_safe(piece).as_bytes())?;
        }
        Ok(())
    }

    /// Writes what is left of an unfinished line.
    fn pass_pending(&mut self) -> io::Result<()> {
        if self.line.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.line);
        // A character cut in two by the caller's writes is completed by
        // its next write: keep an unfinished UTF-8 sequence back.
        let keep = unfinished_utf8(&pending);
        self.pass(&pending[..pending.len() - keep])?;
        self.line
            .extend_from_slice(&pending[pending.len() - keep..]);
        Ok(())
    }
}

/// How many bytes at the end of `bytes` start a UTF-8 character that is
/// not complete yet (0 to 3).
fn unfinished_utf8(bytes: &[u8]) -> usize {
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 != 0x80 {
            let needs = match b {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => return 0,
            };
            return if needs > back { back } else { 0 };
        }
    }
    0
}

impl<W: Write> Write for TerminalText<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|b| *b == b'\n') {
            self.line.extend_from_slice(&rest[..at]);
            let line = std::mem::take(&mut self.line);
            self.pass(&line)?;
            self.inner.write_all(b"\n")?;
            rest = &rest[at + 1..];
        }
        self.line.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.pass_pending()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for TerminalText<W> {
    fn drop(&mut self) {
        // What was not flushed yet is written; a failure has no one left
        // to tell.
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::{TerminalText, terminal_safe, terminal_safe_lines};
    use std::borrow::Cow;
    use std::io::Write as _;

    /// adv52 #4: a halfwidth kana with its sound mark reaches a cell buffer
    /// as cells terminals draw alike: the kana in one cell, the mark in one
    /// of its own, no cell skipped between (ratatui made `ﾊﾟ` one cell of
    /// two columns and sent nothing for the second, which tmux left stale).
    #[test]
    fn halfwidth_sound_marks_take_cells_of_their_own() {
        let text = "aﾊﾟbﾊﾞc";
        let safe = terminal_safe(text);
        assert_eq!(safe, "aﾊ\u{309c}bﾊ\u{309b}c");
        let area = ratatui::layout::Rect::new(0, 0, 12, 1);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        buf.set_string(0, 0, &safe, ratatui::style::Style::default());
        let cells: Vec<&str> = (0..10).map(|x| buf[(x, 0)].symbol()).collect();
        assert_eq!(
            cells,
            [
                "a", "ﾊ", "\u{309c}", " ", "b", "ﾊ", "\u{309b}", " ", "c", " "
            ]
        );
        let mut raw = ratatui::buffer::Buffer::empty(area);
        raw.set_string(0, 0, text, ratatui::style::Style::default());
        assert_eq!(raw[(1, 0)].symbol(), "ﾊﾟ", "ratatui joins the raw pair");
    }

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

    /// What a `TerminalText` over a buffer passes on for `writes`.
    fn through_writer(writes: &[&[u8]]) -> String {
        let mut out = Vec::new();
        {
            let mut w = TerminalText::new(&mut out);
            for bytes in writes {
                w.write_all(bytes).expect("a buffer takes it");
            }
        }
        String::from_utf8(out).expect("UTF-8 comes out")
    }

    #[test]
    fn the_writer_keeps_lines_and_tabs_and_escapes_the_rest() {
        let out = through_writer(&[
            b"plain\tline\n",
            b"refuses: \x1b]0;owned\x07\x1b[2J",
            b" and more\r\n\xc2\x9b\xe2\x80\xae end",
        ]);
        assert_eq!(
            out,
            "plain\tline\nrefuses: \\u{1b}]0;owned\\u{7}\\u{1b}[2J and more\\r\n\\u{9b}\\u{202e} end"
        );
        assert!(inert(&out.replace(['\n', '\t'], "")), "{out:?}");
    }

    #[test]
    fn the_writer_takes_characters_and_escapes_cut_between_writes() {
        // A C1 control (C2 9B), a bidi override (E2 80 AE) and an emoji
        // split across writes are still seen whole.
        let out = through_writer(&[
            b"a\xc2",
            b"\x9b",
            b"b\xe2\x80",
            b"\xae\xf0\x9f",
            b"\x98\x80\n",
        ]);
        assert_eq!(out, "a\\u{9b}b\\u{202e}\u{1f600}\n");
        let mut out = Vec::new();
        let mut w = TerminalText::new(&mut out);
        w.write_all(b"x\xe2\x80").expect("buffer");
        w.flush().expect("buffer");
        w.write_all(b"\xae\n").expect("buffer");
        drop(w);
        assert_eq!(String::from_utf8_lossy(&out), "x\\u{202e}\n");
    }

    #[test]
    fn lines_keep_their_breaks_and_lose_their_controls() {
        assert_eq!(
            terminal_safe_lines("a\x1b[2J\nb\u{9d}\n"),
            "a\\u{1b}[2J\nb\\u{9d}\n"
        );
        assert!(matches!(terminal_safe_lines("a\nb"), Cow::Borrowed("a\nb")));
    }
}
