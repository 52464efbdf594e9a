//! The edges where cpuplugd's C arithmetic shows (issue 15): variables with
//! an empty name, constants past the range of a long, tick counters at and
//! above 2^63. Whatever a rule file and a reading hold, loading, checking and
//! evaluating never panic, and `check` points at an empty name's line.

use std::sync::Arc;

use plugtop::engine::Engine;
use plugtop::kernel::fields::FieldTable;
use plugtop::kernel::{CpuTicks, Sample, Stamp};
use plugtop::rules::eval::Trace;
use plugtop::rules::{SourceFile, SystemFacts, load, render};
use proptest::prelude::*;

/// Numbers where C's long and double arithmetic wrap, saturate or trap.
fn huge() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("9223372036854775807".to_string()),
        Just("9223372036854775808".to_string()),
        Just("9223372036854774784".to_string()),
        Just("18446744073709551615".to_string()),
        Just("99999999999999999999".to_string()),
        Just("1e308".to_string()),
        Just("1e400".to_string()),
        Just("0x7fffffffffffffff".to_string()),
        (0u64..u64::MAX).prop_map(|v| v.to_string()),
    ]
}

/// Rule texts that read the empty-named variable, or huge constants.
fn rule() -> impl Strategy<Value = String> {
    let term = prop_oneof![
        Just(String::new()),
        Just("()".to_string()),
        Just("onumcpus".to_string()),
        Just("cpustat.user".to_string()),
        Just("cpustat.total_ticks[1]".to_string()),
        huge(),
    ];
    let op = proptest::sample::select(vec!["", "+", "-", "*", "/", "<", ">", "&", "|", "!"]);
    proptest::collection::vec((op, term), 0..5)
        .prop_map(|parts| parts.into_iter().map(|(o, t)| format!("{o}{t}")).collect())
}

fn sample(step: u64, base: u64, pages: i64) -> Sample {
    let ticks = CpuTicks {
        user: base.wrapping_add(step * 100),
        system: base / 3 + step,
        idle: u64::MAX - step,
        ..CpuTicks::default()
    };
    Sample {
        loadavg: 0.5,
        runnable: 1.0,
        meminfo: FieldTable::from_pairs([("MemFree", 1000.0), ("MemTotal", 4000.0)]),
        vmstat: FieldTable::from_pairs([
            ("pswpin", 0.0),
            ("pswpout", 0.0),
            ("pgpgin", 0.0),
            ("pgpgout", 0.0),
        ]),
        cmm_pages: Some(pages),
        ..Sample::bare(Stamp::new(1_700_000_000 + step as i64, 0), ticks, 2, 8)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn empty_names_huge_constants_and_counters_never_panic(
        empty_var in proptest::option::of(rule()),
        hotplug in rule(),
        cmm_inc in rule(),
        cmm_max in huge(),
        base in prop_oneof![Just(i64::MAX as u64), Just(u64::MAX - 1000), 0u64..u64::MAX],
        pages in prop_oneof![Just(i64::MIN), Just(i64::MAX), any::<i64>()],
    ) {
        let mut text = String::from("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\n");
        text.push_str(&format!("CMM_MAX=\"{}\"\n", cmm_max.trim_start_matches("0x")));
        if let Some(v) = &empty_var {
            text.push_str(&format!("=\"{v}\"\n"));
        }
        text.push_str(&format!(
            "HOTPLUG=\"{hotplug}\"\nHOTUNPLUG=\"0\"\nCMM_INC=\"{cmm_inc}\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n"
        ));
        let file = SourceFile::new("edge.conf", text.clone().into_bytes());
        let outcome = load(&file, &SystemFacts::any_machine(8, "a test"));
        let report = render::text(&file, &outcome.diagnostics);
        if empty_var.is_some() {
            let flagged = outcome
                .diagnostics
                .iter()
                .find(|d| d.code == "empty-variable-name");
            prop_assert!(flagged.is_some(), "no warning for the empty name:\n{text}\n{report}");
            prop_assert!(report.contains("edge.conf:6:"), "the warning names line 6:\n{report}");
        }
        if outcome.refusal.is_none() {
            let mut engine = Engine::new(Arc::new(outcome.rules));
            let mut trace = Trace::new();
            for step in 0..4 {
                let decision = engine.push(&sample(step, base, pages), &mut trace);
                if let Some(mem) = decision.and_then(|d| d.mem) {
                    let s = engine.rules().settings;
                    prop_assert!(
                        mem.cmm_pages_new >= s.cmm_min.min(s.cmm_max)
                            && mem.cmm_pages_new <= s.cmm_max.max(s.cmm_min)
                            || mem.cmm_pages_new == mem.cmm_pages,
                        "the pool leaves CMM_MIN..CMM_MAX: {mem:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn an_empty_rule_reads_the_empty_named_variable_and_check_says_why() {
    let text =
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n=\"1\"\nHOTPLUG=\"\"\nHOTUNPLUG=\"0\"\n";
    let file = SourceFile::new("empty.conf", text.as_bytes().to_vec());
    let outcome = load(&file, &SystemFacts::any_machine(8, "a test"));
    assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
    assert!(outcome.rules.cpu_enabled, "the empty rule is a rule here");
    let report = render::text(&file, &outcome.diagnostics);
    assert!(
        report.contains("empty.conf:4:") && report.contains("empty name"),
        "{report}"
    );
    // Without the variable, an empty rule still turns the group off.
    let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"10\"\nCMM_INC=\"1\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"0\"\n";
    let outcome = load(
        &SourceFile::new("plain.conf", text.as_bytes().to_vec()),
        &SystemFacts::any_machine(8, "a test"),
    );
    assert!(!outcome.rules.cpu_enabled);
}
