//! Expressions back to text. Used to show a rule as cpuplugd understood it
//! (with the parentheses its operator scoping implies) and to check that the
//! parser and the printer agree.

use super::expr::{BinOp, Keyword, NodeId, NodeKind, Reading};
use super::ruleset::RuleSet;

/// An expression tree with variables already inlined and no spans: what an
/// expression *means*, for comparing two parses.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// The bits of the constant, so NaN and -0 compare exactly.
    Const(u64),
    Keyword(Keyword),
    Reading {
        prefix: &'static str,
        field: String,
        index: u32,
    },
    Neg(Box<Shape>),
    Not(Box<Shape>),
    Binary(BinOp, Box<Shape>, Box<Shape>),
}

/// The meaning of `node`, looking through variables.
pub fn shape(rules: &RuleSet, node: NodeId) -> Shape {
    match &rules.node(node).kind {
        NodeKind::Const(v) => Shape::Const(v.to_bits()),
        NodeKind::Keyword(k) => Shape::Keyword(*k),
        NodeKind::Reading { reading, index } => {
            let f = &rules.fields;
            let (prefix, field) = match reading {
                Reading::Meminfo(i) => ("meminfo.", f.meminfo[*i as usize].clone()),
                Reading::Vmstat(i) => ("vmstat.", f.vmstat[*i as usize].clone()),
                Reading::Cpustat(c) => ("cpustat.", c.name().to_string()),
                Reading::CpustatUnknown(i) => ("cpustat.", f.unknown_cpustat[*i as usize].clone()),
                Reading::Time => ("time", String::new()),
            };
            Shape::Reading {
                prefix,
                field,
                index: *index,
            }
        }
        NodeKind::Neg(c) => Shape::Neg(Box::new(shape(rules, *c))),
        NodeKind::Not(c) => Shape::Not(Box::new(shape(rules, *c))),
        NodeKind::Binary(op, l, r) => {
            Shape::Binary(*op, Box::new(shape(rules, *l)), Box::new(shape(rules, *r)))
        }
        NodeKind::Var { body, .. } => shape(rules, *body),
    }
}

/// Text that cpuplugd reads back as the same shape, with only the
/// parentheses its scoping needs.
pub fn print(shape: &Shape) -> String {
    let mut out = String::new();
    write(shape, &mut out);
    out
}

fn level(shape: &Shape) -> u8 {
    match shape {
        Shape::Binary(op, ..) => op.level(),
        Shape::Neg(_) | Shape::Not(_) => 0,
        _ => 6,
    }
}

fn write(shape: &Shape, out: &mut String) {
    match shape {
        Shape::Const(bits) => out.push_str(&format!("{:e}", f64::from_bits(*bits))),
        Shape::Keyword(k) => out.push_str(k.name()),
        Shape::Reading {
            prefix,
            field,
            index,
        } => {
            out.push_str(prefix);
            out.push_str(field);
            out.push_str(&format!("[{index}]"));
        }
        Shape::Neg(c) | Shape::Not(c) => {
            out.push(if matches!(shape, Shape::Neg(_)) {
                '-'
            } else {
                '!'
            });
            if matches!(**c, Shape::Keyword(_) | Shape::Reading { .. }) {
                write(c, out);
            } else {
                wrapped(c, out);
            }
        }
        Shape::Binary(op, l, r) => {
            let lv = level(l);
            if lv < op.level() {
                wrapped(l, out);
            } else {
                write(l, out);
            }
            out.push_str(op.symbol());
            if matches!(**r, Shape::Binary(..)) && level(r) <= op.level() {
                wrapped(r, out);
            } else {
                write(r, out);
            }
        }
    }
}

fn wrapped(shape: &Shape, out: &mut String) {
    out.push('(');
    write(shape, out);
    out.push(')');
}
