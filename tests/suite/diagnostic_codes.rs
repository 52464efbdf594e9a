//! The diagnostic codes against their documentation: `docs/diagnostics.md`
//! is made from [`DiagnosticCode`]'s table, so a code added, renamed or
//! reworded there shows up here until the page is made again
//! (`PLUGTOP_WRITE_DOCS=1 cargo test --test suite diagnostic_codes`).
//! JSON consumers match on these names: each is unique and kebab-case.

use plugtop::rules::DiagnosticCode;

const DOCS: &str = "docs/diagnostics.md";

/// The page as the table makes it.
fn page() -> String {
    let mut out = String::from(
        "# Diagnostic codes\n\n\
         Every finding of `plugtop check`, the LSP and the screen's rule panel carries one of\n\
         these codes (`\"code\"` in `plugtop check --json`). They are stable: a consumer may\n\
         match on them. Whether a finding is an error or a warning, and what cpuplugd does\n\
         about it, is in the finding itself (`severity`, `daemon`).\n\n\
         This page is made from `DiagnosticCode` in `src/rules/diagnostic.rs`;\n\
         `tests/suite/diagnostic_codes.rs` keeps it in step.\n\n\
         | Code | What it means |\n\
         |------|---------------|\n",
    );
    for code in DiagnosticCode::ALL {
        out.push_str(&format!("| `{}` | {} |\n", code.as_str(), code.doc()));
    }
    out
}

#[test]
fn the_page_is_made_from_the_table() {
    let made = page();
    if std::env::var_os("PLUGTOP_WRITE_DOCS").is_some() {
        std::fs::write(DOCS, &made).expect("write the page");
    }
    let kept = std::fs::read_to_string(DOCS).unwrap_or_default();
    assert!(
        kept == made,
        "{DOCS} is not what DiagnosticCode's table makes: run \
         PLUGTOP_WRITE_DOCS=1 cargo test --test suite diagnostic_codes, and read the change"
    );
}

#[test]
fn every_code_is_unique_kebab_case_and_documented() {
    let mut seen = std::collections::HashSet::new();
    for code in DiagnosticCode::ALL {
        let name = code.as_str();
        assert!(seen.insert(name), "{name} twice");
        assert!(
            !name.is_empty()
                && name
                    .split('-')
                    .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
            "{name} is not kebab-case"
        );
        let doc = code.doc();
        assert!(doc.ends_with('.') && !doc.contains('|'), "{name}: {doc}");
        assert_eq!(code.to_string(), name);
    }
}

#[test]
fn json_says_the_code_as_printed() {
    let json = serde_json::to_string(&DiagnosticCode::SetTwice).expect("serialize");
    assert_eq!(json, "\"set-twice\"");
}
