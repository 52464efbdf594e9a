//! Seeking in a replay or the simulator (`G` to its end, `J` to a time,
//! `]` to the next change): where to ([`SeekTo`], a typed time in
//! [`time`]) and what the screen is told of it ([`Passed`], [`SeekEnd`]).
//! The reading ahead is the control thread's
//! ([`crate::tui::control::read_ahead`]); the screen's side of `J` is
//! `App`'s (`tui/app/seeking.rs`).

pub mod time;

use std::sync::Arc;

use super::log_book::LogBook;
use crate::control::flap::Moves;
use crate::control::patterns::Hint;
use crate::kernel::{Sample, Stamp};

/// Where a replay is asked to read ahead to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekTo {
    /// The end of the recording.
    End,
    /// The first reading at or after this time.
    At(Stamp),
    /// The first reading whose decision does otherwise than this (what the
    /// newest interval shown decided): `]` past the intervals read.
    NextChange(Option<Moves>),
}

impl SeekTo {
    /// Whether a reading taken at `stamp` that decided `moves` (`None`:
    /// nothing decided) is the one sought.
    pub fn reached(self, stamp: Stamp, moves: Option<Moves>) -> bool {
        match self {
            SeekTo::End => false,
            SeekTo::At(at) => stamp >= at,
            SeekTo::NextChange(before) => moves != before,
        }
    }
}

/// What the readings passed on the way left: their log lines, with their
/// times, and the patterns they showed.
#[derive(Debug, Default)]
pub struct Passed {
    /// Readings decided and not sent whole.
    pub readings: usize,
    /// Their log lines, as the Log keeps them: a repeat counted, the
    /// newest [`super::log_book::LOG_LINES`] entries and a note of how
    /// many went before them.
    pub log: LogBook,
    pub hints: Vec<Hint>,
    /// The reading of the newest interval passed: the graphs' rates of the
    /// first interval kept are taken against it.
    pub last: Option<Arc<Sample>>,
}

/// How a seek ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeekEnd {
    pub to: SeekTo,
    /// The time of the newest reading taken, if any was.
    pub at: Option<Stamp>,
    /// Readings decided on the way.
    pub readings: usize,
    /// Esc stopped it where it stood.
    pub stopped: bool,
    /// The reading sought came (a time before the recording's end).
    pub reached: bool,
}
