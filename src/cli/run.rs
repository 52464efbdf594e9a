//! `plugtop run`: the headless drop-in for cpuplugd. The run itself is
//! [`plugtop::daemon`]; here are what it takes ([`Request`], parsed from
//! the flags of src/cli.rs), detaching, where the log goes and the exit
//! status. The daemon's own small program, `plugtop-run`
//! (src/bin/plugtop-run.rs), is built from this file too: it names
//! nothing of the command line, not even a parser.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use super::stderr::complain;
use plugtop::commands::Status;
use plugtop::control::controller::Mode;
use plugtop::control::flap::FlapConfig;
use plugtop::daemon;
use plugtop::kernel::recording::RecordingSource;
use plugtop::logging::{Console, Journal, LogSink, SysLog};

/// `plugtop run`'s command line as `plugtop` parsed it (src/cli.rs):
/// what the run takes, in `plugtop` or handed to `plugtop-run`
/// (src/cli/handover.rs), which thus needs no parser of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The rule file (cpuplugd's -c).
    pub config: PathBuf,
    /// Stay in the foreground and log to the terminal (cpuplugd's -f).
    pub foreground: bool,
    /// The -V log (cpuplugd's -V).
    pub verbose: bool,
    /// The guest's root directory.
    pub root: PathBuf,
    /// Auto or observe: `plugtop run` has no step mode.
    pub mode: Mode,
    /// The restore journal (default ROOT/run/plugtop/state).
    pub state: Option<PathBuf>,
    /// Start although a dead plugtop left a journal.
    pub force: bool,
    /// Act on a `/` that is not s390.
    pub allow_non_zvm: bool,
    /// A recording to replay instead of the guest.
    pub replay: Option<PathBuf>,
    /// Test-only: milliseconds between intervals instead of UPDATE.
    pub interval_ms: Option<u64>,
    /// When the guest counts as flapping.
    pub flap: FlapConfig,
    /// Where metrics are served (ADDR:PORT).
    pub metrics_listen: Option<String>,
    /// Where metrics are written every interval.
    pub metrics_textfile: Option<PathBuf>,
    /// `--wide`: every column and value in full.
    pub wide: bool,
}

/// `plugtop run`.
pub fn run(request: Request, out: &mut dyn Write) -> anyhow::Result<Status> {
    let Request {
        config,
        foreground,
        verbose,
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
    } = request;
    out.flush()?;
    // The test-only pace: 0 would read a live guest without a pause
    // between intervals, a core spent on nothing (both binaries check it
    // here); a replay at 0 runs through its recording as fast as it can.
    if interval_ms == Some(0) && replay.is_none() {
        anyhow::bail!(
            "--interval-ms 0 would read the guest with no pause between intervals: give 1 or more (0 only with --replay)"
        );
    }
    if replay.is_some() && mode != Mode::Observe {
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
        mode,
        force,
        verbose,
        // The -V table; log entries stay one line each, whole, for grep
        // and the journal alike.
        table: plugtop::report::Layout::from_flag(wide),
        interval: interval_ms.map(Duration::from_millis),
        allow_non_zvm,
        flap,
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
        // After what the run logged before it (on the terminal, from
        // the console's own thread).
        log.flush();
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
        return (Box::new(Console::default()), LogTo::Terminal);
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
