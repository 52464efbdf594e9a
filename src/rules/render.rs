//! Diagnostics as text (`file:line:col: error: message`, the source line and
//! a caret under the spot, then notes and help) or as JSON. `plugtop check`
//! and the UI's rule panel use the same functions.

use std::fmt::Write as _;

use serde::Serialize;

use super::config::LoadOutcome;
use super::diagnostic::{DaemonEffect, Diagnostic, Severity};
use super::source::{SourceFile, Span};
use crate::safe_text::terminal_safe;

const TAB: &str = "    ";

/// Text as shown: a tab as spaces, anything else a terminal would act on
/// (ESC, NUL, BEL, C1 controls) escaped by the one rule for text from
/// files, [`crate::safe_text::terminal_safe`], so binary input never reaches
/// the terminal raw.
pub fn shown(text: &str) -> String {
    text.split('\t')
        .map(terminal_safe)
        .collect::<Vec<_>>()
        .join(TAB)
}

/// How many columns a character takes once shown.
fn shown_width(c: char) -> usize {
    if c == '\t' {
        TAB.len()
    } else {
        // As drawn: a wide character (`変`) takes two columns, an escaped
        // control character as many as its escape.
        crate::safe_text::cols(&terminal_safe(c.encode_utf8(&mut [0; 4])))
    }
}

/// All diagnostics as text, in the order given.
pub fn text(file: &SourceFile, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        one(&mut out, file, d);
        out.push('\n');
    }
    out
}

/// The first line of a diagnostic: where, how bad, what.
pub fn headline(file: &SourceFile, d: &Diagnostic) -> String {
    let severity = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let message = shown(&d.message);
    let name = shown(file.name());
    if d.span.is_file() {
        format!("{name}: {severity}: {message}")
    } else {
        let p = file.position(d.span.start as usize);
        format!("{name}:{}:{}: {severity}: {message}", p.line, p.column)
    }
}

fn one(out: &mut String, file: &SourceFile, d: &Diagnostic) {
    let _ = writeln!(out, "{}", headline(file, d));
    let mut lines: Vec<usize> = Vec::new();
    if !d.span.is_file() {
        lines.push(file.line_of(d.span.start as usize));
    }
    for n in &d.notes {
        if !n.span.is_file() {
            lines.push(file.line_of(n.span.start as usize));
        }
    }
    let width = lines.iter().max().map_or(1, |l| l.to_string().len());
    let gutter = " ".repeat(width);
    if !d.span.is_file() {
        let _ = writeln!(out, "{gutter} |");
        snippet(out, file, d.span, '^', "", width);
    }
    for n in &d.notes {
        if n.span.is_file() {
            let _ = writeln!(out, "{gutter} = note: {}", shown(&n.message));
        } else {
            snippet(out, file, n.span, '-', &shown(&n.message), width);
        }
    }
    if let Some(help) = &d.help {
        let _ = writeln!(out, "{gutter} = help: {}", shown(help));
    }
    let effect = match d.daemon {
        DaemonEffect::RefusesToLoad => Some("cpuplugd refuses to load this file"),
        DaemonEffect::StopsWhenEvaluated => {
            Some("cpuplugd loads this file but exits when it evaluates this")
        }
        DaemonEffect::Runs => None,
    };
    if let Some(effect) = effect {
        let _ = writeln!(out, "{gutter} = {effect}");
    }
}

/// The source line of `span` with a marker line under it.
fn snippet(out: &mut String, file: &SourceFile, span: Span, mark: char, label: &str, width: usize) {
    let line = file.line_of(span.start as usize);
    let start = file.line_start(line);
    let bytes = file.line_bytes(line);
    let text = String::from_utf8_lossy(bytes);
    let line_text = shown(&text);
    let col = |offset: usize| -> usize {
        let upto = offset.saturating_sub(start).min(bytes.len());
        String::from_utf8_lossy(&bytes[..upto])
            .chars()
            .map(shown_width)
            .sum()
    };
    let from = col(span.start as usize);
    let to = col(span.end as usize).max(from + 1);
    let _ = writeln!(out, "{line:>width$} | {line_text}");
    let marks: String = std::iter::repeat_n(mark, to - from).collect();
    let pad = " ".repeat(from);
    let sep = if label.is_empty() { "" } else { " " };
    let _ = writeln!(out, "{} | {pad}{marks}{sep}{label}", " ".repeat(width));
}

/// A closing paragraph: counts, and what cpuplugd would do with the file.
pub fn summary(file: &SourceFile, outcome: &LoadOutcome) -> String {
    let errors = outcome
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = outcome.diagnostics.len() - errors;
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}: {}, {}; {}\n",
        shown(file.name()),
        plural(errors, "error"),
        plural(warnings, "warning"),
        verdict(outcome)
    )
}

/// For a file plainly not a rule file ([`super::not_a_rule_file`]: a
/// recording, a binary file), the one line said instead of a diagnostic
/// for each of its lines: what it is, and what cpuplugd would do with it
/// (cpuplugd reads it as any other file; plugtop still decides as it).
pub fn not_rules(file: &SourceFile, outcome: &LoadOutcome) -> Option<String> {
    let what = super::not_a_rule_file(file.bytes())?;
    let name = shown(file.name());
    let hint = if what == "a plugtop recording" {
        " (--replay plays it)"
    } else {
        ""
    };
    let severity = if outcome.has_errors() {
        "error"
    } else {
        "warning"
    };
    // cpuplugd's message quotes the file's bytes: its words only.
    let verdict = match &outcome.refusal {
        Some(r) => {
            let words: String = r
                .message
                .trim_end()
                .chars()
                .take_while(|c| !c.is_control() && *c != char::REPLACEMENT_CHARACTER)
                .take(60)
                .collect();
            let cut = if words.len() < r.message.trim_end().len() {
                "…"
            } else {
                ""
            };
            format!("cpuplugd would refuse it: {}{cut}", shown(&words))
        }
        None => verdict(outcome),
    };
    Some(format!(
        "{name}: {severity}: {name} is {what}, not a rule file{hint}; {verdict}\n"
    ))
}

/// What cpuplugd would do with the file: refuse it (and why), or load it
/// (its groups), and whether it would exit later on an error.
fn verdict(outcome: &LoadOutcome) -> String {
    match &outcome.refusal {
        Some(r) => format!("cpuplugd would refuse it: {}", shown(r.message.trim_end())),
        None => {
            let rules = &outcome.rules;
            let group = |on: bool| if on { "on" } else { "off" };
            let mut loads = format!(
                "cpuplugd would load it (CPU group {}, memory group {}, history depth {})",
                group(rules.cpu_enabled),
                group(rules.mem_enabled),
                rules.history_depth
            );
            if let Some(line) = rules.memory_off_line() {
                loads.push_str("; ");
                loads.push_str(&line);
            }
            let at_run_time = outcome
                .diagnostics
                .iter()
                .filter(|d| {
                    d.severity == Severity::Error && d.daemon == DaemonEffect::StopsWhenEvaluated
                })
                .count();
            match at_run_time {
                0 => loads,
                1 => format!(
                    "{loads}, then exit the first time it evaluates what the error above points to"
                ),
                n => format!(
                    "{loads}, then exit the first time it evaluates what any of the {n} errors above point to"
                ),
            }
        }
    }
}

#[derive(Serialize)]
struct JsonNote<'a> {
    line: Option<usize>,
    column: Option<usize>,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: &'a str,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    #[serde(flatten)]
    diagnostic: &'a Diagnostic,
    #[serde(rename = "locations")]
    note_locations: Vec<JsonNote<'a>>,
}

/// All diagnostics as a JSON array, with 1-based lines and columns.
pub fn json(file: &SourceFile, diagnostics: &[Diagnostic]) -> String {
    let at = |s: Span, offset: u32| (!s.is_file()).then(|| file.position(offset as usize));
    let items: Vec<JsonDiagnostic<'_>> = diagnostics
        .iter()
        .map(|d| {
            let start = at(d.span, d.span.start);
            let end = at(d.span, d.span.end);
            JsonDiagnostic {
                file: file.name(),
                line: start.map(|p| p.line),
                column: start.map(|p| p.column),
                end_line: end.map(|p| p.line),
                end_column: end.map(|p| p.column),
                diagnostic: d,
                note_locations: d
                    .notes
                    .iter()
                    .map(|n| {
                        let p = at(n.span, n.span.start);
                        JsonNote {
                            line: p.map(|p| p.line),
                            column: p.map(|p| p.column),
                            message: &n.message,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    let json = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".to_string());
    crate::safe_text::terminal_safe_json(&json).into_owned()
}
