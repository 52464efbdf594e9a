//! `plugtop whatif`: a recording re-decided under another rule file.

use std::io::Write;

use super::sources::open_source;
use super::stderr::complain;
use crate::cli::WhatifArgs;
use plugtop::commands::{self, Status};
use plugtop::report::TerminalText;

/// `plugtop whatif`.
pub fn run(args: WhatifArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let WhatifArgs {
        config,
        against,
        from,
        flap,
        wide,
    } = args;
    if from.root.is_some() || (from.replay.is_none() && from.snapshots.is_none()) {
        anyhow::bail!(
            "whatif needs a history: --replay FILE or --snapshots DIR (record a guest with `plugtop record`)"
        );
    }
    let (mut source, _) = open_source(&from, None)?;
    let name = from
        .replay
        .as_ref()
        .or(from.snapshots.as_ref())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let w = commands::whatif::compare(
        source.as_mut(),
        &name,
        &config,
        against.as_deref(),
        flap.config(),
    )?;
    let layout = wide.layout();
    let text = layout.prose(&commands::whatif::render(&w, layout));
    write!(TerminalText::new(out), "{text}")?;
    if let Some(warning) = source.warning() {
        complain(&format!("plugtop: warning: {warning}"));
    }
    // As `plugtop sim --compare`: a file that stops cpuplugd fails.
    if w.new.stopped.is_some() || w.old.stopped.is_some() {
        return Ok(Status::Failed);
    }
    Ok(Status::Ok)
}
