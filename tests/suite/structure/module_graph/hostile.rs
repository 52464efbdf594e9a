//! The check against code written to fool it: uses hidden in every path
//! form it must see, and look-alikes in strings, comments and test-only
//! items it must not count. Each tree plants `kernel -> rules` in
//! `kernel/fields.rs`; whether `rules` uses `kernel` back decides whether
//! there is a cycle.

use super::synthetic::{RULESET, planted, planted_with};

/// kernel's half of every cycle here.
const KERNEL_USES_RULES: &str = "use crate::rules::ruleset::Settings;\n";

fn has_cycle(ruleset: &str) -> bool {
    planted(KERNEL_USES_RULES, ruleset)
        .graph()
        .in_one_cycle("kernel", "rules")
}

#[test]
fn every_path_form_is_seen() {
    let forms = [
        "use crate::kernel::regular;",
        "use crate::{kernel::{regular::{self}}, rules};",
        "use crate::{engine, kernel::regular::{Reader as R, open}};",
        "use super::super::kernel;",
        "use crate::kernel as k;",
        "use crate::kernel::regular::*;",
        "pub(crate) use crate::kernel::regular::open as _;",
        "fn f() { super::super::kernel::regular::open(); }",
        "fn f() { crate::kernel::regular::open(); }",
        "fn f() -> crate::kernel::regular::Reader { todo!() }",
        "fn f() { let _ = <crate::kernel::regular::Reader as Default>::default(); }",
        "fn f() { let v: Vec<crate::kernel::regular::Reader> = Vec::new(); }",
        "pub mod inner { pub fn f() { super::super::super::kernel::regular::open(); } }",
        "pub mod inner { pub mod deeper { use crate::kernel::regular; } }",
        "fn f() { use crate::kernel::regular; }",
        "impl Settings { fn f(&self) { crate::kernel::regular::open() } }",
        "fn f<'a>(x: &'a str) -> char { let _ = '{'; crate::kernel::regular::open(); 'x' }",
    ];
    for form in forms {
        assert!(has_cycle(&format!("{RULESET}{form}\n")), "not seen: {form}");
    }
}

#[test]
fn paths_in_strings_comments_and_chars_are_no_uses() {
    let look_alikes = [
        "// crate::kernel::regular::open();",
        "/// use crate::kernel::regular;\npub struct Documented;",
        "#[doc = \"crate::kernel\"]\npub struct Documented;",
        "/* use crate::kernel; /* nested */ crate::kernel::regular::open(); */",
        "const S: &str = \"crate::kernel::regular::open()\";",
        "const S: &str = \"escaped \\\" crate::kernel::regular \";",
        "const S: &str = r#\"use crate::kernel::regular; \"# ;",
        "const S: &[u8] = b\"crate::kernel::regular\";",
        "const S: &[u8] = br##\"crate::kernel::regular\"#  \"##;",
        "const C: char = '\"'; const T: &str = \"crate::kernel::x\";",
        "use std::kernel::regular;",
        "use ::kernel::regular;",
        "fn f<T: Default>() -> T { T::default() }",
    ];
    for text in look_alikes {
        assert!(!has_cycle(&format!("{RULESET}{text}\n")), "counted: {text}");
    }
}

#[test]
fn only_test_items_are_left_out() {
    // Braces in chars, strings and comments inside the test module must
    // not end it early or late.
    let test_items = "#[cfg(test)]\nmod tests {\n    use crate::kernel::regular;\n    \
        fn f() { let c = '}'; let s = \"}\"; let r = r#\"}\"#; /* } */ }\n    \
        fn g<'a>(x: &'a str) {}\n}\n\
        #[cfg(test)]\nuse crate::kernel::Reader;\n\
        #[cfg(test)]\n#[allow(dead_code)]\nfn helper() -> [u8; 2] { crate::kernel::regular::open(); [0; 2] }\n\
        #[cfg(test)]\nimpl<A, B> Settings { fn h() { crate::kernel::regular::open(); } }\n";
    assert!(!has_cycle(&format!("{RULESET}{test_items}")));
    // What follows test items is code again (the whole rest was once lost).
    let after = format!(
        "{RULESET}{test_items}pub fn later() {{\n    crate::kernel::regular::open();\n}}\n"
    );
    let graph = planted(KERNEL_USES_RULES, &after).graph();
    assert!(graph.in_one_cycle("kernel", "rules"));
    let later_line = after.lines().count() - 1;
    let text = graph.describe();
    assert!(
        text.contains(&format!(
            "src/rules/ruleset.rs:{later_line} rules::ruleset -> kernel::regular"
        )),
        "{text}"
    );
    assert!(
        !text.contains("src/rules/ruleset.rs:5 "),
        "the test module's use: {text}"
    );
    // Other cfg attributes are not test-only.
    let other_cfg = format!("{RULESET}#[cfg(unix)]\nuse crate::kernel::regular;\n");
    assert!(has_cycle(&other_cfg));
}

#[test]
fn a_test_only_file_module_is_no_module() {
    let rules = "pub mod ruleset;\npub mod number;\n#[cfg(test)]\nmod fake;\n";
    let tree = planted_with(
        KERNEL_USES_RULES,
        RULESET,
        &[
            ("rules/mod.rs", rules),
            ("rules/fake.rs", "use crate::kernel::regular;\n"),
        ],
    );
    assert!(tree.graph().cycles.is_empty());
    let declared = "pub mod ruleset;\npub mod number;\nmod fake;\n";
    let tree = planted_with(
        KERNEL_USES_RULES,
        RULESET,
        &[
            ("rules/mod.rs", declared),
            ("rules/fake.rs", "use crate::kernel::regular;\n"),
        ],
    );
    assert!(tree.graph().in_one_cycle("kernel", "rules"));
}

#[test]
fn a_re_export_leads_to_where_the_item_is_defined() {
    let lib = "pub mod kernel;\npub mod rules;\npub mod engine;\npub mod facade;\n";
    let facade = "pub use crate::kernel::regular::Reader;\npub use crate::kernel::regular::*;\n";
    for ruleset in [
        "use crate::facade::Reader;\n",
        "fn f() { crate::facade::open(); }\n",
        "fn f() -> crate::facade::Reader { todo!() }\n",
        "use crate::facade::Reader as R;\nfn f() { R::new(); }\n",
    ] {
        let graph = planted_with(
            KERNEL_USES_RULES,
            &format!("{RULESET}{ruleset}"),
            &[("lib.rs", lib), ("facade.rs", facade)],
        )
        .graph();
        assert!(graph.in_one_cycle("kernel", "rules"), "{ruleset}");
        assert!(!graph.in_one_cycle("facade", "rules"), "{ruleset}");
        assert!(
            graph
                .describe()
                .contains("rules::ruleset -> kernel::regular"),
            "{ruleset}"
        );
    }
}

#[test]
fn cycles_between_siblings_deeper_down_are_found() {
    let kernel = "pub mod regular;\npub mod fields;\npub mod a;\npub mod b;\n";
    let graph = planted_with(
        "",
        RULESET,
        &[
            ("kernel/mod.rs", kernel),
            ("kernel/a.rs", "use super::b::X;\npub struct Y;\n"),
            (
                "kernel/b.rs",
                "pub struct X;\nfn f() -> self::super::a::Y { todo!() }\n",
            ),
        ],
    )
    .graph();
    assert!(
        graph.in_one_cycle("kernel::a", "kernel::b"),
        "{}",
        graph.describe()
    );
    assert!(!graph.in_one_cycle("kernel", "rules"));
    // A module using its parent's items, and the parent its child, is no cycle.
    let parent_child = planted_with(
        "",
        RULESET,
        &[
            (
                "kernel/mod.rs",
                "pub mod regular;\npub mod fields;\npub use regular::Reader;\npub struct Top;\n",
            ),
            ("kernel/regular.rs", "pub struct Reader;\nuse super::Top;\n"),
        ],
    );
    assert!(parent_child.graph().cycles.is_empty());
}

#[test]
fn a_binary_is_a_crate_of_its_own() {
    let graph = planted_with(
        "",
        RULESET,
        &[
            ("main.rs", "mod actions;\nmod cli;\nuse plugtop::kernel;\n"),
            (
                "cli.rs",
                "pub struct Cli;\npub fn f() { crate::actions::run(); }\n",
            ),
            (
                "actions.rs",
                "use crate::cli::*;\nuse plugtop::rules;\npub fn run() {}\n",
            ),
        ],
    )
    .graph();
    let text = graph.describe();
    assert!(
        text.contains("cycle among main: actions, main: cli"),
        "{text}"
    );
    assert!(!graph.in_one_cycle("kernel", "rules"), "{text}");
}

#[test]
fn a_use_in_many_places_is_counted_whole_and_listed_in_part() {
    let many: String = (0..12)
        .map(|i| format!("fn f{i}() {{ crate::kernel::regular::open(); }}\n"))
        .collect();
    let graph = planted(KERNEL_USES_RULES, &format!("{RULESET}{many}")).graph();
    let text = graph.describe();
    assert!(text.contains("  rules -> kernel (12 places):"), "{text}");
    assert!(text.contains("    ... and 4 more"), "{text}");
    assert!(text.contains("  kernel -> rules (1 place):"), "{text}");
}

#[test]
fn a_module_under_path_is_an_error_not_a_module_that_is_not_there() {
    let rules = "pub mod ruleset;\npub mod number;\n#[path = \"other.rs\"]\npub mod fake;\n";
    let tree = planted_with(
        KERNEL_USES_RULES,
        RULESET,
        &[
            ("rules/mod.rs", rules),
            ("rules/other.rs", "use crate::kernel::regular;\n"),
        ],
    );
    let read = tree.read();
    let error = read.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("`mod fake;`"), "{error:?}");
}

#[test]
fn a_file_that_does_not_parse_is_an_error_with_its_place() {
    let tree = planted_with(
        KERNEL_USES_RULES,
        RULESET,
        &[("rules/number.rs", "pub fn value_at() {}\nfn broken( {\n")],
    );
    let error = tree.read().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("src/rules/number.rs:2:"), "{error:?}");
}
