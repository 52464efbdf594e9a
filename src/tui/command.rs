//! What the screen thread asks of the control thread: the one message
//! that way, made by the key handling ([`super::app`], [`super::dispatch`])
//! and carried out by [`super::control`] (or [`super::local`]).

use std::path::PathBuf;

use super::edited::EditedRules;
use super::keys::KeyAction;
use super::seek::SeekTo;
use crate::control::controller::{Mode, Proposal};

/// What the screen thread asks of the control thread.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A key whose action needs files, the lock, the guest or the pace:
    /// `s`, `A`, `r`, `+`, `-`.
    Act(KeyAction),
    /// Switch to this mode (`o`, or `y` on the autonomous question).
    SetMode(Mode),
    /// `y` on the arming question: take the guest and act in this mode.
    Arm(Mode),
    /// `y` on this proposal, exactly as it was on screen.
    Accept(Box<Proposal>),
    /// `n` on the proposal.
    Reject,
    /// Write this log text to this path (`e`, then Enter).
    Export { path: PathBuf, text: String },
    /// Read a replay ahead to its end or to a time, deciding every reading
    /// on the way as fast as they decode (`G`, `J`).
    Seek(SeekTo),
    /// Esc while a seek reads ahead: stop where it stands.
    StopSeek,
    /// `y` on applying edited rules: load them as `r` reloads a file (the
    /// history is kept).
    ApplyRules(Box<EditedRules>),
    /// Write edited rules to this path (Ctrl-S, then Enter); `replace`
    /// after a yes to replacing the file there.
    WriteRules {
        path: PathBuf,
        rules: Box<EditedRules>,
        replace: bool,
    },
    /// Keys changed what the screen shows; `paused` says whether readings
    /// of a recording wait.
    Wake { paused: bool },
    /// The user quit.
    Quit,
    /// A signal ends the screen (it is in the [`super::stop::StopFlag`] too; this wakes
    /// the thread).
    Stop(i32),
}
