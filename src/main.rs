//! The `plugtop` command line: parse the arguments, dispatch to the
//! subcommand, report how it ended. What each subcommand does is in
//! `actions.rs`, its arguments in `cli.rs`.

mod actions;
mod cli;
mod generate;
mod tune_command;

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Subcommand};
use plugtop::commands::Status;

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
            // An error may quote a file or a hostname: shown line by line,
            // made safe for the terminal.
            for (i, line) in error_text(&e).split('\n').enumerate() {
                let lead = if i == 0 { "plugtop: " } else { "" };
                eprintln!("{lead}{}", plugtop::report::terminal_safe(line));
            }
            ExitCode::from(2)
        }
    }
}

/// An error and its causes, as `{:#}` shows them, but without a cause that
/// the text before it already says (many errors name their cause in their
/// own message: "X: X is not a regular file" would say it twice).
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let said = cause.to_string();
        if text.contains(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

fn run(cli: Cli) -> anyhow::Result<Status> {
    // Not `stdout().lock()`: a lock held here for the whole run would stop
    // every other thread that writes to stdout (the panic hook giving the
    // terminal back, the console log), forever.
    let mut out = BufWriter::new(std::io::stdout());
    let status = match cli.command {
        None => actions::screen(&cli, &mut out)?,
        Some(Subcommand::Whatif(args)) => actions::whatif(args, &mut out)?,
        Some(Subcommand::Sim(args)) => actions::sim(args, &mut out)?,
        Some(Subcommand::Check(args)) => actions::check(args, &mut out)?,
        Some(Subcommand::Eval(args)) => actions::eval(args, &mut out)?,
        Some(Subcommand::Run(args)) => {
            out.flush()?;
            actions::run_headless(args, &mut out)?
        }
        Some(Subcommand::Restore(args)) => actions::restore(args, &mut out)?,
        Some(Subcommand::Record(args)) => actions::record(args, &mut out)?,
        // Straight to stdout, not through `out`, and not flushed again
        // below: generate says a failed write itself.
        Some(Subcommand::Generate(args)) => return generate::run(args, &mut std::io::stdout()),
        Some(Subcommand::Tune(args)) => tune_command::run(args, &mut out)?,
    };
    out.flush()?;
    Ok(status)
}
