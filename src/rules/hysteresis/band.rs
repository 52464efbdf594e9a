//! Plug and unplug thresholds on a measure a plug moves by a different
//! amount at each CPU count — a per-CPU average such as `idle / onumcpus`
//! or a share of all CPU time such as `CP_idleAVG > 0.5`. No single "one
//! CPU's worth" exists there, so the pair is judged where it matters: at
//! each CPU count `n` the cpuplugd limits allow a plug from, the steady
//! loads at which HOTPLUG holds on `n` CPUs and HOTUNPLUG holds on `n + 1`
//! form a band; a band of any width flaps the guest at those loads.

use super::super::expr::NodeId;
use super::super::ruleset::RuleSet;
use super::{Dir, Steady, finite};

/// The most CPU counts looked at: enough for any guest the rules were
/// probed for, few enough for `plugtop tune` to ask for every candidate.
const MAX_COUNTS: u32 = 64;

/// Bisection steps over a load of up to `n` CPUs: to a millionth of a CPU
/// for the 64 CPUs of [`MAX_COUNTS`].
const STEPS: u32 = 26;

/// A load band that flaps the guest: at `cpus` online, a steady load above
/// `from` and below `to` CPUs plugs, and after the plug unplugs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub cpus: u32,
    pub from: f64,
    pub to: f64,
}

/// Every band over the CPU counts from `low` to `high` (a plug from `n`
/// needs `n < high`), fewest CPUs first, empty when the pair leaves none;
/// `Err` when the measure is not monotonic in the load or cannot be
/// evaluated (nothing can then be told). `plug` and `unplug` are the
/// comparisons as (direction, threshold). Loads run from 0 to `n + 1`: a
/// load past the `n` CPUs keeps them all busy and plugs, and one CPU more
/// may then sit idle enough to unplug.
pub fn all(
    rules: &RuleSet,
    measure: NodeId,
    plug: (Dir, f64),
    unplug: (Dir, f64),
    (low, high): (u32, u32),
) -> Result<Vec<Band>, ()> {
    let value = |n: f64, d: f64| finite(rules, measure, &Steady { n, d }).ok_or(());
    let holds = |(dir, t): (Dir, f64), v: f64| match dir {
        Dir::Above => v > t,
        Dir::Below => v < t,
    };
    let mut out = Vec::new();
    let high = high.min(low.saturating_add(MAX_COUNTS));
    for n in low.max(1)..high {
        let cpus = f64::from(n);
        let loads = cpus + 1.0;
        let at_n = |d: f64| value(cpus, d);
        let at_next = |d: f64| value(cpus + 1.0, d);
        monotonic(&at_n, loads)?;
        monotonic(&at_next, loads)?;
        let p = interval(&|d| Ok(holds(plug, at_n(d)?)), loads)?;
        let u = interval(&|d| Ok(holds(unplug, at_next(d)?)), loads)?;
        let (Some(p), Some(u)) = (p, u) else {
            continue;
        };
        let (from, to) = (p.0.max(u.0), p.1.min(u.1));
        // Wider than the bisection's precision: a band of one load alone
        // (an edge that both comparisons share) is no band.
        if to - from > 2.0 * loads / f64::from(1u32 << STEPS) {
            out.push(Band { cpus: n, from, to });
        }
    }
    Ok(out)
}

/// Refuses a measure that turns back as the load grows from 0 to `n`: the
/// bands below are intervals only for a monotonic one.
fn monotonic(value: &dyn Fn(f64) -> Result<f64, ()>, n: f64) -> Result<(), ()> {
    const PROBES: u32 = 8;
    let mut last = value(0.0)?;
    let mut sign = 0.0f64;
    for k in 1..=PROBES {
        let v = value(n * f64::from(k) / f64::from(PROBES))?;
        let s = (v - last).signum();
        if v != last {
            if sign != 0.0 && s != sign {
                return Err(());
            }
            sign = s;
        }
        last = v;
    }
    Ok(())
}

/// The loads in [0, `n`] at which `holds` is true, as an interval (a
/// monotonic measure against a threshold holds on a prefix or a suffix),
/// its open end found by bisection.
fn interval(holds: &dyn Fn(f64) -> Result<bool, ()>, n: f64) -> Result<Option<(f64, f64)>, ()> {
    let (at_zero, at_full) = (holds(0.0)?, holds(n)?);
    match (at_zero, at_full) {
        (false, false) => Ok(None),
        (true, true) => Ok(Some((0.0, n))),
        _ => {
            // The edge lies between a load where it holds and one where not.
            let (mut yes, mut no) = if at_zero { (0.0, n) } else { (n, 0.0) };
            for _ in 0..STEPS {
                let mid = (yes + no) / 2.0;
                if holds(mid)? {
                    yes = mid;
                } else {
                    no = mid;
                }
            }
            let edge = (yes + no) / 2.0;
            Ok(Some(if at_zero { (0.0, edge) } else { (edge, n) }))
        }
    }
}
