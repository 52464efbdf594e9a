//! The shape of the code, kept so: `main.rs` is the command line and
//! dispatch only, no function runs past 100 lines, and sibling modules do
//! not use each other in a circle. (`scripts/long-functions.py` and
//! `scripts/module-cycles.py` print the same findings for a person.)

use std::collections::{BTreeMap, BTreeSet};
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

/// Functions from their `fn` line to the closing brace at the same indent.
fn long_functions(text: &str, limit: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let rest = trimmed
            .strip_prefix("pub(crate) ")
            .or_else(|| trimmed.strip_prefix("pub(super) "))
            .or_else(|| trimmed.strip_prefix("pub "))
            .unwrap_or(trimmed);
        let rest = rest.strip_prefix("const ").unwrap_or(rest);
        if let Some(sig) = rest.strip_prefix("fn ") {
            let name: String = sig
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let close = format!("{}}}", " ".repeat(indent));
            let mut j = i;
            while j < lines.len() && !lines[j].trim_end().ends_with('{') {
                j += 1;
            }
            let mut k = j + 1;
            while k < lines.len() && lines[k].trim_end() != close {
                k += 1;
            }
            if k - i + 1 > limit {
                found.push((name, k - i + 1));
            }
            i = k;
        }
        i += 1;
    }
    found
}

#[test]
fn no_function_runs_past_100_lines() {
    let mut long = Vec::new();
    for path in all_sources() {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (name, n) in long_functions(&text, 100) {
            long.push(format!("{} {name}: {n} lines", path.display()));
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// The module a source file is, as `a::b` (`lib`/`main` are the roots).
fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap_or(path).with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|c| c != "mod")
        .collect();
    parts.join("::")
}

/// Which modules of the crate a file's code (comments and tests left out)
/// names through `crate::` or `super::`.
fn uses(module: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap_or("")
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let parent: Vec<&str> = module
        .rsplit_once("::")
        .map_or(vec![], |(p, _)| p.split("::").collect());
    let mut out = BTreeSet::new();
    for (prefix, base) in [("crate::", vec![]), ("super::", parent)] {
        for (at, _) in code.match_indices(prefix) {
            let path: Vec<&str> = code[at + prefix.len()..]
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .filter(|s| !s.is_empty())
                .collect();
            let full: Vec<&str> = base.iter().copied().chain(path).collect();
            for n in (1..=full.len()).rev() {
                let candidate = full[..n].join("::");
                if known.contains(&candidate) {
                    if candidate != module {
                        out.insert(candidate);
                    }
                    break;
                }
            }
        }
    }
    out
}

#[test]
fn sibling_modules_do_not_use_each_other_in_a_circle() {
    let files = all_sources();
    let known: BTreeSet<String> = files.iter().map(|p| module_of(p)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let module = module_of(path);
        let text = std::fs::read_to_string(path).unwrap_or_default();
        edges.insert(module.clone(), uses(&module, &text, &known));
    }
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for d in edges.get(&m).into_iter().flatten() {
                if d == to {
                    return true;
                }
                if seen.insert(d.clone()) {
                    todo.push(d.clone());
                }
            }
        }
        false
    };
    let parent = |m: &str| {
        m.rsplit_once("::")
            .map_or(String::new(), |(p, _)| p.to_string())
    };
    let mut cycles = BTreeSet::new();
    for (a, deps) in &edges {
        for b in deps {
            if parent(a) == parent(b) && reaches(b, a) {
                let pair = if a < b { (a, b) } else { (b, a) };
                cycles.insert(format!("{} <-> {}", pair.0, pair.1));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "{}",
        cycles.into_iter().collect::<Vec<_>>().join("\n")
    );
}
