//! `plugtop sim`: the command line mapped onto [`plugtop::sim`]: a
//! scenario played on a simulated guest under a rule file, with a report
//! of how the rules did (or the guest served below a directory with
//! `--serve`).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use super::interval::positive_interval;
use crate::cli::{CheckFormat, SimArgs};
use plugtop::commands::Status;
use plugtop::commands::observe::built_in_rules;
use plugtop::sim::published_root::serve_below;
use plugtop::sim::report::{finish, slow_report_note, start_note};
use plugtop::sim::run::{SimOptions, compared, guest_for, simulate_loaded};
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
        let mut wait = |d: Duration| {
            if !fast {
                std::thread::sleep(plugtop::pace::scaled(d, speed));
            }
        };
        simulate_loaded(
            &scenario,
            Arc::new(set),
            &file,
            &options,
            &mut wait,
            &mut print,
        )?
    };
    let second = compare
        .as_deref()
        .map(|other| compared(&scenario, other, &options))
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
    Ok(Status::of(ran))
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
