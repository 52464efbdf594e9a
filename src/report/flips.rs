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

/// One comparison that changed its mind, or (when its rule was not
/// evaluated before) one that holds the rule's new result.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    pub rule: RuleKind,
    /// The rule's result before (`None`: not evaluated, as HOTUNPLUG is
    /// while HOTPLUG has priority) and after.
    pub rule_before: Option<bool>,
    pub rule_after: bool,
    /// The comparison's left side as written, and its values (before
    /// `None` when the rule was not evaluated).
    pub left: String,
    pub left_values: (Option<f64>, f64),
    /// The right side as written, and its values.
    pub right: String,
    pub right_values: (Option<f64>, f64),
    /// What each side is measured in.
    pub units: (ValueUnit, ValueUnit),
}

impl Flip {
    /// Whether the comparison changed its mind (rather than holding the
    /// result of a rule not evaluated before).
    pub fn flipped(&self) -> bool {
        self.rule_before.is_some()
    }

    /// "CP_idleAVG * onumcpus went 1.09 → 1.17 across 1.15", or for a rule
    /// not evaluated before, "CP_idleAVG * onumcpus is 1.17 against 1.15".
    pub fn describe(&self) -> String {
        let (lu, ru) = self.units;
        let with = |u: ValueUnit, v: f64| u.after(v, &number(v));
        let (b, d) = (self.left_values.1, self.right_values.1);
        let (Some(a), Some(c)) = (self.left_values.0, self.right_values.0) else {
            let right = if self.right == number(d) {
                with(ru, d)
            } else {
                format!("{} {}", self.right, with(ru, d))
            };
            return format!("{} is {} against {right}", self.left, with(lu, b));
        };
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
/// whose result flipped, in rule order. A rule not evaluated before that
/// is true now (HOTUNPLUG once HOTPLUG lets go: it did the unplug) gets
/// its comparisons as they stand now. Both traces are of `rules`.
pub fn flips(rules: &RuleSet, source: &SourceFile, before: &Trace, after: &Trace) -> Vec<Flip> {
    let mut out = Vec::new();
    let mut units = Units::new(rules);
    for kind in CONDITIONS {
        let Some(rule) = rules.rule(kind) else {
            continue;
        };
        let Some(ra) = truth(after.outcome(rule.root)) else {
            continue;
        };
        let rb = truth(before.outcome(rule.root));
        if rb == Some(ra) || (rb.is_none() && !ra) {
            continue;
        }
        for node in rule.nodes.clone() {
            let NodeKind::Binary(BinOp::Greater | BinOp::Less, l, r) = rules.node(node).kind else {
                continue;
            };
            let Some(ta) = truth(after.outcome(node)) else {
                continue;
            };
            let tb = truth(before.outcome(node));
            if rb.is_some() && tb.is_none_or(|tb| tb == ta) {
                continue;
            }
            let (Some(la), Some(ra_)) = (value(after.outcome(l)), value(after.outcome(r))) else {
                continue;
            };
            let (lb, rb_) = match rb {
                Some(_) => match (value(before.outcome(l)), value(before.outcome(r))) {
                    (Some(lb), Some(rb_)) => (Some(lb), Some(rb_)),
                    _ => continue,
                },
                None => (None, None),
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
            let before = f
                .rule_before
                .map_or("not evaluated".to_string(), |b| b.to_string());
            out.push(format!(
                "{} {before} → {}: {}",
                f.rule.file_name(),
                f.rule_after,
                f.describe()
            ));
        }
        last = Some(f.rule);
    }
    out
}
