//! The cpuplugd rule language: reading a rule file line by line exactly as the
//! daemon does, parsing expressions (grammar in `grammar/cpuplugd.pest`),
//! evaluating them with cpuplugd's floating-point fault rules, and explaining
//! problems as diagnostics that point at the user's own text.

pub mod compiled;
pub mod config;
pub mod diagnostic;
pub mod eval;
pub mod expr;
pub mod fpu;
pub mod hysteresis;
pub mod lint;
pub mod parser;
pub mod print;
pub mod render;
pub mod ruleset;
pub mod source;
pub mod suggest;

/// The machine facts a rule file is loaded against, defined on the kernel
/// side that gathers them; named here too because every loader needs them.
pub use crate::kernel::SystemFacts;
pub use config::{LoadOutcome, Reach, load, load_to};
pub use diagnostic::{Diagnostic, DiagnosticCode, Severity};
pub use eval::{Evaluator, Outcome, Stop, Trace};
pub use expr::{Assigned, NodeId, RuleKind, Setting};
pub use ruleset::{MemoryOff, RuleSet, Settings};
pub use source::{SourceFile, Span, not_a_rule_file};

/// Why a rule file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// cpuplugd would refuse the file; `report` shows every refusing
    /// error with its caret and the summary, `first` the first message.
    #[error("{report}")]
    Refused { first: String, report: String },
}

impl LoadError {
    /// One line for places with room for one (the what-if editor).
    pub fn headline(&self) -> String {
        match self {
            LoadError::Read { .. } => crate::error_chain::text(self),
            LoadError::Refused { first, .. } => first.clone(),
        }
    }

    /// One line for a log entry (a failed reload): the first error with
    /// its file:line:column and the summary, joined; no excerpt, no caret.
    pub fn one_line(&self) -> String {
        match self {
            LoadError::Read { .. } => crate::error_chain::text(self).replace('\n', " "),
            LoadError::Refused { first, report } => {
                match report.lines().rev().find(|l| !l.trim().is_empty()) {
                    Some(last) if last != first => format!("{first}; {last}"),
                    _ => first.clone(),
                }
            }
        }
    }
}

/// The largest rule file plugtop reads (cpuplugd's own are a few KB; a
/// larger one is refused whole rather than read without bound or cut).
pub const MAX_RULE_FILE: u64 = 16 << 20;

/// A rule file's bytes: `-` is standard input; anything else a regular
/// file (a FIFO or device is refused). At most [`MAX_RULE_FILE`] bytes.
pub fn read_rule_bytes(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::{ErrorKind, Read};
    let too_large = |e: std::io::Error| {
        if e.kind() != ErrorKind::FileTooLarge {
            return e;
        }
        let why = format!(
            "larger than {} MiB; cpuplugd rule files are a few KB",
            MAX_RULE_FILE >> 20
        );
        std::io::Error::new(ErrorKind::FileTooLarge, why)
    };
    if path.as_os_str() != "-" {
        return crate::kernel::fs::read_named(path, MAX_RULE_FILE).map_err(too_large);
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_RULE_FILE + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_RULE_FILE {
        return Err(too_large(ErrorKind::FileTooLarge.into()));
    }
    Ok(bytes)
}

/// The name a rule file is shown by: its path, or `<stdin>` for `-`.
pub fn rule_file_name(path: &std::path::Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Reads and loads a rule file; refused files come back with cpuplugd's
/// errors rendered for the terminal.
pub fn load_path(
    path: &std::path::Path,
    facts: &SystemFacts,
) -> Result<(RuleSet, SourceFile), LoadError> {
    load_path_to(path, facts, Reach::Everything)
}

/// [`load_path`], going as far as `reach` says: a daemon stops at the
/// first line cpuplugd refuses ([`Reach::FirstRefusal`]).
pub fn load_path_to(
    path: &std::path::Path,
    facts: &SystemFacts,
    reach: Reach,
) -> Result<(RuleSet, SourceFile), LoadError> {
    let bytes = read_rule_bytes(path).map_err(|source| LoadError::Read {
        path: rule_file_name(path),
        source,
    })?;
    load_source_to(SourceFile::new(rule_file_name(path), bytes), facts, reach)
}

/// Loads a rule file already in memory (an edit the screen made) as
/// [`load_path`] loads one from disk: refused files come back with
/// cpuplugd's errors rendered for the terminal.
pub fn load_source(
    file: SourceFile,
    facts: &SystemFacts,
) -> Result<(RuleSet, SourceFile), LoadError> {
    load_source_to(file, facts, Reach::Everything)
}

/// [`load_source`], going as far as `reach` says.
pub fn load_source_to(
    file: SourceFile,
    facts: &SystemFacts,
    reach: Reach,
) -> Result<(RuleSet, SourceFile), LoadError> {
    let outcome = load_to(&file, facts, reach);
    if outcome.refusal.is_some()
        && let Some(line) = render::not_rules(&file, &outcome)
    {
        return Err(LoadError::Refused {
            first: line.trim_end().to_string(),
            report: line,
        });
    }
    if outcome.refusal.is_some() {
        let errors: Vec<_> = outcome
            .diagnostics
            .iter()
            .filter(|d| {
                d.severity == Severity::Error && d.daemon == diagnostic::DaemonEffect::RefusesToLoad
            })
            .cloned()
            .collect();
        let others = outcome
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
            - errors.len();
        // The summary counts every error; those shown are the refusing
        // ones, so the rest are pointed to rather than silently counted.
        let rest = if others > 0 {
            format!(
                "{}: {others} more error{} would stop cpuplugd once the file loads; `plugtop check` lists every one\n",
                crate::safe_text::terminal_safe(file.name()),
                if others == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        // The warnings the summary counts are shown too, after the errors:
        // one may be why an edit took (a setting given twice, the later
        // one used).
        let warnings: Vec<_> = outcome
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .cloned()
            .collect();
        let report = format!(
            "{}{}{}{rest}",
            render::text(&file, &errors),
            render::text(&file, &warnings),
            render::summary(&file, &outcome)
        );
        let first = report.lines().next().unwrap_or_default().to_string();
        return Err(LoadError::Refused { first, report });
    }
    Ok((outcome.rules, file))
}
