//! `plugtop check`: every error and warning in a rule file.

use std::io::Write;

use anyhow::Context;

use super::sources::require_root;
use crate::cli::{CheckArgs, CheckFormat};
use plugtop::commands::{self, Status};
use plugtop::kernel::root::RootReader;
use plugtop::report::TerminalText;

/// `plugtop check`.
pub fn run(args: CheckArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let CheckArgs { file, root, format } = args;
    require_root(&root)?;
    let source = commands::eval::read_rule_file(&file)
        .with_context(|| format!("cannot read {}", plugtop::rules::rule_file_name(&file)))?;
    let facts = RootReader::new().facts(&root);
    Ok(match format {
        CheckFormat::Text => commands::check::run(
            &source,
            &facts,
            commands::check::DiagnosticFormat::Text,
            &mut TerminalText::new(out),
        )?,
        CheckFormat::Json => commands::check::run(
            &source,
            &facts,
            commands::check::DiagnosticFormat::Json,
            out,
        )?,
    })
}
