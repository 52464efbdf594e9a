//! What the watch over a run has found, as the screen shows it: the
//! Flips view and the header draw from it, and each interval keeps the
//! findings as they stood then, so a paused screen lists nothing newer.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::control::feedback::LoopWarning;
use crate::control::flap::{FlapConfig, Flapping};
use crate::control::watch::{ChangedDecision, Watch};

/// What the watch over one run has found, as the Flips view and the
/// header show it: computed once a reading, not once a frame.
#[derive(Debug, Clone)]
pub struct Flips {
    config: FlapConfig,
    flapping: Vec<Flapping>,
    loops: Vec<LoopWarning>,
    /// Shared between readings until a new change is explained.
    changes: Arc<VecDeque<ChangedDecision>>,
}

impl Flips {
    /// What `watch` has found; `kept` is the changes as last sent, taken
    /// again (not copied) while no new change came.
    pub fn of(watch: &Watch, kept: &mut Arc<VecDeque<ChangedDecision>>) -> Flips {
        let newest = |c: &VecDeque<ChangedDecision>| c.back().map(|d| d.reading);
        // Changes are only ever added at the back (the oldest dropped), and
        // readings count up: the length and the newest tell them apart.
        if kept.len() != watch.changes.len() || newest(kept) != newest(&watch.changes) {
            *kept = Arc::new(watch.changes.clone());
        }
        Flips {
            config: watch.flap.config(),
            flapping: watch.flapping(),
            loops: watch.loops.clone(),
            changes: Arc::clone(kept),
        }
    }

    /// When a quantity is called flapping.
    pub fn config(&self) -> FlapConfig {
        self.config
    }

    /// The quantities flapping now.
    pub fn flapping(&self) -> &[Flapping] {
        &self.flapping
    }

    /// The feedback loops found.
    pub fn loops(&self) -> &[LoopWarning] {
        &self.loops
    }

    /// The latest explained changes of decision, newest last.
    pub fn changes(&self) -> &VecDeque<ChangedDecision> {
        &self.changes
    }
}
