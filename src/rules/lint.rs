//! Findings beyond what cpuplugd reports when it loads a file: errors it
//! would only hit while running (a truth value used as a number, a /proc
//! name this kernel lacks) and warnings where its reading surprises people.

use std::collections::HashMap;

use super::diagnostic::{DaemonEffect, Diagnostic, DiagnosticCode};
use super::expr::{BinOp, CpuStat, NOT_OPCODE, NodeId, NodeKind, Reading, RuleKind};
use super::hysteresis::{every_leaf, resolve};
use super::parser::{ExprBuilder, FieldNames, Text, Unit, VarDef, example_field};
use super::ruleset::{MemoryOff, RuleSet, describe_missing_cpu};
use super::source::{SourceFile, Span};
use super::suggest;
use crate::kernel::SystemFacts;

/// Every check-time error and warning for a loaded file.
pub fn lint(
    rules: &RuleSet,
    facts: &SystemFacts,
    source: &SourceFile,
    refused: bool,
    suggestions: &suggest::Budget,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for rule in rules.rules.iter().flatten() {
        let ctx = if rule.kind.is_amount() {
            Ctx::Number
        } else {
            Ctx::Truth
        };
        let mut found = Vec::new();
        truth_and_numbers(rules, source, rule.root, ctx, None, rule.kind, &mut found);
        out.extend(found.into_iter().map(|(d, dead)| {
            if dead {
                d.demoted("but it is never evaluated: the left side of `&`/`|` always decides")
            } else {
                d
            }
        }));
        scope_and_keywords(rules, source, rule.root, rule.kind, &mut out);
        constant_rule(rules, rule.root, rule.kind, rule.value_span, &mut out);
    }
    readings(rules, facts, source, suggestions, &mut out);
    variables(rules, refused, suggestions, &mut out);
    long_update(rules, &mut out);
    let off = GroupsOff::of(rules, facts, refused);
    groups(rules, &off, &mut out);
    if !refused {
        out.extend(super::hysteresis::warnings(rules, source));
    }
    never_evaluated(rules, &off, &mut out);
    out
}

/// Why each group is off, as far as `check` may say it: in a file that
/// loads, cpuplugd's whole verdict; in a refused one only what the machine
/// decides (a group is also off there because of the errors, which are
/// said already), so the same line gets the same finding whatever else is
/// wrong in the file.
struct GroupsOff {
    cpu: Option<String>,
    memory: Option<MemoryOff>,
}

impl GroupsOff {
    fn of(rules: &RuleSet, facts: &SystemFacts, refused: bool) -> Self {
        if refused {
            return GroupsOff {
                cpu: None,
                memory: super::ruleset::memory_off_on_machine(facts),
            };
        }
        GroupsOff {
            cpu: (!rules.cpu_enabled).then(|| format!("it needs {}", describe_missing_cpu(rules))),
            memory: rules.mem_off.clone(),
        }
    }
}

/// An error cpuplugd meets only when it evaluates a rule (or a reading an
/// imported history lacks) is none on this kernel (history) when every
/// rule it sits in belongs to a group that is off: the
/// group's rules are never evaluated, so cpuplugd never stops on it. Said
/// as a warning with the reason, so that `check` does not promise an exit
/// that never comes (and the file still gets fixed before the group turns
/// on elsewhere).
fn never_evaluated(rules: &RuleSet, groups_off: &GroupsOff, out: &mut [Diagnostic]) {
    let memory = |k: RuleKind| {
        matches!(
            k,
            RuleKind::Memplug | RuleKind::Memunplug | RuleKind::CmmInc | RuleKind::CmmDec
        )
    };
    let off = |k: RuleKind| {
        if memory(k) {
            groups_off
                .memory
                .as_ref()
                .map(|why| format!("memory group off: {}", why.reason()))
        } else {
            groups_off.cpu.as_ref().map(|_| "CPU group off".to_string())
        }
    };
    // One pass over the nodes: the rules each place is part of (a
    // variable's text is in every rule that reads it). Each finding then
    // costs one look-up, whatever the file's size.
    let mut rules_at: HashMap<(u32, u32), Vec<RuleKind>> = HashMap::new();
    for r in rules.rules.iter().flatten() {
        for n in r.nodes.clone() {
            let at = rules.node(n).span;
            let kinds = rules_at.entry((at.start, at.end)).or_default();
            if !kinds.contains(&r.kind) {
                kinds.push(r.kind);
            }
        }
    }
    // A reading an imported history lacks matters, as such an error does,
    // only where its rule is evaluated.
    for d in out.iter_mut().filter(|d| {
        (d.daemon == DaemonEffect::StopsWhenEvaluated || d.code == NOT_IN_HISTORY)
            && !d.span.is_file()
    }) {
        let Some(inside) = rules_at.get(&(d.span.start, d.span.end)) else {
            continue;
        };
        let reasons: Vec<Option<String>> = inside.iter().map(|k| off(*k)).collect();
        if let Some(Some(why)) = reasons.first()
            && reasons.iter().all(Option::is_some)
        {
            let why = format!("never evaluated on this kernel: {why}");
            *d = d.clone().demoted(&why);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Truth,
    Number,
}

fn is_truth(kind: &NodeKind) -> Option<u8> {
    match kind {
        NodeKind::Not(_) => Some(NOT_OPCODE),
        NodeKind::Binary(op, ..) if op.yields_truth() => Some(*op as u8),
        _ => None,
    }
}

fn leftmost_leaf(rules: &RuleSet, node: NodeId) -> NodeId {
    match rules.node(node).kind {
        NodeKind::Binary(_, l, _) if !rules.node(node).paren => leftmost_leaf(rules, l),
        _ => node,
    }
}

fn stops_message(code: u8) -> String {
    format!("cpuplugd stops with \"Invalid term specified: {code}\" when it evaluates this")
}

/// The truth value of a constant condition, if it is one.
fn constant_truth(rules: &RuleSet, node: NodeId) -> Option<bool> {
    if !is_constant(rules, node) {
        return None;
    }
    let eval = super::eval::Evaluator::new(rules, &super::eval::NoReadings);
    eval.truth(node, &mut super::eval::NoTrace).ok()
}

fn truth_and_numbers(
    rules: &RuleSet,
    source: &SourceFile,
    node: NodeId,
    ctx: Ctx,
    parent: Option<NodeId>,
    kind: RuleKind,
    out: &mut Vec<(Diagnostic, bool)>,
) {
    let n = rules.node(node);
    if ctx == Ctx::Number
        && let Some(code) = is_truth(&n.kind)
    {
        out.push((
            truth_as_number(rules, source, node, code, parent, kind),
            false,
        ));
        return;
    }
    match &n.kind {
        NodeKind::Not(c) => truth_and_numbers(rules, source, *c, Ctx::Truth, Some(node), kind, out),
        NodeKind::Binary(op @ (BinOp::And | BinOp::Or), l, r) => {
            truth_and_numbers(rules, source, *l, Ctx::Truth, Some(node), kind, out);
            let decides = if *op == BinOp::Or {
                Some(true)
            } else {
                Some(false)
            };
            let dead = constant_truth(rules, *l) == decides;
            let start = out.len();
            truth_and_numbers(rules, source, *r, Ctx::Truth, Some(node), kind, out);
            if dead {
                for found in &mut out[start..] {
                    found.1 = true;
                }
            }
        }
        NodeKind::Binary(_, l, r) => {
            truth_and_numbers(rules, source, *l, Ctx::Number, Some(node), kind, out);
            truth_and_numbers(rules, source, *r, Ctx::Number, Some(node), kind, out);
        }
        NodeKind::Neg(c) => {
            truth_and_numbers(rules, source, *c, Ctx::Number, Some(node), kind, out)
        }
        NodeKind::Var { body, .. } => {
            truth_and_numbers(rules, source, *body, ctx, parent, kind, out)
        }
        _ => {}
    }
}

fn truth_as_number(
    rules: &RuleSet,
    source: &SourceFile,
    node: NodeId,
    code: u8,
    parent: Option<NodeId>,
    kind: RuleKind,
) -> Diagnostic {
    let n = rules.node(node);
    let text = source.snippet(n.span);
    let stops = stops_message(code);
    let parent_kind = parent.map(|p| &rules.node(p).kind);
    match parent_kind {
        Some(NodeKind::Neg(_)) => {
            let p = rules.node(parent.unwrap_or(node));
            let leaf = source.snippet(rules.node(leftmost_leaf(rules, node)).span);
            Diagnostic::stops(
                DiagnosticCode::TruthAsNumber,
                p.span,
                format!("this `-` applies to everything to its right, `{text}`, which is a truth value; {stops}"),
            )
            .with_help(format!("to negate only `{leaf}`, write `(-{leaf})`"))
        }
        Some(NodeKind::Binary(op @ (BinOp::Greater | BinOp::Less), l, r))
            if *l == node || resolve(rules, *l) == node =>
        {
            let mut d = Diagnostic::stops(
                DiagnosticCode::TruthAsNumber,
                rules.node(parent.unwrap_or(node)).span,
                format!(
                    "comparisons do not chain: `{text}` is a truth value and `{}` needs a number; {stops}",
                    op.symbol()
                ),
            );
            if let NodeKind::Binary(inner @ (BinOp::Greater | BinOp::Less), a, b) =
                &rules.node(resolve(rules, node)).kind
            {
                d = d.with_help(format!(
                    "write `{} {} {} & {} {} {}`",
                    source.snippet(rules.node(*a).span),
                    inner.symbol(),
                    source.snippet(rules.node(*b).span),
                    source.snippet(rules.node(*b).span),
                    op.symbol(),
                    source.snippet(rules.node(*r).span)
                ));
            }
            d
        }
        Some(NodeKind::Binary(op, ..)) => Diagnostic::stops(
            DiagnosticCode::TruthAsNumber,
            n.span,
            format!(
                "`{text}` is a truth value, but `{}` needs a number; {stops}",
                op.symbol()
            ),
        )
        .with_help("cpuplugd has no true = 1; split the decision into rules instead"),
        _ => Diagnostic::stops(
            DiagnosticCode::TruthAsNumber,
            n.span,
            format!(
                "{} must be a number, but `{text}` is a truth value; {stops}",
                kind.file_name()
            ),
        )
        .with_help(format!(
            "{} is an amount of pages, e.g. `meminfo.MemFree / 40`",
            kind.file_name()
        )),
    }
}

/// Warnings about `-`/`!` scope and keywords that mean something else in the
/// other group.
fn scope_and_keywords(
    rules: &RuleSet,
    source: &SourceFile,
    root: NodeId,
    kind: RuleKind,
    out: &mut Vec<Diagnostic>,
) {
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let n = rules.node(id);
        match &n.kind {
            NodeKind::Neg(c) | NodeKind::Not(c) => {
                let is_neg = matches!(n.kind, NodeKind::Neg(_));
                let child = rules.node(*c);
                if let NodeKind::Binary(op, ..) = child.kind
                    && !child.paren
                    && (!is_neg || !matches!(op, BinOp::Mul | BinOp::Div))
                    && is_truth(&child.kind).is_none_or(|_| !is_neg)
                {
                    let sign = if is_neg { "-" } else { "!" };
                    let all = source.snippet(child.span);
                    let leaf = source.snippet(rules.node(leftmost_leaf(rules, *c)).span);
                    out.push(
                        Diagnostic::warning(
                            if is_neg { DiagnosticCode::MinusScope } else { DiagnosticCode::NotScope },
                            n.span,
                            format!("cpuplugd reads this as `{sign}({all})`: a prefix `{sign}` takes everything to its right, not just `{leaf}`"),
                        )
                        .with_help(format!("write `({sign}{leaf})` if you meant only `{leaf}`, or `{sign}({all})` to say so")),
                    );
                }
                stack.push(*c);
            }
            NodeKind::Binary(_, l, r) => {
                stack.push(*r);
                stack.push(*l);
            }
            NodeKind::Var { body, .. } => stack.push(*body),
            NodeKind::Keyword(k) => {
                let cpu_rule = matches!(kind, RuleKind::Hotplug | RuleKind::Hotunplug);
                if cpu_rule && k.is_memory() {
                    out.push(Diagnostic::warning(
                        DiagnosticCode::LaggingKeyword,
                        n.span,
                        format!("in a CPU rule `{}` is the previous interval's value: cpuplugd evaluates the CPU rules before it updates the memory keywords", k.name()),
                    ));
                } else if !cpu_rule && !k.is_memory() && !rules.cpu_enabled {
                    out.push(Diagnostic::warning(
                        DiagnosticCode::IdleKeyword,
                        n.span,
                        format!("`{}` is always 0 here: cpuplugd computes it only while the CPU group runs, and the CPU group is off", k.name()),
                    ));
                }
            }
            _ => {}
        }
    }
}

fn has_operator(rules: &RuleSet, node: NodeId) -> bool {
    match &rules.node(node).kind {
        NodeKind::Binary(..) | NodeKind::Neg(_) | NodeKind::Not(_) => true,
        NodeKind::Var { body, .. } => has_operator(rules, *body),
        _ => false,
    }
}

fn is_constant(rules: &RuleSet, node: NodeId) -> bool {
    every_leaf(rules, node, |kind| matches!(kind, NodeKind::Const(_)))
}

fn constant_rule(
    rules: &RuleSet,
    root: NodeId,
    kind: RuleKind,
    span: Span,
    out: &mut Vec<Diagnostic>,
) {
    if !is_constant(rules, root) || !has_operator(rules, root) {
        return;
    }
    let eval = super::eval::Evaluator::new(rules, &super::eval::NoReadings);
    let mut t = super::eval::NoTrace;
    let value = if kind.is_amount() {
        eval.number(root, &mut t).map(|v| format!("always {v}"))
    } else {
        eval.truth(root, &mut t).map(|v| format!("always {v}"))
    };
    let what = match value {
        Ok(v) => v,
        Err(super::eval::Stop::Fault { fault, .. }) => {
            format!("always a {fault} fault, which skips its group every interval")
        }
        // Already reported as an error.
        Err(super::eval::Stop::Fatal { .. }) => return,
    };
    out.push(
        Diagnostic::warning(
            DiagnosticCode::ConstantRule,
            span,
            format!(
                "{} does not depend on any reading: it is {what}",
                kind.file_name()
            ),
        )
        .with_help("write the plain value if that is what you mean"),
    );
}

/// Names the kernel under `--root` does not have, one finding per line:
/// old rule files sum three zone counters on one line, and one message
/// saying "replace the sum" helps more than three.
fn readings(
    rules: &RuleSet,
    facts: &SystemFacts,
    source: &SourceFile,
    suggestions: &suggest::Budget,
    out: &mut Vec<Diagnostic>,
) {
    let mut found = Vec::new();
    missing_readings(rules, facts, suggestions, &mut found);
    let mut by_line: Vec<(usize, Vec<Diagnostic>)> = Vec::new();
    // The group of each line's unknown fields, found without a search.
    let mut unknown_on: HashMap<usize, usize> = HashMap::new();
    for d in found {
        let line = source.line_of(d.span.start as usize);
        if d.code != "unknown-field" {
            by_line.push((line, vec![d]));
            continue;
        }
        match unknown_on.get(&line) {
            Some(&i) => by_line[i].1.push(d),
            None => {
                unknown_on.insert(line, by_line.len());
                by_line.push((line, vec![d]));
            }
        }
    }
    for (_, group) in by_line {
        let mut iter = group.into_iter();
        let Some(mut first) = iter.next() else {
            continue;
        };
        let rest: Vec<Diagnostic> = iter.collect();
        if rest.is_empty() {
            out.push(first);
            continue;
        }
        let same_fix = rest
            .iter()
            .all(|d| d.replacement == first.replacement && d.replacement.is_some());
        let last_end = rest
            .iter()
            .map(|d| d.span.end)
            .max()
            .unwrap_or(first.span.end);
        if same_fix
            && first
                .help
                .as_deref()
                .is_some_and(|h| h.contains("per zone"))
        {
            let whole = Span {
                start: first.span.start,
                end: last_end,
            };
            let new = first.replacement.clone().unwrap_or_default();
            let index = source
                .snippet(first.span)
                .rsplit_once('[')
                .map(|(_, i)| format!("[{i}"))
                .unwrap_or_default();
            let names: Vec<String> = std::iter::once(&first)
                .chain(rest.iter())
                .map(|d| {
                    format!(
                        "`{}`",
                        source.snippet(d.span).split('[').next().unwrap_or_default()
                    )
                })
                .collect();
            let replacement = if new == "vmstat.pgsteal_kswapd" {
                format!("vmstat.pgsteal_kswapd{index} + vmstat.pgsteal_direct{index}")
            } else {
                format!("{new}{index}")
            };
            first.span = whole;
            first.message = format!(
                "the kernel under {} has none of {}; cpuplugd stops with \"Symbol ... not found\" the first time it evaluates this",
                facts.origin,
                names.join(", ")
            );
            first.help = Some(format!(
                "kernels since 4.8 count page scans and steals per reclaim path, not per zone: replace the sum with `{replacement}`"
            ));
            first.replacement = Some(replacement);
        } else {
            for d in rest {
                first.notes.push(super::diagnostic::Note {
                    span: d.span,
                    message: d.message.clone(),
                });
            }
        }
        out.push(first);
    }
}

/// The code of a reading an imported history lacks: plugtop refuses to
/// decide such a rule rather than decide it on a made-up value.
pub const NOT_IN_HISTORY: DiagnosticCode = DiagnosticCode::NotInHistory;

/// The refusal of a keyword or `cpustat.` reading an imported history
/// lacks (its /proc names are checked against its layouts instead).
fn absent_from_history(facts: &SystemFacts, n: &crate::rules::expr::Node) -> Option<Diagnostic> {
    let history = facts.history.as_ref()?;
    let (bare, spelled) = match n.kind {
        NodeKind::Keyword(k) => (k.name(), k.name().to_string()),
        NodeKind::Reading {
            reading: Reading::Cpustat(c),
            ..
        } => (c.name(), format!("cpustat.{}", c.name())),
        _ => return None,
    };
    history
        .absent
        .iter()
        .any(|a| a == bare)
        .then(|| Diagnostic::refusal(NOT_IN_HISTORY, n.span, history.lacks(&spelled)))
}

/// Whether each node belongs to a rule that counts (the last of its kind).
fn used_nodes(rules: &RuleSet) -> Vec<bool> {
    let mut used = vec![false; rules.nodes.len()];
    for rule in rules.rules.iter().flatten() {
        for i in rule.nodes.clone() {
            used[i as usize] = true;
        }
    }
    used
}

/// `meminfo.` with no name after it.
fn empty_field(prefix: &str, span: Span, stops: &str) -> Diagnostic {
    Diagnostic::stops(
        DiagnosticCode::EmptyField,
        span,
        format!("`{prefix}.` needs a field name; {stops}"),
    )
    .with_help(format!("for example `{prefix}.{}`", example_field(prefix)))
}

/// Each reading of a rule whose name this kernel (or cpuplugd) lacks.
fn missing_readings(
    rules: &RuleSet,
    facts: &SystemFacts,
    suggestions: &suggest::Budget,
    out: &mut Vec<Diagnostic>,
) {
    let mut reported: HashMap<(u32, u32), ()> = HashMap::new();
    let used = used_nodes(rules);
    for (i, n) in rules.nodes.iter().enumerate() {
        if !used[i] {
            continue;
        }
        if let Some(d) = absent_from_history(facts, n) {
            if reported.insert((n.span.start, n.span.end), ()).is_none() {
                out.push(d);
            }
            continue;
        }
        let NodeKind::Reading { reading, .. } = n.kind else {
            continue;
        };
        let (prefix, name, known) = match reading {
            Reading::Meminfo(s) => (
                "meminfo",
                &rules.fields.meminfo[s as usize],
                facts.meminfo_names.as_ref(),
            ),
            Reading::Vmstat(s) => (
                "vmstat",
                &rules.fields.vmstat[s as usize],
                facts.vmstat_names.as_ref(),
            ),
            Reading::CpustatUnknown(s) => {
                ("cpustat", &rules.fields.unknown_cpustat[s as usize], None)
            }
            _ => continue,
        };
        if reported.insert((n.span.start, n.span.end), ()).is_some() {
            continue;
        }
        let stops = format!(
            "cpuplugd stops with \"Symbol {name} not found\" the first time it evaluates this"
        );
        if name.is_empty() {
            out.push(empty_field(prefix, n.span, &stops));
            continue;
        }
        if prefix == "cpustat" {
            let names = CpuStat::ALL.map(|c| c.name());
            let mut d = Diagnostic::stops(
                DiagnosticCode::UnknownField,
                n.span,
                format!("cpuplugd has no `cpustat.{name}`; {stops}"),
            );
            d = match suggestions.best_match(name, names) {
                Some(best) => d.with_replacement(format!("cpustat.{best}")),
                None => d.with_help(format!("cpustat. fields are {}", names.join(", "))),
            };
            out.push(d);
            continue;
        }
        let Some(known) = known else {
            continue;
        };
        if known.contains(name) {
            continue;
        }
        if let Some(history) = &facts.history {
            out.push(Diagnostic::refusal(
                NOT_IN_HISTORY,
                n.span,
                history.lacks(&format!("{prefix}.{name}")),
            ));
            continue;
        }
        out.push(unknown_field(
            facts,
            n.span,
            (prefix, name),
            &stops,
            known,
            suggestions,
        ));
    }
}

/// A reading this kernel lacks, with the name it likely meant.
fn unknown_field(
    facts: &SystemFacts,
    span: Span,
    (prefix, name): (&str, &str),
    stops: &str,
    known: &[String],
    suggestions: &suggest::Budget,
) -> Diagnostic {
    let d = Diagnostic::stops(
        DiagnosticCode::UnknownField,
        span,
        format!(
            "the kernel under {} has no `{prefix}.{name}`; {stops}",
            facts.origin
        ),
    );
    let renamed = (prefix == "vmstat")
        .then(|| suggest::renamed_vmstat(name))
        .flatten()
        .filter(|new| known.iter().any(|k| k == new));
    if let Some(new) = renamed {
        d.with_replacement(format!("{prefix}.{new}")).with_help(format!(
            "kernels since 4.8 count page scans and steals per reclaim path, not per zone: use `{prefix}.{new}` (once, instead of the sum over zones)"
        ))
    } else if let Some(best) = suggestions.best_match(name, known.iter().map(String::as_str)) {
        d.with_replacement(format!("{prefix}.{best}"))
            .with_help(format!(
                "did you mean `{prefix}.{best}`? (names are case-sensitive)"
            ))
    } else {
        d
    }
}

/// The code of the one warning that names a refused file's unused variables.
pub const UNUSED_SUMMARY: DiagnosticCode = DiagnosticCode::UnusedVariables;

/// In a refused file, variables go unused because the rule that names them
/// failed: one typo in a rule made nine "no rule uses it" warnings that hid
/// the error. They are one warning, which says so (and a file of a million
/// variables is not a million warnings in memory).
fn unused_summary(names: &[&str]) -> Diagnostic {
    let mut listed = names
        .iter()
        .take(8)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 8 {
        listed.push_str(&format!(" and {} more", names.len() - 8));
    }
    Diagnostic::warning(
        UNUSED_SUMMARY,
        Span::FILE,
        format!(
            "{} variables are used by no rule that loaded: {listed}",
            names.len()
        ),
    )
    .with_help("a rule that fails to load uses none of its variables: fix the errors above first")
}

/// How many nodes the parses of unused variables build in all: they share
/// one arena and what each inlined, so a chain of variables is expanded
/// once, not once per link; past this, the rest go unchecked and one
/// finding says so.
pub const UNUSED_NODES: usize = 1_000_000;

/// Unused variables, and errors in them that cpuplugd would never notice.
fn variables(
    rules: &RuleSet,
    refused: bool,
    suggestions: &suggest::Budget,
    out: &mut Vec<Diagnostic>,
) {
    // In a refused file: the unused ones, folded at the end.
    let mut unused_names: Vec<&str> = Vec::new();
    let mut first_unused = None;
    let lookup: HashMap<String, u32> = rules
        .variables
        .iter()
        .enumerate()
        .map(|(i, v)| (v.name.clone(), i as u32))
        .collect();
    let all: HashMap<String, usize> = rules
        .variables
        .iter()
        .map(|v| (v.name.clone(), v.line))
        .collect();
    // One scratch copy for all of them: parsing only bumps its use counts.
    let mut scratch_vars = rules.variables.clone();
    let mut nodes = Vec::new();
    let mut inlined = HashMap::new();
    let mut unchecked = 0usize;
    for (i, var) in rules.variables.iter().enumerate() {
        // A misspelt rule name has its own warning, which says why.
        if var.uses > 0
            || var.name.starts_with('#')
            || super::suggest::misspelt_keyword(&var.name).is_some()
        {
            continue;
        }
        if refused {
            unused_names.push(&var.name);
            first_unused.get_or_insert(var);
        } else {
            out.push(unused_warning(var));
        }
        if unchecked > 0 || nodes.len() >= UNUSED_NODES {
            unchecked += 1;
            continue;
        }
        let mut depth = 1;
        let mut fields = FieldNames::default();
        let mut builder = ExprBuilder {
            nodes: &mut nodes,
            vars: &mut scratch_vars,
            var_lookup: &lookup,
            all_vars: &all,
            history_max: &mut depth,
            fields: &mut fields,
            expanding: vec![i as u32],
            inlined: &mut inlined,
            suggestions,
            later: Vec::new(),
        };
        let text = Text {
            bytes: &var.text,
            map: &var.text_map,
            end: var.value_span.end,
        };
        let before = builder.nodes.len();
        let parsed = builder.parse(text, Unit::Var(i as u32));
        let later = std::mem::take(&mut builder.later);
        if let Ok(body) = parsed {
            // Named by a later one, it is copied, not parsed again.
            inlined.insert(i as u32, (before as NodeId, body));
        }
        if let Err(e) = parsed {
            // What a failed parse built is not whole: drop it, and what
            // was inlined from it.
            nodes.truncate(before);
            inlined.retain(|_, (first, _)| (*first as usize) < before);
            if e.diagnostic.code == "too-large" {
                unchecked += 1;
                continue;
            }
            let why = format!("cpuplugd never notices: no rule uses `{}`", var.name);
            out.extend(
                std::iter::once(e)
                    .chain(later)
                    .map(|e| (*e.diagnostic).demoted(&why)),
            );
        }
    }
    match (unused_names.len(), first_unused) {
        (0, _) | (_, None) => {}
        (1, Some(var)) => out.push(unused_warning(var)),
        _ => out.push(unused_summary(&unused_names)),
    }
    if unchecked > 0 {
        out.push(Diagnostic::warning(
            DiagnosticCode::UnusedUnchecked,
            Span::FILE,
            format!(
                "stopped checking unused variables after {UNUSED_NODES} terms: {unchecked} of them were not looked at"
            ),
        ));
    }
}

fn unused_warning(var: &VarDef) -> Diagnostic {
    Diagnostic::warning(
        DiagnosticCode::UnusedVariable,
        var.name_span,
        format!("variable `{}` is defined but no rule uses it", var.name),
    )
    .with_help("cpuplugd does not even parse a variable no rule uses; remove it or use it")
}

/// The longest UPDATE that still reads as a pace: a day. The daemon waits
/// the whole UPDATE between readings, so past it a guest is in effect
/// never looked at again after the first interval.
pub const LONGEST_SENSIBLE_UPDATE: i64 = 86_400;

/// cpuplugd hands UPDATE to `sleep()`, whose argument is 32 bits wide.
const SLEEP_LIMIT: i64 = u32::MAX as i64;

/// An UPDATE over [`LONGEST_SENSIBLE_UPDATE`]: the file loads, but after its
/// first interval neither plugtop nor cpuplugd would act again for days,
/// or ever.
fn long_update(rules: &RuleSet, out: &mut Vec<Diagnostic>) {
    let update = rules.settings.update;
    if update <= LONGEST_SENSIBLE_UPDATE {
        return;
    }
    let days = update / 86_400;
    let length = if days >= 730 {
        format!("about {} years", days / 365)
    } else if days == 1 {
        "1 day".to_string()
    } else {
        format!("{days} days")
    };
    // Digits past what a 64-bit number holds read as its largest value,
    // in cpuplugd (sscanf) as here.
    let read_as = if update == i64::MAX {
        " (the largest number cpuplugd reads; longer ones read as it)"
    } else {
        ""
    };
    let cpuplugd = if update > SLEEP_LIMIT {
        "cpuplugd passes UPDATE to sleep(), which takes at most 4294967295 seconds \
         (about 136 years) and keeps only the low 32 bits of a larger number, so \
         cpuplugd would sleep some other, arbitrary time"
    } else {
        "cpuplugd sleeps as long"
    };
    out.push(
        Diagnostic::warning(
            DiagnosticCode::LongUpdate,
            rules.setting_spans[super::Setting::Update.index()].unwrap_or(Span::FILE),
            format!(
                "UPDATE is {update} seconds{read_as}, more than a day ({length}): after the \
                 first interval plugtop would not read or act again for that long; {cpuplugd}"
            ),
        )
        .with_help("UPDATE is the number of seconds between intervals; 1 to 60 are usual"),
    );
}

/// Groups that are off although rules for them were written, and why.
fn groups(rules: &RuleSet, off: &GroupsOff, out: &mut Vec<Diagnostic>) {
    let written = |kinds: &[RuleKind]| {
        kinds
            .iter()
            .filter_map(|k| rules.rule(*k))
            .any(|r| !is_constant(rules, r.root))
    };
    let memory_why = match &off.memory {
        Some(off @ MemoryOff::NotZvm) => Some(off.reason()),
        Some(off) => Some(format!("it {}", off.reason())),
        None => None,
    };
    let groups = [
        (
            off.cpu.clone(),
            "CPU",
            &[RuleKind::Hotplug, RuleKind::Hotunplug][..],
        ),
        (
            memory_why,
            "memory",
            &[
                RuleKind::Memplug,
                RuleKind::Memunplug,
                RuleKind::CmmInc,
                RuleKind::CmmDec,
            ][..],
        ),
    ];
    for (why, group, kinds) in groups {
        let Some(why) = why else {
            continue;
        };
        if !written(kinds) {
            continue;
        }
        let span = kinds
            .iter()
            .find_map(|k| rules.rule(*k))
            .map_or(Span::FILE, |r| r.name_span);
        out.push(Diagnostic::warning(
            DiagnosticCode::GroupOff,
            span,
            format!("the {group} group is off, so the {group} rules are ignored: {why}"),
        ));
    }
}
