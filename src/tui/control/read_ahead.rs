//! Reading ahead in a replay (`G` to its end, `J` to a time, `]` to the
//! next change) without
//! replaying at its pace: every reading on the way is decoded and decided
//! as fast as the machine goes, so the session stands where a replay at
//! speed would have left it (averages, flips, the pool). What the screen
//! gets is what it would keep anyway: the newest [`FRAMES`] intervals
//! whole, and the log lines of the older ones kept as the Log keeps them
//! (a repeat counted, at most [`super::log_book::LOG_LINES`] entries and a
//! note of how many went before them) with their times.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use crate::kernel::{Source, Stamp};
use crate::tui::core::Core;
use crate::tui::log_book::LogKind;
use crate::tui::seek::{Passed, SeekEnd, SeekTo};
use crate::tui::timeline::FRAMES;
use crate::tui::update::Update;

/// How far one leg of a seek got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leg {
    /// Time is up; more to read.
    Going,
    /// The reading sought came, or the recording ended.
    Done,
}

/// A seek under way: the target and what the readings so far leave for
/// the screen.
#[derive(Debug)]
pub struct ReadAhead {
    to: SeekTo,
    /// The newest updates, each with the time of the reading it came with.
    kept: VecDeque<(Option<Stamp>, Update)>,
    /// How many of `kept` carry an interval.
    frames: usize,
    passed: Passed,
    readings: usize,
    at: Option<Stamp>,
    reached: bool,
    /// Esc stopped it where it stood.
    stopped: bool,
    /// The source stopped early on this damage on the way.
    damage: Option<String>,
}

impl ReadAhead {
    /// A seek to `to`, nothing read yet.
    pub fn new(to: SeekTo) -> ReadAhead {
        ReadAhead {
            to,
            kept: VecDeque::new(),
            frames: 0,
            passed: Passed::default(),
            readings: 0,
            at: None,
            reached: false,
            stopped: false,
            damage: None,
        }
    }

    /// Where it goes.
    pub fn to(&self) -> SeekTo {
        self.to
    }

    /// Another target, from where it stands (a second `J` while reading).
    pub fn retarget(&mut self, to: SeekTo) {
        self.to = to;
    }

    /// Esc: it ends where it stands, as if it had got there.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether it ends where it stands (the reading sought came, or Esc
    /// stopped it), rather than at the end of the recording.
    pub fn held(&self) -> bool {
        self.reached || self.stopped
    }

    /// Whether the reading sought came (else the recording ended first).
    pub fn reached(&self) -> bool {
        self.reached
    }

    /// The time of the newest reading taken so far.
    pub fn at(&self) -> Option<Stamp> {
        self.at
    }

    /// Reads and decides on until the reading sought, the end of the
    /// recording, or `until` (none: no slice, as a test or a batch wants);
    /// whether it is done.
    pub fn run(&mut self, core: &mut Core, source: &mut dyn Source, until: Option<Instant>) -> Leg {
        loop {
            let reading = source.next_sample();
            let warning = source.warning();
            let (stamp, moves) = match reading {
                Some(Ok(sample)) => {
                    let stamp = sample.stamp;
                    self.readings += 1;
                    self.at = Some(stamp);
                    let update = core.step(sample);
                    let moves = match &update {
                        Update::Reading(r) => r
                            .frame
                            .as_ref()
                            .and_then(|f| f.decision.as_ref())
                            .map(crate::control::flap::Moves::of),
                        _ => None,
                    };
                    self.keep(Some(stamp), update);
                    (Some(stamp), moves)
                }
                Some(Err(e)) => {
                    let line = format!("skipping this interval: {}", crate::error_chain::text(&e));
                    self.keep(self.at, Update::Note(LogKind::Problem, line));
                    (None, None)
                }
                None => {
                    let line = "end of the recording".to_string();
                    self.keep(self.at, Update::Note(LogKind::Note, line));
                    if let Some(w) = warning {
                        self.keep(self.at, Update::Note(LogKind::Problem, w.clone()));
                        self.damage = Some(w);
                    }
                    return Leg::Done;
                }
            };
            if let Some(w) = warning {
                self.keep(self.at, Update::Note(LogKind::Problem, w.clone()));
                self.damage = Some(w);
            }
            if stamp.is_some_and(|s| self.to.reached(s, moves)) {
                self.reached = true;
                return Leg::Done;
            }
            if until.is_some_and(|u| Instant::now() >= u) {
                return Leg::Going;
            }
        }
    }

    /// Keeps `update` (said with the reading taken at `stamp`); the oldest
    /// kept leave their lines once more intervals are kept than the
    /// screen holds.
    fn keep(&mut self, stamp: Option<Stamp>, update: Update) {
        if matches!(&update, Update::Reading(r) if r.frame.is_some()) {
            self.frames += 1;
        }
        self.kept.push_back((stamp, update));
        while self.frames > FRAMES {
            let Some((stamp, oldest)) = self.kept.pop_front() else {
                break;
            };
            self.pass(stamp, oldest);
        }
    }

    /// An update that will not be sent whole: what it says in the log
    /// stays, with its time.
    fn pass(&mut self, stamp: Option<Stamp>, update: Update) {
        let stamp = stamp.unwrap_or_default();
        let lines = match update {
            Update::Reading(reading) => {
                self.passed.readings += 1;
                if let Some(frame) = &reading.frame {
                    self.frames -= 1;
                    self.passed.last = Some(Arc::clone(&frame.sample));
                }
                self.passed.hints.extend(reading.hints.iter().cloned());
                reading.into_lines()
            }
            Update::Note(kind, text) => vec![(kind, text)],
            _ => Vec::new(),
        };
        for (kind, text) in lines {
            self.passed.log.note(stamp, kind, text);
        }
    }

    /// What the screen is sent: the lines of the readings passed, the
    /// readings kept in order, and how the seek ended.
    pub fn finish(self) -> Vec<Update> {
        let mut updates = Vec::with_capacity(self.kept.len() + 2);
        if self.passed.readings > 0 || !self.passed.log.lines().is_empty() {
            updates.push(Update::Passed(Box::new(self.passed)));
        }
        updates.extend(self.kept.into_iter().map(|(_, u)| u));
        updates.extend(self.damage.map(Update::Damaged));
        updates.push(Update::SeekEnd(SeekEnd {
            to: self.to,
            at: self.at,
            readings: self.readings,
            reached: self.reached,
            stopped: self.stopped,
        }));
        updates
    }
}
