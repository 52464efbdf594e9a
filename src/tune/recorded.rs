//! A recording of the user's own guest turned into a workload the
//! simulator plays closed loop: one phase per recorded interval, its CPU
//! demand from the busy ticks and its memory from meminfo, so a guest's
//! real day can be tuned against. The approximations are in
//! `docs/tune.md`:
//!
//! * demand = the busy share (user, nice, system, irq, softirq, steal) of
//!   the interval × the CPUs online; when every online CPU was busy the
//!   real demand may have been higher (it is censored), and the runnable
//!   tasks stand in for it ([`demand`] says how);
//! * the runnable tasks (what `loadavg` rules see) from the load average
//!   and the runnable count of /proc/loadavg, so a phase is that many
//!   threads each wanting demand ÷ tasks of a CPU;
//! * the working set = anonymous memory (MemTotal − MemFree − Cached − the
//!   CMM pool) plus swap in use; shared memory = Shmem; page-ins from
//!   vmstat's pgpgin;
//! * steal over the whole recording becomes the scenario's contention.

use std::path::Path;

mod demand;

use demand::Observed;

use crate::kernel::deltas::tick_delta;
use crate::kernel::recording::RecordingSource;
use crate::kernel::{Sample, Source};
use crate::sim::Scenario;
use crate::sim::scenario::Phase;
use crate::tune::score::{Objective, Score};

/// KiB in one CMM page.
const PAGE_KIB: f64 = 4.0;

/// How much of the recording had censored demand.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Censoring {
    /// Intervals in all.
    pub intervals: usize,
    /// Intervals with every online CPU busy.
    pub censored: usize,
    /// Of those, how many the runnable tasks raised.
    pub raised: usize,
}

/// Why a recording cannot be a workload.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error(transparent)]
    Recording(#[from] crate::kernel::recording::RecordingError),
    #[error("the recording holds no reading")]
    NoReading,
    #[error("the recording holds fewer than two readings")]
    OneReading,
    /// The workload read from it makes no scenario (the scenario's checks
    /// say why).
    #[error(transparent)]
    NoScenario(crate::sim::scenario::ScenarioError),
}

/// One recorded interval's phase.
struct IntervalPhase {
    /// What the readings at its ends show of its CPU work.
    observed: Observed,
    /// CPUs wanted (first what ran, then as [`demand::recover`] finds).
    demand: f64,
    /// Runnable tasks, not counting those in iowait.
    tasks: f64,
    system: f64,
    nice: f64,
    iowait: f64,
    working_set_mib: f64,
    shared_mib: f64,
    io_mib_per_s: f64,
}

/// A recording as a workload.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub scenario: Scenario,
    /// How much of its demand was censored.
    pub censoring: Censoring,
    /// Its /proc/vmstat had the old kernels' zone-suffixed names.
    pub old_kernel: bool,
}

/// The recording at `path` as a scenario (named after the file), read once.
pub fn scenario(path: &Path) -> Result<Recorded, WorkloadError> {
    let mut source = RecordingSource::open(path)?;
    let old_kernel = source
        .facts()
        .vmstat_names
        .unwrap_or_default()
        .iter()
        .any(|n| n.ends_with("_dma") || n.ends_with("_normal"));
    let mut previous: Option<Sample> = None;
    let mut phases = Vec::new();
    let mut tally = RecordingTotals::default();
    let mut first = None;
    let mut cpus = 0u32;
    let mut memory_kib = 0.0f64;
    while let Some(sample) = source.next_sample() {
        let Ok(s) = sample else { continue };
        cpus = cpus.max(u32::try_from(s.present.count).unwrap_or(0));
        memory_kib = memory_kib.max(s.meminfo.get("MemTotal").unwrap_or(0.0));
        let t0 = *first.get_or_insert((s.stamp.seconds(), s.online.count));
        if let Some(p) = &previous {
            phases.extend(tally.phase(p, &s, t0.0));
        }
        previous = Some(s);
    }
    let (Some((t0, online)), Some(last)) = (first, previous) else {
        return Err(WorkloadError::NoReading);
    };
    if phases.is_empty() {
        return Err(WorkloadError::OneReading);
    }
    let observed: Vec<Observed> = phases.iter().map(|p| p.observed).collect();
    let (work, raised) = demand::recover(&observed);
    for (p, w) in phases.iter_mut().zip(work) {
        (p.demand, p.tasks) = (w.demand, w.tasks);
    }
    tally.censoring.raised = raised;
    let duration = last.stamp.seconds() - t0;
    let contention = tally.steal / (tally.work + tally.steal).max(1.0);
    let name = path
        .file_stem()
        .map_or("recording".into(), |n| n.to_string_lossy().into_owned());
    let online = u32::try_from(online).unwrap_or(1);
    let scenario = Scenario::from_parts(
        &name,
        cpus.max(1),
        online.clamp(1, cpus.max(1)),
        (memory_kib / 1024.0).clamp(256.0, 16.0 * 1024.0 * 1024.0),
        contention.clamp(0.0, 0.95),
        format!("{:.3}", duration.max(1.0)),
        false,
        merged(&phases),
    )
    .map_err(WorkloadError::NoScenario)?;
    Ok(Recorded {
        scenario,
        censoring: tally.censoring,
        old_kernel,
    })
}

/// What the readings add up to on the way through a recording.
#[derive(Default)]
struct RecordingTotals {
    censoring: Censoring,
    /// Ticks of work and of steal over the whole recording.
    work: f64,
    steal: f64,
}

impl RecordingTotals {
    /// The phase for the interval from reading `p` to reading `s`
    /// (`t0`: the recording's first reading), or none when the tick
    /// counters went back.
    fn phase(&mut self, p: &Sample, s: &Sample, t0: f64) -> Option<IntervalPhase> {
        let d = tick_delta(&s.ticks, &p.ticks)?;
        let total = d.total().max(1) as f64;
        // The CPUs online during the interval: the reading before it may
        // have plugged or unplugged one right after it was taken.
        let online = f64::from(s.online.count.max(1));
        let work = (d.user + d.nice + d.system + d.irq + d.softirq) as f64;
        let busy = (work + d.steal as f64) / total * online;
        self.work += work;
        self.steal += d.steal as f64;
        self.censoring.intervals += 1;
        let censored = ((d.idle + d.iowait) as f64 / total) < 0.02;
        if censored {
            self.censoring.censored += 1;
        }
        let mem = |name: &str| s.meminfo.get(name).unwrap_or(0.0);
        let pool_kib = s.cmm_pages.unwrap_or(0) as f64 * PAGE_KIB;
        let anon = (mem("MemTotal") - mem("MemFree") - mem("Cached") - pool_kib).max(0.0);
        let swapped = (mem("SwapTotal") - mem("SwapFree")).max(0.0);
        let seconds = (s.stamp.seconds() - p.stamp.seconds()).max(1e-3);
        let pgpgin = s.vmstat.get("pgpgin").unwrap_or(0.0) - p.vmstat.get("pgpgin").unwrap_or(0.0);
        let start = p.stamp.seconds() - t0;
        Some(IntervalPhase {
            observed: Observed {
                start,
                end: start + seconds,
                busy,
                iowait: d.iowait as f64 / total * online,
                censored,
                runnable: s.runnable,
                load_before: p.loadavg,
                load_after: s.loadavg,
            },
            demand: busy,
            tasks: busy,
            system: d.system as f64 / work.max(1.0),
            nice: d.nice as f64 / work.max(1.0),
            iowait: d.iowait as f64 / (d.idle + d.iowait).max(1) as f64,
            working_set_mib: (anon + swapped) / 1024.0,
            shared_mib: mem("Shmem") / 1024.0,
            io_mib_per_s: (pgpgin / 1024.0 / seconds).max(0.0),
        })
    }
}

/// Two intervals the model could not tell apart.
fn same(a: &IntervalPhase, b: &IntervalPhase) -> bool {
    (a.demand - b.demand).abs() < 0.005
        && (a.tasks - b.tasks).abs() < 0.005
        && (a.system - b.system).abs() < 0.005
        && (a.nice - b.nice).abs() < 0.005
        && (a.iowait - b.iowait).abs() < 0.005
        && (a.working_set_mib - b.working_set_mib).abs() < 0.5
        && (a.shared_mib - b.shared_mib).abs() < 0.5
        && (a.io_mib_per_s - b.io_mib_per_s).abs() < 0.01
}

/// The phases: starts that grow (a clock step back is merged into the
/// phase before), and a quiet stretch as one phase (the model holds a
/// phase until the next), so a long recording stays small.
fn merged(phases: &[IntervalPhase]) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::new();
    let mut last: Option<&IntervalPhase> = None;
    for p in phases {
        if last.is_some_and(|w| p.observed.start <= w.observed.start || same(w, p)) {
            continue;
        }
        last = Some(p);
        let system = p.system.clamp(0.0, 1.0);
        out.push(Phase {
            name: String::new(),
            start: format!("{:.3}", p.observed.start),
            threads: p.tasks,
            cpu_per_thread: if p.tasks > 0.0 {
                (p.demand / p.tasks).clamp(0.0, 1.0)
            } else {
                1.0
            },
            system_share: system,
            nice_share: p.nice.clamp(0.0, 1.0 - system),
            io_mib_per_s: p.io_mib_per_s,
            iowait_share: p.iowait.clamp(0.0, 1.0),
            working_set_mib: p.working_set_mib,
            shared_mib: p.shared_mib,
            pulse_period_s: 0.0,
        });
    }
    out
}

/// A recorded workload cut in two at half its duration: the first half
/// to tune on, the second to check the recommendation on (what it was not
/// tuned on).
pub fn halves(s: &Scenario) -> Result<(Scenario, Scenario), WorkloadError> {
    let total = crate::sim::scenario::seconds(&s.duration).unwrap_or(0.0);
    let half = total / 2.0;
    let start = |p: &Phase| crate::sim::scenario::seconds(&p.start).unwrap_or(0.0);
    let first: Vec<Phase> = s
        .phases
        .iter()
        .filter(|p| start(p) < half)
        .cloned()
        .collect();
    // The second half starts in the phase that was running at its start.
    let mut second: Vec<Phase> = Vec::new();
    if let Some(running) = first.last() {
        second.push(Phase {
            start: "0".into(),
            ..running.clone()
        });
    }
    for p in s.phases.iter().filter(|p| start(p) >= half) {
        let at = start(p) - half;
        if at <= 0.0 {
            second.clear();
        }
        second.push(Phase {
            start: format!("{at:.3}"),
            ..p.clone()
        });
    }
    let make = |suffix: &str, phases: Vec<Phase>| {
        Scenario::from_parts(
            &format!("{} ({suffix})", s.name),
            s.cpus,
            s.online,
            s.memory_mib,
            s.contention,
            format!("{half:.3}"),
            s.jitter,
            phases,
        )
        .map_err(WorkloadError::NoScenario)
    };
    Ok((make("first half", first)?, make("second half", second)?))
}

/// The workload label of a recording's held-out half in the report's
/// held-out rows.
pub const SECOND_HALF: &str = "2nd half";

/// A sentence for the report when the recommendation shows no gain on the
/// recording's second half (what it was not tuned on) over the file it is
/// measured against there (the reference, else the start): a gain on the
/// first half alone may be the first half's, not the guest's. `None` when
/// it gains, or when nothing was held out. `rows` are (file, workload,
/// score), the files labelled "start", "reference" and "recommended".
pub fn second_half_verdict(
    rows: &[(String, String, Score)],
    objective: Objective,
) -> Option<String> {
    let find = |file: &str| {
        rows.iter()
            .find(|(f, w, _)| f == file && w == SECOND_HALF)
            .map(|(_, _, s)| s)
    };
    let recommended = find("recommended")?;
    let (label, base) = find("reference")
        .map(|s| ("the reference", s))
        .or_else(|| find("start").map(|s| ("the start", s)))?;
    if recommended.usable() && recommended.improves_on(base, objective) {
        return None;
    }
    let what = match objective {
        Objective::Cpu => "unmet CPU-s",
        Objective::Steady => "changes",
        Objective::Memory => "guest / working set",
    };
    let (x, y) = (
        recommended.preference(objective).0,
        base.preference(objective).0,
    );
    Some(format!(
        "no gain on the recording's second half, which it was not tuned on: the recommendation \
         does no better there than {label} ({what} {x:.2} against {y:.2}), so its gain on the \
         first half may not hold for the rest of the recording"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kernel::recording::{Header, RecordingWriter};
    use crate::kernel::{CpuTicks, Stamp};

    /// A recording of `n` one-second readings of a 2-CPU guest, each made
    /// by `reading(i)`: (busy share of the CPUs, loadavg, runnable count).
    fn recording(
        dir: &tempfile::TempDir,
        n: usize,
        reading: impl Fn(usize) -> (f64, f64, f64),
    ) -> std::path::PathBuf {
        let path = dir.path().join("guest.rec");
        let header = Header {
            host: "h".into(),
            kernel: "6.1".into(),
            cpu_model: "z".into(),
            root: "/".into(),
            page_size: 4096,
            present_cpus: 2,
            interval_us: 1_000_000,
            started: Stamp { micros: 0 },
            imported: None,
        };
        let mut w = RecordingWriter::create(&path, &header).unwrap_or_else(|e| panic!("{e}"));
        let (mut user, mut idle) = (0u64, 0u64);
        for i in 0..n {
            let (busy, loadavg, runnable) = reading(i);
            if i > 0 {
                let used = (200.0 * busy.clamp(0.0, 1.0)).round() as u64;
                user += used;
                idle += 200 - used;
            }
            let ticks = CpuTicks::from_columns([user, 0, 0, idle, 0, 0, 0, 0, 0, 0]);
            let stamp = Stamp {
                micros: 1_700_000_000_000_000 + i as i64 * 1_000_000,
            };
            let sample = Sample {
                loadavg,
                runnable,
                meminfo: crate::kernel::fields::FieldTable::from_pairs([
                    ("MemTotal", 2_000_000.0),
                    ("MemFree", 1_000_000.0),
                ]),
                ..Sample::bare(stamp, ticks, 2, 2)
            };
            w.append(&sample).unwrap_or_else(|e| panic!("{e}"));
        }
        path
    }

    fn demand_of(r: &Recorded) -> Vec<f64> {
        r.scenario
            .phases
            .iter()
            .map(|p| p.threads * p.cpu_per_thread)
            .collect()
    }

    #[test]
    fn a_recording_saturated_throughout_is_priced_by_its_runnable_tasks() {
        // Both CPUs busy all along with 5 tasks runnable: nothing ever ran
        // with room, so a task is taken to want a whole CPU.
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = (-5.0f64 / 60.0).exp();
        let load = |i: usize| 5.0 * (1.0 - d.powi((i / 5) as i32));
        let path = recording(&dir, 121, |i| (1.0, (load(i) * 100.0).round() / 100.0, 5.0));
        let r = scenario(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.censoring.intervals, 120);
        assert_eq!(r.censoring.censored, 120);
        assert_eq!(r.censoring.raised, 120);
        for (p, d) in r.scenario.phases.iter().zip(demand_of(&r)) {
            assert!((p.threads - 5.0).abs() < 0.05, "{p:?}");
            assert!((d - 5.0).abs() < 0.05, "{p:?}");
        }
    }

    #[test]
    fn too_few_readings_are_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let none = recording(&dir, 0, |_| (0.5, 1.0, 1.0));
        assert!(matches!(scenario(&none), Err(WorkloadError::NoReading)));
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let one = recording(&dir, 1, |_| (0.5, 1.0, 1.0));
        assert!(matches!(scenario(&one), Err(WorkloadError::OneReading)));
    }

    #[test]
    fn missing_or_absurd_load_readings_leave_what_ran() {
        for (loadavg, runnable) in [
            (f64::NAN, f64::NAN),
            (f64::NAN, 3.0),
            (f64::INFINITY, -1.0),
            (1e300, 1e300),
        ] {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let path = recording(&dir, 31, |i| {
                (if i < 15 { 1.0 } else { 0.5 }, loadavg, runnable)
            });
            let r = scenario(&path).unwrap_or_else(|e| panic!("{loadavg} {runnable}: {e}"));
            let demand = demand_of(&r);
            assert!(
                demand.iter().all(|d| d.is_finite() && *d >= 1.0 - 1e-9),
                "{loadavg} {runnable}: {demand:?}"
            );
            // Unreadable counts raise nothing; a readable huge one is held
            // to the scenario's limit.
            let most = demand.iter().copied().fold(0.0, f64::max);
            assert!(most <= demand::MAX_TASKS, "{most}");
            if runnable.is_nan() || runnable < 0.0 {
                assert_eq!(r.censoring.raised, 0, "{loadavg} {runnable}");
                assert!((most - 2.0).abs() < 1e-9, "{demand:?}");
            }
        }
    }

    fn score(unmet: f64) -> Score {
        Score {
            guest_to_working_set: 1.5,
            throughput_ratio: 0.9,
            ..crate::tune::score::example(unmet, 2.0)
        }
    }

    #[test]
    fn a_second_half_without_gain_is_said_in_words() {
        let rows = |start: f64, recommended: f64| {
            vec![
                ("start".to_string(), SECOND_HALF.to_string(), score(start)),
                (
                    "recommended".to_string(),
                    SECOND_HALF.to_string(),
                    score(recommended),
                ),
            ]
        };
        let said = second_half_verdict(&rows(50.0, 50.0), Objective::Cpu)
            .unwrap_or_else(|| panic!("no gain must be said"));
        assert!(
            said.contains("no gain on the recording's second half"),
            "{said}"
        );
        assert!(
            said.contains("than the start (unmet CPU-s 50.00 against 50.00)"),
            "{said}"
        );
        assert!(second_half_verdict(&rows(50.0, 60.0), Objective::Cpu).is_some());
        assert_eq!(second_half_verdict(&rows(50.0, 40.0), Objective::Cpu), None);
        // Against a reference, the reference is what it must beat.
        let mut with_reference = rows(50.0, 40.0);
        with_reference.push(("reference".into(), SECOND_HALF.into(), score(30.0)));
        let said = second_half_verdict(&with_reference, Objective::Cpu).unwrap_or_default();
        assert!(said.contains("than the reference"), "{said}");
        // Other seeds are not a second half: nothing to say.
        let seeds = vec![
            ("start".to_string(), "s2".to_string(), score(50.0)),
            ("recommended".to_string(), "s2".to_string(), score(50.0)),
        ];
        assert_eq!(second_half_verdict(&seeds, Objective::Cpu), None);
    }

    #[test]
    fn halves_split_at_half_the_duration_and_the_second_starts_in_the_running_phase() {
        let text = "name = \"x\"\ncpus = 4\nmemory_mib = 1024\nduration = \"100\"\n\
            [[phases]]\nstart = \"0\"\nthreads = 1\n\
            [[phases]]\nstart = \"30\"\nthreads = 2\n\
            [[phases]]\nstart = \"70\"\nthreads = 3\n";
        let s = Scenario::parse("x", text).unwrap_or_else(|e| panic!("{e}"));
        let (a, b) = halves(&s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.duration, "50.000");
        assert_eq!(b.duration, "50.000");
        let threads = |s: &Scenario| {
            s.phases
                .iter()
                .map(|p| (p.start.clone(), p.threads))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            threads(&a),
            [("0".to_string(), 1.0), ("30".to_string(), 2.0)]
        );
        assert_eq!(
            threads(&b),
            [("0".to_string(), 2.0), ("20.000".to_string(), 3.0)]
        );
    }
}
