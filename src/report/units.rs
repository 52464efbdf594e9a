//! What a rule's value is measured in, read from the expression itself:
//! `/proc/meminfo` counts kB, tick counters count ticks, `onumcpus` counts
//! CPUs, and sums, differences and scalings keep their unit. So a trace
//! says `(meminfo.MemFree + avail_cache) = 1771301 kB` and
//! `(CP_idleAVG * onumcpus) = 0.0582 CPUs` rather than bare numbers.

use std::collections::HashMap;

use crate::rules::RuleSet;
use crate::rules::expr::{BinOp, CpuStat, Keyword, NodeId, NodeKind, Reading};

/// A unit a reading comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Base {
    Kb,
    Mb,
    Pages,
    Ticks,
    Cpus,
    Percent,
    Seconds,
}

impl Base {
    /// The unit after a number: singular for exactly 1.
    fn word(self, one: bool) -> &'static str {
        match (self, one) {
            (Base::Kb, _) => "kB",
            (Base::Mb, _) => "MB",
            (Base::Pages, true) => "page",
            (Base::Pages, false) => "pages",
            (Base::Ticks, true) => "tick",
            (Base::Ticks, false) => "ticks",
            (Base::Cpus, true) => "CPU",
            (Base::Cpus, false) => "CPUs",
            (Base::Percent, _) => "%",
            (Base::Seconds, _) => "s",
        }
    }

    /// The unit under a `/` ("pages/tick", "kB/s").
    fn per(self) -> &'static str {
        match self {
            Base::Ticks => "tick",
            Base::Cpus => "CPU",
            Base::Seconds => "s",
            other => other.word(true),
        }
    }
}

/// What a value is measured in, as far as its expression tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueUnit {
    /// A bare number: a constant, a ratio of like quantities, a load.
    Plain,
    Of(Base),
    /// One unit per another, as a page-scan rate per tick.
    Per(Base, Base),
    /// True or false.
    Truth,
    /// The expression does not tell (mixed units, an unknown counter).
    Unknown,
}

impl ValueUnit {
    /// `value` (already formatted) with its unit: "1771301 kB", "12.5%",
    /// "1 CPU"; a plain or unknown unit adds nothing.
    pub fn after(self, value: f64, text: &str) -> String {
        let one = value == 1.0;
        // The text and its unit's words, put together without the formatter.
        let words: &[&str] = match self {
            ValueUnit::Of(Base::Percent) => &["%"],
            ValueUnit::Of(b) => &[" ", b.word(one)],
            ValueUnit::Per(a, b) => &[" ", a.word(false), "/", b.per()],
            ValueUnit::Plain | ValueUnit::Truth | ValueUnit::Unknown => &[],
        };
        let mut out =
            String::with_capacity(text.len() + words.iter().map(|w| w.len()).sum::<usize>());
        out.push_str(text);
        words.iter().for_each(|w| out.push_str(w));
        out
    }
}

/// Most nodes one question looks at: a machine-made rule nested thousands
/// deep gets "unknown" rather than costing a frame.
const LOOK_MAX: usize = 4096;

/// Units of the nodes of one rule set, each worked out once.
pub struct Units<'a> {
    rules: &'a RuleSet,
    known: HashMap<NodeId, ValueUnit>,
    looked: usize,
}

impl<'a> Units<'a> {
    /// Units for `rules`, none worked out yet.
    pub fn new(rules: &'a RuleSet) -> Self {
        Units {
            rules,
            known: HashMap::new(),
            looked: 0,
        }
    }

    /// The unit of the value at `node`.
    pub fn of(&mut self, node: NodeId) -> ValueUnit {
        self.at(node, 0)
    }

    fn at(&mut self, node: NodeId, depth: usize) -> ValueUnit {
        if let Some(u) = self.known.get(&node) {
            return *u;
        }
        self.looked += 1;
        if self.looked > LOOK_MAX || depth > 200 {
            return ValueUnit::Unknown;
        }
        let unit = match self.rules.node(node).kind {
            NodeKind::Const(_) => ValueUnit::Plain,
            NodeKind::Keyword(k) => keyword(k),
            NodeKind::Reading { reading, .. } => self.reading(reading),
            NodeKind::Neg(c) => self.at(c, depth + 1),
            NodeKind::Var { body, .. } => self.at(body, depth + 1),
            NodeKind::Not(_) => ValueUnit::Truth,
            NodeKind::Binary(op, l, r) if op.yields_truth() => {
                let _ = (l, r);
                ValueUnit::Truth
            }
            NodeKind::Binary(op, l, r) => {
                let (a, b) = (self.at(l, depth + 1), self.at(r, depth + 1));
                let value = |n: NodeId| match self.rules.node(n).kind {
                    NodeKind::Const(c) => Some(c),
                    _ => None,
                };
                let (ca, cb) = (value(l), value(r));
                // A scaling by the constant that converts one unit into
                // another (`meminfo.MemFree / 1024` is MB, not kB).
                let converted = match (op, a, b, ca, cb) {
                    (BinOp::Mul, ValueUnit::Of(x), _, _, Some(c))
                    | (BinOp::Mul, _, ValueUnit::Of(x), Some(c), _) => converted(x, c),
                    (BinOp::Div, ValueUnit::Of(x), _, _, Some(c)) => converted(x, 1.0 / c),
                    _ => None,
                };
                converted.unwrap_or_else(|| combine(op, a, b, ca.is_some(), cb.is_some()))
            }
        };
        self.known.insert(node, unit);
        unit
    }

    fn reading(&self, reading: Reading) -> ValueUnit {
        let fields = &self.rules.fields;
        match reading {
            Reading::Meminfo(slot) => match fields.meminfo.get(slot as usize) {
                // The huge page counts are counts; every other line is kB.
                Some(name) if name.starts_with("HugePages_") => ValueUnit::Plain,
                Some(_) => ValueUnit::Of(Base::Kb),
                None => ValueUnit::Unknown,
            },
            Reading::Vmstat(slot) => match fields.vmstat.get(slot as usize) {
                Some(name)
                    if ["pgscan", "pgsteal", "pswpin", "pswpout", "nr_"]
                        .iter()
                        .any(|p| name.starts_with(p)) =>
                {
                    ValueUnit::Of(Base::Pages)
                }
                _ => ValueUnit::Unknown,
            },
            Reading::Cpustat(CpuStat::Onumcpus) => ValueUnit::Of(Base::Cpus),
            Reading::Cpustat(CpuStat::Loadavg | CpuStat::RunnableProc) => ValueUnit::Plain,
            Reading::Cpustat(_) => ValueUnit::Of(Base::Ticks),
            Reading::CpustatUnknown(_) => ValueUnit::Unknown,
            Reading::Time => ValueUnit::Of(Base::Seconds),
        }
    }
}

/// The derived keywords' units (cpuplugd's manual: shares in percent of
/// one CPU, freemem in MB, swaprate in pages a second).
fn keyword(k: Keyword) -> ValueUnit {
    match k {
        Keyword::Loadavg | Keyword::RunnableProc => ValueUnit::Plain,
        Keyword::Onumcpus => ValueUnit::Of(Base::Cpus),
        Keyword::Freemem => ValueUnit::Of(Base::Mb),
        Keyword::Swaprate => ValueUnit::Per(Base::Pages, Base::Seconds),
        Keyword::Apcr => ValueUnit::Unknown,
        _ => ValueUnit::Of(Base::Percent),
    }
}

/// The unit of `a op b`; `ca`, `cb` say an operand is a written constant
/// (which takes the other side's unit in a sum: `MemFree - 1000`).
fn combine(op: BinOp, a: ValueUnit, b: ValueUnit, ca: bool, cb: bool) -> ValueUnit {
    use ValueUnit::{Of, Per, Plain, Unknown};
    match op {
        BinOp::Add | BinOp::Sub => match (a, b) {
            _ if a == b => a,
            (x, _) if cb => x,
            (_, y) if ca => y,
            _ => Unknown,
        },
        BinOp::Mul => match (a, b) {
            (Plain, y) => y,
            (x, Plain) => x,
            _ => Unknown,
        },
        BinOp::Div => match (a, b) {
            (x, Plain) => x,
            _ if a == b && a != Unknown => Plain,
            (Of(x), Of(y)) if rate(x, y) => Per(x, y),
            _ => Unknown,
        },
        _ => ValueUnit::Truth,
    }
}

/// The unit of an amount in `unit` multiplied by `factor`, when the
/// factor converts it (kB and MB by 1024, pages of 4 kB, percent of a CPU
/// by 100); `Unknown` for a conversion into a unit without a name here
/// (bytes, GB); `None` for a factor that only scales (`2 * pgscan` is
/// pages still).
fn converted(unit: Base, factor: f64) -> Option<ValueUnit> {
    let is = |f: f64| (factor - f).abs() <= f * 1e-9;
    let to = |b: Base| Some(ValueUnit::Of(b));
    match unit {
        Base::Kb if is(1.0 / 1024.0) => to(Base::Mb),
        Base::Kb if is(0.25) => to(Base::Pages),
        Base::Kb if is(1024.0) || is(1.0 / 1_048_576.0) => Some(ValueUnit::Unknown),
        Base::Mb if is(1024.0) => to(Base::Kb),
        Base::Mb if is(256.0) => to(Base::Pages),
        Base::Mb if is(1.0 / 1024.0) || is(1_048_576.0) => Some(ValueUnit::Unknown),
        Base::Pages if is(4.0) => to(Base::Kb),
        Base::Pages if is(1.0 / 256.0) => to(Base::Mb),
        Base::Pages if is(4096.0) => Some(ValueUnit::Unknown),
        Base::Percent if is(0.01) => to(Base::Cpus),
        Base::Cpus if is(100.0) => to(Base::Percent),
        _ => None,
    }
}

/// The quotients that read as a rate: an amount per tick, second or CPU.
fn rate(amount: Base, per: Base) -> bool {
    matches!(amount, Base::Kb | Base::Mb | Base::Pages | Base::Ticks)
        && matches!(per, Base::Ticks | Base::Seconds | Base::Cpus)
        && amount != per
}

/// Every user variable's unit, by its index in the rule set (from the
/// first place a rule inlined it; `Unknown` for one no rule uses).
pub fn variable_units(rules: &RuleSet) -> Vec<ValueUnit> {
    let mut bodies: Vec<Option<NodeId>> = vec![None; rules.variables.len()];
    for node in &rules.nodes {
        if let NodeKind::Var { var, body } = node.kind
            && let Some(slot @ None) = bodies.get_mut(var as usize)
        {
            *slot = Some(body);
        }
    }
    let mut units = Units::new(rules);
    bodies
        .into_iter()
        .map(|b| b.map_or(ValueUnit::Unknown, |b| units.of(b)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{RuleKind, SourceFile, SystemFacts, load};

    fn rules(text: &str) -> RuleSet {
        let file = SourceFile::new("t.conf", text.as_bytes().to_vec());
        let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
        assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
        outcome.rules
    }

    /// The units of the two sides of `kind`'s comparison.
    fn sides(r: &RuleSet, kind: RuleKind) -> (ValueUnit, ValueUnit) {
        let root = r.rule(kind).map(|x| x.root).unwrap_or_default();
        match r.node(root).kind {
            NodeKind::Binary(_, a, b) => {
                let mut u = Units::new(r);
                (u.of(a), u.of(b))
            }
            _ => panic!("not a comparison"),
        }
    }

    #[test]
    fn the_example_rules_get_their_units() {
        let text = std::fs::read_to_string("examples/rules/recommended-modern.conf")
            .unwrap_or_else(|e| panic!("{e}"));
        let r = rules(&text);
        assert_eq!(
            sides(&r, RuleKind::Hotplug),
            (ValueUnit::Of(Base::Cpus), ValueUnit::Plain)
        );
        assert_eq!(
            sides(&r, RuleKind::Hotunplug),
            (ValueUnit::Of(Base::Cpus), ValueUnit::Plain)
        );
        assert_eq!(
            sides(&r, RuleKind::Memplug).0,
            ValueUnit::Per(Base::Pages, Base::Ticks),
            "pgscanrate"
        );
        assert_eq!(
            sides(&r, RuleKind::Memunplug),
            (ValueUnit::Of(Base::Kb), ValueUnit::Of(Base::Kb)),
            "free memory and the cache against a tenth of the total"
        );
        let by_name = |name: &str| {
            let i = r
                .variables
                .iter()
                .position(|v| v.name == name)
                .unwrap_or_else(|| panic!("no {name}"));
            variable_units(&r)[i]
        };
        assert_eq!(by_name("avail_cache"), ValueUnit::Of(Base::Kb));
        assert_eq!(
            by_name("CP_ActiveAVG"),
            ValueUnit::Plain,
            "a share of ticks"
        );
        assert_eq!(by_name("user_0"), ValueUnit::Of(Base::Ticks));
    }

    #[test]
    fn a_conversion_by_a_constant_changes_the_unit() {
        let r = rules(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"meminfo.MemFree / 1024 > idle / 100\"\nHOTUNPLUG=\"4 * vmstat.nr_free_pages > meminfo.MemFree * 1024\"\nMEMPLUG=\"vmstat.pgscan_direct * 2 > freemem * 1024\"\nMEMUNPLUG=\"0\"\n",
        );
        assert_eq!(
            sides(&r, RuleKind::Hotplug),
            (ValueUnit::Of(Base::Mb), ValueUnit::Of(Base::Cpus))
        );
        assert_eq!(
            sides(&r, RuleKind::Hotunplug),
            (ValueUnit::Of(Base::Kb), ValueUnit::Unknown)
        );
        // A factor that only scales keeps the unit.
        assert_eq!(
            sides(&r, RuleKind::Memplug),
            (ValueUnit::Of(Base::Pages), ValueUnit::Of(Base::Kb))
        );
    }

    #[test]
    fn mixed_or_unknown_units_say_nothing_rather_than_something_wrong() {
        let r = rules(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"meminfo.MemFree + onumcpus > vmstat.pgfault\"\nHOTUNPLUG=\"meminfo.MemFree * meminfo.MemTotal > 1 / onumcpus\"\n",
        );
        assert_eq!(
            sides(&r, RuleKind::Hotplug),
            (ValueUnit::Unknown, ValueUnit::Unknown)
        );
        assert_eq!(
            sides(&r, RuleKind::Hotunplug),
            (ValueUnit::Unknown, ValueUnit::Unknown)
        );
        assert_eq!(ValueUnit::Unknown.after(5.0, "5"), "5");
        assert_eq!(ValueUnit::Of(Base::Cpus).after(1.0, "1"), "1 CPU");
        assert_eq!(ValueUnit::Of(Base::Cpus).after(0.25, "0.25"), "0.25 CPUs");
        assert_eq!(ValueUnit::Of(Base::Percent).after(12.5, "12.5"), "12.5%");
        assert_eq!(
            ValueUnit::Per(Base::Pages, Base::Ticks).after(2.0, "2"),
            "2 pages/tick"
        );
    }

    #[test]
    fn a_huge_inlined_rule_costs_a_bounded_look() {
        // Each variable doubles the one before: v13 inlines 8192 readings.
        let mut text =
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nv0=\"meminfo.MemFree\"\n".to_string();
        for i in 1..14 {
            text.push_str(&format!("v{i}=\"v{j} + v{j}\"\n", j = i - 1));
        }
        text.push_str("HOTPLUG=\"v13 > 1\"\nHOTUNPLUG=\"v2 > 1\"\n");
        let r = rules(&text);
        assert_eq!(
            sides(&r, RuleKind::Hotplug).0,
            ValueUnit::Unknown,
            "too big to tell"
        );
        assert_eq!(sides(&r, RuleKind::Hotunplug).0, ValueUnit::Of(Base::Kb));
    }
}
