//! How the screen starts: the session and the screen's state ([`Local`])
//! with their source (a live root, a recording or the simulator), and line
//! mode. The screen itself is in [`super::screen`], its control thread in
//! [`super::control`], the options in [`super::options`].

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use super::app::{HeaderMachine, LogKind, SourceLabel};
use super::line;
use super::local::Local;
pub use super::options::Options;
use super::options::read_rules;
pub use super::update::ScreenEnd;
use crate::commands::observe::built_in_rules;
use crate::control::controller::Mode;
use crate::kernel::Source;
use crate::kernel::actuator::NoWrites;
use crate::kernel::live::LiveSource;
use crate::kernel::machine::describe;
use crate::kernel::recording::RecordingSource;
use crate::report::terminal_safe;
use crate::rules::{SourceFile, SystemFacts, load};

/// Why the UI could not start.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error(transparent)]
    Rules(#[from] crate::rules::LoadError),
    #[error(transparent)]
    Scenario(#[from] crate::sim::scenario::ScenarioError),
    #[error(transparent)]
    Recording(#[from] crate::kernel::recording::RecordingError),
    #[error(transparent)]
    Reading(#[from] crate::kernel::source::SourceError),
    #[error("terminal")]
    Terminal(#[from] std::io::Error),
}

/// Whether to use line mode: asked for, a dumb terminal, or no terminal.
pub fn line_mode_wanted(batch: bool) -> bool {
    batch || std::env::var("TERM").is_ok_and(|t| t == "dumb") || !std::io::stdout().is_terminal()
}

/// A session and its screen fed with the first `readings` snapshots of
/// `dir` under `rules`: fixed data for screenshots, tests and
/// demonstrations.
pub fn app_from_snapshots(
    rules: &Path,
    dir: &Path,
    readings: usize,
    mode: Mode,
) -> Result<Local, UiError> {
    let mut source = crate::kernel::snapshots::SnapshotSource::open(dir)?;
    let facts = source.facts();
    let (rules, file) = read_rules(rules, &facts)?;
    let label = SourceLabel::Replay {
        file: "incident.rec".into(),
        speed: 1.0,
    };
    let mut local = Local::new(rules, file, label, mode);
    local.app_mut().set_facts(facts);
    if let Some(first) = source.first_dir() {
        let machine = describe(&first);
        local.app_mut().set_machine(HeaderMachine {
            host: machine.host,
            guest: None,
            kernel: machine.kernel,
        });
    }
    for _ in 0..readings {
        match source.next_sample() {
            Some(Ok(s)) => local.ingest(s),
            Some(Err(e)) => return Err(e.into()),
            None => break,
        }
    }
    Ok(local)
}

/// The rule file asked for, or the built-in rules that fit the machine.
fn rules_for(
    options: &Options,
    facts: &SystemFacts,
) -> Result<(Arc<crate::rules::RuleSet>, SourceFile), UiError> {
    match &options.rules {
        Some(path) => Ok(read_rules(path, facts)?),
        None => {
            let file = built_in_rules(facts);
            let outcome = load(&file, facts);
            Ok((Arc::new(outcome.rules), file))
        }
    }
}

/// The app on a simulated guest: it can always be acted on (nothing real
/// is written), so no lock or journal is needed.
fn prepare_sim(
    options: &Options,
    scenario: &Path,
) -> Result<(Local, Box<dyn Source + Send>), UiError> {
    use crate::sim::{Guest, Scenario, SimActuator, SimSource};
    let scenario = Scenario::load(scenario)?;
    let guest = crate::sim::SharedGuest::new(Guest::new(&scenario, options.old_kernel));
    let facts = crate::sim::facts(&guest.borrow());
    let (rules, file) = rules_for(options, &facts)?;
    // Each reading is one UPDATE of simulated time, whatever the pace
    // (`--interval` and `+`/`-` only change how fast the readings come).
    let source = SimSource::new(guest.clone(), rules.update_seconds());
    let mut local = Local::new(
        rules,
        file,
        SourceLabel::Sim {
            scenario: scenario.name.clone(),
            speed: 1.0,
        },
        Mode::Observe,
    );
    local
        .core_mut()
        .set_actuator(Box::new(SimActuator::new(guest)));
    let app = local.app_mut();
    app.set_machine(HeaderMachine {
        host: scenario.name.clone(),
        guest: None,
        kernel: if options.old_kernel {
            "simulated (old vmstat names)".into()
        } else {
            "simulated".into()
        },
    });
    app.set_color(colored(options));
    app.set_facts(facts);
    app.set_sim(scenario, options.old_kernel);
    app.set_tune_budget(options.tune_budget);
    if options.mode != Mode::Observe {
        local.set_mode(options.mode);
    }
    Ok((local, Box::new(source)))
}

/// Colours unless `--mono` or `NO_COLOR` says otherwise, or the terminal
/// has no 256 colours ([`TermCaps`](super::term_caps::TermCaps)).
fn colored(options: &Options) -> bool {
    !options.mono
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && super::term_caps::TermCaps::from_env().colors
}

/// Builds the session, the screen's state and their source without
/// touching the terminal.
pub fn prepare(options: &Options) -> Result<(Local, Box<dyn Source + Send>), UiError> {
    if let Some(scenario) = &options.sim {
        return prepare_sim(options, scenario);
    }
    let mut recorded_under = None;
    let (source, label, host, kernel): (Box<dyn Source + Send>, SourceLabel, String, String) =
        match &options.replay {
            Some(file) => {
                let r = RecordingSource::open(file)?;
                let (host, kernel) = (r.header().host.clone(), r.header().kernel.clone());
                recorded_under = crate::sim::run::recorded_rules(r.header())
                    .map(|rules| crate::safe_text::terminal_safe(rules).into_owned());
                let label = SourceLabel::Replay {
                    file: file.display().to_string(),
                    speed: 1.0,
                };
                (Box::new(r), label, host, kernel)
            }
            None => {
                let m = describe(&options.root);
                (
                    Box::new(LiveSource::new(&options.root)),
                    SourceLabel::Live(options.root.display().to_string()),
                    m.host,
                    m.kernel,
                )
            }
        };
    let mut source = source;
    let facts = source.facts();
    let (rules, file) = rules_for(options, &facts)?;
    let mut local = Local::new(rules, file, label, Mode::Observe);
    if options.replay.is_none() {
        local
            .core_mut()
            .set_observer(NoWrites::seeing(&options.root));
    } else {
        local
            .core_mut()
            .set_cannot_act("this is a recording; only a live guest can be changed".into());
    }
    let app = local.app_mut();
    // A replay without -c decides with the built-in rules, not those it
    // was recorded under (nu53 M6).
    if let Some(rules) = recorded_under.filter(|_| options.rules.is_none()) {
        app.note(
            LogKind::Note,
            format!(
                "recorded under {rules}; these decisions are the built-in rules': -c {rules} replays its decisions"
            ),
        );
    }
    // Said once: a minute's average hides what one-second rules see.
    if let Some(why) = facts
        .history
        .as_ref()
        .and_then(|h| h.approximate(app.rules().update_seconds()))
    {
        app.note(LogKind::Note, why);
    }
    app.set_facts(facts);
    if options.replay.is_none() {
        let online = crate::kernel::machine::online_list(&options.root);
        if let Some(h) = crate::control::patterns::affinity(&options.root, &online) {
            app.add_hint(h);
        }
    }
    app.set_machine(HeaderMachine {
        host,
        guest: options
            .replay
            .is_none()
            .then(|| crate::kernel::machine::identity(&options.root).short()),
        kernel,
    });
    app.set_color(colored(options));
    Ok((local, source))
}

/// Line mode: one line per decided interval.
pub fn run_lines(options: &Options, out: &mut dyn Write) -> Result<(), UiError> {
    let (mut local, mut source) = prepare(options)?;
    writeln!(
        out,
        "plugtop: {} with {} (observe mode; one line per interval)",
        terminal_safe(&local.app().machine().host),
        terminal_safe(local.app().file().name())
    )?;
    if let Some(l) = local.app().rules().memory_off_line() {
        writeln!(out, "plugtop: {}", terminal_safe(&l))?;
    }
    if options.replay.is_some()
        && let Some(history) = source.status()
    {
        writeln!(out, "history: {}", terminal_safe(&history))?;
    }
    if let Some(why) = local
        .app()
        .facts()
        .and_then(|f| f.history.as_ref())
        .and_then(|h| h.approximate(local.app().rules().update_seconds()))
    {
        writeln!(out, "note: {why}")?;
    }
    let interval = local.app().rules().pace(options.interval);
    let live = options.replay.is_none();
    // --count counts the lines printed: readings that only fill the
    // history print nothing and do not count.
    let mut printed = 0;
    while let Some(sample) = source.next_sample() {
        match sample {
            Ok(s) => {
                local.ingest(s);
                if let Some(l) = line::interval(local.app()) {
                    writeln!(out, "{l}")?;
                    printed += 1;
                }
                for e in source.events() {
                    writeln!(out, "{}", terminal_safe(&e))?;
                }
            }
            Err(e) => {
                writeln!(
                    out,
                    "skipping this interval: {}",
                    terminal_safe(&crate::error_chain::text(&e))
                )?;
                printed += 1;
            }
        }
        // A damaged or torn recording ends early: said, with where, as
        // `eval` and `whatif` say it.
        if let Some(w) = source.warning() {
            writeln!(out, "plugtop: warning: {}", terminal_safe(&w))?;
        }
        out.flush()?;
        if options.count.is_some_and(|c| printed >= c) {
            break;
        }
        if live {
            std::thread::sleep(interval);
        }
    }
    Ok(())
}
