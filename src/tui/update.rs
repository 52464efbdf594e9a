//! What the control thread tells the screen: each message carries what the
//! screen draws from, so the screen never looks into the session the
//! control thread is acting with (a slow sysfs write blocks nothing it
//! draws).

use std::collections::VecDeque;
use std::sync::Arc;

use super::arming::RestoreError;
use super::flips::Flips;
use super::log_book::LogKind;
use super::modal::Dialog;
use super::seek::{Passed, SeekEnd};
use super::timeline::Interval;
use crate::control::controller::{Mode, Proposal};
use crate::control::patterns::Hint;
use crate::control::session::Session;
use crate::control::watch::ChangedDecision;
use crate::kernel::Stamp;
use crate::rules::{RuleSet, SourceFile};

/// The session as the screen shows it: the rules, the mode, the proposal
/// waiting for an answer and the watch over flips.
#[derive(Debug, Clone)]
pub struct Board {
    rules: Arc<RuleSet>,
    file: Arc<SourceFile>,
    mode: Mode,
    pending: Option<Proposal>,
    flips: Flips,
}

impl Board {
    /// How `session` stands now; `file` is its rule file, shared, and
    /// `changes` the explained changes as last sent ([`Flips::of`]).
    pub fn of(
        session: &Session,
        file: &Arc<SourceFile>,
        changes: &mut Arc<VecDeque<ChangedDecision>>,
    ) -> Board {
        Board {
            rules: Arc::clone(session.rules()),
            file: Arc::clone(file),
            mode: session.controller().mode(),
            pending: session.controller().pending().cloned(),
            flips: Flips::of(session.watch(), changes),
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
    pub fn flips(&self) -> &Flips {
        &self.flips
    }
}

/// One reading as the control loop decided (and maybe acted on) it. Its
/// parts are the control thread's to make ([`super::core`]) and the
/// screen's to take ([`super::app`]): nothing outside the screen reaches in.
#[derive(Debug, Clone)]
pub struct DecidedReading {
    /// The interval to show; `None` when the reading was skipped.
    pub(in crate::tui) frame: Option<Interval>,
    /// When the reading was taken, by the source's clock: the time its
    /// lines are logged at, skipped or not.
    pub(in crate::tui) stamp: Stamp,
    /// What the step says in the log, in order.
    pub(in crate::tui) lines: Vec<(LogKind, String)>,
    /// Patterns found with this reading.
    pub(in crate::tui) hints: Vec<Hint>,
    /// A proposal was made or revised: its box shows again.
    pub(in crate::tui) proposed: bool,
    /// The session as it stands after this reading.
    pub(in crate::tui) board: Board,
}

impl DecidedReading {
    /// What the reading says in the log, for when the reading itself is
    /// dropped (a screen that was not read for longer than its timeline
    /// holds).
    pub fn into_lines(self) -> Vec<(LogKind, String)> {
        self.lines
    }
}

/// One message from the control thread to the screen.
#[derive(Debug)]
pub enum Update {
    /// A reading was taken and decided.
    Reading(Box<DecidedReading>),
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
    /// Who else acts on the guest observed (cpuplugd, another plugtop),
    /// or nobody.
    Acting(Option<crate::control::lock::Actor>),
    /// A plugtop ended without putting the guest observed back (its
    /// journal is there), or none did. Its Log line comes as a
    /// [`Update::Note`].
    LeftChanged(Option<Box<crate::control::guard::DeadRun>>),
    /// plugtop's own CPU use, percent of one CPU.
    OwnCpu(f64),
    /// The pace of a recording or the simulator changed.
    Speed(f64),
    /// A write to the guest started (what it does) or ended (`None`).
    Working(Option<String>),
    /// Readings the screen never saw: it was not read for longer than its
    /// timeline holds, and the oldest waiting were dropped.
    Missed(usize),
    /// A seek read past more readings than the screen keeps: their lines,
    /// with their times. The readings kept follow, then [`Update::SeekEnd`].
    Passed(Box<Passed>),
    /// A seek ended: the screen shows where it got to.
    SeekEnd(SeekEnd),
    /// Everything is put back (or the journal kept): the screen may close.
    Ended(ScreenEnd),
    /// The source stopped early on damage (a recording cut short or torn:
    /// what, and at which byte): an alarm in the header, and said again
    /// on stderr after the screen ([`ScreenOutcome::warnings`]). Its Log
    /// line comes as a [`Update::Note`].
    Damaged(String),
}

impl Update {
    /// Why something the user asked for failed: in the Log, and in a box
    /// where the user looks at once (paused, the Log lists nothing newer
    /// than the interval shown).
    pub fn failed(why: String) -> Vec<Update> {
        vec![
            Update::Note(LogKind::Problem, why.clone()),
            Update::Show(Dialog::Message(why)),
        ]
    }
}

/// How the screen ended, and what is said on the normal terminal after it
/// beside what the ending says (the damage of a recording replayed).
#[derive(Debug)]
pub struct ScreenOutcome {
    pub end: ScreenEnd,
    pub warnings: Vec<String>,
}

/// How the screen ended, for the exit code.
#[derive(Debug)]
pub enum ScreenEnd {
    /// The user quit; the guest was not armed.
    Quit,
    /// The user quit and the armed guest was put back: what was restored
    /// ("restored the start state: CPUs 0-3 online, cmm_pages 0"), printed
    /// on the normal terminal once the screen is gone, as `plugtop run`
    /// prints it.
    GaveBack(Vec<String>),
    /// A signal ended it; 128 + the signal is the usual exit code.
    /// `put_back`: the guest was armed and is put back; otherwise nothing
    /// on it was changed (observed only).
    Signal { signal: i32, put_back: bool },
    /// The guest could not be fully put back; the journal is kept.
    RestoreFailed(RestoreError),
}

impl ScreenEnd {
    /// A signal's ending, before anything was put back.
    pub fn signal(signal: i32) -> ScreenEnd {
        ScreenEnd::Signal {
            signal,
            put_back: false,
        }
    }

    /// What this ending did to the guest, in words (`sim`: the guest was
    /// simulated): only what was done is said.
    pub fn done(&self, sim: bool) -> &'static str {
        match self {
            _ if sim => "the simulated guest is discarded; nothing on this machine was changed",
            ScreenEnd::GaveBack(_) | ScreenEnd::Signal { put_back: true, .. } => {
                "the guest was put back"
            }
            ScreenEnd::Quit | ScreenEnd::Signal { .. } => {
                "nothing on the guest was changed (it was only observed)"
            }
            ScreenEnd::RestoreFailed(_) => {
                "the guest was not fully put back and its journal is kept (run `plugtop restore`)"
            }
        }
    }

    /// The process's exit status for this ending: 0, 128 + the signal
    /// (as the shell shows a process the signal ended), or 1.
    pub fn exit_status(&self) -> i32 {
        match self {
            ScreenEnd::Quit | ScreenEnd::GaveBack(_) => 0,
            ScreenEnd::Signal { signal, .. } => crate::stop_signals::exit_status(*signal),
            ScreenEnd::RestoreFailed(_) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ScreenEnd;

    /// i45nu: what an ending says it did is what it did — the words a
    /// terminal that took no output gets too (they once said "the guest was
    /// put back" whatever was armed).
    #[test]
    fn an_ending_says_only_what_was_done() {
        let observed = ScreenEnd::signal(15);
        assert_eq!(
            observed.done(false),
            "nothing on the guest was changed (it was only observed)"
        );
        assert!(observed.done(true).contains("simulated guest is discarded"));
        let armed = ScreenEnd::Signal {
            signal: 15,
            put_back: true,
        };
        assert_eq!(armed.done(false), "the guest was put back");
        assert_eq!(
            ScreenEnd::GaveBack(Vec::new()).done(false),
            "the guest was put back"
        );
        assert!(!ScreenEnd::Quit.done(false).contains("put back"));
    }
}
