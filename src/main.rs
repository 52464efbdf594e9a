//! The `plugtop` command line: parse arguments, call the library, report.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};

use plugtop::commands::{self, Status};
use plugtop::commands::{Pace, Wait};
use plugtop::control::controller::Mode;
use plugtop::daemon;
use plugtop::kernel::Source;
use plugtop::kernel::live::{LiveSource, wall_clock};
use plugtop::kernel::machine::describe;
use plugtop::kernel::recording::{Header, RecordingSource};
use plugtop::kernel::root::RootReader;
use plugtop::kernel::snapshots::SnapshotSource;
use plugtop::logging::{Console, Log, SysLog};

#[derive(Parser)]
#[command(
    name = "plugtop",
    version,
    about = "Monitor and control cpuplugd rule files",
    long_about = "Monitor and control cpuplugd rule files.\n\nWithout a subcommand, plugtop observes this machine with the built-in recommended rules (or -c FILE) and prints what cpuplugd would decide every interval. It never writes to the system."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Rule file to observe with (default: the built-in recommended rules).
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// The machine to observe (its proc/ and sys/).
    #[arg(long, default_value = "/")]
    root: PathBuf,
    /// Stop after this many readings.
    #[arg(long)]
    count: Option<usize>,
    /// Seconds between readings (default: the rule file's UPDATE).
    #[arg(long)]
    interval: Option<f64>,
    /// Replay a recording instead of reading the machine.
    #[arg(long, conflicts_with = "root")]
    replay: Option<PathBuf>,
    /// Start in this mode (step and auto change the guest; they take the lock).
    #[arg(long, value_enum, default_value_t = UiMode::Observe)]
    mode: UiMode,
    /// One line per interval instead of the screen (also when TERM=dumb or not on a terminal).
    #[arg(long)]
    batch: bool,
    /// No colours (NO_COLOR is respected too).
    #[arg(long)]
    mono: bool,
    /// Watch and drive a simulated guest playing this scenario (see examples/scenarios).
    #[arg(long, conflicts_with_all = ["root", "replay"])]
    sim: Option<PathBuf>,
    /// With --sim: /proc/vmstat carries the old zone-suffixed names.
    #[arg(long, requires = "sim")]
    old_kernel: bool,
    /// Let step and autonomous mode change this machine although it is not
    /// an s390 z/VM guest (by default plugtop refuses on such a `/`).
    #[arg(long)]
    allow_non_zvm: bool,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum UiMode {
    Observe,
    Step,
    Auto,
}

#[derive(Subcommand)]
enum Command {
    /// Report every error and warning in a rule file, with line and column.
    Check {
        /// The rule file.
        file: PathBuf,
        /// The machine to check names against (its proc/ and sys/).
        #[arg(long, default_value = "/")]
        root: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        format: CheckFormat,
    },
    /// Decide every interval as cpuplugd would, from a recording, snapshots or a live root; writes nothing.
    Eval {
        /// The rule file.
        #[arg(short = 'c', long = "config")]
        config: PathBuf,
        #[command(flatten)]
        from: From,
        /// Seconds between live readings (default: the rule file's UPDATE).
        #[arg(long)]
        interval: Option<f64>,
        /// Stop after this many readings.
        #[arg(long)]
        count: Option<usize>,
        /// Print the conformance JSON lines instead of a table.
        #[arg(long, conflicts_with = "trace")]
        jsonl: bool,
        /// Show the truth trace of every rule evaluated, down to each sub-expression.
        #[arg(long)]
        trace: bool,
    },
    /// Act on the guest headless: a drop-in for `cpuplugd -c FILE -f -V`.
    #[command(version, disable_version_flag = true)]
    Run {
        /// The rule file (cpuplugd's -c).
        #[arg(short = 'c', long = "config")]
        config: PathBuf,
        /// Stay in the foreground and log to the terminal (cpuplugd's -f).
        #[arg(short = 'f', long)]
        foreground: bool,
        /// Log the values behind every interval's decision (cpuplugd's -V).
        #[arg(short = 'V', long)]
        verbose: bool,
        /// Print the version (cpuplugd's -v).
        #[arg(short = 'v', long = "version", action = clap::ArgAction::Version)]
        version: Option<bool>,
        /// The guest's root directory.
        #[arg(long, default_value = "/")]
        root: PathBuf,
        /// auto acts like cpuplugd; observe only logs what it would do.
        #[arg(long, value_enum, default_value_t = RunMode::Auto)]
        mode: RunMode,
        /// The restore journal (default ROOT/run/plugtop/state).
        #[arg(long)]
        state: Option<PathBuf>,
        /// Start although a dead plugtop left a journal (its start state is kept).
        #[arg(long)]
        force: bool,
        /// Replay a recording instead of reading the guest (observe mode only).
        #[arg(long)]
        replay: Option<PathBuf>,
        /// Test-only: milliseconds between intervals instead of UPDATE.
        #[arg(long, hide = true)]
        interval_ms: Option<u64>,
        #[command(flatten)]
        flap: FlapArgs,
    },
    /// Put CPUs and the pool back after a plugtop that was killed or crashed.
    Restore {
        /// The journal (default ROOT/run/plugtop/state).
        #[arg(long)]
        state: Option<PathBuf>,
        /// The guest's root directory.
        #[arg(long, default_value = "/")]
        root: PathBuf,
    },
    /// Re-decide a recording with another rule file, side by side with a second file or with what the guest did.
    Whatif {
        /// The rule file to try.
        #[arg(short = 'c', long = "config")]
        config: PathBuf,
        /// Compare with this rule file (default: what the recorded guest did).
        #[arg(long)]
        against: Option<PathBuf>,
        #[command(flatten)]
        from: From,
        #[command(flatten)]
        flap: FlapArgs,
    },
    /// Play a scenario on a simulated guest under a rule file and report how the rules did.
    Sim {
        /// The scenario file (TOML; see examples/scenarios/README.md).
        scenario: PathBuf,
        /// The rule file that controls the guest.
        #[arg(short = 'c', long = "config", required_unless_present = "serve")]
        config: Option<PathBuf>,
        /// How long to run ("12:00" or seconds; default: the scenario's duration).
        #[arg(long)]
        duration: Option<String>,
        /// Simulated seconds per real second (default 1: real time).
        #[arg(long, conflicts_with = "fast")]
        speed: Option<f64>,
        /// As fast as the machine can.
        #[arg(long)]
        fast: bool,
        /// Print only the report at the end (not every action as it happens).
        #[arg(long)]
        report: bool,
        /// Format of the report.
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        report_format: CheckFormat,
        /// /proc/vmstat carries the old zone-suffixed names (for the seed paper's files).
        #[arg(long)]
        old_kernel: bool,
        /// Run this rule file too, on the same scenario and seed, and report side by side.
        #[arg(long, conflicts_with = "serve")]
        compare: Option<PathBuf>,
        /// Record every reading in the recording format.
        #[arg(long, conflicts_with = "serve")]
        record: Option<PathBuf>,
        /// Seconds between intervals (default: the rule file's UPDATE).
        #[arg(long)]
        interval: Option<f64>,
        /// Publish the guest as a root directory here instead (for `plugtop run --root DIR` or other tools).
        #[arg(long, conflicts_with = "config")]
        serve: Option<PathBuf>,
        #[command(flatten)]
        flap: FlapArgs,
    },
    /// Keep samples: as a recording file (-o) or as snapshot directories (--export-snapshots).
    Record {
        /// The recording to create (an existing file is never overwritten).
        #[arg(
            short = 'o',
            long = "output",
            required_unless_present = "export_snapshots"
        )]
        output: Option<PathBuf>,
        /// Write conformance-format snapshot directories here instead.
        #[arg(long, conflicts_with = "output")]
        export_snapshots: Option<PathBuf>,
        #[command(flatten)]
        from: From,
        /// Seconds between live readings.
        #[arg(long, default_value_t = 1.0)]
        interval: f64,
        /// Stop after this many samples (default: until interrupted).
        #[arg(long)]
        count: Option<usize>,
    },
}

/// When to call a guest flapping (see src/control/flap.rs).
#[derive(clap::Args, Clone, Copy)]
struct FlapArgs {
    /// Intervals in the flap detector's sliding window.
    #[arg(long, default_value_t = 30)]
    flap_window: usize,
    /// Direction reversals within the window that count as flapping.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(2..))]
    flap_reversals: u64,
}

impl FlapArgs {
    fn config(self) -> plugtop::control::flap::FlapConfig {
        plugtop::control::flap::FlapConfig {
            window: self.flap_window.max(1),
            reversals: self.flap_reversals as usize,
        }
    }
}

#[derive(clap::Args)]
#[group(required = false, multiple = false)]
struct From {
    /// A directory of numbered snapshot directories (the conformance format).
    #[arg(long)]
    snapshots: Option<PathBuf>,
    /// A recording made with `plugtop record`.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// A live root laid out like / (read every interval).
    #[arg(long)]
    root: Option<PathBuf>,
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
        Some(root) => Ok((Box::new(LiveSource::new(root)), true)),
        None => {
            anyhow::bail!("say where to read from: --snapshots DIR, --replay FILE or --root DIR")
        }
    }
}

fn seconds(s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| anyhow::anyhow!("--interval must be a number of seconds >= 0"))
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum RunMode {
    Auto,
    Observe,
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormat {
    Text,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(Status::Ok) => ExitCode::SUCCESS,
        Ok(Status::Failed) => ExitCode::from(1),
        Ok(Status::Code(code)) => ExitCode::from(code),
        // `plugtop eval ... | head` is fine: stop quietly.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("plugtop: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<Status> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let Some(command) = cli.command else {
        out.flush()?;
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
            plugtop::tui::run::run_lines(&options, &mut out)?;
            out.flush()?;
            return Ok(Status::Ok);
        }
        return Ok(match plugtop::tui::screen::run_screen(&options)? {
            plugtop::tui::run::ScreenEnd::Quit => Status::Ok,
            plugtop::tui::run::ScreenEnd::Signal(signal) => {
                eprintln!("plugtop: ended by signal {signal}; the guest was put back");
                Status::Code(128 + signal.clamp(0, 127) as u8)
            }
            plugtop::tui::run::ScreenEnd::RestoreFailed(why) => {
                eprintln!("plugtop: {why}");
                Status::Failed
            }
        });
    };
    let status = match command {
        Command::Whatif {
            config,
            against,
            from,
            flap,
        } => {
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
            write!(out, "{}", commands::whatif::render(&w))?;
            if let Some(warning) = source.warning() {
                eprintln!("plugtop: warning: {warning}");
            }
            Status::Ok
        }
        Command::Sim {
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
        } => {
            let scenario = plugtop::sim::Scenario::load(&scenario)?;
            let duration = match duration {
                Some(d) => Some(
                    plugtop::sim::scenario::seconds(&d)
                        .filter(|s| *s > 0.0)
                        .ok_or_else(|| {
                            anyhow::anyhow!("--duration {d:?} is not a time like \"12:00\" or 720")
                        })?,
                ),
                None => None,
            };
            let speed = speed.unwrap_or(1.0);
            if speed.is_nan() || speed <= 0.0 {
                anyhow::bail!("--speed must be a positive number");
            }
            let mut wait = |d: Duration| {
                if !fast {
                    std::thread::sleep(d.div_f64(speed));
                }
            };
            let options = plugtop::sim::run::SimOptions {
                duration,
                interval,
                old_kernel,
                record,
                keep_timeline: false,
                flap: flap.config(),
            };
            if let Some(root) = serve {
                let signals = daemon::Signals::install()?;
                let mut guest = plugtop::sim::run::guest_for(&scenario, &options);
                eprintln!(
                    "plugtop: simulating {} below {} (point `plugtop --root {}` or `plugtop run --root {}` at it; Ctrl-C stops)",
                    scenario.name,
                    root.display(),
                    root.display(),
                    root.display()
                );
                plugtop::sim::serve::serve(&mut guest, &root, &signals.stop, &mut wait, &mut |l| {
                    eprintln!("{l}")
                })
                .with_context(|| format!("cannot write below {}", root.display()))?;
                return Ok(Status::Ok);
            }
            let config = config.context("a rule file is needed: -c FILE")?;
            let quiet = report || compare.is_some();
            let mut print = |l: &str| {
                if !quiet {
                    // A closed pipe (`| head`) must not stop the run's report.
                    let _ = writeln!(std::io::stdout(), "{l}");
                }
            };
            let first =
                plugtop::sim::run::simulate(&scenario, &config, &options, &mut wait, &mut print)?;
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
            match report_format {
                CheckFormat::Json => match &second {
                    Some(b) => writeln!(out, "{}", serde_json::json!([first.report, b.report]))?,
                    None => writeln!(out, "{}", serde_json::to_string(&first.report)?)?,
                },
                CheckFormat::Text => match &second {
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
                },
            }
            if first.report.fatal.is_some() || second.is_some_and(|b| b.report.fatal.is_some()) {
                Status::Failed
            } else {
                Status::Ok
            }
        }
        Command::Check { file, root, format } => {
            let source = commands::eval::read_rule_file(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let facts = RootReader::new().facts(&root);
            let format = match format {
                CheckFormat::Text => commands::check::Format::Text,
                CheckFormat::Json => commands::check::Format::Json,
            };
            commands::check::run(&source, &facts, format, &mut out)?
        }
        Command::Eval {
            config,
            from,
            interval,
            count,
            jsonl,
            trace,
        } => {
            let rules = commands::eval::read_rule_file(&config)
                .with_context(|| format!("cannot read {}", config.display()))?;
            let (mut source, live) = open_source(&from, None)?;
            let format = if jsonl {
                commands::eval::Format::Jsonl
            } else if trace {
                commands::eval::Format::Trace
            } else {
                commands::eval::Format::Table
            };
            let wait = match (live, interval) {
                (false, _) => Wait::None,
                (true, Some(s)) => Wait::Every(seconds(s)?),
                (true, None) => Wait::Update,
            };
            let pace = Pace { count, wait };
            let status = commands::eval::run(
                &rules,
                source.as_mut(),
                format,
                pace,
                &mut out,
                &mut std::thread::sleep,
            )?;
            if let Some(w) = source.warning() {
                eprintln!("plugtop: warning: {w}");
            }
            status
        }
        Command::Run {
            config,
            foreground,
            verbose,
            version: _,
            root,
            mode,
            state,
            force,
            replay,
            interval_ms,
            flap,
        } => {
            out.flush()?;
            if replay.is_some() && mode != RunMode::Observe {
                anyhow::bail!(
                    "--replay only goes with --mode observe: a recording cannot be acted on"
                );
            }
            let child = std::env::var_os("PLUGTOP_DAEMON_CHILD").is_some();
            if !foreground && !child {
                return daemonize();
            }
            let options = daemon::RunOptions {
                state: state.unwrap_or_else(|| plugtop::control::journal::default_path(&root)),
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
                panic_after: std::env::var("PLUGTOP_TEST_PANIC_AFTER")
                    .ok()
                    .and_then(|v| v.parse().ok()),
                flap: flap.config(),
                check_lpar: replay.is_none(),
                started_marker: child,
            };
            let mut console = Console;
            let mut syslog;
            let log: &mut dyn Log = if child {
                syslog = SysLog::new();
                &mut syslog
            } else {
                &mut console
            };
            let pid_file = child.then(|| options.root.join(plugtop::control::lock::PLUGTOP_PID));
            if let Some(pid_file) = &pid_file {
                if let Some(dir) = pid_file.parent() {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("cannot create {}", dir.display()))?;
                }
                std::fs::write(pid_file, format!("{}\n", std::process::id()))
                    .with_context(|| format!("cannot write {}", pid_file.display()))?;
            }
            let signals = daemon::Signals::install().context("cannot install signal handlers")?;
            let ended = match &replay {
                Some(file) => {
                    let mut source = RecordingSource::open(file)?;
                    daemon::run_on(&options, &mut source, log, &signals)
                }
                None => daemon::run(&options, log, &signals),
            };
            if let Some(pid_file) = &pid_file {
                let _ = std::fs::remove_file(pid_file);
            }
            match ended {
                Ok(daemon::Ending::Stopped) => Status::Ok,
                Ok(daemon::Ending::Fatal | daemon::Ending::RestoreFailed) => Status::Failed,
                // cpuplugd exits 1 on every start-up refusal.
                Err(e) => {
                    eprintln!("plugtop: {e}");
                    Status::Failed
                }
            }
        }
        Command::Restore { state, root } => {
            let state = state.unwrap_or_else(|| plugtop::control::journal::default_path(&root));
            daemon::restore_from_journal(&root, &state, &mut Console)?;
            Status::Ok
        }
        Command::Record {
            output,
            export_snapshots,
            from,
            interval,
            count,
        } => {
            let (mut source, live) = open_source(&from, Some(Path::new("/")))?;
            let wait = if live {
                Wait::Every(seconds(interval)?)
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
                (_, Some(dir)) => commands::record::Target::Snapshots(dir),
                (Some(path), None) => commands::record::Target::Recording { path, header },
                (None, None) => {
                    anyhow::bail!("say where to write: -o FILE or --export-snapshots DIR")
                }
            };
            commands::record::run(
                source.as_mut(),
                target,
                Pace { count, wait },
                &mut out,
                &mut std::thread::sleep,
            )?
        }
    };
    out.flush()?;
    Ok(status)
}

/// A recording header for the machine under `root`.
fn header_for(root: &Path, interval: f64) -> Header {
    let m = describe(root);
    let present_cpus = std::fs::read(root.join("sys/devices/system/cpu/present"))
        .ok()
        .and_then(|t| plugtop::kernel::cpulist::CpuList::parse(&t))
        .map_or(0, |l| l.cpus());
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
        eprintln!("{line}");
    }
    Ok(if status.success() {
        Status::Ok
    } else {
        Status::Failed
    })
}
