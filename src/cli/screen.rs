//! `plugtop` without a subcommand: the full-screen monitor, or one line
//! per interval when there is no terminal (line mode).

use std::io::Write;

use super::interval::positive_interval;
use super::sources::require_root;
use super::stderr::say_wrapped;
use crate::cli::{Cli, UiMode};
use plugtop::commands::Status;
use plugtop::control::controller::Mode;
use plugtop::report::TerminalText;

/// `plugtop` without a subcommand: the screen, or line mode.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<Status> {
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
        tune_budget: cli.tune_budget.map(|b| b as usize),
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
    let outcome = plugtop::tui::screen::run_screen(&options)?;
    for warning in &outcome.warnings {
        say_wrapped(&format!(
            "plugtop: warning: {}",
            plugtop::safe_text::terminal_safe(warning)
        ));
    }
    Ok(match outcome.end {
        plugtop::tui::run::ScreenEnd::Quit => Status::Ok,
        plugtop::tui::run::ScreenEnd::GaveBack(lines) => {
            // What quitting put back, on the normal terminal after the
            // screen is gone, as `plugtop run` says it.
            for line in lines {
                say_wrapped(&format!("plugtop: {line}"));
            }
            Status::Ok
        }
        ref end @ plugtop::tui::run::ScreenEnd::Signal { signal, .. } => {
            // The terminal may be gone (an SSH drop): a failed print must
            // not turn the exit into a panic. Only what was done is said.
            let done = end.done(options.sim.is_some());
            say_wrapped(&format!("plugtop: ended by signal {signal}; {done}"));
            Status::ended_by(signal)
        }
        plugtop::tui::run::ScreenEnd::RestoreFailed(why) => {
            say_wrapped(&format!("plugtop: {}", plugtop::error_chain::text(&why)));
            Status::Failed
        }
    })
}
