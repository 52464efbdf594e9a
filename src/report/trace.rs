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

/// A node as the user wrote it (a variable by its name and line), shortened.
pub fn label(rules: &RuleSet, source: &SourceFile, node: NodeId) -> String {
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

/// The sub-expression that settled a node's truth value: through `!`, the
/// operand of `&`/`|` that decided (the first false of `&`, the first true
/// of `|`), down to a comparison or a number read as a condition.
pub fn deciding(rules: &RuleSet, trace: &Trace, node: NodeId) -> NodeId {
    use crate::rules::expr::BinOp;
    let truth = |n: NodeId| match trace.outcome(n) {
        Outcome::Truth(b) => Some(b),
        Outcome::Number(v) => Some(v != 0.0),
        _ => None,
    };
    match rules.node(node).kind {
        NodeKind::Var { body, .. } => deciding(rules, trace, body),
        NodeKind::Not(c) => deciding(rules, trace, c),
        NodeKind::Binary(BinOp::Or, l, r) => match (truth(l), truth(r)) {
            (Some(true), _) => deciding(rules, trace, l),
            (Some(false), Some(_)) => deciding(rules, trace, r),
            _ => node,
        },
        NodeKind::Binary(BinOp::And, l, r) => match (truth(l), truth(r)) {
            (Some(false), _) => deciding(rules, trace, l),
            (Some(true), Some(_)) => deciding(rules, trace, r),
            _ => node,
        },
        _ => node,
    }
}

/// A node as the user wrote it, with its value when it is not a constant.
fn term(rules: &RuleSet, source: &SourceFile, trace: &Trace, node: NodeId) -> String {
    let text = label(rules, source, node);
    match (&rules.node(node).kind, trace.outcome(node)) {
        (NodeKind::Const(_), _) => text,
        (_, o) => format!("{text} = {}", outcome(o)),
    }
}

/// Why a rule came out as it did, in one line: "HOTUNPLUG false because
/// CP_idleAVG * onumcpus = 1.09 is not > 1.15".
pub fn explain(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    kind: RuleKind,
) -> Option<String> {
    use crate::rules::expr::BinOp;
    let rule = rules.rule(kind)?;
    let result = trace.outcome(rule.root);
    let name = kind.file_name();
    match result {
        Outcome::NotEvaluated => return Some(format!("{name} not evaluated")),
        Outcome::Number(v) if kind.is_amount() => return Some(format!("{name} = {}", number(v))),
        Outcome::Fault(_) | Outcome::Aborted | Outcome::Fatal => {
            let at = (rule.nodes.start..rule.nodes.end)
                .find(|n| matches!(trace.outcome(*n), Outcome::Fault(_) | Outcome::Fatal))
                .unwrap_or(rule.root);
            let what = match trace.outcome(at) {
                Outcome::Fault(f) => format!("FAULT: {f}"),
                _ => "cpuplugd would exit".to_string(),
            };
            return Some(format!(
                "{name} {what} in {}; the group skipped this interval",
                label(rules, source, at)
            ));
        }
        Outcome::Number(v) if rules.node(rule.root).kind == NodeKind::Const(v) => {
            return Some(format!("{name} {} (the constant {})", v != 0.0, number(v)));
        }
        _ => {}
    }
    let at = deciding(rules, trace, rule.root);
    let value = match result {
        Outcome::Number(v) => (v != 0.0).to_string(),
        o => outcome(o),
    };
    let why = match rules.node(at).kind {
        NodeKind::Binary(op @ (BinOp::Greater | BinOp::Less), l, r) => {
            let holds = matches!(trace.outcome(at), Outcome::Truth(true));
            format!(
                "{} is {}{} {}",
                term(rules, source, trace, l),
                if holds { "" } else { "not " },
                op.symbol(),
                term(rules, source, trace, r)
            )
        }
        _ if at == rule.root => return Some(format!("{name} {value}")),
        _ => term(rules, source, trace, at),
    };
    Some(format!("{name} {value} because {why}"))
}

/// One row of a rendered trace tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub node: NodeId,
    pub depth: usize,
    /// The user's text (or a variable's name and line).
    pub label: String,
    pub outcome: Outcome,
    /// A constant (its value is its text).
    pub constant: bool,
    /// A variable that can be expanded to its definition.
    pub variable: bool,
    /// On the path to the deciding sub-expression.
    pub deciding: bool,
}

/// The tree of a rule as rows, expanding variables listed in `expanded`
/// (all of them when `expand_all`). The text trace and the UI draw these.
pub fn rows(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    kind: RuleKind,
    expanded: &dyn Fn(NodeId) -> bool,
) -> Vec<Row> {
    let mut out = Vec::new();
    let Some(rule) = rules.rule(kind) else {
        return out;
    };
    let decider = deciding(rules, trace, rule.root);
    let mut path = Vec::new();
    on_path(rules, rule.root, decider, &mut path);
    walk(
        rules, source, trace, rule.root, 0, expanded, &path, &mut out,
    );
    out
}

fn on_path(rules: &RuleSet, node: NodeId, target: NodeId, path: &mut Vec<NodeId>) -> bool {
    if node == target {
        path.push(node);
        return true;
    }
    let children = match rules.node(node).kind {
        NodeKind::Neg(c) | NodeKind::Not(c) => vec![c],
        NodeKind::Binary(_, l, r) => vec![l, r],
        NodeKind::Var { body, .. } => vec![body],
        _ => Vec::new(),
    };
    for c in children {
        if on_path(rules, c, target, path) {
            path.push(node);
            return true;
        }
    }
    false
}

#[allow(clippy::too_many_arguments)]
fn walk(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    node: NodeId,
    depth: usize,
    expanded: &dyn Fn(NodeId) -> bool,
    path: &[NodeId],
    out: &mut Vec<Row>,
) {
    let n = rules.node(node);
    let variable = matches!(n.kind, NodeKind::Var { .. });
    out.push(Row {
        node,
        depth,
        label: label(rules, source, node),
        outcome: trace.outcome(node),
        constant: matches!(n.kind, NodeKind::Const(_)),
        variable,
        deciding: path.contains(&node),
    });
    if variable && !expanded(node) {
        return;
    }
    for c in kids(rules, node) {
        walk(rules, source, trace, c, depth + 1, expanded, path, out);
    }
}
