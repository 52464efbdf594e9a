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
    let CheckArgs {
        files,
        root,
        format,
        wide,
    } = args;
    let layout = wide.layout();
    require_root(&root)?;
    let facts = RootReader::new().facts(&root);
    let several = files.len() > 1;
    let mut worst = Status::Ok;
    // Several files in JSON: one array of every file's findings (each
    // names its file).
    let mut all = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let source = match commands::eval::read_rule_file(file)
            .with_context(|| format!("cannot read {}", plugtop::rules::rule_file_name(file)))
        {
            Ok(source) => source,
            // Said, and the others still checked; a file that cannot be
            // read is an error as one cpuplugd would refuse is (cpuplugd
            // exits 1 when it cannot open its file), alone or among others
            // (nu54 M2: alone it was 2).
            Err(e) => {
                super::stderr::complain(&format!(
                    "plugtop: {}",
                    plugtop::error_chain::text(e.as_ref())
                ));
                worst = Status::Failed;
                continue;
            }
        };
        if several && i > 0 && format == CheckFormat::Text {
            writeln!(out)?;
        }
        let status = match format {
            CheckFormat::Text => {
                let mut text = Vec::new();
                let status = commands::check::run(
                    &source,
                    &facts,
                    commands::check::DiagnosticFormat::Text,
                    &mut TerminalText::new(&mut text),
                )?;
                out.write_all(
                    layout
                        .diagnostics(&String::from_utf8_lossy(&text))
                        .as_bytes(),
                )?;
                status
            }
            CheckFormat::Json if several => {
                let mut one = Vec::new();
                let status = commands::check::run(
                    &source,
                    &facts,
                    commands::check::DiagnosticFormat::Json,
                    &mut one,
                )?;
                if let Ok(serde_json::Value::Array(found)) = serde_json::from_slice(&one) {
                    all.extend(found);
                }
                status
            }
            CheckFormat::Json => commands::check::run(
                &source,
                &facts,
                commands::check::DiagnosticFormat::Json,
                &mut *out,
            )?,
        };
        if status != Status::Ok {
            worst = status;
        }
    }
    if several && format == CheckFormat::Json {
        let text = serde_json::to_string_pretty(&serde_json::Value::Array(all))?;
        writeln!(out, "{}", plugtop::report::terminal_safe_json(&text))?;
    }
    Ok(worst)
}
