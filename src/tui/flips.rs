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
    /// How many changes older than these were not kept.
    dropped: usize,
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
            dropped: watch.changes_dropped,
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

    /// How many changes older than [`Flips::changes`] were not kept (the
    /// newest [`crate::control::watch::KEPT_FLIPS`] are).
    pub fn dropped(&self) -> usize {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::flap::Moves;

    fn change(reading: usize) -> ChangedDecision {
        ChangedDecision {
            reading,
            before: Moves::default(),
            after: Moves::default(),
            why: vec![format!("flip {reading}")],
        }
    }

    #[test]
    fn the_changes_are_copied_for_the_screen_only_when_a_new_one_came() {
        let mut watch = Watch::new(FlapConfig::default());
        let mut kept = Arc::default();
        let first = Flips::of(&watch, &mut kept);
        assert!(first.changes().is_empty());
        watch.changes.push_back(change(3));
        let second = Flips::of(&watch, &mut kept);
        assert_eq!(second.changes().len(), 1, "a new change is sent");
        let third = Flips::of(&watch, &mut kept);
        assert!(
            Arc::ptr_eq(&second.changes, &third.changes),
            "nothing new: the same changes, not a copy"
        );
        // At the bound the oldest goes as a new one comes: same length,
        // another newest.
        watch.changes.pop_front();
        watch.changes.push_back(change(9));
        let fourth = Flips::of(&watch, &mut kept);
        assert_eq!(
            fourth.changes().back().map(|c| c.reading),
            Some(9),
            "{:?}",
            fourth.changes()
        );
    }
}
