//! One table of keybindings: key dispatch and the `?` help are both
//! generated from it, so they cannot disagree.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything a user can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    Help,
    Pause,
    Back,
    Forward,
    Oldest,
    Newest,
    Observe,
    Step,
    Autonomous,
    Yes,
    No,
    Later,
    NextView,
    PreviousView,
    Up,
    Down,
    CpusUp,
    CpusDown,
    NextRule,
    Expand,
    Pin,
    Reload,
    Export,
    Faster,
    Slower,
    WhatIf,
}

/// One binding: the keys, what they do, and for the help where.
pub struct Binding {
    pub action: Action,
    pub keys: &'static [KeyCode],
    /// How the keys are shown in the help.
    pub shown: &'static str,
    pub description: &'static str,
}

/// The keybindings, in help order.
pub const BINDINGS: &[Binding] = &[
    Binding {
        action: Action::Help,
        keys: &[KeyCode::Char('?')],
        shown: "?",
        description: "this help",
    },
    Binding {
        action: Action::Quit,
        keys: &[KeyCode::Char('q'), KeyCode::F(10)],
        shown: "q F10",
        description: "quit (the guest is put back)",
    },
    Binding {
        action: Action::Observe,
        keys: &[KeyCode::Char('o')],
        shown: "o",
        description: "observe: show, never write",
    },
    Binding {
        action: Action::Step,
        keys: &[KeyCode::Char('s')],
        shown: "s",
        description: "step-confirm: y/n per action",
    },
    Binding {
        action: Action::Autonomous,
        keys: &[KeyCode::Char('A')],
        shown: "A",
        description: "autonomous: act like cpuplugd",
    },
    Binding {
        action: Action::Yes,
        keys: &[KeyCode::Char('y')],
        shown: "y",
        description: "apply the proposal / confirm",
    },
    Binding {
        action: Action::No,
        keys: &[KeyCode::Char('n')],
        shown: "n",
        description: "reject the proposal",
    },
    Binding {
        action: Action::Later,
        keys: &[KeyCode::Esc],
        shown: "Esc",
        description: "close a dialog, decide later",
    },
    Binding {
        action: Action::Pause,
        keys: &[KeyCode::Char(' ')],
        shown: "Space",
        description: "pause the display",
    },
    Binding {
        action: Action::Back,
        keys: &[KeyCode::Left],
        shown: "←",
        description: "one interval back",
    },
    Binding {
        action: Action::Forward,
        keys: &[KeyCode::Right],
        shown: "→",
        description: "one interval forward",
    },
    Binding {
        action: Action::Oldest,
        keys: &[KeyCode::Char('g'), KeyCode::Home],
        shown: "g Home",
        description: "oldest interval kept",
    },
    Binding {
        action: Action::Newest,
        keys: &[KeyCode::Char('G'), KeyCode::End],
        shown: "G End",
        description: "newest, follow live",
    },
    Binding {
        action: Action::NextView,
        keys: &[KeyCode::Tab],
        shown: "Tab",
        description: "next view",
    },
    Binding {
        action: Action::PreviousView,
        keys: &[KeyCode::BackTab],
        shown: "S-Tab",
        description: "previous view",
    },
    Binding {
        action: Action::Up,
        keys: &[KeyCode::Up, KeyCode::Char('k')],
        shown: "↑ k",
        description: "up / scroll",
    },
    Binding {
        action: Action::Down,
        keys: &[KeyCode::Down, KeyCode::Char('j')],
        shown: "↓ j",
        description: "down / scroll",
    },
    Binding {
        action: Action::CpusUp,
        keys: &[KeyCode::PageUp],
        shown: "PgUp",
        description: "scroll the CPUs up",
    },
    Binding {
        action: Action::CpusDown,
        keys: &[KeyCode::PageDown],
        shown: "PgDn",
        description: "scroll the CPUs down",
    },
    Binding {
        action: Action::NextRule,
        keys: &[KeyCode::Char('t')],
        shown: "t",
        description: "next rule in the trace",
    },
    Binding {
        action: Action::Expand,
        keys: &[KeyCode::Enter],
        shown: "Enter",
        description: "expand / fold variables",
    },
    Binding {
        action: Action::Pin,
        keys: &[KeyCode::Char('p')],
        shown: "p",
        description: "pin a variable: sparkline",
    },
    Binding {
        action: Action::Reload,
        keys: &[KeyCode::Char('r')],
        shown: "r",
        description: "reload the rule file",
    },
    Binding {
        action: Action::Export,
        keys: &[KeyCode::Char('e')],
        shown: "e",
        description: "export the log",
    },
    Binding {
        action: Action::Faster,
        keys: &[KeyCode::Char('+')],
        shown: "+",
        description: "replay faster",
    },
    Binding {
        action: Action::Slower,
        keys: &[KeyCode::Char('-')],
        shown: "-",
        description: "replay slower",
    },
    Binding {
        action: Action::WhatIf,
        keys: &[KeyCode::Char('w')],
        shown: "w",
        description: "what-if: try an edited rule",
    },
];

/// The action bound to a key press, if any.
pub fn action_for(key: KeyEvent) -> Option<Action> {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    BINDINGS
        .iter()
        .find(|b| b.keys.contains(&key.code))
        .map(|b| b.action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_has_one_binding_and_keys_are_unique() {
        let mut keys = Vec::new();
        for b in BINDINGS {
            for k in b.keys {
                assert!(!keys.contains(k), "{k:?} bound twice");
                keys.push(*k);
            }
        }
        assert_eq!(
            action_for(KeyEvent::from(KeyCode::Char('A'))),
            Some(Action::Autonomous)
        );
        assert_eq!(
            action_for(KeyEvent::from(KeyCode::F(10))),
            Some(Action::Quit)
        );
    }
}
