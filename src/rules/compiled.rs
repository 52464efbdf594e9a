//! Rules flattened into straight-line programs for evaluation without a
//! trace (the headless daemon, `eval`, the simulator, `tune`). The tree
//! evaluator recurses through every node, and a call per node cost more than
//! the arithmetic; a program runs the same operations in the same order,
//! with the same short-circuits, faults and fatal stops, over a small stack.
//! [`Evaluator`] stays the reference (and the only path that keeps a
//! trace); `tests/suite/compiled_props.rs` holds the two to the same answers.

use super::eval::{Evaluator, FatalKind, Readings, Recorder, Stop, arith, compare, read};
use super::expr::{BinOp, CpuStat, Keyword, NOT_OPCODE, NodeId, NodeKind, Reading};
use super::ruleset::RuleSet;

/// How a program reads its root: as a condition or as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Truth,
    Number,
}

/// A value read without evaluating anything below it. A tag of its own
/// (not folded into [`Reading`]'s): reading one is then one dispatch.
#[derive(Debug, Clone, Copy)]
#[repr(u8)]
enum Leaf {
    Const(f64),
    Keyword(Keyword),
    /// A `cpustat` reading: its own case, as most leaves are one, so
    /// reading it takes one dispatch, not two.
    Cpustat {
        stat: CpuStat,
        index: u32,
        node: NodeId,
    },
    Reading {
        reading: Reading,
        index: u32,
        node: NodeId,
    },
}

impl Leaf {
    /// Its value now, or the stop a missing reading is.
    #[inline(always)]
    fn value<R: Readings>(self, readings: &R) -> Result<f64, Stop> {
        match self {
            Leaf::Const(v) => Ok(v),
            Leaf::Keyword(k) => Ok(readings.keyword(k)),
            Leaf::Cpustat { stat, index, node } => {
                readings.cpustat(stat, index).ok_or(Stop::Fatal {
                    fatal: FatalKind::SymbolNotFound,
                    node,
                })
            }
            Leaf::Reading {
                reading,
                index,
                node,
            } => read(readings, reading, index, node),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Push(Leaf),
    Neg,
    Arith(BinOp, NodeId),
    /// The top and a leaf read after it (`a[0] - a[1]`, `x / 40`): one
    /// operation where it would be two, as most right sides are leaves.
    ArithLeaf(BinOp, NodeId, Leaf),
    /// `>` or `<`: pushes 1 or 0.
    Compare(BinOp, NodeId),
    /// `>` or `<` of the top and a leaf read after it.
    CompareLeaf(BinOp, NodeId, Leaf),
    /// Two leaves read left to right and their `a op b` pushed
    /// (`a[0] - a[1]`): one operation where it would be two.
    ArithLeaves(BinOp, NodeId, Leaf, Leaf),
    /// Truth negation of the top.
    Not,
    /// A number read as a condition: pushes 1 when it is not 0.
    Truthy,
    /// `&`: when the top is false it is the result, and the right side is
    /// skipped (jump to the target); otherwise it is dropped.
    AndThen(u32),
    /// `|`: when the top is true it is the result; otherwise it is dropped.
    OrElse(u32),
    /// A node cpuplugd stops at whatever the readings are.
    Fail(FatalKind, NodeId),
}

/// One rule (or any node) as a program.
#[derive(Debug, Clone)]
pub struct Program {
    root: NodeId,
    context: Context,
    ops: Vec<Op>,
    /// The deepest the stack gets.
    depth: usize,
}

/// How deep a stack lives in a fixed array; deeper rules (hostile files)
/// get one on the heap.
const INLINE_DEPTH: usize = 32;

impl Program {
    /// `root` of `rules` read in `context`.
    pub fn new(rules: &RuleSet, root: NodeId, context: Context) -> Self {
        let mut c = Compiler {
            rules,
            ops: Vec::new(),
            depth: 0,
            max_depth: 0,
        };
        match context {
            Context::Truth => c.truth(root),
            Context::Number => c.number(root),
        }
        Program {
            root,
            context,
            ops: c.ops,
            depth: c.max_depth,
        }
    }

    /// The node this program evaluates, and how.
    pub fn key(&self) -> (NodeId, Context) {
        (self.root, self.context)
    }

    /// The value (1 or 0 for a condition), or why evaluation stopped.
    #[inline]
    pub fn run<R: Readings>(&self, readings: &R) -> Result<f64, Stop> {
        if self.depth <= INLINE_DEPTH {
            let mut stack = [0.0f64; INLINE_DEPTH];
            self.run_on(readings, &mut stack)
        } else {
            let mut stack = vec![0.0f64; self.depth];
            self.run_on(readings, &mut stack)
        }
    }

    /// Whether running it on a full history can stop cpuplugd: a node it
    /// always stops at, or a /proc name some reading may lack (every
    /// `cpustat` name and `time` are in every reading).
    pub fn may_stop(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, Op::Fail(..)))
            || self.leaves().any(|leaf| {
                matches!(
                    leaf,
                    Leaf::Reading {
                        reading: Reading::Meminfo(_)
                            | Reading::Vmstat(_)
                            | Reading::CpustatUnknown(_),
                        ..
                    }
                )
            })
    }

    /// Whether it reads a keyword `wanted` picks.
    pub fn reads_keyword(&self, wanted: impl Fn(Keyword) -> bool) -> bool {
        self.leaves()
            .any(|leaf| matches!(leaf, Leaf::Keyword(k) if wanted(k)))
    }

    fn leaves(&self) -> impl Iterator<Item = Leaf> + '_ {
        self.ops
            .iter()
            .filter_map(|op| match *op {
                Op::Push(leaf) | Op::ArithLeaf(_, _, leaf) | Op::CompareLeaf(_, _, leaf) => {
                    Some([Some(leaf), None])
                }
                Op::ArithLeaves(_, _, a, b) => Some([Some(a), Some(b)]),
                _ => None,
            })
            .flatten()
            .flatten()
    }

    fn run_on<R: Readings>(&self, readings: &R, stack: &mut [f64]) -> Result<f64, Stop> {
        let mut sp = 0usize;
        let mut pc = 0usize;
        while let Some(op) = self.ops.get(pc) {
            pc += 1;
            match *op {
                Op::Push(leaf) => {
                    stack[sp] = leaf.value(readings)?;
                    sp += 1;
                }
                Op::Neg => stack[sp - 1] = -stack[sp - 1],
                Op::Arith(op, node) => {
                    sp -= 1;
                    stack[sp - 1] = arith(op, stack[sp - 1], stack[sp], node)?;
                }
                Op::ArithLeaf(op, node, leaf) => {
                    let b = leaf.value(readings)?;
                    stack[sp - 1] = arith(op, stack[sp - 1], b, node)?;
                }
                Op::ArithLeaves(op, node, a, b) => {
                    let a = a.value(readings)?;
                    let b = b.value(readings)?;
                    stack[sp] = arith(op, a, b, node)?;
                    sp += 1;
                }
                Op::Compare(op, node) => {
                    sp -= 1;
                    stack[sp - 1] = bit(compare(op, stack[sp - 1], stack[sp], node)?);
                }
                Op::CompareLeaf(op, node, leaf) => {
                    let b = leaf.value(readings)?;
                    stack[sp - 1] = bit(compare(op, stack[sp - 1], b, node)?);
                }
                Op::Not => stack[sp - 1] = bit(stack[sp - 1] == 0.0),
                Op::Truthy => stack[sp - 1] = bit(stack[sp - 1] != 0.0),
                Op::AndThen(target) => {
                    if stack[sp - 1] == 0.0 {
                        pc = target as usize;
                    } else {
                        sp -= 1;
                    }
                }
                Op::OrElse(target) => {
                    if stack[sp - 1] != 0.0 {
                        pc = target as usize;
                    } else {
                        sp -= 1;
                    }
                }
                Op::Fail(fatal, node) => return Err(Stop::Fatal { fatal, node }),
            }
        }
        Ok(stack[0])
    }
}

fn bit(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

struct Compiler<'a> {
    rules: &'a RuleSet,
    ops: Vec<Op>,
    depth: usize,
    max_depth: usize,
}

impl Compiler<'_> {
    fn push(&mut self, op: Op) {
        self.ops.push(op);
    }

    fn grow(&mut self) {
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
    }

    /// As the evaluator's `truth`: conditions short-circuit left to right.
    fn truth(&mut self, node: NodeId) {
        match self.rules.nodes[node as usize].kind {
            NodeKind::Not(inner) => {
                self.truth(inner);
                self.push(Op::Not);
            }
            NodeKind::Binary(op @ (BinOp::And | BinOp::Or), l, r) => {
                self.truth(l);
                let jump = self.ops.len();
                self.push(Op::Not); // replaced below, once the target is known
                self.depth -= 1;
                self.truth(r);
                let target = self.ops.len() as u32;
                self.ops[jump] = if op == BinOp::And {
                    Op::AndThen(target)
                } else {
                    Op::OrElse(target)
                };
            }
            NodeKind::Binary(op @ (BinOp::Greater | BinOp::Less), l, r) => {
                self.number(l);
                match self.leaf(r) {
                    Some(leaf) => self.push(Op::CompareLeaf(op, node, leaf)),
                    None => {
                        self.number(r);
                        self.push(Op::Compare(op, node));
                        self.depth -= 1;
                    }
                }
            }
            NodeKind::Var { body, .. } => self.truth(body),
            _ => {
                self.number(node);
                self.push(Op::Truthy);
            }
        }
    }

    /// `node` as a leaf, when it is one (through variables, which are
    /// their bodies).
    fn leaf(&self, node: NodeId) -> Option<Leaf> {
        match self.rules.nodes[node as usize].kind {
            NodeKind::Const(v) => Some(Leaf::Const(v)),
            NodeKind::Keyword(k) => Some(Leaf::Keyword(k)),
            NodeKind::Reading {
                reading: Reading::Cpustat(stat),
                index,
            } => Some(Leaf::Cpustat { stat, index, node }),
            NodeKind::Reading { reading, index } => Some(Leaf::Reading {
                reading,
                index,
                node,
            }),
            NodeKind::Var { body, .. } => self.leaf(body),
            _ => None,
        }
    }

    /// As the evaluator's `number`.
    fn number(&mut self, node: NodeId) {
        if let Some(leaf) = self.leaf(node) {
            self.push(Op::Push(leaf));
            self.grow();
            return;
        }
        match self.rules.nodes[node as usize].kind {
            NodeKind::Neg(inner) => {
                self.number(inner);
                self.push(Op::Neg);
            }
            NodeKind::Binary(op, _, _) if op.yields_truth() => {
                self.push(Op::Fail(FatalKind::InvalidTerm(op as u8), node));
                // Never reached past here; the stack still counts a value.
                self.grow();
            }
            NodeKind::Binary(op, l, r) => {
                if let (Some(a), Some(b)) = (self.leaf(l), self.leaf(r)) {
                    self.push(Op::ArithLeaves(op, node, a, b));
                    self.grow();
                    return;
                }
                self.number(l);
                match self.leaf(r) {
                    Some(leaf) => self.push(Op::ArithLeaf(op, node, leaf)),
                    None => {
                        self.number(r);
                        self.push(Op::Arith(op, node));
                        self.depth -= 1;
                    }
                }
            }
            NodeKind::Not(_) => {
                self.push(Op::Fail(FatalKind::InvalidTerm(NOT_OPCODE), node));
                self.grow();
            }
            NodeKind::Var { body, .. } => self.number(body),
            NodeKind::Const(_) | NodeKind::Keyword(_) | NodeKind::Reading { .. } => {}
        }
    }
}

/// The programs of a rule set's six rules, found by root node.
#[derive(Debug, Clone, Default)]
pub struct Programs {
    programs: Vec<Program>,
}

impl Programs {
    /// Every rule of `rules`: the four conditions as truths, CMM_INC and
    /// CMM_DEC as numbers.
    pub fn of(rules: &RuleSet) -> Self {
        use super::expr::RuleKind;
        let mut programs = Vec::new();
        for kind in RuleKind::ALL {
            if let Some(rule) = rules.rule(kind) {
                let context = match kind {
                    RuleKind::CmmInc | RuleKind::CmmDec => Context::Number,
                    _ => Context::Truth,
                };
                programs.push(Program::new(rules, rule.root, context));
            }
        }
        Programs { programs }
    }

    /// `node` as a condition: by its program when nothing is traced and
    /// there is one, else by `eval`'s tree walk (which keeps the trace).
    #[inline]
    pub fn truth<R: Readings, T: Recorder>(
        &self,
        eval: &Evaluator<'_, R>,
        node: NodeId,
        trace: &mut T,
    ) -> Result<bool, Stop> {
        match self.find(node, Context::Truth) {
            Some(p) if !T::ENABLED => p.run(eval.readings()).map(|v| v != 0.0),
            _ => eval.truth(node, trace),
        }
    }

    /// `node` as a number, as [`Programs::truth`] does.
    #[inline]
    pub fn number<R: Readings, T: Recorder>(
        &self,
        eval: &Evaluator<'_, R>,
        node: NodeId,
        trace: &mut T,
    ) -> Result<f64, Stop> {
        match self.find(node, Context::Number) {
            Some(p) if !T::ENABLED => p.run(eval.readings()),
            _ => eval.number(node, trace),
        }
    }

    /// The program for `root` read in `context`, if there is one.
    #[inline]
    pub fn find(&self, root: NodeId, context: Context) -> Option<&Program> {
        self.programs.iter().find(|p| p.key() == (root, context))
    }
}
