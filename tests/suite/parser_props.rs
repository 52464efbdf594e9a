//! Properties of the rule parser: printing an expression and reading it back
//! gives the same expression, and no input makes loading or reporting panic.

use plugtop::kernel::root::RootReader;
use plugtop::rules::expr::{BinOp, Keyword};
use plugtop::rules::print::{Shape, print, shape};
use plugtop::rules::render;
use plugtop::rules::{RuleKind, SourceFile, SystemFacts, load};
use proptest::prelude::*;

fn facts() -> SystemFacts {
    SystemFacts {
        present_cpus: Ok(4),
        cmm_pages: true,
        zvm_guest: Some(true),
        meminfo_names: Some(vec!["MemFree".into(), "MemTotal".into()]),
        vmstat_names: Some(vec!["pgscan_direct".into()]),
        origin: "a test".into(),
        history: None,
    }
}

fn leaf() -> impl Strategy<Value = Shape> {
    prop_oneof![
        prop_oneof![
            (0u32..100_000).prop_map(f64::from),
            (-1000i32..1000).prop_map(|v| f64::from(v) / 8.0),
            any::<f64>().prop_filter("finite", |v| v.is_finite()),
        ]
        .prop_map(|v| Shape::Const(v.to_bits())),
        proptest::sample::select(Keyword::ALL.to_vec()).prop_map(Shape::Keyword),
        (
            proptest::sample::select(vec!["meminfo.", "vmstat.", "cpustat.", "time"]),
            "[A-Za-z_]{1,10}",
            0u32..=100
        )
            .prop_map(|(prefix, field, index)| Shape::Reading {
                prefix,
                field: if prefix == "time" {
                    String::new()
                } else {
                    field
                },
                index,
            }),
    ]
}

fn op() -> impl Strategy<Value = BinOp> {
    proptest::sample::select(vec![
        BinOp::Or,
        BinOp::And,
        BinOp::Greater,
        BinOp::Less,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
    ])
}

fn expression() -> impl Strategy<Value = Shape> {
    leaf().prop_recursive(6, 48, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|s| Shape::Neg(Box::new(s))),
            inner.clone().prop_map(|s| Shape::Not(Box::new(s))),
            (op(), inner.clone(), inner).prop_map(|(o, l, r)| Shape::Binary(
                o,
                Box::new(l),
                Box::new(r)
            )),
        ]
    })
}

fn rule_file(hotplug: &str) -> SourceFile {
    let text = format!(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"{hotplug}\"\nHOTUNPLUG=\"0\"\n"
    );
    SourceFile::new("prop.conf", text.into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn printing_and_reparsing_gives_the_same_tree(tree in expression()) {
        let text = print(&tree);
        prop_assume!(text.len() < 2000);
        let outcome = load(&rule_file(&text), &facts());
        prop_assert!(outcome.refusal.is_none(), "{text} refused: {:?}", outcome.refusal);
        let rule = outcome.rules.rule(RuleKind::Hotplug);
        prop_assert!(rule.is_some());
        if let Some(rule) = rule {
            prop_assert_eq!(shape(&outcome.rules, rule.root), tree, "text: {}", text);
        }
    }

    #[test]
    fn random_files_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let file = SourceFile::new("random.conf", bytes);
        let outcome = load(&file, &facts());
        let _ = render::text(&file, &outcome.diagnostics);
        let _ = render::json(&file, &outcome.diagnostics);
        let _ = render::summary(&file, &outcome);
    }

    #[test]
    fn random_rule_text_never_panics(text in "[-+*/<>&|!()\\[\\]=.a-z0-9_ \"#]{0,80}") {
        let file = rule_file(&text);
        let outcome = load(&file, &facts());
        let _ = render::text(&file, &outcome.diagnostics);
    }

    #[test]
    fn random_lines_with_variables_never_panic(
        lines in proptest::collection::vec("[A-Za-z_]{1,6}=\"[-+*/<>&|!()a-z0-9_. ]{0,30}\"", 0..12)
    ) {
        let text = format!("UPDATE=\"1\"\n{}\nHOTPLUG=\"a\"\nHOTUNPLUG=\"b\"\n", lines.join("\n"));
        let file = SourceFile::new("vars.conf", text.into_bytes());
        let outcome = load(&file, &facts());
        let _ = render::text(&file, &outcome.diagnostics);
    }
}

#[test]
fn facts_of_a_missing_root_are_errors_not_panics() {
    let facts = RootReader::new().facts(std::path::Path::new("/nonexistent/plugtop-root"));
    assert!(facts.present_cpus.is_err());
    assert!(!facts.cmm_pages);
}
