//! `J` (a time typed in) and the end of a seek: a time the screen keeps is
//! travelled to, a later one in a replay or the simulator is read ahead to
//! by the control thread ([`crate::tui::control::read_ahead`]), and what it read
//! arrives here.

use crossterm::event::KeyEvent;

use super::{App, Command, Dialog, KeyAction, LogKind, SourceLabel};
use crate::report::time_of_day;
use crate::tui::modal::Modals;
use crate::tui::seek::{self, Passed, SeekEnd, SeekTo};

impl App {
    /// A key while `J` asks for a time: editing, Enter goes there, Esc
    /// closes. What the control thread must do for it: read a replay
    /// ahead, when the time is past the newest reading.
    pub fn goto_key(&mut self, key: KeyEvent) -> Option<Command> {
        let text = self.modals.prompt_key(Modals::goto_on_top, key)?;
        self.go_to(&text)
    }

    /// Goes to the time `text` names ([`seek::time::parse`]): travels to
    /// it among the intervals kept, or asks a replay or the simulator to
    /// read ahead to it; says why not when neither can be.
    fn go_to(&mut self, text: &str) -> Option<Command> {
        let typed = match seek::time::parse(text) {
            Ok(typed) => typed,
            Err(e) => {
                self.show(Dialog::Message(e.to_string()));
                return None;
            }
        };
        let frames = self.timeline.frames();
        let (Some((_, start)), Some(newest), Some(oldest), Some(shown)) = (
            self.clock,
            frames.front(),
            frames.back(),
            self.timeline.frame(),
        ) else {
            self.show(Dialog::Message("there is no reading yet to go from".into()));
            return None;
        };
        let around = seek::time::Around {
            start,
            oldest: oldest.sample.stamp,
            newest: newest.sample.stamp,
            shown: shown.sample.stamp,
        };
        let (newest, oldest) = (around.newest, around.oldest);
        let at = typed.resolve(around);
        let why_not = if at > newest {
            if !matches!(self.source, SourceLabel::Live(_)) {
                return Some(Command::Seek(SeekTo::At(at)));
            }
            format!(
                "{} has not come yet: this is a live guest, and its newest reading is from {}",
                time_of_day(at),
                time_of_day(newest)
            )
        } else if at < oldest {
            let onward = match self.source {
                SourceLabel::Live(_) => "a live guest's earlier readings are gone",
                SourceLabel::Sim { .. } => "the simulator runs forward only",
                _ => "a replay reads forward only; start it again to see earlier times",
            };
            format!(
                "{} is before the oldest interval kept ({}): the screen keeps the last {} intervals, and {onward}",
                time_of_day(at),
                time_of_day(oldest),
                crate::tui::timeline::FRAMES
            )
        } else {
            self.timeline.travel_to(at);
            return None;
        };
        self.show(Dialog::Message(why_not));
        None
    }

    /// `]` found no later change among the intervals kept: a replay reads
    /// ahead to the next one (as `J` reads ahead to a time); a live guest
    /// or the simulator says why there is none to go to.
    pub(super) fn next_change_ahead(&mut self) -> Option<Command> {
        let newest = self.timeline.frames().front()?;
        let moves = newest
            .decision
            .as_ref()
            .map(crate::control::flap::Moves::of);
        let why_not = match self.source {
            SourceLabel::Replay { .. } => return Some(Command::Seek(SeekTo::NextChange(moves))),
            SourceLabel::Live(_) => {
                "no later change yet: the decision has not changed since the interval shown, and a live guest goes no further than now"
            }
            SourceLabel::Sim { .. } => {
                "no later change yet: the decision has not changed since the interval shown; the simulator decides on at its pace (J reads ahead to a time)"
            }
        };
        self.show(Dialog::Message(why_not.to_string()));
        None
    }

    /// The readings a seek passed on the way: the timeline starts again
    /// (the readings kept follow), and their lines go to the log at their
    /// times.
    pub(super) fn take_passed(&mut self, passed: Passed) {
        self.readings += passed.readings;
        if passed.readings > 0 {
            self.timeline.restart(passed.last);
        }
        for line in passed.log.lines() {
            self.tick(line.last);
            self.log.take(line.clone());
        }
        self.hints.extend(passed.hints);
    }

    /// A seek ended: a time reached is shown and held there, the end of a
    /// replay followed; the log says how far it read.
    pub(super) fn arrived(&mut self, sought: SeekEnd) {
        let on_the_way = crate::report::words::count(sought.readings as f64, "reading", "readings");
        if sought.stopped {
            self.timeline.hold_newest();
            let at = sought.at.map(time_of_day).unwrap_or_default();
            self.note(
                LogKind::Note,
                format!(
                    "reading ahead stopped (Esc) at {at}: {on_the_way} decided on the way; Space plays on"
                ),
            );
            return;
        }
        let text = match (sought.to, sought.reached) {
            (SeekTo::At(at), true) => {
                self.timeline.hold_newest();
                format!(
                    "read ahead to {}: {on_the_way} decided on the way; Space plays on",
                    time_of_day(at)
                )
            }
            (SeekTo::At(at), false) => format!(
                "the recording ends before {}: read to its end ({on_the_way} decided on the way)",
                time_of_day(at)
            ),
            (SeekTo::NextChange(_), true) => {
                self.timeline.hold_newest();
                format!(
                    "read ahead to the next change: {on_the_way} decided on the way; [ goes back, Space plays on"
                )
            }
            (SeekTo::NextChange(_), false) => {
                self.timeline.travel(KeyAction::Newest);
                format!(
                    "no later change: read to the end of the recording ({on_the_way} decided on the way)"
                )
            }
            (SeekTo::End, _) => {
                self.timeline.travel(KeyAction::Newest);
                format!("read to the end of the recording: {on_the_way} decided on the way")
            }
        };
        self.note(LogKind::Note, text);
    }
}
