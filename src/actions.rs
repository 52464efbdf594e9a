//! What each subcommand does with its arguments: the binary's side of the
//! command line, where library errors become messages (anyhow) and exit
//! statuses.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use crate::cli::*;
use plugtop::commands::{self, Pace, Status, Wait};
use plugtop::control::controller::Mode;
use plugtop::control::guard::GuardOptions;
use plugtop::daemon;
use plugtop::kernel::Source;
use plugtop::kernel::claimed_dir::DirUse;
use plugtop::kernel::live::{LiveSource, wall_clock};
use plugtop::kernel::machine::describe;
use plugtop::kernel::recording::{Header, RecordingSource};
use plugtop::kernel::root::RootReader;
use plugtop::kernel::snapshots::SnapshotSource;
use plugtop::logging::{Console, Journal, LogSink, SysLog};
use plugtop::report::TerminalText;

/// `plugtop` without a subcommand: the screen, or line mode.
pub fn screen(cli: &Cli, out: &mut dyn Write) -> anyhow::Result<Status> {
    out.flush()?;
    plugtop::control::guard::install_failure_policy();
    if cli.replay.is_none() && cli.sim.is_none() {
        require_root(&cli.root)?;
    }
    if let Some(s) = cli.interval {
        positive_interval(s)?;
    }
    let options = plugtop::tui::run::Options {
        rules: cli.config.clone(),
        root: cli.root.clone(),
        replay: cli.replay.clone(),
        mode: match cli.mode {
            UiMode::Observe => Mode::Observe,
            UiMode::Step => Mode::Step,
            UiMode::Auto => Mode::Auto,
        },
        batch: cli.batch,
        mono: cli.mono,
        interval: cli.interval,
        count: cli.count,
        sim: cli.sim.clone(),
        old_kernel: cli.old_kernel,
        allow_non_zvm: cli.allow_non_zvm,
    };
    if plugtop::tui::run::line_mode_wanted(cli.batch) {
        if options.mode != Mode::Observe {
            // Line mode has no one to confirm a step and no guard for the
            // guest: it reads and prints. Saying nothing would let a script
            // believe it acts.
            let asked = if options.mode == Mode::Step {
                "step"
            } else {
                "auto"
            };
            anyhow::bail!(
                "line mode (--batch, or output that is no terminal) only observes; \
                 --mode {asked} needs the screen on a terminal, or `plugtop run --mode auto` \
                 to act without one"
            );
        }
        let mut lines = TerminalText::new(&mut *out);
        plugtop::tui::run::run_lines(&options, &mut lines)?;
        lines.flush()?;
        drop(lines);
        out.flush()?;
        return Ok(Status::Ok);
    }
    Ok(match plugtop::tui::screen::run_screen(&options)? {
        plugtop::tui::run::ScreenEnd::Quit => Status::Ok,
        plugtop::tui::run::ScreenEnd::Signal(signal) => {
            // The terminal may be gone (an SSH drop): a failed print must
            // not turn the exit into a panic.
            say(&format!(
                "plugtop: ended by signal {signal}; the guest was put back"
            ));
            Status::Code(plugtop::stop_signals::exit_status(signal).clamp(0, 255) as u8)
        }
        plugtop::tui::run::ScreenEnd::RestoreFailed(why) => {
            say(&format!("plugtop: {why}"));
            Status::Failed
        }
    })
}

/// `plugtop whatif`.
pub fn whatif(args: WhatifArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let WhatifArgs {
        config,
        against,
        from,
        flap,
    } = args;
    if from.root.is_some() || (from.replay.is_none() && from.snapshots.is_none()) {
        anyhow::bail!(
            "whatif needs a history: --replay FILE or --snapshots DIR (record a guest with `plugtop record`)"
        );
    }
    let (mut source, _) = open_source(&from, None)?;
    let name = from
        .replay
        .as_ref()
        .or(from.snapshots.as_ref())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let w = commands::whatif::compare(
        source.as_mut(),
        &name,
        &config,
        against.as_deref(),
        flap.config(),
    )?;
    write!(TerminalText::new(out), "{}", commands::whatif::render(&w))?;
    if let Some(warning) = source.warning() {
        complain(&format!("plugtop: warning: {warning}"));
    }
    Ok(Status::Ok)
}

/// `plugtop sim`.
pub fn sim(args: SimArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let SimArgs {
        scenario,
        config,
        duration,
        speed,
        fast,
        report,
        report_format,
        old_kernel,
        compare,
        record,
        interval,
        serve,
        flap,
    } = args;
    let scenario = plugtop::sim::Scenario::load(&scenario)?;
    let duration = duration.as_deref().map(sim_duration).transpose()?;
    let speed = checked_speed(speed.unwrap_or(1.0))?;
    let mut wait = |d: Duration| {
        if !fast {
            std::thread::sleep(plugtop::pace::scaled(d, speed));
        }
    };
    if let Some(i) = interval {
        positive_interval(i)?;
    }
    let options = plugtop::sim::run::SimOptions {
        duration,
        interval,
        old_kernel,
        record,
        keep_timeline: false,
        flap: flap.config(),
    };
    if let Some(root) = serve {
        // Refused before anything is written: `/`, or a directory that
        // holds someone else's files.
        let dir = plugtop::kernel::claimed_dir::claim(&root, DirUse::ServedRoot)?;
        let signals = daemon::Signals::install()?;
        let mut guest = plugtop::sim::run::guest_for(&scenario, &options);
        eprintln!(
            "plugtop: simulating {} below {} (point `plugtop --root {}` or `plugtop run --root {}` at it; Ctrl-C stops)",
            plugtop::report::terminal_safe(&scenario.name),
            root.display(),
            root.display(),
            root.display()
        );
        plugtop::sim::serve::serve(&mut guest, &dir, &signals.stop, &mut wait, &mut |l| {
            eprintln!("{}", plugtop::report::terminal_safe(l))
        })
        .with_context(|| format!("cannot write below {}", root.display()))?;
        return Ok(Status::Ok);
    }
    let config = config.context("a rule file is needed: -c FILE")?;
    let quiet = report || compare.is_some();
    // With a JSON report, standard output holds only the JSON: the action
    // lines go to standard error.
    let json = matches!(report_format, CheckFormat::Json);
    let mut print = |l: &str| {
        // A closed pipe (`| head`) must not stop the run's report.
        let l = plugtop::report::terminal_safe(l);
        if quiet {
        } else if json {
            let _ = writeln!(std::io::stderr(), "{l}");
        } else {
            let _ = writeln!(std::io::stdout(), "{l}");
        }
    };
    let first = plugtop::sim::run::simulate(&scenario, &config, &options, &mut wait, &mut print)?;
    let second = match &compare {
        Some(other) => {
            let options = plugtop::sim::run::SimOptions {
                record: None,
                ..options.clone()
            };
            Some(plugtop::sim::run::simulate(
                &scenario,
                other,
                &options,
                &mut |_| {},
                &mut |_| {},
            )?)
        }
        None => None,
    };
    let files = [config.as_path(), compare.as_deref().unwrap_or(&config)];
    finish_sim(
        out,
        report_format,
        quiet,
        &first,
        second.as_ref(),
        files,
        old_kernel,
    )
}

/// The report, unless the rules stopped the simulated cpuplugd: a run
/// stopped early reports zeros that mean nothing, so it says why instead
/// (a JSON report still comes, with its `fatal` field).
fn finish_sim(
    out: &mut dyn Write,
    report_format: CheckFormat,
    quiet: bool,
    first: &plugtop::sim::run::SimOutcome,
    second: Option<&plugtop::sim::run::SimOutcome>,
    files: [&Path; 2],
    old_kernel: bool,
) -> anyhow::Result<Status> {
    let json = matches!(report_format, CheckFormat::Json);
    let stopped: Vec<String> = [Some(first), second]
        .into_iter()
        .flatten()
        .zip(files)
        .filter_map(|(o, file)| {
            o.report
                .fatal
                .as_ref()
                .map(|f| sim_stopped(file, f, &o.report, old_kernel))
        })
        .collect();
    if stopped.is_empty() || json {
        print_reports(out, report_format, quiet, first, second)?;
    }
    for s in &stopped {
        eprintln!("plugtop: {}", plugtop::report::terminal_safe(s));
    }
    Ok(if stopped.is_empty() {
        Status::Ok
    } else {
        Status::Failed
    })
}

/// `--duration` in seconds: 1h, 15m, 90s, 12:00 or plain seconds.
fn sim_duration(d: &str) -> anyhow::Result<f64> {
    plugtop::sim::scenario::seconds(d)
        .filter(|s| *s > 0.0)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--duration {d:?} is not a duration like 1h, 15m, 90s or 12:00 (at most 366 days)"
            )
        })
}

/// Why a simulated cpuplugd stopped under `file`, with the `--old-kernel`
/// hint when it stopped on a field only old kernels have.
fn sim_stopped(
    file: &Path,
    fatal: &str,
    report: &plugtop::sim::report::SimReport,
    old_kernel: bool,
) -> String {
    let old_name = ["_dma", "_normal", "_movable", "_dma32", "_high"]
        .iter()
        .any(|suffix| fatal.contains(&format!("{suffix} not found")));
    let hint = if old_name && !old_kernel {
        "; these rules name /proc/vmstat fields of old kernels (zone-suffixed, as in the seed paper): run with --old-kernel"
    } else {
        ""
    };
    format!(
        "{} stopped the simulated cpuplugd after {} (as cpuplugd would exit): {fatal}{hint}",
        file.display(),
        plugtop::sim::report::clock(report.seconds),
    )
}

/// The simulator's report(s), as text or JSON.
fn print_reports(
    out: &mut dyn Write,
    format: CheckFormat,
    quiet: bool,
    first: &plugtop::sim::run::SimOutcome,
    second: Option<&plugtop::sim::run::SimOutcome>,
) -> anyhow::Result<()> {
    match format {
        CheckFormat::Json => match second {
            Some(b) => {
                let both = serde_json::json!([first.report, b.report]).to_string();
                writeln!(out, "{}", plugtop::report::terminal_safe_json(&both))?
            }
            None => {
                let one = serde_json::to_string(&first.report)?;
                writeln!(out, "{}", plugtop::report::terminal_safe_json(&one))?
            }
        },
        CheckFormat::Text => {
            let mut out = TerminalText::new(out);
            match second {
                Some(b) => write!(
                    out,
                    "{}",
                    plugtop::sim::report::side_by_side(&first.report, &b.report)
                )?,
                None => {
                    if !quiet {
                        writeln!(out)?;
                    }
                    write!(out, "{}", plugtop::sim::report::text(&first.report))?
                }
            }
            out.flush()?;
        }
    }
    Ok(())
}

/// `plugtop check`.
pub fn check(args: CheckArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let CheckArgs { file, root, format } = args;
    require_root(&root)?;
    let source = commands::eval::read_rule_file(&file)
        .with_context(|| format!("cannot read {}", plugtop::rules::rule_file_name(&file)))?;
    let facts = RootReader::new().facts(&root);
    Ok(match format {
        CheckFormat::Text => commands::check::run(
            &source,
            &facts,
            commands::check::DiagnosticFormat::Text,
            &mut TerminalText::new(out),
        )?,
        CheckFormat::Json => commands::check::run(
            &source,
            &facts,
            commands::check::DiagnosticFormat::Json,
            out,
        )?,
    })
}

/// `plugtop eval`.
pub fn eval(args: EvalArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let EvalArgs {
        config,
        from,
        interval,
        count,
        jsonl,
        trace,
    } = args;
    let rules = commands::eval::read_rule_file(&config)
        .with_context(|| format!("cannot read {}", config.display()))?;
    let (mut source, live) = open_source(&from, None)?;
    let format = if jsonl {
        commands::eval::DecisionFormat::Jsonl
    } else if trace {
        commands::eval::DecisionFormat::Trace
    } else {
        commands::eval::DecisionFormat::Table
    };
    let wait = match (live, interval) {
        (false, _) => Wait::None,
        (true, Some(s)) => Wait::Every(positive_interval(s)?),
        (true, None) => Wait::Update,
    };
    let pace = Pace { count, wait };
    // The table and the trace quote the rule file (a refusal's position):
    // text for a terminal. JSON lines escape by their own rules.
    let mut text;
    let out: &mut dyn Write = if jsonl {
        out
    } else {
        text = TerminalText::new(out);
        &mut text
    };
    let status = commands::eval::run(
        &rules,
        source.as_mut(),
        format,
        pace,
        out,
        &mut std::thread::sleep,
    )?;
    out.flush()?;
    if let Some(w) = source.warning() {
        complain(&format!("plugtop: warning: {w}"));
    }
    Ok(status)
}

/// `plugtop run`.
pub fn run_headless(args: RunArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let RunArgs {
        config,
        foreground,
        verbose,
        version: _,
        root,
        mode,
        state,
        force,
        allow_non_zvm,
        replay,
        interval_ms,
        flap,
        metrics_listen,
        metrics_textfile,
    } = args;
    out.flush()?;
    if replay.is_some() && mode != RunMode::Observe {
        anyhow::bail!("--replay only goes with --mode observe: a recording cannot be acted on");
    }
    if replay.is_none() {
        require_root_dir(&root)?;
    }
    let child = std::env::var_os("PLUGTOP_DAEMON_CHILD").is_some();
    if !foreground && !child {
        return daemonize();
    }
    plugtop::control::guard::install_failure_policy();
    let options = daemon::RunOptions {
        // A bare name is taken from the current directory, as the user meant.
        state: match state {
            Some(s) => {
                std::path::absolute(&s).with_context(|| format!("--state {}", s.display()))?
            }
            None => plugtop::control::journal::default_path(&root),
        },
        rules: config,
        root,
        mode: if mode == RunMode::Auto {
            Mode::Auto
        } else {
            Mode::Observe
        },
        force,
        verbose,
        interval: interval_ms.map(Duration::from_millis),
        allow_non_zvm,
        flap: flap.config(),
        check_lpar: replay.is_none(),
        metrics: daemon::MetricsOptions {
            listen: metrics_listen,
            textfile: metrics_textfile,
        },
        on_started: child.then_some(tell_parent as fn()),
        // A daemon's pid file, beneath the root as every write there.
        pid_file: child,
    };
    let (mut log, system_log) = log_sink(child);
    let log = log.as_mut();
    let signals = daemon::Signals::install().context("cannot install signal handlers")?;
    let ended = match &replay {
        Some(file) => {
            let mut source = RecordingSource::open(file)?;
            daemon::run_on(&options, &mut source, log, &signals)
        }
        None => daemon::run(&options, log, &signals),
    };
    Ok(match ended {
        // SIGTERM and SIGINT are how a service is stopped (cpuplugd exits 0);
        // any other signal still ends with the status it would have given,
        // the guest put back first, so a service manager restarts the run.
        Ok(daemon::Ending::Stopped) => match signals.stopped_by() {
            Some(signal) if !plugtop::stop_signals::is_request_to_stop(signal) => {
                Status::Code(plugtop::stop_signals::exit_status(signal).clamp(0, 255) as u8)
            }
            _ => Status::Ok,
        },
        Ok(daemon::Ending::Fatal | daemon::Ending::RestoreFailed) => Status::Failed,
        // cpuplugd exits 1 on every start-up refusal; a daemon's refusal
        // goes to its log at priority err as well.
        Err(e) => {
            if system_log {
                log.entry(&plugtop::logging::Entry {
                    priority: plugtop::logging::Priority::Err,
                    message: format!("refused to start: {e}"),
                    fields: vec![("PLUGTOP_REFUSED", "1".into())],
                });
            }
            complain(&format!("plugtop: {e}"));
            Status::Failed
        }
    })
}

/// Where `plugtop run` logs: a daemon (or a foreground run whose stderr
/// is the journal's stream) to the journal with structured fields when
/// this machine has one, else to syslog; in the foreground, to the
/// terminal. The flag says whether that is the system's log (a refusal
/// then goes there too, not only to the parent's stderr).
fn log_sink(child: bool) -> (Box<dyn LogSink>, bool) {
    // In the foreground under systemd (the unit runs `plugtop run -f`),
    // stderr is the journal's stream: write to the journal itself, fields
    // and priorities included.
    if !child && !systemd_journal_logger::connected_to_journal() {
        return (Box::new(Console), false);
    }
    if let Some(j) = Journal::connect() {
        return (Box::new(j), child);
    }
    let syslog = SysLog::new();
    let connected = syslog.connected();
    (Box::new(syslog), connected)
}

/// `plugtop restore`.
pub fn restore(args: RestoreArgs, _out: &mut dyn Write) -> anyhow::Result<Status> {
    let RestoreArgs { state, root } = args;
    let mut options = GuardOptions::new(&root);
    if let Some(state) = state {
        options.state =
            std::path::absolute(&state).with_context(|| format!("--state {}", state.display()))?;
    }
    let mut log = Console;
    // A refusal (a bad journal, a running plugtop, a held lock) wrote
    // nothing: exit 1, as `run` does for its refusals.
    let outcome = match plugtop::control::guard::restore_from_journal(&options) {
        Ok(outcome) => outcome,
        Err(e) => {
            log.error(&e.to_string());
            return Ok(Status::Failed);
        }
    };
    match outcome {
        None => {
            log.info(&format!(
                "nothing to restore: no journal at {}",
                options.state.display()
            ));
            Ok(Status::Ok)
        }
        Some(outcome) => {
            for (severity, line) in &outcome.lines {
                match severity {
                    plugtop::control::session::MessageLevel::Info => log.info(line),
                    _ => log.error(line),
                }
            }
            Ok(if outcome.complete {
                Status::Ok
            } else {
                Status::Failed
            })
        }
    }
}

/// `plugtop record`.
pub fn record(args: RecordArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let RecordArgs {
        output,
        export_snapshots,
        from,
        interval,
        count,
    } = args;
    let (mut source, live) = open_source(&from, Some(Path::new("/")))?;
    let wait = if live {
        Wait::Every(positive_interval(interval)?)
    } else {
        Wait::None
    };
    let machine = match (&from.replay, &from.snapshots) {
        (Some(file), _) => RecordingSource::open(file).map(|r| r.header().clone()).ok(),
        (None, Some(dir)) => SnapshotSource::open(dir)
            .ok()
            .and_then(|s| s.first_dir())
            .map(|d| header_for(&d, interval)),
        (None, None) => Some(header_for(
            from.root.as_deref().unwrap_or(Path::new("/")),
            interval,
        )),
    };
    let header = machine.unwrap_or_else(|| header_for(Path::new("/nonexistent"), interval));
    let target = match (&output, &export_snapshots) {
        (_, Some(dir)) => commands::record::Destination::Snapshots(dir),
        (Some(path), None) => commands::record::Destination::Recording { path, header },
        (None, None) => {
            anyhow::bail!("say where to write: -o FILE or --export-snapshots DIR")
        }
    };
    Ok(commands::record::run(
        source.as_mut(),
        target,
        Pace { count, wait },
        out,
        &mut std::thread::sleep,
    )?)
}

/// Opens the source named on the command line (a live root when none is).
fn open_source(
    from: &From,
    default_root: Option<&Path>,
) -> anyhow::Result<(Box<dyn Source>, bool)> {
    if let Some(dir) = &from.snapshots {
        let s = SnapshotSource::open(dir)
            .with_context(|| format!("cannot read snapshots in {}", dir.display()))?;
        return Ok((Box::new(s), false));
    }
    if let Some(file) = &from.replay {
        return Ok((Box::new(RecordingSource::open(file)?), false));
    }
    match from.root.as_deref().or(default_root) {
        Some(root) => {
            require_root(root)?;
            Ok((Box::new(LiveSource::new(root)), true))
        }
        None => {
            anyhow::bail!("say where to read from: --snapshots DIR, --replay FILE or --root DIR")
        }
    }
}

/// A root to read a guest from must be a directory with a readable
/// `proc/stat`: a missing or unreadable one is one clear error (exit 2),
/// not false rule errors from the empty readings it would give.
fn require_root(root: &Path) -> anyhow::Result<()> {
    require_root_dir(root)?;
    let stat = root.join("proc/stat");
    let read = plugtop::kernel::in_root::RootDir::open(root)
        .and_then(|dir| dir.read_small(c"proc/stat", 1 << 20));
    if let Err(e) = read {
        anyhow::bail!(
            "--root {}: cannot read {}: {e} (a root holds proc/ and sys/ laid out like /)",
            root.display(),
            stat.display()
        );
    }
    Ok(())
}

/// The root must at least be a directory. `plugtop run` checks no more
/// itself: a guest whose /proc cannot be read is refused as cpuplugd
/// refuses it (exit 1), but a root that is not there is a usage error.
fn require_root_dir(root: &Path) -> anyhow::Result<()> {
    if !root.is_dir() {
        anyhow::bail!(
            "--root {}: no such directory (a root holds proc/ and sys/ laid out like /)",
            root.display()
        );
    }
    Ok(())
}

/// The shortest `--interval`: shorter ones read as fast as the machine
/// can (what `UPDATE="0"` would do, which cpuplugd refuses), and cost the
/// guest a CPU instead of the fraction of a percent plugtop is allowed.
const SHORTEST_INTERVAL: f64 = 0.001;

/// The longest `--interval`: a day. Longer is no monitoring any more, and
/// numbers like 1e300 or inf are not lengths of time at all.
const LONGEST_INTERVAL: f64 = 86_400.0;

/// `--interval S` as a duration: between [`SHORTEST_INTERVAL`] and
/// [`LONGEST_INTERVAL`] seconds.
fn positive_interval(s: f64) -> anyhow::Result<Duration> {
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

/// The slowest `--speed`: a thousand times slower than real time. Slower
/// would make one interval of a simulation a wait of days, or longer than
/// a `Duration` holds.
const SLOWEST_SPEED: f64 = 0.001;

/// The fastest `--speed`; beyond it `--fast` says what is meant.
const FASTEST_SPEED: f64 = 1_000_000.0;

/// `--speed X` checked: a finite number between [`SLOWEST_SPEED`] and
/// [`FASTEST_SPEED`].
fn checked_speed(speed: f64) -> anyhow::Result<f64> {
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

/// A recording header for the machine under `root`.
fn header_for(root: &Path, interval: f64) -> Header {
    let m = describe(root);
    let present_cpus = plugtop::kernel::machine::present_cpus(root);
    Header {
        host: m.host,
        kernel: m.kernel,
        cpu_model: m.cpu_model,
        root: root.display().to_string(),
        page_size: m.page_size,
        present_cpus,
        interval_us: (interval.max(0.0) * 1e6) as u64,
        started: wall_clock(),
    }
}

/// Detaches like a daemon without `fork`: starts this program again in the
/// background in its own process group, with `-f` and no terminal, and
/// waits until it has started. As with cpuplugd, a child that cannot start
/// makes the parent say why and exit 1. The child logs to the system log
/// and writes a pid file.
fn daemonize() -> anyhow::Result<Status> {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let exe = std::env::current_exe().context("cannot find this program")?;
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    args.push("-f".into());
    let mut child = std::process::Command::new(exe)
        .args(args)
        .env("PLUGTOP_DAEMON_CHILD", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .context("cannot start the daemon")?;
    let Some(stderr) = child.stderr.take() else {
        return Ok(Status::Ok);
    };
    let mut said = Vec::new();
    for line in std::io::BufReader::new(stderr).lines() {
        let line = line.unwrap_or_default();
        if line == daemon::STARTED {
            return Ok(Status::Ok);
        }
        said.push(line);
    }
    let status = child.wait().context("cannot wait for the daemon")?;
    for line in said {
        complain(&line);
    }
    Ok(if status.success() {
        Status::Ok
    } else {
        Status::Failed
    })
}

/// The detached child's word to its waiting parent that it has started.
fn tell_parent() {
    eprintln!("{}", daemon::STARTED);
}

/// A message on stderr that may quote a file (an error, a warning, what
/// the daemon said before it detached): made safe for the terminal line by
/// line, as `main` shows errors.
fn complain(text: &str) {
    say(&plugtop::report::terminal_safe_lines(text));
}

/// A line on stderr that never panics, for when the terminal may be gone.
fn say(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{text}");
}
