//! `plugtop eval`: every interval of a recording, snapshots or a live
//! root decided as cpuplugd would, writing nothing.

use std::io::Write;

use anyhow::Context;

use super::interval::positive_interval;
use super::sources::open_source;
use super::stderr::complain;
use crate::cli::EvalArgs;
use plugtop::commands::{self, Pace, Status, Wait};
use plugtop::report::TerminalText;

/// `plugtop eval`.
pub fn run(args: EvalArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let EvalArgs {
        config,
        from,
        interval,
        count,
        jsonl,
        trace,
        vars,
        wide,
    } = args;
    let rules = commands::eval::read_rule_file(&config)
        .with_context(|| format!("cannot read {}", config.display()))?;
    let (mut source, live) = open_source(&from, None)?;
    let format = if jsonl {
        commands::eval::DecisionFormat::Jsonl
    } else if trace {
        commands::eval::DecisionFormat::Trace
    } else {
        commands::eval::DecisionFormat::Table
    };
    let wait = match (live, interval) {
        (false, _) => Wait::None,
        (true, Some(s)) => Wait::Every(positive_interval(s)?),
        (true, None) => Wait::Update,
    };
    let pace = Pace { count, wait };
    // The table and the trace quote the rule file (a refusal's position):
    // text for a terminal. JSON lines escape by their own rules.
    let mut text;
    let out: &mut dyn Write = if jsonl {
        out
    } else {
        text = TerminalText::new(out);
        &mut text
    };
    let status = commands::eval::run(
        &rules,
        source.as_mut(),
        (format, &vars, wide.layout()),
        pace,
        out,
        &mut std::thread::sleep,
        &mut |line| complain(&format!("plugtop: {line}")),
    )?;
    out.flush()?;
    if let Some(w) = source.warning() {
        complain(&format!("plugtop: warning: {w}"));
    }
    Ok(status)
}
