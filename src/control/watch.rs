//! The incident watch: everything plugtop says about a guest that will not
//! settle, from one place the UI, `plugtop sim`, `plugtop run` and
//! `plugtop whatif` share — flapping (with its period), why the decision
//! changed (the comparisons that flipped), and self-feeding loops.

use std::collections::VecDeque;
use std::fmt;

use super::feedback::{self, LoopWarning};
use super::flap::{FlapConfig, FlapDetector, FlapEvent, Flapping, Moves, Quantity};
use crate::engine::{Decision, Engine};
use crate::report::flips;
use crate::rules::SourceFile;
use crate::rules::eval::Trace;

/// How many explained changes of decision are kept.
pub const KEPT_FLIPS: usize = 50;

/// Something the watch found in one interval.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    FlapStarted(Flapping),
    FlapStopped(Quantity),
    /// The decision differs from the previous interval's, and why.
    Changed(ChangedDecision),
    Loop(LoopWarning),
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::FlapStarted(x) => write!(f, "{x}"),
            Finding::FlapStopped(q) => write!(f, "{q} no longer flapping"),
            Finding::Changed(c) => write!(f, "{c}"),
            Finding::Loop(l) => write!(f, "{l}"),
        }
    }
}

/// A decision that differs from the one before, with the flips behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangedDecision {
    /// Reading the new decision was made on.
    pub reading: usize,
    pub before: Moves,
    pub after: Moves,
    /// One line per rule whose result flipped.
    pub why: Vec<String>,
}

impl fmt::Display for ChangedDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {} → {}", self.reading, self.before, self.after)?;
        for w in &self.why {
            write!(f, "; {w}")?;
        }
        Ok(())
    }
}

/// The watch over one run.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    pub flap: FlapDetector,
    /// The trace and the moves of the interval observed last.
    previous: Option<(Trace, Moves)>,
    /// The latest explained changes, newest last.
    pub changes: VecDeque<ChangedDecision>,
    /// How many older changes went past [`KEPT_FLIPS`].
    pub changes_dropped: usize,
    /// The loops found, one per kind of action.
    pub loops: Vec<LoopWarning>,
    /// What the loop check reuses from one acting interval to the next.
    feedback: feedback::Scratch,
    /// The session traces only what needs it: the watch keeps no trace of
    /// each interval, and is given the one before a change (see
    /// [`Watch::previous_trace_mut`]).
    no_traces: bool,
}

impl Watch {
    /// A watch with these flapping thresholds.
    pub fn new(config: FlapConfig) -> Self {
        Watch {
            flap: FlapDetector::new(config),
            ..Watch::default()
        }
    }

    /// Takes one decided interval: the engine that decided it (for the loop
    /// check), the reading, the decision and its trace.
    pub fn observe(
        &mut self,
        engine: &Engine,
        source: &SourceFile,
        decision: &Decision,
        trace: &Trace,
    ) -> Vec<Finding> {
        let explain = self.may_show_next_change();
        let mut found = Vec::new();
        let moves = Moves::of(decision);
        for e in self.flap.observe(decision.reading, moves) {
            found.push(match e {
                FlapEvent::Started(f) => Finding::FlapStarted(f),
                FlapEvent::Stopped(q) => Finding::FlapStopped(q),
            });
        }
        if let Some((before, old_moves)) = &self.previous {
            if *old_moves != moves {
                let why = if explain {
                    flips::lines(&flips::flips(engine.rules(), source, before, trace))
                } else {
                    Vec::new()
                };
                let change = ChangedDecision {
                    reading: decision.reading,
                    before: *old_moves,
                    after: moves,
                    why,
                };
                if self.changes.len() >= KEPT_FLIPS {
                    self.changes.pop_front();
                    self.changes_dropped += 1;
                }
                self.changes.push_back(change.clone());
                found.push(Finding::Changed(change));
            }
            // A loop is said once per action: once found, that action's
            // check would only be thrown away.
            let found_before = feedback::action_of(decision)
                .is_some_and(|action| self.loops.iter().any(|l| l.action == action));
            if !found_before
                && let Some(w) = feedback::check(engine, source, decision, &mut self.feedback)
                && !self.loops.iter().any(|l| l.action == w.action)
            {
                self.loops.push(w.clone());
                found.push(Finding::Loop(w));
            }
        }
        match &mut self.previous {
            Some((t, w)) => {
                if !self.no_traces {
                    t.clone_from(trace);
                }
                *w = moves;
            }
            None => {
                let kept = if self.no_traces {
                    Trace::new()
                } else {
                    trace.clone()
                };
                self.previous = Some((kept, moves));
            }
        }
        found
    }

    /// Keeps no trace of each interval from now on: the session gives the
    /// trace of the interval before a change when one comes.
    pub fn keep_no_traces(&mut self) {
        self.no_traces = true;
    }

    /// Whether a change of decision in the next interval observed may be
    /// shown, and is explained: always, but in a watch that keeps no
    /// traces (`plugtop run`, which shows the changes only in the two
    /// lines under a flap's start), only where a flap could start with it
    /// or with the change after it: where two more reversals of one
    /// quantity would make it flap. Reversals come only with changes, one
    /// per quantity each, so a change this says no to is never shown.
    pub fn may_show_next_change(&self) -> bool {
        !self.no_traces || self.flap.within(2)
    }

    /// Whether `decision` moves differently from the interval observed
    /// before it: its flips are then explained from both traces.
    pub fn changes(&self, decision: &Decision) -> bool {
        matches!(&self.previous, Some((_, moves)) if *moves != Moves::of(decision))
    }

    /// The trace kept of the interval observed last, to be filled by a
    /// session that keeps none each interval (see [`Watch::keep_no_traces`]).
    pub fn previous_trace_mut(&mut self) -> Option<&mut Trace> {
        self.previous.as_mut().map(|(trace, _)| trace)
    }

    /// Whether anything flaps now.
    pub fn flapping(&self) -> Vec<Flapping> {
        self.flap.findings()
    }
}
