//! Why a decision changed between two intervals: the comparisons whose
//! truth flipped, with the values on both sides, so "the guest flaps" becomes
//! "CP_idleAVG * onumcpus went 1.0900 → 1.1700 across 1.15".

use crate::report::trace::{label, number};
use crate::report::units::{Units, ValueUnit};
use crate::rules::eval::{Outcome, Trace};
use crate::rules::expr::{BinOp, NodeKind};
use crate::rules::{RuleKind, RuleSet, SourceFile};

/// The truth-valued rules, whose flips make decisions change.
pub const CONDITIONS: [RuleKind; 4] = [
    RuleKind::Hotplug,
    RuleKind::Hotunplug,
    RuleKind::Memplug,
    RuleKind::Memunplug,
];

/// One comparison that changed its mind.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    pub rule: RuleKind,
    /// The rule's result before and after.
    pub rule_before: bool,
    pub rule_after: bool,
    /// The comparison's left side as written, and its values.
    pub left: String,
    pub left_values: (f64, f64),
    /// The right side as written, and its values.
    pub right: String,
    pub right_values: (f64, f64),
    /// What each side is measured in.
    pub units: (ValueUnit, ValueUnit),
}

impl Flip {
    /// "CP_idleAVG * onumcpus went 1.09 → 1.17 across 1.15".
    pub fn describe(&self) -> String {
        let (a, b) = self.left_values;
        let (c, d) = self.right_values;
        let (lu, ru) = self.units;
        let with = |u: ValueUnit, v: f64| u.after(v, &number(v));
        let moved = format!("{} went {} → {}", self.left, with(lu, a), with(lu, b));
        if c == d {
            format!("{moved} across {}", with(ru, d))
        } else {
            format!(
                "{moved} against {} {} → {}",
                self.right,
                with(ru, c),
                with(ru, d)
            )
        }
    }
}

fn truth(o: Outcome) -> Option<bool> {
    match o {
        Outcome::Truth(b) => Some(b),
        Outcome::Number(v) => Some(v != 0.0),
        _ => None,
    }
}

fn value(o: Outcome) -> Option<f64> {
    match o {
        Outcome::Number(v) => Some(v),
        Outcome::Truth(b) => Some(f64::from(u8::from(b))),
        _ => None,
    }
}

/// The comparisons that flipped between `before` and `after` in the rules
/// whose result flipped, in rule order. Both traces are of `rules`.
pub fn flips(rules: &RuleSet, source: &SourceFile, before: &Trace, after: &Trace) -> Vec<Flip> {
    let mut out = Vec::new();
    let mut units = Units::new(rules);
    for kind in CONDITIONS {
        let Some(rule) = rules.rule(kind) else {
            continue;
        };
        let (Some(rb), Some(ra)) = (
            truth(before.outcome(rule.root)),
            truth(after.outcome(rule.root)),
        ) else {
            continue;
        };
        if rb == ra {
            continue;
        }
        for node in rule.nodes.clone() {
            let NodeKind::Binary(BinOp::Greater | BinOp::Less, l, r) = rules.node(node).kind else {
                continue;
            };
            let (Some(tb), Some(ta)) = (truth(before.outcome(node)), truth(after.outcome(node)))
            else {
                continue;
            };
            if tb == ta {
                continue;
            }
            let (Some(lb), Some(la), Some(rb_), Some(ra_)) = (
                value(before.outcome(l)),
                value(after.outcome(l)),
                value(before.outcome(r)),
                value(after.outcome(r)),
            ) else {
                continue;
            };
            out.push(Flip {
                rule: kind,
                rule_before: rb,
                rule_after: ra,
                left: label(rules, source, l),
                left_values: (lb, la),
                right: label(rules, source, r),
                right_values: (rb_, ra_),
                units: (units.of(l), units.of(r)),
            });
        }
    }
    out
}

/// One line per flipped rule: "HOTUNPLUG false → true: CP_idleAVG *
/// onumcpus went 1.09 → 1.17 across 1.15".
pub fn lines(flips: &[Flip]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut last: Option<RuleKind> = None;
    for f in flips {
        if last == Some(f.rule) {
            if let Some(line) = out.last_mut() {
                line.push_str("; ");
                line.push_str(&f.describe());
            }
        } else {
            out.push(format!(
                "{} {} → {}: {}",
                f.rule.file_name(),
                f.rule_before,
                f.rule_after,
                f.describe()
            ));
        }
        last = Some(f.rule);
    }
    out
}
