//! One table of keybindings: key dispatch and the `?` help are both
//! generated from it, so they cannot disagree.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything a user can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAction {
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
    /// A page back: the CPUs in the overview, the lines of the Log, the
    /// changes of the Flips.
    PageUp,
    /// A page on (towards the newest in the Log and Flips).
    PageDown,
    /// The top of the Log or the Flips (the oldest kept); elsewhere the
    /// oldest interval, as `g`.
    Top,
    /// The bottom of the Log or the Flips (the newest); elsewhere the
    /// newest interval, as `G`.
    Bottom,
    /// The CPU panel as compact meters or as the per-CPU table (`c`).
    CpuLayout,
    /// The CPUs busiest first, or by number (`b`).
    CpuOrder,
    NextRule,
    Expand,
    Pin,
    Reload,
    Export,
    Faster,
    Slower,
    WhatIf,
    /// Mouse reporting on or off (off, the terminal selects text).
    Mouse,
    /// Filter the log by text (`/`).
    Search,
    /// The previous interval whose decision differs from the one shown.
    PreviousChange,
    /// The next such interval (towards now).
    NextChange,
    /// Jump to one view (`1`–`5`).
    ShowView(u8),
    /// Repaint the whole screen (Ctrl-L), after another program wrote on it.
    Redraw,
    /// Tune the loaded rules against the simulated scenario (`T`).
    Tune,
    /// The graphs' scale: from zero, fixed, or the range drawn (`z`).
    Scale,
    /// Go to a time typed in (`J`): a replay reads ahead to it fast.
    GoTo,
}

/// One binding: the keys, what they do, and for the help where.
pub struct Binding {
    pub action: KeyAction,
    pub keys: &'static [KeyCode],
    /// How the keys are shown in the help.
    pub shown: &'static str,
    pub description: &'static str,
}

/// The keybindings, in help order.
pub const BINDINGS: &[Binding] = &[
    Binding {
        action: KeyAction::Help,
        keys: &[KeyCode::Char('?'), KeyCode::Char('h'), KeyCode::F(1)],
        shown: "? h F1",
        description: "this help",
    },
    Binding {
        action: KeyAction::Quit,
        keys: &[KeyCode::Char('q'), KeyCode::F(10)],
        shown: "q F10",
        description: "quit (the guest is put back)",
    },
    Binding {
        action: KeyAction::Observe,
        keys: &[KeyCode::Char('o')],
        shown: "o",
        description: "observe: show, never write",
    },
    Binding {
        action: KeyAction::Step,
        keys: &[KeyCode::Char('s')],
        shown: "s",
        description: "step-confirm: y/n per action",
    },
    Binding {
        action: KeyAction::Autonomous,
        keys: &[KeyCode::Char('A')],
        shown: "A",
        description: "autonomous: acts as cpuplugd",
    },
    Binding {
        action: KeyAction::Yes,
        keys: &[KeyCode::Char('y')],
        shown: "y",
        description: "apply the proposal / confirm",
    },
    Binding {
        action: KeyAction::No,
        keys: &[KeyCode::Char('n')],
        shown: "n",
        description: "reject the proposal",
    },
    Binding {
        action: KeyAction::Later,
        keys: &[KeyCode::Esc],
        shown: "Esc",
        description: "close/decide later/stop J G",
    },
    Binding {
        action: KeyAction::Pause,
        keys: &[KeyCode::Char(' ')],
        shown: "Space",
        description: "pause the display",
    },
    Binding {
        action: KeyAction::Back,
        keys: &[KeyCode::Left],
        shown: "←",
        description: "one interval back",
    },
    Binding {
        action: KeyAction::Forward,
        keys: &[KeyCode::Right],
        shown: "→",
        description: "one interval forward",
    },
    Binding {
        action: KeyAction::Oldest,
        keys: &[KeyCode::Char('g')],
        shown: "g",
        description: "oldest interval kept",
    },
    Binding {
        action: KeyAction::Newest,
        keys: &[KeyCode::Char('G')],
        shown: "G",
        description: "newest (replay: read to end)",
    },
    Binding {
        action: KeyAction::GoTo,
        keys: &[KeyCode::Char('J')],
        shown: "J",
        description: "jump to a time (18:00, +18h)",
    },
    Binding {
        action: KeyAction::NextView,
        keys: &[KeyCode::Tab],
        shown: "Tab",
        description: "next view",
    },
    Binding {
        action: KeyAction::PreviousView,
        keys: &[KeyCode::BackTab],
        shown: "S-Tab",
        description: "previous view",
    },
    Binding {
        action: KeyAction::Up,
        keys: &[KeyCode::Up, KeyCode::Char('k')],
        shown: "↑ k",
        description: "up / scroll",
    },
    Binding {
        action: KeyAction::Down,
        keys: &[KeyCode::Down, KeyCode::Char('j')],
        shown: "↓ j",
        description: "down / scroll",
    },
    Binding {
        action: KeyAction::PageUp,
        keys: &[KeyCode::PageUp],
        shown: "PgUp",
        description: "page up: CPUs, Log, Flips",
    },
    Binding {
        action: KeyAction::PageDown,
        keys: &[KeyCode::PageDown],
        shown: "PgDn",
        description: "page down: CPUs, Log, Flips",
    },
    Binding {
        action: KeyAction::Top,
        keys: &[KeyCode::Home],
        shown: "Home",
        description: "Log, Flips: top; else as g",
    },
    Binding {
        action: KeyAction::Bottom,
        keys: &[KeyCode::End],
        shown: "End",
        description: "Log, Flips: end; else as G",
    },
    Binding {
        action: KeyAction::CpuLayout,
        keys: &[KeyCode::Char('c')],
        shown: "c",
        description: "CPUs: meters / per-CPU table",
    },
    Binding {
        action: KeyAction::CpuOrder,
        keys: &[KeyCode::Char('b')],
        shown: "b",
        description: "CPUs: busiest first / by id",
    },
    Binding {
        action: KeyAction::NextRule,
        keys: &[KeyCode::Char('t')],
        shown: "t",
        description: "next rule in the trace",
    },
    Binding {
        action: KeyAction::Expand,
        keys: &[KeyCode::Enter],
        shown: "Enter",
        description: "expand / fold a variable",
    },
    Binding {
        action: KeyAction::Pin,
        keys: &[KeyCode::Char('p')],
        shown: "p",
        description: "pin a variable: sparkline",
    },
    Binding {
        action: KeyAction::Reload,
        keys: &[KeyCode::Char('r')],
        shown: "r",
        description: "reload the rule file",
    },
    Binding {
        action: KeyAction::Export,
        keys: &[KeyCode::Char('e')],
        shown: "e",
        description: "export the log (asks where)",
    },
    Binding {
        action: KeyAction::Faster,
        keys: &[KeyCode::Char('+')],
        shown: "+",
        description: "replay faster",
    },
    Binding {
        action: KeyAction::Slower,
        keys: &[KeyCode::Char('-')],
        shown: "-",
        description: "replay slower",
    },
    Binding {
        action: KeyAction::WhatIf,
        keys: &[KeyCode::Char('w')],
        shown: "w",
        description: "what-if: try an edited rule",
    },
    Binding {
        action: KeyAction::Tune,
        keys: &[KeyCode::Char('T')],
        shown: "T",
        description: "tune the rules (--sim)",
    },
    Binding {
        action: KeyAction::Scale,
        keys: &[KeyCode::Char('z')],
        shown: "z",
        description: "graph scale: 0, fixed, range",
    },
    Binding {
        action: KeyAction::Mouse,
        keys: &[KeyCode::Char('m')],
        shown: "m",
        description: "mouse on/off (off: select text)",
    },
    Binding {
        action: KeyAction::Search,
        keys: &[KeyCode::Char('/')],
        shown: "/",
        description: "search the log",
    },
    Binding {
        action: KeyAction::PreviousChange,
        keys: &[KeyCode::Char('[')],
        shown: "[",
        description: "previous decision change",
    },
    Binding {
        action: KeyAction::NextChange,
        keys: &[KeyCode::Char(']')],
        shown: "]",
        description: "next decision change",
    },
    Binding {
        action: KeyAction::ShowView(0),
        keys: &[
            KeyCode::Char('1'),
            KeyCode::Char('2'),
            KeyCode::Char('3'),
            KeyCode::Char('4'),
            KeyCode::Char('5'),
        ],
        shown: "1-5",
        description: "the five views, in Tab order",
    },
    Binding {
        action: KeyAction::Redraw,
        keys: &[],
        shown: "Ctrl-L",
        description: "repaint the screen",
    },
];

/// Whether `k` is Ctrl-C: it quits from the screen, and closes whatever
/// layer is on top instead (a question is declined).
pub fn is_ctrl_c(k: KeyEvent) -> bool {
    matches!(k.code, KeyCode::Char('c' | 'C')) && k.modifiers.contains(KeyModifiers::CONTROL)
}

/// The action bound to a key press, if any.
pub fn action_for(key: KeyEvent) -> Option<KeyAction> {
    // One binding for the five view keys: which view is the digit.
    if let KeyCode::Char(c @ '1'..='5') = key.code
        && !key.modifiers.contains(KeyModifiers::CONTROL)
    {
        return Some(KeyAction::ShowView(c as u8 - b'0'));
    }
    // Ctrl and a letter is not the letter: Ctrl-S (the what-if editor's
    // write) pressed with the editor closed must not switch to step-confirm.
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return match key.code {
            KeyCode::Char('c' | 'C') => Some(KeyAction::Quit),
            KeyCode::Char('l' | 'L') => Some(KeyAction::Redraw),
            KeyCode::Char(_) => None,
            _ => BINDINGS
                .iter()
                .find(|b| b.keys.contains(&key.code))
                .map(|b| b.action),
        };
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
            Some(KeyAction::Autonomous)
        );
        assert_eq!(
            action_for(KeyEvent::from(KeyCode::F(10))),
            Some(KeyAction::Quit)
        );
    }
}
