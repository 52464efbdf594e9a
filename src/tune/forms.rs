//! Rule forms: rule files with named holes, so that `plugtop tune` can
//! search the *form* of a rule (what it counts, over how many intervals,
//! against what) and not only its numbers.
//!
//! A form is a rule file in cpuplugd's language whose values may name
//! holes as `${name}`, declared in comment lines that cpuplugd ignores:
//!
//! ```text
//! #@form cpu-real-load
//! #@group cpu
//! #@intent Count busy and idle ticks over a few intervals ...
//! #@choice window 2 intervals := 2
//! #@choice window 4 intervals := 4
//! #@number headroom 0.08 0.01..0.9
//! HOTPLUG="((1 - busy) * onumcpus) < ${headroom}"
//! ```
//!
//! A choice lists its options one line each, the first the default; a
//! number has a default and the range the search takes it over. Filled
//! with its defaults a form is a whole rule file (`plugtop check` passes
//! it). Put into a user's file ([`instantiate`]), only the form's rules of
//! its group (CPU: HOTPLUG and HOTUNPLUG; memory: MEMPLUG, MEMUNPLUG,
//! CMM_INC and CMM_DEC) and the variables they read are taken: the user's
//! limits, the other group's rules and every variable those read carry
//! over unchanged, under the user's names.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::error_chain::innermost;
use crate::rules::config::line_sets;
use crate::rules::{RuleKind, SourceFile};

/// The forms shipped with plugtop (`examples/forms/`).
const BUILT_IN: [(&str, &str); 10] = [
    (
        "cpu-loadavg.conf",
        include_str!("../../examples/forms/cpu-loadavg.conf"),
    ),
    (
        "cpu-real-load.conf",
        include_str!("../../examples/forms/cpu-real-load.conf"),
    ),
    (
        "cpu-headroom.conf",
        include_str!("../../examples/forms/cpu-headroom.conf"),
    ),
    (
        "cpu-steal.conf",
        include_str!("../../examples/forms/cpu-steal.conf"),
    ),
    (
        "cpu-sustained.conf",
        include_str!("../../examples/forms/cpu-sustained.conf"),
    ),
    (
        "mem-free.conf",
        include_str!("../../examples/forms/mem-free.conf"),
    ),
    (
        "mem-free-cache.conf",
        include_str!("../../examples/forms/mem-free-cache.conf"),
    ),
    (
        "mem-backoff.conf",
        include_str!("../../examples/forms/mem-backoff.conf"),
    ),
    (
        "mem-direct-scans.conf",
        include_str!("../../examples/forms/mem-direct-scans.conf"),
    ),
    (
        "mem-scan-steal.conf",
        include_str!("../../examples/forms/mem-scan-steal.conf"),
    ),
];

/// At most this many variants (combinations of choices) per form: the
/// search screens every one.
pub const MAX_VARIANTS: usize = 48;
/// At most this many forms from a `--forms` directory.
pub const MAX_FORMS: usize = 32;
/// At most this many entries of a `--forms` directory are looked at.
const MAX_DIR_ENTRIES: usize = 10_000;
/// A form file's largest size (a rule file is a few KB).
pub const MAX_FORM_BYTES: u64 = 64 << 10;
/// Longest hole name.
const MAX_HOLE_NAME: usize = 32;
/// How deep choices may name other holes in their options.
const MAX_NESTING: usize = 4;

/// Which rules a form writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleGroup {
    Cpu,
    Memory,
}

impl RuleGroup {
    /// The rules the form replaces in the user's file.
    pub fn rules(self) -> &'static [RuleKind] {
        match self {
            RuleGroup::Cpu => &[RuleKind::Hotplug, RuleKind::Hotunplug],
            RuleGroup::Memory => &[
                RuleKind::Memplug,
                RuleKind::Memunplug,
                RuleKind::CmmInc,
                RuleKind::CmmDec,
            ],
        }
    }

    /// The conditions a form of the group must write.
    fn required(self) -> &'static [RuleKind] {
        &self.rules()[..2]
    }

    pub fn word(self) -> &'static str {
        match self {
            RuleGroup::Cpu => "cpu",
            RuleGroup::Memory => "memory",
        }
    }
}

/// One option of a choice: what the user reads, what the file gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Opt {
    pub label: String,
    pub text: String,
}

/// A hole filled by one of a few texts.
#[derive(Debug, Clone, PartialEq)]
pub struct HoleChoice {
    pub name: String,
    pub options: Vec<Opt>,
    /// The line of its first option, for messages.
    pub line: usize,
}

/// A hole whose text follows the option taken in another choice (the
/// names of one kernel's counters, say): one text per option's label.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowingHole {
    pub name: String,
    /// The choice it follows.
    pub choice: String,
    /// The option's label, and the text.
    pub texts: Vec<(String, String)>,
    /// The line of its first text, for messages.
    pub line: usize,
}

/// A hole filled by a number the search moves within `range`.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberHole {
    pub name: String,
    pub default: f64,
    /// The default as written in the form.
    pub written: String,
    pub range: (f64, f64),
}

/// A parsed form.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub name: String,
    /// Where it came from: `built-in` or its path.
    pub origin: String,
    pub group: RuleGroup,
    pub intent: String,
    pub choices: Vec<HoleChoice>,
    pub parts: Vec<FollowingHole>,
    pub numbers: Vec<NumberHole>,
    /// The lines that are not directives or comments, as written.
    body: String,
}

/// Why a form file cannot be used, with where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{origin}:{line}:{column}: {message}")]
pub struct FormError {
    pub origin: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// One combination of options, an index per choice.
pub type Variant = Vec<usize>;

/// The forms shipped with plugtop, parsed.
pub fn built_in() -> Vec<Form> {
    BUILT_IN
        .iter()
        .filter_map(|(name, text)| parse(&format!("built-in {name}"), text.as_bytes()).ok())
        .collect()
}

/// Every `*.conf` form in `dir` (hidden files left out), in name order:
/// at most [`MAX_FORMS`], each at most [`MAX_FORM_BYTES`], read as a
/// regular file (a link to one is followed; a FIFO, a device or a kernel
/// file is refused, never waited on). The first bad one refuses them all,
/// with its line and column.
pub fn load_dir(dir: &Path) -> anyhow::Result<Vec<Form>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| anyhow::anyhow!("--forms {}: {}", dir.display(), innermost(&e)))?;
    let mut names = Vec::new();
    for (seen, entry) in entries.enumerate() {
        if seen >= MAX_DIR_ENTRIES {
            anyhow::bail!(
                "--forms {}: more than {MAX_DIR_ENTRIES} entries; put the forms in a directory of their own",
                dir.display()
            );
        }
        let entry =
            entry.map_err(|e| anyhow::anyhow!("--forms {}: {}", dir.display(), innermost(&e)))?;
        let name = entry.file_name();
        // Hidden files (an editor's lock or backup) are not forms.
        let hidden = name.as_encoded_bytes().first() == Some(&b'.');
        if !hidden && Path::new(&name).extension().is_some_and(|x| x == "conf") {
            names.push(name);
            if names.len() > MAX_FORMS {
                anyhow::bail!(
                    "--forms {}: more than {MAX_FORMS} forms; a search screens every variant of every form",
                    dir.display()
                );
            }
        }
    }
    names.sort();
    if names.is_empty() {
        anyhow::bail!("--forms {}: no form (*.conf) there", dir.display());
    }
    let mut forms = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let shown = path.display().to_string();
        let bytes = crate::kernel::fs::read_named(&path, MAX_FORM_BYTES)
            .map_err(|e| anyhow::anyhow!("{shown}: {}", innermost(&e)))?;
        forms.push(parse(&shown, &bytes)?);
    }
    Ok(forms)
}

fn is_hole_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_HOLE_NAME
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !s.as_bytes()[0].is_ascii_digit()
}

/// Parses a form file.
pub fn parse(origin: &str, bytes: &[u8]) -> Result<Form, FormError> {
    let err = |line: usize, column: usize, message: String| FormError {
        origin: origin.to_string(),
        line,
        column,
        message,
    };
    let text = utf8(origin, bytes)?;
    let mut name = None;
    let mut group = None;
    let mut intent = Vec::new();
    let mut choices: Vec<HoleChoice> = Vec::new();
    let mut numbers: Vec<NumberHole> = Vec::new();
    let mut parts: Vec<FollowingHole> = Vec::new();
    let mut body = String::new();
    let mut body_lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if let Some(c) = line.find(|c: char| c.is_control() && c != '\t') {
            return Err(err(n, c + 1, "a control character".into()));
        }
        let Some(directive) = line.strip_prefix("#@") else {
            if !line.starts_with('#') && !line.trim().is_empty() {
                body.push_str(line);
                body.push('\n');
                body_lines.push((n, line));
            }
            continue;
        };
        let (word, rest) = directive
            .split_once(char::is_whitespace)
            .unwrap_or((directive, ""));
        let rest_col = line.len() - rest.len() + 1;
        let rest = rest.trim();
        match word {
            "form" => name = Some(form_name(origin, n, rest, rest_col)?),
            "group" => {
                group = Some(match rest {
                    "cpu" => RuleGroup::Cpu,
                    "memory" => RuleGroup::Memory,
                    _ => return Err(err(n, rest_col, "the group is `cpu` or `memory`".into())),
                });
            }
            "intent" => intent.push(rest.to_string()),
            "choice" => {
                choice_option(origin, n, rest, rest_col, &mut choices, &numbers)?;
            }
            "part" => {
                part_text(origin, n, rest, rest_col, &choices, &numbers, &mut parts)?;
            }
            "number" => {
                number_hole(origin, n, rest, rest_col, &choices, &mut numbers, &parts)?;
            }
            _ => {
                return Err(err(
                    n,
                    3,
                    format!(
                        "unknown directive `#@{word}` (form, group, intent, choice, part, number)"
                    ),
                ));
            }
        }
    }
    let Some(name) = name else {
        return Err(err(1, 1, "no `#@form NAME` line".into()));
    };
    let Some(group) = group else {
        return Err(err(
            1,
            1,
            "no `#@group cpu` or `#@group memory` line".into(),
        ));
    };
    let first_choice = check_holes(origin, &body_lines, &choices, &parts, &numbers)?;
    let form = Form {
        name,
        origin: origin.to_string(),
        group,
        intent: intent.join(" "),
        choices,
        parts,
        numbers,
        body,
    };
    check_variants(&form, first_choice)?;
    Ok(form)
}

fn choice_option(
    origin: &str,
    n: usize,
    rest: &str,
    rest_col: usize,
    choices: &mut Vec<HoleChoice>,
    numbers: &[NumberHole],
) -> Result<(), FormError> {
    let refuse = |message: String| at(origin, n, rest_col, message);
    let (hole, option) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    if !is_hole_name(hole) {
        return Err(refuse(format!(
            "`{hole}` is not a hole's name (letters, digits and `_`, at most {MAX_HOLE_NAME})"
        )));
    }
    let Some((label, value)) = option.split_once(":=") else {
        return Err(refuse(
            "a choice's option is `#@choice HOLE LABEL := TEXT`".into(),
        ));
    };
    let (label, value) = (label.trim(), value.trim());
    if label.is_empty() || value.is_empty() {
        return Err(refuse("an option needs a label and a text".into()));
    }
    if numbers.iter().any(|h| h.name == hole) {
        return Err(refuse(format!("`{hole}` is a number already")));
    }
    let opt = Opt {
        label: label.to_string(),
        text: value.to_string(),
    };
    match choices.iter_mut().find(|c| c.name == hole) {
        Some(c) => c.options.push(opt),
        None => choices.push(HoleChoice {
            name: hole.to_string(),
            options: vec![opt],
            line: n,
        }),
    }
    Ok(())
}

fn part_text(
    origin: &str,
    n: usize,
    rest: &str,
    rest_col: usize,
    choices: &[HoleChoice],
    numbers: &[NumberHole],
    parts: &mut Vec<FollowingHole>,
) -> Result<(), FormError> {
    let refuse = |message: String| at(origin, n, rest_col, message);
    let mut words = rest.splitn(3, char::is_whitespace);
    let (hole, choice, option) = (
        words.next().unwrap_or(""),
        words.next().unwrap_or(""),
        words.next().unwrap_or(""),
    );
    let Some((label, value)) = option.split_once(":=") else {
        return Err(refuse(
            "a part is `#@part HOLE CHOICE LABEL := TEXT`".into(),
        ));
    };
    if !is_hole_name(hole)
        || choices.iter().any(|c| c.name == hole)
        || numbers.iter().any(|h| h.name == hole)
    {
        return Err(refuse(format!("`{hole}` is not a new hole's name")));
    }
    let Some(c) = choices.iter().find(|c| c.name == choice) else {
        return Err(refuse(format!(
            "the choice `{choice}` is not declared above"
        )));
    };
    let label = label.trim();
    if !c.options.iter().any(|o| o.label == label) {
        return Err(refuse(format!("`{choice}` has no option `{label}`")));
    }
    let text = (label.to_string(), value.trim().to_string());
    match parts.iter_mut().find(|p| p.name == hole) {
        Some(p) if p.choice == choice => p.texts.push(text),
        Some(_) => {
            return Err(refuse(format!("`{hole}` follows another choice above")));
        }
        None => parts.push(FollowingHole {
            name: hole.to_string(),
            choice: choice.to_string(),
            texts: vec![text],
            line: n,
        }),
    }
    Ok(())
}

fn number_hole(
    origin: &str,
    n: usize,
    rest: &str,
    rest_col: usize,
    choices: &[HoleChoice],
    numbers: &mut Vec<NumberHole>,
    parts: &[FollowingHole],
) -> Result<(), FormError> {
    let refuse = |message: String| at(origin, n, rest_col, message);
    let words: Vec<&str> = rest.split_whitespace().collect();
    let [hole, default, range] = words.as_slice() else {
        return Err(refuse("a number is `#@number HOLE DEFAULT LO..HI`".into()));
    };
    if !is_hole_name(hole) {
        return Err(refuse(format!("`{hole}` is not a hole's name")));
    }
    if numbers.iter().any(|h| h.name == *hole)
        || choices.iter().any(|c| c.name == *hole)
        || parts.iter().any(|p| p.name == *hole)
    {
        return Err(refuse(format!("`{hole}` is declared twice")));
    }
    let number = |s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && v.abs() <= 1e12)
    };
    let (Some(d), Some((lo, hi))) = (
        number(default),
        range
            .split_once("..")
            .and_then(|(a, b)| Some((number(a)?, number(b)?))),
    ) else {
        return Err(refuse(
            "a number's default and range are finite numbers (`0.5 0.1..2`)".into(),
        ));
    };
    let plain = default.starts_with(|c: char| c.is_ascii_digit());
    if !(lo < hi && lo <= d && d <= hi && plain) {
        return Err(refuse(format!(
            "the default {default} must lie in {lo}..{hi} (LO below HI), written as a plain number"
        )));
    }
    numbers.push(NumberHole {
        name: hole.to_string(),
        default: d,
        written: default.to_string(),
        range: (lo, hi),
    });
    Ok(())
}

/// Every hole named is declared and every one declared is named; not too
/// many variants. The line of the first choice, for later messages.
fn check_holes(
    origin: &str,
    body_lines: &[(usize, &str)],
    choices: &[HoleChoice],
    parts: &[FollowingHole],
    numbers: &[NumberHole],
) -> Result<usize, FormError> {
    // Every hole named is declared, every one declared is named.
    let mut named = HashSet::new();
    for (n, line) in body_lines {
        for (col, hole) in holes_in(line) {
            if hole.is_empty() {
                return Err(at(
                    origin,
                    *n,
                    col + 1,
                    "`${` without a hole's name and `}`".into(),
                ));
            }
            if !declared(choices, parts, numbers, hole) {
                return Err(at(
                    origin,
                    *n,
                    col + 1,
                    format!("`${{{hole}}}` is not declared"),
                ));
            }
            named.insert(hole.to_string());
        }
    }
    for c in choices {
        for o in &c.options {
            for (_, hole) in holes_in(&o.text) {
                if !declared(choices, parts, numbers, hole) {
                    return Err(at(
                        origin,
                        1,
                        1,
                        format!(
                            "an option of `{}` names `${{{hole}}}`, which is not declared",
                            c.name
                        ),
                    ));
                }
                named.insert(hole.to_string());
            }
        }
    }
    for p in parts {
        for (_, text) in &p.texts {
            for (_, hole) in holes_in(text) {
                if !declared(choices, parts, numbers, hole) {
                    return Err(at(
                        origin,
                        1,
                        1,
                        format!(
                            "a text of `{}` names `${{{hole}}}`, which is not declared",
                            p.name
                        ),
                    ));
                }
                named.insert(hole.to_string());
            }
        }
        // The choice a part follows is named through it.
        named.insert(p.choice.clone());
        if let Some(c) = choices.iter().find(|c| c.name == p.choice)
            && let Some(o) = c
                .options
                .iter()
                .find(|o| !p.texts.iter().any(|(l, _)| *l == o.label))
        {
            return Err(at(
                origin,
                1,
                1,
                format!(
                    "`{}` has no text for `{}`'s option `{}`",
                    p.name, c.name, o.label
                ),
            ));
        }
    }
    let all: Vec<&str> = choices
        .iter()
        .map(|c| c.name.as_str())
        .chain(parts.iter().map(|p| p.name.as_str()))
        .chain(numbers.iter().map(|h| h.name.as_str()))
        .collect();
    if let Some(unused) = all.iter().find(|h| !named.contains(**h)) {
        return Err(at(
            origin,
            1,
            1,
            format!("the hole `{unused}` is declared but nothing names it"),
        ));
    }
    count_variants(origin, choices)
}

/// The line of the first choice, when the variants are few enough.
fn count_variants(origin: &str, choices: &[HoleChoice]) -> Result<usize, FormError> {
    let variants = choices
        .iter()
        .try_fold(1usize, |n, c| n.checked_mul(c.options.len()))
        .unwrap_or(usize::MAX);
    let first_choice = choices.first().map_or(1, |c| c.line);
    if variants > MAX_VARIANTS {
        return Err(at(
            origin,
            first_choice,
            1,
            format!("{variants} variants (combinations of choices); at most {MAX_VARIANTS}"),
        ));
    }
    Ok(first_choice)
}

/// Every variant of `form` fills (no choice names itself in a loop, nothing
/// grows past a form file's size) and writes its group's conditions.
fn check_variants(form: &Form, first_choice: usize) -> Result<(), FormError> {
    let origin = form.origin.as_str();
    let group = form.group;
    // Every variant fills (no choice names itself in a loop) and writes
    // the group's conditions.
    for v in form.variants() {
        let filled = form.fill(&v).map_err(|m| at(origin, first_choice, 1, m))?;
        let lines = entries(
            &unmark(&filled)
                .map_err(|m| at(origin, 1, 1, m.to_string()))?
                .0,
        );
        for kind in group.required() {
            if !lines.iter().any(|e| e.rule == Some(*kind)) {
                return Err(at(
                    origin,
                    1,
                    1,
                    format!("a {} form writes {}", group.word(), kind.file_name()),
                ));
            }
        }
    }
    Ok(())
}

/// A `#@form` line's name: letters, digits, `-` and `_`.
fn form_name(origin: &str, n: usize, rest: &str, rest_col: usize) -> Result<String, FormError> {
    let refuse = |message: String| at(origin, n, rest_col, message);
    let good = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    if rest.is_empty() || !rest.bytes().all(good) {
        return Err(refuse(
            "a form's name is letters, digits, `-` and `_`".into(),
        ));
    }
    Ok(rest.to_string())
}

/// `bytes` as text, or where they stop being UTF-8.
fn utf8<'b>(origin: &str, bytes: &'b [u8]) -> Result<&'b str, FormError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let bad = e.valid_up_to();
        let line = bytes[..bad].iter().filter(|b| **b == b'\n').count() + 1;
        let start = bytes[..bad]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |p| p + 1);
        at(origin, line, bad - start + 1, "not UTF-8 text".into())
    })
}

/// A form's error at `line`:`column`.
fn at(origin: &str, line: usize, column: usize, message: String) -> FormError {
    FormError {
        origin: origin.to_string(),
        line,
        column,
        message,
    }
}

fn declared(
    choices: &[HoleChoice],
    parts: &[FollowingHole],
    numbers: &[NumberHole],
    hole: &str,
) -> bool {
    choices.iter().any(|c| c.name == hole)
        || parts.iter().any(|p| p.name == hole)
        || numbers.iter().any(|h| h.name == hole)
}

/// `${name}` references in `text`: where each starts, and the name.
fn holes_in(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("${") {
        let start = from + at;
        let Some(len) = text[start + 2..].find('}') else {
            out.push((start, ""));
            break;
        };
        out.push((start, &text[start + 2..start + 2 + len]));
        from = start + 2 + len + 1;
    }
    out
}

/// Marks a number hole's default in a filled text until it is placed.
const MARK_START: char = '\u{1}';
const MARK_MID: char = '\u{3}';
const MARK_END: char = '\u{2}';

impl Form {
    /// A rule file as a form without holes: its `group`'s rules and their
    /// variables, put into another file as any form is (the tune searches
    /// the `--against` file's rules with their numbers moved).
    pub fn of_file(name: &str, origin: &str, group: RuleGroup, text: &str) -> Form {
        Form {
            name: name.to_string(),
            origin: origin.to_string(),
            group,
            intent: format!("The {} rules of {origin}.", group.word()),
            choices: Vec::new(),
            parts: Vec::new(),
            numbers: Vec::new(),
            // Marks are this module's own: a file that holds them is
            // taken without them.
            body: text.replace([MARK_START, MARK_MID, MARK_END], ""),
        }
    }

    /// Every combination of options, the defaults first.
    pub fn variants(&self) -> Vec<Variant> {
        let mut out: Vec<Variant> = vec![Vec::new()];
        for c in &self.choices {
            out = out
                .into_iter()
                .flat_map(|v| {
                    (0..c.options.len()).map(move |o| {
                        let mut v = v.clone();
                        v.push(o);
                        v
                    })
                })
                .collect();
        }
        out
    }

    /// The labels of a variant's options: `window: 2 intervals`.
    pub fn describe(&self, variant: &Variant) -> Vec<(String, String)> {
        self.choices
            .iter()
            .zip(variant)
            .filter_map(|(c, &o)| Some((c.name.clone(), c.options.get(o)?.label.clone())))
            .collect()
    }

    /// The body with the variant's options put in, and each number hole
    /// as its default between marks.
    fn fill(&self, variant: &Variant) -> Result<String, String> {
        let mut text = self.body.clone();
        // Options that name other holes multiply: the text is measured
        // before it grows, never past a form file's size.
        let put = |text: &mut String, hole: &str, with: &str| -> Result<(), String> {
            let n = text.matches(hole).count();
            let grown = text.len() - n * hole.len() + n * with.len();
            if grown > MAX_FORM_BYTES as usize {
                return Err(format!(
                    "filling `{hole}` makes the rules {grown} bytes long; at most {} KiB",
                    MAX_FORM_BYTES >> 10
                ));
            }
            *text = text.replace(hole, with);
            Ok(())
        };
        for _ in 0..=MAX_NESTING {
            let mut changed = false;
            for (c, &o) in self.choices.iter().zip(variant) {
                let hole = format!("${{{}}}", c.name);
                if text.contains(&hole) {
                    let opt = c.options.get(o).ok_or("no such option")?;
                    put(&mut text, &hole, &opt.text)?;
                    changed = true;
                }
            }
            for p in &self.parts {
                let hole = format!("${{{}}}", p.name);
                if text.contains(&hole) {
                    let (c, &o) = self
                        .choices
                        .iter()
                        .zip(variant)
                        .find(|(c, _)| c.name == p.choice)
                        .ok_or("a part follows no choice")?;
                    let label = &c.options.get(o).ok_or("no such option")?.label;
                    let (_, t) = p
                        .texts
                        .iter()
                        .find(|(l, _)| l == label)
                        .ok_or("a part has no text for an option")?;
                    put(&mut text, &hole, t)?;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        if self
            .choices
            .iter()
            .map(|c| &c.name)
            .chain(self.parts.iter().map(|p| &p.name))
            .any(|c| text.contains(&format!("${{{c}}}")))
        {
            return Err(format!(
                "choices name each other more than {MAX_NESTING} deep (or in a loop)"
            ));
        }
        for (i, h) in self.numbers.iter().enumerate() {
            put(
                &mut text,
                &format!("${{{}}}", h.name),
                &format!("{MARK_START}{i}{MARK_MID}{}{MARK_END}", h.written),
            )?;
        }
        Ok(text)
    }

    /// The form filled with its defaults: a whole rule file.
    pub fn with_defaults(&self, variant: &Variant) -> Result<String, String> {
        Ok(unmark(&self.fill(variant)?)?.0)
    }
}

/// `text` with each marked number hole written as its default, and where
/// each stands (byte offset, the hole's index).
fn unmark(text: &str) -> Result<(String, Vec<(usize, usize)>), String> {
    let mut clean = String::with_capacity(text.len());
    let mut marks = Vec::new();
    let mut rest = text;
    while let Some(s) = rest.find(MARK_START) {
        clean.push_str(&rest[..s]);
        let after = &rest[s + MARK_START.len_utf8()..];
        let (Some(m), Some(e)) = (after.find(MARK_MID), after.find(MARK_END)) else {
            return Err("a number hole left open".into());
        };
        let hole: usize = after[..m].parse().map_err(|_| "a number hole's mark")?;
        marks.push((clean.len(), hole));
        clean.push_str(&after[m + MARK_MID.len_utf8()..e]);
        rest = &after[e + MARK_END.len_utf8()..];
    }
    clean.push_str(rest);
    Ok((clean, marks))
}

/// One line of a rule file that sets something.
struct SetLine {
    /// The name, whitespace removed.
    name: String,
    rule: Option<RuleKind>,
    setting: bool,
    /// The value between the first and last quote, whitespace removed.
    value: String,
    /// Line index in the file.
    line: usize,
}

/// The lines of `text` that set a rule, a setting or a variable, as
/// cpuplugd reads them (comments and lines without `=` skipped).
fn entries(text: &str) -> Vec<SetLine> {
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        if line.starts_with('#') {
            continue;
        }
        let stripped: String = line.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let Some((name, rest)) = stripped.split_once('=') else {
            continue;
        };
        let value = match (rest.find('"'), rest.rfind('"')) {
            (Some(a), Some(b)) if a < b => rest[a + 1..b].to_string(),
            _ => String::new(),
        };
        let (rule, setting) = line_sets(name.as_bytes());
        out.push(SetLine {
            name: name.to_string(),
            rule,
            setting,
            value,
            line: i,
        });
    }
    out
}

/// The variables `entries` define, by name, with their values (the first
/// definition counts; a second is an error cpuplugd refuses anyway).
fn variables(entries: &[SetLine]) -> HashMap<&str, &str> {
    let mut vars = HashMap::new();
    for e in entries.iter().filter(|e| e.rule.is_none() && !e.setting) {
        vars.entry(e.name.as_str()).or_insert(e.value.as_str());
    }
    vars
}

/// The values of the rules of `entries` that `wanted` picks.
fn rules_read(entries: &[SetLine], wanted: impl Fn(RuleKind) -> bool) -> Vec<&str> {
    entries
        .iter()
        .filter(|e| e.rule.is_some_and(&wanted))
        .map(|e| e.value.as_str())
        .collect()
}

/// `text` with each name it reads (an identifier not after a `.`, not a
/// number) put through `replace`; `None` when `replace` changed none.
fn map_names(text: &str, mut replace: impl FnMut(&str) -> Option<String>) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut any) = (0, false);
    while i < b.len() {
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            let after_dot = start > 0 && b[start - 1] == b'.';
            let name = !(after_dot || b[start].is_ascii_digit());
            match replace(word).filter(|_| name) {
                Some(new) => {
                    any = true;
                    out.push_str(&new);
                }
                None => out.push_str(word),
            }
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    any.then_some(out)
}

/// The names a value reads.
fn names_in(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    map_names(value, |w| {
        out.push(w.to_string());
        None
    });
    out
}

/// The variables `roots` read, directly or through each other.
fn closure<'a>(roots: &[&'a str], vars: &HashMap<&'a str, &'a str>) -> HashSet<&'a str> {
    let mut seen = HashSet::new();
    let mut todo: Vec<String> = roots.iter().flat_map(|v| names_in(v)).collect();
    while let Some(n) = todo.pop() {
        if let Some((name, value)) = vars.get_key_value(n.as_str())
            && seen.insert(*name)
        {
            todo.extend(names_in(value));
        }
    }
    seen
}

/// Replaces the name `from` by `to` wherever `line` reads it.
fn rename(line: &str, from: &str, to: &str) -> String {
    map_names(line, |w| (w == from).then(|| to.to_string())).unwrap_or_else(|| line.to_string())
}

/// Where a number hole's default stands in a file (a byte offset), and the
/// range the search takes it over.
pub type NumberAt = (usize, (f64, f64));

/// A form put into a user's file.
#[derive(Debug, Clone)]
pub struct Instance {
    pub file: SourceFile,
    /// Where each number hole's default stands in the file, and its range.
    pub numbers: Vec<NumberAt>,
    /// The form, and the labels of the options taken.
    pub form: FormUse,
}

/// Which form a candidate is, for the report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FormUse {
    pub name: String,
    pub origin: String,
    pub intent: String,
    /// Each choice's name and the label of the option taken.
    pub choices: Vec<(String, String)>,
}

impl FormUse {
    /// `cpu-real-load (window: 4 intervals; idle: idle and iowait)`.
    pub fn title(&self) -> String {
        if self.choices.is_empty() {
            return self.name.clone();
        }
        let said: Vec<String> = self
            .choices
            .iter()
            .map(|(c, l)| format!("{c}: {l}"))
            .collect();
        format!("{} ({})", self.name, said.join("; "))
    }
}

/// `form` with `variant` put into `user`: the group's rules of the user's
/// file and the variables only they read are replaced by the form's (its
/// variables renamed where a name the user keeps is taken), in the place
/// the first of them stood; everything else stays as written. A comment
/// on top names the form.
pub fn instantiate(form: &Form, variant: &Variant, user: &SourceFile) -> Result<Instance, String> {
    let filled = form.fill(variant)?;
    let text = String::from_utf8_lossy(user.bytes());
    let user_entries = entries(&text);
    let group = form.group.rules();
    // The user's variables (the first definition counts; a second is an
    // error cpuplugd refuses anyway), what the kept rules read, and what
    // only the replaced ones read.
    let user_vars = variables(&user_entries);
    let kept = closure(
        &rules_read(&user_entries, |k| !group.contains(&k)),
        &user_vars,
    );
    let gone: HashSet<&str> = closure(
        &rules_read(&user_entries, |k| group.contains(&k)),
        &user_vars,
    )
    .into_iter()
    .filter(|v| !kept.contains(v))
    .collect();
    // The form's lines: its group's rules and the variables they read.
    let form_entries = entries(&filled);
    let form_vars = variables(&form_entries);
    let needed = closure(
        &rules_read(&form_entries, |k| group.contains(&k)),
        &form_vars,
    );
    let form_lines: Vec<&str> = filled.split('\n').collect();
    let taken: HashSet<&str> = user_vars
        .keys()
        .copied()
        .filter(|n| !gone.contains(n))
        .collect();
    let mut renames: Vec<(String, String)> = Vec::new();
    for name in form_vars.keys().filter(|n| needed.contains(*n)) {
        if taken.contains(name) {
            let new = (1..)
                .map(|i| format!("{name}_{i}"))
                .find(|c| !taken.contains(c.as_str()) && !form_vars.contains_key(c.as_str()))
                .unwrap_or_else(|| format!("{name}_form"));
            renames.push((name.to_string(), new));
        }
    }
    renames.sort();
    let mut block = Vec::new();
    for e in &form_entries {
        let wanted = match e.rule {
            Some(k) => group.contains(&k),
            None => !e.setting && needed.contains(e.name.as_str()),
        };
        if wanted {
            let mut line = form_lines[e.line].to_string();
            for (from, to) in &renames {
                line = rename(&line, from, to);
            }
            block.push(line);
        }
    }
    // The user's file with the block where the first replaced line was.
    let dropped: HashSet<usize> = user_entries
        .iter()
        .filter(|e| match e.rule {
            Some(k) => group.contains(&k),
            None => !e.setting && gone.contains(e.name.as_str()),
        })
        .map(|e| e.line)
        .collect();
    let (out, numbers) = splice(form, user, &text, &block, &dropped)?;
    Ok(Instance {
        file: SourceFile::new(user.name(), out),
        numbers,
        form: FormUse {
            name: form.name.clone(),
            origin: form.origin.clone(),
            intent: form.intent.clone(),
            choices: form.describe(variant),
        },
    })
}

/// The user's file with the lines `dropped` taken out and the form's
/// `block` put where the first of them was (at the end when none was),
/// under a comment naming the form; where each number hole's default
/// stands, and its range.
fn splice(
    form: &Form,
    user: &SourceFile,
    text: &str,
    block: &[String],
    dropped: &HashSet<usize>,
) -> Result<(Vec<u8>, Vec<NumberAt>), String> {
    let at = dropped.iter().min().copied();
    // The form's lines with the number holes' marks taken out (the user's
    // bytes are never read for marks), in the file's own line ends.
    let crlf = {
        let lines = text.split('\n').count().max(1);
        text.split('\n').filter(|l| l.ends_with('\r')).count() * 2 > lines
    };
    let end = if crlf { "\r\n" } else { "\n" };
    let joined: String = block.iter().map(|l| format!("{l}{end}")).collect();
    let (block_text, marks) = unmark(&joined)?;
    // A name with a line end in it would end the comment early.
    let plain = |t: &str| t.replace(|c: char| c.is_control(), "?");
    let mut out: Vec<u8> = format!(
        "# plugtop tune: the {} form ({}), from {}{end}",
        plain(&form.name),
        plain(&form.origin),
        plain(user.name())
    )
    .into_bytes();
    let mut block_at = None;
    let user_lines: Vec<&[u8]> = user.bytes().split(|b| *b == b'\n').collect();
    let last = user_lines.len().saturating_sub(1);
    for (i, line) in user_lines.iter().enumerate() {
        if Some(i) == at {
            block_at = Some(out.len());
            out.extend_from_slice(block_text.as_bytes());
        }
        if dropped.contains(&i) {
            continue;
        }
        out.extend_from_slice(line);
        if i < last {
            out.push(b'\n');
        }
    }
    if at.is_none() {
        if !out.ends_with(b"\n") {
            out.extend_from_slice(end.as_bytes());
        }
        block_at = Some(out.len());
        out.extend_from_slice(block_text.as_bytes());
    }
    let base = block_at.unwrap_or(0);
    let numbers = marks
        .into_iter()
        .filter_map(|(at, hole)| Some((base + at, form.numbers.get(hole)?.range)))
        .collect();
    Ok((out, numbers))
}

/// `value` with every variable it names written out once, in one pass;
/// `None` when it names none.
fn expand_once(value: &str, vars: &HashMap<&str, &str>) -> Option<String> {
    map_names(value, |w| vars.get(w).map(|t| format!("({t})")))
}

/// The group's rules of `text` with every variable written out and every
/// number a `#`: two files whose rules have the same shape compare equal.
/// `None` when the expansion grows past a few KB.
fn shape(text: &str, group: RuleGroup) -> Option<Vec<String>> {
    const MAX_SHAPE: usize = 16 << 10;
    let es = entries(text);
    let mut vars: HashMap<&str, &str> = HashMap::new();
    for e in &es {
        if e.rule.is_none() && !e.setting {
            vars.entry(e.name.as_str()).or_insert(e.value.as_str());
        }
    }
    let mut out = Vec::new();
    for kind in group.required() {
        let e = es.iter().rev().find(|e| e.rule == Some(*kind))?;
        let mut s = e.value.clone();
        for _ in 0..16 {
            let Some(next) = expand_once(&s, &vars) else {
                break;
            };
            s = next;
            if s.len() > MAX_SHAPE {
                return None;
            }
        }
        // Numbers (not history indices) become `#`; parentheses go (a
        // variable's text stands in them wherever it is named).
        s.retain(|c| c != '(' && c != ')');
        let mut shaped = String::with_capacity(s.len());
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            // A history index stays: it is part of the form (its window).
            let index = i > 0 && b[i - 1] == b'[';
            if b[i].is_ascii_digit() && !word_before && !index {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
                shaped.push('#');
            } else {
                shaped.push(b[i] as char);
                i += 1;
            }
        }
        out.push(shaped);
    }
    Some(out)
}

/// The form (and its options) whose rules have the shape of `file`'s, of
/// `forms`, group by group.
pub fn matching(file: &SourceFile, forms: &[Form]) -> Vec<FormUse> {
    let text = String::from_utf8_lossy(file.bytes());
    let mut found = Vec::new();
    for group in [RuleGroup::Cpu, RuleGroup::Memory] {
        let Some(mine) = shape(&text, group) else {
            continue;
        };
        'forms: for form in forms.iter().filter(|f| f.group == group) {
            for v in form.variants() {
                let Ok(t) = form.with_defaults(&v) else {
                    continue;
                };
                if shape(&t, group).as_ref() == Some(&mine) {
                    found.push(FormUse {
                        name: form.name.clone(),
                        origin: form.origin.clone(),
                        intent: form.intent.clone(),
                        choices: form.describe(&v),
                    });
                    break 'forms;
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "#@form t\n#@group cpu\n#@intent test\n#@choice load average := loadavg\n#@choice load tasks := runnable_proc\n#@number up 0.75 0..4\nHOTPLUG=\"${load} > onumcpus + ${up}\"\nHOTUNPLUG=\"${load} < onumcpus - 1\"\n";

    #[test]
    fn every_shipped_form_parses() {
        for (name, text) in BUILT_IN {
            if let Err(e) = parse(name, text.as_bytes()) {
                panic!("{e}");
            }
        }
        assert_eq!(built_in().len(), BUILT_IN.len());
    }

    /// The facts of the simulated guest, on a current or a 2.6 kernel.
    fn facts(old_kernel: bool) -> crate::rules::SystemFacts {
        let text = "name = \"t\"\ncpus = 4\nonline = 2\nmemory_mib = 2048\nduration = \"1:00\"\n[[phases]]\nstart = \"0:00\"\nthreads = 1\n";
        let scenario = crate::sim::Scenario::parse("t", text).expect("scenario");
        crate::sim::facts(&crate::sim::Guest::new(&scenario, old_kernel))
    }

    /// What `plugtop check` says of every shipped form filled with its
    /// defaults (for a current kernel), and of every variant on the kernel
    /// whose names it takes.
    #[test]
    fn every_shipped_form_filled_with_its_defaults_loads_without_a_finding() {
        for form in built_in() {
            for (i, variant) in form.variants().into_iter().enumerate() {
                let zoned = form
                    .describe(&variant)
                    .iter()
                    .any(|(_, l)| l.contains("2.6"));
                let text = form.with_defaults(&variant).expect("filled");
                let file = SourceFile::new(&form.name, text.into_bytes());
                let outcome = crate::rules::load(&file, &facts(zoned));
                let said: Vec<String> = outcome
                    .diagnostics
                    .iter()
                    .map(|d| format!("{:?} {}", d.severity, d.message))
                    .collect();
                let what = format!("{} #{i} {:?}", form.name, form.describe(&variant));
                assert!(outcome.refusal.is_none(), "{what}: {:?}", outcome.refusal);
                assert!(said.is_empty(), "{what}: {said:?}");
            }
        }
    }

    #[test]
    fn a_form_lists_its_variants_defaults_first() {
        let f = parse("t", SMALL.as_bytes()).expect("form");
        assert_eq!(f.variants(), vec![vec![0], vec![1]]);
        assert_eq!(
            f.with_defaults(&vec![1]).expect("filled"),
            "HOTPLUG=\"runnable_proc > onumcpus + 0.75\"\nHOTUNPLUG=\"runnable_proc < onumcpus - 1\"\n"
        );
    }

    #[test]
    fn bad_forms_are_refused_with_line_and_column() {
        let cases = [
            ("#@group cpu\nHOTPLUG=\"1\"\n", "no `#@form"),
            ("#@form x\n#@group gpu\n", "2:9"),
            (
                "#@form x\n#@group cpu\nHOTPLUG=\"${nope}\"\nHOTUNPLUG=\"0\"\n",
                "3:10",
            ),
            (
                "#@form x\n#@group cpu\n#@number a 5 0..1\nHOTPLUG=\"${a}\"\nHOTUNPLUG=\"0\"\n",
                "3:",
            ),
            ("#@form x\n#@group cpu\n#@frob\n", "3:3"),
            ("#@form x\n#@group cpu\nHOTPLUG=\"1\"\n", "writes HOTUNPLUG"),
            (
                "#@form x\n#@group cpu\n#@choice a one := ${b}\n#@choice b one := ${a}\nHOTPLUG=\"${a}\"\nHOTUNPLUG=\"0\"\n",
                "loop",
            ),
        ];
        for (text, said) in cases {
            let e = parse("f", text.as_bytes()).expect_err(text);
            assert!(e.to_string().contains(said), "{text:?}: {e}");
        }
        let mut many = String::from("#@form x\n#@group cpu\n");
        for c in 0..7 {
            many.push_str(&format!("#@choice c{c} a := 1\n#@choice c{c} b := 2\n"));
        }
        many.push_str("HOTPLUG=\"${c0}+${c1}+${c2}+${c3}+${c4}+${c5}+${c6}\"\nHOTUNPLUG=\"0\"\n");
        let e = parse("f", many.as_bytes()).expect_err("128 variants");
        assert!(e.to_string().contains("128 variants"), "{e}");
    }

    #[test]
    fn an_instance_keeps_the_user_s_limits_memory_rules_and_names() {
        let form = "#@form t\n#@group cpu\n#@number up 0.75 0..4\nUPDATE=\"5\"\nbusy=\"cpustat.user[0] - cpustat.user[1]\"\nfree=\"2\"\nHOTPLUG=\"busy > ${up}\"\nHOTUNPLUG=\"busy < 1\"\nMEMPLUG=\"0\"\n";
        let f = parse("t", form.as_bytes()).expect("form");
        let user = SourceFile::new(
            "u.conf",
            b"UPDATE=\"2\"\nCPU_MAX=\"0\"\nbusy=\"meminfo.MemFree\"\nold=\"loadavg\"\nHOTPLUG=\"old > 1\"\nHOTUNPLUG=\"old < 1\"\nMEMPLUG=\"busy < 100\"\nMEMUNPLUG=\"0\"\n".to_vec(),
        );
        let i = instantiate(&f, &vec![], &user).expect("instance");
        let text = String::from_utf8_lossy(i.file.bytes()).into_owned();
        assert_eq!(
            text,
            "# plugtop tune: the t form (t), from u.conf\nUPDATE=\"2\"\nCPU_MAX=\"0\"\nbusy=\"meminfo.MemFree\"\nbusy_1=\"cpustat.user[0] - cpustat.user[1]\"\nHOTPLUG=\"busy_1 > 0.75\"\nHOTUNPLUG=\"busy_1 < 1\"\nMEMPLUG=\"busy < 100\"\nMEMUNPLUG=\"0\"\n"
        );
        assert_eq!(i.numbers.len(), 1);
        assert_eq!(&text[i.numbers[0].0..i.numbers[0].0 + 4], "0.75");
        assert_eq!(i.numbers[0].1, (0.0, 4.0));
    }

    #[test]
    fn a_file_is_matched_to_the_form_it_has_the_shape_of() {
        let f = parse("t", SMALL.as_bytes()).expect("form");
        let user = SourceFile::new(
            "u.conf",
            b"x=\"runnable_proc\"\nHOTPLUG=\"x > onumcpus + 2\"\nHOTUNPLUG=\"x < onumcpus - 3\"\n"
                .to_vec(),
        );
        let m = matching(&user, std::slice::from_ref(&f));
        assert_eq!(m.len(), 1);
        assert_eq!(
            m[0].choices,
            vec![("load".to_string(), "tasks".to_string())]
        );
        let other = SourceFile::new(
            "o.conf",
            b"HOTPLUG=\"idle < 2\"\nHOTUNPLUG=\"idle > 3\"\n".to_vec(),
        );
        assert!(matching(&other, &[f]).is_empty());
    }

    #[test]
    fn control_bytes_and_other_encodings_in_the_user_s_file_stay_as_they_were() {
        let f = parse("t", SMALL.as_bytes()).expect("form");
        let mut bytes =
            b"# caf\xe9 \x01\x02\x03 x\r\nUPDATE=\"1\"\r\nHOTPLUG=\"1\"\r\nHOTUNPLUG=\"0\"\r\n"
                .to_vec();
        let user = SourceFile::new("a\nCMM_MAX=\"7\".conf", bytes.clone());
        let i = instantiate(&f, &vec![0], &user).expect("instance");
        let out = i.file.bytes();
        // The comment's bytes are kept; the name's line end is not.
        bytes.truncate(16);
        assert!(out.windows(bytes.len()).any(|w| w == bytes.as_slice()));
        let first_line = out.split(|b| *b == b'\n').next().unwrap_or(&[]);
        assert!(
            !out.starts_with(b"CMM_MAX")
                && !out
                    .split(|b| *b == b'\n')
                    .nth(1)
                    .is_some_and(|l| l.starts_with(b"CMM_MAX")),
            "{first_line:?}"
        );
        // The form's lines take the file's CRLF, and the hole's default
        // stands where the instance says.
        let text = String::from_utf8_lossy(out);
        assert!(
            text.contains("HOTPLUG=\"loadavg > onumcpus + 0.75\"\r\n"),
            "{text:?}"
        );
        let (at, _) = i.numbers[0];
        assert_eq!(&out[at..at + 4], b"0.75");
    }

    #[test]
    fn doubling_variables_do_not_blow_the_shape_up() {
        let mut text = String::from("a0=\"loadavg\"\n");
        for i in 1..40 {
            text.push_str(&format!("a{i}=\"a{} + a{}\"\n", i - 1, i - 1));
        }
        text.push_str("HOTPLUG=\"a39 > 1\"\nHOTUNPLUG=\"a39 < 1\"\n");
        assert!(shape(&text, RuleGroup::Cpu).is_none());
    }
}

/// Failing tests from the r40 review: hostile forms and user files.
#[cfg(test)]
mod hostile_review {
    use super::*;

    const USER: &[u8] = b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"loadavg > onumcpus + 0.75\"\nHOTUNPLUG=\"loadavg < onumcpus - 0.25\"\n";

    fn headroom() -> Form {
        built_in()
            .into_iter()
            .find(|f| f.name == "cpu-headroom")
            .expect("shipped")
    }

    /// Choices that name each other many times over grow the filled text
    /// by a factor per level: an 18 KB form asked for 4.6 GB and aborted
    /// `plugtop tune --forms`. Here two levels of 200 give 40,000 copies
    /// (a few MB); a form whose filled text is far past any rule file
    /// must be refused with its line, not filled.
    #[test]
    fn a_form_whose_options_multiply_is_refused_before_it_grows() {
        let mut s = String::from("#@form grow\n#@group cpu\n");
        s.push_str(&format!("#@choice a x := {}\n", "${b}+".repeat(200)));
        s.push_str(&format!(
            "#@choice b x := {}\n",
            "cpustat.user[0]+".repeat(200)
        ));
        s.push_str("HOTPLUG=\"${a}1 > 1\"\nHOTUNPLUG=\"0\"\n");
        match parse("grow.conf", s.as_bytes()) {
            Ok(f) => panic!("`{}` parsed: its filled text is megabytes", f.name),
            Err(e) => assert!(e.line > 1, "{e}"),
        }
    }

    /// plugtop's hole marks are bytes 1, 2 and 3: a user's comment with
    /// such a byte made every instance fail ("a number hole left open"),
    /// and every form was skipped without a word.
    #[test]
    fn a_control_byte_in_a_user_comment_keeps_the_forms() {
        let mut user = b"# pasted from a terminal: \x01 \x03 \x02\n".to_vec();
        user.extend_from_slice(USER);
        let f = headroom();
        let i = instantiate(&f, &f.variants()[0], &SourceFile::new("u.conf", user))
            .expect("an instance");
        assert!(i.file.bytes().starts_with(b"# plugtop tune"));
        assert!(
            i.file.bytes().windows(3).any(|w| w == b"\x01 \x03"),
            "the comment is kept as written"
        );
    }

    /// A Latin-1 comment came out as U+FFFD in the written file.
    #[test]
    fn non_utf8_bytes_of_a_user_comment_are_kept() {
        let mut user = b"# caf\xe9\n".to_vec();
        user.extend_from_slice(USER);
        let f = headroom();
        let i = instantiate(&f, &f.variants()[0], &SourceFile::new("u.conf", user))
            .expect("an instance");
        assert!(
            i.file.bytes().windows(6).any(|w| w == b"# caf\xe9"),
            "{}",
            String::from_utf8_lossy(i.file.bytes())
        );
    }

    /// The instance's first comment names the user's file as given: a
    /// newline in it wrote `CMM_MAX="7"` as a line of the rule file.
    #[test]
    fn a_newline_in_the_user_file_name_stays_in_the_comment() {
        let f = headroom();
        let i = instantiate(
            &f,
            &f.variants()[0],
            &SourceFile::new("a\nCMM_MAX=\"7\"\nb.conf", USER.to_vec()),
        )
        .expect("an instance");
        let text = String::from_utf8_lossy(i.file.bytes()).into_owned();
        assert!(!text.lines().any(|l| l.starts_with("CMM_MAX")), "{text}");
    }

    /// `plugtop check` on a real-load file with a 5-interval window said
    /// "window: 2 intervals": every number (history indices too) shapes
    /// to `#`, so the first variant matched.
    #[test]
    fn check_names_the_window_a_file_has() {
        let f = built_in()
            .into_iter()
            .find(|f| f.name == "cpu-real-load")
            .expect("shipped");
        let v = f
            .variants()
            .into_iter()
            .find(|v| f.describe(v)[0].1 == "5 intervals")
            .expect("a 5-interval variant");
        let text = f.with_defaults(&v).expect("filled");
        let m = matching(&SourceFile::new("w5.conf", text.into_bytes()), &[f]);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].choices[0].1, "5 intervals", "{:?}", m[0].choices);
    }
}
