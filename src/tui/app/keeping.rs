//! The screen's part in keeping an edit: Ctrl-R in the what-if editor (or
//! on a tune's picked point) asks whether to apply the edited rules,
//! showing the diff; Ctrl-S asks where to write them. A yes becomes a
//! command for the control thread, which loads the rules as `r` reloads a
//! file (the history is kept) or writes them ([`crate::tui::rules_file`]).

use crossterm::event::KeyEvent;

use super::App;
use crate::tui::command::Command;
use crate::tui::edited::EditedRules;
use crate::tui::keys::KeyAction;
use crate::tui::line_input::{LineInput, PromptEnd};
use crate::tui::modal::{Dialog, Modal, ReplaceFile, SavePrompt};
use crate::tui::rules_file::default_path;
use crate::tui::state_dir::{in_use, local_stamp};

impl App {
    /// The what-if editor's edit as a whole rule file, when cpuplugd would
    /// load it; otherwise a message says why not and there is none.
    fn edited_rules(&mut self) -> Option<EditedRules> {
        let Some(facts) = self.facts.clone() else {
            self.show(Dialog::Message(
                "the machine has not been read yet: the edit cannot be checked".into(),
            ));
            return None;
        };
        let board = &self.board;
        let editor = self.modals.whatif_on_top()?;
        let checked = editor.check(board.rules(), board.file(), &facts);
        let refused = editor.error().map(|(message, _)| message.clone());
        let waiting = editor.file_mode() && editor.input().text().trim().is_empty();
        match checked {
            Some((_, edited)) => {
                let mut rules = EditedRules::new(board.file(), &edited);
                rules.caution = editor.caution().map(str::to_string);
                Some(rules)
            }
            None => {
                self.show(Dialog::Message(match refused {
                    Some(why) => format!(
                        "cpuplugd would refuse the edited rules, so they are neither applied nor written: {why}"
                    ),
                    None if waiting => "type the path of a rule file first".into(),
                    None => "the edited rules cannot be loaded".into(),
                }));
                None
            }
        }
    }

    /// Ctrl-R: asks whether to apply the edit to the running session,
    /// showing what changes.
    pub(super) fn ask_apply(&mut self) {
        let Some(rules) = self.edited_rules() else {
            return;
        };
        if rules.unchanged() {
            self.show(Dialog::Message(
                "nothing to apply: the edited rules are the rules in force".into(),
            ));
            return;
        }
        self.show(Dialog::Apply(Box::new(rules)));
    }

    /// Ctrl-S: asks where to write the edited rules, offering a new file
    /// in the state directory.
    pub(super) fn ask_write(&mut self) {
        let Some(rules) = self.edited_rules() else {
            return;
        };
        let path = default_path(&local_stamp(), &rules.name, in_use);
        self.open_save_prompt(path.display().to_string(), rules);
    }

    fn open_save_prompt(&mut self, path: String, rules: EditedRules) {
        self.modals.open(Modal::SaveRules(Box::new(SavePrompt {
            input: LineInput::new(path),
            rules,
        })));
    }

    /// A key while the write prompt is on top: editing, Enter writes to
    /// the path typed (nothing while it is empty), Esc closes.
    pub fn save_key(&mut self, key: KeyEvent) -> Option<Command> {
        let prompt = self.modals.save_on_top()?;
        match prompt.input.prompt_key(key)? {
            PromptEnd::Entered(text) => {
                let path = text.trim().to_string();
                if path.is_empty() {
                    return None;
                }
                let rules = Box::new(prompt.rules.clone());
                self.modals.close_top();
                Some(Command::WriteRules {
                    path: path.into(),
                    rules,
                    replace: false,
                })
            }
            PromptEnd::Cancelled => {
                self.modals.close_top();
                None
            }
        }
    }

    /// An answer to a keeping question: `y` applies, or replaces the file;
    /// `n` goes back (to the editor, or to the path, to pick another); any
    /// key closes the news that the rules were written.
    pub(super) fn answer_keep(&mut self, dialog: Dialog, action: KeyAction) -> Option<Command> {
        let yes = action == KeyAction::Yes;
        let no = matches!(action, KeyAction::No | KeyAction::Later);
        match dialog {
            Dialog::Apply(rules) if yes => {
                self.modals.close_top();
                // The edit is what runs now: the editor has done its work.
                self.modals.close_whatif();
                Some(Command::ApplyRules(rules))
            }
            Dialog::Replace(r) if yes => {
                self.modals.close_top();
                let ReplaceFile { path, rules } = *r;
                Some(Command::WriteRules {
                    path,
                    rules: Box::new(rules),
                    replace: true,
                })
            }
            Dialog::Replace(r) if no => {
                self.modals.close_top();
                self.open_save_prompt(r.path.display().to_string(), r.rules);
                None
            }
            Dialog::Apply(_) if no => {
                self.modals.close_top();
                None
            }
            Dialog::Written(_) => {
                self.modals.close_top();
                None
            }
            _ => None,
        }
    }
}
