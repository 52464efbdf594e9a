//! `plugtop` without a subcommand, in line mode: watch a machine with a rule
//! file and print, every interval, what cpuplugd would decide. Never writes.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use super::Status;
use crate::engine::Engine;
use crate::kernel::Source;
use crate::report::table;
use crate::rules::eval::NoTrace;
use crate::rules::ruleset::{describe_missing_cpu, describe_missing_memory};
use crate::rules::{SourceFile, SystemFacts, load, render};

/// The white paper's recommended rules, for kernels with per-zone counters.
pub const RECOMMENDED: &str = include_str!("../../examples/rules/recommended-default.conf");
/// The same rules for kernels 4.8 and later.
pub const RECOMMENDED_MODERN: &str = include_str!("../../examples/rules/recommended-modern.conf");

/// The built-in rules that fit the kernel `facts` describes: the paper's
/// own file where its `vmstat` names exist, else the modern variant.
pub fn built_in_rules(facts: &SystemFacts) -> SourceFile {
    let old_names = facts
        .vmstat_names
        .as_ref()
        .is_some_and(|names| names.iter().any(|n| n == "pgscan_direct_dma"));
    if old_names {
        SourceFile::new(
            "built-in recommended-default.conf",
            RECOMMENDED.as_bytes().to_vec(),
        )
    } else {
        SourceFile::new(
            "built-in recommended-modern.conf",
            RECOMMENDED_MODERN.as_bytes().to_vec(),
        )
    }
}

/// How long to watch and how often.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Stop after this many readings.
    pub count: Option<usize>,
    /// Seconds between readings; the rule file's UPDATE when `None`.
    pub interval: Option<f64>,
}

/// Watches `source`; `wait` is called between readings (a sleep in real use).
pub fn run(
    rules: Option<SourceFile>,
    source: &mut dyn Source,
    options: Options,
    out: &mut dyn Write,
    wait: &mut dyn FnMut(Duration),
) -> std::io::Result<Status> {
    let facts = source.facts();
    let file = rules.unwrap_or_else(|| built_in_rules(&facts));
    let outcome = load(&file, &facts);
    if outcome.refusal.is_some() {
        out.write_all(render::text(&file, &outcome.diagnostics).as_bytes())?;
        out.write_all(render::summary(&file, &outcome).as_bytes())?;
        return Ok(Status::Failed);
    }
    let rules = Arc::new(outcome.rules);
    writeln!(
        out,
        "observing {} with {} (plugtop writes nothing)",
        facts.origin,
        file.name()
    )?;
    if !rules.cpu_enabled {
        writeln!(out, "CPU group off: needs {}", describe_missing_cpu(&rules))?;
    }
    if !rules.mem_enabled {
        writeln!(
            out,
            "memory group off: needs {}",
            describe_missing_memory(&rules, &facts)
        )?;
    }
    write!(out, "{}", table::header(&rules))?;
    out.flush()?;
    let seconds = options
        .interval
        .unwrap_or(rules.settings.update as f64)
        .max(0.0);
    let mut engine = Engine::new(Arc::clone(&rules));
    let mut taken = 0usize;
    let mut line = String::new();
    loop {
        let Some(sample) = source.next_sample() else {
            return Ok(Status::Ok);
        };
        let sample = match sample {
            Ok(s) => s,
            Err(e) => {
                writeln!(out, "cannot read the machine: {e}")?;
                return Ok(Status::Failed);
            }
        };
        taken += 1;
        line.clear();
        match engine.push(&sample, &mut NoTrace) {
            Some(decision) => {
                table::row(&mut line, &decision);
                out.write_all(line.as_bytes())?;
                if decision.fatal.is_some() {
                    return Ok(Status::Failed);
                }
            }
            None => writeln!(
                out,
                "{:>8}  collecting history ({taken} of {} readings)",
                taken - 1,
                rules.history_depth
            )?,
        }
        out.flush()?;
        if options.count.is_some_and(|c| taken >= c) {
            return Ok(Status::Ok);
        }
        wait(Duration::from_secs_f64(seconds));
    }
}
