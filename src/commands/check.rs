//! `plugtop check`: every error and warning in a rule file, at once.

use std::io::Write;

use super::Status;
use crate::rules::render;
use crate::rules::{SourceFile, SystemFacts, load};

/// Output format of the diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticFormat {
    Text,
    Json,
}

/// Checks `file` against the machine `facts` describes.
pub fn run(
    file: &SourceFile,
    facts: &SystemFacts,
    format: DiagnosticFormat,
    out: &mut dyn Write,
) -> std::io::Result<Status> {
    let outcome = load(file, facts);
    let status = Status::of(!outcome.has_errors());
    // A recording or a binary file: what it is and what cpuplugd would do
    // with it, in one line, not a diagnostic for each of its lines.
    if format == DiagnosticFormat::Text
        && let Some(line) = render::not_rules(file, &outcome)
    {
        out.write_all(line.as_bytes())?;
        return Ok(status);
    }
    match format {
        // One finding at a time: 100,000 findings are 27 MB of text,
        // which need not sit in memory at once.
        DiagnosticFormat::Text => {
            for d in &outcome.diagnostics {
                out.write_all(render::text(file, std::slice::from_ref(d)).as_bytes())?;
            }
        }
        DiagnosticFormat::Json => writeln!(out, "{}", render::json(file, &outcome.diagnostics))?,
    }
    if format == DiagnosticFormat::Text {
        if outcome.refusal.is_none() {
            for hint in crate::control::patterns::from_rules(&outcome.rules, file) {
                writeln!(out, "{}: {hint}\n", render::shown(file.name()))?;
            }
            for form in crate::tune::forms::matching(file, &crate::tune::forms::built_in()) {
                writeln!(
                    out,
                    "{}: this is the {} form (examples/forms/{}.conf); `plugtop tune` searches \
                     it and the other forms on a scenario or your recording\n",
                    render::shown(file.name()),
                    form.title(),
                    form.name
                )?;
            }
        }
        out.write_all(render::summary(file, &outcome).as_bytes())?;
    }
    Ok(status)
}
