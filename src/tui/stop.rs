//! A signal that ends the screen (any of [`crate::stop_signals`]), raised
//! by the signal thread and looked at by the screen and the control thread
//! before each queued key or command: no amount of queued input (a pasted
//! megabyte) holds off putting the guest back. The control thread says
//! here when the guest is given back, so the signal thread can end the
//! process even when the screen thread is stuck writing to a terminal that
//! nobody reads (a stalled SSH session).

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Which stop signal came, and whether the guest was given back since;
/// shared by the threads that must act on them.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<StopState>);

#[derive(Debug, Default)]
struct StopState {
    signal: AtomicI32,
    /// The exit status the screen ends with, once nothing is held, and
    /// what was done to the guest, in words.
    given_back: Mutex<Option<(i32, &'static str)>>,
    changed: Condvar,
}

impl StopFlag {
    /// No signal yet.
    pub fn new() -> Self {
        StopFlag::default()
    }

    /// Records `signal`; the first one counts (it gives the exit code).
    pub fn raise(&self, signal: i32) {
        let _ = self
            .0
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The signal, once one came.
    pub fn raised(&self) -> Option<i32> {
        match self.0.signal.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal),
        }
    }

    /// The control thread ended: the guest is put back (or its journal
    /// kept, or nothing was changed: `done` says which), and the process
    /// may end with `status`.
    pub fn given_back(&self, status: i32, done: &'static str) {
        let mut given = self
            .0
            .given_back
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        given.get_or_insert((status, done));
        self.0.changed.notify_all();
    }

    /// Waits until [`StopFlag::given_back`]; the status and words it gave.
    pub fn wait_given_back(&self) -> (i32, &'static str) {
        let mut done = self
            .0
            .given_back
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        loop {
            if let Some(given) = *done {
                return given;
            }
            done = self
                .0
                .changed
                .wait(done)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
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

    #[test]
    fn a_waiter_learns_the_first_status_given_back_from_another_thread() {
        let flag = StopFlag::new();
        let waiter = {
            let flag = flag.clone();
            std::thread::spawn(move || flag.wait_given_back())
        };
        flag.given_back(143, "the guest was put back");
        flag.given_back(0, "nothing");
        assert_eq!(
            waiter.join().expect("waiter"),
            (143, "the guest was put back")
        );
        assert_eq!(
            flag.wait_given_back(),
            (143, "the guest was put back"),
            "already given back: no wait"
        );
    }
}
