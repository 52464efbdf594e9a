//! A rule's truth trace as an indented tree: every sub-expression with the
//! value it had this interval, variables by name, and which parts were never
//! evaluated (short-circuit, or a rule that did not run) or faulted.

use std::fmt::Write as _;

use crate::rules::eval::{Outcome, Trace};
use crate::rules::expr::{NodeId, NodeKind};
use crate::rules::{RuleKind, RuleSet, SourceFile};

/// A number the way the trace shows it: integers whole, others to four
/// decimals, extremes in exponent form.
pub fn number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() >= 1e-4 && v.abs() < 1e9 {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.4e}")
    }
}

/// An outcome in words.
pub fn outcome(o: Outcome) -> String {
    match o {
        Outcome::NotEvaluated => "not evaluated".into(),
        Outcome::Number(v) => number(v),
        Outcome::Truth(b) => b.to_string(),
        Outcome::Fault(f) => format!("FAULT: {f}"),
        Outcome::Fatal => "cpuplugd would exit here".into(),
        Outcome::Aborted => "aborted".into(),
    }
}

fn shorten(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let mut s: String = flat.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// The trace of one rule, as lines of text.
pub fn rule(rules: &RuleSet, source: &SourceFile, trace: &Trace, kind: RuleKind) -> String {
    let mut out = String::new();
    let Some(r) = rules.rule(kind) else {
        return out;
    };
    let _ = writeln!(
        out,
        "{} = {}    {}",
        kind.file_name(),
        outcome(trace.outcome(r.root)),
        shorten(&source.snippet(r.value_span), 60)
    );
    children(rules, source, trace, r.root, "", &mut out);
    out
}

fn kids(rules: &RuleSet, node: NodeId) -> Vec<NodeId> {
    match rules.node(node).kind {
        NodeKind::Neg(c) | NodeKind::Not(c) => vec![c],
        NodeKind::Binary(_, l, r) => vec![l, r],
        NodeKind::Var { body, .. } => kids(rules, body),
        _ => Vec::new(),
    }
}

fn label(rules: &RuleSet, source: &SourceFile, node: NodeId) -> String {
    let n = rules.node(node);
    match &n.kind {
        NodeKind::Var { var, .. } => {
            let def = &rules.variables[*var as usize];
            format!("{} (line {})", def.name, def.line)
        }
        _ => shorten(&source.snippet(n.span), 48),
    }
}

fn children(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    node: NodeId,
    prefix: &str,
    out: &mut String,
) {
    let list = kids(rules, node);
    for (i, child) in list.iter().enumerate() {
        let last = i + 1 == list.len();
        let (branch, more) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        let value = match rules.node(*child).kind {
            NodeKind::Const(_) => String::new(),
            _ => format!(" = {}", outcome(trace.outcome(*child))),
        };
        let _ = writeln!(
            out,
            "{prefix}{branch}{}{value}",
            label(rules, source, *child)
        );
        children(
            rules,
            source,
            trace,
            *child,
            &format!("{prefix}{more}"),
            out,
        );
    }
}
