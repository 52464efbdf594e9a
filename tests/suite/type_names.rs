//! Every type in `src/` has a name of its own: two `Report`s or three
//! `Tally`s make a reader (and a search) stop to ask which one is meant, and
//! a type called like a dependency's trait (`Log` beside `log::Log`)
//! shadows it where both are in scope. The scan reads items (`struct`,
//! `enum`, `union`, `trait`, `type`) at module level and in function
//! bodies; associated types (`type Error` in a trait or an impl) and items
//! under `#[cfg(test)]` are not the crate's names and are skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Names a type of ours must not take: the prelude's and the traits of
/// dependencies the crate uses, which a type of the same name would hide.
const TAKEN: &[&str] = &[
    "Box", "Option", "Result", "String", "Vec", "Error", "Log", "Write", "Read", "Display",
    "Debug", "Default", "Iterator",
];

/// Lexical pieces that matter to the scan: words, and the punctuation
/// that opens, closes or ends items.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Punct(char),
}

/// A declared type: its name and the 1-based line it is declared on.
#[derive(Debug, Clone, PartialEq)]
struct Declared {
    name: String,
    line: usize,
}

/// The tokens of `text` with their lines, comments, strings and
/// character literals left out (a `struct` in a doc comment or a string
/// declares nothing).
fn tokens(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && at(i + 1) == 'r'))
            && matches!(at(i + usize::from(c == 'b') + 1), '"' | '#')
            && raw_string_start(&chars, i + usize::from(c == 'b') + 1).is_some()
        {
            let start = i + usize::from(c == 'b') + 1;
            let hashes = raw_string_start(&chars, start).unwrap_or(0);
            i = start + hashes + 1;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                    i += hashes + 1;
                    break;
                }
                if chars[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{7f}') or a lifetime ('a).
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // `b"..."` and `c"..."` are strings, not the words b and c.
            if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                continue;
            }
            out.push((Token::Word(word), line));
        } else {
            if !c.is_whitespace() {
                out.push((Token::Punct(c), line));
            }
            i += 1;
        }
    }
    out
}

/// The number of `#`s of a raw string opening at `i` (`"` or `#...#"`).
fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
    let mut hashes = 0;
    while chars.get(i + hashes) == Some(&'#') {
        hashes += 1;
    }
    (chars.get(i + hashes) == Some(&'"')).then_some(hashes)
}

fn is_word(t: Option<&(Token, usize)>, w: &str) -> bool {
    matches!(t, Some((Token::Word(x), _)) if x == w)
}

fn is_punct(t: Option<&(Token, usize)>, p: char) -> bool {
    matches!(t, Some((Token::Punct(x), _)) if *x == p)
}

/// Whether `#[cfg(test)]` starts at token `i`.
fn cfg_test_at(t: &[(Token, usize)], i: usize) -> bool {
    is_punct(t.get(i), '#')
        && is_punct(t.get(i + 1), '[')
        && is_word(t.get(i + 2), "cfg")
        && is_punct(t.get(i + 3), '(')
        && is_word(t.get(i + 4), "test")
        && is_punct(t.get(i + 5), ')')
        && is_punct(t.get(i + 6), ']')
}

/// The index just past the item that starts at `i`: its `;` or its
/// balanced `{...}`, whichever ends it first outside brackets.
fn past_item(t: &[(Token, usize)], mut i: usize) -> usize {
    let mut nesting = 0usize;
    while i < t.len() {
        match &t[i].0 {
            Token::Punct('(' | '[') => nesting += 1,
            Token::Punct(')' | ']') => nesting = nesting.saturating_sub(1),
            Token::Punct(';') if nesting == 0 => return i + 1,
            Token::Punct('{') if nesting == 0 => {
                let mut depth = 0usize;
                while i < t.len() {
                    match t[i].0 {
                        Token::Punct('{') => depth += 1,
                        Token::Punct('}') => {
                            depth -= 1;
                            if depth == 0 {
                                return i + 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                return i;
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The types `text` declares, outside impls, traits and `#[cfg(test)]`.
fn declared_types(text: &str) -> Vec<Declared> {
    let t = tokens(text);
    let mut found = Vec::new();
    // For each open brace: whether it holds associated items.
    let mut blocks: Vec<bool> = Vec::new();
    // The next `{` opens an impl's or a trait's body.
    let mut next_is_assoc = false;
    let mut i = 0;
    while i < t.len() {
        if cfg_test_at(&t, i) {
            i = past_item(&t, i + 7);
            continue;
        }
        let before = i.checked_sub(1).and_then(|b| t.get(b));
        let item_start = before.is_none()
            || matches!(before, Some((Token::Punct('{' | '}' | ';' | ']' | ')'), _)))
            || matches!(before, Some((Token::Word(w), _)) if matches!(w.as_str(), "pub" | "unsafe" | "default" | "auto"));
        match &t[i].0 {
            Token::Punct('{') => blocks.push(std::mem::take(&mut next_is_assoc)),
            Token::Punct('}') => {
                blocks.pop();
            }
            Token::Punct(';') => next_is_assoc = false,
            Token::Word(w) if w == "impl" && item_start => next_is_assoc = true,
            Token::Word(w) if w == "trait" => {
                next_is_assoc = true;
                if let Some((Token::Word(name), line)) = t.get(i + 1) {
                    found.push(Declared {
                        name: name.clone(),
                        line: *line,
                    });
                }
            }
            Token::Word(w)
                if matches!(w.as_str(), "struct" | "enum" | "union" | "type")
                    && item_start
                    && !blocks.last().copied().unwrap_or(false) =>
            {
                if let Some((Token::Word(name), line)) = t.get(i + 1) {
                    found.push(Declared {
                        name: name.clone(),
                        line: *line,
                    });
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

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

/// Every name declared more than once across `files` (path, text), with
/// where, and every name on the [`TAKEN`] list.
fn problems(files: &[(String, String)]) -> Vec<String> {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, text) in files {
        for d in declared_types(text) {
            seen.entry(d.name)
                .or_default()
                .push(format!("{path}:{}", d.line));
        }
    }
    let mut found = Vec::new();
    for (name, places) in &seen {
        if places.len() > 1 {
            found.push(format!(
                "{name} is declared {} times: {}",
                places.len(),
                places.join(", ")
            ));
        }
        if TAKEN.contains(&name.as_str()) {
            found.push(format!(
                "{name} ({}) takes the name of a std or dependency type it would hide",
                places.join(", ")
            ));
        }
    }
    found
}

#[test]
fn every_type_in_src_has_a_name_of_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    paths.sort();
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).expect("a source file reads");
            let name = p.strip_prefix(&src).unwrap_or(p).display().to_string();
            (name, text)
        })
        .collect();
    // The scan sees the crate: a scan that found nothing would pass vacuously.
    let count: usize = files.iter().map(|(_, t)| declared_types(t).len()).sum();
    assert!(
        count > 100,
        "only {count} types found in src/: the scan is broken"
    );
    let found = problems(&files);
    assert!(
        found.is_empty(),
        "give these types names of their own:\n{}",
        found.join("\n")
    );
}

fn names(text: &str) -> Vec<String> {
    declared_types(text).into_iter().map(|d| d.name).collect()
}

#[test]
fn items_of_every_kind_and_visibility_are_found() {
    let text = "pub struct A;\nenum B { X }\npub(crate) trait C {}\ntype D = u8;\n\
                union E { a: u8 }\npub(super) struct F(u8);\nunsafe trait G {}\n";
    assert_eq!(names(text), ["A", "B", "C", "D", "E", "F", "G"]);
    let lines: Vec<usize> = declared_types(text).iter().map(|d| d.line).collect();
    assert_eq!(lines, [1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn a_duplicate_in_two_files_is_reported_with_both_places() {
    let files = vec![
        ("a.rs".to_string(), "pub struct Tally;\n".to_string()),
        (
            "b/c.rs".to_string(),
            "\n\nstruct Tally { n: u8 }\n".to_string(),
        ),
    ];
    let found = problems(&files);
    assert_eq!(found, ["Tally is declared 2 times: a.rs:1, b/c.rs:3"]);
}

#[test]
fn items_in_inline_modules_and_function_bodies_count() {
    let text = "mod inner { pub enum Report {} }\nfn f() { struct Report; }\n";
    assert_eq!(names(text), ["Report", "Report"]);
}

#[test]
fn a_name_that_hides_a_dependency_trait_is_reported() {
    let files = vec![("l.rs".to_string(), "pub trait Log {}\n".to_string())];
    let found = problems(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("Log (l.rs:1)"), "{found:?}");
}

#[test]
fn associated_types_are_not_the_crates_names() {
    let text = "trait Stage { type Error; fn f(&self); }\n\
                impl Stage for X { type Error = E; fn f(&self) {} }\n\
                impl<T> Y<T> where T: Stage { type Out = u8; }\n";
    assert_eq!(names(text), ["Stage"]);
}

#[test]
fn impl_in_a_signature_does_not_hide_the_body() {
    // `-> impl Trait {` and `x: impl Fn() {` open a function body, whose
    // items count, not an impl block.
    let text = "fn f() -> impl Iterator<Item = u8> { struct Inside; std::iter::empty() }\n\
                fn g(x: impl Fn()) { enum Also {} }\n";
    assert_eq!(names(text), ["Inside", "Also"]);
}

#[test]
fn test_only_items_are_skipped_and_what_follows_them_is_not() {
    let text = "#[cfg(test)]\nmod tests { struct Fake; enum Tally {} }\n\
                #[cfg(test)]\nstruct Alone([u8; 2]);\n\
                #[cfg(test)]\nconst N: [u8; 1] = [0];\n\
                pub struct After;\n";
    assert_eq!(names(text), ["After"]);
}

#[test]
fn comments_strings_and_characters_declare_nothing() {
    let text = "// struct InComment;\n/* enum Block { /* nested struct Deep; */ } */\n\
                /// type InDoc = u8;\nconst S: &str = \"struct InString;\";\n\
                const R: &str = r#\"enum InRaw {} \"quoted\" \"#;\n\
                const B: &[u8] = b\"trait InBytes {}\";\n\
                const Q: char = '\"'; const L: char = '{';\n\
                fn f<'a>(x: &'a str) -> &'a str { x }\n\
                struct Real;\n";
    assert_eq!(names(text), ["Real"]);
    let lines: Vec<usize> = declared_types(text).iter().map(|d| d.line).collect();
    assert_eq!(lines, [9]);
}

#[test]
fn a_macro_template_declares_no_name() {
    let text = "macro_rules! m { ($n:ident) => { struct $n; }; }\npub struct Named;\n";
    assert_eq!(names(text), ["Named"]);
}
