//! `plugtop restore`: CPUs and the pool put back from the journal a
//! killed or crashed plugtop left.

use std::io::Write;

use anyhow::Context;

use crate::cli::RestoreArgs;
use plugtop::commands::Status;
use plugtop::control::guard::GuardOptions;
use plugtop::logging::{Console, LogSink};

/// `plugtop restore`.
pub fn run(args: RestoreArgs, _out: &mut dyn Write) -> anyhow::Result<Status> {
    let RestoreArgs { state, root } = args;
    let mut options = GuardOptions::new(&root);
    if let Some(state) = state {
        options.state =
            std::path::absolute(&state).with_context(|| format!("--state {}", state.display()))?;
    }
    let mut log = Console::default();
    // A refusal (a bad journal, a running plugtop, a held lock) wrote
    // nothing: exit 1, as `run` does for its refusals.
    let outcome = match plugtop::control::guard::restore_from_journal(&options) {
        Ok(outcome) => outcome,
        Err(e) => {
            log.error(&plugtop::error_chain::text(&e));
            return Ok(Status::Failed);
        }
    };
    match outcome {
        None => {
            log.info(&format!(
                "nothing to restore: no journal at {}",
                options.state.display()
            ));
            Ok(Status::Ok)
        }
        Some(outcome) => {
            for (severity, line) in &outcome.lines {
                match severity {
                    plugtop::control::session::MessageLevel::Info => log.info(line),
                    _ => log.error(line),
                }
            }
            Ok(Status::of(outcome.complete))
        }
    }
}
