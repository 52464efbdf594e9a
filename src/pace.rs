//! Lengths of time and deadlines made from numbers a user wrote (UPDATE in
//! a rule file, `--interval`, `--speed`). Such a number can be anything the
//! file or the command line holds, `UPDATE="18446744073709551615"` or a
//! speed of `1e-300`, and the standard library panics when a length does
//! not fit a `Duration` or a deadline does not fit an `Instant`. Every
//! front end paces through these functions, which saturate instead: an
//! interval too long to represent is simply the longest there is, as
//! cpuplugd with a huge UPDATE simply sleeps for as long as `sleep()` takes.

use std::time::{Duration, Instant};

/// `seconds` as a duration, saturating: NaN, negative numbers and 0 are no
/// time at all, numbers too large for a `Duration` (or infinite) are
/// [`Duration::MAX`]. Never panics, unlike `Duration::from_secs_f64`.
pub fn seconds(seconds: f64) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
}

/// `length` divided by `speed` (a replay or simulation run `speed` times
/// faster than real time), saturating as [`seconds`] does: a tiny speed
/// makes a very long wait, never a panic. A speed that is not a positive
/// number leaves the length as it is.
pub fn scaled(length: Duration, speed: f64) -> Duration {
    if speed.is_nan() || speed <= 0.0 {
        return length;
    }
    seconds(length.as_secs_f64() / speed)
}

/// The instant `after` from `now`, or the latest instant that can be
/// represented when that one cannot: a deadline so far away that nobody
/// will live to see it passes for "never", and needs no special case in
/// the loops that wait for it. Never panics, unlike `Instant + Duration`.
pub fn deadline(now: Instant, after: Duration) -> Instant {
    if let Some(at) = now.checked_add(after) {
        return at;
    }
    // Halve what is left to add until it fits: at most 64 + 30 halvings
    // reach a duration of zero, which always fits.
    let mut at = now;
    let mut step = after;
    while !step.is_zero() {
        match at.checked_add(step) {
            Some(later) => at = later,
            None => step /= 2,
        }
    }
    at
}

/// Waits until `deadline` or until `done` holds, whichever comes first.
/// `done` is looked at first and whenever the thread is woken
/// ([`std::thread::Thread::unpark`], as the signal thread of
/// [`crate::daemon::Signals`] does), so a signal ends the wait at once.
/// The instant seen at or past the deadline, when it came first (a
/// caller that goes on then needs not ask the clock again).
pub fn park_until(deadline: Instant, done: &dyn Fn() -> bool) -> Option<Instant> {
    loop {
        if done() {
            return None;
        }
        let now = Instant::now();
        if now >= deadline {
            return Some(now);
        }
        std::thread::park_timeout(deadline - now);
    }
}

/// The slowest `--speed`: a thousand times slower than real time. Slower
/// would make one interval of a simulation a wait of days, or longer than
/// a `Duration` holds.
const SLOWEST_SPEED: f64 = 0.001;

/// The fastest `--speed`; beyond it `--fast` says what is meant.
const FASTEST_SPEED: f64 = 1_000_000.0;

/// `--speed X` checked: a finite number between [`SLOWEST_SPEED`] and
/// [`FASTEST_SPEED`].
pub fn checked_speed(speed: f64) -> anyhow::Result<f64> {
    if speed.is_nan() || speed <= 0.0 {
        anyhow::bail!("--speed must be a positive number (1 is real time, 2 twice as fast)");
    }
    if speed < SLOWEST_SPEED {
        anyhow::bail!("--speed {speed:?} is too slow: the slowest is {SLOWEST_SPEED}");
    }
    if speed > FASTEST_SPEED {
        anyhow::bail!(
            "--speed {speed:?} is too fast: the fastest is {FASTEST_SPEED} (--fast runs without waiting)"
        );
    }
    Ok(speed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_too_large_for_a_duration_saturate() {
        for s in [1.9e19, 1e300, f64::MAX, f64::INFINITY] {
            assert_eq!(seconds(s), Duration::MAX, "{s}");
        }
        assert_eq!(seconds(1.5), Duration::from_millis(1500));
        assert_eq!(seconds(i64::MAX as f64), Duration::from_secs(1 << 63));
    }

    #[test]
    fn nothing_negative_or_nan_is_a_length() {
        for s in [f64::NAN, -1.0, -0.0, 0.0, f64::NEG_INFINITY, -1e300] {
            assert_eq!(seconds(s), Duration::ZERO, "{s}");
        }
    }

    #[test]
    fn a_tiny_speed_makes_the_longest_wait_not_a_panic() {
        let d = Duration::from_secs(5);
        assert_eq!(scaled(d, 1e-10), Duration::from_secs(50_000_000_000));
        assert_eq!(scaled(d, 1e-20), Duration::MAX);
        assert_eq!(scaled(d, 1e-308), Duration::MAX);
        assert_eq!(scaled(Duration::MAX, 0.5), Duration::MAX);
        assert_eq!(scaled(d, 2.0), Duration::from_millis(2500));
        assert_eq!(scaled(d, f64::INFINITY), Duration::ZERO);
        assert_eq!(scaled(d, f64::NAN), d);
        assert_eq!(scaled(d, 0.0), d);
    }

    #[test]
    fn deadlines_beyond_what_an_instant_holds_are_the_latest_one() {
        let now = Instant::now();
        let far = deadline(now, Duration::MAX);
        assert!(far > now);
        assert!(far.checked_add(Duration::from_secs(1)).is_none());
        assert_eq!(
            deadline(now, Duration::from_secs(u64::MAX - 1)),
            far,
            "both are beyond what an Instant holds"
        );
        assert_eq!(
            deadline(now, Duration::from_secs(3)),
            now + Duration::from_secs(3)
        );
    }
}
