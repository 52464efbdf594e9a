//! One line of text being typed (the what-if editor, the export path): the
//! editing keys people expect, in one place.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The text and a cursor counted in characters, never in bytes, so typing
/// `•` or `ä` never splits one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineInput {
    pub text: String,
    /// Cursor position, in characters.
    pub cursor: usize,
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

    /// The text split at the cursor: before, the character under it (a
    /// space at the end), after; for drawing the cursor as a cell.
    pub fn split(&self) -> (String, String, String) {
        let before: String = self.text.chars().take(self.cursor).collect();
        let mut rest = self.text.chars().skip(self.cursor);
        let at = rest.next().map_or_else(|| " ".to_string(), String::from);
        (before, at, rest.collect())
    }
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
        assert_eq!(i.text, "ab");
        press(&mut i, KeyCode::Char('ä'));
        assert_eq!(i.text, "aäb");
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
}
