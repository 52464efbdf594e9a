//! The keys of the layers that take the keys while they are open (the
//! what-if editor, the tune's box, the text inputs), the keys the screen
//! acts on whatever is open (Ctrl-Z, Ctrl-C) and the mouse: one table
//! each, from which their dispatch and the `?` help ([`super::help`]) are
//! both made, as [`super::keys`] does for the screen's own keys.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key as a table names it: its code, and whether Ctrl is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub code: KeyCode,
    pub ctrl: bool,
}

/// A key without Ctrl.
pub const fn plain(code: KeyCode) -> Chord {
    Chord { code, ctrl: false }
}

/// Ctrl and a letter.
pub const fn ctrl(c: char) -> Chord {
    Chord {
        code: KeyCode::Char(c),
        ctrl: true,
    }
}

impl Chord {
    /// Whether `key` is this chord. A Ctrl letter matches with Shift held
    /// too (Caps Lock); Shift is part of Shift-Tab's own code.
    pub fn matches(&self, key: KeyEvent) -> bool {
        let held = key.modifiers.contains(KeyModifiers::CONTROL);
        if held != self.ctrl {
            return false;
        }
        match (self.code, key.code) {
            (KeyCode::Char(a), KeyCode::Char(b)) if self.ctrl => a.eq_ignore_ascii_case(&b),
            (a, b) => a == b,
        }
    }
}

/// One row of a layer's table: the keys, what they do, and for the help
/// how the keys are written and what they do in words.
pub struct LayerBinding<A: 'static> {
    pub action: A,
    pub keys: &'static [Chord],
    pub shown: &'static str,
    pub description: &'static str,
}

/// The action `key` has in `table`, if any.
pub fn action_in<A: Copy>(table: &[LayerBinding<A>], key: KeyEvent) -> Option<A> {
    table
        .iter()
        .find(|b| b.keys.iter().any(|c| c.matches(key)))
        .map(|b| b.action)
}

/// What a key does in the what-if editor (other keys edit the text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditorAction {
    NextField,
    PreviousField,
    /// Name a whole rule file instead (and back).
    FileMode,
    /// Run the edited rules over the history.
    Run,
    /// Apply the edited rules to the running session (after a yes).
    Apply,
    /// Write the edited rules to a new file.
    Write,
    Close,
}

/// The what-if editor's keys.
pub const EDITOR_KEYS: &[LayerBinding<EditorAction>] = &[
    LayerBinding {
        action: EditorAction::Run,
        keys: &[plain(KeyCode::Enter)],
        shown: "Enter",
        description: "run it over the history",
    },
    LayerBinding {
        action: EditorAction::NextField,
        keys: &[plain(KeyCode::Tab)],
        shown: "Tab",
        description: "next field (edits are kept)",
    },
    LayerBinding {
        action: EditorAction::PreviousField,
        keys: &[plain(KeyCode::BackTab)],
        shown: "S-Tab",
        description: "previous field",
    },
    LayerBinding {
        action: EditorAction::FileMode,
        keys: &[ctrl('o')],
        shown: "Ctrl-O",
        description: "a whole rule file (and back)",
    },
    LayerBinding {
        action: EditorAction::Apply,
        keys: &[ctrl('r')],
        shown: "Ctrl-R",
        description: "apply to this session (asks)",
    },
    LayerBinding {
        action: EditorAction::Write,
        keys: &[ctrl('s')],
        shown: "Ctrl-S",
        description: "write to a new file",
    },
    LayerBinding {
        action: EditorAction::Close,
        keys: &[plain(KeyCode::Esc), ctrl('c')],
        shown: "Esc",
        description: "close the editor",
    },
];

/// What a key does in the tune's box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuneAction {
    Up,
    Down,
    /// Open the picked point in the what-if editor and run it.
    Open,
    /// Apply the picked point to the session (after a yes).
    Apply,
    /// Write the picked point to a new file.
    Write,
    /// The help, at the tune box's keys.
    Help,
    Close,
}

/// The tune box's keys.
pub const TUNE_KEYS: &[LayerBinding<TuneAction>] = &[
    LayerBinding {
        action: TuneAction::Up,
        keys: &[plain(KeyCode::Up)],
        shown: "↑",
        description: "pick a point of the front",
    },
    LayerBinding {
        action: TuneAction::Down,
        keys: &[plain(KeyCode::Down)],
        shown: "↓",
        description: "pick the next point",
    },
    LayerBinding {
        action: TuneAction::Open,
        keys: &[plain(KeyCode::Enter)],
        shown: "Enter",
        description: "open in the what-if editor",
    },
    LayerBinding {
        action: TuneAction::Apply,
        keys: &[ctrl('r')],
        shown: "Ctrl-R",
        description: "apply to this session (asks)",
    },
    LayerBinding {
        action: TuneAction::Write,
        keys: &[ctrl('s')],
        shown: "Ctrl-S",
        description: "write to a new file",
    },
    LayerBinding {
        action: TuneAction::Help,
        keys: &[plain(KeyCode::Char('?')), plain(KeyCode::F(1))],
        shown: "? F1",
        description: "this help, at these keys",
    },
    LayerBinding {
        action: TuneAction::Close,
        keys: &[plain(KeyCode::Esc), plain(KeyCode::Char('q')), ctrl('c')],
        shown: "Esc q",
        description: "hide (the tune goes on)",
    },
];

/// What the screen does with a key whatever is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalAction {
    /// Give the terminal back and stop (`fg` comes back).
    Suspend,
    /// Close the layer on top (a question is declined), or quit.
    CloseOrQuit,
}

/// The keys that work whatever is open (Ctrl-L is the screen's, in
/// [`super::keys::BINDINGS`]).
pub const TERMINAL_KEYS: &[LayerBinding<TerminalAction>] = &[
    LayerBinding {
        action: TerminalAction::CloseOrQuit,
        keys: &[ctrl('c')],
        shown: "Ctrl-C",
        description: "close the top layer, or quit",
    },
    LayerBinding {
        action: TerminalAction::Suspend,
        keys: &[ctrl('z')],
        shown: "Ctrl-Z",
        description: "suspend (fg comes back)",
    },
];

/// What a key does in a text input (what-if, `e`, `/`, the write prompt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextAction {
    Move,
    Delete,
    Clear,
    /// Enter: run, write or keep, as the input's title says.
    Done,
    /// Esc: the input closes, nothing done.
    Cancel,
}

/// The text inputs' keys ([`super::line_input::LineInput::key`] and the
/// prompts around it); characters and pastes are text.
pub const TEXT_KEYS: &[LayerBinding<TextAction>] = &[
    LayerBinding {
        action: TextAction::Move,
        keys: &[plain(KeyCode::Left), plain(KeyCode::Right)],
        shown: "← →",
        description: "move the cursor",
    },
    LayerBinding {
        action: TextAction::Move,
        keys: &[plain(KeyCode::Home), plain(KeyCode::End)],
        shown: "Home End",
        description: "to the start, to the end",
    },
    LayerBinding {
        action: TextAction::Move,
        keys: &[ctrl('a'), ctrl('e')],
        shown: "Ctrl-A/E",
        description: "to the start, to the end",
    },
    LayerBinding {
        action: TextAction::Delete,
        keys: &[plain(KeyCode::Backspace), plain(KeyCode::Delete)],
        shown: "Bksp Del",
        description: "delete before, at the cursor",
    },
    LayerBinding {
        action: TextAction::Clear,
        keys: &[ctrl('u')],
        shown: "Ctrl-U",
        description: "clear the text",
    },
    LayerBinding {
        action: TextAction::Done,
        keys: &[plain(KeyCode::Enter)],
        shown: "Enter",
        description: "as titled: search, go, write",
    },
    LayerBinding {
        action: TextAction::Cancel,
        keys: &[plain(KeyCode::Esc), ctrl('c')],
        shown: "Esc",
        description: "cancel",
    },
];

/// What the mouse does (`m` turns it off so the terminal selects text).
pub const MOUSE: &[(&str, &str)] = &[
    ("wheel", "scroll, as ↑ and ↓"),
    ("click", "select a tab, a rule, a CPU"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn ctrl_letters_match_with_shift_held_and_plain_keys_never_with_ctrl() {
        let shifted = key(
            KeyCode::Char('S'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        );
        assert_eq!(action_in(EDITOR_KEYS, shifted), Some(EditorAction::Write));
        assert_eq!(
            action_in(EDITOR_KEYS, key(KeyCode::Char('s'), KeyModifiers::NONE)),
            None,
            "a plain s is text"
        );
        assert_eq!(
            action_in(EDITOR_KEYS, key(KeyCode::Enter, KeyModifiers::CONTROL)),
            None
        );
        // Shift-Tab comes with Shift held.
        assert_eq!(
            action_in(EDITOR_KEYS, key(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Some(EditorAction::PreviousField)
        );
        assert_eq!(
            action_in(TUNE_KEYS, key(KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(TuneAction::Close)
        );
    }

    #[test]
    fn no_key_has_two_meanings_in_one_table() {
        fn unique<A>(table: &[LayerBinding<A>]) {
            let mut seen = Vec::new();
            for c in table.iter().flat_map(|b| b.keys) {
                assert!(!seen.contains(c), "{c:?} bound twice");
                seen.push(*c);
            }
        }
        unique(EDITOR_KEYS);
        unique(TUNE_KEYS);
        unique(TERMINAL_KEYS);
        unique(TEXT_KEYS);
    }
}
