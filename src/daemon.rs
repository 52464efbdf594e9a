//! The headless runner: `plugtop run`, a drop-in for `cpuplugd`. It starts
//! and stops like cpuplugd (limits applied at start, start state restored on
//! every way out), but journals the start state before the first write so a
//! crash can be undone, and refuses to share the guest with another
//! controller.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::control::controller::{Event, Mode};
use crate::control::flap::FlapConfig;
use crate::control::journal::{self, StartState};
use crate::control::lock::{self, GuestLock};
use crate::control::log_entries;
use crate::control::session::{Notice, Session, Step};
use crate::kernel::actuator::{Actuator, NoWrites, RootActuator};
use crate::kernel::live::LiveSource;
use crate::kernel::root::RootReader;
use crate::kernel::{Sample, Source};
use crate::logging::Log;
use crate::metrics::Metrics;
use crate::metrics::serve::MetricsServer;
use crate::report::table;
use crate::rules::RuleSet;
use crate::rules::SourceFile;
use crate::rules::ruleset::describe_missing_memory;

/// What the detached child of `plugtop run` prints on stderr once it has
/// started, so the parent can exit 0 (anything else it prints is why not).
pub const STARTED: &str = "plugtop: started";

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
    /// Called once the run has started (the detached child tells its
    /// waiting parent through it).
    pub on_started: Option<fn()>,
    /// Follow cpuplugd's LPAR rule (memory only on z/VM). Off where no real
    /// guest is read (a recording, the unit tests' scripted sources).
    pub check_lpar: bool,
    /// Where to expose metrics, if anywhere.
    pub metrics: MetricsOptions,
}

/// `--metrics-listen` and `--metrics-textfile`.
#[derive(Debug, Clone, Default)]
pub struct MetricsOptions {
    /// `ADDR:PORT` of an HTTP `/metrics` endpoint.
    pub listen: Option<String>,
    /// A `*.prom` file for node_exporter's textfile collector, rewritten
    /// every interval.
    pub textfile: Option<PathBuf>,
}

impl MetricsOptions {
    fn wanted(&self) -> bool {
        self.listen.is_some() || self.textfile.is_some()
    }
}

/// The metrics of a run and where they go.
struct Exposure {
    metrics: Metrics,
    _server: Option<MetricsServer>,
    textfile: Option<PathBuf>,
    /// The textfile could not be written last time (said once, not every
    /// interval).
    textfile_failing: bool,
}

impl Exposure {
    /// Starts what `options` asks for; `None` when nothing is.
    fn start(
        options: &RunOptions,
        file: &SourceFile,
        log: &mut dyn Log,
    ) -> Result<Option<Exposure>, StartError> {
        if !options.metrics.wanted() {
            return Ok(None);
        }
        let mut metrics = Metrics::new(&crate::kernel::machine::identity(&options.root));
        metrics.set_rules(
            file,
            &options.rules.display().to_string(),
            std::time::SystemTime::now(),
        );
        metrics.set_mode(options.mode);
        let server = match &options.metrics.listen {
            Some(addr) => {
                let s = MetricsServer::start(addr, metrics.registry())
                    .map_err(|e| StartError::Refused(e.to_string()))?;
                log.info(&format!("metrics at http://{}/metrics", s.addr));
                Some(s)
            }
            None => None,
        };
        Ok(Some(Exposure {
            metrics,
            _server: server,
            textfile: options.metrics.textfile.clone(),
            textfile_failing: false,
        }))
    }

    /// One interval's metrics, and the textfile rewritten.
    fn interval(&mut self, session: &Session, step: &Step, sample: &Sample, log: &mut dyn Log) {
        self.metrics.observe(session, step, sample);
        let Some(path) = &self.textfile else { return };
        match crate::metrics::textfile::write_atomic(path, &self.metrics.prometheus_text()) {
            Ok(()) if self.textfile_failing => {
                self.textfile_failing = false;
                log.info(&format!("metrics written to {} again", path.display()));
            }
            Ok(()) => {}
            Err(e) if !self.textfile_failing => {
                self.textfile_failing = true;
                log.error(&format!("cannot write metrics to {}: {e}", path.display()));
            }
            Err(_) => {}
        }
    }
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
    #[error(transparent)]
    Rules(#[from] crate::rules::LoadError),
    /// cpuplugd would not start on this guest (no /proc/cpuinfo, ...).
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Lock(#[from] lock::LockError),
    #[error(transparent)]
    Journal(#[from] journal::JournalError),
    /// Another plugtop acts here, or a dead one left the guest changed.
    #[error("{0}")]
    Conflict(String),
    #[error("cannot read the guest: {0}")]
    Read(#[from] crate::kernel::SourceError),
    #[error("cannot act on the guest: {0}")]
    Root(#[from] std::io::Error),
    #[error("cannot restore the guest: {0}")]
    Restore(#[from] crate::kernel::actuator::ActError),
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Stopped by a signal; the start state was restored.
    Stopped,
    /// cpuplugd would have exited here; the start state was restored.
    Fatal,
    /// The start state could not be fully restored; the journal is kept.
    RestoreFailed,
}

fn load_rules(
    path: &Path,
    facts: &crate::rules::SystemFacts,
) -> Result<(RuleSet, SourceFile), StartError> {
    Ok(crate::rules::load_path(path, facts)?)
}

/// A log line with the wall-clock time of day (UTC), as cpuplugd's
/// verbose log has one.
fn stamped(line: &str) -> String {
    let now = crate::kernel::live::wall_clock();
    format!("{} {line}", crate::report::time_of_day(now))
}

/// Logs what one step did: each message at its priority, with the fields
/// the journal keeps; a CPU that was not there to plug or unplug only when
/// verbose, as cpuplugd does.
fn log_step(log: &mut dyn Log, step: &Step, session: &Session, verbose: bool) {
    let quiet = |e: &Event| {
        matches!(
            e,
            Event::Failed {
                nothing_left: true,
                ..
            }
        )
    };
    let events = step
        .limits
        .iter()
        .map(|e| (e, true))
        .chain(step.events.iter().map(|e| (e, false)));
    for (e, by_limits) in events {
        if quiet(e) && !verbose {
            continue;
        }
        let entry = log_entries::event_entry(e, by_limits, step, session, log.wants_fields());
        log.entry(&entry);
    }
    // cpuplugd reports limits and negative increments only when verbose.
    let verbose_only = |n: &Notice| matches!(n, Notice::LimitReached(_) | Notice::Negative { .. });
    let fields = log.wants_fields();
    for entry in
        log_entries::message_entries(step, session, |n| verbose || !verbose_only(n), fields)
    {
        log.entry(&entry);
    }
}

/// The runner's state between intervals.
struct Runner<'a> {
    options: &'a RunOptions,
    log: &'a mut dyn Log,
    session: Session,
    actuator: &'a mut dyn Actuator,
    start: StartState,
    acting: bool,
    exposure: Option<Exposure>,
}

impl Runner<'_> {
    /// Puts the guest back; true when every CPU and the pool are as they
    /// were. The journal goes only then: otherwise `plugtop restore` needs it.
    fn restore(&mut self) -> bool {
        if !self.acting {
            return true;
        }
        let mut failures = Vec::new();
        let complete = match journal::restore(self.actuator, &self.start, &mut failures) {
            Ok(()) => failures.is_empty(),
            Err(e) => {
                failures.push(e.to_string());
                false
            }
        };
        for f in &failures {
            self.log.error(&format!("restore: {f}"));
        }
        if !complete {
            self.log.error(&format!(
                "the start state was not fully restored; the journal {} is kept: fix the cause and run `plugtop restore --root {} --state {}`",
                self.options.state.display(),
                self.options.root.display(),
                self.options.state.display()
            ));
            return false;
        }
        self.log.info(&format!(
            "restored the start state: CPUs {} online, cmm_pages {}",
            self.start.online.len(),
            self.start
                .cmm_pages
                .map_or("absent".into(), |p| p.to_string())
        ));
        if let Err(e) = journal::remove(&self.options.root, &self.options.state) {
            self.log.error(&format!(
                "cannot remove {}: {e}",
                self.options.state.display()
            ));
        }
        true
    }

    fn reload(&mut self) {
        let facts = RootReader::new().facts(&self.options.root);
        match load_rules(&self.options.rules, &facts) {
            Ok((rules, file)) => {
                if let Some(x) = &mut self.exposure {
                    x.metrics.set_rules(
                        &file,
                        &self.options.rules.display().to_string(),
                        std::time::SystemTime::now(),
                    );
                }
                let events = self.session.reload(Arc::new(rules), file, self.actuator);
                self.log.info(&format!(
                    "reloaded {}; history and start state kept",
                    self.options.rules.display()
                ));
                let step = Step {
                    limits: events,
                    ..Step::default()
                };
                log_step(self.log, &step, &self.session, self.options.verbose);
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

/// The journal of an earlier run, if one may be adopted; an error when
/// another plugtop still acts or a dead one left the guest changed.
fn earlier_run(options: &RunOptions) -> Result<Option<StartState>, StartError> {
    match journal::read(&options.state)? {
        Some(old) if journal::pid_alive(old.pid) && old.pid != std::process::id() => {
            Err(StartError::Conflict(format!(
                "another plugtop (pid {}) acts on {} (journal {})",
                old.pid,
                options.root.display(),
                options.state.display()
            )))
        }
        Some(old) if !options.force => Err(StartError::Conflict(format!(
            "a plugtop (pid {}) ended without restoring {}: run `plugtop restore --state {}` first, or start with --force to keep its start state",
            old.pid,
            options.root.display(),
            options.state.display()
        ))),
        other => Ok(other),
    }
}

/// As [`run`], reading from any source; a finite source (a recording, in
/// observe mode) ends the run when it is exhausted.
pub fn run_on(
    options: &RunOptions,
    source: &mut dyn Source,
    log: &mut dyn Log,
    signals: &Signals,
) -> Result<Ending, StartError> {
    // Observe mode holds nothing that can write: it only names the CPUs.
    if options.mode == Mode::Observe {
        return run_with(
            options,
            source,
            &mut NoWrites::seeing(&options.root),
            log,
            signals,
        );
    }
    let mut actuator = RootActuator::new(&options.root)?;
    run_with(options, source, &mut actuator, log, signals)
}

/// As [`run_on`], acting through any actuator (the simulator's, in tests
/// that compare the front ends); the lock and journal stay below the root.
pub fn run_with(
    options: &RunOptions,
    source: &mut dyn Source,
    actuator: &mut dyn Actuator,
    log: &mut dyn Log,
    signals: &Signals,
) -> Result<Ending, StartError> {
    let facts = source.facts();
    let (mut rules, file) = load_rules(&options.rules, &facts)?;
    if !rules.mem_enabled && rules.settings.cmm_max >= 0 && !facts.cmm_pages {
        log.info(&format!(
            "memory group off: needs {}",
            describe_missing_memory(&rules, &facts)
        ));
    }
    if options.check_lpar {
        lpar_check(&options.root, &mut rules, log)?;
    }
    let rules = Arc::new(rules);
    // Before the lock and the journal: an address that is taken refuses
    // the start with nothing to undo.
    let exposure = Exposure::start(options, &file, log)?;
    let mode = options.mode;
    let acting = mode != Mode::Observe;
    let mut lock: Option<GuestLock> = None;
    let mut adopted: Option<StartState> = None;
    if acting {
        adopted = earlier_run(options)?;
        lock = Some(lock::acquire(&options.root)?);
    }
    let first = match source.next_sample() {
        Some(Ok(s)) => s,
        Some(Err(e)) => return Err(StartError::Read(e)),
        None => return Err(StartError::Refused("the source gave no reading".into())),
    };
    if acting && let Some(why) = journal::inexact(&first.online, first.cmm_pages) {
        return Err(StartError::Refused(why));
    }
    let start = adopted.unwrap_or_else(|| StartState {
        pid: std::process::id(),
        root: options.root.display().to_string(),
        online: first.online.ids.clone(),
        cmm_pages: first.cmm_pages,
    });
    if acting {
        let mut journaled = start.clone();
        journaled.pid = std::process::id();
        journal::write(&options.root, &options.state, &journaled)?;
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
    if options.verbose {
        log.info(&stamped(table::columns().trim_end()));
    }
    if let Some(started) = options.on_started {
        started();
    }
    let mut runner = Runner {
        options,
        log,
        session: Session::new(Arc::clone(&rules), file, mode, options.flap),
        actuator,
        start,
        acting,
        exposure,
    };
    source.narrow(&runner.session.interest());
    let ending = run_loop(&mut runner, source, signals, first);
    if ending == Ending::Stopped {
        runner.log.info("shutting down");
    }
    let restored = runner.restore();
    drop(lock);
    if acting {
        lock::release(&options.root);
    }
    runner.log.info("terminated");
    Ok(if restored {
        ending
    } else {
        Ending::RestoreFailed
    })
}

/// The intervals, until a signal, the end of a finite source, or a reading
/// cpuplugd would stop on.
fn run_loop(
    runner: &mut Runner<'_>,
    source: &mut dyn Source,
    signals: &Signals,
    first: Sample,
) -> Ending {
    let options = runner.options;
    let mut next = Some(first);
    let mut intervals = 0usize;
    loop {
        let sample = match next.take() {
            Some(s) => s,
            None => {
                let update = runner.session.rules().settings.update;
                let interval = options.interval.unwrap_or(Duration::from_secs(
                    u64::try_from(update).unwrap_or(1).max(1),
                ));
                wait(interval, signals);
                if signals.stop.load(Ordering::SeqCst) {
                    return Ending::Stopped;
                }
                if signals.reload.swap(false, Ordering::SeqCst) {
                    runner.reload();
                    source.narrow(&runner.session.interest());
                }
                match source.next_sample() {
                    Some(Ok(s)) => s,
                    Some(Err(e)) => {
                        runner.log.error(&format!("skipping this interval: {e}"));
                        continue;
                    }
                    None => return Ending::Stopped,
                }
            }
        };
        intervals += 1;
        if options.panic_after.is_some_and(|n| intervals > n) {
            panic!("test-only panic after {intervals} intervals");
        }
        let sample = Arc::new(sample);
        let step = runner.session.step(Arc::clone(&sample), runner.actuator);
        if let Some(x) = runner.exposure.as_mut() {
            x.interval(&runner.session, &step, &sample, runner.log);
        }
        if options.verbose
            && let Some(d) = &step.decision
            && d.fatal.is_none()
        {
            let mut line = String::new();
            table::row(&mut line, d);
            runner.log.info(&stamped(line.trim_end()));
        }
        log_step(runner.log, &step, &runner.session, options.verbose);
        if step
            .findings
            .iter()
            .any(|f| matches!(f, crate::control::watch::Finding::FlapStarted(_)))
        {
            for c in runner.session.watch().changes.iter().rev().take(2).rev() {
                runner.log.error(&format!("  {c}"));
            }
        }
        if step.fatal.is_some() {
            return Ending::Fatal;
        }
    }
}

/// cpuplugd manages memory only on z/VM: without the `version = FF` of a
/// z/VM guest in /proc/cpuinfo it turns the memory group off (an LPAR),
/// and without /proc/cpuinfo it does not start.
fn lpar_check(root: &Path, rules: &mut RuleSet, log: &mut dyn Log) -> Result<(), StartError> {
    let text = crate::kernel::machine::cpuinfo(root).map_err(|e| {
        StartError::Refused(format!(
            "cannot open {}: {e}",
            root.join("proc/cpuinfo").display()
        ))
    })?;
    if crate::kernel::machine::is_zvm_guest(&text) || !rules.mem_enabled {
        return Ok(());
    }
    rules.mem_enabled = false;
    log.info("memory group off: not a z/VM guest (no `version = FF` in /proc/cpuinfo); cpuplugd manages memory only inside z/VM, not in an LPAR or elsewhere");
    if !rules.cpu_enabled {
        return Err(StartError::Refused(
            "Exiting, because neither a valid cpu nor a valid memory hotplug configuration was found.".into(),
        ));
    }
    Ok(())
}

/// On a panic, put the guest back from the journal before the process dies.
pub fn install_panic_hook(root: PathBuf, state: PathBuf) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        use std::io::Write as _;
        previous(info);
        // Another thread may be writing: wait for that write, stop all
        // later ones, then restore. Nothing here may panic again (a second
        // panic aborts the process mid-way), so stderr errors are ignored.
        let (_writes_stopped, actuator) = crate::kernel::actuator::stop_writes_for_restore(
            &root,
            std::time::Duration::from_secs(2),
        );
        if let Ok(Some(start)) = journal::read(&state)
            && let Ok(mut actuator) = actuator
        {
            let mut failures = Vec::new();
            if journal::restore(&mut actuator, &start, &mut failures).is_ok() {
                let _ = journal::remove(&root, &state);
                let _ = writeln!(
                    std::io::stderr(),
                    "plugtop: restored the start state after the panic"
                );
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
    let Some(start) = journal::read(state)? else {
        log.info(&format!(
            "nothing to restore: no journal at {}",
            state.display()
        ));
        return Ok(false);
    };
    if journal::pid_alive(start.pid) && start.pid != std::process::id() {
        return Err(StartError::Conflict(format!(
            "plugtop (pid {}) is still running and will restore on exit; stop it with SIGTERM",
            start.pid
        )));
    }
    let _lock = lock::acquire(root)?;
    let mut actuator = RootActuator::new(root)?;
    let mut failures = Vec::new();
    journal::restore(&mut actuator, &start, &mut failures)?;
    for f in &failures {
        log.error(&format!("restore: {f}"));
    }
    journal::remove(root, state)?;
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
    use crate::kernel::{CpuTicks, Polarization, SourceError, Stamp};
    use crate::logging::Memory;

    /// Gives prepared readings, then ends.
    struct Script(Vec<Result<Sample, SourceError>>);

    impl Source for Script {
        fn facts(&mut self) -> crate::rules::SystemFacts {
            crate::rules::SystemFacts::any_machine(4, "script")
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
            check_lpar: false,
            metrics: MetricsOptions::default(),
            on_started: None,
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
            .filter(|l| l.len() > 9 && l[9..].trim_start().starts_with(char::is_numeric))
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
