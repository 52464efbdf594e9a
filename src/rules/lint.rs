//! Findings beyond what cpuplugd reports when loading.
use super::config::{RuleSet, SystemFacts};
use super::diagnostic::Diagnostic;
use super::source::SourceFile;

/// Every warning and every evaluation-time error a loaded file deserves.
pub fn lint(_rules: &RuleSet, _facts: &SystemFacts, _source: &SourceFile) -> Vec<Diagnostic> {
    Vec::new()
}
