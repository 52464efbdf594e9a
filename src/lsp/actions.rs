//! Code actions: each fix `check` suggests with a replacement text (`&&`
//! to `&`, the merged vmstat name, `meminfo.Buffers` for `meminfo
//! Buffers`, the missing final newline, ...) as a quick fix that replaces
//! the finding's span, and the fixes that need the text around it
//! (`fixes`: `>=` over its comparison, a missing CPU_MAX).

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, Range, TextEdit, Uri, WorkspaceEdit};

use super::diagnostics::{analyse, convert};
use super::position::LineIndex;
use crate::kernel::SystemFacts;

/// Text re-checked at most per request by the fixes that need the text
/// around a finding (each loads the fixed file once): a few KB file gets
/// a fix for each of a thousand findings, a 1 MB one for its first four,
/// and a request over a whole file of 50,000 `>=` is answered in about a
/// second instead of keeping the server busy for an hour.
const FIX_BUDGET: usize = 4 << 20;

fn overlaps(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The quick fixes for findings that touch `range`.
pub fn actions(uri: &Uri, text: &str, range: Range, facts: &SystemFacts) -> Vec<CodeAction> {
    let (_, outcome) = analyse(text, facts);
    let index = LineIndex::new(text);
    let mut budget = FIX_BUDGET;
    outcome
        .diagnostics
        .iter()
        // A finding about the whole file is shown at its start: only a fix
        // that knows where its text goes applies to it.
        .filter(|d| !d.span.is_file() || d.replacement.is_none())
        .filter_map(|d| {
            if !overlaps(index.range(d.span), range) {
                return None;
            }
            let (at, new, title) = match &d.replacement {
                Some(new) => {
                    let at = index.range(d.span);
                    let title = match (at.start == at.end, new.as_str()) {
                        (true, "\n") => "End the file with a newline".to_string(),
                        (true, _) => format!("Insert `{new}`"),
                        (false, _) => format!("Replace with `{new}`"),
                    };
                    (at, new.clone(), title)
                }
                None => {
                    let f = super::fixes::fix(text, d, facts, &mut budget)?;
                    (index.range(f.span), f.text, f.title)
                }
            };
            let edit = TextEdit {
                range: at,
                new_text: new,
            };
            Some(CodeAction {
                title,
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
        // Each fix repeats its finding and the URI: a request over a
        // whole file of findings is answered with the first ones only.
        .take(super::navigate::MAX_PLACES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_final_newline_is_added_by_a_quick_fix() {
        let uri: Uri = "file:///etc/cpuplugd.conf"
            .parse()
            .unwrap_or_else(|e| panic!("uri: {e:?}"));
        let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"";
        let facts = SystemFacts::any_machine(4, "test");
        let everywhere = Range::new(
            lsp_types::Position::new(0, 0),
            lsp_types::Position::new(9, 0),
        );
        let found = actions(&uri, text, everywhere, &facts);
        let fix = found
            .iter()
            .find(|a| a.title == "End the file with a newline")
            .unwrap_or_else(|| panic!("{found:?}"));
        let edits = fix
            .edit
            .as_ref()
            .and_then(|e| e.changes.as_ref())
            .and_then(|c| c.get(&uri))
            .cloned()
            .unwrap_or_default();
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].new_text, "\n");
        assert_eq!(edits[0].range.start, lsp_types::Position::new(1, 11));
        assert_eq!(edits[0].range.start, edits[0].range.end);
    }
}
