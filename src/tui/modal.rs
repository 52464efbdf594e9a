//! What lies over the screen and takes the keys. One [`Modal`] enum is
//! both what the overlay draws ([`super::view::overlay`]) and what the key
//! routing asks ([`super::dispatch`]): the layer drawn on top is always the
//! one the keys go to. A message the control thread sends while something
//! is open goes over it, and the layer under it gets the keys back once it
//! is closed.

use std::path::PathBuf;

use crossterm::event::KeyEvent;

use super::edited::EditedRules;
use super::line_input::{LineInput, PromptEnd};
use super::whatif::WhatIfEditor;
use crate::control::controller::Mode;

/// What arming a live guest will take and give back, shown before it
/// happens so nobody changes a machine by habit (htop's `s` is strace).
#[derive(Debug, Clone, PartialEq)]
pub struct ArmInfo {
    /// The mode asked for.
    pub mode: Mode,
    pub host: String,
    pub architecture: String,
    /// "z/VM guest LINUX01", "s390x, not a z/VM guest (LPAR)", "not a z/VM guest".
    pub guest: String,
    pub root: String,
    pub lock: String,
    pub journal: String,
    /// What quitting puts back: the online CPUs and the pool.
    pub restore_to: String,
}

/// A question on top of the screen.
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    /// Switching to autonomous mode needs a yes.
    ConfirmAuto,
    /// Taking the lock and journaling a live guest needs a yes; the front
    /// end arms on `y`.
    Arm(ArmInfo),
    /// Something the user must read (e.g. why a mode is not possible).
    Message(String),
    /// `r` found the rule file refused (or unreadable): `check`'s report,
    /// drawn line for line with its carets; the old rules stay.
    ReloadFailed(String),
    /// Apply these edited rules to the running session? (the what-if
    /// editor's or a tune's; the diff is shown)
    Apply(Box<EditedRules>),
    /// The file the edited rules were to be written to exists: replace it?
    Replace(Box<ReplaceFile>),
    /// The edited rules were written to this path.
    Written(String),
    /// `e`'s log was written to this path.
    Exported(String),
}

/// Edited rules waiting for a yes to replace the file at `path`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplaceFile {
    pub path: PathBuf,
    pub rules: EditedRules,
}

/// Where to write edited rules, being typed, and the rules.
#[derive(Debug, Clone, PartialEq)]
pub struct SavePrompt {
    pub input: LineInput,
    pub rules: EditedRules,
}

/// One layer over the screen, with the state it edits.
#[derive(Debug, Clone, PartialEq)]
pub enum Modal {
    /// The key table (`?`); any key closes it.
    Help,
    /// A question or a message.
    Dialog(Dialog),
    /// The tune's progress and front (`T`); the job itself runs on and
    /// stays with the app when the box is closed.
    Tune,
    /// `e`: the path the log is written to, being typed.
    Export(LineInput),
    /// `w`: the what-if editor.
    WhatIf(Box<WhatIfEditor>),
    /// `/`: the log search being typed (the text is the log's).
    Search,
    /// `J`: the time to go to, being typed.
    GoTo(LineInput),
    /// Ctrl-S in the what-if editor: where to write the edited rules.
    SaveRules(Box<SavePrompt>),
}

impl Modal {
    /// Whether this layer is a question a `y` answers (arming, applying
    /// rules, replacing a file).
    pub fn is_question(&self) -> bool {
        matches!(
            self,
            Modal::Dialog(
                Dialog::ConfirmAuto | Dialog::Arm(_) | Dialog::Apply(_) | Dialog::Replace(_)
            )
        )
    }

    /// Whether typed characters go into this layer as text.
    pub fn takes_text(&self) -> bool {
        matches!(
            self,
            Modal::Export(_)
                | Modal::WhatIf(_)
                | Modal::Search
                | Modal::GoTo(_)
                | Modal::SaveRules(_)
        )
    }
}

/// The layers open, the bottom one first; the last is on top.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Modals {
    stack: Vec<Modal>,
    /// The question on top has not been drawn yet: keys already typed
    /// when it opened must not answer it ([`Modals::question_unseen`]).
    unseen: bool,
}

impl Modals {
    /// The layer on top: what is drawn last and takes the keys.
    pub fn top(&self) -> Option<&Modal> {
        self.stack.last()
    }

    /// The layer on top, to edit.
    pub fn top_mut(&mut self) -> Option<&mut Modal> {
        self.stack.last_mut()
    }

    /// Every layer, bottom first, as drawn.
    pub fn layers(&self) -> &[Modal] {
        &self.stack
    }

    /// Puts `modal` on top. A dialog replaces a dialog on top (the newest
    /// question is the one to answer); any other kind already open is
    /// taken out first, so each kind is open once.
    pub fn open(&mut self, modal: Modal) {
        self.unseen = modal.is_question();
        if matches!(modal, Modal::Dialog(_)) {
            if matches!(self.top(), Some(Modal::Dialog(_))) {
                self.stack.pop();
            }
        } else {
            let kind = std::mem::discriminant(&modal);
            self.stack.retain(|m| std::mem::discriminant(m) != kind);
        }
        self.stack.push(modal);
    }

    /// Whether the question on top was opened since the screen was last
    /// drawn: the user has not seen it, so no key typed yet answers it.
    pub fn question_unseen(&self) -> bool {
        self.unseen && self.top().is_some_and(Modal::is_question)
    }

    /// The screen was drawn: the layer on top is seen.
    pub fn drawn(&mut self) {
        self.unseen = false;
    }

    /// Takes the layer on top away.
    pub fn close_top(&mut self) -> Option<Modal> {
        self.stack.pop()
    }

    /// Takes every layer of `modal`'s kind away, wherever it is.
    pub fn close(&mut self, kind: &Modal) {
        let kind = std::mem::discriminant(kind);
        self.stack.retain(|m| std::mem::discriminant(m) != kind);
    }

    /// Takes the what-if editor away, wherever it lies (its edit was
    /// applied).
    pub fn close_whatif(&mut self) {
        self.stack.retain(|m| !matches!(m, Modal::WhatIf(_)));
    }

    /// The dialog on top, if the top is one.
    pub fn dialog(&self) -> Option<&Dialog> {
        match self.top() {
            Some(Modal::Dialog(d)) => Some(d),
            _ => None,
        }
    }

    /// The what-if editor, wherever it lies.
    pub fn whatif(&self) -> Option<&WhatIfEditor> {
        self.stack.iter().find_map(|m| match m {
            Modal::WhatIf(e) => Some(e.as_ref()),
            _ => None,
        })
    }

    /// The what-if editor when it has the keys.
    pub fn whatif_on_top(&mut self) -> Option<&mut WhatIfEditor> {
        match self.top_mut() {
            Some(Modal::WhatIf(e)) => Some(e.as_mut()),
            _ => None,
        }
    }

    /// The export path being typed, when it has the keys.
    pub fn export_on_top(&mut self) -> Option<&mut LineInput> {
        match self.top_mut() {
            Some(Modal::Export(input)) => Some(input),
            _ => None,
        }
    }

    /// A key for the one-line prompt `which` finds on top (`e`, `J`):
    /// Enter closes it and gives the text typed, Esc closes it, any other
    /// key edits it; `None` but for Enter, or while that prompt is not on
    /// top.
    pub fn prompt_key(
        &mut self,
        which: fn(&mut Modals) -> Option<&mut LineInput>,
        key: KeyEvent,
    ) -> Option<String> {
        let end = which(self)?.prompt_key(key)?;
        self.close_top();
        match end {
            PromptEnd::Entered(text) => Some(text),
            PromptEnd::Cancelled => None,
        }
    }

    /// The time to go to being typed, when it has the keys.
    pub fn goto_on_top(&mut self) -> Option<&mut LineInput> {
        match self.top_mut() {
            Some(Modal::GoTo(input)) => Some(input),
            _ => None,
        }
    }

    /// The write prompt for edited rules, when it has the keys.
    pub fn save_on_top(&mut self) -> Option<&mut SavePrompt> {
        match self.top_mut() {
            Some(Modal::SaveRules(p)) => Some(p.as_mut()),
            _ => None,
        }
    }

    /// Whether `kind`'s layer is open anywhere.
    pub fn is_open(&self, kind: &Modal) -> bool {
        let kind = std::mem::discriminant(kind);
        self.stack.iter().any(|m| std::mem::discriminant(m) == kind)
    }

    /// Whether nothing is open.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> Modal {
        Modal::Dialog(Dialog::Message(text.into()))
    }

    #[test]
    fn each_kind_is_open_once_and_the_newest_question_replaces_an_older_one() {
        let mut m = Modals::default();
        m.open(Modal::Search);
        m.open(Modal::Help);
        m.open(Modal::Search);
        assert_eq!(
            m.layers(),
            &[Modal::Help, Modal::Search],
            "moved on top, once"
        );
        m.open(message("one"));
        m.open(message("two"));
        assert_eq!(m.layers().len(), 3);
        assert_eq!(m.dialog(), Some(&Dialog::Message("two".into())));
        m.close_top();
        assert_eq!(m.top(), Some(&Modal::Search), "the layer under it is back");
        assert!(m.top().is_some_and(Modal::takes_text));
    }

    #[test]
    fn closing_a_kind_takes_it_from_anywhere_and_an_empty_stack_closes_nothing() {
        let mut m = Modals::default();
        assert_eq!(m.close_top(), None);
        m.close(&Modal::Tune);
        assert!(m.is_empty());
        m.open(Modal::Tune);
        m.open(message("over the tune"));
        m.close(&Modal::Tune);
        assert_eq!(m.layers(), &[message("over the tune")]);
        assert!(!m.is_open(&Modal::Tune));
        assert!(m.whatif_on_top().is_none() && m.export_on_top().is_none());
    }
}
