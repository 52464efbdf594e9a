//! The `plugtop` command line: parse the arguments, dispatch to the
//! subcommand, report how it ended. Each subcommand's arguments are in
//! `cli.rs`, what it does with them in `cli/<name>.rs`.

// Errors are reported, never unwrapped: input, files and the terminal are
// not trusted to be as expected.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod cli;

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use cli::{Cli, Subcommand};
use plugtop::commands::Status;

fn main() -> ExitCode {
    // `--help` wraps at the terminal's width, 80 into a pipe, as every
    // text plugtop writes (`report::text_width`).
    let command = Cli::command().term_width(plugtop::report::text_width());
    let cli = match command
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            let run = std::env::args_os().nth(1).is_some_and(|a| a == "run");
            return bad_options(&with_tip(e), run);
        }
    };
    // `plugtop run` is a drop-in for cpuplugd, which exits 1 on bad options
    // and on every error; the other commands say 2.
    let error_code = if matches!(cli.command, Some(Subcommand::Run(_))) {
        1
    } else {
        2
    };
    cli::ending::exit_code(run(cli), error_code)
}

/// Clap's error with a tip where the natural guess is wrong: `sim --serve
/// DIR -c RULES` (nu53 M16) — the served guest runs no rules; a daemon or
/// the screen on that root does.
fn with_tip(mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let named = |kind| match e.get(kind) {
        Some(ContextValue::String(arg)) => arg.split(' ').next().unwrap_or("").to_string(),
        _ => String::new(),
    };
    let mut pair = [named(ContextKind::InvalidArg), named(ContextKind::PriorArg)];
    pair.sort();
    if e.kind() == ErrorKind::ArgumentConflict && pair == ["--config", "--serve"] {
        e.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                "--serve publishes a simulated guest; rules act on it from outside:".into(),
                "`plugtop run --root DIR -c RULES` (the daemon)".into(),
                "`plugtop --root DIR -c RULES` (the screen)".into(),
            ]),
        );
    }
    e
}

/// Bad options: clap's message and status (2; `--help` and `--version`
/// print and exit 0), but 1 for `plugtop run`, as cpuplugd exits 1 on an
/// option it does not know.
fn bad_options(e: &clap::Error, run: bool) -> ExitCode {
    let _ = e.print();
    if !e.use_stderr() {
        return ExitCode::SUCCESS;
    }
    ExitCode::from(if run { 1 } else { 2 })
}

fn run(cli: Cli) -> anyhow::Result<Status> {
    // Not `stdout().lock()`: a lock held here for the whole run would stop
    // every other thread that writes to stdout (the panic hook giving the
    // terminal back, the console log), forever.
    let mut out = BufWriter::new(std::io::stdout());
    let status = match cli.command {
        None => cli::screen::run(cli, &mut out)?,
        Some(Subcommand::Whatif(args)) => cli::whatif::run(args, &mut out)?,
        Some(Subcommand::Sim(args)) => cli::sim::run(args, &mut out)?,
        Some(Subcommand::Check(args)) => cli::check::run(args, &mut out)?,
        Some(Subcommand::Eval(args)) => cli::eval::run(args, &mut out)?,
        Some(Subcommand::Run(args)) => {
            let request = args.request();
            // The daemon's own small program when it is installed beside
            // this one (it holds half the memory); returns if it is not.
            cli::run_exe::exec_beside(&request);
            cli::run::run(request, &mut out)?
        }
        Some(Subcommand::Restore(args)) => cli::restore::run(args, &mut out)?,
        Some(Subcommand::Record(args)) => cli::record::run(args, &mut out)?,
        Some(Subcommand::Import(args)) => cli::import::run(args, &mut out)?,
        // Straight to stdout, not through `out`, and not flushed again
        // below: generate says a failed write itself.
        Some(Subcommand::Generate(args)) => {
            return cli::generate::run(args, &mut std::io::stdout());
        }
        // The protocol's own stdio, flushed message by message.
        Some(Subcommand::Lsp(args)) => return cli::lsp::run(args),
        Some(Subcommand::Tune(args)) => cli::tune::run(args, &mut out)?,
        Some(Subcommand::Train(args)) => cli::train::run(args, &mut out)?,
        Some(Subcommand::Fleet(args)) => cli::fleet::run(args, &mut out)?,
    };
    out.flush()?;
    Ok(status)
}
