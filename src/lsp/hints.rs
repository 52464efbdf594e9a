//! Inlay hints: the live value after each variable definition and each
//! rule, as the screen's values and rules panels show them, so the file
//! reads like the guest's state while it is written.

use lsp_types::{InlayHint, InlayHintLabel, InlayHintTooltip, Range};

use super::live::Live;
use super::position::LineIndex;
use crate::report::node_text::shorten;
use crate::rules::RuleKind;

/// Longest hint label, characters: a hint is a glance, the tooltip and the
/// hover carry the sentence.
const MAX_LABEL: usize = 40;

/// The hints for the lines of `text` (open as `uri`) inside `range`; none
/// while the root has no readings or the history fills.
pub fn hints(live: &Live, uri: &str, text: &str, range: Range) -> Vec<InlayHint> {
    let Some(rules) = live.rules(uri) else {
        return Vec::new();
    };
    let index = LineIndex::new(text);
    let wanted = |line: usize| {
        let l = line as u32;
        l >= range.start.line && l <= range.end.line
    };
    let mut out = Vec::new();
    let mut push = |line: usize, label: String, tooltip: Option<String>| {
        // Lines are 1-based in the rule set.
        let Some(line) = line.checked_sub(1).filter(|l| wanted(*l)) else {
            return;
        };
        let Some(position) = index.line_end(line) else {
            return;
        };
        out.push(InlayHint {
            position,
            label: InlayHintLabel::String(shorten(&label, MAX_LABEL)),
            kind: None,
            text_edits: None,
            tooltip: tooltip.map(InlayHintTooltip::String),
            padding_left: Some(true),
            padding_right: None,
            data: None,
        });
    };
    for var in &rules.variables {
        let Some(value) = live.variable(uri, &var.name) else {
            continue;
        };
        if value.starts_with("history filling") || value.starts_with("not computed") {
            continue;
        }
        push(var.line, format!("= {value}"), None);
    }
    for kind in RuleKind::ALL {
        let (Some(rule), Some(short)) = (rules.rule(kind), live.rule_short(uri, kind)) else {
            continue;
        };
        if short == "…" {
            continue;
        }
        push(rule.line, format!("→ {short}"), live.rule(uri, kind));
    }
    out.sort_by_key(|h| (h.position.line, h.position.character));
    out
}
