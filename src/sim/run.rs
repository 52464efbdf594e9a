//! A headless simulated run: the engine and an autonomous controller act on
//! the simulated guest exactly as `plugtop run` acts on a real one, and the
//! model's bookkeeping becomes a [`SimReport`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::report::SimReport;
use super::{Guest, Scenario, SharedGuest, SimActuator, SimSource, facts};
use crate::control::controller::{Action, Event, Mode};
use crate::control::flap::{FlapConfig, FlapDetector, Moves};
use crate::control::log_entries;
use crate::control::session::{Session, Step};
use crate::control::watch::Finding;
use crate::kernel::Source;
use crate::kernel::recording::{Header, RecordingWriter};

/// How to run a scenario.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// Overrides the scenario's duration, seconds.
    pub duration: Option<f64>,
    /// Overrides UPDATE, seconds.
    pub interval: Option<f64>,
    /// Zone-suffixed /proc/vmstat names, for the seed paper's rule files.
    pub old_kernel: bool,
    /// Records every reading in the recording format.
    pub record: Option<PathBuf>,
    /// Keep every interval's point and log line in the outcome (tests,
    /// graphs). Off, memory stays flat however long the run.
    pub keep_timeline: bool,
    /// When to call it flapping.
    pub flap: FlapConfig,
}

/// The state after one interval, for graphs and tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Simulated seconds.
    pub t: f64,
    pub online: u32,
    pub pool: i64,
    /// CPUs' worth of demand at that moment.
    pub demand: f64,
    /// The reading decided on, and what the decision did.
    pub reading: usize,
    pub moves: Moves,
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct SimOutcome {
    pub report: SimReport,
    pub timeline: Vec<Point>,
    /// What the controller did, as `m:ss text` lines.
    pub log: Vec<String>,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Rules(#[from] crate::rules::LoadError),
    #[error("cannot record")]
    Record(#[source] std::io::Error),
}

/// `sim --compare`: `other` on the same scenario and seed, silently, at
/// once and unrecorded.
pub fn compared(
    scenario: &Scenario,
    other: &Path,
    options: &SimOptions,
) -> Result<SimOutcome, SimError> {
    let options = SimOptions {
        record: None,
        ..options.clone()
    };
    simulate(scenario, other, &options, &mut |_| {}, &mut |_| {})
}

/// A guest for `scenario`, with `duration` if given.
pub fn guest_for(scenario: &Scenario, options: &SimOptions) -> Guest {
    let mut scenario = scenario.clone();
    if let Some(d) = options.duration {
        scenario.duration = format!("{d}");
    }
    Guest::new(&scenario, options.old_kernel)
}

/// What the controller really did: changes per quantity, and their
/// reversals counted by the flap detector's rule.
#[derive(Debug, Default)]
struct Applied {
    cpu_changes: usize,
    pool_changes: usize,
    directions: FlapDetector,
}

impl Applied {
    fn note(&mut self, reading: usize, events: &[Event]) {
        for e in events {
            let Event::Applied { action, .. } = e else {
                continue;
            };
            let moves = match action {
                Action::PlugCpu => Moves { cpu: 1, pool: 0 },
                Action::UnplugCpu => Moves { cpu: -1, pool: 0 },
                Action::Pool { from, to } => Moves {
                    cpu: 0,
                    pool: (to - from).signum() as i8,
                },
            };
            self.cpu_changes += usize::from(moves.cpu != 0);
            self.pool_changes += usize::from(moves.pool != 0);
            self.directions.observe(reading, moves);
        }
    }
}

/// Runs `scenario` under the rule file `rules` until the scenario ends.
/// `wait` is called with each interval's length (a sleep at real speed,
/// nothing with `--fast`); `on_line` gets each action as it happens.
pub fn simulate(
    scenario: &Scenario,
    rules: &Path,
    options: &SimOptions,
    wait: &mut dyn FnMut(Duration),
    on_line: &mut dyn FnMut(&str),
) -> Result<SimOutcome, SimError> {
    let facts = facts(&guest_for(scenario, options));
    let (rules_set, file) = crate::rules::load_path(rules, &facts)?;
    simulate_loaded(scenario, Arc::new(rules_set), &file, options, wait, on_line)
}

/// As [`simulate`], with rules already loaded (the UI's what-if runs edited
/// rules closed-loop this way).
pub fn simulate_loaded(
    scenario: &Scenario,
    rules_set: Arc<crate::rules::RuleSet>,
    file: &crate::rules::SourceFile,
    options: &SimOptions,
    wait: &mut dyn FnMut(Duration),
    on_line: &mut dyn FnMut(&str),
) -> Result<SimOutcome, SimError> {
    let mut run = SimRun::start(scenario, rules_set, file, options)?;
    while run.step(on_line)? {
        wait(crate::pace::seconds(run.interval));
    }
    Ok(run.finish())
}

/// A simulated run taken one decided interval at a time, so a front end
/// (the training screen) can show the report as it grows and pace the run
/// itself; [`simulate_loaded`] is this run to the end.
pub struct SimRun {
    guest: SharedGuest,
    source: SimSource,
    actuator: SimActuator,
    session: Session,
    recorder: Option<RecordingWriter<std::fs::File>>,
    tally: RunningTotals,
    interval: f64,
    scenario: String,
    rules: String,
    ended: bool,
}

impl SimRun {
    /// A run of `scenario` under `rules_set` (loaded from `file`), before
    /// its first reading.
    pub fn start(
        scenario: &Scenario,
        rules_set: Arc<crate::rules::RuleSet>,
        file: &crate::rules::SourceFile,
        options: &SimOptions,
    ) -> Result<SimRun, SimError> {
        let guest = SharedGuest::new(guest_for(scenario, options));
        let rules = Path::new(file.name());
        let interval = options.interval.unwrap_or(rules_set.update_seconds());
        let mut source = SimSource::new(guest.clone(), interval);
        source.stop_at_end = true;
        let actuator = SimActuator::new(guest.clone());
        let session = Session::new(
            Arc::clone(&rules_set),
            file.clone(),
            Mode::Auto,
            options.flap,
        );
        let recorder = match &options.record {
            Some(path) => Some(
                RecordingWriter::create(path, &header(scenario, rules, interval))
                    .map_err(SimError::Record)?,
            ),
            None => None,
        };
        Ok(SimRun {
            guest,
            source,
            actuator,
            session,
            recorder,
            tally: RunningTotals {
                keep: options.keep_timeline,
                ..RunningTotals::default()
            },
            interval,
            scenario: scenario.name.clone(),
            rules: rules.display().to_string(),
            ended: false,
        })
    }

    /// Runs readings up to and including the next decided interval; `false`
    /// once the scenario (or cpuplugd, on a fatal error) has ended.
    /// `on_line` gets each action as it happens.
    pub fn step(&mut self, on_line: &mut dyn FnMut(&str)) -> Result<bool, SimError> {
        while !self.ended {
            let Some(Ok(sample)) = self.source.next_sample() else {
                self.ended = true;
                break;
            };
            if let Some(w) = self.recorder.as_mut() {
                w.append(&sample).map_err(SimError::Record)?;
            }
            let step = self.session.step(Arc::new(sample), &mut self.actuator);
            let t = super::report::clock(self.guest.borrow().t);
            for line in self.tally.note(&step, &self.session, self.interval) {
                let line = format!("{t} {line}");
                on_line(&line);
                if self.tally.keep {
                    self.tally.log.push(line);
                }
            }
            if let Some(f) = &step.fatal {
                self.tally.fatal = Some(f.message.clone());
                self.ended = true;
                break;
            }
            let Some(decision) = &step.decision else {
                continue;
            };
            self.tally.interval(&self.guest.borrow(), decision);
            return Ok(true);
        }
        Ok(false)
    }

    /// Seconds between readings.
    pub fn interval(&self) -> f64 {
        self.interval
    }

    /// Simulated seconds so far.
    pub fn seconds(&self) -> f64 {
        self.guest.borrow().t
    }

    /// Whether the run has ended.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The report of the run so far (the final one once it has ended).
    pub fn report(&self) -> SimReport {
        self.tally.report(
            &self.guest.borrow(),
            &self.scenario,
            &self.rules,
            &self.session,
        )
    }

    /// The finished run's report, timeline and log.
    pub fn finish(self) -> SimOutcome {
        let report = self.report();
        SimOutcome {
            report,
            timeline: self.tally.timeline,
            log: self.tally.log,
        }
    }
}

/// What a simulated run adds up as it goes.
#[derive(Debug, Default)]
struct RunningTotals {
    applied: Applied,
    timeline: Vec<Point>,
    log: Vec<String>,
    /// Sums over decided intervals: online CPUs, guest MiB, working set MiB.
    sums: (f64, f64, f64),
    /// The working set's MiB in swap, summed over decided intervals.
    swapped_sum: f64,
    /// The most CPUs online at an interval, and the most MiB in swap.
    peaks: (u32, f64),
    intervals: usize,
    fatal: Option<String>,
    flapped: bool,
    period: Option<f64>,
    /// Keep every interval's point and log line.
    keep: bool,
}

impl RunningTotals {
    /// Counts a step's actions; the lines to log, in order, as every
    /// front end says them ([`log_entries::step_lines`]).
    fn note(&mut self, step: &Step, session: &Session, interval: f64) -> Vec<String> {
        self.applied.note(0, &step.limits);
        if let Some(Finding::FlapStarted(f)) = step
            .findings
            .iter()
            .find(|f| matches!(f, Finding::FlapStarted(_)))
        {
            self.flapped = true;
            self.period.get_or_insert(f.period * interval);
        }
        let reading = step.decision.as_ref().map_or(0, |d| d.reading);
        self.applied.note(reading, &step.events);
        log_entries::step_lines(step, session, log_entries::Detail::Changes, false)
            .into_iter()
            .map(|l| l.entry.message)
            .collect()
    }

    /// One decided interval of the guest.
    fn interval(&mut self, g: &Guest, decision: &crate::engine::Decision) {
        self.intervals += 1;
        if self.keep {
            self.timeline.push(Point {
                t: g.t,
                online: g.online_count(),
                pool: g.pool(),
                demand: g.demand(),
                reading: decision.reading,
                moves: Moves::of(decision),
            });
        }
        self.sums.0 += f64::from(g.online_count());
        self.sums.1 += g.guest_mib();
        self.sums.2 += g.working_set_mib();
        self.swapped_sum += g.swapped_mib();
        self.peaks.0 = self.peaks.0.max(g.online_count());
        self.peaks.1 = self.peaks.1.max(g.swapped_mib());
    }

    fn report(&self, g: &Guest, scenario: &str, rules: &str, session: &Session) -> SimReport {
        let n = self.intervals.max(1) as f64;
        let stats = g.stats;
        let (avg_guest, avg_ws) = (self.sums.1 / n, self.sums.2 / n);
        let ratio = |a: f64, b: f64, none: f64| if b > 0.0 { a / b } else { none };
        SimReport {
            scenario: scenario.to_string(),
            rules: rules.to_string(),
            intervals: self.intervals,
            seconds: stats.seconds,
            avg_online_cpus: self.sums.0 / n,
            time_weighted_online_cpus: ratio(stats.online_cpu_s, stats.seconds, 0.0),
            unmet_cpu_seconds: stats.unmet_cpu_s,
            avg_guest_mib: avg_guest,
            avg_working_set_mib: avg_ws,
            guest_to_working_set: ratio(avg_guest, avg_ws, 0.0),
            direct_scan_stalls: stats.direct_stalls,
            avg_swapped_mib: self.swapped_sum / n,
            peak_online_cpus: self.peaks.0,
            peak_swapped_mib: self.peaks.1,
            swapped_in_mib: stats.swap_in_pages / 256.0,
            swapped_out_mib: stats.swap_out_pages / 256.0,
            memory_stall_seconds: stats.stall_s,
            throughput_ratio: ratio(stats.achieved, stats.ideal, 1.0),
            cpu_changes: self.applied.cpu_changes,
            pool_changes: self.applied.pool_changes,
            reversals: self.applied.directions.total_reversals(),
            flapping: self.flapped,
            flap_period_s: self.period,
            feedback_loops: session
                .watch()
                .loops
                .iter()
                .map(|l| l.to_string())
                .collect(),
            fatal: self.fatal.clone(),
        }
    }
}

/// How a simulated recording's CPU model names the rules it ran under:
/// `plugtop simulator (RULES)`.
const SIM_MODEL: (&str, &str) = ("plugtop simulator (", ")");

/// The rule file a simulated recording was made under, as its header's
/// CPU model names it; `None` for any other recording.
pub fn recorded_rules(header: &Header) -> Option<&str> {
    header
        .cpu_model
        .strip_prefix(SIM_MODEL.0)?
        .strip_suffix(SIM_MODEL.1)
        .filter(|r| !r.is_empty())
}

fn header(scenario: &Scenario, rules: &Path, interval: f64) -> Header {
    Header {
        host: format!("sim-{}", scenario.name),
        kernel: "simulated".into(),
        cpu_model: format!("{}{}{}", SIM_MODEL.0, rules.display(), SIM_MODEL.1),
        root: "sim".into(),
        page_size: 4096,
        present_cpus: scenario.cpus,
        interval_us: (interval * 1e6) as u64,
        started: crate::kernel::Stamp {
            micros: super::model::EPOCH * 1_000_000,
        },
        imported: None,
    }
}
