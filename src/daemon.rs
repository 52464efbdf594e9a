//! The headless runner: `plugtop run`, a drop-in for `cpuplugd`. It starts
//! and stops like cpuplugd (limits applied at start, start state restored on
//! every way out), but journals the start state before the first write so a
//! crash can be undone, and refuses to share the guest with another
//! controller.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::control::actuator::{Actuator, RootActuator};
use crate::control::controller::{Controller, Event, Mode, actions_of};
use crate::control::flap::FlapConfig;
use crate::control::journal::{self, StartState};
use crate::control::lock::{self, GuestLock};
use crate::control::watch::{Finding, Watch};
use crate::engine::{Engine, GroupStatus};
use crate::kernel::live::LiveSource;
use crate::kernel::root::RootReader;
use crate::kernel::{Polarization, Sample, Source};
use crate::logging::Log;
use crate::report::table;
use crate::rules::RuleSet;
use crate::rules::SourceFile;
use crate::rules::config::describe_missing_memory;
use crate::rules::eval::{NoTrace, Trace};

/// What `plugtop run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub rules: PathBuf,
    pub root: PathBuf,
    pub mode: Mode,
    /// The restore journal (default `ROOT/run/plugtop/state`).
    pub state: PathBuf,
    /// Start although a dead plugtop left a journal (its start state is kept).
    pub force: bool,
    /// Log the values behind every decision.
    pub verbose: bool,
    /// Overrides UPDATE (tests run many intervals quickly).
    pub interval: Option<Duration>,
    /// Test-only: panic after this many intervals, to test the panic hook.
    pub panic_after: Option<usize>,
    /// When to call the guest flapping.
    pub flap: FlapConfig,
}

/// Set from signal handlers; the loop checks them between intervals.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    pub stop: Arc<AtomicBool>,
    pub reload: Arc<AtomicBool>,
}

impl Signals {
    /// Routes SIGTERM/SIGINT to `stop` and SIGHUP to `reload`, waking the
    /// calling thread at once. The signal thread sleeps until a signal comes.
    pub fn install() -> std::io::Result<Signals> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let flags = Signals::default();
        let mut iter = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
        let main = std::thread::current();
        let (stop, reload) = (Arc::clone(&flags.stop), Arc::clone(&flags.reload));
        std::thread::Builder::new()
            .name("plugtop-signals".into())
            .spawn(move || {
                for signal in iter.forever() {
                    if signal == SIGHUP {
                        reload.store(true, Ordering::SeqCst);
                    } else {
                        stop.store(true, Ordering::SeqCst);
                    }
                    main.unpark();
                }
            })?;
        Ok(flags)
    }
}

/// Why the runner could not start (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Lock(#[from] lock::LockError),
    #[error("{0}")]
    Journal(String),
    #[error("cannot read the guest: {0}")]
    Read(String),
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Stopped by a signal; the start state was restored.
    Stopped,
    /// cpuplugd would have exited here; the start state was restored.
    Fatal,
}

fn load_rules(
    path: &Path,
    facts: &crate::rules::SystemFacts,
) -> Result<(RuleSet, SourceFile), StartError> {
    crate::rules::load_path(path, facts).map_err(StartError::Invalid)
}

fn log_events(log: &mut dyn Log, events: &[Event], verbose: bool) {
    for e in events {
        match e {
            // Nothing left to plug or unplug: cpuplugd says so only when verbose.
            Event::Failed { error, .. } if error.contains("no candidate") => {
                if verbose {
                    log.info(&e.to_string());
                }
            }
            Event::Failed { .. } | Event::CpuWriteFailed(_) => log.error(&e.to_string()),
            _ => log.info(&e.to_string()),
        }
    }
}

/// The runner's state between intervals.
struct Runner<'a> {
    options: &'a RunOptions,
    log: &'a mut dyn Log,
    rules: Arc<RuleSet>,
    file: SourceFile,
    engine: Engine,
    watch: Watch,
    trace: Trace,
    controller: Controller,
    actuator: RootActuator,
    start: StartState,
    vertical: bool,
}

impl Runner<'_> {
    fn acting(&self) -> bool {
        self.controller.mode() != Mode::Observe
    }

    /// cpuplugd's start-up adjustment: CPUs into [CPU_MIN, CPU_MAX], the pool into [CMM_MIN, CMM_MAX].
    fn apply_limits(&mut self, sample: &Sample) {
        use crate::control::controller::{Action, start_limits};
        // After a CPU write fails, the other CPUs would fail the same way.
        let mut cpu_failed = false;
        for (action, why) in start_limits(&self.rules, sample) {
            let cpu = matches!(action, Action::PlugCpu | Action::UnplugCpu);
            if cpu && (self.vertical || cpu_failed) {
                continue;
            }
            if !self.limit_action(action, why) && cpu {
                cpu_failed = true;
            }
        }
    }

    fn limit_action(&mut self, action: crate::control::controller::Action, why: &str) -> bool {
        if !self.acting() {
            self.log.info(&format!("would {action} ({why})"));
            return true;
        }
        let events = crate::control::controller::apply(action, &mut self.actuator);
        let ok = !events.iter().any(|e| matches!(e, Event::Failed { .. }));
        log_events(self.log, &events, self.options.verbose);
        ok
    }

    fn restore(&mut self) {
        if !self.acting() {
            return;
        }
        let mut failures = Vec::new();
        match journal::restore(&mut self.actuator, &self.start, &mut failures) {
            Ok(()) => self.log.info(&format!(
                "restored the start state: CPUs {} online, cmm_pages {}",
                self.start.online.len(),
                self.start
                    .cmm_pages
                    .map_or("absent".into(), |p| p.to_string())
            )),
            Err(e) => self
                .log
                .error(&format!("cannot restore the start state: {e}")),
        }
        for f in failures {
            self.log.error(&format!("restore: {f}"));
        }
        if let Err(e) = journal::remove(&self.options.state) {
            self.log.error(&format!(
                "cannot remove {}: {e}",
                self.options.state.display()
            ));
        }
    }

    fn polarization(&mut self, sample: &Sample) {
        let vertical = sample.polarization == Some(Polarization::Vertical);
        if vertical == self.vertical {
            return;
        }
        self.vertical = vertical;
        if vertical {
            self.log
                .info("vertical polarization: CPU changes suspended, start CPU count restored");
            if self.acting() {
                let mut failures = Vec::new();
                let _ = self.actuator.set_online(&self.start.online, &mut failures);
                for f in failures {
                    self.log.error(&f);
                }
            }
        } else {
            self.log
                .info("horizontal polarization again: CPU limits re-applied");
            self.apply_limits(sample);
        }
    }

    /// Logs flapping (with the comparisons behind it) and feedback loops.
    fn watch_over(&mut self, sample: &Sample, decision: &crate::engine::Decision) {
        let found = self
            .watch
            .observe(&self.engine, &self.file, sample, decision, &self.trace);
        for f in found {
            match f {
                Finding::Changed(_) => {}
                Finding::FlapStarted(_) => {
                    self.log.error(&format!("warning: {f}"));
                    for c in self.watch.changes.iter().rev().take(2).rev() {
                        self.log.error(&format!("  {c}"));
                    }
                }
                _ => self.log.error(&format!("warning: {f}")),
            }
        }
    }

    fn reload(&mut self) {
        let facts = RootReader::new().facts(&self.options.root);
        match load_rules(&self.options.rules, &facts) {
            Ok((rules, file)) => {
                self.rules = Arc::new(rules);
                self.file = file;
                self.engine = Engine::new(Arc::clone(&self.rules));
                self.watch = Watch::new(self.options.flap);
                self.log.info(&format!(
                    "reloaded {}; history starts again, start state kept",
                    self.options.rules.display()
                ));
            }
            Err(e) => self
                .log
                .error(&format!("reload failed, keeping the old rules: {e}")),
        }
    }
}

/// Waits until `interval` has passed or a signal came.
fn wait(interval: Duration, signals: &Signals) {
    let deadline = Instant::now() + interval;
    loop {
        if signals.stop.load(Ordering::SeqCst) || signals.reload.load(Ordering::SeqCst) {
            return;
        }
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        std::thread::park_timeout(deadline - now);
    }
}

/// Runs on the live root until a signal or a fatal error; restores the
/// start state on the way out.
pub fn run(
    options: &RunOptions,
    log: &mut dyn Log,
    signals: &Signals,
) -> Result<Ending, StartError> {
    let mut source = LiveSource::new(&options.root).without_cpu_dirs();
    run_on(options, &mut source, log, signals)
}

/// As [`run`], reading from any source; a finite source (a recording, in
/// observe mode) ends the run when it is exhausted.
pub fn run_on(
    options: &RunOptions,
    source: &mut dyn Source,
    log: &mut dyn Log,
    signals: &Signals,
) -> Result<Ending, StartError> {
    let facts = source.facts();
    let (rules, file) = load_rules(&options.rules, &facts)?;
    let rules = Arc::new(rules);
    if !rules.mem_enabled && rules.settings.cmm_max >= 0 && !facts.cmm_pages {
        log.info(&format!(
            "memory group off: needs {}",
            describe_missing_memory(&rules, &facts)
        ));
    }
    let mode = options.mode;
    let mut _lock: Option<GuestLock> = None;
    let mut adopted: Option<StartState> = None;
    if mode != Mode::Observe {
        match journal::read(&options.state).map_err(|e| StartError::Journal(e.to_string()))? {
            Some(old) if journal::pid_alive(old.pid) && old.pid != std::process::id() => {
                return Err(StartError::Journal(format!(
                    "another plugtop (pid {}) acts on {} (journal {})",
                    old.pid,
                    options.root.display(),
                    options.state.display()
                )));
            }
            Some(old) if !options.force => {
                return Err(StartError::Journal(format!(
                    "a plugtop (pid {}) ended without restoring {}: run `plugtop restore --state {}` first, or start with --force to keep its start state",
                    old.pid,
                    options.root.display(),
                    options.state.display()
                )));
            }
            Some(old) => adopted = Some(old),
            None => {}
        }
        _lock = Some(lock::acquire(&options.root)?);
    }
    let first = match source.next_sample() {
        Some(Ok(s)) => s,
        Some(Err(e)) => return Err(StartError::Read(e.to_string())),
        None => return Err(StartError::Read("no reading".into())),
    };
    let start = adopted.unwrap_or_else(|| StartState {
        pid: std::process::id(),
        root: options.root.display().to_string(),
        online: first.online.ids.clone(),
        cmm_pages: first.cmm_pages,
    });
    let actuator = RootActuator::new(&options.root).map_err(|e| StartError::Read(e.to_string()))?;
    if mode != Mode::Observe {
        let mut journaled = start.clone();
        journaled.pid = std::process::id();
        journal::write(&options.state, &journaled)
            .map_err(|e| StartError::Journal(e.to_string()))?;
        install_panic_hook(options.root.clone(), options.state.clone());
    }
    log.info(&format!(
        "plugtop {} started in {mode} mode on {} with {} (CPU group {}, memory group {})",
        env!("CARGO_PKG_VERSION"),
        options.root.display(),
        options.rules.display(),
        if rules.cpu_enabled { "on" } else { "off" },
        if rules.mem_enabled { "on" } else { "off" },
    ));
    let mut runner = Runner {
        options,
        log,
        engine: Engine::new(Arc::clone(&rules)),
        rules,
        file,
        watch: Watch::new(options.flap),
        trace: Trace::new(),
        controller: Controller::new(mode),
        actuator,
        start,
        vertical: first.polarization == Some(Polarization::Vertical),
    };
    runner.apply_limits(&first);
    let mut last_stamp = first.stamp;
    let _ = runner.engine.push(&first, &mut NoTrace);
    let mut intervals = 0usize;
    let ending = loop {
        let interval = options.interval.unwrap_or(Duration::from_secs(
            u64::try_from(runner.rules.settings.update)
                .unwrap_or(1)
                .max(1),
        ));
        wait(interval, signals);
        if signals.stop.load(Ordering::SeqCst) {
            break Ending::Stopped;
        }
        if signals.reload.swap(false, Ordering::SeqCst) {
            runner.reload();
        }
        let sample = match source.next_sample() {
            Some(Ok(s)) => s,
            Some(Err(e)) => {
                runner.log.error(&format!("skipping this interval: {e}"));
                continue;
            }
            None => break Ending::Stopped,
        };
        if sample.stamp <= last_stamp {
            runner
                .log
                .error("the clock went backwards; skipping this interval");
            last_stamp = sample.stamp;
            continue;
        }
        last_stamp = sample.stamp;
        runner.polarization(&sample);
        intervals += 1;
        if options.panic_after.is_some_and(|n| intervals >= n) {
            panic!("test-only panic after {intervals} intervals");
        }
        let Some(decision) = runner.engine.push(&sample, &mut runner.trace) else {
            continue;
        };
        runner.watch_over(&sample, &decision);
        if options.verbose {
            let mut line = String::new();
            table::row(&mut line, &decision);
            runner.log.info(line.trim_end());
        }
        if let Some(fatal) = &decision.fatal {
            runner
                .log
                .error(&format!("{}; cpuplugd would exit here", fatal.message));
            break Ending::Fatal;
        }
        if decision
            .cpu
            .is_some_and(|c| c.status == GroupStatus::Vertical)
        {
            continue;
        }
        let events = runner.controller.decide(&decision, &mut runner.actuator);
        if options.verbose && events.is_empty() && actions_of(&decision).0.is_empty() {
            continue;
        }
        log_events(runner.log, &events, options.verbose);
    };
    runner.restore();
    Ok(ending)
}

/// On a panic, put the guest back from the journal before the process dies.
pub fn install_panic_hook(root: PathBuf, state: PathBuf) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        if let Ok(Some(start)) = journal::read(&state)
            && let Ok(mut actuator) = RootActuator::new(&root)
        {
            let mut failures = Vec::new();
            if journal::restore(&mut actuator, &start, &mut failures).is_ok() {
                let _ = journal::remove(&state);
                eprintln!("plugtop: restored the start state after the panic");
            }
        }
    }));
}

/// `plugtop restore`: put a guest back from its journal.
pub fn restore_from_journal(
    root: &Path,
    state: &Path,
    log: &mut dyn Log,
) -> Result<bool, StartError> {
    let Some(start) = journal::read(state).map_err(|e| StartError::Journal(e.to_string()))? else {
        log.info(&format!(
            "nothing to restore: no journal at {}",
            state.display()
        ));
        return Ok(false);
    };
    if journal::pid_alive(start.pid) && start.pid != std::process::id() {
        return Err(StartError::Journal(format!(
            "plugtop (pid {}) is still running and will restore on exit; stop it with SIGTERM",
            start.pid
        )));
    }
    let _lock = lock::acquire(root)?;
    let mut actuator = RootActuator::new(root).map_err(|e| StartError::Read(e.to_string()))?;
    let mut failures = Vec::new();
    journal::restore(&mut actuator, &start, &mut failures)
        .map_err(|e| StartError::Read(e.to_string()))?;
    for f in &failures {
        log.error(&format!("restore: {f}"));
    }
    journal::remove(state).map_err(|e| StartError::Journal(e.to_string()))?;
    log.info(&format!(
        "restored {}: CPUs {} online, cmm_pages {}",
        root.display(),
        crate::kernel::recording::export::ranges(&crate::kernel::cpulist::CpuList {
            count: i32::try_from(start.online.len()).unwrap_or(i32::MAX),
            ids: start.online.clone()
        }),
        start.cmm_pages.map_or("absent".into(), |p| p.to_string())
    ));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::cpulist::CpuList;
    use crate::kernel::fields::FieldTable;
    use crate::kernel::{CpuTicks, SourceError, Stamp};
    use crate::logging::Memory;

    /// Gives prepared readings, then ends.
    struct Script(Vec<Result<Sample, SourceError>>);

    impl Source for Script {
        fn facts(&mut self) -> crate::rules::SystemFacts {
            crate::rules::SystemFacts {
                present_cpus: Ok(4),
                cmm_pages: true,
                meminfo_names: None,
                vmstat_names: None,
                origin: "script".into(),
            }
        }
        fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
            (!self.0.is_empty()).then(|| self.0.remove(0))
        }
    }

    fn sample(secs: i64, polarization: Option<Polarization>) -> Result<Sample, SourceError> {
        Ok(Sample {
            stamp: Stamp::new(secs, 0),
            ticks: CpuTicks {
                user: secs as u64 * 10,
                idle: secs as u64 * 90,
                ..CpuTicks::default()
            },
            per_cpu: Vec::new(),
            loadavg: 0.1,
            runnable: 1.0,
            meminfo: FieldTable::from_pairs([("MemFree", 1000.0)]),
            vmstat: FieldTable::from_pairs([
                ("pswpin", 0.0),
                ("pswpout", 0.0),
                ("pgpgin", 0.0),
                ("pgpgout", 0.0),
            ]),
            online: CpuList {
                ids: vec![0, 1],
                count: 2,
            },
            present: CpuList {
                ids: vec![0, 1, 2, 3],
                count: 4,
            },
            possible: None,
            cpus: Vec::new(),
            cmm_pages: Some(0),
            polarization,
            proc_bytes: Default::default(),
        })
    }

    fn run_script(script: Vec<Result<Sample, SourceError>>) -> Vec<String> {
        run_rules(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"0\"\n",
            script,
        )
    }

    fn run_rules(text: &str, script: Vec<Result<Sample, SourceError>>) -> Vec<String> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let rules = dir.path().join("r.conf");
        std::fs::write(&rules, text).expect("rules");
        let options = RunOptions {
            rules,
            root: dir.path().to_path_buf(),
            mode: Mode::Observe,
            state: dir.path().join("state"),
            force: false,
            verbose: true,
            interval: Some(Duration::ZERO),
            panic_after: None,
            flap: FlapConfig::default(),
        };
        let mut log = Memory::default();
        let ended = run_on(&options, &mut Script(script), &mut log, &Signals::default());
        assert!(matches!(ended, Ok(Ending::Stopped)), "{ended:?}");
        log.lines.into_iter().map(|(_, l)| l).collect()
    }

    #[test]
    fn unreadable_intervals_and_a_clock_going_backwards_are_skipped() {
        let lines = run_script(vec![
            sample(10, None),
            sample(11, None),
            Err(SourceError::Other("/proc/stat open failed: gone".into())),
            sample(9, None),
            sample(12, None),
        ]);
        let text = lines.join("\n");
        assert!(
            text.contains("skipping this interval: /proc/stat open failed: gone"),
            "{text}"
        );
        assert!(
            text.contains("the clock went backwards; skipping this interval"),
            "{text}"
        );
        let decided = lines
            .iter()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .count();
        assert_eq!(
            decided, 2,
            "decisions only from good, forward readings: {text}"
        );
    }

    #[test]
    fn flapping_is_logged_with_the_comparison_that_flips() {
        // Busy and idle intervals alternate; the rules chase them.
        let mut script = Vec::new();
        let (mut user, mut idle) = (0u64, 0u64);
        for secs in 10..30 {
            if secs % 2 == 0 {
                user += 90;
                idle += 10;
            } else {
                user += 10;
                idle += 90;
            }
            let mut s = sample(secs, None).expect("sample");
            s.ticks = CpuTicks {
                user,
                idle,
                ..CpuTicks::default()
            };
            script.push(Ok(s));
        }
        let lines = run_rules(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nidle_ticks=\"cpustat.idle[0] - cpustat.idle[1]\"\nHOTPLUG=\"idle_ticks < 50\"\nHOTUNPLUG=\"idle_ticks > 50\"\n",
            script,
        );
        let text = lines.join("\n");
        assert!(
            text.contains("warning: CPU count flapping: 4 reversals in the last 30 intervals"),
            "{text}"
        );
        assert!(
            text.contains("HOTPLUG false → true: idle_ticks (line 4) went 90 → 10 across 50"),
            "{text}"
        );
    }

    #[test]
    fn vertical_polarization_suspends_cpu_changes() {
        let lines = run_script(vec![
            sample(10, None),
            sample(11, Some(Polarization::Vertical)),
            sample(12, Some(Polarization::Vertical)),
            sample(13, Some(Polarization::Horizontal)),
        ]);
        let text = lines.join("\n");
        assert!(
            text.contains("vertical polarization: CPU changes suspended"),
            "{text}"
        );
        assert!(text.contains("horizontal polarization again"), "{text}");
        assert!(text.contains("skipped: vertical"), "{text}");
    }
}
