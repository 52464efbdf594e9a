//! `plugtop eval`: decide every interval of a series of readings as
//! cpuplugd would, writing nothing to the system.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use std::time::Duration;

use super::{Pace, Status, Wait};
use crate::engine::Engine;
use crate::kernel::Source;
use crate::report::trace;
use crate::report::{Layout, jsonl, table};
use crate::rules::eval::{NoTrace, Trace};
use crate::rules::{RuleKind, SourceFile, load};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionFormat {
    /// The conformance JSON lines.
    Jsonl,
    /// A table for people.
    Table,
    /// For each interval, the truth trace of every rule evaluated.
    Trace,
}

/// Loads `rule_file` for the machine `source` starts on, then decides every
/// sample it gives. Stops at the first interval where cpuplugd would exit.
/// `note` is told what JSON lines have no place for: why the memory group
/// is off (the table says it in its header). `vars`: variables whose
/// values each row shows too (`--var`).
pub fn run(
    rule_file: &SourceFile,
    source: &mut dyn Source,
    (format, vars, layout): (DecisionFormat, &[String], Layout),
    pace: Pace,
    out: &mut dyn Write,
    wait: &mut dyn FnMut(Duration),
    note: &mut dyn FnMut(&str),
) -> std::io::Result<Status> {
    let Some((rules, approximate)) = start(rule_file, source, (format, vars, layout), out)? else {
        return Ok(Status::Failed);
    };
    if format == DecisionFormat::Jsonl
        && let Some(line) = rules.memory_off_line()
    {
        note(&line);
    }
    let mut traces = Trace::new();
    let mut engine = Engine::new(rules);
    // cpuplugd reads and scans /proc/loadavg every interval, whatever its
    // rules name: a text it cannot scan ends it even then.
    let mut interest = engine.interest();
    interest.loadavg_text = true;
    source.narrow(&interest);
    let mut line = String::with_capacity(256);
    let mut reading = 0usize;
    let between = match pace.wait {
        Wait::None => None,
        Wait::Every(d) => Some(d),
        Wait::Update => Some(engine.rules().pace(None)),
    };
    loop {
        if pace.count.is_some_and(|c| reading >= c) {
            break;
        }
        if reading > 0
            && let Some(d) = between
        {
            wait(d);
        }
        let Some(sample) = source.next_sample() else {
            break;
        };
        let sample = match sample {
            Ok(s) => s,
            Err(e) => {
                unreadable(out, format, reading, &crate::error_chain::text(&e))?;
                return Ok(Status::Failed);
            }
        };
        reading += 1;
        let decided = if format == DecisionFormat::Trace {
            engine.push(&sample, &mut traces)
        } else {
            engine.push(&sample, &mut NoTrace)
        };
        let events = source.events();
        let Some(decision) = decided else {
            continue;
        };
        line.clear();
        match format {
            DecisionFormat::Jsonl => {
                jsonl::decision(&mut line, &decision);
                if approximate.is_some() || !vars.is_empty() || !events.is_empty() {
                    let at = sample.stamp.seconds();
                    jsonl_extras(
                        &mut line,
                        &engine,
                        (vars, at),
                        approximate.is_some(),
                        &events,
                    );
                }
            }
            DecisionFormat::Table => {
                table::row(&mut line, &decision, layout);
                table_extras(&mut line, &engine, vars, approximate.is_some(), &events);
            }
            DecisionFormat::Trace => {
                table::row(&mut line, &decision, layout);
                table_extras(&mut line, &engine, vars, approximate.is_some(), &events);
                let mut trace = String::new();
                // Narrow, under the row by two: the tree needs the room.
                let indent = if layout == Layout::Wide { 10 } else { 2 };
                let under = (engine.rules().as_ref(), rule_file, &traces);
                trace_lines(&mut trace, under, &decision, indent);
                line.push_str(&layout.prose(&trace));
            }
        }
        out.write_all(line.as_bytes())?;
        // Paced readings are watched as they come; a series is written
        // out at once, and a write per line would cost more than deciding.
        if between.is_some() {
            out.flush()?;
        }
        if decision.fatal.is_some() {
            out.flush()?;
            return Ok(Status::Failed);
        }
    }
    out.flush()?;
    Ok(Status::Ok)
}

/// A variable's value for the output (`null` while the history fills or
/// where it faults).
fn var_value(engine: &Engine, name: &str) -> Option<f64> {
    engine.variable(name).and_then(Result::ok)
}

/// Adds to a decision's JSON object: `"approximate":true` on an imported
/// history coarser than UPDATE, the values of `--var`, and what cpuplugd
/// logged doing in the interval.
fn jsonl_extras(
    line: &mut String,
    engine: &Engine,
    (vars, at): (&[String], f64),
    approximate: bool,
    events: &[String],
) {
    if !line.ends_with("}\n") {
        return;
    }
    line.truncate(line.len() - 2);
    if approximate {
        line.push_str(",\"approximate\":true");
    }
    if !vars.is_empty() {
        line.push_str(&format!(",\"time\":{at},\"vars\":{{"));
        for (i, name) in vars.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&jsonl::quote(name));
            line.push(':');
            match var_value(engine, name) {
                Some(v) if v.is_finite() => line.push_str(&format!("{v}")),
                _ => line.push_str("null"),
            }
        }
        line.push('}');
    }
    if !events.is_empty() {
        line.push_str(",\"cpuplugd\":[");
        for (i, e) in events.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&jsonl::quote(e));
        }
        line.push(']');
    }
    line.push_str("}\n");
}

/// The same for a table row: `~` before an approximate row's number, the
/// values after the row, cpuplugd's actions on lines of their own.
fn table_extras(
    line: &mut String,
    engine: &Engine,
    vars: &[String],
    approximate: bool,
    events: &[String],
) {
    if approximate && line.starts_with(' ') {
        line.replace_range(0..1, "~");
    }
    if !vars.is_empty() && line.ends_with('\n') {
        line.pop();
        for name in vars {
            match var_value(engine, name) {
                Some(v) => line.push_str(&format!("  {name}={v:.4}")),
                None => line.push_str(&format!("  {name}=-")),
            }
        }
        line.push('\n');
    }
    for e in events {
        line.push_str("          ");
        line.push_str(e);
        line.push('\n');
    }
}

/// Loads the rules for `source` and writes the output's head: the rules
/// and whether decisions are approximate, or `None` after saying why
/// nothing will be decided.
fn start(
    rule_file: &SourceFile,
    source: &mut dyn Source,
    (format, vars, layout): (DecisionFormat, &[String], Layout),
    out: &mut dyn Write,
) -> std::io::Result<Option<(Arc<crate::rules::RuleSet>, Option<String>)>> {
    let facts = source.facts();
    let outcome = load(rule_file, &facts);
    if let Some(refusal) = &outcome.refusal {
        match format {
            DecisionFormat::Jsonl => writeln!(out, "{}", jsonl::config_error(&refusal.message))?,
            DecisionFormat::Table | DecisionFormat::Trace => {
                let who = match &facts.history {
                    Some(_) => format!(
                        "plugtop cannot decide {} on {}",
                        rule_file.name(),
                        facts.origin
                    ),
                    None => format!("cpuplugd would refuse {}", rule_file.name()),
                };
                writeln!(out, "{who}: {}", refusal.message.trim_end())?;
                writeln!(out, "run `plugtop check {}` for details", rule_file.name())?;
            }
        }
        return Ok(None);
    }
    let rules = Arc::new(outcome.rules);
    let approximate = facts
        .history
        .as_ref()
        .and_then(|h| h.approximate(rules.update_seconds()));
    match format {
        DecisionFormat::Jsonl => writeln!(out, "{}", jsonl::header(&rules))?,
        DecisionFormat::Table | DecisionFormat::Trace => {
            write!(out, "{}", table::header(&rules, layout))?;
            if let Some(why) = &approximate {
                writeln!(out, "note: {why}; every decision below is marked ~")?;
            }
        }
    }
    if let Some(name) = vars
        .iter()
        .find(|v| !rules.variables.iter().any(|d| d.name == **v))
    {
        writeln!(out, "no variable {name} in {}", rule_file.name())?;
        return Ok(None);
    }
    Ok(Some((rules, approximate)))
}

/// Says that reading number `reading` could not be read, where cpuplugd
/// would exit.
fn unreadable(
    out: &mut dyn Write,
    format: DecisionFormat,
    reading: usize,
    message: &str,
) -> std::io::Result<()> {
    match format {
        DecisionFormat::Jsonl => writeln!(
            out,
            "{{\"snapshot\":{reading},\"fatal\":{}}}",
            jsonl::quote(message)
        )?,
        DecisionFormat::Table | DecisionFormat::Trace => {
            writeln!(out, "{reading:>8}  cpuplugd would exit here: {message}")?
        }
    }
    out.flush()
}

/// The truth trace of every rule of the groups that ran, under the row.
fn trace_lines(
    line: &mut String,
    (rules, rule_file, traces): (&crate::rules::RuleSet, &SourceFile, &Trace),
    decision: &crate::engine::Decision,
    indent: usize,
) {
    let ran = [
        (
            decision.cpu.is_some(),
            [RuleKind::Hotplug, RuleKind::Hotunplug].as_slice(),
        ),
        (
            decision.mem.is_some(),
            [
                RuleKind::CmmInc,
                RuleKind::CmmDec,
                RuleKind::Memplug,
                RuleKind::Memunplug,
            ]
            .as_slice(),
        ),
    ];
    for (group_ran, kinds) in ran {
        if !group_ran {
            continue;
        }
        for kind in kinds {
            for l in trace::rule(rules, rule_file, traces, *kind).lines() {
                line.extend(std::iter::repeat_n(' ', indent));
                line.push_str(l);
                line.push('\n');
            }
        }
    }
}

/// Reads a rule file from disk for [`run`].
pub fn read_rule_file(path: &Path) -> std::io::Result<SourceFile> {
    Ok(SourceFile::new(
        crate::rules::rule_file_name(path),
        crate::rules::read_rule_bytes(path)?,
    ))
}
