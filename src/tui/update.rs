//! What the control thread tells the screen: each message carries what the
//! screen draws from, so the screen never looks into the session the
//! control thread is acting with (a slow sysfs write blocks nothing it
//! draws).

use std::sync::Arc;

use super::arming::RestoreError;
use super::log_book::LogKind;
use super::modal::Dialog;
use super::timeline::Interval;
use crate::control::controller::{Mode, Proposal};
use crate::control::patterns::Hint;
use crate::control::session::Session;
use crate::control::watch::Watch;
use crate::rules::{RuleSet, SourceFile};

/// The session as the screen shows it: the rules, the mode, the proposal
/// waiting for an answer and the watch over flips.
#[derive(Debug, Clone)]
pub struct Board {
    rules: Arc<RuleSet>,
    file: Arc<SourceFile>,
    mode: Mode,
    pending: Option<Proposal>,
    watch: Watch,
}

impl Board {
    /// How `session` stands now; `file` is its rule file, shared.
    pub fn of(session: &Session, file: &Arc<SourceFile>) -> Board {
        Board {
            rules: Arc::clone(session.rules()),
            file: Arc::clone(file),
            mode: session.controller().mode(),
            pending: session.controller().pending().cloned(),
            watch: session.watch().clone(),
        }
    }

    /// The rules in force.
    pub fn rules(&self) -> &Arc<RuleSet> {
        &self.rules
    }

    /// The file they came from.
    pub fn file(&self) -> &SourceFile {
        &self.file
    }

    /// The mode the session acts in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The proposal waiting for `y` or `n` (step-confirm).
    pub fn pending(&self) -> Option<&Proposal> {
        self.pending.as_ref()
    }

    /// Flapping, explained flips and feedback loops.
    pub fn watch(&self) -> &Watch {
        &self.watch
    }
}

/// One reading as the control loop decided (and maybe acted on) it.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The interval to show; `None` when the reading was skipped.
    pub frame: Option<Interval>,
    /// Every rule variable's value, for the pinned graphs.
    pub values: Vec<(String, Option<f64>)>,
    /// What the step says in the log, in order.
    pub lines: Vec<(LogKind, String)>,
    /// Patterns found with this reading.
    pub hints: Vec<Hint>,
    /// A proposal was made or revised: its box shows again.
    pub proposed: bool,
    pub board: Board,
}

/// One message from the control thread to the screen.
#[derive(Debug)]
pub enum Update {
    /// A reading was taken and decided.
    Reading(Box<Reading>),
    /// The mode changed, or a proposal was answered: the proposal's box
    /// shows again, and the lines say what was done.
    Acted {
        board: Box<Board>,
        lines: Vec<(LogKind, String)>,
    },
    /// New rules are in force (a reload); the lines say what the reload did.
    Reloaded {
        board: Box<Board>,
        lines: Vec<(LogKind, String)>,
    },
    /// A line for the log.
    Note(LogKind, String),
    /// A question or a message for the user.
    Show(Dialog),
    /// Where the source stands (the simulator's phase, a scenario's end).
    Status(Option<String>),
    /// plugtop's own CPU use, percent of one CPU.
    OwnCpu(f64),
    /// The pace of a recording or the simulator changed.
    Speed(f64),
    /// A write to the guest started (what it does) or ended (`None`).
    Working(Option<String>),
    /// Everything is put back (or the journal kept): the screen may close.
    Ended(ScreenEnd),
}

/// How the screen ended, for the exit code.
#[derive(Debug)]
pub enum ScreenEnd {
    /// The user quit and the guest (if armed) is as it was.
    Quit,
    /// A signal ended it; 128 + the signal is the usual exit code.
    Signal(i32),
    /// The guest could not be fully put back; the journal is kept.
    RestoreFailed(RestoreError),
}

impl ScreenEnd {
    /// The process's exit status for this ending: 0, 128 + the signal
    /// (as the shell shows a process the signal ended), or 1.
    pub fn exit_status(&self) -> i32 {
        match self {
            ScreenEnd::Quit => 0,
            ScreenEnd::Signal(signal) => crate::stop_signals::exit_status(*signal),
            ScreenEnd::RestoreFailed(_) => 1,
        }
    }
}
