//! `--interval S` as the screen, `eval`, `record` and `sim` take it, and
//! the other lengths of time the command line takes:
//! checked into a length of time that neither busy-loops nor overflows.

use std::time::Duration;

/// The shortest `--interval`: shorter ones read as fast as the machine
/// can (what `UPDATE="0"` would do, which cpuplugd refuses), and cost the
/// guest a CPU instead of the fraction of a percent plugtop is allowed.
const SHORTEST_INTERVAL: f64 = 0.001;

/// The longest `--interval`: a day. Longer is no monitoring any more, and
/// numbers like 1e300 or inf are not lengths of time at all.
const LONGEST_INTERVAL: f64 = 86_400.0;

/// `--NAME S` as a duration: a finite number of seconds from `min` to `max`
/// (`fleet`'s and `import`'s time limits).
pub(super) fn seconds(name: &str, v: f64, min: f64, max: f64) -> anyhow::Result<Duration> {
    if !v.is_finite() || v < min || v > max {
        anyhow::bail!("--{name} must be between {min} and {max} seconds, not {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

/// `--interval S` as a duration: between [`SHORTEST_INTERVAL`] and
/// [`LONGEST_INTERVAL`] seconds.
pub(super) fn positive_interval(s: f64) -> anyhow::Result<Duration> {
    if s.is_nan() {
        anyhow::bail!(
            "--interval must be a number of seconds, from {SHORTEST_INTERVAL} to {LONGEST_INTERVAL}"
        );
    }
    if s < SHORTEST_INTERVAL {
        anyhow::bail!(
            "--interval {s:?} is too short: the shortest is {SHORTEST_INTERVAL} seconds (1 ms); shorter would busy-loop, which is why cpuplugd refuses UPDATE=\"0\""
        );
    }
    if s > LONGEST_INTERVAL {
        anyhow::bail!(
            "--interval {s:?} is too long: the longest is {LONGEST_INTERVAL} seconds (a day)"
        );
    }
    Ok(plugtop::pace::seconds(s))
}
