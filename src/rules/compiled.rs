//! Rules flattened into straight-line programs for evaluation without a
//! trace (the headless daemon, `eval`, the simulator, `tune`). The tree
//! evaluator recurses through every node, and a call per node cost more than
//! the arithmetic; a program runs the same operations in the same order,
//! with the same short-circuits, faults and fatal stops, in register form:
//! each operation names the slots it reads and writes.
//! [`Evaluator`] stays the reference (and the only path that keeps a
//! trace); `tests/suite/compiled_props.rs` holds the two to the same answers.

use super::eval::{Evaluator, FatalKind, Readings, Recorder, Stop, not_found, read};
use super::expr::{BinOp, CpuStat, Keyword, NOT_OPCODE, NodeId, NodeKind, Reading, RuleKind};
use super::fpu;
use super::ruleset::RuleSet;

/// How a program reads its root: as a condition or as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Truth,
    Number,
}

/// Where an operation takes a value from: a slot an operation before
/// wrote, or a value read without evaluating anything below it. One tag
/// (not a slot-or-leaf pair, and not folded into [`Reading`]'s): taking a
/// value is one dispatch.
#[derive(Debug, Clone, Copy)]
#[repr(u8)]
enum Operand {
    Slot(u32),
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

impl Operand {
    /// Its value now, or the stop a missing reading is.
    #[inline(always)]
    fn value<R: Readings>(&self, slots: &[f64], readings: &R) -> Result<f64, Stop> {
        match *self {
            Operand::Slot(at) => Ok(slots[at as usize]),
            Operand::Const(v) => Ok(v),
            Operand::Keyword(k) => Ok(readings.keyword(k)),
            Operand::Cpustat { stat, index, node } => {
                cpustat(readings, CpustatLeaf { stat, index, node })
            }
            Operand::Reading {
                reading,
                index,
                node,
            } => read(readings, reading, index, node),
        }
    }

    /// Whether taking it can neither fail nor depend on when it is taken:
    /// it may then be taken after the operations of a right side.
    fn is_constant(self) -> bool {
        matches!(self, Operand::Const(_) | Operand::Keyword(_))
    }
}

/// A `cpustat` reading at `node`, or the stop a missing one is.
#[inline(always)]
fn cpustat<R: Readings>(readings: &R, leaf: CpustatLeaf) -> Result<f64, Stop> {
    let CpustatLeaf { stat, index, node } = leaf;
    readings.cpustat(stat, index).ok_or(not_found(node))
}

/// One `cpustat` reading of a [`Op::CpustatDelta`].
#[derive(Debug, Clone, Copy)]
struct CpustatLeaf {
    stat: CpuStat,
    index: u32,
    node: NodeId,
}

impl CpustatLeaf {
    fn operand(self) -> Operand {
        Operand::Cpustat {
            stat: self.stat,
            index: self.index,
            node: self.node,
        }
    }
}

/// The operands and node of a binary operation whose result goes to
/// slot `to`: `a` is taken, then `b`, then the operation may fault at
/// `node`.
#[derive(Debug, Clone, Copy)]
struct Binary {
    to: u32,
    a: Operand,
    b: Operand,
    node: NodeId,
}

impl Binary {
    /// `op` of both operands, read left then right as cpuplugd reads
    /// them, or its fault at the node.
    #[inline(always)]
    fn apply<R: Readings, V>(
        &self,
        slots: &[f64],
        readings: &R,
        op: impl Fn(f64, f64) -> Result<V, fpu::Fault>,
    ) -> Result<V, Stop> {
        let x = self.a.value(slots, readings)?;
        let y = self.b.value(slots, readings)?;
        op(x, y).map_err(|fault| Stop::Fault {
            fault,
            node: self.node,
        })
    }
}

/// A binary operation of two slots (most operations of a rule combine the
/// results of operations before them) or of a slot and a constant (a
/// threshold, a divisor): nothing to dispatch on to take an operand, and
/// neither can stop.
#[derive(Debug, Clone, Copy)]
struct Slots<B> {
    to: u32,
    a: u32,
    b: B,
    node: NodeId,
}

/// What the right side of a [`Slots`] operation is.
trait SlotsRight: Copy {
    fn value(self, slots: &[f64]) -> f64;
}

/// Another slot.
impl SlotsRight for u32 {
    #[inline(always)]
    fn value(self, slots: &[f64]) -> f64 {
        slots[self as usize]
    }
}

/// A constant.
impl SlotsRight for f64 {
    #[inline(always)]
    fn value(self, _: &[f64]) -> f64 {
        self
    }
}

impl<B: SlotsRight> Slots<B> {
    /// `op` of both sides, or its fault at the node.
    #[inline(always)]
    fn apply<V>(
        &self,
        slots: &[f64],
        op: impl Fn(f64, f64) -> Result<V, fpu::Fault>,
    ) -> Result<V, Stop> {
        op(slots[self.a as usize], self.b.value(slots)).map_err(|fault| Stop::Fault {
            fault,
            node: self.node,
        })
    }
}

/// One operation of a program in register form: each names the slots it
/// reads and writes, so nothing is pushed or popped, and each operator is
/// an operation of its own, so none matches on the operator again.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// A lone leaf to its slot (a rule that is one name, or the left side
    /// of a right side that is not a leaf: read first, as cpuplugd does).
    Load(u32, Operand),
    Add(Binary),
    Sub(Binary),
    /// `cpustat.NAME[i] - cpustat.NAME[j]`, what rules compute most (a
    /// counter's change between readings): a `Sub` of two `cpustat`
    /// readings without an operand's dispatch.
    CpustatDelta {
        to: u32,
        a: CpustatLeaf,
        b: CpustatLeaf,
        node: NodeId,
    },
    Mul(Binary),
    Div(Binary),
    /// `>`: 1 or 0 to the slot.
    Greater(Binary),
    /// `<`: 1 or 0 to the slot.
    Less(Binary),
    AddSlots(Slots<u32>),
    SubSlots(Slots<u32>),
    MulSlots(Slots<u32>),
    DivSlots(Slots<u32>),
    GreaterSlots(Slots<u32>),
    LessSlots(Slots<u32>),
    DivConst(Slots<f64>),
    GreaterConst(Slots<f64>),
    LessConst(Slots<f64>),
    Neg(u32),
    /// Truth negation of the slot.
    Not(u32),
    /// The slot's number read as a condition: 1 when it is not 0.
    Truthy(u32),
    /// `&`: when the slot is false it is the result, and the right side
    /// is skipped (jump to the target).
    AndThen(u32, u32),
    /// `|`: when the slot is true it is the result.
    OrElse(u32, u32),
    /// A node cpuplugd stops at whatever the readings are.
    Fail(FatalKind, NodeId),
}

impl Op {
    /// A binary operation for `op` (`+ - * / > <`).
    fn binary(op: BinOp, b: Binary) -> Self {
        let Binary { to, a, node, .. } = b;
        match (op, a, b.b) {
            (_, Operand::Slot(a), Operand::Slot(right)) => {
                let s = Slots {
                    to,
                    a,
                    b: right,
                    node,
                };
                return match op {
                    BinOp::Add => Op::AddSlots(s),
                    BinOp::Sub => Op::SubSlots(s),
                    BinOp::Mul => Op::MulSlots(s),
                    BinOp::Div => Op::DivSlots(s),
                    BinOp::Greater => Op::GreaterSlots(s),
                    _ => Op::LessSlots(s),
                };
            }
            (BinOp::Div | BinOp::Greater | BinOp::Less, Operand::Slot(a), Operand::Const(v)) => {
                let s = Slots { to, a, b: v, node };
                return match op {
                    BinOp::Div => Op::DivConst(s),
                    BinOp::Greater => Op::GreaterConst(s),
                    _ => Op::LessConst(s),
                };
            }
            _ => {}
        }
        match op {
            BinOp::Add => Op::Add(b),
            BinOp::Sub => Op::Sub(b),
            BinOp::Mul => Op::Mul(b),
            BinOp::Div => Op::Div(b),
            BinOp::Greater => Op::Greater(b),
            _ => Op::Less(b),
        }
    }
}

/// One rule (or any node) as a program.
#[derive(Debug, Clone)]
pub struct Program {
    ops: Vec<Op>,
    /// How many slots it uses; the result is in the first.
    slots: usize,
}

/// How many slots live in a fixed array; programs that use more (hostile
/// files) get them on the heap.
const INLINE_SLOTS: usize = 8;

impl Program {
    /// `root` of `rules` read in `context`.
    pub fn new(rules: &RuleSet, root: NodeId, context: Context) -> Self {
        let mut c = Compiler {
            rules,
            ops: Vec::new(),
            slots: 1,
        };
        match context {
            Context::Truth => c.truth(root, 0),
            Context::Number => c.number(root, 0),
        }
        Program {
            ops: c.ops,
            slots: c.slots,
        }
    }

    /// The value (1 or 0 for a condition), or why evaluation stopped.
    #[inline]
    pub fn run<R: Readings>(&self, readings: &R) -> Result<f64, Stop> {
        if self.slots <= INLINE_SLOTS {
            let mut slots = [0.0f64; INLINE_SLOTS];
            self.run_on(readings, &mut slots)
        } else {
            let mut slots = vec![0.0f64; self.slots];
            self.run_on(readings, &mut slots)
        }
    }

    /// Whether running it on a full history can stop cpuplugd: a node it
    /// always stops at, or a /proc name some reading may lack (every
    /// `cpustat` name and `time` are in every reading).
    pub fn may_stop(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, Op::Fail(..)))
            || self.operands().any(|operand| {
                matches!(
                    operand,
                    Operand::Reading {
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
        self.operands()
            .any(|operand| matches!(operand, Operand::Keyword(k) if wanted(k)))
    }

    fn operands(&self) -> impl Iterator<Item = Operand> + '_ {
        self.ops
            .iter()
            .filter_map(|op| match *op {
                Op::Load(_, a) => Some([Some(a), None]),
                Op::Add(b)
                | Op::Sub(b)
                | Op::Mul(b)
                | Op::Div(b)
                | Op::Greater(b)
                | Op::Less(b) => Some([Some(b.a), Some(b.b)]),
                Op::CpustatDelta { a, b, .. } => Some([Some(a.operand()), Some(b.operand())]),
                _ => None,
            })
            .flatten()
            .flatten()
    }

    #[inline(always)]
    fn run_on<R: Readings>(&self, readings: &R, slots: &mut [f64]) -> Result<f64, Stop> {
        let mut pc = 0usize;
        while let Some(op) = self.ops.get(pc) {
            pc += 1;
            match op {
                Op::Load(to, a) => slots[*to as usize] = a.value(slots, readings)?,
                Op::Add(b) => slots[b.to as usize] = b.apply(slots, readings, fpu::add)?,
                Op::Sub(b) => slots[b.to as usize] = b.apply(slots, readings, fpu::sub)?,
                Op::CpustatDelta { to, a, b, node } => {
                    let x = cpustat(readings, *a)?;
                    let y = cpustat(readings, *b)?;
                    slots[*to as usize] =
                        fpu::sub(x, y).map_err(|fault| Stop::Fault { fault, node: *node })?;
                }
                Op::Mul(b) => slots[b.to as usize] = b.apply(slots, readings, fpu::mul)?,
                Op::Div(b) => slots[b.to as usize] = b.apply(slots, readings, fpu::div)?,
                Op::Greater(b) => {
                    slots[b.to as usize] = bit(b.apply(slots, readings, fpu::greater)?)
                }
                Op::Less(b) => slots[b.to as usize] = bit(b.apply(slots, readings, fpu::less)?),
                Op::AddSlots(s) => slots[s.to as usize] = s.apply(slots, fpu::add)?,
                Op::SubSlots(s) => slots[s.to as usize] = s.apply(slots, fpu::sub)?,
                Op::MulSlots(s) => slots[s.to as usize] = s.apply(slots, fpu::mul)?,
                Op::DivSlots(s) => slots[s.to as usize] = s.apply(slots, fpu::div)?,
                Op::GreaterSlots(s) => slots[s.to as usize] = bit(s.apply(slots, fpu::greater)?),
                Op::LessSlots(s) => slots[s.to as usize] = bit(s.apply(slots, fpu::less)?),
                Op::DivConst(s) => slots[s.to as usize] = s.apply(slots, fpu::div)?,
                Op::GreaterConst(s) => slots[s.to as usize] = bit(s.apply(slots, fpu::greater)?),
                Op::LessConst(s) => slots[s.to as usize] = bit(s.apply(slots, fpu::less)?),
                Op::Neg(at) => slots[*at as usize] = -slots[*at as usize],
                Op::Not(at) => slots[*at as usize] = bit(slots[*at as usize] == 0.0),
                Op::Truthy(at) => slots[*at as usize] = bit(slots[*at as usize] != 0.0),
                Op::AndThen(at, target) => {
                    if slots[*at as usize] == 0.0 {
                        pc = *target as usize;
                    }
                }
                Op::OrElse(at, target) => {
                    if slots[*at as usize] != 0.0 {
                        pc = *target as usize;
                    }
                }
                Op::Fail(fatal, node) => {
                    return Err(Stop::Fatal {
                        fatal: *fatal,
                        node: *node,
                    });
                }
            }
        }
        Ok(slots[0])
    }
}

fn bit(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

struct Compiler<'a> {
    rules: &'a RuleSet,
    ops: Vec<Op>,
    /// How many slots the operations so far use.
    slots: usize,
}

impl Compiler<'_> {
    fn push(&mut self, op: Op) {
        self.ops.push(op);
    }

    /// Slot `at` is used.
    fn uses(&mut self, at: u32) {
        self.slots = self.slots.max(at as usize + 1);
    }

    /// As the evaluator's `truth`, the result to slot `to`: conditions
    /// short-circuit left to right.
    fn truth(&mut self, node: NodeId, to: u32) {
        match self.rules.nodes[node as usize].kind {
            NodeKind::Not(inner) => {
                self.truth(inner, to);
                self.push(Op::Not(to));
            }
            NodeKind::Binary(op @ (BinOp::And | BinOp::Or), l, r) => {
                self.truth(l, to);
                let jump = self.ops.len();
                self.push(Op::Not(to)); // replaced below, once the target is known
                self.truth(r, to);
                let target = self.ops.len() as u32;
                self.ops[jump] = if op == BinOp::And {
                    Op::AndThen(to, target)
                } else {
                    Op::OrElse(to, target)
                };
            }
            NodeKind::Binary(op @ (BinOp::Greater | BinOp::Less), l, r) => {
                self.binary(op, node, l, r, to);
            }
            NodeKind::Var { body, .. } => self.truth(body, to),
            _ => {
                self.number(node, to);
                self.push(Op::Truthy(to));
            }
        }
    }

    /// `node` as an operand read where it stands, when it is a leaf
    /// (through variables, which are their bodies).
    fn leaf(&self, node: NodeId) -> Option<Operand> {
        match self.rules.nodes[node as usize].kind {
            NodeKind::Const(v) => Some(Operand::Const(v)),
            NodeKind::Keyword(k) => Some(Operand::Keyword(k)),
            NodeKind::Reading {
                reading: Reading::Cpustat(stat),
                index,
            } => Some(Operand::Cpustat { stat, index, node }),
            NodeKind::Reading { reading, index } => Some(Operand::Reading {
                reading,
                index,
                node,
            }),
            NodeKind::Var { body, .. } => self.leaf(body),
            _ => None,
        }
    }

    /// `l op r` at `node` to slot `to`, its sides read left to right: a
    /// leaf is read by the operation itself unless something must be
    /// evaluated between it and the operation (a right side that is not a
    /// leaf after a left one that may stop: that one is loaded first).
    fn binary(&mut self, op: BinOp, node: NodeId, l: NodeId, r: NodeId, to: u32) {
        self.uses(to);
        let right = self.leaf(r);
        let a = match self.leaf(l) {
            Some(a) if right.is_some() || a.is_constant() => a,
            _ => {
                self.number(l, to);
                Operand::Slot(to)
            }
        };
        let b = match right {
            Some(b) => b,
            None => {
                self.number(r, to + 1);
                Operand::Slot(to + 1)
            }
        };
        let op = match (op, a, b) {
            (
                BinOp::Sub,
                Operand::Cpustat {
                    stat,
                    index,
                    node: a_node,
                },
                Operand::Cpustat {
                    stat: b_stat,
                    index: b_index,
                    node: b_node,
                },
            ) => Op::CpustatDelta {
                to,
                a: CpustatLeaf {
                    stat,
                    index,
                    node: a_node,
                },
                b: CpustatLeaf {
                    stat: b_stat,
                    index: b_index,
                    node: b_node,
                },
                node,
            },
            _ => Op::binary(op, Binary { to, a, b, node }),
        };
        self.push(op);
    }

    /// As the evaluator's `number`, the result to slot `to`.
    fn number(&mut self, node: NodeId, to: u32) {
        self.uses(to);
        if let Some(leaf) = self.leaf(node) {
            self.push(Op::Load(to, leaf));
            return;
        }
        match self.rules.nodes[node as usize].kind {
            NodeKind::Neg(inner) => {
                self.number(inner, to);
                self.push(Op::Neg(to));
            }
            NodeKind::Binary(op, _, _) if op.yields_truth() => {
                self.push(Op::Fail(FatalKind::InvalidTerm(op as u8), node));
            }
            NodeKind::Binary(op, l, r) => self.binary(op, node, l, r, to),
            NodeKind::Not(_) => {
                self.push(Op::Fail(FatalKind::InvalidTerm(NOT_OPCODE), node));
            }
            NodeKind::Var { body, .. } => self.number(body, to),
            NodeKind::Const(_) | NodeKind::Keyword(_) | NodeKind::Reading { .. } => {}
        }
    }
}

/// The programs of a rule set's six rules, by rule.
#[derive(Debug, Clone, Default)]
pub struct Programs {
    /// By [`RuleKind::index`].
    programs: [Option<Program>; RuleKind::ALL.len()],
}

impl Programs {
    /// Every rule of `rules`: the four conditions as truths, CMM_INC and
    /// CMM_DEC as numbers.
    pub fn of(rules: &RuleSet) -> Self {
        let mut programs = Programs::default();
        for kind in RuleKind::ALL {
            if let Some(rule) = rules.rule(kind) {
                let context = match kind {
                    RuleKind::CmmInc | RuleKind::CmmDec => Context::Number,
                    _ => Context::Truth,
                };
                programs.programs[kind.index()] = Some(Program::new(rules, rule.root, context));
            }
        }
        programs
    }

    /// The rule `kind`, rooted at `root`, as a condition: by its program
    /// when nothing is traced and there is one, else by `eval`'s tree walk
    /// (which keeps the trace).
    #[inline]
    pub fn truth<R: Readings, T: Recorder>(
        &self,
        eval: &Evaluator<'_, R>,
        kind: RuleKind,
        root: NodeId,
        trace: &mut T,
    ) -> Result<bool, Stop> {
        match self.get(kind) {
            Some(p) if !T::ENABLED => p.run(eval.readings()).map(|v| v != 0.0),
            _ => eval.truth(root, trace),
        }
    }

    /// The rule `kind` as a number, as [`Programs::truth`] does.
    #[inline]
    pub fn number<R: Readings, T: Recorder>(
        &self,
        eval: &Evaluator<'_, R>,
        kind: RuleKind,
        root: NodeId,
        trace: &mut T,
    ) -> Result<f64, Stop> {
        match self.get(kind) {
            Some(p) if !T::ENABLED => p.run(eval.readings()),
            _ => eval.number(root, trace),
        }
    }

    /// The program of the rule `kind`, if the rule set has the rule.
    #[inline]
    pub fn get(&self, kind: RuleKind) -> Option<&Program> {
        self.programs[kind.index()].as_ref()
    }
}
