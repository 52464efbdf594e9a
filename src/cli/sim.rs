//! `plugtop sim`: the command line mapped onto [`plugtop::sim`]: a
//! scenario played on a simulated guest under a rule file, with a report
//! of how the rules did (or the guest served below a directory with
//! `--serve`).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::interval::positive_interval;
use crate::cli::{CheckFormat, SimArgs};
use plugtop::commands::Status;
use plugtop::commands::observe::built_in_rules;
use plugtop::sim::published_root::serve_below;
use plugtop::sim::report::{clock, finish, slow_report_note, start_note};
use plugtop::sim::run::{SimOptions, SimRun, compared, guest_for};
use plugtop::sim::scenario::duration_arg;

/// `plugtop sim`.
pub fn run(args: SimArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
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
        wide,
    } = args;
    let scenario = plugtop::sim::Scenario::load(&scenario)?;
    let duration = duration.as_deref().map(duration_arg).transpose()?;
    let quiet = report || compare.is_some();
    // Nothing is shown until the report: waiting in real time would only
    // keep the user waiting, unless a pace was asked for (then said).
    let fast = fast || (quiet && speed.is_none() && serve.is_none());
    let speed = plugtop::pace::checked_speed(speed.unwrap_or(1.0))?;
    if quiet && !fast {
        let note = format!("plugtop: {}", slow_report_note(&scenario, duration, speed));
        eprint!("{}", wide.layout().on_stderr().prose(&note));
    }
    if let Some(i) = interval {
        positive_interval(i)?;
    }
    let options = SimOptions {
        duration,
        interval,
        old_kernel,
        record,
        keep_timeline: false,
        flap: flap.config(),
    };
    if let Some(root) = serve {
        return serve_guest(&root, guest_for(&scenario, &options), duration, fast, speed);
    }
    let signals = plugtop::daemon::Signals::install()?;
    let stopped = || signals.stop.load(Ordering::SeqCst);
    // The file named, or the built-in recommended rules that fit the
    // simulated kernel (as the screen's `--sim` takes them).
    let facts = plugtop::sim::facts(&guest_for(&scenario, &options));
    let (set, file) = match config.as_deref() {
        Some(path) => plugtop::rules::load_path(path, &facts)?,
        None => plugtop::rules::load_source(built_in_rules(&facts), &facts)?,
    };
    // With a JSON report, standard output holds only the JSON: the action
    // lines go to standard error.
    let json = matches!(report_format, CheckFormat::Json);
    let first = {
        let mut stderr = std::io::stderr();
        let (lines, lines_layout): (&mut dyn Write, _) = if json {
            (&mut stderr, wide.layout().on_stderr())
        } else {
            (&mut *out, wide.layout())
        };
        if !quiet {
            let note = start_note(&scenario, file.name(), duration, (!fast).then_some(speed));
            // A closed pipe must not stop the run; said at once, as the
            // actions are when the run goes in real time.
            let _ = write!(lines, "{}", lines_layout.prose(&note));
            let _ = lines.flush();
        }
        let mut print = |l: &str| {
            // A closed pipe (`| head`) must not stop the run's report.
            if !quiet {
                let l = plugtop::report::terminal_safe(l);
                let _ = write!(lines, "{}", lines_layout.prose(&l));
                if !fast {
                    let _ = lines.flush();
                }
            }
        };
        let run = SimRun::start(&scenario, Arc::new(set), &file, &options)?;
        until_stopped(run, (!fast).then_some(speed), &mut print, &stopped)?
    };
    let ended = signals.stopped_by();
    if let Some(signal) = ended {
        let note = stopped_note(signal, &first.report, &scenario, duration);
        eprint!("{}", wide.layout().on_stderr().prose(&note));
    }
    // A run cut short is compared over the part simulated.
    let part = SimOptions {
        duration: ended.map(|_| first.report.seconds).or(options.duration),
        ..options.clone()
    };
    let second = compare
        .as_deref()
        .map(|other| compared(&scenario, other, &part))
        .transpose()?;
    let second = second.as_ref().map(|o| &o.report);
    let err = &mut std::io::stderr();
    let ran = finish(
        out,
        err,
        json,
        !quiet,
        (&first.report, second),
        old_kernel,
        wide.layout(),
    )?;
    Ok(match ended {
        Some(signal) => Status::ended_by(signal),
        None => Status::of(ran),
    })
}

/// `run` to its end at `pace` (`None`: as fast as it goes), or until
/// `stopped` (Ctrl-C, SIGTERM): then its report is of the part simulated,
/// as `plugtop record` ends with its summary.
fn until_stopped(
    mut run: SimRun,
    pace: Option<f64>,
    print: &mut dyn FnMut(&str),
    stopped: &dyn Fn() -> bool,
) -> anyhow::Result<plugtop::sim::run::SimOutcome> {
    while run.step(print)? && !stopped() {
        if let Some(speed) = pace {
            let d = plugtop::pace::scaled(plugtop::pace::seconds(run.interval()), speed);
            plugtop::pace::park_until(plugtop::pace::deadline(Instant::now(), d), stopped);
        }
    }
    Ok(run.finish())
}

/// Said when `signal` ended a run at `report`'s time: how far it got of
/// the scenario's length (or `duration`), and that the report is of that
/// part.
fn stopped_note(
    signal: i32,
    report: &plugtop::sim::report::SimReport,
    scenario: &plugtop::sim::Scenario,
    duration: Option<f64>,
) -> String {
    let length = duration
        .or_else(|| plugtop::sim::scenario::seconds(&scenario.duration))
        .unwrap_or(report.seconds);
    format!(
        "plugtop: stopped by {} after {} of {}: the report is of the part simulated",
        plugtop::stop_signals::name(signal),
        clock(report.seconds),
        clock(length),
    )
}

/// `sim --serve`: the guest published below `root` until the scenario's
/// end (with `--duration`) or a stop signal, at `speed` unless `fast`.
fn serve_guest(
    root: &std::path::Path,
    guest: plugtop::sim::Guest,
    duration: Option<f64>,
    fast: bool,
    speed: f64,
) -> anyhow::Result<Status> {
    let pace = (!fast).then_some(speed);
    serve_below(
        root,
        guest,
        duration.is_some(),
        pace,
        &mut std::io::stderr(),
    )?;
    Ok(Status::Ok)
}
