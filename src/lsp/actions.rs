//! Code actions: each fix `check` suggests with a replacement text (`&&`
//! to `&`, the merged vmstat name, `meminfo.Buffers` for `meminfo
//! Buffers`, ...) as a quick fix that replaces the finding's span.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, Range, TextEdit, Uri, WorkspaceEdit};

use super::diagnostics::{analyse, convert};
use super::position::LineIndex;
use crate::kernel::SystemFacts;

fn overlaps(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The quick fixes for findings that touch `range`.
pub fn actions(uri: &Uri, text: &str, range: Range, facts: &SystemFacts) -> Vec<CodeAction> {
    let (_, outcome) = analyse(text, facts);
    let index = LineIndex::new(text);
    outcome
        .diagnostics
        .iter()
        .filter(|d| !d.span.is_file())
        .filter_map(|d| {
            let new = d.replacement.as_ref()?;
            let at = index.range(d.span);
            if !overlaps(at, range) {
                return None;
            }
            let edit = TextEdit {
                range: at,
                new_text: new.clone(),
            };
            Some(CodeAction {
                title: format!("Replace with `{new}`"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![convert(uri, &index, &outcome, d)]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            })
        })
        .collect()
}
