//! A rule's truth trace as an indented tree: every sub-expression with the
//! value it had this interval, variables by name, and which parts were never
//! evaluated (short-circuit, or a rule that did not run) or faulted.

use std::collections::HashMap;
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

/// Longest sub-expression text a trace line shows: every sub-expression a
/// person writes fits whole (traces used to cut at 48 characters, in the
/// middle of `cpustat.total_ticks[1]`); only machine-made chains thousands
/// long are shortened, so a line stays bounded.
pub const LABEL_MAX: usize = 200;

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

/// Most lines one rule's trace prints for one interval. A small file can
/// nest thousands of levels (a 2,000-character line of `!`, inlined through
/// variables), and a trace that grows with the square of its depth printed
/// gigabytes; this bound keeps one interval's trace readable and small.
pub const MAX_LINES: usize = 400;

/// Deepest level drawn with its own indentation; deeper levels are drawn at
/// this one with their depth written out, so a line never grows with depth.
pub const MAX_INDENT: usize = 24;

/// Shortest run of one prefix operator (`!!!x`, `---x`) drawn as one line.
const RUN: usize = 3;

/// The trace of one rule, as lines of text: every sub-expression with its
/// value, a variable's definition once (later uses say "as above"), runs of
/// one prefix operator on one line, and at most [`MAX_LINES`] lines.
pub fn rule(rules: &RuleSet, source: &SourceFile, trace: &Trace, kind: RuleKind) -> String {
    let mut tree = TextTree {
        rules,
        source,
        trace,
        out: String::new(),
        lines: 0,
        shown: HashMap::new(),
        cut: false,
    };
    let Some(r) = rules.rule(kind) else {
        return tree.out;
    };
    let (end, length) = run_end(rules, r.root);
    let _ = writeln!(
        tree.out,
        "{} = {}    {}{}",
        kind.file_name(),
        outcome(trace.outcome(r.root)),
        shorten(&source.snippet(r.value_span), LABEL_MAX),
        run_note(rules, r.root, length)
    );
    let mut prefix = String::new();
    let top = if length >= RUN { end } else { r.root };
    tree.children(top, 0, &mut prefix);
    tree.out
}

fn kids(rules: &RuleSet, node: NodeId) -> Vec<NodeId> {
    match rules.node(node).kind {
        NodeKind::Neg(c) | NodeKind::Not(c) => vec![c],
        NodeKind::Binary(_, l, r) => vec![l, r],
        NodeKind::Var { body, .. } => kids(rules, body),
        _ => Vec::new(),
    }
}

/// Where a run of one prefix operator starting at `node` ends, and its
/// length: `!!!x` gives the innermost `!` and 3.
fn run_end(rules: &RuleSet, node: NodeId) -> (NodeId, usize) {
    let same = |a: &NodeKind, b: &NodeKind| {
        matches!(
            (a, b),
            (NodeKind::Not(_), NodeKind::Not(_)) | (NodeKind::Neg(_), NodeKind::Neg(_))
        )
    };
    let first = &rules.node(node).kind;
    let (mut end, mut length) = (node, 1);
    while let NodeKind::Not(c) | NodeKind::Neg(c) = rules.node(end).kind {
        if !same(first, &rules.node(c).kind) {
            break;
        }
        end = c;
        length += 1;
    }
    (end, length)
}

/// What a run of prefix operators adds to its line.
fn run_note(rules: &RuleSet, node: NodeId, length: usize) -> String {
    if length < RUN {
        return String::new();
    }
    let op = match rules.node(node).kind {
        NodeKind::Neg(_) => '-',
        _ => '!',
    };
    format!("   ({length} × `{op}` in a row)")
}

/// The text trace being written, with what bounds it.
struct TextTree<'a> {
    rules: &'a RuleSet,
    source: &'a SourceFile,
    trace: &'a Trace,
    out: String,
    lines: usize,
    /// Variables already drawn in full, and whether that drawing had values.
    shown: HashMap<u32, bool>,
    cut: bool,
}

impl TextTree<'_> {
    /// Draws the children of `node` at `depth` (recursion is bounded by
    /// [`MAX_LINES`]: every level draws a line).
    fn children(&mut self, node: NodeId, depth: usize, prefix: &mut String) {
        let list = kids(self.rules, node);
        for (i, child) in list.iter().enumerate() {
            if self.cut {
                return;
            }
            if self.lines == MAX_LINES {
                let _ = writeln!(
                    self.out,
                    "{prefix}… the rest is left out: a trace shows at most {MAX_LINES} lines of one rule"
                );
                self.cut = true;
                return;
            }
            let last = i + 1 == list.len();
            let (branch, more) = if last {
                ("└─ ", "   ")
            } else {
                ("├─ ", "│  ")
            };
            self.child(*child, depth, prefix, branch);
            let grow = depth < MAX_INDENT;
            if grow {
                prefix.push_str(more);
            }
            let below = self.below(*child);
            if let Some(below) = below {
                self.children(below, depth + 1, prefix);
            }
            if grow {
                prefix.truncate(prefix.len() - more.len());
            }
        }
    }

    /// One child's line.
    fn child(&mut self, child: NodeId, depth: usize, prefix: &str, branch: &str) {
        let outcome_now = self.trace.outcome(child);
        let value = match self.rules.node(child).kind {
            NodeKind::Const(_) => String::new(),
            _ => format!(" = {}", outcome(outcome_now)),
        };
        let deep = if depth > MAX_INDENT {
            format!("[depth {depth}] ")
        } else {
            String::new()
        };
        let (_, length) = run_end(self.rules, child);
        let again = match self.rules.node(child).kind {
            NodeKind::Var { var, .. } if !self.draws_var(var, outcome_now) => "   (as above)",
            _ => "",
        };
        let _ = writeln!(
            self.out,
            "{prefix}{branch}{deep}{}{value}{}{again}",
            label(self.rules, self.source, child),
            run_note(self.rules, child, length)
        );
        self.lines += 1;
    }

    /// Whether a use of variable `var` is drawn in full: its first use, or
    /// the first one with values when the first had none.
    fn draws_var(&self, var: u32, now: Outcome) -> bool {
        let evaluated = now != Outcome::NotEvaluated;
        match self.shown.get(&var) {
            None => true,
            Some(had_values) => evaluated && !had_values,
        }
    }

    /// The node whose children come next under `child`'s line, if any.
    fn below(&mut self, child: NodeId) -> Option<NodeId> {
        match self.rules.node(child).kind {
            NodeKind::Var { var, .. } => {
                let now = self.trace.outcome(child);
                if !self.draws_var(var, now) {
                    return None;
                }
                self.shown.insert(var, now != Outcome::NotEvaluated);
                Some(child)
            }
            NodeKind::Not(_) | NodeKind::Neg(_) => {
                let (end, length) = run_end(self.rules, child);
                Some(if length >= RUN { end } else { child })
            }
            _ => Some(child),
        }
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
        _ => shorten(&source.snippet(n.span), LABEL_MAX),
    }
}

/// The sub-expression that settled a node's truth value: through `!`, the
/// operand of `&`/`|` that decided (the first false of `&`, the first true
/// of `|`), down to a comparison or a number read as a condition.
pub fn deciding(rules: &RuleSet, trace: &Trace, node: NodeId) -> NodeId {
    let mut path = Vec::new();
    deciding_path(rules, trace, node, &mut path)
}

/// [`deciding`], keeping every node on the way there (a loop, so a rule
/// nested thousands of levels deep costs no stack).
fn deciding_path(rules: &RuleSet, trace: &Trace, node: NodeId, path: &mut Vec<NodeId>) -> NodeId {
    use crate::rules::expr::BinOp;
    let truth = |n: NodeId| match trace.outcome(n) {
        Outcome::Truth(b) => Some(b),
        Outcome::Number(v) => Some(v != 0.0),
        _ => None,
    };
    let mut at = node;
    loop {
        path.push(at);
        at = match rules.node(at).kind {
            NodeKind::Var { body, .. } => body,
            NodeKind::Not(c) => c,
            NodeKind::Binary(BinOp::Or, l, r) => match (truth(l), truth(r)) {
                (Some(true), _) => l,
                (Some(false), Some(_)) => r,
                _ => return at,
            },
            NodeKind::Binary(BinOp::And, l, r) => match (truth(l), truth(r)) {
                (Some(false), _) => l,
                (Some(true), Some(_)) => r,
                _ => return at,
            },
            _ => return at,
        };
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
    let mut path = Vec::new();
    deciding_path(rules, trace, rule.root, &mut path);
    let path: std::collections::HashSet<NodeId> = path.into_iter().collect();
    walk(
        rules, source, trace, rule.root, 0, expanded, &path, &mut out,
    );
    out
}

/// Most rows [`rows`] gives: the screen shows a screenful, and a rule that
/// nests thousands of levels must not cost thousands of rows every frame.
pub const MAX_ROWS: usize = 2_000;

#[allow(clippy::too_many_arguments)]
fn walk(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    node: NodeId,
    depth: usize,
    expanded: &dyn Fn(NodeId) -> bool,
    path: &std::collections::HashSet<NodeId>,
    out: &mut Vec<Row>,
) {
    if out.len() >= MAX_ROWS {
        return;
    }
    let n = rules.node(node);
    let variable = matches!(n.kind, NodeKind::Var { .. });
    let (end, length) = run_end(rules, node);
    let next = if length >= RUN { end } else { node };
    out.push(Row {
        node,
        depth,
        label: label(rules, source, node) + &run_note(rules, node, length),
        outcome: trace.outcome(node),
        constant: matches!(n.kind, NodeKind::Const(_)),
        variable,
        deciding: path.contains(&node),
    });
    if variable && !expanded(node) {
        return;
    }
    for c in kids(rules, next) {
        walk(rules, source, trace, c, depth + 1, expanded, path, out);
    }
}
