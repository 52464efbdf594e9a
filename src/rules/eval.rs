//! Evaluating a rule the way cpuplugd does: a node is read either as a truth
//! value (the daemon's `eval_term`) or as a number (`eval_double`), `&` and
//! `|` short-circuit left to right, the first floating-point fault stops the
//! evaluation, and a truth value used as a number or a missing /proc name
//! stops the daemon. With a [`Trace`], every node's outcome is kept so a user
//! can see why a rule was true; without one, nothing is allocated.

use super::expr::{BinOp, CpuStat, Keyword, NOT_OPCODE, NodeId, NodeKind, Reading};
use super::fpu::{self, Fault};
use super::ruleset::RuleSet;

/// Where the evaluator gets values from.
pub trait Readings {
    /// The value of a derived keyword (loadavg, idle, freemem, ...) this interval.
    fn keyword(&self, keyword: Keyword) -> f64;
    /// A reading `index` intervals ago, or `None` if the kernel has no such name.
    fn reading(&self, reading: Reading, index: u32) -> Option<f64>;
    /// [`Readings::reading`] of a `cpustat` name, the most read: a source
    /// may find it without matching on the reading's kind.
    #[inline(always)]
    fn cpustat(&self, stat: CpuStat, index: u32) -> Option<f64> {
        self.reading(Reading::Cpustat(stat), index)
    }
}

/// Reads as NaN or missing: a subtree evaluated with it reads nothing,
/// so it is a constant when its value is finite.
pub struct NoReadings;

impl Readings for NoReadings {
    fn keyword(&self, _: Keyword) -> f64 {
        f64::NAN
    }
    fn reading(&self, _: Reading, _: u32) -> Option<f64> {
        None
    }
}

/// Why an evaluation stopped early. Small and `Copy` so results pass in
/// registers on the hot path; [`Evaluator::fatal_message`] spells it out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// A floating-point fault: cpuplugd skips the group for this interval.
    Fault { fault: Fault, node: NodeId },
    /// The daemon would exit (after restoring CPUs and memory).
    Fatal { fatal: FatalKind, node: NodeId },
}

/// What makes cpuplugd exit while evaluating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FatalKind {
    /// A /proc name the kernel (or cpuplugd's cpustat table) lacks.
    SymbolNotFound,
    /// A truth value used as a number; the code is cpuplugd's operation number.
    InvalidTerm(u8),
}

/// What happened to one node in one evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Not reached: a short-circuit, a fault before it, or a rule that did not run.
    NotEvaluated,
    Number(f64),
    Truth(bool),
    /// This node raised the fault.
    Fault(Fault),
    /// This node stopped the daemon.
    Fatal,
    /// A node below this one faulted or stopped the daemon.
    Aborted,
}

/// Every node's outcome, indexed by node id. Reusable across intervals.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    outcomes: Vec<Outcome>,
}

impl Trace {
    /// An empty trace; it grows to the rule set's size on first use.
    pub fn new() -> Self {
        Trace::default()
    }

    /// Marks a range of nodes as not evaluated, sizing the trace as needed.
    pub fn reset(&mut self, nodes: std::ops::Range<u32>, arena_len: usize) {
        if self.outcomes.len() < arena_len {
            self.outcomes.resize(arena_len, Outcome::NotEvaluated);
        }
        for o in &mut self.outcomes[nodes.start as usize..nodes.end as usize] {
            *o = Outcome::NotEvaluated;
        }
    }

    /// The outcome of a node.
    pub fn outcome(&self, node: NodeId) -> Outcome {
        self.outcomes
            .get(node as usize)
            .copied()
            .unwrap_or(Outcome::NotEvaluated)
    }
}

/// Receives outcomes; the no-trace implementation compiles to nothing.
pub trait Recorder {
    /// Whether outcomes are kept at all.
    const ENABLED: bool;
    /// Keeps one node's outcome.
    fn record(&mut self, node: NodeId, outcome: Outcome);
    /// The outcome kept for a node so far.
    fn recorded(&self, node: NodeId) -> Outcome;
    /// Forgets the outcomes of a range of nodes before a rule is evaluated again.
    fn reset_range(&mut self, nodes: std::ops::Range<u32>, arena_len: usize);
}

/// Evaluation without a trace, for the headless path.
pub struct NoTrace;

impl Recorder for NoTrace {
    const ENABLED: bool = false;
    #[inline(always)]
    fn record(&mut self, _: NodeId, _: Outcome) {}
    #[inline(always)]
    fn recorded(&self, _: NodeId) -> Outcome {
        Outcome::NotEvaluated
    }
    #[inline(always)]
    fn reset_range(&mut self, _: std::ops::Range<u32>, _: usize) {}
}

impl Recorder for Trace {
    const ENABLED: bool = true;
    #[inline]
    fn record(&mut self, node: NodeId, outcome: Outcome) {
        if let Some(slot) = self.outcomes.get_mut(node as usize) {
            *slot = outcome;
        }
    }
    fn recorded(&self, node: NodeId) -> Outcome {
        self.outcome(node)
    }
    fn reset_range(&mut self, nodes: std::ops::Range<u32>, arena_len: usize) {
        self.reset(nodes, arena_len);
    }
}

/// Evaluates nodes of one rule set against one interval's values.
pub struct Evaluator<'a, R: Readings> {
    rules: &'a RuleSet,
    readings: &'a R,
}

impl<'a, R: Readings> Evaluator<'a, R> {
    /// An evaluator for `rules` over `readings`.
    pub fn new(rules: &'a RuleSet, readings: &'a R) -> Self {
        Evaluator { rules, readings }
    }

    /// Where this evaluator's values come from.
    pub fn readings(&self) -> &'a R {
        self.readings
    }

    /// Reads `node` as a condition (cpuplugd's `eval_term`).
    pub fn truth<T: Recorder>(&self, node: NodeId, trace: &mut T) -> Result<bool, Stop> {
        let result = self.truth_inner(node, trace);
        if T::ENABLED {
            match &self.rules.nodes[node as usize].kind {
                NodeKind::Var { body, .. } => copy_outcome(trace, node, *body),
                NodeKind::Not(_)
                | NodeKind::Binary(BinOp::And | BinOp::Or | BinOp::Greater | BinOp::Less, ..) => {
                    record_result(trace, node, &result, Outcome::Truth)
                }
                // A number read as a condition: number() kept its value.
                _ => {}
            }
        }
        result
    }

    /// Reads `node` as a number (cpuplugd's `eval_double`).
    pub fn number<T: Recorder>(&self, node: NodeId, trace: &mut T) -> Result<f64, Stop> {
        let result = self.number_inner(node, trace);
        if T::ENABLED {
            match &self.rules.nodes[node as usize].kind {
                NodeKind::Var { body, .. } => copy_outcome(trace, node, *body),
                _ => record_result(trace, node, &result, Outcome::Number),
            }
        }
        result
    }

    fn truth_inner<T: Recorder>(&self, node: NodeId, trace: &mut T) -> Result<bool, Stop> {
        match &self.rules.nodes[node as usize].kind {
            NodeKind::Not(inner) => Ok(!self.truth(*inner, trace)?),
            NodeKind::Binary(BinOp::Or, l, r) => {
                Ok(self.truth(*l, trace)? || self.truth(*r, trace)?)
            }
            NodeKind::Binary(BinOp::And, l, r) => {
                Ok(self.truth(*l, trace)? && self.truth(*r, trace)?)
            }
            NodeKind::Binary(op @ (BinOp::Greater | BinOp::Less), l, r) => {
                let a = self.number(*l, trace)?;
                let b = self.number(*r, trace)?;
                compare(*op, a, b, node)
            }
            NodeKind::Var { body, .. } => self.truth(*body, trace),
            _ => Ok(self.number(node, trace)? != 0.0),
        }
    }

    fn number_inner<T: Recorder>(&self, node: NodeId, trace: &mut T) -> Result<f64, Stop> {
        match &self.rules.nodes[node as usize].kind {
            NodeKind::Const(v) => Ok(*v),
            NodeKind::Keyword(k) => Ok(self.readings.keyword(*k)),
            NodeKind::Reading { reading, index } => read(self.readings, *reading, *index, node),
            NodeKind::Neg(inner) => Ok(-self.number(*inner, trace)?),
            NodeKind::Binary(op, l, r) => {
                if op.yields_truth() {
                    return Err(invalid_term(*op as u8, node));
                }
                let a = self.number(*l, trace)?;
                let b = self.number(*r, trace)?;
                arith(*op, a, b, node)
            }
            NodeKind::Not(_) => Err(invalid_term(NOT_OPCODE, node)),
            NodeKind::Var { body, .. } => self.number(*body, trace),
        }
    }

    /// cpuplugd's message for a fatal stop.
    pub fn fatal_message(&self, fatal: FatalKind, node: NodeId) -> String {
        fatal_message(self.rules, fatal, node)
    }
}

/// cpuplugd's message for a fatal stop at `node` of `rules`.
pub fn fatal_message(rules: &RuleSet, fatal: FatalKind, node: NodeId) -> String {
    match fatal {
        FatalKind::InvalidTerm(code) => format!("Invalid term specified: {code}"),
        FatalKind::SymbolNotFound => {
            let name = match &rules.nodes[node as usize].kind {
                NodeKind::Reading { reading, .. } => field_name(rules, *reading),
                _ => "?",
            };
            format!("Symbol {name} not found, check your config file")
        }
    }
}

fn field_name(rules: &RuleSet, reading: Reading) -> &str {
    let f = &rules.fields;
    match reading {
        Reading::Meminfo(i) => &f.meminfo[i as usize],
        Reading::Vmstat(i) => &f.vmstat[i as usize],
        Reading::CpustatUnknown(i) => &f.unknown_cpustat[i as usize],
        Reading::Cpustat(c) => c.name(),
        Reading::Time => "time",
    }
}

/// A reading at `node`, or the stop a missing one is.
#[inline(always)]
pub fn read<R: Readings>(
    readings: &R,
    reading: Reading,
    index: u32,
    node: NodeId,
) -> Result<f64, Stop> {
    readings.reading(reading, index).ok_or(not_found(node))
}

/// The stop a reading missing at `node` is ("Symbol not found").
#[inline(always)]
pub fn not_found(node: NodeId) -> Stop {
    Stop::Fatal {
        fatal: FatalKind::SymbolNotFound,
        node,
    }
}

/// `a op b` for an arithmetic operator, or the fault at `node`.
#[inline(always)]
pub fn arith(op: BinOp, a: f64, b: f64, node: NodeId) -> Result<f64, Stop> {
    let r = match op {
        BinOp::Add => fpu::add(a, b),
        BinOp::Sub => fpu::sub(a, b),
        BinOp::Mul => fpu::mul(a, b),
        _ => fpu::div(a, b),
    };
    r.map_err(|fault| Stop::Fault { fault, node })
}

/// `a > b` or `a < b`, or the fault at `node`.
#[inline(always)]
pub fn compare(op: BinOp, a: f64, b: f64, node: NodeId) -> Result<bool, Stop> {
    let r = if op == BinOp::Greater {
        fpu::greater(a, b)
    } else {
        fpu::less(a, b)
    };
    r.map_err(|fault| Stop::Fault { fault, node })
}

fn invalid_term(code: u8, node: NodeId) -> Stop {
    Stop::Fatal {
        fatal: FatalKind::InvalidTerm(code),
        node,
    }
}

/// A variable shows what its text evaluated to.
fn copy_outcome<T: Recorder>(trace: &mut T, node: NodeId, body: NodeId) {
    let outcome = match trace.recorded(body) {
        Outcome::Fault(_) | Outcome::Fatal => Outcome::Aborted,
        other => other,
    };
    trace.record(node, outcome);
}

fn record_result<T: Recorder, V: Copy>(
    trace: &mut T,
    node: NodeId,
    result: &Result<V, Stop>,
    ok: fn(V) -> Outcome,
) {
    let outcome = match result {
        Ok(v) => ok(*v),
        Err(Stop::Fault {
            fault,
            node: origin,
        }) if *origin == node => Outcome::Fault(*fault),
        Err(Stop::Fatal { node: origin, .. }) if *origin == node => Outcome::Fatal,
        Err(_) => Outcome::Aborted,
    };
    trace.record(node, outcome);
}
