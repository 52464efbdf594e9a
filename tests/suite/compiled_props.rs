//! The headless path runs rules as flat programs; the traced path walks the
//! tree. Whatever the rule file and the readings, both decide the same:
//! the same truths and amounts, the same faults, the same fatal stops with
//! the same messages, interval after interval.

use std::sync::Arc;

use plugtop::engine::Engine;
use plugtop::kernel::fields::FieldTable;
use plugtop::kernel::{CpuTicks, Sample, Stamp};
use plugtop::rules::eval::{NoTrace, Trace};
use plugtop::rules::{SourceFile, SystemFacts, load};
use proptest::prelude::*;

/// Operands: every kind of name, history indices, constants that fault.
fn term() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("onumcpus".to_string()),
        Just("loadavg".to_string()),
        Just("idle".to_string()),
        Just("freemem".to_string()),
        Just("swaprate".to_string()),
        Just("cpustat.user[0]".to_string()),
        Just("cpustat.user[2]".to_string()),
        Just("cpustat.idle[1]".to_string()),
        Just("cpustat.total_ticks[1]".to_string()),
        Just("cpustat.bogus".to_string()),
        Just("meminfo.MemFree".to_string()),
        Just("meminfo.Missing".to_string()),
        Just("vmstat.pgpgin[1]".to_string()),
        Just("time[1]".to_string()),
        Just("v".to_string()),
        Just("w".to_string()),
        Just("0".to_string()),
        Just("1e308".to_string()),
        Just("1e-308".to_string()),
        (0u32..2000).prop_map(|v| format!("{}", f64::from(v) / 8.0)),
    ]
}

/// Expressions of any shape: arithmetic, comparisons, `&`, `|`, `!`,
/// parentheses and unary minus, nested.
fn expression() -> impl Strategy<Value = String> {
    term().prop_recursive(4, 24, 2, |inner| {
        let op = proptest::sample::select(vec!["+", "-", "*", "/", "<", ">", "&", "|"]);
        prop_oneof![
            (inner.clone(), op, inner.clone()).prop_map(|(a, o, b)| format!("{a}{o}{b}")),
            inner.clone().prop_map(|a| format!("({a})")),
            inner.clone().prop_map(|a| format!("!({a})")),
            inner.prop_map(|a| format!("-({a})")),
        ]
    })
}

fn sample(step: u64, seed: u64) -> Sample {
    let wobble = |k: u64| {
        (seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(step * k))
            % 97
    };
    let ticks = CpuTicks {
        user: 1000 + step * 50 + wobble(3),
        system: 500 + step * 10 + wobble(5),
        idle: 9000 + step * (wobble(7) % 3) * 40,
        iowait: 20 + wobble(11) % 2,
        ..CpuTicks::default()
    };
    let online = 1 + (wobble(13) % 4) as u32;
    let stamp = Stamp::new(1_700_000_000 + (step * (wobble(17) % 3)) as i64, 0);
    Sample {
        loadavg: wobble(19) as f64 / 10.0,
        runnable: (wobble(23) % 5) as f64,
        meminfo: FieldTable::from_pairs([
            ("MemFree", (wobble(29) * 1000) as f64),
            ("MemTotal", 4_000_000.0),
        ]),
        vmstat: FieldTable::from_pairs([
            ("pswpin", 0.0),
            ("pswpout", (step * wobble(31)) as f64),
            ("pgpgin", (step * 100) as f64),
            ("pgpgout", 0.0),
        ]),
        cmm_pages: Some((wobble(37) * 100) as i64),
        ..Sample::bare(stamp, ticks, online, 8)
    }
}

/// Runs the six rules (and the variables `v`, `w`) through the program
/// engine and the traced one over the same readings: every decision the
/// same.
fn decide_alike(v: &str, w: &str, rules: &[String], seed: u64) -> Result<(), TestCaseError> {
    let text = format!(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100000\"\n\
         v=\"{v}\"\nw=\"{w}\"\n\
         HOTPLUG=\"{}\"\nHOTUNPLUG=\"{}\"\nMEMPLUG=\"{}\"\nMEMUNPLUG=\"{}\"\n\
         CMM_INC=\"{}\"\nCMM_DEC=\"{}\"\n",
        rules[0], rules[1], rules[2], rules[3], rules[4], rules[5]
    );
    let outcome = load(
        &SourceFile::new("p.conf", text.clone().into_bytes()),
        &SystemFacts::any_machine(8, "a test"),
    );
    prop_assume!(outcome.refusal.is_none());
    let rules = Arc::new(outcome.rules);
    let mut fast = Engine::new(Arc::clone(&rules));
    let mut traced = Engine::new(rules);
    let mut trace = Trace::new();
    for step in 0..6 {
        let s = sample(step, seed);
        let a = fast.push(&s, &mut NoTrace);
        let b = traced.push(&s, &mut trace);
        prop_assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "step {} of\n{}",
            step,
            text
        );
        if a.as_ref().is_some_and(|d| d.fatal.is_some()) {
            break;
        }
    }
    Ok(())
}

/// `t0 o0 (t1 o1 (t2 ... tn))`: each right side waits on the one after it,
/// so a program holds as many values at once as the nesting is deep (past
/// what it keeps on the stack), and every left side is read before its
/// right side is evaluated, as cpuplugd reads it.
fn right_nested() -> impl Strategy<Value = String> {
    let op = proptest::sample::select(vec!["+", "-", "*", "/", "<", ">", "&", "|"]);
    (proptest::collection::vec((term(), op), 1..24), term()).prop_map(|(pairs, last)| {
        pairs
            .iter()
            .rev()
            .fold(last, |right, (t, o)| format!("{t}{o}({right})"))
    })
}

/// `(a) o (b)` and `(a) o c` at every level: operations on two results of
/// operations before them, or on one and a constant (the operations that
/// take no operand of their own).
fn results_combined() -> impl Strategy<Value = String> {
    term().prop_recursive(4, 16, 2, |inner| {
        let op = proptest::sample::select(vec!["+", "-", "*", "/", "<", ">"]);
        let constant = proptest::sample::select(vec!["0", "2", "0.5", "1e308", "1e-308", "-3"]);
        prop_oneof![
            (inner.clone(), op.clone(), inner.clone())
                .prop_map(|(a, o, b)| format!("({a}){o}({b})")),
            (inner, op, constant).prop_map(|(a, o, c)| format!("({a}){o}{c}")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn combined_results_decide_as_the_tree_evaluator(
        v in results_combined(),
        w in results_combined(),
        rules in proptest::collection::vec(results_combined(), 6),
        seed in any::<u64>(),
    ) {
        decide_alike(&v, &w, &rules, seed)?;
    }

    #[test]
    fn programs_decide_as_the_tree_evaluator(
        v in expression(),
        w in expression(),
        rules in proptest::collection::vec(expression(), 6),
        seed in any::<u64>(),
    ) {
        decide_alike(&v, &w, &rules, seed)?;
    }

    #[test]
    fn deeply_nested_right_sides_decide_as_the_tree_evaluator(
        v in right_nested(),
        rules in proptest::collection::vec(right_nested(), 6),
        seed in any::<u64>(),
    ) {
        decide_alike(&v, "2", &rules, seed)?;
    }
}
