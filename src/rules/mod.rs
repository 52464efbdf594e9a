//! The cpuplugd rule language: reading a rule file line by line exactly as the
//! daemon does, parsing expressions (grammar in `grammar/cpuplugd.pest`),
//! evaluating them with cpuplugd's floating-point fault rules, and explaining
//! problems as diagnostics that point at the user's own text.

pub mod config;
pub mod diagnostic;
pub mod eval;
pub mod expr;
pub mod fpu;
pub mod lint;
pub mod number;
pub mod parser;
pub mod print;
pub mod render;
pub mod ruleset;
pub mod source;
pub mod suggest;

pub use config::{LoadOutcome, load};
pub use diagnostic::{Diagnostic, Severity};
pub use eval::{Evaluator, Outcome, Stop, Trace};
pub use expr::{NodeId, RuleKind};
pub use ruleset::{RuleSet, Settings, SystemFacts};
pub use source::{SourceFile, Span};

/// Reads and loads a rule file for the machine `facts` describes. A file
/// cpuplugd would refuse comes back as its errors, rendered with carets,
/// ready to show; nothing else is needed to report it.
pub fn load_path(
    path: &std::path::Path,
    facts: &SystemFacts,
) -> Result<(RuleSet, SourceFile), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file = SourceFile::new(path.display().to_string(), bytes);
    let outcome = load(&file, facts);
    if outcome.refusal.is_some() {
        let errors: Vec<_> = outcome
            .diagnostics
            .iter()
            .filter(|d| {
                d.severity == Severity::Error && d.daemon == diagnostic::DaemonEffect::RefusesToLoad
            })
            .cloned()
            .collect();
        return Err(format!(
            "{}{}",
            render::text(&file, &errors),
            render::summary(&file, &outcome)
        ));
    }
    Ok((outcome.rules, file))
}
