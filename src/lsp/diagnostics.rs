//! `check`'s findings as LSP diagnostics: the same `rules::load` against
//! the same facts about the kernel under the root, each span converted to
//! a UTF-16 range, notes as related information.

use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};

use super::documents::{MAX_DOCUMENT, MAX_OPEN_BYTES};
use super::position::LineIndex;
use crate::kernel::SystemFacts;
use crate::rules::diagnostic::{DaemonEffect, Diagnostic as Finding, Severity};
use crate::rules::{LoadOutcome, SourceFile, load};

/// At most this many diagnostics are sent for one file (a pathological
/// file has one per line; an editor cannot show more anyway).
pub const MAX_DIAGNOSTICS: usize = 10_000;

/// Loads `text` as cpuplugd would, as `check` does.
pub fn analyse(text: &str, facts: &SystemFacts) -> (SourceFile, LoadOutcome) {
    let file = SourceFile::new("document", text.as_bytes().to_vec());
    let outcome = load(&file, facts);
    (file, outcome)
}

/// What cpuplugd does about a finding, in the words `check` uses.
fn effect(daemon: DaemonEffect) -> &'static str {
    match daemon {
        DaemonEffect::RefusesToLoad => "cpuplugd refuses to load this file",
        DaemonEffect::StopsWhenEvaluated => {
            "cpuplugd loads this file but exits when it evaluates this"
        }
        DaemonEffect::Runs => "cpuplugd runs this, probably not as meant",
    }
}

/// One finding as a diagnostic of the document at `uri`.
pub fn convert(uri: &Uri, index: &LineIndex, outcome: &LoadOutcome, d: &Finding) -> Diagnostic {
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    message.push('\n');
    message.push_str(effect(d.daemon));
    let mut related: Vec<DiagnosticRelatedInformation> = d
        .notes
        .iter()
        .map(|n| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), index.range(n.span)),
            message: n.message.clone(),
        })
        .collect();
    if d.daemon == DaemonEffect::RefusesToLoad
        && let Some(refusal) = &outcome.refusal
    {
        related.push(DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), index.range(refusal.span)),
            message: format!("cpuplugd refuses the file here: {}", refusal.message),
        });
    }
    Diagnostic {
        range: index.range(d.span),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("plugtop".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}

/// Every diagnostic (up to [`MAX_DIAGNOSTICS`]) of `text` loaded as `outcome`.
pub fn of_outcome(uri: &Uri, text: &str, outcome: &LoadOutcome) -> Vec<Diagnostic> {
    let index = LineIndex::new(text);
    outcome
        .diagnostics
        .iter()
        .take(MAX_DIAGNOSTICS)
        .map(|d| convert(uri, &index, outcome, d))
        .collect()
}

/// The one diagnostic of a document too large to keep.
pub fn too_large(len: usize) -> Diagnostic {
    Diagnostic {
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String("too-large".into())),
        source: Some("plugtop".into()),
        message: format!(
            "{len} bytes: plugtop checks rule files of at most {} MiB as they are edited (cpuplugd's are a few KB), and {} MiB of open files in all; not checked",
            MAX_DOCUMENT >> 20,
            MAX_OPEN_BYTES >> 20
        ),
        ..Diagnostic::default()
    }
}
