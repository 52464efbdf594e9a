//! Plug and unplug thresholds less than one CPU apart. At a steady load a
//! plug changes what the rules measure by one CPU's worth (a hundred idle-%,
//! or one more `onumcpus` to compare a load with); when HOTPLUG and HOTUNPLUG
//! switch on the same measure closer together than that, the plug itself
//! makes HOTUNPLUG true and the guest flaps every interval. [`gaps`] finds
//! such pairs (for `plugtop check` and for `plugtop tune` to reject
//! candidates); [`warnings`] turns the decisive ones into diagnostics.
//!
//! Only what can be told from the rules is said: the size of "one CPU" is
//! worked out by evaluating the measure in a model of a guest at a steady
//! load ([`Steady`]); a measure the model cannot evaluate, or on which a plug
//! does not act linearly, is left alone.

mod band;

pub use band::Band;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::diagnostic::{Diagnostic, DiagnosticCode};
use super::eval::{Evaluator, NoReadings, NoTrace, Readings};
use super::expr::{BinOp, CpuStat, Keyword, NodeId, NodeKind, Reading, RuleKind};
use super::ruleset::RuleSet;
use super::source::SourceFile;

/// The stable code of the warning.
pub const CODE: DiagnosticCode = DiagnosticCode::NarrowHysteresis;

/// Gaps this close to one CPU count as one CPU: `1.15 - 0.15` is
/// 0.9999999999999999 in doubles, and no load sits in the band that leaves.
const ROUNDING: f64 = 1e-9;

/// What a pair compares, which decides what one CPU is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// A measure against constants (`idle < 10` / `idle > 50`): a plug
    /// moves the measure by [`HysteresisGap::unit`].
    Share,
    /// A measure against `onumcpus` plus or minus an offset
    /// (`loadavg > onumcpus + a` / `loadavg < onumcpus - b`): a plug raises
    /// both thresholds by one and leaves the measure as it is.
    Onumcpus,
    /// A measure against constants that a plug moves by a different amount
    /// at each CPU count (`idle / onumcpus`, a share of all CPU time): the
    /// gap is counted in CPUs of load, from the widest [`Band`] of loads
    /// that plug and then unplug.
    PerCpu,
}

/// Whether the pair alone decides its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decides {
    /// Each comparison is its rule, or a top-level `|` alternative of it:
    /// the pair flaps whenever the rules' other alternatives are false.
    Alone,
    /// At least one comparison is a top-level `&` conjunct: the pair flaps
    /// only while the other conjuncts hold (cpu-loadavg.conf's idle pair).
    WithOthers,
}

/// One HOTPLUG comparison and one HOTUNPLUG comparison on the same measure,
/// and how far apart their thresholds are in the direction a plug moves.
#[derive(Debug, Clone, PartialEq)]
pub struct HysteresisGap {
    /// Constants or `onumcpus` offsets: what one CPU is measured against.
    pub pattern: Pattern,
    /// Whether the pair can flap on its own (only then `check` warns).
    pub decides: Decides,
    /// The HOTPLUG comparison (`a < b` or `a > b`).
    pub plug: NodeId,
    /// The HOTUNPLUG comparison.
    pub unplug: NodeId,
    /// What HOTPLUG compares, as written in the rule (a variable's name
    /// stays a name), for messages.
    pub plug_measure: NodeId,
    /// What HOTUNPLUG compares: the same tree, or (for [`Pattern::Share`])
    /// a share of CPU time equal to HOTPLUG's at every steady load, such as
    /// `CP_idleAVG * onumcpus` beside `(1 - CP_ActiveAVG) * onumcpus`.
    pub unplug_measure: NodeId,
    /// HOTPLUG's threshold as written: the constant, or the offset added
    /// to `onumcpus` for [`Pattern::Onumcpus`] (`- 0.25` is -0.25).
    pub plug_threshold: f64,
    /// HOTUNPLUG's threshold, likewise.
    pub unplug_threshold: f64,
    /// HOTUNPLUG switches when the measure is above its threshold (idle
    /// time, loads against `onumcpus`), or below (a measure a plug lowers).
    pub unplug_above: bool,
    /// The distance between the thresholds, counted in the direction a
    /// plug moves the measure: negative when they overlap.
    pub gap: f64,
    /// What one CPU is worth on this measure (always positive).
    pub unit: f64,
    /// For [`Pattern::PerCpu`], the bands of steady loads that plug and
    /// then unplug, fewest CPUs first (empty: none).
    pub bands: Vec<Band>,
}

impl HysteresisGap {
    /// True when a plug alone can make HOTUNPLUG true: the gap is less than
    /// one CPU.
    pub fn too_narrow(&self) -> bool {
        self.gap < self.unit * (1.0 - ROUNDING)
    }
}

/// Every HOTPLUG/HOTUNPLUG pair on one measure whose unit can be told, the
/// wide ones too (a tuner wants the margin). For each measure only the
/// most flap-prone thresholds are paired: the HOTPLUG threshold that plugs
/// soonest against the HOTUNPLUG threshold that unplugs soonest.
pub fn gaps(rules: &RuleSet) -> Vec<HysteresisGap> {
    let (Some(plug), Some(unplug)) = (
        rules.rule(RuleKind::Hotplug),
        rules.rule(RuleKind::Hotunplug),
    ) else {
        return Vec::new();
    };
    let plugs = groups(rules, plug.root);
    let unplugs = groups(rules, unplug.root);
    let mut out = Vec::new();
    for p in &plugs {
        for u in &unplugs {
            if let Some(gap) = pair(rules, p, u) {
                out.push(gap);
            }
        }
    }
    out
}

/// The `narrow-hysteresis` warnings: pairs that decide their rules alone
/// and sit less than one CPU apart, in a file whose CPU group runs and
/// may plug at all.
pub fn warnings(rules: &RuleSet, source: &SourceFile) -> Vec<Diagnostic> {
    if !rules.cpu_enabled || !room_to_plug(rules) {
        return Vec::new();
    }
    let mut out: Vec<Diagnostic> = gaps(rules)
        .into_iter()
        .filter(|g| g.decides == Decides::Alone && g.too_narrow())
        .map(|g| warning(rules, source, &g))
        .collect();
    let more = [RuleKind::Hotplug, RuleKind::Hotunplug]
        .into_iter()
        .filter_map(|k| rules.rule(k))
        .any(|r| switches(rules, r.root).len() > MAX_SWITCHES);
    if more {
        out.push(Diagnostic::warning(
            DiagnosticCode::HysteresisStopped,
            super::source::Span::FILE,
            format!(
                "stopped looking for narrow hysteresis after the first {MAX_SWITCHES} comparisons of HOTPLUG and of HOTUNPLUG"
            ),
        ));
    }
    out
}

/// The most comparisons of one rule paired with the other's: every pair is
/// looked at, so 100,000 alternatives on each side were 10^10 pairs.
pub const MAX_SWITCHES: usize = 1_000;

/// Whether CPU_MIN and CPU_MAX leave at least two CPU counts.
fn room_to_plug(rules: &RuleSet) -> bool {
    let s = rules.settings;
    let max = if s.cpu_max == 0 {
        rules.present_at_load.map_or(i64::MAX, i64::from)
    } else {
        s.cpu_max
    };
    max > s.cpu_min
}

fn warning(rules: &RuleSet, source: &SourceFile, g: &HysteresisGap) -> Diagnostic {
    let at = |node: NodeId| {
        let p = source.position(rules.node(node).span.start as usize);
        format!("{}:{}", p.line, p.column)
    };
    let plug_text = measure_text(rules, source, g.plug_measure);
    let unplug_text = measure_text(rules, source, g.unplug_measure);
    let what = if plug_text == unplug_text {
        format!("`{plug_text}`")
    } else {
        format!("`{plug_text}` and `{unplug_text}` (equal at a steady load)")
    };
    let distance = if g.gap < 0.0 {
        format!("{} apart the wrong way round", number(-g.gap))
    } else {
        format!("{} apart", number(g.gap))
    };
    if !g.bands.is_empty() {
        return band_warning(rules, g, &what, (at(g.plug), at(g.unplug)));
    }
    let unit = number(g.unit);
    let (against, help) = match g.pattern {
        Pattern::Share | Pattern::PerCpu => (String::new(), share_help(g)),
        Pattern::Onumcpus => (
            " against `onumcpus`".to_string(),
            format!(
                "a plug raises `onumcpus` by one: the two offsets must add up to at least 1, \
                 e.g. HOTUNPLUG at `onumcpus {}`",
                signed(g.plug_threshold - 1.0)
            ),
        ),
    };
    Diagnostic::warning(
        CODE,
        rules.node(g.plug).span,
        format!(
            "HOTPLUG ({}) and HOTUNPLUG ({}) switch on {what}{against} {distance}, less than \
             one CPU ({unit}): at a steady load between them the guest can plug and unplug \
             every interval",
            at(g.plug),
            at(g.unplug)
        ),
    )
    .with_note(
        rules.node(g.unplug).span,
        "HOTUNPLUG switches back here after a plug",
    )
    .with_help(help)
}

/// The warning for a [`Pattern::PerCpu`] pair: where it flaps, in loads.
fn band_warning(
    rules: &RuleSet,
    g: &HysteresisGap,
    what: &str,
    (plug_at, unplug_at): (String, String),
) -> Diagnostic {
    /// Bands named in full; the rest are counted.
    const SHOWN: usize = 3;
    let load = |x: f64| number((x * 1000.0).round() / 1000.0);
    let mut said: Vec<String> = g
        .bands
        .iter()
        .take(SHOWN)
        .enumerate()
        .map(|(k, b)| {
            let cpus = match (k, b.cpus) {
                (0, 1) => "with 1 CPU online".to_string(),
                (0, n) => format!("with {n} CPUs online"),
                (_, n) => format!("with {n}"),
            };
            format!(
                "{cpus}, a steady load between {} and {} CPUs",
                load(b.from),
                load(b.to)
            )
        })
        .collect();
    if g.bands.len() > SHOWN {
        said.push(format!("and at {} more CPU counts", g.bands.len() - SHOWN));
    }
    Diagnostic::warning(
        CODE,
        rules.node(g.plug).span,
        format!(
            "HOTPLUG ({plug_at}) and HOTUNPLUG ({unplug_at}) switch on {what}, which a plug moves \
             by a different amount at each CPU count: {} makes HOTPLUG true and, after the plug, \
             HOTUNPLUG too; the guest can plug and unplug every interval",
            said.join("; ")
        ),
    )
    .with_note(
        rules.node(g.unplug).span,
        "HOTUNPLUG switches back here after a plug",
    )
    .with_help(
        "move HOTUNPLUG's threshold away from HOTPLUG's until, at every CPU count, a load that \
         plugs no longer unplugs on one CPU more",
    )
}

fn share_help(g: &HysteresisGap) -> String {
    // One CPU past HOTPLUG's threshold, the way a plug moves the measure.
    let (side, wanted) = if g.unplug_above {
        ("above", g.plug_threshold + g.unit)
    } else {
        ("below", g.plug_threshold - g.unit)
    };
    format!(
        "a plug adds one CPU ({}) to what the rules measure: put HOTUNPLUG's threshold at {} \
         or {side}, at least one CPU from HOTPLUG's",
        number(g.unit),
        number(wanted)
    )
}

/// A measure as the user wrote it, without its outer parentheses, cut to a
/// readable length.
fn measure_text(rules: &RuleSet, source: &SourceFile, node: NodeId) -> String {
    let n = rules.node(node);
    let mut text = source.snippet(n.span).trim().to_string();
    if n.paren && text.starts_with('(') && text.ends_with(')') && text.len() >= 2 {
        text = text[1..text.len() - 1].trim().to_string();
    }
    const MAX: usize = 60;
    if text.chars().count() > MAX {
        text = text.chars().take(MAX).collect::<String>() + "…";
    }
    text
}

/// A threshold or gap for a message: at most six decimals, no float noise.
fn number(x: f64) -> String {
    if x.is_finite() && x.abs() < 1e12 {
        let r = (x * 1e6).round() / 1e6;
        format!("{}", if r == 0.0 { 0.0 } else { r })
    } else {
        format!("{x:e}")
    }
}

/// An offset written after `onumcpus`: `+ 0.5`, `- 0.25`.
fn signed(x: f64) -> String {
    if x < 0.0 {
        format!("- {}", number(-x))
    } else {
        format!("+ {}", number(x))
    }
}

// ---------------------------------------------------------------------
// The comparisons a rule switches on.

/// Which way a comparison switches: `measure > threshold` or `<`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Dir {
    Above,
    Below,
}

impl Dir {
    fn flipped(self) -> Dir {
        match self {
            Dir::Above => Dir::Below,
            Dir::Below => Dir::Above,
        }
    }
}

/// One comparison, read as `measure <dir> threshold`.
#[derive(Debug, Clone, Copy)]
struct Switch {
    node: NodeId,
    measure: NodeId,
    dir: Dir,
    pattern: Pattern,
    threshold: f64,
    alone: bool,
}

/// The comparisons of a rule with the same measure, direction and pattern,
/// and alike in whether they decide alone,
/// reduced to the threshold that switches soonest.
#[derive(Debug, Clone)]
struct Group {
    /// The comparison with the soonest threshold.
    first: Switch,
    /// What the measure does at a steady load (`None`: cannot tell).
    model: Option<Model>,
    hash: u64,
}

/// The comparisons that switch a rule: its top-level `|` alternatives, and
/// the top-level `&` conjuncts of those (which switch only with the others).
fn switches(rules: &RuleSet, root: NodeId) -> Vec<Switch> {
    let mut out = Vec::new();
    for alt in chain(rules, root, BinOp::Or) {
        if let Some(s) = switch(rules, alt, true) {
            out.push(s);
            continue;
        }
        let conjuncts = chain(rules, alt, BinOp::And);
        if conjuncts.len() > 1 {
            out.extend(
                conjuncts
                    .into_iter()
                    .filter_map(|c| switch(rules, c, false)),
            );
        }
    }
    out
}

/// The operands of a chain of `op` (left to right), through variables.
fn chain(rules: &RuleSet, root: NodeId, op: BinOp) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let id = resolve(rules, id);
        match rules.node(id).kind {
            NodeKind::Binary(o, l, r) if o == op => {
                stack.push(r);
                stack.push(l);
            }
            _ => out.push(id),
        }
    }
    out
}

/// A comparison as `measure <dir> threshold`, if one side is a constant or
/// `onumcpus` plus or minus a constant and the other is not.
fn switch(rules: &RuleSet, node: NodeId, alone: bool) -> Option<Switch> {
    let node = resolve(rules, node);
    let NodeKind::Binary(op @ (BinOp::Greater | BinOp::Less), l, r) = rules.node(node).kind else {
        return None;
    };
    let dir = if op == BinOp::Greater {
        Dir::Above
    } else {
        Dir::Below
    };
    let read = |measure: NodeId, other: NodeId, dir: Dir| -> Option<Switch> {
        let (pattern, threshold) = if let Some(c) = constant(rules, other) {
            (Pattern::Share, c)
        } else {
            (Pattern::Onumcpus, onumcpus_offset(rules, other)?)
        };
        if constant(rules, measure).is_some()
            || (pattern == Pattern::Onumcpus && mentions_onumcpus(rules, measure))
        {
            return None;
        }
        Some(Switch {
            node,
            measure,
            dir,
            pattern,
            threshold,
            alone,
        })
    };
    read(l, r, dir).or_else(|| read(r, l, dir.flipped()))
}

/// The node a variable stands for (variables are transparent).
pub(super) fn resolve(rules: &RuleSet, mut node: NodeId) -> NodeId {
    while let NodeKind::Var { body, .. } = rules.node(node).kind {
        node = body;
    }
    node
}

/// The finite value of a subtree that reads nothing.
fn constant(rules: &RuleSet, node: NodeId) -> Option<f64> {
    finite(rules, node, &NoReadings)
}

/// The value of `node` evaluated with `readings`, when it is finite.
fn finite<R: Readings>(rules: &RuleSet, node: NodeId, readings: &R) -> Option<f64> {
    Evaluator::new(rules, readings)
        .number(node, &mut NoTrace)
        .ok()
        .filter(|v| v.is_finite())
}

fn is_onumcpus(kind: &NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Keyword(Keyword::Onumcpus)
            | NodeKind::Reading {
                reading: Reading::Cpustat(CpuStat::Onumcpus),
                index: 0
            }
    )
}

/// `c` for `onumcpus`, `onumcpus + c`, `onumcpus - c` or `c + onumcpus`.
fn onumcpus_offset(rules: &RuleSet, node: NodeId) -> Option<f64> {
    let node = resolve(rules, node);
    let n = |id: NodeId| is_onumcpus(&rules.node(resolve(rules, id)).kind);
    match rules.node(node).kind {
        ref k if is_onumcpus(k) => Some(0.0),
        NodeKind::Binary(BinOp::Add, l, r) if n(l) => constant(rules, r),
        NodeKind::Binary(BinOp::Add, l, r) if n(r) => constant(rules, l),
        NodeKind::Binary(BinOp::Sub, l, r) if n(l) => constant(rules, r).map(|c| -c),
        _ => None,
    }
}

/// Whether a subtree reads the online CPU count, now or in the past.
fn mentions_onumcpus(rules: &RuleSet, node: NodeId) -> bool {
    !every_leaf(rules, node, |kind| {
        !matches!(
            kind,
            NodeKind::Keyword(Keyword::Onumcpus)
                | NodeKind::Reading {
                    reading: Reading::Cpustat(CpuStat::Onumcpus),
                    ..
                }
        )
    })
}

/// A rule's switches grouped by (measure, direction, pattern, alone), each
/// group reduced to its soonest threshold.
fn groups(rules: &RuleSet, root: NodeId) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let mut index: HashMap<(u64, Dir, bool, bool), Vec<usize>> = HashMap::new();
    for s in switches(rules, root).into_iter().take(MAX_SWITCHES) {
        let hash = tree_hash(rules, s.measure);
        let key = (hash, s.dir, s.pattern == Pattern::Share, s.alone);
        let slots = index.entry(key).or_default();
        let found = slots
            .iter()
            .copied()
            .find(|&i| same_tree(rules, out[i].first.measure, s.measure));
        match found {
            Some(i) => {
                let g = &mut out[i];
                let sooner = match s.dir {
                    Dir::Above => s.threshold < g.first.threshold,
                    Dir::Below => s.threshold > g.first.threshold,
                };
                if sooner {
                    g.first = s;
                }
            }
            None => {
                slots.push(out.len());
                out.push(Group {
                    first: s,
                    model: Model::of(rules, s.measure),
                    hash,
                });
            }
        }
    }
    out
}

/// The gap between a HOTPLUG group and a HOTUNPLUG group, if they switch on
/// the same measure in the directions that make a plug lead to an unplug.
fn pair(rules: &RuleSet, p: &Group, u: &Group) -> Option<HysteresisGap> {
    let (a, b) = (p.first, u.first);
    if a.pattern != b.pattern {
        return None;
    }
    let structural = p.hash == u.hash && same_tree(rules, a.measure, b.measure);
    let (pm, um) = (p.model.as_ref()?, u.model.as_ref()?);
    let equivalent = a.pattern == Pattern::Share && pm.equivalent(um);
    if !(structural || equivalent) {
        return None;
    }
    let mut bands = Vec::new();
    let mut pattern = a.pattern;
    let (gap, unit) = match a.pattern {
        Pattern::Share if pm.step.is_none() => {
            // Only the same tree on both sides, switching opposite ways.
            if !structural || a.dir == b.dir || !pm.follows_load {
                return None;
            }
            bands = band::all(
                rules,
                a.measure,
                (a.dir, a.threshold),
                (b.dir, b.threshold),
                counts(rules),
            )
            .ok()?;
            pattern = Pattern::PerCpu;
            // Counted in CPUs of load: the widest band of width w leaves 1 - w.
            let widest = bands.iter().map(|w| w.to - w.from).fold(0.0, f64::max);
            (1.0 - widest, 1.0)
        }
        Pattern::PerCpu => return None,
        Pattern::Share => {
            let s = pm.step?;
            // A plug moves the measure by s: from HOTPLUG's side towards HOTUNPLUG's.
            match (s > 0.0, a.dir, b.dir) {
                (true, Dir::Below, Dir::Above) => (b.threshold - a.threshold, s),
                (false, Dir::Above, Dir::Below) => (a.threshold - b.threshold, -s),
                _ => return None,
            }
        }
        Pattern::Onumcpus => {
            // The measure stays, the thresholds rise by one with each plug.
            if pm.step != Some(0.0) || (a.dir, b.dir) != (Dir::Above, Dir::Below) {
                return None;
            }
            (a.threshold - b.threshold, 1.0)
        }
    };
    Some(HysteresisGap {
        pattern,
        decides: if a.alone && b.alone {
            Decides::Alone
        } else {
            Decides::WithOthers
        },
        plug: a.node,
        unplug: b.node,
        plug_measure: a.measure,
        unplug_measure: b.measure,
        plug_threshold: a.threshold,
        unplug_threshold: b.threshold,
        unplug_above: b.dir == Dir::Above,
        gap,
        unit,
        bands,
    })
}

/// The CPU counts a plug may start from, as (lowest, one past the
/// highest): CPU_MIN up to CPU_MAX, or the CPUs present when CPU_MAX is 0
/// (16 when even that is unknown).
fn counts(rules: &RuleSet) -> (u32, u32) {
    let s = rules.settings;
    let clamp = |x: i64| u32::try_from(x.max(1)).unwrap_or(u32::MAX);
    let high = if s.cpu_max > 0 {
        clamp(s.cpu_max)
    } else {
        rules.present_at_load.unwrap_or(16)
    };
    (clamp(s.cpu_min), high)
}

// ---------------------------------------------------------------------
// The same measure: the same tree, through variables and parentheses.

/// A leaf as what it reads: `loadavg`, `onumcpus` and `runnable_proc` are
/// `cpustat.loadavg[0]` and so on (docs/semantics.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum MeasureLeaf {
    Const(u64),
    Keyword(Keyword),
    Reading(Reading, u32),
}

fn leaf(kind: &NodeKind) -> Option<MeasureLeaf> {
    Some(match kind {
        NodeKind::Const(v) => MeasureLeaf::Const(v.to_bits()),
        NodeKind::Keyword(Keyword::Loadavg) => {
            MeasureLeaf::Reading(Reading::Cpustat(CpuStat::Loadavg), 0)
        }
        NodeKind::Keyword(Keyword::Onumcpus) => {
            MeasureLeaf::Reading(Reading::Cpustat(CpuStat::Onumcpus), 0)
        }
        NodeKind::Keyword(Keyword::RunnableProc) => {
            MeasureLeaf::Reading(Reading::Cpustat(CpuStat::RunnableProc), 0)
        }
        NodeKind::Keyword(k) => MeasureLeaf::Keyword(*k),
        NodeKind::Reading { reading, index } => MeasureLeaf::Reading(*reading, *index),
        _ => return None,
    })
}

/// A hash of a tree's meaning (variables and parentheses see-through).
fn tree_hash(rules: &RuleSet, node: NodeId) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    let mut stack = vec![node];
    while let Some(id) = stack.pop() {
        let id = resolve(rules, id);
        let kind = &rules.node(id).kind;
        if let Some(l) = leaf(kind) {
            (0u8, l).hash(&mut h);
            continue;
        }
        match kind {
            NodeKind::Neg(c) => {
                1u8.hash(&mut h);
                stack.push(*c);
            }
            NodeKind::Not(c) => {
                2u8.hash(&mut h);
                stack.push(*c);
            }
            NodeKind::Binary(op, l, r) => {
                (3u8, *op).hash(&mut h);
                stack.push(*r);
                stack.push(*l);
            }
            _ => {}
        }
    }
    h.finish()
}

/// Whether two trees mean the same (variables and parentheses see-through).
fn same_tree(rules: &RuleSet, a: NodeId, b: NodeId) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((x, y)) = stack.pop() {
        let (x, y) = (resolve(rules, x), resolve(rules, y));
        if x == y {
            continue;
        }
        let (p, q) = (&rules.node(x).kind, &rules.node(y).kind);
        match (leaf(p), leaf(q)) {
            (Some(l), Some(m)) if l == m => continue,
            (None, None) => {}
            _ => return false,
        }
        match (p, q) {
            (NodeKind::Neg(p), NodeKind::Neg(q)) | (NodeKind::Not(p), NodeKind::Not(q)) => {
                stack.push((*p, *q));
            }
            (NodeKind::Binary(o, l, r), NodeKind::Binary(p, m, s)) if o == p => {
                stack.push((*l, *m));
                stack.push((*r, *s));
            }
            _ => return false,
        }
    }
    true
}

// ---------------------------------------------------------------------
// What a measure does at a steady load.

/// Steady loads the model is probed at: (online CPUs, CPUs' worth of
/// demand), the demand below the CPUs so a plug adds idle time.
const PROBES: [(f64, f64); 5] = [(2.0, 0.5), (3.0, 1.7), (4.0, 0.25), (6.0, 4.5), (9.0, 2.2)];

/// A guest at a steady load: `n` CPUs online, `d` CPUs' worth of runnable
/// work (all of it user time, up to the `n` CPUs), the rest idle; every interval 100 ticks per
/// CPU; loadavg and the run queue equal to the demand. Anything else
/// (memory, time) cannot be told and reads as missing.
pub struct Steady {
    /// CPUs online.
    pub n: f64,
    /// Runnable work in CPUs' worth, below `n`.
    pub d: f64,
}

impl Steady {
    /// Ticks per CPU per interval.
    const TICKS: f64 = 100.0;

    /// CPUs' worth of work that runs: the load, up to the CPUs online.
    fn busy(&self) -> f64 {
        self.d.min(self.n)
    }

    fn rate(&self, field: CpuStat) -> Option<f64> {
        Some(match field {
            CpuStat::User => self.busy(),
            CpuStat::Idle => self.n - self.busy(),
            CpuStat::TotalTicks => self.n,
            CpuStat::Onumcpus | CpuStat::Loadavg | CpuStat::RunnableProc => return None,
            _ => 0.0,
        })
    }
}

impl Readings for Steady {
    fn keyword(&self, keyword: Keyword) -> f64 {
        match keyword {
            Keyword::Onumcpus => self.n,
            Keyword::Loadavg | Keyword::RunnableProc => self.d,
            Keyword::Idle => (self.n - self.busy()) * 100.0,
            Keyword::User => self.busy() * 100.0,
            Keyword::Swaprate | Keyword::Apcr | Keyword::Freemem => f64::NAN,
            _ => 0.0,
        }
    }

    fn reading(&self, reading: Reading, index: u32) -> Option<f64> {
        let Reading::Cpustat(field) = reading else {
            return None;
        };
        Some(match field {
            CpuStat::Onumcpus => self.n,
            CpuStat::Loadavg | CpuStat::RunnableProc => self.d,
            // A counter: older readings (larger index) are smaller.
            _ => 1e6 + (1000.0 - f64::from(index)) * self.rate(field)? * Self::TICKS,
        })
    }
}

/// A measure's values at the probes, before and after a plug.
#[derive(Debug, Clone)]
struct Model {
    /// `(value at n, value at n + 1)` per probe.
    values: Vec<(f64, f64)>,
    /// What a plug adds, when it adds the same at every probe and the
    /// measure follows the load (`None` otherwise).
    step: Option<f64>,
    /// Read only from CPU time and `onumcpus`, so two such measures equal at
    /// every probe differ only by irq, steal and iowait time.
    cpu_time_only: bool,
    /// The measure changes with the load (not the CPU count alone).
    follows_load: bool,
}

impl Model {
    fn of(rules: &RuleSet, measure: NodeId) -> Option<Model> {
        let value = |n: f64, d: f64| finite(rules, measure, &Steady { n, d });
        let mut values = Vec::with_capacity(PROBES.len());
        for (n, d) in PROBES {
            values.push((value(n, d)?, value(n + 1.0, d)?));
        }
        let steps: Vec<f64> = values.iter().map(|(a, b)| b - a).collect();
        let first = steps[0];
        let scale = values
            .iter()
            .map(|(a, b)| a.abs().max(b.abs()))
            .fold(1.0, f64::max);
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * scale;
        let linear = steps.iter().all(|s| close(*s, first));
        // A measure of the CPU count alone takes whole-CPU values only: no
        // load sits between two thresholds a fraction of a CPU apart.
        let (n, d) = PROBES[0];
        let follows_load = value(n, d + 0.3).is_some_and(|v| !close(v, values[0].0));
        let step =
            (linear && follows_load).then(|| if close(first, 0.0) { 0.0 } else { snap(first) });
        Some(Model {
            values,
            step,
            cpu_time_only: cpu_time_only(rules, measure),
            follows_load,
        })
    }

    /// Two shares of CPU time equal at every steady load, such as
    /// `(1 - CP_ActiveAVG) * onumcpus` and `CP_idleAVG * onumcpus`.
    fn equivalent(&self, other: &Model) -> bool {
        self.cpu_time_only
            && other.cpu_time_only
            && self.step.is_some_and(|s| s != 0.0)
            && self.values.iter().zip(&other.values).all(|(a, b)| {
                let scale =
                    a.0.abs()
                        .max(b.0.abs())
                        .max(a.1.abs())
                        .max(b.1.abs())
                        .max(1.0);
                (a.0 - b.0).abs() <= 1e-9 * scale && (a.1 - b.1).abs() <= 1e-9 * scale
            })
    }
}

/// `x` to nine significant digits: the model's counters leave noise in the
/// last digits (100.00000000000003 idle-% for one CPU).
fn snap(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let digits = 9 - ceil_log10(x.abs());
    let m = 10f64.powi(digits);
    let r = (x * m).round() / m;
    if r.is_finite() { r } else { x }
}

/// `ceil(log10(x))` for a finite `x > 0`: the least `k` with `10^k >= x`,
/// found from the binary exponent without the C library's `log10`, so
/// that `plugtop-run` links no libm (half a MiB resident for one call;
/// scripts/README.md, `plugtop run` RSS). Where the two could differ, `x`
/// within a few units in the last place of a power of ten, nine and ten
/// significant digits round it alike.
fn ceil_log10(x: f64) -> i32 {
    let binary = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    // log10(2) to four places: off by at most one for any double, and
    // corrected below.
    let mut k = binary * 3010 / 10000;
    while k > -400 && 10f64.powi(k - 1) >= x {
        k -= 1;
    }
    while k < 400 && 10f64.powi(k) < x {
        k += 1;
    }
    k
}

/// Whether a measure reads only CPU time and the CPU count.
fn cpu_time_only(rules: &RuleSet, node: NodeId) -> bool {
    every_leaf(rules, node, |kind| match kind {
        NodeKind::Keyword(k) => {
            !(k.is_memory() || matches!(k, Keyword::Loadavg | Keyword::RunnableProc))
        }
        NodeKind::Reading { reading, .. } => matches!(
            reading,
            Reading::Cpustat(c) if !matches!(c, CpuStat::Loadavg | CpuStat::RunnableProc)
        ),
        _ => true,
    })
}

/// Whether `ok` holds for every leaf (constant, keyword, reading) under
/// `node`, through variables and operators: what a model of the guest can
/// evaluate is decided by the leaves alone.
pub fn every_leaf(rules: &RuleSet, node: NodeId, ok: impl Fn(&NodeKind) -> bool) -> bool {
    let mut stack = vec![node];
    while let Some(id) = stack.pop() {
        match &rules.node(id).kind {
            NodeKind::Neg(c) | NodeKind::Not(c) => stack.push(*c),
            NodeKind::Var { body, .. } => stack.push(*body),
            NodeKind::Binary(_, l, r) => {
                stack.push(*l);
                stack.push(*r);
            }
            leaf => {
                if !ok(leaf) {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{ceil_log10, snap};

    /// What `snap` was with the C library's log10.
    fn snap_by_log10(x: f64) -> f64 {
        let digits = 9 - x.abs().log10().ceil() as i32;
        let m = 10f64.powi(digits);
        let r = (x * m).round() / m;
        if r.is_finite() { r } else { x }
    }

    #[test]
    fn ceil_log10_is_the_least_power_of_ten_not_below() {
        for k in -300..=300 {
            let p = 10f64.powi(k);
            for x in [p, p.next_up(), p.next_down(), p * 2.5, p * 9.99] {
                let want = x.log10().ceil() as i32;
                let got = ceil_log10(x);
                // Within an ulp of a power of ten log10 may round onto it.
                assert!(got == want || got == want + 1, "{x:e}: {got} for {want}");
            }
        }
        assert_eq!(ceil_log10(f64::MIN_POSITIVE / 8.0), -308);
        assert_eq!(ceil_log10(f64::MAX), 309);
    }

    proptest::proptest! {
        #[test]
        // Not zero: log10's way overflowed on it (kept as zero below).
        fn snap_is_what_log10_made_it(x in {
            use proptest::num::f64::{INFINITE, NEGATIVE, NORMAL, POSITIVE, QUIET_NAN, SUBNORMAL};
            POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | INFINITE | QUIET_NAN
        }) {
            let (old, new) = (snap_by_log10(x), snap(x));
            proptest::prop_assert!(old.to_bits() == new.to_bits() || (old.is_nan() && new.is_nan()), "{x:e}: {old:e} became {new:e}");
        }
    }

    #[test]
    fn snap_keeps_zero_and_what_is_not_finite() {
        assert_eq!(snap(0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(snap(-0.0).to_bits(), (-0.0f64).to_bits());
        assert!(snap(f64::NAN).is_nan());
        assert_eq!(snap(f64::INFINITY), f64::INFINITY);
        assert_eq!(snap(100.000_000_000_000_03), 100.0);
    }
}
