//! The work behind a recording's intervals: how many tasks were runnable
//! and how much CPU they wanted, from what a guest shows (busy ticks, the
//! runnable count and the 1-minute load average of /proc/loadavg).
//!
//! Two things a replay must get right:
//!
//! * **the runnable tasks**, because rules that read `loadavg` decide on
//!   them, and a task that wants 0.85 of a CPU counts as a whole one there
//!   (3.3 tasks at 0.85 are a load of 3.3, not 2.8). The load average is
//!   the kernel's exponential average of the runnable and waiting tasks,
//!   updated every 5 s; over a stretch in which the runnable count read in
//!   each interval stays the same, the two load averages at its ends give
//!   the tasks to a few hundredths (with the tasks in iowait, known from
//!   the ticks, taken out). A stretch too short for that (a pulse of a few
//!   seconds) takes the count read at its end: pulses stay pulses.
//! * **the demand** when every online CPU was busy (censored): the busy
//!   ticks only show what ran. The runnable tasks times the CPU one task
//!   used where it had room stand in for it: in the nearest interval,
//!   before or after, with a CPU to spare and as many tasks (the same work
//!   seen uncensored); else the work-weighted share of the intervals with
//!   room that did at least as much work; else a whole CPU a task (a task
//!   that waits wants to run).
//!
//! Nothing here reads files: the caller turns readings into [`Observed`].

use std::collections::HashMap;

/// How often the kernel folds the runnable tasks into the load averages, s.
const LOAD_FREQ: f64 = 5.0;
/// The 1-minute load average's time constant, s.
const LOAD_WINDOW: f64 = 60.0;
/// A stretch must move the load average at least this far towards its
/// tasks (1 − e^(−t/60), about four updates) to be read from it: the
/// averages are printed to 0.01, so shorter stretches would be noise.
const MIN_WEIGHT: f64 = 0.25;
/// The most runnable tasks a phase may have (the scenario's limit).
pub(super) const MAX_TASKS: f64 = 100_000.0;

/// One recorded interval as the readings at its two ends show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Observed {
    /// Its start and end, seconds since the recording's first reading.
    pub start: f64,
    pub end: f64,
    /// CPUs busy on average (work and steal).
    pub busy: f64,
    /// CPUs in iowait on average.
    pub iowait: f64,
    /// Every online CPU was busy: `busy` is a floor of the demand.
    pub censored: bool,
    /// The runnable count of /proc/loadavg at its end (NaN: not read).
    pub runnable: f64,
    /// The 1-minute load average at its start and at its end (NaN: not read).
    pub load_before: f64,
    pub load_after: f64,
}

/// The work an interval is replayed as.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RecoveredWork {
    /// Runnable tasks (not counting those in iowait): what the load
    /// average of the replay sees. Never less than `demand`.
    pub tasks: f64,
    /// CPUs wanted.
    pub demand: f64,
}

/// The work of each interval, and how many censored intervals the
/// estimate raised above what ran.
pub(super) fn recover(observed: &[Observed]) -> (Vec<RecoveredWork>, usize) {
    let tasks = runnable_tasks(observed);
    let mut demand: Vec<f64> = observed.iter().map(|o| o.busy.max(0.0)).collect();
    let raised = raise_censored(observed, &tasks, &mut demand);
    let work = tasks
        .iter()
        .zip(demand)
        .map(|(t, d)| {
            let d = d.clamp(0.0, MAX_TASKS);
            RecoveredWork {
                tasks: t.unwrap_or(d).clamp(d, MAX_TASKS),
                demand: d,
            }
        })
        .collect();
    (work, raised)
}

/// A reading of /proc/loadavg that can be used: finite, not negative, not
/// absurd.
fn usable(v: f64) -> bool {
    (0.0..=1e9).contains(&v)
}

/// How many load-average updates fall in (`a`, `b`] when they happen at
/// `phase` + 5 s × n.
fn updates(a: f64, b: f64, phase: f64) -> f64 {
    (((b - phase) / LOAD_FREQ).floor() - ((a - phase) / LOAD_FREQ).floor()).max(0.0)
}

/// When in the 5-s cycle the kernel updated the load averages, from the
/// intervals in which the printed average moved (an update lies in each),
/// to a quarter of a second; 0 when nothing moved or the readings are 5 s
/// or more apart (every interval then holds one or more).
fn update_phase(observed: &[Observed]) -> f64 {
    const BINS: usize = 20;
    let mut votes = [0usize; BINS];
    for o in observed {
        let moved = usable(o.load_before) && usable(o.load_after) && o.load_before != o.load_after;
        if moved && o.end - o.start < LOAD_FREQ {
            for (b, v) in votes.iter_mut().enumerate() {
                let phase = b as f64 * LOAD_FREQ / BINS as f64;
                if updates(o.start, o.end, phase) > 0.0 {
                    *v += 1;
                }
            }
        }
    }
    let best = votes
        .iter()
        .enumerate()
        .max_by_key(|(b, v)| (**v, std::cmp::Reverse(*b)))
        .map_or(0, |(b, _)| b);
    best as f64 * LOAD_FREQ / BINS as f64
}

/// The runnable tasks of each interval, not counting those in iowait
/// (`None`: /proc/loadavg was not read). See the module's comment.
fn runnable_tasks(observed: &[Observed]) -> Vec<Option<f64>> {
    let phase = update_phase(observed);
    let decay = (-LOAD_FREQ / LOAD_WINDOW).exp();
    let mut tasks = vec![None; observed.len()];
    let mut i = 0;
    while i < observed.len() {
        let r = observed[i].runnable;
        if !usable(r) {
            i += 1;
            continue;
        }
        let end = i + observed[i..].iter().take_while(|o| o.runnable == r).count();
        let run = &observed[i..end];
        // The load average at the end of the stretch is the one at its
        // start decayed by every update, plus (tasks + iowait) folded in
        // at each: L_b = L_a·E + tasks·(1 − E) + Σ iowait_j·(1 − d)·(decay after j).
        let (mut kept, mut iowait) = (1.0f64, 0.0f64);
        for o in run {
            let d = decay.powf(updates(o.start, o.end, phase));
            kept *= d;
            iowait = iowait * d + o.iowait.max(0.0) * (1.0 - d);
        }
        let (before, after) = (run[0].load_before, run[run.len() - 1].load_after);
        let fitted = (usable(before) && usable(after) && 1.0 - kept >= MIN_WEIGHT)
            .then(|| (after - before * kept - iowait) / (1.0 - kept));
        for (t, o) in tasks[i..end].iter_mut().zip(run) {
            let guess = fitted.unwrap_or(r - o.iowait.max(0.0));
            *t = Some(guess.clamp(0.0, MAX_TASKS));
        }
        i = end;
    }
    tasks
}

/// The CPU one task used in an uncensored interval where work ran.
fn share(o: &Observed, tasks: Option<f64>) -> Option<(f64, f64)> {
    let t = tasks?;
    (!o.censored && t >= 0.5 && o.busy > 0.0).then(|| (t, (o.busy / t).clamp(0.05, 1.0)))
}

/// Two task counts that are the same work (the fit's noise apart).
fn same_work(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.1f64.max(0.03 * a)
}

/// Raises each censored interval's demand to its runnable tasks times the
/// CPU a task used where it had room (see the module's comment); returns
/// how many it raised.
fn raise_censored(observed: &[Observed], tasks: &[Option<f64>], demand: &mut [f64]) -> usize {
    let n = observed.len();
    // The nearest uncensored interval of the same work, each way.
    let mut nearest: Vec<Option<(usize, f64)>> = vec![None; n];
    let key = |t: f64| (t * 10.0).round() as i64;
    for forward in [true, false] {
        let mut seen: HashMap<i64, (usize, f64, f64)> = HashMap::new();
        for k in 0..n {
            let i = if forward { k } else { n - 1 - k };
            if let Some((t, s)) = share(&observed[i], tasks[i]) {
                seen.insert(key(t), (i, t, s));
                continue;
            }
            let (true, Some(t)) = (observed[i].censored, tasks[i]) else {
                continue;
            };
            let found = (key(t) - 1..=key(t) + 1)
                .filter_map(|k| seen.get(&k))
                .filter(|(_, u, _)| same_work(t, *u))
                .map(|&(j, _, s)| (i.abs_diff(j), s))
                .min_by_key(|(d, _)| *d);
            nearest[i] = match (nearest[i], found) {
                (Some(a), Some(b)) if b.0 < a.0 => Some(b),
                (None, b) => b,
                (a, _) => a,
            };
        }
    }
    // The work-weighted share of the uncensored intervals that did at
    // least some work: sorted busiest first, with running sums.
    let mut roomy: Vec<(f64, f64)> = (0..n)
        .filter_map(|i| share(&observed[i], tasks[i]).map(|(t, _)| (observed[i].busy, t)))
        .collect();
    roomy.sort_by(|a, b| b.0.total_cmp(&a.0));
    let sums: Vec<(f64, f64)> = roomy
        .iter()
        .scan((0.0, 0.0), |acc, (b, t)| {
            *acc = (acc.0 + b, acc.1 + t);
            Some(*acc)
        })
        .collect();
    let at_least = |busy: f64| {
        let count = roomy.partition_point(|(b, _)| *b >= busy);
        let (b, t) = *sums.get(count.checked_sub(1)?)?;
        (t > 0.0).then(|| (b / t).clamp(0.05, 1.0))
    };
    let mut raised = 0;
    for i in 0..n {
        let (true, Some(t)) = (observed[i].censored, tasks[i]) else {
            continue;
        };
        let s = nearest[i]
            .map(|(_, s)| s)
            .or_else(|| at_least(observed[i].busy))
            .unwrap_or(1.0);
        if t * s > demand[i] {
            demand[i] = t * s;
            raised += 1;
        }
    }
    raised
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An interval of one second ending at `end`.
    fn at(end: f64, busy: f64, runnable: f64, censored: bool) -> Observed {
        Observed {
            start: end - 1.0,
            end,
            busy,
            iowait: 0.0,
            censored,
            runnable,
            load_before: f64::NAN,
            load_after: f64::NAN,
        }
    }

    /// The load averages a kernel would print for `tasks` runnable in
    /// each second (updated at every multiple of 5 s), filled into `o`.
    fn with_load(o: &mut [Observed], tasks: impl Fn(usize) -> f64, from: f64) {
        let d = (-LOAD_FREQ / LOAD_WINDOW).exp();
        let mut l = from;
        for (i, x) in o.iter_mut().enumerate() {
            x.load_before = (l * 100.0).round() / 100.0;
            if updates(x.start, x.end, 0.0) > 0.0 {
                l = l * d + tasks(i) * (1.0 - d);
            }
            x.load_after = (l * 100.0).round() / 100.0;
        }
    }

    fn demands(w: &[RecoveredWork]) -> Vec<f64> {
        w.iter()
            .map(|w| (w.demand * 100.0).round() / 100.0)
            .collect()
    }

    #[test]
    fn fractional_tasks_come_from_the_load_average_not_the_rounded_up_count() {
        // 3.3 tasks at 0.85 of a CPU each on 4 CPUs: the count reads 4.
        let mut o: Vec<Observed> = (1..=120).map(|t| at(t as f64, 2.8, 4.0, false)).collect();
        with_load(&mut o, |_| 3.3, 0.0);
        let (w, raised) = recover(&o);
        assert_eq!(raised, 0);
        for x in &w {
            assert!((x.tasks - 3.3).abs() < 0.05, "{x:?}");
            assert_eq!(x.demand, 2.8);
        }
    }

    #[test]
    fn the_tasks_in_iowait_are_not_work() {
        let mut o: Vec<Observed> = (1..=60)
            .map(|t| Observed {
                iowait: 0.5,
                ..at(t as f64, 1.0, 2.0, false)
            })
            .collect();
        with_load(&mut o, |_| 1.5, 0.0);
        let (w, _) = recover(&o);
        assert!(w.iter().all(|x| (x.tasks - 1.0).abs() < 0.05), "{w:?}");
    }

    #[test]
    fn a_saturated_stretch_is_priced_by_the_same_work_seen_with_room() {
        // 3.3 tasks at 0.85 first on 2 CPUs (censored), then on 3.
        let mut o: Vec<Observed> = (1..=100)
            .map(|t| {
                let roomy = t > 50;
                at(t as f64, if roomy { 2.8 } else { 2.0 }, 4.0, !roomy)
            })
            .collect();
        with_load(&mut o, |_| 3.3, 0.0);
        let (w, raised) = recover(&o);
        assert_eq!(raised, 50);
        assert!(w.iter().all(|x| (x.demand - 2.8).abs() < 0.05), "{w:?}");
    }

    #[test]
    fn pulses_stay_pulses() {
        // 3 tasks wanting a whole CPU each, 3 s on and 3 s off, on 1 CPU;
        // nothing ever ran with room, the quiet start had light tasks.
        let mut o: Vec<Observed> = (1..=30).map(|t| at(t as f64, 0.15, 1.0, false)).collect();
        for t in 31..=90 {
            let on = (t - 31) % 6 < 3;
            o.push(if on {
                at(t as f64, 1.0, 3.0, true)
            } else {
                at(t as f64, 0.0, 1.0, false)
            });
        }
        let pulse = |i: usize| {
            if i >= 30 && (i - 30) % 6 < 3 {
                3.0
            } else {
                0.3
            }
        };
        with_load(&mut o, pulse, 0.3);
        let (w, _) = recover(&o);
        let d = demands(&w[30..42]);
        assert_eq!(
            d,
            [3.0, 3.0, 3.0, 0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 0.0, 0.0, 0.0]
        );
    }

    #[test]
    fn censored_work_without_a_twin_takes_the_share_of_work_as_large() {
        // Light work at 0.3 a task, heavy work at 0.8 a task with room, and
        // 2 tasks censored on one CPU: priced at 0.8, not at the light work's 0.3.
        let mut o = vec![at(1.0, 0.3, 1.0, false), at(2.0, 1.0, 2.0, true)];
        o.extend((3..6).map(|t| at(t as f64, 3.2, 4.0, false)));
        let (w, raised) = recover(&o);
        assert_eq!(raised, 1);
        assert_eq!(demands(&w)[1], 1.6);
        // Nothing with room at all: a task takes a whole CPU.
        let (w, _) = recover(&[at(1.0, 1.0, 3.0, true)]);
        assert_eq!(w[0].demand, 3.0);
    }

    #[test]
    fn unreadable_or_absurd_load_readings_leave_the_busy_ticks() {
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1e300] {
            let mut o: Vec<Observed> = (1..=20).map(|t| at(t as f64, 1.0, bad, true)).collect();
            for x in &mut o {
                (x.load_before, x.load_after) = (bad, bad);
            }
            let (w, raised) = recover(&o);
            assert_eq!(raised, 0, "{bad}");
            assert!(
                w.iter().all(|x| x.demand == 1.0 && x.tasks == 1.0),
                "{bad}: {w:?}"
            );
        }
        // A huge but readable count is held to the scenario's limit.
        let (w, _) = recover(&[at(1.0, 1.0, 1e8, true)]);
        assert_eq!((w[0].tasks, w[0].demand), (MAX_TASKS, MAX_TASKS));
    }

    #[test]
    fn the_update_phase_is_found_from_the_moving_averages() {
        let mut o: Vec<Observed> = (1..=60)
            .map(|t| at(t as f64 + 0.5, 1.0, 2.0, false))
            .collect();
        let d = (-LOAD_FREQ / LOAD_WINDOW).exp();
        let mut l = 0.0;
        for x in &mut o {
            x.load_before = l;
            // Updates at 5 s × n: in the intervals (4.5, 5.5], (9.5, 10.5], ...
            if updates(x.start, x.end, 0.0) > 0.0 {
                l = l * d + 2.0 * (1.0 - d);
            }
            x.load_after = l;
        }
        let phase = update_phase(&o);
        assert!(
            o.iter()
                .all(|x| updates(x.start, x.end, phase) == updates(x.start, x.end, 0.0)),
            "{phase}"
        );
        assert_eq!(update_phase(&[]), 0.0);
    }
}
