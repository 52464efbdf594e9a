//! Diagnostics as data: what is wrong, where, what cpuplugd itself would do
//! about it, and what to write instead. One renderer (`render`) turns them
//! into text for `plugtop check`, JSON, or a line in the UI's rule panel.

use serde::Serialize;

use super::source::Span;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// What the real daemon does about the problem, so users know whether the
/// file would even load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DaemonEffect {
    /// cpuplugd refuses to load the file.
    RefusesToLoad,
    /// cpuplugd loads the file and stops (restoring CPUs and memory) the
    /// first time it evaluates this.
    StopsWhenEvaluated,
    /// cpuplugd runs, but probably not as the author meant.
    Runs,
}

/// A secondary place that explains the main one ("used here", "defined here").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Note {
    #[serde(skip)]
    pub span: Span,
    pub message: String,
}

/// One finding about a rule file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable short name, for JSON consumers and tests.
    pub code: &'static str,
    #[serde(skip)]
    pub span: Span,
    pub message: String,
    /// Advice in words ("did you mean ...", "write ... instead").
    pub help: Option<String>,
    /// Text that could replace the span, when the fix is mechanical.
    pub replacement: Option<String>,
    pub notes: Vec<Note>,
    pub daemon: DaemonEffect,
}

impl Diagnostic {
    /// An error that cpuplugd also reports (it refuses the file).
    pub fn refusal(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            span,
            message: message.into(),
            help: None,
            replacement: None,
            notes: Vec::new(),
            daemon: DaemonEffect::RefusesToLoad,
        }
    }

    /// An error cpuplugd only finds when it evaluates the rule (and then exits).
    pub fn stops(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            daemon: DaemonEffect::StopsWhenEvaluated,
            ..Diagnostic::refusal(code, span, message)
        }
    }

    /// A warning about something cpuplugd accepts but that surprises people.
    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            daemon: DaemonEffect::Runs,
            ..Diagnostic::refusal(code, span, message)
        }
    }

    /// Adds advice.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a mechanical replacement for the span, and advice saying it.
    pub fn with_replacement(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        if self.help.is_none() {
            self.help = Some(format!("write `{text}`"));
        }
        self.replacement = Some(text);
        self
    }

    /// Adds a note pointing at another place.
    pub fn with_note(mut self, span: Span, message: impl Into<String>) -> Self {
        self.notes.push(Note {
            span,
            message: message.into(),
        });
        self
    }

    /// Turns an error into a warning (for problems in text no rule uses).
    pub fn demoted(mut self, why: &str) -> Self {
        self.severity = Severity::Warning;
        self.daemon = DaemonEffect::Runs;
        self.message = format!("{} ({why})", self.message);
        self
    }
}
