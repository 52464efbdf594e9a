//! Work shared out over threads: each thread takes the next item as it
//! finishes one, and the results come back in the items' order whatever
//! the scheduling. The tune's candidates, a course's checks and a class's
//! grades are all run so.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of each of `0..count` on up to `threads` threads (at least one),
/// in index order: `None` where `f` gave none. A panic in `f` goes on in
/// the caller once every thread has stopped (callers that must go on past
/// one catch it in `f`).
pub fn in_order<T: Send>(
    count: usize,
    threads: usize,
    f: &(dyn Fn(usize) -> Option<T> + Sync),
) -> Vec<Option<T>> {
    let next = AtomicUsize::new(0);
    let mut out: Vec<Option<T>> = (0..count).map(|_| None).collect();
    let done: Vec<Vec<(usize, T)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.clamp(1, count.max(1)))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break mine;
                        }
                        if let Some(t) = f(i) {
                            mine.push((i, t));
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for (i, t) in done.into_iter().flatten() {
        out[i] = Some(t);
    }
    out
}
