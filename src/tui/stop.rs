//! A signal that ends the screen (SIGTERM, SIGINT, SIGHUP), raised by the
//! signal thread and looked at by the screen and the control thread before
//! each queued key or command: no amount of queued input (a pasted
//! megabyte) holds off putting the guest back.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

/// Which stop signal came, shared by the threads that must act on it.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicI32>);

impl StopFlag {
    /// No signal yet.
    pub fn new() -> Self {
        StopFlag::default()
    }

    /// Records `signal`; the first one counts (it gives the exit code).
    pub fn raise(&self, signal: i32) {
        let _ = self
            .0
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The signal, once one came.
    pub fn raised(&self) -> Option<i32> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_counts_and_every_copy_sees_it() {
        let flag = StopFlag::new();
        let seen_by = flag.clone();
        assert_eq!(seen_by.raised(), None);
        flag.raise(15);
        flag.raise(1);
        assert_eq!(seen_by.raised(), Some(15));
    }
}
