//! A rule's truth trace as an indented tree: every sub-expression with the
//! value it had this interval, variables by name, and which parts were never
//! evaluated (short-circuit, or a rule that did not run) or faulted.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::report::node_text::shorten;
pub use crate::report::node_text::{LABEL_MAX, label, number};
use crate::report::units::{Units, ValueUnit};
use crate::rules::eval::{Outcome, Trace};
use crate::rules::expr::{NodeId, NodeKind};
use crate::rules::{RuleKind, RuleSet, SourceFile};

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

/// A node as the user wrote it (which a narrow screen may leave out), with
/// its value and the value's unit when it is not a constant.
fn term(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    node: NodeId,
    unit_of: &mut dyn FnMut(NodeId) -> ValueUnit,
) -> Vec<Piece> {
    let text = label(rules, source, node);
    match (&rules.node(node).kind, trace.outcome(node)) {
        (NodeKind::Const(_), _) => vec![Piece::kept(text)],
        (_, o) => vec![
            Piece::optional(text, "…", 1),
            Piece::kept(format!(" = {}", measured(o, unit_of(node)))),
        ],
    }
}

/// The unit of the value at `node` of `rules`, worked out afresh: what
/// [`explain_pieces_with`] is given by those who keep no units.
pub fn unit_of(rules: &RuleSet, node: NodeId) -> ValueUnit {
    Units::new(rules).of(node)
}

/// An outcome in words, a number with its unit ("1771301 kB").
pub fn measured(o: Outcome, unit: ValueUnit) -> String {
    match o {
        Outcome::Number(v) => unit.after(v, &number(v)),
        o => outcome(o),
    }
}

/// A piece of an explanation: the values are kept, the connecting words,
/// the sub-expressions' texts and the trailing detail may give way (to
/// `short`) on a narrow screen, where the whole explanation is one key
/// away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub text: String,
    /// What stands for it when room is short; `None`: always shown.
    pub short: Option<&'static str>,
    /// Which pieces give way first: the lowest rank, then the next; in one
    /// rank the last piece first.
    pub rank: u8,
}

impl Piece {
    fn kept(text: impl Into<String>) -> Self {
        Piece {
            text: text.into(),
            short: None,
            rank: 0,
        }
    }

    fn optional(text: impl Into<String>, short: &'static str, rank: u8) -> Self {
        Piece {
            text: text.into(),
            short: Some(short),
            rank,
        }
    }
}

/// Why a rule came out as it did, in one line: "HOTUNPLUG false because
/// (CP_idleAVG * onumcpus) = 1.09 CPUs is not > 1.15".
pub fn explain(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    kind: RuleKind,
) -> Option<String> {
    explain_pieces(rules, source, trace, kind).map(|p| p.into_iter().map(|p| p.text).collect())
}

/// [`explain`] in pieces, so a narrow screen can leave sub-expression texts
/// out and keep every value.
pub fn explain_pieces(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    kind: RuleKind,
) -> Option<Vec<Piece>> {
    explain_pieces_with(rules, source, trace, kind, &mut |node| unit_of(rules, node))
}

/// [`explain_pieces`] with the values' units from `unit_of` (the screen
/// keeps them from frame to frame: [`unit_of`] for each node, once).
pub fn explain_pieces_with(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    kind: RuleKind,
    unit_of: &mut dyn FnMut(NodeId) -> ValueUnit,
) -> Option<Vec<Piece>> {
    use crate::rules::expr::BinOp;
    let rule = rules.rule(kind)?;
    let result = trace.outcome(rule.root);
    let name = kind.file_name();
    let one = |text: String| Some(vec![Piece::kept(text)]);
    match result {
        Outcome::NotEvaluated => return one(format!("{name} not evaluated")),
        // CMM_INC and CMM_DEC are numbers of pages, whatever their
        // expression computes (the paper's divide kB by 40).
        Outcome::Number(_) if kind.is_amount() => {
            return one(format!(
                "{name} = {}",
                measured(result, ValueUnit::Of(crate::report::units::Base::Pages))
            ));
        }
        Outcome::Fault(_) | Outcome::Aborted | Outcome::Fatal => {
            let at = (rule.nodes.start..rule.nodes.end)
                .find(|n| matches!(trace.outcome(*n), Outcome::Fault(_) | Outcome::Fatal))
                .unwrap_or(rule.root);
            return Some(match trace.outcome(at) {
                Outcome::Fault(f) => vec![
                    Piece::kept(format!(
                        "{name} FAULT: {}",
                        crate::report::fault_words::at_node(rules, source, trace, at, f)
                    )),
                    Piece::optional("; the group skipped this interval", "", 0),
                ],
                _ => vec![
                    Piece::kept(format!("{name} cpuplugd would exit in ")),
                    Piece::optional(label(rules, source, at), "…", 1),
                ],
            });
        }
        Outcome::Number(v) if rules.node(rule.root).kind == NodeKind::Const(v) => {
            return one(format!("{name} {} (the constant {})", v != 0.0, number(v)));
        }
        _ => {}
    }
    let at = deciding(rules, trace, rule.root);
    let value = match result {
        Outcome::Number(v) => (v != 0.0).to_string(),
        o => outcome(o),
    };
    let mut out = vec![
        Piece::kept(format!("{name} {value}")),
        Piece::optional(" because ", ": ", 0),
    ];
    match rules.node(at).kind {
        NodeKind::Binary(op @ (BinOp::Greater | BinOp::Less), l, r) => {
            let holds = matches!(trace.outcome(at), Outcome::Truth(true));
            out.extend(term(rules, source, trace, l, unit_of));
            out.push(Piece::kept(format!(
                " is {}{} ",
                if holds { "" } else { "not " },
                op.symbol()
            )));
            out.extend(term(rules, source, trace, r, unit_of));
        }
        _ if at == rule.root => return one(format!("{name} {value}")),
        _ => out.extend(term(rules, source, trace, at, unit_of)),
    }
    Some(out)
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
    /// What its value is measured in.
    pub unit: ValueUnit,
    /// Left out by a short-circuit: the left side of an `&` was false or
    /// of an `|` true (what "not evaluated" then means).
    pub short_circuited: bool,
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
    let mut units = Units::new(rules);
    let mut tree = RowWalk {
        rules,
        source,
        trace,
        expanded,
        path: &path,
        units: &mut units,
        out: &mut out,
    };
    tree.walk(rule.root, 0, false);
    out
}

/// Most rows [`rows`] gives: the screen shows a screenful, and a rule that
/// nests thousands of levels must not cost thousands of rows every frame.
pub const MAX_ROWS: usize = 2_000;

/// The tree being walked into rows, with what every row needs.
struct RowWalk<'a, 'b> {
    rules: &'a RuleSet,
    source: &'a SourceFile,
    trace: &'a Trace,
    expanded: &'a dyn Fn(NodeId) -> bool,
    path: &'a std::collections::HashSet<NodeId>,
    units: &'b mut Units<'a>,
    out: &'b mut Vec<Row>,
}

impl RowWalk<'_, '_> {
    /// Rows for `node` and below; `cut` when a short-circuit above left it out.
    fn walk(&mut self, node: NodeId, depth: usize, cut: bool) {
        use crate::rules::expr::BinOp;
        if self.out.len() >= MAX_ROWS {
            return;
        }
        let rules = self.rules;
        let n = rules.node(node);
        let variable = matches!(n.kind, NodeKind::Var { .. });
        let (end, length) = run_end(rules, node);
        let next = if length >= RUN { end } else { node };
        self.out.push(Row {
            node,
            depth,
            label: label(rules, self.source, node) + &run_note(rules, node, length),
            outcome: self.trace.outcome(node),
            constant: matches!(n.kind, NodeKind::Const(_)),
            variable,
            deciding: self.path.contains(&node),
            unit: self.units.of(node),
            short_circuited: cut,
        });
        if variable && !(self.expanded)(node) {
            return;
        }
        let truth = |n: NodeId| match self.trace.outcome(n) {
            Outcome::Truth(b) => Some(b),
            Outcome::Number(v) => Some(v != 0.0),
            _ => None,
        };
        let inner = match rules.node(next).kind {
            NodeKind::Var { body, .. } => body,
            _ => next,
        };
        // The right side of `&` after a false left, of `|` after a true one.
        let right_cut = match rules.node(inner).kind {
            NodeKind::Binary(BinOp::And, l, _) => truth(l) == Some(false),
            NodeKind::Binary(BinOp::Or, l, _) => truth(l) == Some(true),
            _ => false,
        };
        let children = kids(rules, next);
        let last = children.len().saturating_sub(1);
        for (i, c) in children.into_iter().enumerate() {
            self.walk(c, depth + 1, cut || (right_cut && i == last && i > 0));
        }
    }
}
