//! The intervals the screen can go back to, which one it shows, and the
//! graphs' history with the values pinned to it. Bounded in count and in
//! the /proc text the intervals hold together.

use std::collections::VecDeque;
use std::sync::Arc;

use super::keys::KeyAction;
use crate::control::flap::Moves;
use crate::engine::Decision;
use crate::history::History;
use crate::kernel::Sample;
use crate::kernel::deltas::CpuLoad;
use crate::rules::eval::Trace;

/// How many intervals the screens can go back to.
pub const FRAMES: usize = 600;
/// The most /proc text the kept intervals may hold together. A kernel's
/// meminfo and vmstat are a few kilobytes, so 600 intervals hold about
/// 3 MB; files of megabytes (a damaged or hostile root) shorten the
/// history instead of growing memory by hundreds of times their size.
pub const FRAME_BYTES: u64 = 32 << 20;

/// One interval as the screens show it.
#[derive(Debug, Clone)]
pub struct Interval {
    pub number: usize,
    pub sample: Arc<Sample>,
    pub decision: Option<Decision>,
    pub trace: Trace,
    pub loads: Vec<CpuLoad>,
    /// Each user variable some rule names, with its value this interval.
    pub variables: Vec<(String, Option<f64>)>,
    /// What was really done to the guest this interval (nothing in observe
    /// mode, an approval's actions in step-confirm).
    pub applied: Moves,
}

/// The kept intervals, newest first, and where the screen stands in them.
#[derive(Default)]
pub struct Timeline {
    frames: VecDeque<Interval>,
    /// `None` follows the newest interval; `Some(k)` shows the k-th newest.
    cursor: Option<usize>,
    paused: bool,
    history: History,
    /// Names whose values the graphs follow, in the order pinned.
    pinned: Vec<String>,
}

impl Timeline {
    /// No interval yet, following the newest.
    pub fn new() -> Self {
        Timeline {
            frames: VecDeque::with_capacity(FRAMES),
            ..Timeline::default()
        }
    }

    /// The intervals kept, newest first.
    pub fn frames(&self) -> &VecDeque<Interval> {
        &self.frames
    }

    /// The interval the screens show now.
    pub fn frame(&self) -> Option<&Interval> {
        self.frames.get(self.cursor.unwrap_or(0))
    }

    /// The interval before the one shown.
    pub fn previous_frame(&self) -> Option<&Interval> {
        self.frames.get(self.cursor.unwrap_or(0) + 1)
    }

    /// `None` when following the newest, else how many intervals back.
    pub fn cursor(&self) -> Option<usize> {
        self.cursor
    }

    /// Whether new readings wait to be shown (the screen stays put).
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The graphs' series, pinned values included.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The names pinned to the graphs.
    pub fn pinned(&self) -> &[String] {
        &self.pinned
    }

    /// Takes a new interval: its values go to the graphs (each pinned name
    /// looked up in it by `value`), the oldest intervals go past the
    /// bounds, and an interval travelled to stays the one shown.
    pub fn push(&mut self, frame: Interval, value: impl Fn(&Interval, &str) -> f64) {
        self.history.push(Arc::clone(&frame.sample));
        for name in &self.pinned {
            self.history.record_pinned(name, value(&frame, name));
        }
        self.frames.push_front(frame);
        let mut bytes: u64 = self.frames.iter().map(|f| proc_bytes(&f.sample)).sum();
        while self.frames.len() > FRAMES || (self.frames.len() > 2 && bytes > FRAME_BYTES) {
            if let Some(old) = self.frames.pop_back() {
                bytes -= proc_bytes(&old.sample);
            }
        }
        if let Some(k) = self.cursor.as_mut() {
            *k = (*k + 1).min(self.frames.len() - 1);
        }
    }

    /// Pins `name` to the graphs, or unpins it if it was.
    pub fn toggle_pin(&mut self, name: String) {
        if let Some(i) = self.pinned.iter().position(|p| *p == name) {
            self.pinned.remove(i);
            self.history.unpin(&name);
        } else {
            self.history.pin(&name);
            self.pinned.push(name);
        }
    }

    /// Time travel: pause, step back and forth, jump to the ends or to
    /// where the decision changed. Other actions do nothing.
    pub fn travel(&mut self, action: KeyAction) {
        match action {
            KeyAction::Pause => {
                self.paused = !self.paused;
                if self.paused && self.cursor.is_none() {
                    self.cursor = Some(0);
                } else if !self.paused {
                    self.cursor = None;
                }
            }
            KeyAction::Back => {
                let k = self.cursor.unwrap_or(0);
                if k + 1 < self.frames.len() {
                    self.cursor = Some(k + 1);
                    self.paused = true;
                }
            }
            KeyAction::Forward => match self.cursor {
                Some(0) | None => {
                    self.cursor = None;
                    self.paused = false;
                }
                Some(k) => self.cursor = Some(k - 1),
            },
            KeyAction::Oldest => {
                self.cursor = Some(self.frames.len().saturating_sub(1));
                self.paused = true;
            }
            KeyAction::PreviousChange | KeyAction::NextChange => {
                // What each interval did; a change is where it differs from
                // the interval shown.
                let moves = |k: usize| {
                    self.frames
                        .get(k)
                        .and_then(|f| f.decision.as_ref())
                        .map(Moves::of)
                };
                let here = self.cursor.unwrap_or(0);
                let now = moves(here);
                let found = if action == KeyAction::PreviousChange {
                    (here + 1..self.frames.len()).find(|k| moves(*k) != now)
                } else {
                    (0..here).rev().find(|k| moves(*k) != now)
                };
                if let Some(k) = found {
                    self.cursor = Some(k);
                    self.paused = true;
                }
            }
            KeyAction::Newest => {
                self.cursor = None;
                self.paused = false;
            }
            _ => {}
        }
    }
}

/// How much /proc text a sample holds.
fn proc_bytes(sample: &Sample) -> u64 {
    u64::from(sample.proc_bytes.meminfo) + u64::from(sample.proc_bytes.vmstat)
}
