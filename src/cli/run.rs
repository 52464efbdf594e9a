//! `plugtop run`: the headless drop-in for cpuplugd. The run itself is
//! [`plugtop::daemon`]; here are the flags, detaching, where the log goes
//! and the exit status. The daemon's own small program,
//! `plugtop-run` (src/bin/plugtop-run.rs), is built from this file too:
//! it names nothing of the rest of the command line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::ValueEnum;

use super::flap::FlapArgs;
use super::stderr::complain;
use super::wide::WideArg;
use plugtop::commands::Status;
use plugtop::control::controller::Mode;
use plugtop::daemon;
use plugtop::kernel::recording::RecordingSource;
use plugtop::logging::{Console, Journal, LogSink, SysLog};

/// What `plugtop run --help` says of its exit status.
pub const EXIT_STATUS: &str = "Exit status, as cpuplugd's: 0 stopped by SIGTERM or SIGINT (the guest put back); \
1 refused to start (nothing changed: bad options, a rule file with errors, another controller, ...) \
or a fatal error while running (the guest put back). plugtop's own: 78 refused a start cpuplugd \
would make (a start state it could not put back after a crash, a dead run's journal, not s390); \
101 a panic, the guest put back; 128+N ended by signal N. See plugtop-run(1).";

/// The arguments of `plugtop run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The rule file (cpuplugd's -c).
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
    /// Stay in the foreground and log to the terminal (cpuplugd's -f).
    #[arg(short = 'f', long)]
    pub foreground: bool,
    /// Log the values behind every interval's decision and every change of
    /// the CMM pool (cpuplugd's -V).
    #[arg(short = 'V', long)]
    pub verbose: bool,
    /// Print the version (cpuplugd's -v).
    #[arg(short = 'v', long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,
    /// The guest's root directory.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// auto acts like cpuplugd; observe only logs what it would do.
    #[arg(long, value_enum, default_value_t = RunMode::Auto)]
    pub mode: RunMode,
    /// The restore journal (default ROOT/run/plugtop/state).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Start although a dead plugtop left a journal (its start state is kept).
    #[arg(long)]
    pub force: bool,
    /// Act on this machine's own `/` although it is not s390 (by default
    /// `--mode auto` refuses there, as it would take a laptop's CPUs offline).
    #[arg(long)]
    pub allow_non_zvm: bool,
    /// Replay a recording instead of reading the guest (observe mode only).
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Test-only: milliseconds between intervals instead of UPDATE.
    #[arg(long, hide = true)]
    pub interval_ms: Option<u64>,
    #[command(flatten)]
    pub flap: FlapArgs,
    /// Serve metrics for Prometheus at http://ADDR:PORT/metrics (e.g. 127.0.0.1:9866; see docs/metrics.md).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,
    /// Write the metrics to FILE every interval, atomically, for node_exporter's textfile collector (name it *.prom).
    #[arg(long, value_name = "FILE")]
    pub metrics_textfile: Option<PathBuf>,
    #[command(flatten)]
    pub wide: WideArg,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub enum RunMode {
    Auto,
    Observe,
}

/// `plugtop run`.
pub fn run(args: RunArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
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
        wide,
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
            None => plugtop::control::restore_journal::default_path(&root),
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
        // The -V table; log entries stay one line each, whole, for grep
        // and the journal alike.
        table: wide.layout(),
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
    let (mut log, where_to) = log_sink(child);
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
                Status::ended_by(signal)
            }
            _ => Status::Ok,
        },
        Ok(daemon::Ending::Fatal | daemon::Ending::RestoreFailed) => Status::Failed,
        // cpuplugd exits 1 on every start-up refusal, and so does plugtop;
        // a refusal of plugtop's own (cpuplugd would have started) is 78.
        Err(e) => {
            refused(&e, log, where_to);
            Status::Code(e.exit_status())
        }
    })
}

/// Says why the start was refused: to the system log at priority err when
/// plugtop logs there, and on stderr unless stderr is that same log
/// (`run -f` under systemd), where the line would be a second entry at
/// the stream's priority.
fn refused(e: &daemon::StartError, log: &mut dyn LogSink, where_to: LogTo) {
    if where_to != LogTo::Terminal {
        log.entry(&plugtop::logging::refusal_entry(
            &plugtop::error_chain::text(e),
        ));
    }
    if where_to != LogTo::JournalStream {
        complain(&format!("plugtop: {}", plugtop::error_chain::text(e)));
    }
}

/// Where `plugtop run` logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LogTo {
    /// The terminal (stdout and stderr).
    Terminal,
    /// The system log, stderr being a pipe to the waiting parent (a
    /// detached run) or the service manager's file.
    SystemLog,
    /// The journal, stderr being the journal's own stream (`run -f` in
    /// the unit).
    JournalStream,
}

/// Where `plugtop run` logs: a daemon (or a foreground run whose stderr
/// is the journal's stream) to the journal with structured fields when
/// this machine has one, else to syslog; in the foreground, to the
/// terminal.
fn log_sink(child: bool) -> (Box<dyn LogSink>, LogTo) {
    // In the foreground under systemd (the unit runs `plugtop run -f`),
    // stderr is the journal's stream: write to the journal itself, fields
    // and priorities included.
    let stream = !child && plugtop::logging::stderr_is_journal();
    if !child && !stream {
        return (Box::new(Console), LogTo::Terminal);
    }
    if let Some(j) = Journal::connect() {
        let to = if stream {
            LogTo::JournalStream
        } else {
            LogTo::SystemLog
        };
        return (Box::new(j), to);
    }
    let syslog = SysLog::new();
    let to = if syslog.connected() {
        LogTo::SystemLog
    } else {
        LogTo::Terminal
    };
    (Box::new(syslog), to)
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
    // The child's own status (a refusal's included), so a caller can tell
    // a refusal from a failure as with `-f`.
    Ok(match status.code() {
        Some(0) => Status::Ok,
        Some(code) => Status::Code(u8::try_from(code).unwrap_or(1)),
        None => Status::Failed,
    })
}

/// The detached child's word to its waiting parent that it has started.
fn tell_parent() {
    eprintln!("{}", daemon::STARTED);
}

/// The root must at least be a directory. `plugtop run` checks no more
/// itself: a guest whose /proc cannot be read is refused as cpuplugd
/// refuses it (exit 1), but a root that is not there is a usage error.
pub(super) fn require_root_dir(root: &Path) -> anyhow::Result<()> {
    if !root.is_dir() {
        anyhow::bail!(
            "--root {}: no such directory (a root holds proc/ and sys/ laid out like /)",
            root.display()
        );
    }
    Ok(())
}
