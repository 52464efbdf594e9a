//! A floating-point fault in plain terms: what was divided by what, and why
//! it was zero ("division by zero: no ticks elapsed"), instead of the FPU's
//! name for it ("invalid operation" is what 0 / 0 raises). The log, the
//! header's badge, the truth trace and line mode all say it so.

use crate::rules::eval::{Outcome, Trace};
use crate::rules::expr::{BinOp, CpuStat, NodeId, NodeKind, Reading};
use crate::rules::fpu::Fault;
use crate::rules::{RuleKind, RuleSet, SourceFile};

/// The rules of the CPU group, in the order cpuplugd evaluates them.
pub const CPU_RULES: [RuleKind; 2] = [RuleKind::Hotplug, RuleKind::Hotunplug];

/// The rules of the memory group, in the order cpuplugd evaluates them.
pub const MEMORY_RULES: [RuleKind; 4] = [
    RuleKind::CmmInc,
    RuleKind::CmmDec,
    RuleKind::Memplug,
    RuleKind::Memunplug,
];

/// Most nodes looked at to find what a divisor reads: a rule nested
/// thousands deep must not cost a frame.
const LOOK_MAX: usize = 4096;

/// What stopped a group (`rules` of [`CPU_RULES`] or [`MEMORY_RULES`]) in
/// the interval of `trace`, in plain words. `fault` is what the engine
/// reported; the trace says where it arose.
pub fn group_fault(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    group: &[RuleKind],
    fault: Fault,
) -> String {
    for kind in group {
        let Some(rule) = rules.rule(*kind) else {
            continue;
        };
        if let Some(node) = (rule.nodes.start..rule.nodes.end)
            .find(|n| matches!(trace.outcome(*n), Outcome::Fault(_)))
        {
            let at = match trace.outcome(node) {
                Outcome::Fault(f) => f,
                _ => fault,
            };
            return at_node(rules, source, trace, node, at);
        }
        // CMM_INC and CMM_DEC are made whole numbers after they are
        // computed: a value beyond a C long faults there.
        if let (true, Outcome::Number(v)) = (kind.is_amount(), trace.outcome(rule.root))
            && fault == Fault::Invalid
            && crate::rules::fpu::to_long(v).is_err()
        {
            return format!(
                "{} = {} does not fit a whole number (a C long)",
                kind.file_name(),
                crate::report::node_text::number(v)
            );
        }
    }
    // No rule faulted: cpuplugd's own values for the interval did. The
    // memory group divides the page rates by the time step first.
    if group.contains(&RuleKind::Memplug) && matches!(fault, Fault::DivisionByZero | Fault::Invalid)
    {
        return "division by zero: no time elapsed between two readings (swaprate and apcr divide by it)"
            .to_string();
    }
    fault.to_string()
}

/// A fault in a few plain words, for a table's cell (the log line after
/// it says where it arose): "invalid operation" is the FPU's name for what
/// a sysadmin knows as 0 / 0 (no ticks elapsed) or a NaN.
pub fn short(fault: Fault) -> &'static str {
    match fault {
        Fault::DivisionByZero => "division by zero",
        Fault::Invalid => "0/0 or NaN",
        Fault::Overflow => "overflow",
        Fault::Underflow => "underflow",
    }
}

/// What faulted at `node`, in plain words.
pub fn at_node(
    rules: &RuleSet,
    source: &SourceFile,
    trace: &Trace,
    node: NodeId,
    fault: Fault,
) -> String {
    let value = |n: NodeId| match trace.outcome(n) {
        Outcome::Number(v) => Some(v),
        _ => None,
    };
    let label = |n: NodeId| crate::report::node_text::label(rules, source, n);
    match (rules.node(node).kind.clone(), fault) {
        (NodeKind::Binary(BinOp::Div, _, r), Fault::DivisionByZero | Fault::Invalid)
            if value(r) == Some(0.0) =>
        {
            format!("division by zero: {}", why_zero(rules, r, &label(r)))
        }
        (NodeKind::Binary(BinOp::Div, ..), Fault::Invalid) => {
            format!("infinity divided by infinity in {}", label(node))
        }
        (NodeKind::Binary(BinOp::Mul, ..), Fault::Invalid) => {
            format!("zero times infinity in {}", label(node))
        }
        (NodeKind::Binary(BinOp::Add | BinOp::Sub, ..), Fault::Invalid) => {
            format!("infinity minus infinity in {}", label(node))
        }
        (NodeKind::Binary(BinOp::Greater | BinOp::Less, ..), Fault::Invalid) => {
            format!(
                "a comparison with a value that is not a number (NaN) in {}",
                label(node)
            )
        }
        (_, Fault::Overflow) => format!("overflow: {} exceeds the largest double", label(node)),
        (_, Fault::Underflow) => {
            format!("underflow: {} is too close to 0 for a double", label(node))
        }
        (_, f) => format!("{f} in {}", label(node)),
    }
}

/// Why a divisor came out 0: tick counts that did not move, a time that
/// did not, or else the divisor itself.
fn why_zero(rules: &RuleSet, divisor: NodeId, text: &str) -> String {
    if reads(
        rules,
        divisor,
        |r| matches!(r, Reading::Cpustat(f) if is_tick_count(f)),
    ) {
        "no ticks elapsed".to_string()
    } else if reads(rules, divisor, |r| matches!(r, Reading::Time)) {
        "no time elapsed".to_string()
    } else {
        format!("{text} is 0")
    }
}

/// The cpustat fields that count ticks (the others are loadavg, the run
/// queue and the CPU count).
fn is_tick_count(field: CpuStat) -> bool {
    !matches!(
        field,
        CpuStat::Onumcpus | CpuStat::Loadavg | CpuStat::RunnableProc
    )
}

/// Whether the expression at `node` reads a value `wanted` accepts
/// (through variables), looking at no more than [`LOOK_MAX`] nodes.
fn reads(rules: &RuleSet, node: NodeId, wanted: impl Fn(Reading) -> bool) -> bool {
    let mut stack = vec![node];
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > LOOK_MAX {
            return false;
        }
        match rules.node(n).kind {
            NodeKind::Reading { reading, .. } if wanted(reading) => return true,
            NodeKind::Neg(c) | NodeKind::Not(c) => stack.push(c),
            NodeKind::Var { body, .. } => stack.push(body),
            NodeKind::Binary(_, l, r) => stack.extend([l, r]),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::{Engine, GroupStatus};
    use crate::kernel::{CpuTicks, Sample, Stamp};
    use crate::rules::{SystemFacts, load};

    /// The fault words of both groups at the last of `readings`, or `None`
    /// for a group that did not fault.
    fn words_for(text: &str, readings: &[Sample]) -> (Option<String>, Option<String>) {
        let file = SourceFile::new("t.conf", text.as_bytes().to_vec());
        let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
        assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
        let rules = Arc::new(outcome.rules);
        let mut engine = Engine::new(Arc::clone(&rules));
        let mut trace = Trace::new();
        let mut last = None;
        for s in readings {
            last = engine.push(s, &mut trace);
        }
        let d = last.unwrap_or_else(|| panic!("nothing decided"));
        let words = |status: Option<GroupStatus>, group: &[RuleKind]| match status {
            Some(GroupStatus::Fault(f)) => Some(group_fault(&rules, &file, &trace, group, f)),
            _ => None,
        };
        (
            words(d.cpu.map(|c| c.status), &CPU_RULES),
            words(d.mem.map(|m| m.status), &MEMORY_RULES),
        )
    }

    const LIMITS: &str =
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\n";

    /// A reading at `time` seconds whose ticks never move.
    fn reading(time: i64) -> Sample {
        let ticks = CpuTicks {
            user: 10,
            idle: 1000,
            ..CpuTicks::default()
        };
        Sample::with_memory(Stamp::new(time, 0), ticks, (2, 4), (10.0, 5.0), 10)
    }

    fn still(n: i64) -> Vec<Sample> {
        (0..n).map(reading).collect()
    }

    #[test]
    fn zero_by_zero_ticks_is_said_as_no_ticks_elapsed() {
        let rules = format!(
            "{LIMITS}busy=\"(cpustat.user[0] - cpustat.user[1]) / (cpustat.total_ticks[0] - cpustat.total_ticks[1])\"\nHOTPLUG=\"busy > 0.5\"\nHOTUNPLUG=\"busy < 0.1\"\nCMM_INC=\"1\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1 / (onumcpus - onumcpus) > 0\"\n"
        );
        let (cpu, mem) = words_for(&rules, &still(3));
        assert_eq!(cpu.as_deref(), Some("division by zero: no ticks elapsed"));
        assert_eq!(
            mem.as_deref(),
            Some("division by zero: (onumcpus - onumcpus) is 0"),
            "a divisor that reads no ticks is named"
        );
    }

    #[test]
    fn other_faults_name_the_expression_and_what_went_wrong() {
        let rules = format!(
            "{LIMITS}HOTPLUG=\"1e300 * 1e300 > 0\"\nHOTUNPLUG=\"0\"\nCMM_INC=\"1e300 * 1e300 - 1e300 * 1e300\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n"
        );
        let (cpu, mem) = words_for(&rules, &still(3));
        assert_eq!(
            cpu.as_deref(),
            Some("overflow: 1e300 * 1e300 exceeds the largest double")
        );
        assert!(mem.is_some_and(|m| m.starts_with("overflow: ")));
        let huge = format!(
            "{LIMITS}HOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\nCMM_INC=\"1e30\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n"
        );
        let (cpu, mem) = words_for(&huge, &still(3));
        assert_eq!(cpu, None);
        assert_eq!(
            mem.as_deref(),
            Some("CMM_INC = 1.0000e30 does not fit a whole number (a C long)")
        );
    }

    #[test]
    fn a_zero_time_step_is_said_so_and_not_an_earlier_intervals_fault() {
        // The memory rule faults in the second interval; the third has the
        // same time as the second, which stops the group before its rules.
        let rules = format!(
            "{LIMITS}HOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\nCMM_INC=\"1\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1 / (onumcpus - 2) > 0\"\n"
        );
        let (_, mem) = words_for(&rules, &[reading(1), reading(2)]);
        assert_eq!(
            mem.as_deref(),
            Some("division by zero: (onumcpus - 2) is 0")
        );
        let (_, mem) = words_for(&rules, &[reading(1), reading(2), reading(2)]);
        assert_eq!(
            mem.as_deref(),
            Some(
                "division by zero: no time elapsed between two readings (swaprate and apcr divide by it)"
            )
        );
    }
}
