//! One line of text being typed (the what-if editor, the export path): the
//! editing keys people expect, and pasted text made one line, in one place.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::layer_keys::{TEXT_KEYS, TextAction, action_in};

/// How a key ended a one-line prompt ([`LineInput::prompt_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptEnd {
    /// Enter: the text typed.
    Entered(String),
    /// Esc or Ctrl-C: nothing done.
    Cancelled,
}

/// The text and a cursor counted in characters, never in bytes, so typing
/// `•` or `ä` never splits one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineInput {
    text: String,
    /// Cursor position, in characters: only the methods move it, so it
    /// never stands inside a character or past the end.
    cursor: usize,
}

impl LineInput {
    /// `text` with the cursor at its end, ready to append.
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        LineInput {
            cursor: text.chars().count(),
            text,
        }
    }

    /// The text typed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where the cursor is, in characters from the start.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    fn byte(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map_or(self.text.len(), |(b, _)| b)
    }

    /// Inserts a character at the cursor.
    pub fn insert(&mut self, c: char) {
        let at = self.byte(self.cursor);
        self.text.insert(at, c);
        self.cursor += 1;
    }

    /// Inserts `text` (a paste, or a run of typed characters) at the cursor
    /// as one edit, made one line by [`one_line`]: one pass over the text
    /// however long the paste. Whether anything was inserted.
    pub fn insert_str(&mut self, text: &str) -> bool {
        let text = one_line(text);
        if text.is_empty() {
            return false;
        }
        let at = self.byte(self.cursor);
        self.text.insert_str(at, &text);
        self.cursor += text.chars().count();
        true
    }

    /// Deletes the character before the cursor; whether anything changed.
    pub fn backspace(&mut self) -> bool {
        if self.cursor == 0 {
            return false;
        }
        self.cursor -= 1;
        let at = self.byte(self.cursor);
        self.text.remove(at);
        true
    }

    /// Deletes the character under the cursor; whether anything changed.
    pub fn delete(&mut self) -> bool {
        if self.cursor >= self.text.chars().count() {
            return false;
        }
        let at = self.byte(self.cursor);
        self.text.remove(at);
        true
    }

    /// Moves the cursor by `by` characters, within the text.
    pub fn move_by(&mut self, by: isize) {
        let n = self.text.chars().count() as isize;
        self.cursor = (self.cursor as isize + by).clamp(0, n) as usize;
    }

    /// To the start (`false`) or the end (`true`).
    pub fn home_end(&mut self, end: bool) {
        self.cursor = if end { self.text.chars().count() } else { 0 };
    }

    /// Applies an editing key: characters, Backspace, Delete, the arrows,
    /// Home/End, Ctrl-A/Ctrl-E and Ctrl-U (clear). Whether the key was
    /// one of them and the text changed (`None`: not an editing key).
    pub fn key(&mut self, key: KeyEvent) -> Option<bool> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        Some(match key.code {
            KeyCode::Char('a') if ctrl => {
                self.home_end(false);
                false
            }
            KeyCode::Char('e') if ctrl => {
                self.home_end(true);
                false
            }
            KeyCode::Char('u') if ctrl => {
                let changed = !self.text.is_empty();
                *self = LineInput::default();
                changed
            }
            KeyCode::Char(_) if ctrl => return None,
            KeyCode::Char(c) => {
                self.insert(c);
                true
            }
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete => self.delete(),
            KeyCode::Left => {
                self.move_by(-1);
                false
            }
            KeyCode::Right => {
                self.move_by(1);
                false
            }
            KeyCode::Home => {
                self.home_end(false);
                false
            }
            KeyCode::End => {
                self.home_end(true);
                false
            }
            _ => return None,
        })
    }

    /// A key for a prompt around this input ([`TEXT_KEYS`]): Enter gives
    /// the text typed, Esc cancels; any other key edits the text (`None`).
    pub fn prompt_key(&mut self, key: KeyEvent) -> Option<PromptEnd> {
        match action_in(TEXT_KEYS, key) {
            Some(TextAction::Done) => Some(PromptEnd::Entered(self.text.clone())),
            Some(TextAction::Cancel) => Some(PromptEnd::Cancelled),
            _ => {
                self.key(key);
                None
            }
        }
    }

    /// The text split at the cursor: before, the character under it (a
    /// space at the end), after; for drawing the cursor as a cell.
    pub fn split(&self) -> (String, String, String) {
        self.split_near(usize::MAX)
    }

    /// [`LineInput::split`] with at most `room` characters on each side of
    /// the cursor, a cut side marked `…`: a pasted megabyte is drawn as
    /// much of it as a screen can show, not copied whole at every redraw.
    pub fn split_near(&self, room: usize) -> (String, String, String) {
        let at_byte = self.byte(self.cursor);
        let (head, tail) = self.text.split_at(at_byte);
        let before = match head.char_indices().rev().nth(room) {
            Some((b, c)) => format!("…{}", &head[b + c.len_utf8()..]),
            None => head.to_string(),
        };
        let mut rest = tail.chars();
        let at = rest.next().map_or_else(|| " ".to_string(), String::from);
        let rest = rest.as_str();
        let after = match rest.char_indices().nth(room) {
            Some((b, _)) => format!("{}…", &rest[..b]),
            None => rest.to_string(),
        };
        (before, at, after)
    }
}

/// Text for a one-line input: a line break at the very end is dropped (a
/// copied line usually brings one), every other line break (CR LF, CR, LF,
/// NEL, U+2028/9) and tab becomes one space, and other control characters
/// (ESC among them) and bidirectional overrides are dropped, so pasted
/// text can neither break the line nor steer the terminal.
pub fn one_line(text: &str) -> String {
    let text = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']))
        .unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' | '\n' | '\t' | '\u{85}' | '\u{2028}' | '\u{2029}' => out.push(' '),
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(input: &mut LineInput, code: KeyCode) -> Option<bool> {
        input.key(KeyEvent::from(code))
    }

    #[test]
    fn the_cursor_counts_characters_not_bytes() {
        let mut i = LineInput::new("a•b");
        assert_eq!(i.cursor, 3);
        press(&mut i, KeyCode::Left);
        assert_eq!(press(&mut i, KeyCode::Backspace), Some(true));
        assert_eq!(i.text(), "ab");
        press(&mut i, KeyCode::Char('ä'));
        assert_eq!(i.text(), "aäb");
        assert_eq!(i.split(), ("aä".into(), "b".into(), String::new()));
    }

    #[test]
    fn editing_keys_at_the_edges_change_nothing() {
        let mut i = LineInput::new("x");
        assert_eq!(press(&mut i, KeyCode::Delete), Some(false));
        press(&mut i, KeyCode::Home);
        assert_eq!(press(&mut i, KeyCode::Backspace), Some(false));
        assert_eq!(press(&mut i, KeyCode::Enter), None);
        assert_eq!(
            i.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
            Some(true)
        );
        assert_eq!(i, LineInput::default());
        assert_eq!(i.split(), (String::new(), " ".into(), String::new()));
    }

    #[test]
    fn pasted_text_is_one_line_without_control_characters() {
        assert_eq!(one_line("a\r\nb\rc\nd\te"), "a b c d e");
        assert_eq!(one_line("line\n"), "line", "a copied line's newline");
        assert_eq!(one_line("line\r\n"), "line");
        assert_eq!(one_line("two\n\n"), "two ", "only the last break goes");
        assert_eq!(one_line("\x1b[31mred\x07\x00\u{9b}2J"), "[31mred2J");
        assert_eq!(one_line("a\u{2028}b\u{85}c\u{202e}d\u{2066}e"), "a b cde");
        assert_eq!(one_line("é • ä"), "é • ä");
        assert_eq!(one_line("\n"), "");
    }

    #[test]
    fn a_paste_goes_in_at_the_cursor_as_one_edit() {
        let mut i = LineInput::new("a•b");
        press(&mut i, KeyCode::Left);
        assert!(i.insert_str("x\ny"));
        assert_eq!(i.text(), "a•x yb");
        assert_eq!(i.cursor, 5);
        assert!(!i.insert_str("\x1b\x07"), "nothing left to insert");
        assert_eq!(i.text(), "a•x yb");
        // A megabyte goes in whole, the cursor after it.
        let big = "ab•".repeat(350_000);
        let mut i = LineInput::new("<>");
        press(&mut i, KeyCode::Left);
        assert!(i.insert_str(&big));
        assert_eq!(i.cursor, 1 + big.chars().count());
        assert!(i.text().starts_with("<ab•") && i.text().ends_with("ab•>"));
    }

    #[test]
    fn a_long_text_is_drawn_near_the_cursor_only() {
        let mut i = LineInput::new("0123456789");
        assert_eq!(i.split_near(3), ("…789".into(), " ".into(), String::new()));
        i.home_end(false);
        i.move_by(5);
        assert_eq!(i.split_near(2), ("…34".into(), "5".into(), "67…".into()));
        assert_eq!(i.split_near(100), i.split());
        assert_eq!(i.split(), ("01234".into(), "5".into(), "6789".into()));
        let wide = LineInput::new("ééé");
        assert_eq!(
            wide.split_near(2),
            ("…éé".into(), " ".into(), String::new())
        );
    }

    #[test]
    fn no_key_puts_the_cursor_inside_a_character_or_past_the_end() {
        let mut i = LineInput::new("a•ä😀b");
        let codes = [
            KeyCode::Left,
            KeyCode::Backspace,
            KeyCode::Char('é'),
            KeyCode::Right,
            KeyCode::Right,
            KeyCode::Delete,
            KeyCode::Home,
            KeyCode::Char('😀'),
            KeyCode::End,
            KeyCode::Right,
        ];
        for (n, code) in codes.iter().cycle().take(200).enumerate() {
            press(&mut i, *code);
            if n % 7 == 0 {
                i.move_by(isize::MIN / 2);
            }
            if n % 11 == 0 {
                i.move_by(isize::MAX / 2);
                i.insert_str("ü\u{301}x");
            }
            let count = i.text().chars().count();
            assert!(i.cursor() <= count, "{} past {count}", i.cursor());
            let (before, at, after) = i.split();
            let whole = if i.cursor() == count {
                assert_eq!(at, " ");
                format!("{before}{after}")
            } else {
                format!("{before}{at}{after}")
            };
            assert_eq!(
                whole,
                i.text(),
                "the split is the text, cut between characters"
            );
        }
    }
}
