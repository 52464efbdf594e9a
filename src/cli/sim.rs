//! `plugtop sim`: a scenario played on a simulated guest under a rule
//! file, with a report of how the rules did (or the guest served below a
//! directory with `--serve`).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::interval::positive_interval;
use crate::cli::{CheckFormat, SimArgs};
use plugtop::commands::Status;
use plugtop::daemon;
use plugtop::kernel::claimed_dir::DirUse;
use plugtop::report::TerminalText;

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
    } = args;
    let scenario = plugtop::sim::Scenario::load(&scenario)?;
    let duration = duration.as_deref().map(sim_duration).transpose()?;
    let quiet = report || compare.is_some();
    // Nothing is shown until the report: waiting in real time would only
    // keep the user waiting, unless a pace was asked for (then said).
    let fast = fast || (quiet && speed.is_none() && serve.is_none());
    let speed = checked_speed(speed.unwrap_or(1.0))?;
    if quiet && !fast {
        eprintln!("plugtop: {}", slow_report_note(&scenario, duration, speed));
    }
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
        let guest = plugtop::sim::run::guest_for(&scenario, &options);
        let pace = if fast { None } else { Some(speed) };
        return serve_below(&root, guest, duration.is_some(), pace);
    }
    let rules = SimRules::new(config.as_deref(), &scenario, &options)?;
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
    let first = plugtop::sim::run::simulate_loaded(
        &scenario,
        Arc::clone(&rules.set),
        &rules.file,
        &options,
        &mut wait,
        &mut print,
    )?;
    let second = compare
        .as_deref()
        .map(|other| compared(&scenario, other, &options))
        .transpose()?;
    let first_file = Path::new(rules.file.name());
    let files = [first_file, compare.as_deref().unwrap_or(first_file)];
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

/// `--serve DIR`: the guest published below `root` at `pace` (simulated
/// seconds per real second; `None` is `--fast`), until a signal, or until
/// its end when `--duration` gave one (`until_duration`); without it, an
/// idle guest after the scenario's end. Says at the start how long it runs
/// and what comes at the end, and at the end why it ended.
fn serve_below(
    root: &Path,
    mut guest: plugtop::sim::Guest,
    until_duration: bool,
    pace: Option<f64>,
) -> anyhow::Result<Status> {
    use plugtop::sim::serve::{AtEnd, Part, Served};
    // Refused before anything is written: `/`, or a directory that holds
    // someone else's files.
    let dir = plugtop::kernel::claimed_dir::claim(root, DirUse::ServedRoot)?;
    let signals = daemon::Signals::install()?;
    let at_end = if until_duration {
        AtEnd::Stop
    } else {
        AtEnd::GoIdle
    };
    eprintln!(
        "plugtop: {}",
        serve_plan(root, guest.scenario(), at_end, pace)
    );
    let mut wait = |d: Duration, part: Part| {
        // After the scenario, an idle guest at real time even under
        // --fast: as fast as it can, forever, would only burn a CPU.
        let speed = match (part, pace) {
            (_, Some(speed)) => speed,
            (Part::Idle, None) => 1.0,
            (Part::Scenario, None) => return,
        };
        let until =
            plugtop::pace::deadline(std::time::Instant::now(), plugtop::pace::scaled(d, speed));
        plugtop::pace::park_until(until, &|| {
            signals.stop.load(std::sync::atomic::Ordering::SeqCst)
        });
    };
    let served = plugtop::sim::serve::serve(
        &mut guest,
        &dir,
        at_end,
        &signals.stop,
        &mut wait,
        &mut |l| eprintln!("{}", plugtop::report::terminal_safe(l)),
    )
    .with_context(|| format!("cannot write below {}", root.display()))?;
    let at = plugtop::sim::report::clock(guest.t);
    let why = match served {
        Served::Ended => "--duration reached".to_string(),
        Served::Stopped => format!(
            "ended by {}",
            plugtop::stop_signals::name(
                signals.stopped_by.load(std::sync::atomic::Ordering::SeqCst)
            )
        ),
    };
    eprintln!(
        "plugtop: {why} at {at}: serving stopped; the files below {} stay as they are (a daemon on them sees no time pass)",
        plugtop::report::terminal_safe(&root.display().to_string())
    );
    Ok(Status::Ok)
}

/// What `sim --serve` says at its start: where, how long, at what pace,
/// and what comes at the end.
fn serve_plan(
    root: &Path,
    scenario: &plugtop::sim::Scenario,
    at_end: plugtop::sim::serve::AtEnd,
    pace: Option<f64>,
) -> String {
    let pace_text = |speed: Option<f64>| match speed {
        None => "as fast as it can (--fast)".to_string(),
        Some(1.0) => "at real time".to_string(),
        Some(s) => format!("at --speed {s}"),
    };
    let length = plugtop::sim::report::clock(scenario.length());
    let then = match at_end {
        plugtop::sim::serve::AtEnd::Stop => format!(
            "for {length} (--duration) {}, then it stops and the files stay as they are at {length}",
            pace_text(pace)
        ),
        plugtop::sim::serve::AtEnd::GoIdle => format!(
            "for the scenario's {length} {}, then as an idle guest (idle ticks on its online CPUs, memory as at the end) {} until stopped (--duration sets an end)",
            pace_text(pace),
            pace_text(Some(pace.unwrap_or(1.0)))
        ),
    };
    let root = root.display().to_string();
    let root = plugtop::report::terminal_safe(&root);
    format!(
        "simulating {} below {root} {then}; point `plugtop --root {root}` or `plugtop run --root {root}` at it; Ctrl-C or SIGTERM stops it",
        plugtop::report::terminal_safe(&scenario.name),
    )
}

/// `--compare`: `other` on the same scenario and seed, silently, at once
/// and unrecorded.
fn compared(
    scenario: &plugtop::sim::Scenario,
    other: &Path,
    options: &plugtop::sim::run::SimOptions,
) -> anyhow::Result<plugtop::sim::run::SimOutcome> {
    let options = plugtop::sim::run::SimOptions {
        record: None,
        ..options.clone()
    };
    Ok(plugtop::sim::run::simulate(
        scenario,
        other,
        &options,
        &mut |_| {},
        &mut |_| {},
    )?)
}

/// The rules a simulation runs: the file named, or the built-in
/// recommended rules that fit the simulated kernel (as the screen's
/// `--sim` takes them).
struct SimRules {
    set: Arc<plugtop::rules::RuleSet>,
    file: plugtop::rules::SourceFile,
}

impl SimRules {
    fn new(
        config: Option<&Path>,
        scenario: &plugtop::sim::Scenario,
        options: &plugtop::sim::run::SimOptions,
    ) -> anyhow::Result<SimRules> {
        let facts = plugtop::sim::facts(&plugtop::sim::run::guest_for(scenario, options));
        let (set, file) = match config {
            Some(path) => plugtop::rules::load_path(path, &facts)?,
            None => plugtop::rules::load_source(
                plugtop::commands::observe::built_in_rules(&facts),
                &facts,
            )?,
        };
        Ok(SimRules {
            set: Arc::new(set),
            file,
        })
    }
}

/// Said when a report (or a comparison) is asked for at a pace: nothing
/// shows until the end, so how long that is.
fn slow_report_note(
    scenario: &plugtop::sim::Scenario,
    duration: Option<f64>,
    speed: f64,
) -> String {
    let seconds = duration
        .or_else(|| plugtop::sim::scenario::seconds(&scenario.duration))
        .unwrap_or(0.0);
    format!(
        "simulating {} of {} at --speed {speed}: the report comes at the end, in about {} (--fast gives it at once)",
        plugtop::sim::report::clock(seconds),
        plugtop::report::terminal_safe(&scenario.name),
        plugtop::sim::report::clock(seconds / speed),
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
    if plugtop::sim::scenario::seconds(d).is_some_and(|s| s <= 0.0) {
        anyhow::bail!(
            "--duration {d:?} is no time at all: give a length like 1h, 15m, 90s or 12:00"
        );
    }
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
