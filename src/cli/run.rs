//! `plugtop run`: the headless drop-in for cpuplugd. The run itself is
//! [`plugtop::daemon`]; here are the flags, detaching, where the log goes
//! and the exit status.

use std::io::Write;
use std::time::Duration;

use anyhow::Context;

use super::sources::require_root_dir;
use super::stderr::complain;
use crate::cli::{RunArgs, RunMode};
use plugtop::commands::Status;
use plugtop::control::controller::Mode;
use plugtop::daemon;
use plugtop::kernel::recording::RecordingSource;
use plugtop::logging::{Console, Journal, LogSink, SysLog};

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
