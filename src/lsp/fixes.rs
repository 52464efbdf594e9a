//! Fixes that `check` describes in words but cannot give as a replacement
//! of its span, because they need the text around it: a `>=` (and `<=`,
//! `==`, `!=`) rewritten over its whole comparison, a missing CPU_MAX
//! inserted after CPU_MIN, a missing UPDATE at the top. Each is offered only when the file with it
//! loads with fewer errors, so a fix never makes things worse.

use crate::kernel::SystemFacts;
use crate::rules::Span;
use crate::rules::diagnostic::{DaemonEffect, Diagnostic, DiagnosticCode, Severity};

use super::diagnostics::analyse;

/// One edit: replace `span` (byte offsets) with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub span: Span,
    pub text: String,
}

/// The fix for finding `d` in `text`, checked to remove an error. Each
/// check loads the fixed file, which costs its length from `budget`; none
/// is offered once the budget is spent.
pub fn fix(text: &str, d: &Diagnostic, facts: &SystemFacts, budget: &mut usize) -> Option<Fix> {
    let fix = match d.code {
        DiagnosticCode::ForeignOperator => comparison(text, d.span)?,
        DiagnosticCode::CpuMaxBelowMin if d.message.contains("CPU_MAX is not") => {
            cpu_max(text, d.span)?
        }
        DiagnosticCode::NoUpdate => Fix {
            title: "Add `UPDATE=\"1\"` (a decision every second) as the first line".into(),
            span: Span::new(0, 0),
            text: "UPDATE=\"1\"\n".into(),
        },
        _ => return None,
    };
    *budget = budget.checked_sub(text.len().max(1))?;
    removes(text, d, &fix, facts).then_some(fix)
}

/// Whether `text` with `fix` no longer has finding `d` (nor one like it
/// in the new text) and has no more errors than before. "Like it" is the
/// same code, whatever the words: a CPU_MAX that leaves CPU_MAX below
/// CPU_MIN is the same refusal. Nor may the new text hold an error that
/// only shows when cpuplugd evaluates it: a file it refuses is not fixed
/// by one it loads and then exits on (`-x >= y` as `!(-x < y)`, whose `-`
/// takes the comparison).
fn removes(text: &str, d: &Diagnostic, fix: &Fix, facts: &SystemFacts) -> bool {
    let (s, e) = (fix.span.start as usize, fix.span.end as usize);
    let (Some(before), Some(after)) = (text.get(..s), text.get(e..)) else {
        return false;
    };
    let fixed = format!("{before}{}{after}", fix.text);
    let errors = |t: &str| {
        analyse(t, facts)
            .1
            .diagnostics
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect::<Vec<_>>()
    };
    let (was, now) = (errors(text), errors(&fixed));
    let new_end = s + fix.text.len();
    // Where a finding of the fixed text stood in the text before the fix
    // (`None` inside the new text).
    let back = |at: usize| match at {
        a if a < s => Some(a),
        a if a >= new_end => Some(a - new_end + e),
        _ => None,
    };
    now.len() <= was.len()
        && !now.iter().any(|n| {
            let at = back(n.span.start as usize);
            (n.code == d.code && at.is_none_or(|a| a == d.span.start as usize))
                || (n.daemon == DaemonEffect::StopsWhenEvaluated && at.is_none())
        })
}

/// Where the rule's or variable's value on the line of `at` lies: the
/// bytes between its first and last `"`.
fn value_bounds(text: &str, at: usize) -> Option<(usize, usize)> {
    let line_start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text.get(at..)?.find('\n').map_or(text.len(), |i| at + i);
    let line = &text[line_start..line_end];
    let eq = line.find('=')?;
    let open = line_start + eq + line[eq..].find('"')? + 1;
    let close = line_start + line.rfind('"')?;
    (open <= at && at < close).then_some((open, close))
}

/// `x >= y` and its kin over the whole comparison: its operands reach as
/// far as the comparison's own level (up to `&`, `|`, another comparison,
/// an unmatched parenthesis, or a prefix `!`, which takes everything to
/// its right). The rewrite is parenthesised unless it is the whole value,
/// so that a `!` in it stops where the comparison did.
fn comparison(text: &str, op: Span) -> Option<Fix> {
    let (s, e) = (op.start as usize, op.end as usize);
    let operator = text.get(s..e)?;
    let (open, close) = value_bounds(text, s)?;
    let bytes = text.as_bytes();
    let mut left = s;
    let mut depth = 0u32;
    while left > open {
        let c = bytes[left - 1];
        match c {
            b')' => depth += 1,
            b'(' if depth == 0 => break,
            b'(' => depth -= 1,
            b'&' | b'|' | b'<' | b'>' | b'!' if depth == 0 => break,
            _ => {}
        }
        left -= 1;
    }
    let mut right = e;
    depth = 0;
    while right < close {
        let c = bytes[right];
        match c {
            b'(' => depth += 1,
            b')' if depth == 0 => break,
            b')' => depth -= 1,
            b'&' | b'|' | b'<' | b'>' | b'=' if depth == 0 => break,
            _ => {}
        }
        right += 1;
    }
    let l = text[left..s].trim();
    let r = text[e..right].trim();
    if l.is_empty() || r.is_empty() {
        return None;
    }
    // A prefix `-` before a name or a parenthesis takes everything to its
    // right, so `-x` in front of the new `<` would negate the comparison:
    // it keeps to its operand in parentheses of its own. (Before a digit
    // it is part of the number.)
    let negated = l
        .strip_prefix('-')
        .is_some_and(|rest| !rest.trim_start().starts_with(|c: char| c.is_ascii_digit()));
    let l = if negated {
        format!("({l})")
    } else {
        l.to_string()
    };
    // Alone in the value, or alone between parentheses: nothing beside it
    // for a `!` to take.
    let alone = |before: &str, after: &str| {
        let (b, a) = (before.trim_end(), after.trim_start());
        (b.is_empty() && a.is_empty()) || (b.ends_with('(') && a.starts_with(')'))
    };
    let whole = alone(&text[open..left], &text[right..close]);
    let (new, title) = match operator {
        ">=" => (format!("!({l} < {r})"), "`x >= y` as `!(x < y)`"),
        "<=" => (format!("!({l} > {r})"), "`x <= y` as `!(x > y)`"),
        "==" => (
            format!("(!({l} < {r})) & (!({l} > {r}))"),
            "`x == y` as neither `x < y` nor `x > y`",
        ),
        "!=" => (
            format!("{l} < {r} | {l} > {r}"),
            "`x != y` as `x < y | x > y`",
        ),
        _ => return None,
    };
    let new = if whole { new } else { format!("({new})") };
    // The span starts and ends at the operands, not at the spaces around.
    let lead = text[left..s].len() - text[left..s].trim_start().len();
    let trail = text[e..right].len() - text[e..right].trim_end().len();
    Some(Fix {
        title: format!("Write {title}"),
        span: Span::new(left + lead, right - trail),
        text: new,
    })
}

/// `CPU_MAX="0"` (every present CPU) on a line of its own after CPU_MIN's.
fn cpu_max(text: &str, cpu_min: Span) -> Option<Fix> {
    let at = cpu_min.start as usize;
    let next = text.get(at..)?.find('\n').map(|i| at + i + 1);
    let (at, line) = match next {
        Some(n) => (n, "CPU_MAX=\"0\"\n".to_string()),
        None => (text.len(), "\nCPU_MAX=\"0\"\n".to_string()),
    };
    Some(Fix {
        title: "Add `CPU_MAX=\"0\"` (every present CPU) after CPU_MIN".into(),
        span: Span::new(at, at),
        text: line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(text: &str) -> Vec<String> {
        let facts = SystemFacts::any_machine(4, "test");
        let (_, outcome) = analyse(text, &facts);
        let mut budget = usize::MAX;
        outcome
            .diagnostics
            .iter()
            .filter_map(|d| fix(text, d, &facts, &mut budget))
            .map(|f| {
                let (s, e) = (f.span.start as usize, f.span.end as usize);
                format!("{}{}{}", &text[..s], f.text, &text[e..])
            })
            .collect()
    }

    const HEAD: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTUNPLUG=\"idle > 50\"\n";

    #[test]
    fn a_whole_comparison_is_rewritten_without_extra_parentheses() {
        let t = format!("{HEAD}HOTPLUG=\"idle >= 10\"\n");
        assert_eq!(fixed(&t), [format!("{HEAD}HOTPLUG=\"!(idle < 10)\"\n")]);
    }

    #[test]
    fn a_comparison_beside_others_keeps_its_negation_to_itself() {
        // `!(a < b) & c` would be `!((a < b) & c)` to cpuplugd.
        let t = format!("{HEAD}HOTPLUG=\"loadavg > 1 & (idle + 5) * 2 <= onumcpus & 1\"\n");
        assert_eq!(
            fixed(&t),
            [format!(
                "{HEAD}HOTPLUG=\"loadavg > 1 & (!((idle + 5) * 2 > onumcpus)) & 1\"\n"
            )]
        );
        let t = format!("{HEAD}HOTPLUG=\"(idle == 3) | loadavg != 2\"\n");
        let once = fixed(&t);
        assert_eq!(
            once[0],
            format!("{HEAD}HOTPLUG=\"((!(idle < 3)) & (!(idle > 3))) | loadavg != 2\"\n")
        );
        // The second fix applies to the text the first one left.
        assert_eq!(
            fixed(&once[0]),
            [format!(
                "{HEAD}HOTPLUG=\"((!(idle < 3)) & (!(idle > 3))) | (loadavg < 2 | loadavg > 2)\"\n"
            )]
        );
    }

    #[test]
    fn a_missing_cpu_max_is_added_after_cpu_min() {
        let t = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\n";
        assert_eq!(
            fixed(t),
            [
                "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\n"
            ]
        );
        // At the end of the file, and with UPDATE missing too.
        let t = "CPU_MIN=\"1\"\n";
        assert_eq!(
            fixed(t),
            [
                "CPU_MIN=\"1\"\nCPU_MAX=\"0\"\n",
                "UPDATE=\"1\"\nCPU_MIN=\"1\"\n"
            ]
        );
    }

    #[test]
    fn a_negated_left_operand_keeps_its_minus_to_itself() {
        // `!(-idle < -10)` would be `!(-(idle < -10))`: loaded, then fatal
        // the first time cpuplugd evaluates it.
        let t = format!("{HEAD}HOTPLUG=\"loadavg > 1 & -idle >= -10\"\n");
        assert_eq!(
            fixed(&t),
            [format!(
                "{HEAD}HOTPLUG=\"loadavg > 1 & (!((-idle) < -10))\"\n"
            )]
        );
        // A negative number is a number.
        let t = format!("{HEAD}HOTPLUG=\"-10 >= idle\"\n");
        assert_eq!(fixed(&t), [format!("{HEAD}HOTPLUG=\"!(-10 < idle)\"\n")]);
    }

    #[test]
    fn a_fix_that_leaves_the_file_refused_or_fatal_is_not_offered() {
        // CPU_MAX="0" is 4 CPUs here, below CPU_MIN: the same refusal.
        let t = "UPDATE=\"1\"\nCPU_MIN=\"5\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\n";
        assert!(fixed(t).is_empty(), "{:?}", fixed(t));
        // `(idle < 5) >= 1` compares a truth value: no rewrite loads well.
        let t = format!("{HEAD}HOTPLUG=\"idle < 5 >= 1\"\n");
        assert!(fixed(&t).is_empty(), "{:?}", fixed(&t));
    }

    #[test]
    fn fixes_stop_when_their_budget_is_spent() {
        let t = format!("{HEAD}HOTPLUG=\"idle >= 10\"\n");
        let facts = SystemFacts::any_machine(4, "test");
        let (_, outcome) = analyse(&t, &facts);
        let d = &outcome.diagnostics[0];
        let mut budget = t.len();
        assert!(fix(&t, d, &facts, &mut budget).is_some());
        assert_eq!(budget, 0);
        assert!(fix(&t, d, &facts, &mut budget).is_none());
    }

    #[test]
    fn no_fix_is_offered_where_it_would_not_load_better() {
        // No left operand: nothing to rewrite.
        let t = format!("{HEAD}HOTPLUG=\">= 10\"\n");
        assert!(fixed(&t).is_empty());
        // Hostile lines: quotes missing, operators at the ends.
        for t in [
            "HOTPLUG=idle >= 1\n",
            "HOTPLUG=\"idle >=\"\n",
            "x=\">=\"\n",
            "\">=\n",
        ] {
            let _ = fixed(t);
        }
    }
}
