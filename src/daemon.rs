//! The headless runner: `plugtop run`, a drop-in for `cpuplugd`. It starts
//! and stops like cpuplugd (limits applied at start, start state restored on
//! every way out), but journals the start state before the first write so a
//! crash can be undone, and refuses to share the guest with another
//! controller.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use crate::control::controller::Mode;
use crate::control::flap::FlapConfig;
use crate::control::guard::{self, GiveBack, Guard, GuardError, GuardOptions};
use crate::control::log_entries::{self, Detail};
use crate::control::session::{Session, Step};
use crate::kernel::actuator::{Actuator, NoWrites, RootActuator};
use crate::kernel::live::LiveSource;
use crate::kernel::root::RootReader;
use crate::kernel::{Interest, Sample, Source};
use crate::logging::{Entry, LogSink, Priority, message_id};
use crate::metrics::Metrics;
use crate::metrics::endpoint::MetricsServer;
use crate::metrics::textfile::Textfile;
use crate::report::table;
use crate::rules::RuleSet;
use crate::rules::SourceFile;

/// The exit status of a refused start (nothing was changed) and of a
/// fatal error, as cpuplugd's: it exits 1 for every one of them, and
/// scripts and units written for it test for 1.
pub const REFUSED_EXIT: u8 = 1;

/// The exit status of a start plugtop refuses where cpuplugd would start
/// and act (nothing was changed): the start state could not be put back
/// after a crash, a dead plugtop's journal is there or the journal (which
/// cpuplugd has not) cannot be read or written, or this machine's own `/`
/// is not s390. EX_CONFIG of sysexits.h, so a script can tell
/// plugtop's own refusals from cpuplugd's and a unit does not restart
/// them (see docs/run.md).
pub const REFUSED_OWN_EXIT: u8 = 78;

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
    /// How `verbose`'s table of values is laid out (`--wide`).
    pub table: crate::report::Layout,
    /// Overrides UPDATE (tests run many intervals quickly).
    pub interval: Option<Duration>,
    /// Act on this machine's own `/` although it is not s390.
    pub allow_non_zvm: bool,
    /// Keep `run/plugtop.pid` below the root while running (a daemon),
    /// written only once the start can no longer be refused.
    pub pid_file: bool,
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
    server: Option<MetricsServer>,
    textfile: Option<Textfile>,
    /// The textfile could not be written last time (said once, not every
    /// interval).
    textfile_failing: bool,
    /// The textfile has been written once (said then, not at the start,
    /// where a refused start or a failing write would make it untrue).
    textfile_written: bool,
}

impl Exposure {
    /// Starts what `options` asks for; `None` when nothing is.
    fn start(
        options: &RunOptions,
        rules: &RuleSet,
        file: &SourceFile,
    ) -> Result<Option<Exposure>, StartError> {
        if !options.metrics.wanted() {
            return Ok(None);
        }
        // First, before the endpoint binds: a textfile path that is a
        // link, a FIFO, a device or a directory refuses the start.
        let textfile = match &options.metrics.textfile {
            Some(path) => Some(Textfile::open(path).map_err(|reason| StartError::Textfile {
                path: path.clone(),
                reason,
            })?),
            None => None,
        };
        let mut metrics = Metrics::new(&crate::kernel::machine::identity(&options.root));
        metrics.set_rules(
            file,
            &options.rules.display().to_string(),
            std::time::SystemTime::now(),
        );
        metrics.set_mode(options.mode);
        metrics.set_limits(rules, rules.pace(options.interval.map(|d| d.as_secs_f64())));
        let server = match &options.metrics.listen {
            Some(addr) => {
                let s = MetricsServer::start(addr, metrics.exposition())
                    .map_err(StartError::MetricsEndpoint)?;
                Some(s)
            }
            None => None,
        };
        Ok(Some(Exposure {
            metrics,
            server,
            textfile,
            textfile_failing: false,
            textfile_written: false,
        }))
    }

    /// One interval's metrics (`took` is how long it took), and the
    /// textfile rewritten when it changed.
    fn interval(
        &mut self,
        (session, step, sample): (&Session, &Step, &Sample),
        took: Duration,
        log: &mut dyn LogSink,
    ) {
        self.metrics.observe(session, step, sample, took);
        if let Some(trouble) = self.server.as_ref().and_then(MetricsServer::trouble) {
            log.error(&trouble);
        }
        let Some(textfile) = &mut self.textfile else {
            return;
        };
        let now = sample.stamp.micros as f64 / 1e6;
        let written = textfile.update(&self.metrics.prometheus_text(), now);
        let path = textfile.path().display();
        match written {
            Ok(_) if !self.textfile_written => {
                self.textfile_written = true;
                self.textfile_failing = false;
                log.info(&format!(
                    "metrics written to {path} (removed at a clean stop)"
                ));
            }
            Ok(_) if self.textfile_failing => {
                self.textfile_failing = false;
                log.info(&format!("metrics written to {path} again"));
            }
            Ok(_) => {}
            Err(e) if !self.textfile_failing => {
                self.textfile_failing = true;
                log.error(&format!(
                    "cannot write metrics to {path}: {}",
                    crate::error_chain::text(&e)
                ));
            }
            Err(_) => {}
        }
    }

    /// A clean stop: the textfile is removed, so no stale values stay
    /// behind to look like a live guest.
    fn stop(&self, log: &mut dyn LogSink) {
        if let Some(textfile) = &self.textfile
            && let Err(e) = textfile.remove()
        {
            log.error(&format!(
                "cannot remove {}: {}",
                textfile.path().display(),
                crate::error_chain::text(&e)
            ));
        }
    }
}

/// Set from signal handlers; the loop checks them between intervals.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    pub stop: Arc<AtomicBool>,
    pub reload: Arc<AtomicBool>,
    /// The first signal that stopped the run (0 before one came), for the
    /// log and the exit status.
    pub stopped_by: Arc<AtomicI32>,
}

impl Signals {
    /// Routes SIGHUP to `reload` and every other signal that would end the
    /// process ([`crate::stop_signals`]) to `stop`, waking the calling
    /// thread at once: the guest is put back whatever ends the run. The
    /// signal thread sleeps until a signal comes.
    pub fn install() -> std::io::Result<Signals> {
        use signal_hook::consts::SIGHUP;
        let flags = Signals::default();
        let mut iter = signal_hook::iterator::Signals::new(crate::stop_signals::catchable())?;
        let main = std::thread::current();
        let (stop, reload, stopped_by) = (
            Arc::clone(&flags.stop),
            Arc::clone(&flags.reload),
            Arc::clone(&flags.stopped_by),
        );
        std::thread::Builder::new()
            .name("plugtop-signals".into())
            .spawn(move || {
                for signal in iter.forever() {
                    if signal == SIGHUP {
                        reload.store(true, Ordering::SeqCst);
                    } else {
                        let _ = stopped_by.compare_exchange(
                            0,
                            signal,
                            Ordering::SeqCst,
                            Ordering::SeqCst,
                        );
                        stop.store(true, Ordering::SeqCst);
                    }
                    main.unpark();
                }
            })?;
        Ok(flags)
    }

    /// The signal that stopped the run, once one did.
    pub fn stopped_by(&self) -> Option<i32> {
        match self.stopped_by.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal),
        }
    }
}

/// Why the runner could not start (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Rules(#[from] crate::rules::LoadError),
    /// The metrics textfile cannot be written there (a link, a FIFO, a
    /// directory, a missing directory).
    #[error("--metrics-textfile {}", path.display())]
    Textfile {
        path: PathBuf,
        #[source]
        reason: crate::kernel::fs::FsError,
    },
    /// The metrics endpoint cannot listen (the address is taken or wrong).
    #[error(transparent)]
    MetricsEndpoint(crate::metrics::endpoint::ServeError),
    /// The source ended before its first reading.
    #[error("the source gave no reading")]
    NoReading,
    /// A daemon without its pid file would be a daemon nobody can find.
    #[error("cannot write the pid file")]
    PidFile(#[source] crate::kernel::fs::FsError),
    /// cpuplugd does not start without /proc/cpuinfo (at `path`).
    #[error("cannot open {}", path.display())]
    NoCpuinfo {
        path: PathBuf,
        #[source]
        reason: std::io::Error,
    },
    /// The guard refused the guest (the machine, the lock, the journal).
    #[error(transparent)]
    Guard(#[from] GuardError),
    #[error("cannot read the guest")]
    Read(#[from] crate::kernel::SourceError),
    #[error("cannot act on the guest")]
    Root(#[from] std::io::Error),
}

impl StartError {
    /// The exit status of this refusal: cpuplugd's 1, or
    /// [`REFUSED_OWN_EXIT`] where cpuplugd would have started on the
    /// same guest with the same rules.
    pub fn exit_status(&self) -> u8 {
        match self {
            StartError::Guard(
                GuardError::NotS390 { .. }
                | GuardError::LeftChanged { .. }
                | GuardError::Inexact(_)
                | GuardError::Unrestorable { .. }
                | GuardError::BadJournal(_)
                | GuardError::Journal(_),
            ) => REFUSED_OWN_EXIT,
            _ => REFUSED_EXIT,
        }
    }
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

/// Loads the rule file as cpuplugd does: up to the first line it refuses,
/// before any analysis a daemon does not need.
fn load_rules(
    path: &Path,
    facts: &crate::rules::SystemFacts,
) -> Result<(RuleSet, SourceFile), crate::rules::LoadError> {
    crate::rules::load_path_to(path, facts, crate::rules::Reach::FirstRefusal)
}

/// What a reload's loading thread hands back.
type Loaded = Result<(RuleSet, SourceFile), crate::rules::LoadError>;

/// A reload under way: the rule file is read and loaded on a thread of its
/// own while the loop goes on deciding with the old rules.
struct Reloading {
    /// Set (and the loop woken) once `result` holds the outcome.
    done: Arc<AtomicBool>,
    result: std::sync::mpsc::Receiver<Loaded>,
    /// Another SIGHUP came meanwhile: load again once this one is in.
    again: bool,
}

impl Reloading {
    /// Starts loading `options.rules`; wakes the calling thread when done.
    fn start(options: &RunOptions) -> std::io::Result<Reloading> {
        let done = Arc::new(AtomicBool::new(false));
        let (send, result) = std::sync::mpsc::channel();
        let (path, root, flag) = (
            options.rules.clone(),
            options.root.clone(),
            Arc::clone(&done),
        );
        let waiting = std::thread::current();
        std::thread::Builder::new()
            .name("plugtop-reload".into())
            .spawn(move || {
                let facts = RootReader::new().facts(&root);
                let _ = send.send(load_rules(&path, &facts));
                flag.store(true, Ordering::SeqCst);
                waiting.unpark();
            })?;
        Ok(Reloading {
            done,
            result,
            again: false,
        })
    }
}

/// A log line with the wall-clock time of day (UTC), as cpuplugd's
/// verbose log has one.
fn stamped(line: &str) -> String {
    let now = crate::kernel::live::wall_clock();
    format!("{} {line}", crate::report::time_of_day(now))
}

/// Logs what one step did, as every front end says it
/// ([`log_entries::step_lines`]), with the fields the journal keeps; the
/// rules' changes of the pool only when verbose, as cpuplugd logs them.
fn log_step(log: &mut dyn LogSink, step: &Step, session: &Session, verbose: bool) {
    let detail = if verbose {
        Detail::Verbose
    } else {
        Detail::Quiet
    };
    for line in log_entries::step_lines(step, session, detail, log.wants_fields()) {
        log.entry(&line.entry);
    }
}

/// The runner's state between intervals.
struct Runner<'a> {
    options: &'a RunOptions,
    log: &'a mut dyn LogSink,
    session: Session,
    actuator: &'a mut dyn Actuator,
    exposure: Option<Exposure>,
    /// A reload whose rules are not in yet.
    reloading: Option<Reloading>,
}

impl Runner<'_> {
    /// What the run reads of each interval: what the session decides and
    /// hints on, and the present CPUs every time when metrics report them.
    /// /proc/loadavg is read every interval whatever the rules name: a
    /// SIGHUP may bring rules that read an earlier interval's load
    /// (`cpustat.loadavg[1]`), and the history kept across the reload must
    /// hold the loads cpuplugd read then, not NaN (an invalid operation
    /// that skips the group where cpuplugd decides). When no rule names a
    /// load its text is only checked and kept; the reload converts it.
    fn interest(&self) -> Interest {
        let mut interest = self.session.interest();
        interest.present_each_interval |= self.exposure.is_some();
        interest.loadavg_text = true;
        interest
    }

    /// SIGHUP: starts loading the rule file off the loop (or notes that
    /// another load must follow the one under way).
    fn request_reload(&mut self) {
        if let Some(r) = &mut self.reloading {
            r.again = true;
            return;
        }
        let text = format!("reloading {}", self.options.rules.display());
        self.log.info(&text);
        match Reloading::start(self.options) {
            Ok(r) => self.reloading = Some(r),
            Err(e) => self.reload_failed(&format!("cannot start loading: {e}")),
        }
    }

    /// Whether a reload's rules are in, waiting to be taken.
    fn reload_ready(&self) -> bool {
        self.reloading
            .as_ref()
            .is_some_and(|r| r.done.load(Ordering::SeqCst))
    }

    /// Takes the rules a finished reload loaded (or logs why not); starts
    /// the next load when another SIGHUP came meanwhile. True when the
    /// rules changed.
    fn finish_reload(&mut self) -> bool {
        if !self.reload_ready() {
            return false;
        }
        let Some(r) = self.reloading.take() else {
            return false;
        };
        let loaded = r.result.try_recv().unwrap_or_else(|_| {
            Err(crate::rules::LoadError::Read {
                path: crate::rules::rule_file_name(&self.options.rules),
                source: std::io::Error::other("the loading thread ended without an answer"),
            })
        });
        let changed = match loaded {
            Ok((rules, file)) => {
                self.reload(rules, file);
                true
            }
            Err(e) => {
                // One entry, one line, for grep and the journal.
                self.reload_failed(&e.one_line());
                false
            }
        };
        if r.again {
            self.request_reload();
        }
        changed
    }

    fn reload_failed(&mut self, why: &str) {
        if let Some(x) = &self.exposure {
            x.metrics.reloaded(false);
        }
        let text = format!("reload failed, keeping the old rules: {why}");
        self.log
            .entry(&Entry::new(Priority::Err, text).id(message_id::RELOAD_FAILED));
    }

    fn reload(&mut self, rules: RuleSet, file: SourceFile) {
        if let Some(x) = &mut self.exposure {
            let m = &mut x.metrics;
            m.reloaded(true);
            m.set_rules(
                &file,
                &self.options.rules.display().to_string(),
                std::time::SystemTime::now(),
            );
            m.set_limits(
                &rules,
                rules.pace(self.options.interval.map(|d| d.as_secs_f64())),
            );
            m.set_counts(&crate::kernel::machine::identity(&self.options.root));
        }
        let events = self.session.reload(Arc::new(rules), file, self.actuator);
        if let Some(x) = &self.exposure {
            x.metrics.outcomes(&events);
        }
        let text = format!(
            "reloaded {}; history and start state kept",
            self.options.rules.display()
        );
        self.log
            .entry(&Entry::new(Priority::Notice, text).id(message_id::RELOADED));
        let step = Step {
            limits: events,
            ..Step::default()
        };
        log_step(self.log, &step, &self.session, self.options.verbose);
    }
}

/// Waits until `deadline` or a signal came, or a reload's rules are in.
fn wait(deadline: Instant, signals: &Signals, runner: &Runner<'_>) -> Option<Instant> {
    crate::pace::park_until(deadline, &|| {
        signals.stop.load(Ordering::SeqCst)
            || signals.reload.load(Ordering::SeqCst)
            || runner.reload_ready()
            || runner.log.output_closed()
    })
}

/// Runs on the live root until a signal or a fatal error; restores the
/// start state on the way out.
pub fn run(
    options: &RunOptions,
    log: &mut dyn LogSink,
    signals: &Signals,
) -> Result<Ending, StartError> {
    let mut source = LiveSource::new(&options.root).without_cpu_dirs();
    if options.mode == Mode::Observe {
        return run_on(options, &mut source, log, signals);
    }
    let mut actuator = RootActuator::new(&options.root)?;
    run_with(options, &mut source, &mut actuator, log, signals)
}

/// As [`run`], reading from any source; a finite source (a recording, in
/// observe mode) ends the run when it is exhausted.
pub fn run_on(
    options: &RunOptions,
    source: &mut dyn Source,
    log: &mut dyn LogSink,
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
    log: &mut dyn LogSink,
    signals: &Signals,
) -> Result<Ending, StartError> {
    let facts = source.facts();
    let (rules, file) = load_rules(&options.rules, &facts)?;
    if options.check_lpar {
        require_cpuinfo(&options.root)?;
    }
    // The verdict every front end shares (rules::ruleset::memory_verdict).
    if let Some(line) = rules.memory_off_line() {
        log.info(&line);
    }
    let rules = Arc::new(rules);
    let mode = options.mode;
    let acting = mode != Mode::Observe;
    if acting {
        guard::check_machine(&options.root, options.allow_non_zvm)?;
    }
    // Before the lock and the journal: an address that is taken refuses
    // the start with nothing to undo.
    let exposure = Exposure::start(options, &rules, &file)?;
    let first = match source.next_sample() {
        Some(Ok(s)) => s,
        Some(Err(e)) => return Err(StartError::Read(e)),
        None => return Err(StartError::NoReading),
    };
    let guard = take_guest(options, &first, actuator, rules.mem_enabled)?;
    log.entry(&started_entry(options, &rules));
    // Said once the start is taken, not when the address is bound: a start
    // refused after (exit 78) said "metrics at" as if it served (nu54 M5).
    if let Some(s) = exposure.as_ref().and_then(|x| x.server.as_ref()) {
        log.info(&format!("metrics at http://{}/metrics", s.addr));
    }
    if options.verbose {
        log.info(&stamped(table::columns(options.table).trim_end()));
    }
    if let Some(started) = options.on_started {
        started();
    }
    let mut runner = Runner {
        options,
        log,
        session: Session::new(Arc::clone(&rules), file, mode, options.flap),
        actuator,
        exposure,
        reloading: None,
    };
    // Nothing reads a trace of every interval but the metrics.
    if runner.exposure.is_none() {
        runner.session.trace_only_when_needed();
    }
    source.narrow(&runner.interest());
    let ending = run_loop(&mut runner, source, signals, first);
    if ending == Ending::Stopped {
        let entry = match signals.stopped_by() {
            Some(signal) => {
                let name = crate::stop_signals::name(signal);
                Entry::new(Priority::Info, format!("shutting down: ended by {name}"))
                    .field("PLUGTOP_SIGNAL", name)
            }
            None => Entry::new(Priority::Info, "shutting down"),
        };
        runner.log.entry(&entry.id(message_id::STOPPING));
    }
    let given_back = guard.map(|guard| give_back(guard, &mut runner));
    if let Some(x) = &runner.exposure {
        x.stop(runner.log);
    }
    if options.pid_file {
        crate::control::pid_file::remove(&options.root);
    }
    runner.log.info("terminated");
    Ok(match given_back {
        Some(GivenBack::JournalKept) => Ending::RestoreFailed,
        Some(GivenBack::Whole) | None => ending,
    })
}

/// The start's entry, with the mode, root and rule file as fields.
fn started_entry(options: &RunOptions, rules: &RuleSet) -> Entry {
    let on_off = |on: bool| if on { "on" } else { "off" };
    let text = format!(
        "plugtop {} started in {} mode on {} with {} (CPU group {}, memory group {})",
        env!("CARGO_PKG_VERSION"),
        options.mode,
        options.root.display(),
        options.rules.display(),
        on_off(rules.cpu_enabled),
        on_off(rules.mem_enabled),
    );
    Entry::new(Priority::Notice, text)
        .id(message_id::STARTED)
        .field("PLUGTOP_MODE", options.mode.key())
        .field("PLUGTOP_RULES", options.rules.display().to_string())
        .field("PLUGTOP_ROOT", options.root.display().to_string())
}

/// Takes the guest through the guard when acting, then writes the pid file
/// (only now: a refused start must not touch the pid file of the plugtop
/// that holds the guest).
/// The pool is put back only when the memory group is on (`pool`), as
/// cpuplugd does.
fn take_guest(
    options: &RunOptions,
    first: &Sample,
    actuator: &mut dyn Actuator,
    pool: bool,
) -> Result<Option<Guard>, StartError> {
    let guard = if options.mode != Mode::Observe {
        let guard_options = GuardOptions {
            state: options.state.clone(),
            force: options.force,
            allow_non_zvm: options.allow_non_zvm,
            pool,
            ..GuardOptions::new(&options.root)
        };
        Some(Guard::take(&guard_options, first)?)
    } else {
        None
    };
    if options.pid_file
        && let Err(e) = crate::control::pid_file::write(&options.root)
    {
        if let Some(guard) = guard {
            let _ = guard.give_back(actuator);
        }
        return Err(StartError::PidFile(e));
    }
    Ok(guard)
}

/// How giving the guest back at the end of a run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GivenBack {
    /// Every CPU and the pool are as they were at the start; the journal
    /// is gone.
    Whole,
    /// Something could not be put back: the journal is kept for
    /// `plugtop restore`.
    JournalKept,
}

/// Gives the guest back and logs how that went.
fn give_back(guard: Guard, runner: &mut Runner<'_>) -> GivenBack {
    let GiveBack { complete, lines } = guard.give_back(runner.actuator);
    let last = lines.len().saturating_sub(1);
    for (i, (severity, line)) in lines.into_iter().enumerate() {
        let info = severity == crate::control::session::MessageLevel::Info;
        let entry = Entry::new(if info { Priority::Info } else { Priority::Err }, line);
        // The outcome (the start state restored, or the journal kept) is
        // the restore's event; a failed write before it is a line of its own.
        let entry = if info || (!complete && i == last) {
            let whole = if complete { "1" } else { "0" };
            entry
                .id(message_id::RESTORED)
                .field("PLUGTOP_RESTORED", whole)
        } else {
            entry
        };
        runner.log.entry(&entry);
    }
    if complete {
        GivenBack::Whole
    } else {
        GivenBack::JournalKept
    }
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
        let mut began = Instant::now();
        let sample = match next.take() {
            Some(s) => s,
            None => {
                let interval = runner
                    .session
                    .rules()
                    .pace(options.interval.map(|d| d.as_secs_f64()));
                // A reload neither delays the next reading nor brings it
                // forward: its rules are loaded off the loop and taken
                // between readings, the old ones deciding until then.
                let deadline = crate::pace::deadline(began, interval);
                began = loop {
                    // The instant the wait saw the deadline pass, unless a
                    // signal ended it or a reload took time since: the
                    // clock is then read again.
                    let mut passed = wait(deadline, signals, runner);
                    if signals.stop.load(Ordering::SeqCst) {
                        return Ending::Stopped;
                    }
                    if runner.log.output_closed() {
                        return output_closed(runner, signals);
                    }
                    if signals.reload.swap(false, Ordering::SeqCst) {
                        runner.request_reload();
                        passed = None;
                    }
                    if runner.finish_reload() {
                        source.narrow(&runner.interest());
                        passed = None;
                    }
                    let now = passed.unwrap_or_else(Instant::now);
                    if now >= deadline {
                        break now;
                    }
                };
                match source.next_sample() {
                    Some(Ok(s)) => s,
                    Some(Err(e)) => {
                        if let Some(x) = &runner.exposure {
                            x.metrics.read_error(&e);
                        }
                        runner.log.error(&format!(
                            "skipping this interval: {}",
                            crate::error_chain::text(&e)
                        ));
                        continue;
                    }
                    None => return Ending::Stopped,
                }
            }
        };
        intervals += 1;
        crate::faults::panic_at(crate::faults::Site::Control, intervals);
        let sample = runner.session.shared(sample);
        runner.actuator.reading(&sample);
        let step = runner.session.step(Arc::clone(&sample), runner.actuator);
        if let Some(x) = runner.exposure.as_mut() {
            x.interval(
                (&runner.session, &step, &sample),
                began.elapsed(),
                runner.log,
            );
        }
        if options.verbose
            && let Some(d) = &step.decision
            && d.fatal.is_none()
        {
            let mut line = String::new();
            table::row(&mut line, d, options.table);
            runner.log.info(&stamped(line.trim_end()));
        }
        log_step(runner.log, &step, &runner.session, options.verbose);
        if step.fatal.is_some() {
            return Ending::Fatal;
        }
    }
}

/// The reader of the log went away (`plugtop run -f | head`): cpuplugd
/// dies of SIGPIPE at that write, its CPUs and pool left as they are;
/// plugtop ends as if SIGPIPE had stopped it (exit 141), the guest put
/// back first, and says so where it still can (stderr, when only stdout
/// was closed).
fn output_closed(runner: &mut Runner<'_>, signals: &Signals) -> Ending {
    let pipe = signal_hook::consts::signal::SIGPIPE;
    let _ = signals
        .stopped_by
        .compare_exchange(0, pipe, Ordering::SeqCst, Ordering::SeqCst);
    runner.log.error(
        "the log's reader went away (cpuplugd would die of SIGPIPE here, the guest \
         left as it is): putting the guest back and ending",
    );
    Ending::Stopped
}

/// cpuplugd does not start without /proc/cpuinfo, or with an empty one
/// (it reads it at start to tell z/VM from an LPAR; what it says turns
/// the memory group off through the facts, [`memory_verdict`]).
///
/// [`memory_verdict`]: crate::rules::ruleset::memory_verdict
fn require_cpuinfo(root: &Path) -> Result<(), StartError> {
    let refused = |reason| StartError::NoCpuinfo {
        path: root.join("proc/cpuinfo"),
        reason,
    };
    let text = crate::kernel::machine::cpuinfo(root).map_err(refused)?;
    if text.is_empty() {
        return Err(refused(std::io::Error::other("it is empty")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let ticks = CpuTicks {
            user: secs as u64 * 10,
            idle: secs as u64 * 90,
            ..CpuTicks::default()
        };
        Ok(Sample {
            loadavg: 0.1,
            runnable: 1.0,
            meminfo: FieldTable::from_pairs([("MemFree", 1000.0)]),
            vmstat: FieldTable::from_pairs([
                ("pswpin", 0.0),
                ("pswpout", 0.0),
                ("pgpgin", 0.0),
                ("pgpgout", 0.0),
            ]),
            cmm_pages: Some(0),
            polarization,
            ..Sample::bare(Stamp::new(secs, 0), ticks, 2, 4)
        })
    }

    fn run_script(script: Vec<Result<Sample, SourceError>>) -> Vec<String> {
        run_rules(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"0\"\n",
            script,
        )
    }

    /// Observe-only options for the rules at `rules`, everything else below `dir`.
    fn observing(dir: &Path, rules: PathBuf, verbose: bool) -> RunOptions {
        RunOptions {
            rules,
            root: dir.to_path_buf(),
            mode: Mode::Observe,
            state: dir.join("state"),
            force: false,
            verbose,
            table: crate::report::Layout::Wide,
            interval: Some(Duration::ZERO),
            allow_non_zvm: false,
            pid_file: false,
            flap: FlapConfig::default(),
            check_lpar: false,
            metrics: MetricsOptions::default(),
            on_started: None,
        }
    }

    fn run_rules(text: &str, script: Vec<Result<Sample, SourceError>>) -> Vec<String> {
        run_rules_logging(text, script)
            .lines
            .into_iter()
            .map(|(_, l)| l)
            .collect()
    }

    /// As [`run_rules`], the whole log: lines and structured entries.
    fn run_rules_logging(text: &str, script: Vec<Result<Sample, SourceError>>) -> Memory {
        let dir = tempfile::tempdir().expect("temporary directory");
        let rules = dir.path().join("r.conf");
        std::fs::write(&rules, text).expect("rules");
        let options = observing(dir.path(), rules, true);
        let mut log = Memory::default();
        let ended = run_on(&options, &mut Script(script), &mut log, &Signals::default());
        assert!(matches!(ended, Ok(Ending::Stopped)), "{ended:?}");
        log
    }

    /// A guest that takes every write, so the pool can move.
    #[derive(Default)]
    struct Obliging {
        pool: Vec<i64>,
    }

    impl Actuator for Obliging {
        fn plug(&mut self, _: &mut Vec<String>) -> Result<u32, crate::kernel::actuator::ActError> {
            Ok(2)
        }
        fn unplug(
            &mut self,
            _: &mut Vec<String>,
        ) -> Result<u32, crate::kernel::actuator::ActError> {
            Ok(1)
        }
        fn set_pool(&mut self, pages: i64) -> Result<(), crate::kernel::actuator::ActError> {
            self.pool.push(pages);
            Ok(())
        }
        fn set_online(
            &mut self,
            _: &[u32],
            _: &mut Vec<String>,
        ) -> Result<(), crate::kernel::actuator::ActError> {
            Ok(())
        }
        fn would_take(&self, _: crate::kernel::cpu_choice::CpuChange, _: usize) -> Vec<u32> {
            Vec::new()
        }
    }

    /// Acting on a pool that grows every interval, `plugtop run` logs the
    /// routine changes only when verbose, as cpuplugd does; the changes
    /// are made either way, and the start limits' correction of the pool
    /// is always said.
    #[test]
    fn routine_pool_changes_are_logged_only_when_verbose() {
        let run = |verbose: bool| {
            let dir = tempfile::tempdir().expect("temporary directory");
            let rules = dir.path().join("r.conf");
            std::fs::write(
                &rules,
                "UPDATE=\"1\"\nCMM_MIN=\"10\"\nCMM_MAX=\"1000\"\nCMM_INC=\"100\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n",
            )
            .expect("rules");
            // The guard makes sure each online CPU can be put back.
            for cpu in ["cpu0", "cpu1"] {
                let dir = dir.path().join("sys/devices/system/cpu").join(cpu);
                std::fs::create_dir_all(&dir).expect("cpu directory");
                std::fs::write(dir.join("online"), "1\n").expect("online");
            }
            let proc = dir.path().join("proc");
            std::fs::create_dir_all(proc.join("sys/vm")).expect("vm directory");
            std::fs::write(proc.join("sys/vm/cmm_pages"), "0\n").expect("cmm_pages");
            std::fs::write(
                proc.join("meminfo"),
                "MemTotal: 8192 kB\nMemFree: 1000 kB\n",
            )
            .expect("meminfo");
            let options = RunOptions {
                mode: Mode::Auto,
                allow_non_zvm: true,
                ..observing(dir.path(), rules, verbose)
            };
            let script: Vec<_> = (1..=5).map(|i| sample(i, None)).collect();
            let mut log = Memory::default();
            let mut guest = Obliging::default();
            let ended = run_with(
                &options,
                &mut Script(script),
                &mut guest,
                &mut log,
                &Signals::default(),
            );
            assert!(matches!(ended, Ok(Ending::Stopped)), "{ended:?}");
            let lines: Vec<String> = log.lines.into_iter().map(|(_, l)| l).collect();
            (lines, guest.pool)
        };
        let (quiet, written) = run(false);
        let (verbose, written_verbose) = run(true);
        assert_eq!(written, written_verbose, "the same writes either way");
        // Each reading says the pool is empty: the rules ask for 100 pages.
        assert!(
            written.iter().filter(|p| **p == 100).count() >= 3,
            "{written:?}"
        );
        let said = |lines: &[String], pages: i64| {
            lines
                .iter()
                .any(|l| l == &format!("changing number of pages permanently reserved to {pages}"))
        };
        // The start limits raise the pool from 0 to CMM_MIN: always said.
        assert!(said(&quiet, 10), "{quiet:#?}");
        assert!(!said(&quiet, 100), "{quiet:#?}");
        assert!(said(&verbose, 100), "{verbose:#?}");
    }

    /// A live source that, at its `at`th reading, rewrites the rules and
    /// asks for a reload (as SIGHUP does), and ends `readings` after the
    /// new rules were taken (the loop narrows it then), reading on while
    /// they load off the loop.
    struct Reloading<'a> {
        inner: LiveSource,
        signals: &'a Signals,
        rules: PathBuf,
        text: &'static str,
        at: usize,
        readings: usize,
        taken: usize,
        /// Readings since the reload's rules were taken.
        after: Option<usize>,
    }

    impl Source for Reloading<'_> {
        fn facts(&mut self) -> crate::rules::SystemFacts {
            self.inner.facts()
        }
        fn narrow(&mut self, interest: &Interest) {
            if self.taken >= self.at {
                self.after.get_or_insert(0);
            }
            self.inner.narrow(interest);
        }
        fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
            self.taken += 1;
            if let Some(after) = &mut self.after {
                *after += 1;
                if *after > self.readings {
                    return None;
                }
            }
            if self.taken == self.at {
                std::fs::write(&self.rules, self.text).expect("new rules");
                self.signals.reload.store(true, Ordering::SeqCst);
            }
            self.inner.next_sample()
        }
    }

    /// Rules that no load names, then (SIGHUP) rules that read an earlier
    /// interval's load: cpuplugd's history holds every load it read, so the
    /// first interval after the reload decides on the load read before it,
    /// never on one plugtop did not read (a NaN, an invalid operation).
    #[test]
    fn a_reload_to_rules_reading_earlier_loads_finds_them_read() {
        let (dir, root) = crate::kernel::root::fixture_copy();
        let cpu = root.join("sys/devices/system/cpu");
        std::fs::write(cpu.join("present"), "0-3\n").expect("present");
        std::fs::write(cpu.join("online"), "0-1\n").expect("online");
        std::fs::write(root.join("proc/cpuinfo"), "version = FF\n").expect("cpuinfo");
        let rules = dir.path().join("r.conf");
        std::fs::write(
            &rules,
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
        )
        .expect("rules");
        let options = RunOptions {
            root: root.clone(),
            ..observing(dir.path(), rules.clone(), true)
        };
        let signals = Signals::default();
        let mut secs = 0;
        let mut source = Reloading {
            inner: LiveSource::with_clock(
                &root,
                Box::new(move || {
                    secs += 1;
                    Stamp::new(secs, 0)
                }),
            ),
            signals: &signals,
            rules,
            text: "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"cpustat.loadavg[1] > 0\"\nHOTUNPLUG=\"0\"\n",
            at: 4,
            readings: 2,
            taken: 0,
            after: None,
        };
        let mut log = Memory::default();
        let ended = run_on(&options, &mut source, &mut log, &signals);
        assert!(matches!(ended, Ok(Ending::Stopped)), "{ended:?}");
        let lines: Vec<String> = log.lines.into_iter().map(|(_, l)| l).collect();
        assert!(
            lines.iter().any(|l| l.starts_with("reloaded")),
            "{lines:#?}"
        );
        assert!(
            !lines.iter().any(|l| l.contains("invalid operation")),
            "{lines:#?}"
        );
        // The fixture's load is 0.03: the first interval after the reload
        // plugs on the load read before it (kept as text, converted by the
        // reload), not on a NaN.
        let after = lines
            .iter()
            .skip_while(|l| !l.starts_with("reloaded"))
            .nth(1);
        assert!(
            after.is_some_and(|l| l.split_whitespace().nth(2) == Some("true")),
            "{lines:#?}"
        );
    }

    #[test]
    fn refusals_say_what_cpuplugd_and_earlier_plugtops_said() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let rules = dir.path().join("r.conf");
        std::fs::write(
            &rules,
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
        )
        .expect("rules");
        let options = observing(dir.path(), rules, false);
        let mut log = Memory::default();
        let ended = run_on(
            &options,
            &mut Script(Vec::new()),
            &mut log,
            &Signals::default(),
        );
        match ended {
            Err(e @ StartError::NoReading) => {
                assert_eq!(e.to_string(), "the source gave no reading")
            }
            other => panic!("{other:?}"),
        }
        // No /proc/cpuinfo under the root, or an empty one: cpuplugd
        // does not start.
        let refused = |said: String, why: &str| {
            let want = format!(
                "cannot open {}: {why}",
                dir.path().join("proc/cpuinfo").display()
            );
            assert!(said.starts_with(&want), "{said}");
        };
        match require_cpuinfo(dir.path()) {
            Err(e @ StartError::NoCpuinfo { .. }) => refused(crate::error_chain::text(&e), ""),
            other => panic!("{other:?}"),
        }
        std::fs::create_dir_all(dir.path().join("proc")).expect("proc");
        std::fs::write(dir.path().join("proc/cpuinfo"), "").expect("cpuinfo");
        match require_cpuinfo(dir.path()) {
            Err(e @ StartError::NoCpuinfo { .. }) => {
                refused(crate::error_chain::text(&e), "it is empty")
            }
            other => panic!("{other:?}"),
        }
        // Memory rules only, on an LPAR: nothing is left to run, refused
        // as the loader refuses it, in cpuplugd's words.
        std::fs::write(dir.path().join("proc/cpuinfo"), "vendor_id : IBM/S390\n").expect("cpuinfo");
        require_cpuinfo(dir.path()).expect("an LPAR's cpuinfo");
        let file = crate::rules::SourceFile::new(
            "r.conf",
            b"UPDATE=\"1\"\nCMM_MIN=\"0\"\nCMM_MAX=\"10\"\nCMM_INC=\"1\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let facts = crate::kernel::root::RootReader::new().facts(dir.path());
        assert_eq!(facts.zvm_guest, Some(false));
        let refusal = crate::rules::load(&file, &facts).refusal.map(|r| r.message);
        assert_eq!(
            refusal.as_deref().map(str::trim_end),
            Some(
                "Exiting, because neither a valid cpu nor a valid memory hotplug configuration was found."
            )
        );
    }

    #[test]
    fn unreadable_intervals_and_a_clock_going_backwards_are_skipped() {
        let lines = run_script(vec![
            sample(10, None),
            sample(11, None),
            Err(SourceError::Open {
                path: "/proc/stat".into(),
                source: std::io::Error::other("gone"),
            }),
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
        let log = run_rules_logging(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nidle_ticks=\"cpustat.idle[0] - cpustat.idle[1]\"\nHOTPLUG=\"idle_ticks < 50\"\nHOTUNPLUG=\"idle_ticks > 50\"\n",
            script,
        );
        // One entry for the event, the changes behind it its fields (a
        // journal entry each, not three).
        let flapping: Vec<&Entry> = log
            .entries
            .iter()
            .filter(|e| {
                e.fields
                    .contains(&("MESSAGE_ID", message_id::FLAPPING.as_str().into()))
            })
            .collect();
        assert_eq!(flapping.len(), 1, "{:?}", log.entries);
        let entry = flapping[0];
        assert_eq!(entry.priority, Priority::Warning);
        assert!(
            entry
                .message
                .starts_with("warning: CPU count flapping: 4 reversals in the last 30 intervals"),
            "{}",
            entry.message
        );
        let changes: Vec<&str> = entry
            .fields
            .iter()
            .filter(|(k, _)| *k == "PLUGTOP_CHANGE")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert!(
            changes.iter().any(|c| c.contains(
                "HOTPLUG false → true: idle_ticks (line 4) went 90 ticks → 10 ticks across 50"
            )),
            "{changes:?}"
        );
        assert!(
            !log.lines.iter().any(|(_, l)| l.starts_with("  ")),
            "no detail lines of their own: {:?}",
            log.lines
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
