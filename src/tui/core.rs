//! The control loop's half of the screen: the session and the actuator,
//! owned by the control thread ([`super::control`]). Everything it does
//! comes out as [`Update`]s for the screen, which keeps its own state.

use std::collections::VecDeque;
use std::sync::Arc;

use super::edited::EditedRules;
use super::log_book::LogKind;
use super::modal::Dialog;
use super::timeline::Interval;
use super::update::{Board, DecidedReading, Update};
use crate::control::controller::{Action, Event, Mode, Proposal};
use crate::control::flap::{FlapConfig, Moves};
use crate::control::log_entries::{self, LineKind};
use crate::control::session::{Session, Step};
use crate::control::watch::ChangedDecision;
use crate::kernel::Sample;
use crate::kernel::actuator::{Actuator, NoWrites};
use crate::kernel::deltas::IntervalLoads;
use crate::rules::{RuleSet, SourceFile, SystemFacts};

/// The session, what acts on the guest, and what the screen was last told.
pub struct Core {
    session: Session,
    file: Arc<SourceFile>,
    /// Set once the lock is held and the journal written (or on the
    /// simulator); `None` when the guest is not written.
    actuator: Option<Box<dyn Actuator + Send>>,
    /// What acts while `actuator` is `None`: it writes nothing, and on a
    /// live root it still names the CPU a change would take.
    observer: NoWrites,
    /// Why acting is not possible, when it is not.
    cannot_act: Option<String>,
    /// The newest reading decided (not skipped): CPU loads are its deltas.
    latest: Option<Arc<Sample>>,
    /// The explained changes as last sent to the screen.
    changes: Arc<VecDeque<ChangedDecision>>,
    seen: usize,
}

impl Core {
    /// A session for `rules` (loaded from `file`) in `mode`, acting on
    /// nothing yet.
    pub fn new(rules: Arc<RuleSet>, file: SourceFile, mode: Mode) -> Self {
        Core {
            file: Arc::new(file.clone()),
            session: Session::new(rules, file, mode, FlapConfig::default()),
            actuator: None,
            observer: NoWrites::blind(),
            cannot_act: None,
            latest: None,
            changes: Arc::default(),
            seen: 0,
        }
    }

    /// How the session stands, for the screen.
    pub fn board(&mut self) -> Board {
        Board::of(&self.session, &self.file, &mut self.changes)
    }

    /// The session (the engine's values, the controller).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Acts through `actuator` from now on.
    pub fn set_actuator(&mut self, actuator: Box<dyn Actuator + Send>) {
        self.actuator = Some(actuator);
    }

    /// Gives the actuator up (the guest was put back).
    pub fn take_actuator(&mut self) -> Option<Box<dyn Actuator + Send>> {
        self.actuator.take()
    }

    /// Whether something acts on the guest.
    pub fn armed(&self) -> bool {
        self.actuator.is_some()
    }

    /// Names the CPUs a change would take while nothing acts.
    pub fn set_observer(&mut self, observer: NoWrites) {
        self.observer = observer;
    }

    /// Acting is not possible, for this reason.
    pub fn set_cannot_act(&mut self, why: String) {
        self.cannot_act = Some(why);
    }

    /// Why acting is not possible, when it is not.
    pub fn cannot_act(&self) -> Option<&str> {
        self.cannot_act.as_deref()
    }

    /// The newest reading decided.
    pub fn latest(&self) -> Option<&Arc<Sample>> {
        self.latest.as_ref()
    }

    /// Readings taken so far.
    pub fn readings(&self) -> usize {
        self.seen
    }

    /// Takes one reading: the session decides and acts per mode.
    pub fn step(&mut self, sample: Sample) -> Update {
        let sample = Arc::new(sample);
        let stamp = sample.stamp;
        let step = match self.actuator.as_mut() {
            Some(a) => self.session.step(Arc::clone(&sample), a.as_mut()),
            None => self.session.step(Arc::clone(&sample), &mut self.observer),
        };
        self.seen += 1;
        let lines = step_lines(&step, &self.session);
        let board = self.board();
        if step.skipped.is_some() {
            return Update::Reading(Box::new(DecidedReading {
                frame: None,
                stamp,
                lines,
                hints: Vec::new(),
                proposed: false,
                board,
            }));
        }
        let loads = IntervalLoads::between(self.latest.clone(), Arc::clone(&sample));
        let engine = self.session.engine();
        let rules = self.session.rules();
        let variables = rules
            .variables
            .iter()
            .enumerate()
            .filter(|(_, v)| v.uses > 0)
            .map(|(i, v)| (v.name.clone(), engine.variable_at(i).and_then(Result::ok)))
            .collect();
        let frame = Interval {
            number: self.seen - 1,
            sample: Arc::clone(&sample),
            decision: step.decision.clone(),
            trace: self.session.trace().clone(),
            loads,
            variables,
            applied: applied_moves(&step.events),
            rules: Arc::clone(rules),
            file: Arc::clone(&self.file),
            flips: board.flips().clone(),
        };
        self.latest = Some(sample);
        Update::Reading(Box::new(DecidedReading {
            stamp,
            frame: Some(frame),
            lines,
            hints: step.hints.clone(),
            proposed: step
                .events
                .iter()
                .any(|e| matches!(e, Event::Proposed(_) | Event::Revised { .. })),
            board,
        }))
    }

    /// Switches mode, with the checks acting needs.
    pub fn set_mode(&mut self, mode: Mode) -> Update {
        if mode != Mode::Observe
            && let Some(why) = &self.cannot_act
        {
            return Update::Show(Dialog::Message(format!(
                "{mode} mode is not possible: {why}"
            )));
        }
        let events = match self.actuator.as_mut() {
            Some(a) => self.session.set_mode(mode, a.as_mut()),
            None => self.session.set_mode(mode, &mut self.observer),
        };
        self.acted(events)
    }

    /// `A`: autonomous mode needs a yes first, if it is possible at all.
    pub fn ask_autonomous(&self) -> Update {
        Update::Show(match &self.cannot_act {
            Some(why) => Dialog::Message(format!("Autonomous mode is not possible: {why}")),
            None => Dialog::ConfirmAuto,
        })
    }

    /// Accepts the proposal as it was on screen when `y` was pressed: only
    /// exactly that is applied (a revision since then is not approved).
    pub fn accept(&mut self, shown: &Proposal) -> Update {
        let events = match self.actuator.as_mut() {
            Some(a) => self.session.accept(shown, a.as_mut()),
            None => self.session.accept(shown, &mut self.observer),
        };
        self.acted(events)
    }

    /// `n`: the proposal is turned down.
    pub fn reject(&mut self) -> Update {
        let events = self.session.reject();
        self.acted(events)
    }

    /// Takes new rules (a reload): the history is kept, so decisions go
    /// on at once, and the new limits apply as cpuplugd applies them.
    pub fn reload(&mut self, rules: Arc<RuleSet>, file: SourceFile) -> Update {
        self.file = Arc::new(file.clone());
        let events = match self.actuator.as_mut() {
            Some(a) => self.session.reload(rules, file, a.as_mut()),
            None => self.session.reload(rules, file, &mut self.observer),
        };
        Update::Reloaded {
            board: Box::new(self.board()),
            lines: event_lines(events),
        }
    }

    /// Takes edited rules (the what-if editor's, applied): loaded as a
    /// rule file is, then taken as a reload is, the history kept. The log
    /// says they are not saved, and how to go back to the file on disk.
    pub fn apply(
        &mut self,
        rules: &EditedRules,
        facts: &SystemFacts,
        on_disk: Option<&std::path::Path>,
    ) -> Vec<Update> {
        match crate::rules::load_source(rules.source(), facts) {
            Ok((set, file)) => {
                let back = on_disk.map_or(String::new(), |p| {
                    format!("; r goes back to {}", p.display())
                });
                vec![
                    self.reload(Arc::new(set), file),
                    Update::Note(
                        LogKind::Note,
                        format!(
                            "the edited rules are in force (not saved: Ctrl-S in the what-if editor writes them{back})"
                        ),
                    ),
                ]
            }
            Err(e) => vec![
                Update::Note(
                    LogKind::Problem,
                    "the edited rules were not applied; the rules in force stay".into(),
                ),
                Update::Show(Dialog::Message(crate::error_chain::text(&e))),
            ],
        }
    }

    fn acted(&mut self, events: Vec<Event>) -> Update {
        Update::Acted {
            board: Box::new(self.board()),
            lines: event_lines(events),
        }
    }
}

/// What events say in the log.
fn event_lines(events: Vec<Event>) -> Vec<(LogKind, String)> {
    events
        .into_iter()
        .map(|e| {
            let kind = match e {
                Event::Failed { .. } | Event::CpuWriteFailed(_) => LogKind::Problem,
                Event::Would { .. } => LogKind::Decision,
                _ => LogKind::Action,
            };
            (kind, e.to_string())
        })
        .collect()
}

/// What a step says in the log, as every front end says it
/// ([`log_entries::step_lines`]), verbose.
fn step_lines(step: &Step, session: &Session) -> Vec<(LogKind, String)> {
    log_entries::step_lines(step, session, log_entries::Detail::Verbose, false)
        .into_iter()
        .map(|line| {
            let kind = match line.kind {
                LineKind::Decision => LogKind::Decision,
                LineKind::Action => LogKind::Action,
                LineKind::Problem => LogKind::Problem,
                LineKind::Note => LogKind::Note,
            };
            (kind, line.entry.message)
        })
        .collect()
}

/// What the controller really did this interval, as moves.
fn applied_moves(events: &[Event]) -> Moves {
    let mut moves = Moves::default();
    for e in events {
        if let Event::Applied { action, .. } = e {
            match action {
                Action::PlugCpu => moves.cpu = 1,
                Action::UnplugCpu => moves.cpu = -1,
                Action::Pool { from, to } => moves.pool = (to - from).signum() as i8,
            }
        }
    }
    moves
}
