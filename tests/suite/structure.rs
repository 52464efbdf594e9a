//! The shape of the code, kept so: `main.rs` is the command line and
//! dispatch only, and no two modules use each other in a circle, at any
//! level (`scripts/module-graph.sh` prints the graph for a person). That no
//! function runs past 100 lines is clippy's `too_many_lines` (clippy.toml).

mod module_graph;

use module_graph::synthetic::{RULESET, planted};

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    files.sort();
    files
}

#[test]
fn main_rs_is_the_command_line_and_dispatch_only() {
    let text = std::fs::read_to_string(src().join("main.rs")).unwrap_or_default();
    let lines = text.lines().count();
    assert!(lines <= 250, "src/main.rs has {lines} lines");
}

/// The crate's module graph; printed, so `--nocapture` shows it whole.
fn real_graph() -> module_graph::Graph {
    let graph = module_graph::of_tree(&src()).expect("src/ readable");
    println!("{}", graph.describe());
    graph
}

#[test]
fn no_modules_use_each_other_in_a_circle() {
    let graph = real_graph();
    // The check reads the tree at all: uses everyone knows are there.
    for (from, to) in [
        ("engine", "rules"),
        ("engine", "kernel"),
        ("tui", "control"),
    ] {
        assert!(
            graph
                .top_level
                .iter()
                .any(|u| u.krate == "lib" && u.from == from && u.to == to),
            "no {from} -> {to} found: the check reads nothing"
        );
    }
    // The binary's shared source checks use the run's root check.
    assert!(
        graph.nested.iter().any(|u| u.krate == "main"
            && u.parent == "cli"
            && u.from == "sources"
            && u.to == "run"),
        "the binary's own modules are read too"
    );
    let found: Vec<String> = graph.cycles.iter().map(ToString::to_string).collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_planted_kernel_rules_cycle_is_found_through_a_grouped_use_and_a_re_export() {
    // kernel -> rules through a nested grouped use of a re-exported name;
    // rules -> kernel through a fully qualified path in code, no `use`.
    let fields = "use crate::{rules::{self, SystemFacts, number::{value_at}}};\n";
    let ruleset = format!("{RULESET}pub fn read() {{\n    crate::kernel::regular::open();\n}}\n");
    let graph = planted(fields, &ruleset).graph();
    assert!(
        graph.in_one_cycle("kernel", "rules"),
        "{}",
        graph.describe()
    );
    let text = graph.describe();
    assert!(
        text.contains("src/kernel/fields.rs:1 kernel::fields -> rules::ruleset"),
        "{text}"
    );
    assert!(
        text.contains("src/kernel/fields.rs:1 kernel::fields -> rules::number"),
        "{text}"
    );
    assert!(
        text.contains("src/rules/ruleset.rs:4 rules::ruleset -> kernel::regular"),
        "{text}"
    );
    assert!(!graph.in_one_cycle("engine", "kernel"), "engine only uses");
}

#[test]
fn each_way_alone_is_no_cycle() {
    let one_way = planted("use crate::rules::SystemFacts;\n", RULESET);
    assert!(one_way.graph().cycles.is_empty());
    let other_way = planted("", &format!("{RULESET}use crate::kernel::Reader;\n"));
    assert!(other_way.graph().cycles.is_empty());
    // `kernel::Reader` is no item of kernel: the edge still lands in kernel.
    assert!(
        other_way
            .graph()
            .top_level
            .iter()
            .any(|u| u.from == "rules" && u.to == "kernel")
    );
}

/// The real `src/` copied, with `kernel -> rules` planted in one of its
/// files: the check finds the cycle in the tree it guards, not only in a
/// tree shaped like it (`rules` already uses `kernel`).
#[test]
fn a_kernel_rules_use_planted_in_the_real_tree_is_a_cycle() {
    let copy = tempfile::tempdir().expect("temporary directory");
    let root = src();
    for file in all_sources() {
        let rel = file.strip_prefix(&root).expect("below src");
        let to = copy.path().join("src").join(rel);
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
        std::fs::copy(&file, &to).expect("copy");
    }
    let read = |dir: &Path| module_graph::of_tree(&dir.join("src")).expect("readable");
    assert!(read(copy.path()).cycles.is_empty(), "the copy is the tree");
    let target = copy.path().join("src/kernel/cpu_dir.rs");
    let mut text = std::fs::read_to_string(&target).expect("cpu_dir.rs");
    // In a macro call, after the file's test module: no `use`.
    text.push_str(
        "\nfn planted() -> String {\n    format!(\"{:?}\", crate::rules::RuleKind::ALL)\n}\n",
    );
    std::fs::write(&target, text).expect("plant");
    let graph = read(copy.path());
    assert!(
        graph.in_one_cycle("kernel", "rules"),
        "{}",
        graph.describe()
    );
    assert!(
        graph.describe().contains("src/kernel/cpu_dir.rs:"),
        "{}",
        graph.describe()
    );
}

/// The fields of a `thiserror` type's variant (or struct) whose message
/// names its cause: `#[error("cannot read {path}: {source}")]` with
/// `source` a `#[source]` says the cause twice once the chain is shown
/// (`error_chain::text`). Returns "file: Type::Variant" for each.
struct RepeatedCauses<'a> {
    file: &'a str,
    found: Vec<String>,
}

impl RepeatedCauses<'_> {
    fn check(&mut self, name: String, attrs: &[syn::Attribute], fields: &syn::Fields) {
        let Some(attr) = attrs.iter().find(|a| a.path().is_ident("error")) else {
            return;
        };
        let Ok(list) = attr.meta.require_list() else {
            return;
        };
        let tokens = list.tokens.to_string();
        if tokens == "transparent" {
            return;
        }
        for (i, f) in fields.iter().enumerate() {
            let marked = f
                .attrs
                .iter()
                .any(|a| a.path().is_ident("source") || a.path().is_ident("from"));
            let field = f
                .ident
                .as_ref()
                .map_or_else(|| i.to_string(), ToString::to_string);
            if !(marked || field == "source") {
                continue;
            }
            let words: Vec<&str> = tokens
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .collect();
            let in_text =
                tokens.contains(&format!("{{{field}}}")) || tokens.contains(&format!("{{{field}:"));
            let as_arg = if f.ident.is_some() {
                words.contains(&field.as_str())
            } else {
                tokens.contains(&format!(". {field}")) || tokens.contains(&format!(".{field}"))
            };
            if in_text || as_arg {
                self.found
                    .push(format!("{}: {name} says its {field}", self.file));
            }
        }
    }
}

impl<'ast> syn::visit::Visit<'ast> for RepeatedCauses<'_> {
    fn visit_item_enum(&mut self, e: &'ast syn::ItemEnum) {
        for v in &e.variants {
            self.check(format!("{}::{}", e.ident, v.ident), &v.attrs, &v.fields);
        }
    }

    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        self.check(s.ident.to_string(), &s.attrs, &s.fields);
    }
}

#[test]
fn no_error_message_says_its_own_cause() {
    let mut found = Vec::new();
    let mut types = 0;
    for path in all_sources() {
        let text = std::fs::read_to_string(&path).expect("a source file");
        types += text.matches("thiserror::Error").count();
        let file = syn::parse_file(&text).expect("a source file that parses");
        let shown = path
            .strip_prefix(src())
            .unwrap_or(&path)
            .display()
            .to_string();
        let mut v = RepeatedCauses {
            file: &shown,
            found: Vec::new(),
        };
        syn::visit::Visit::visit_file(&mut v, &file);
        found.append(&mut v.found);
    }
    assert!(types > 30, "only {types} error types seen");
    assert!(
        found.is_empty(),
        "messages that say their cause: {found:#?}"
    );
}

#[test]
fn a_message_that_says_its_cause_is_found() {
    let planted = r#"
        #[derive(Debug, thiserror::Error)]
        enum E {
            #[error("cannot read {path}: {source}")]
            Read { path: String, #[source] source: std::io::Error },
            #[error("terminal: {0}")]
            Terminal(#[from] std::io::Error),
            #[error("cannot open {}: {}", path.display(), reason)]
            Open { path: std::path::PathBuf, #[source] reason: std::io::Error },
            #[error("cannot read {path}")]
            Fine { path: String, #[source] source: std::io::Error },
            #[error(transparent)]
            Wrapped(#[from] std::fmt::Error),
        }
    "#;
    let file = syn::parse_file(planted).expect("parses");
    let mut v = RepeatedCauses {
        file: "planted.rs",
        found: Vec::new(),
    };
    syn::visit::Visit::visit_file(&mut v, &file);
    assert_eq!(
        v.found,
        [
            "planted.rs: E::Read says its source",
            "planted.rs: E::Terminal says its 0",
            "planted.rs: E::Open says its reason",
        ]
    );
}
