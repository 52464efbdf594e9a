//! Reading a rule file line by line exactly as cpuplugd does (docs/semantics.md
//! §1 and §4-5): whitespace removal, quotes, prefix-matched settings,
//! variables inlined into rules as they are read, and the start-up checks
//! that decide which groups run. Unlike the daemon, loading does not stop at
//! the first problem: every line is looked at so `plugtop check` can report
//! everything at once, while [`LoadOutcome::refusal`] keeps the one message
//! cpuplugd would have stopped with.

use std::collections::{HashMap, HashSet};

use super::diagnostic::{Diagnostic, DiagnosticCode, Note};
use super::expr::{Assigned, NodeId, NodeKind, RESERVED_NAMES, RuleKind, Setting};
use super::lint;
use super::parser::{self, ExprBuilder, FieldNames, MAX_NAME, Text, Unit, VarDef};
use super::ruleset::{
    Rule, RuleSet, Settings, describe_missing_cpu, describe_missing_memory, memory_verdict,
};
use super::source::{SourceFile, Span};
use super::suggest;
use crate::kernel::SystemFacts;

/// cpuplugd's longest line, without its newline.
pub const MAX_LINE: usize = 2048;
/// cpuplugd's deepest history index.
pub const MAX_HISTORY: u32 = 100;
pub use super::parser::VARIABLE_BUFFER;

/// What cpuplugd would have said when refusing the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub message: String,
    pub span: Span,
}

/// The result of loading: the rules as far as they could be read, every
/// finding, and whether cpuplugd would have refused the file.
#[derive(Debug, Clone)]
pub struct LoadOutcome {
    pub rules: RuleSet,
    pub diagnostics: Vec<Diagnostic>,
    pub refusal: Option<Refusal>,
}

impl LoadOutcome {
    /// The rule set, if cpuplugd would have loaded the file.
    pub fn loaded(&self) -> Option<&RuleSet> {
        match self.refusal {
            None => Some(&self.rules),
            Some(_) => None,
        }
    }

    /// True when any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == super::Severity::Error)
    }
}

/// One line after cpuplugd's whitespace removal.
struct Line<'f> {
    number: usize,
    /// Bytes left after removing whitespace.
    stripped: Vec<u8>,
    /// File offset of each stripped byte.
    map: Vec<u32>,
    /// File offset just after the line's text.
    end: u32,
    first_byte: Option<u8>,
    /// cpuplugd's "Line is too long" text, when the line is refused.
    too_long: Option<(String, bool)>,
    start: usize,
    /// The line as written (spaces kept), for suggested fixes.
    raw: &'f [u8],
}

/// Why `CPU_MAX="0"` cannot be loaded where the present CPUs are not
/// known. An unreadable file is named where it was looked for (below
/// `origin`, the root); under another root than `/`, the root is the
/// likelier culprit than the rule (nu54 F5).
fn no_present_cpus(why: &crate::kernel::PresentCpusError, origin: &str) -> String {
    match why {
        crate::kernel::PresentCpusError::Unreadable { path, reason } => {
            let file = std::path::Path::new(origin).join(path);
            let root = if origin == "/" {
                String::new()
            } else {
                format!(" (is {origin} a guest's root? the rule is right where that file is)")
            };
            format!(
                "CPU_MAX=\"0\" needs the number of present CPUs, and {} cannot be read: {reason}{root}",
                file.display()
            )
        }
        other => format!("CPU_MAX=\"0\" needs the number of present CPUs: {other}"),
    }
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Splits the file the way `fgets` into a 2050-byte buffer does.
fn split_lines(bytes: &[u8]) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut pos = 0;
    let mut number = 0;
    while pos < bytes.len() {
        number += 1;
        let limit = (pos + MAX_LINE + 1).min(bytes.len());
        let newline = bytes[pos..limit]
            .iter()
            .position(|b| *b == b'\n')
            .map(|p| pos + p);
        let (text_end, next, too_long) = match newline {
            Some(nl) if !bytes[pos..nl].contains(&0) => (nl, nl + 1, None),
            _ => {
                let line_end = bytes[pos..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(bytes.len(), |p| pos + p);
                let chunk = &bytes[pos..limit];
                let chunk = chunk.split(|b| *b == 0).next().unwrap_or(chunk);
                let missing_newline = line_end == bytes.len() && line_end - pos <= MAX_LINE;
                let next = (line_end + 1).min(bytes.len()).max(line_end);
                (
                    line_end,
                    if next == line_end { bytes.len() } else { next },
                    Some((String::from_utf8_lossy(chunk).into_owned(), missing_newline)),
                )
            }
        };
        let first_byte = bytes.get(pos).copied().filter(|_| pos < text_end);
        // A comment says nothing to either pass over the lines, and a line
        // kept costs about 150 bytes: a 1 MB file of short comments or blank
        // lines held 100 MB while it was checked as the user typed.
        if too_long.is_none() && first_byte == Some(b'#') {
            pos = next;
            continue;
        }
        // Sized once: a 1 MB file is checked as the user types (the
        // language server), where doubling vectors cost a third of the time.
        let room = text_end.saturating_sub(pos);
        let mut stripped = Vec::with_capacity(room);
        let mut map = Vec::with_capacity(room);
        for (i, b) in bytes[pos..text_end].iter().enumerate() {
            if *b == 0 {
                break;
            }
            if !is_c_space(*b) {
                stripped.push(*b);
                map.push((pos + i) as u32);
            }
        }
        // Nothing but spaces: ignored without a word, as a comment is.
        if too_long.is_none() && stripped.is_empty() {
            pos = next;
            continue;
        }
        lines.push(Line {
            number,
            stripped,
            map,
            end: text_end as u32,
            first_byte,
            too_long,
            start: pos,
            raw: &bytes[pos..text_end.max(pos)],
        });
        pos = next;
    }
    lines
}

/// What a line's name sets.
/// A predefined name matched by prefix (`HOTPLUG_X` sets HOTPLUG).
fn prefix_name(name: &str, canonical: &str, span: Span) -> Diagnostic {
    Diagnostic::warning(
        DiagnosticCode::PrefixName,
        span,
        format!("`{name}` sets {canonical} because cpuplugd matches names by prefix"),
    )
    .with_help(format!("write `{canonical}` to say so"))
}

/// What a line whose name (whitespace removed) is `name` sets, as
/// cpuplugd matches it: a rule (`Some(kind)`), a setting or a variable
/// (`None`, with whether it is a setting).
pub fn line_sets(name: &[u8]) -> (Option<RuleKind>, bool) {
    match Assigned::by_prefix(name) {
        Some(Assigned::Rule(kind)) => (Some(kind), false),
        Some(Assigned::Setting(_)) => (None, true),
        None => (None, false),
    }
}

/// Stack for loading: a 2048-byte line can nest a thousand parentheses, and
/// variables nest further; cpuplugd's own recursive parser takes them all.
const LOAD_STACK: usize = 256 << 20;

/// A UTF-8 byte-order mark, as a file saved by some Windows editors starts.
const BYTE_ORDER_MARK: char = '\u{feff}';

/// What a finding about a byte-order mark says first (nu53 F13: the mark
/// is invisible, and the findings it caused blamed what the user saw).
const BOM_SAID: &str = "the file starts with a UTF-8 byte-order mark (EF BB BF), which cpuplugd \
     reads as part of the first";

/// How to be rid of it.
const BOM_HELP: &str = "save the file as UTF-8 without a byte-order mark";

/// What is odd about a variable's name, if anything: a `#` that does not
/// start a comment, an empty name, a misspelt rule name, characters no rule
/// can name.
fn name_warning(name: &str, name_span: Span) -> Option<Diagnostic> {
    if let Some(rest) = name.strip_prefix(BYTE_ORDER_MARK) {
        let unset = match Assigned::by_prefix(rest.as_bytes()) {
            Some(target) => format!(", and {} stays unset", target.file_name()),
            None => String::new(),
        };
        Some(
            Diagnostic::warning(
                DiagnosticCode::ByteOrderMark,
                name_span,
                format!(
                    "{BOM_SAID} name: cpuplugd takes this line for a user variable named the mark \
                     then `{rest}`{unset}"
                ),
            )
            .with_help(BOM_HELP)
            .with_replacement(rest.to_string()),
        )
    } else if name.starts_with('#') {
        Some(
            Diagnostic::warning(
                DiagnosticCode::IndentedComment,
                name_span,
                format!("only a `#` in the first column starts a comment: this line defines a variable named `{name}`"),
            )
            .with_help("move the `#` to the first column"),
        )
    } else if name.is_empty() {
        Some(
            Diagnostic::warning(
                DiagnosticCode::EmptyVariableName,
                name_span,
                "this line defines a variable with an empty name; cpuplugd reads it wherever a rule has a term without a name: an empty rule, a rule that starts with an operator, `()`",
            )
            .with_help("almost certainly a mistake: put the variable's name before the `=`, or delete the line"),
        )
    } else if let Some(meant) = suggest::misspelt_keyword(name) {
        Some(
            Diagnostic::warning(
                DiagnosticCode::MisspeltKeyword,
                name_span,
                format!("`{name}` looks like a misspelt {meant}: cpuplugd takes this line for a user variable, and {meant} stays unset"),
            )
            .with_help(format!("did you mean {meant}?"))
            .with_replacement(meant.to_string()),
        )
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Some(Diagnostic::warning(
            DiagnosticCode::UnusableName,
            name_span,
            format!(
                "no rule can name the variable `{name}`: names in rules are letters, digits and `_`"
            ),
        ))
    } else {
        None
    }
}

/// In a refused file, lint folds the unused variables into one warning;
/// it goes after every other finding, errors first.
fn unused_summary_last(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if let Some(i) = diagnostics
        .iter()
        .position(|d| d.code == lint::UNUSED_SUMMARY)
    {
        let summary = diagnostics.remove(i);
        diagnostics.push(summary);
    }
    diagnostics
}

/// The same variable inlined into several rules fails the same way each
/// time: keep the first finding, with every "used by" note of the others.
/// Repeats are found by sorting positions by place and message (no copy
/// of any message), so a file with 100,000 findings is merged in
/// O(n log n) rather than one search per finding.
fn merge_repeats(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let key = |i: usize| {
        let d = &diagnostics[i];
        (d.span.start, d.span.end, d.message.as_str())
    };
    let mut order: Vec<usize> = (0..diagnostics.len()).collect();
    order.sort_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    let mut keeper: Vec<usize> = (0..diagnostics.len()).collect();
    for run in order.chunk_by(|&a, &b| key(a) == key(b)) {
        for &i in &run[1..] {
            keeper[i] = run[0];
        }
    }
    let mut at = vec![0; diagnostics.len()];
    let mut merged: Vec<Diagnostic> = Vec::with_capacity(diagnostics.len());
    // The notes of findings that took others' notes, to keep them distinct.
    let mut notes: HashSet<(usize, Span, String)> = HashSet::new();
    let mut seeded: HashSet<usize> = HashSet::new();
    for (i, d) in diagnostics.into_iter().enumerate() {
        if keeper[i] == i {
            at[i] = merged.len();
            merged.push(d);
            continue;
        }
        let into = at[keeper[i]];
        if seeded.insert(into) {
            for n in &merged[into].notes {
                notes.insert((into, n.span, n.message.clone()));
            }
        }
        for n in d.notes {
            if notes.insert((into, n.span, n.message.clone())) {
                merged[into].notes.push(n);
            }
        }
    }
    merged
}

/// How far loading goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Every line and every finding (`plugtop check`, the editors).
    Everything,
    /// Up to the first line cpuplugd refuses, as cpuplugd stops there, and
    /// no lint of a refused file: what a running daemon needs to decide
    /// whether to take the file, before any costly analysis.
    FirstRefusal,
}

/// Loads a rule file as cpuplugd would on the machine `facts` describes.
pub fn load(source: &SourceFile, facts: &SystemFacts) -> LoadOutcome {
    load_to(source, facts, Reach::Everything)
}

/// [`load`], going as far as `reach` says.
pub fn load_to(source: &SourceFile, facts: &SystemFacts, reach: Reach) -> LoadOutcome {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("plugtop-load".into())
            .stack_size(LOAD_STACK)
            .spawn_scoped(scope, || Loader::new(facts, reach).run(source))
            .ok()
            .and_then(|handle| handle.join().ok())
    })
    .unwrap_or_else(|| Loader::new(facts, reach).run(source))
}

/// See [`Loader::overflow`].
struct Overflow {
    /// Index of the error in the diagnostics.
    diagnostic: usize,
    /// Variables after the first that do not fit either.
    more: usize,
    /// What the last of them needs, and where it is.
    last: (usize, Span),
}

struct Loader<'f> {
    facts: &'f SystemFacts,
    rules: RuleSet,
    diagnostics: Vec<Diagnostic>,
    refusal: Option<Refusal>,
    var_lookup: HashMap<String, u32>,
    all_vars: HashMap<String, usize>,
    variable_bytes: usize,
    /// The variables past cpuplugd's buffer: one error at the first of
    /// them, which names how many more follow (one error per variable would
    /// bury everything else under thousands of copies).
    overflow: Option<Overflow>,
    history_max: u32,
    /// Parsed variables for [`ExprBuilder::inlined`].
    inlined: HashMap<u32, (NodeId, NodeId)>,
    reach: Reach,
    suggestions: suggest::Budget,
}

impl<'f> Loader<'f> {
    fn new(facts: &'f SystemFacts, reach: Reach) -> Self {
        Loader {
            facts,
            rules: RuleSet {
                settings: Settings::default(),
                rules: Default::default(),
                nodes: Vec::new(),
                variables: Vec::new(),
                history_depth: 1,
                fields: FieldNames::default(),
                cpu_enabled: false,
                mem_enabled: false,
                mem_off: None,
                setting_spans: [None; Setting::ALL.len()],
                present_at_load: facts.present_cpus.as_ref().ok().copied(),
            },
            diagnostics: Vec::new(),
            refusal: None,
            var_lookup: HashMap::new(),
            all_vars: HashMap::new(),
            variable_bytes: 1,
            overflow: None,
            history_max: 1,
            inlined: HashMap::new(),
            reach,
            suggestions: suggest::Budget::default(),
        }
    }

    fn refuse(&mut self, message: impl Into<String>, diagnostic: Diagnostic) {
        if self.refusal.is_none() {
            self.refusal = Some(Refusal {
                message: message.into(),
                span: diagnostic.span,
            });
        }
        self.diagnostics.push(diagnostic);
    }

    fn run(mut self, source: &SourceFile) -> LoadOutcome {
        let lines = split_lines(source.bytes());
        for line in &lines {
            if line.too_long.is_some() || line.first_byte == Some(b'#') {
                continue;
            }
            if let Some(eq) = line.stripped.iter().position(|b| *b == b'=') {
                let name = &line.stripped[..eq];
                if Assigned::by_prefix(name).is_none() {
                    self.all_vars
                        .entry(String::from_utf8_lossy(name).into_owned())
                        .or_insert(line.number);
                }
            }
        }
        // Each line is dropped once read: its bytes and offsets are copied
        // into what it defines, and a large file should not hold both.
        for line in lines {
            if self.reach == Reach::FirstRefusal && self.refusal.is_some() {
                break;
            }
            self.line(&line);
        }
        self.finish();
        let LoadOutcome {
            rules,
            mut diagnostics,
            refusal,
        } = LoadOutcome {
            rules: self.rules,
            diagnostics: self.diagnostics,
            refusal: self.refusal,
        };
        if self.reach == Reach::Everything || refusal.is_none() {
            diagnostics.extend(lint::lint(
                &rules,
                self.facts,
                source,
                refusal.is_some(),
                &self.suggestions,
            ));
        }
        diagnostics.extend(self.suggestions.finding());
        // A reading an imported history lacks is never decided on a
        // made-up value: plugtop refuses the rules on that history, unless
        // every rule reading it is in a group that is off there (the lint
        // then made it a warning: those rules are never evaluated).
        let refusal = refusal.or_else(|| {
            diagnostics
                .iter()
                .find(|d| d.code == lint::NOT_IN_HISTORY && d.severity == super::Severity::Error)
                .map(|d| Refusal {
                    message: d.message.clone(),
                    span: d.span,
                })
        });
        diagnostics.sort_by_key(|d| {
            if d.span.is_file() {
                (1, 0)
            } else {
                (0, d.span.start)
            }
        });
        let merged = merge_repeats(diagnostics);
        let diagnostics = unused_summary_last(merged);
        LoadOutcome {
            rules,
            diagnostics,
            refusal,
        }
    }

    fn line(&mut self, line: &Line<'_>) {
        let whole = Span::new(line.start, line.end as usize);
        if let Some((text, missing_newline)) = &line.too_long {
            return self.too_long(text, *missing_newline, line, whole);
        }
        if line.first_byte == Some(b'#') {
            return;
        }
        let Some(eq) = line.stripped.iter().position(|b| *b == b'=') else {
            self.no_equals(line, whole);
            return;
        };
        let text = Text {
            bytes: &line.stripped,
            map: &line.map,
            end: line.end,
        };
        let name_bytes = &line.stripped[..eq];
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        let name_span = text.span(0, eq);
        let rvalue = &line.stripped[eq + 1..];
        let rvalue_map = &line.map[eq + 1..];
        let first = rvalue.iter().position(|b| *b == b'"');
        let last = rvalue.iter().rposition(|b| *b == b'"');
        let (Some(first), Some(last)) = (first, last) else {
            return self.missing_quotes(&name, rvalue, text, eq, line.raw);
        };
        if first == last {
            return self.missing_quotes(&name, rvalue, text, eq, line.raw);
        }
        // cpuplugd cuts `len = last - first` bytes and skips the first one,
        // which is the text between the quotes when the value starts with `"`.
        let len = last - first;
        let value = &rvalue[1..len];
        let value_map = &rvalue_map[1..len];
        let value_end = rvalue_map.get(len).copied().unwrap_or(line.end);
        let value_text = Text {
            bytes: value,
            map: value_map,
            end: value_end,
        };
        let value_span = if value.is_empty() {
            Span::new(value_end as usize, value_end as usize)
        } else {
            value_text.span(0, value.len())
        };
        if first != 0 {
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::TextBeforeQuote,
                    text.span(eq + 1, eq + 1 + first),
                    format!(
                        "text between `=` and the opening quote shifts what cpuplugd reads: it takes `{}` as the value",
                        String::from_utf8_lossy(value)
                    ),
                )
                .with_help("put the opening `\"` right after `=`"),
            );
        }
        let after = &rvalue[last + 1..];
        if !after.is_empty() && after[0] != b'#' {
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::TextAfterQuote,
                    text.span(eq + 1 + last + 1, line.stripped.len()),
                    "cpuplugd ignores the text after the closing quote",
                )
                .with_help("move it inside the quotes, or start a comment with `#`"),
            );
        }

        let target = Assigned::by_prefix(name_bytes);
        if let Some(canonical) = target.map(Assigned::file_name)
            && !name.eq_ignore_ascii_case(canonical)
        {
            self.diagnostics
                .push(prefix_name(&name, canonical, name_span));
        }
        match target {
            Some(Assigned::Rule(kind)) => self.rule(kind, line, name_span, value_text, value_span),
            Some(Assigned::Setting(setting)) => self.setting(setting, name_span, value, value_span),
            None => self.variable(name, line, name_span, value_text, value_span),
        }
    }

    /// A line without `=`: cpuplugd ignores it. A first line that starts
    /// with a byte-order mark is said to (it may read as a comment).
    fn no_equals(&mut self, line: &Line<'_>, whole: Span) {
        const BOM: usize = 3;
        if line.start == 0 && line.raw.starts_with("\u{feff}".as_bytes()) {
            let comment = if line.raw.get(BOM) == Some(&b'#') {
                " (its first byte is not `#`, so it is no comment)"
            } else {
                ""
            };
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::ByteOrderMark,
                    Span::new(0, BOM),
                    format!(
                        "{BOM_SAID} line{comment}; the line has no `=`, so cpuplugd ignores it"
                    ),
                )
                .with_help(BOM_HELP),
            );
        } else if !line.stripped.is_empty() {
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::IgnoredLine,
                    whole,
                    "cpuplugd ignores this line: it has no `=`",
                )
                .with_help("start comment lines with `#` in the first column"),
            );
        }
    }

    /// A line longer than cpuplugd's buffer (or a last line without a
    /// newline, which cpuplugd reports the same way) refuses the file.
    fn too_long(&mut self, text: &str, missing_newline: bool, line: &Line<'_>, whole: Span) {
        let message = format!("Line is too long (max. length is {MAX_LINE} characters): {text}");
        let d = if missing_newline {
            Diagnostic::refusal(
                DiagnosticCode::NoFinalNewline,
                Span::new(line.end as usize, line.end as usize),
                "the last line has no newline; cpuplugd reports it as too long and refuses the file",
            )
            .with_help("end the file with a newline")
            .with_replacement("\n")
        } else {
            Diagnostic::refusal(
                DiagnosticCode::LineTooLong,
                whole,
                format!("line longer than {MAX_LINE} characters"),
            )
            .with_help("split the expression into variables")
        };
        self.refuse(message, d);
    }

    fn missing_quotes(&mut self, name: &str, rvalue: &[u8], text: Text<'_>, eq: usize, raw: &[u8]) {
        let shown = String::from_utf8_lossy(rvalue).into_owned();
        let span = text.span(eq + 1, text.bytes.len());
        // The fix keeps the user's spaces: the value as written after `=`.
        let written = raw
            .iter()
            .position(|b| *b == b'=')
            .map(|i| String::from_utf8_lossy(&raw[i + 1..]).trim().to_string())
            .unwrap_or_else(|| shown.clone());
        let d = Diagnostic::refusal(
            DiagnosticCode::MissingQuotes,
            span,
            "the value must be in double quotes",
        )
        .with_replacement(format!("\"{}\"", written.trim_matches('"').trim()));
        self.refuse(
            format!("the configuration file has syntax errors at {name}, position: {shown}"),
            d,
        );
    }

    fn rule(
        &mut self,
        kind: RuleKind,
        line: &Line<'_>,
        name_span: Span,
        value: Text<'_>,
        value_span: Span,
    ) {
        if let Some(previous) = &self.rules.rules[kind.index()] {
            let first_line = previous.line;
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::SetTwice,
                    name_span,
                    format!(
                        "{} was already set on line {first_line}; cpuplugd uses this later one",
                        kind.file_name()
                    ),
                )
                .with_note(
                    previous.name_span,
                    "the earlier one still counts toward the history depth",
                )
                .with_help("remove one of them"),
            );
        }
        // An empty rule is no rule, unless a variable named "" exists: then
        // cpuplugd parses it as that variable (edge case A).
        if value.bytes.is_empty() && !self.var_lookup.contains_key("") {
            let group = if kind.index() < 2 { "CPU" } else { "memory" };
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::EmptyRule,
                    value_span,
                    format!("an empty rule counts as not set: it turns the {group} group off"),
                )
                .with_help("write \"0\" for a rule that is never true"),
            );
            self.rules.rules[kind.index()] = None;
            return;
        }
        let start = self.rules.nodes.len() as u32;
        let (result, later) = {
            let mut builder = self.builder();
            let result = builder.parse(value, Unit::Rule(kind));
            (result, builder.later)
        };
        match result {
            Ok(root) => {
                self.rules.rules[kind.index()] = Some(Rule {
                    kind,
                    root,
                    nodes: start..self.rules.nodes.len() as u32,
                    name_span,
                    value_span,
                    line: line.number,
                });
            }
            Err(e) => {
                self.rules.nodes.truncate(start as usize);
                self.inlined.clear();
                self.refuse(e.daemon_message, *e.diagnostic);
                self.diagnostics
                    .extend(later.into_iter().map(|e| *e.diagnostic));
                self.later_errors(value, kind, start as usize);
                self.name_variables_of_failed_rule(value.bytes);
            }
        }
    }

    /// A builder of a rule's nodes into this file's arena, which sees the
    /// variables defined so far (as cpuplugd does).
    fn builder(&mut self) -> ExprBuilder<'_> {
        let limit = self.var_lookup.len();
        ExprBuilder {
            nodes: &mut self.rules.nodes,
            vars: &mut self.rules.variables[..limit],
            var_lookup: &self.var_lookup,
            all_vars: &self.all_vars,
            history_max: &mut self.history_max,
            fields: &mut self.rules.fields,
            expanding: Vec::new(),
            inlined: &mut self.inlined,
            suggestions: &self.suggestions,
            later: Vec::new(),
        }
    }

    /// The errors on a refused rule's line after its first: while the
    /// first is an operator from another language, the rule is read again
    /// with it as cpuplugd's nearest one (`a || b >= c` names both and any
    /// error after them). Nothing is kept but the findings.
    fn later_errors(&mut self, value: Text<'_>, kind: RuleKind, start: usize) {
        let mut bytes = value.bytes.to_vec();
        let mut map = value.map.to_vec();
        for _ in 0..parser::MAX_LATER_ERRORS {
            if !parser::read_past_foreign_operator(&mut bytes, &mut map, value.end) {
                return;
            }
            let mut builder = self.builder();
            let read = Text {
                bytes: &bytes,
                map: &map,
                end: value.end,
            };
            let result = builder.parse(read, Unit::Rule(kind));
            let later = builder.later;
            self.rules.nodes.truncate(start);
            self.inlined.clear();
            match result {
                Ok(_) => return,
                Err(e) => self.diagnostics.push(*e.diagnostic),
            }
            self.diagnostics
                .extend(later.into_iter().map(|e| *e.diagnostic));
        }
    }

    /// A variable that a refused rule names is not "unused": the rule's
    /// error is what to fix. Its words (not a field after `.`) that name a
    /// variable defined so far count as uses.
    fn name_variables_of_failed_rule(&mut self, text: &[u8]) {
        let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let mut i = 0;
        while i < text.len() {
            if !is_word(text[i]) {
                i += 1;
                continue;
            }
            let from = i;
            while i < text.len() && is_word(text[i]) {
                i += 1;
            }
            if from > 0 && text[from - 1] == b'.' {
                continue;
            }
            let word = String::from_utf8_lossy(&text[from..i]);
            if let Some(&var) = self.var_lookup.get(word.as_ref())
                && let Some(def) = self.rules.variables.get_mut(var as usize)
            {
                def.uses = def.uses.saturating_add(1);
            }
        }
    }

    fn setting(&mut self, setting: Setting, name_span: Span, value: &[u8], value_span: Span) {
        let upper = setting.file_name();
        let i = setting.index();
        if let Some(previous) = self.rules.setting_spans[i] {
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::SetTwice,
                    name_span,
                    format!("{upper} is set again; cpuplugd uses this later value"),
                )
                .with_note(previous, "set before here"),
            );
        }
        self.rules.setting_spans[i] = Some(name_span);
        if !value.iter().all(u8::is_ascii_digit) {
            let d = Diagnostic::refusal(
                DiagnosticCode::BadInteger,
                value_span,
                format!("{upper} must be a whole number written with digits only"),
            );
            self.refuse("parsing error at update", d);
            return;
        }
        let mut v: i64 = 0;
        for b in value {
            v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
        }
        match setting {
            Setting::Update if v <= 0 => {
                let d = Diagnostic::refusal(
                    DiagnosticCode::BadUpdate,
                    value_span,
                    "UPDATE must be at least 1 (seconds)",
                );
                self.refuse("update must be > 0", d);
                return;
            }
            Setting::CpuMin if v <= 0 => {
                let d = Diagnostic::refusal(
                    DiagnosticCode::BadCpuMin,
                    value_span,
                    "CPU_MIN must be at least 1",
                );
                self.refuse("cpu_min must be > 0", d);
                return;
            }
            Setting::CpuMax if v == 0 => match &self.facts.present_cpus {
                Ok(n) if *n > 0 => v = i64::from(*n),
                Ok(n) => {
                    let d = Diagnostic::refusal(
                        DiagnosticCode::NoPresentCpus,
                        value_span,
                        format!(
                            "CPU_MAX=\"0\" means all present CPUs, but {} lists none",
                            self.facts.origin
                        ),
                    );
                    self.refuse(format!("number of present cpus ({n}) <= 0"), d);
                    return;
                }
                Err(message) => {
                    let d = Diagnostic::refusal(
                        DiagnosticCode::NoPresentCpus,
                        value_span,
                        no_present_cpus(message, &self.facts.origin),
                    );
                    self.refuse(message.to_string(), d);
                    return;
                }
            },
            _ => {}
        }
        let s = &mut self.rules.settings;
        match setting {
            Setting::Update => s.update = v,
            Setting::CpuMin => s.cpu_min = v,
            Setting::CpuMax => s.cpu_max = v,
            Setting::CmmMin => s.cmm_min = v,
            Setting::CmmMax => s.cmm_max = v,
        }
    }

    fn variable(
        &mut self,
        name: String,
        line: &Line<'_>,
        name_span: Span,
        value: Text<'_>,
        value_span: Span,
    ) {
        if name.len() > MAX_NAME {
            let d = Diagnostic::refusal(
                DiagnosticCode::NameTooLong,
                name_span,
                format!(
                    "a variable name of {} characters; cpuplugd allows at most {MAX_NAME}",
                    name.len()
                ),
            );
            self.refuse(
                format!("Variable name too long (max. length is {MAX_NAME} chars): {name}"),
                d,
            );
            return;
        }
        if let Some(&first) = self.var_lookup.get(&name) {
            let first_span = self.rules.variables[first as usize].name_span;
            let d = Diagnostic::refusal(
                DiagnosticCode::DefinedTwice,
                name_span,
                format!("variable `{name}` is defined twice"),
            )
            .with_note(first_span, "first defined here")
            .with_help("cpuplugd does not allow redefining a variable; rename one of them");
            self.refuse(format!("Variable defined twice: {name}"), d);
            return;
        }
        if RESERVED_NAMES.contains(&name.as_str()) {
            let d = Diagnostic::refusal(
                DiagnosticCode::ReservedName,
                name_span,
                format!("`{name}` is a predefined name and cannot be a variable"),
            )
            .with_help(format!("choose another name, e.g. `my_{name}`"));
            self.refuse(format!("Cannot use (pre-defined) variable name: {name}"), d);
            return;
        }
        let need = self.variable_bytes + name.len() + value.bytes.len() + 3;
        if need > VARIABLE_BUFFER {
            self.note_overflow(need, name_span);
        }
        if let Some(d) = name_warning(&name, name_span) {
            self.diagnostics.push(d);
        }
        self.variable_bytes += name.len() + value.bytes.len() + 2;
        let id = self.rules.variables.len() as u32;
        self.rules.variables.push(VarDef {
            name: name.clone(),
            text: value.bytes.into(),
            text_map: value.map.into(),
            name_span,
            value_span,
            line: line.number,
            uses: 0,
        });
        self.var_lookup.insert(name, id);
        self.inlined.clear();
    }

    /// Records that a variable needing `need` bytes in all does not fit.
    fn note_overflow(&mut self, need: usize, span: Span) {
        if let Some(overflow) = &mut self.overflow {
            overflow.more += 1;
            overflow.last = (need, span);
            return;
        }
        let d = Diagnostic::refusal(
            DiagnosticCode::VariablesTooLarge,
            span,
            format!(
                "all variables together need {need} bytes; cpuplugd has room for {VARIABLE_BUFFER}"
            ),
        )
        .with_help("use shorter names, or fewer variables (spaces do not count)");
        self.overflow = Some(Overflow {
            diagnostic: self.diagnostics.len(),
            more: 0,
            last: (need, span),
        });
        self.refuse(
            format!("buffer for variables too small: need {need}, have {VARIABLE_BUFFER} (bytes)"),
            d,
        );
    }

    /// Tells, on the one error for variables past the buffer, how many
    /// more followed it.
    fn count_overflow(&mut self) {
        if let Some(overflow) = self.overflow.take()
            && overflow.more > 0
            && let Some(d) = self.diagnostics.get_mut(overflow.diagnostic)
        {
            let (need, span) = overflow.last;
            let more = overflow.more;
            let s = if more == 1 { "" } else { "s" };
            d.notes.push(Note {
                span,
                message: format!(
                    "{more} more variable{s} after it do not fit either; with the last, all need {need} bytes"
                ),
            });
        }
    }

    fn finish(&mut self) {
        self.count_overflow();
        self.rules.history_depth = self.history_max;
        if self.history_max > MAX_HISTORY {
            let span = self
                .rules
                .nodes
                .iter()
                .find(|n| matches!(n.kind, NodeKind::Reading { index, .. } if index > MAX_HISTORY))
                .map_or(Span::FILE, |n| n.span);
            let d = Diagnostic::refusal(
                DiagnosticCode::HistoryTooDeep,
                span,
                format!(
                    "history index {} is deeper than cpuplugd's {MAX_HISTORY} intervals",
                    self.history_max
                ),
            );
            self.refuse(
                format!(
                    "History depth {} exceeded maximum ({MAX_HISTORY})",
                    self.history_max as i32
                ),
                d,
            );
        }
        let s = self.rules.settings;
        let spans = self.rules.setting_spans;
        let at = |setting: Setting| spans[setting.index()].unwrap_or(Span::FILE);
        // An UPDATE that was set but refused has its own error already.
        if s.update < 0 && spans[Setting::Update.index()].is_none() {
            let d = Diagnostic::refusal(DiagnosticCode::NoUpdate, Span::FILE, "UPDATE is not set")
                .with_help("add UPDATE=\"1\" (seconds between evaluations)");
            self.refuse("No valid update interval specified.", d);
        }
        // A CPU_MAX that was set but refused has its own error already.
        let cpu_max_refused = s.cpu_max < 0 && spans[Setting::CpuMax.index()].is_some();
        if s.cpu_max < s.cpu_min && s.cpu_max != 0 && !cpu_max_refused {
            let d = if s.cpu_max < 0 {
                Diagnostic::refusal(
                    DiagnosticCode::CpuMaxBelowMin,
                    at(Setting::CpuMin),
                    "CPU_MIN is set but CPU_MAX is not; cpuplugd counts an unset CPU_MAX as -1 and refuses the file",
                )
                .with_help("set CPU_MAX too (\"0\" means all present CPUs), even in a file that only manages memory")
            } else {
                Diagnostic::refusal(
                    DiagnosticCode::CpuMaxBelowMin,
                    at(Setting::CpuMax),
                    format!("CPU_MAX ({}) is below CPU_MIN ({})", s.cpu_max, s.cpu_min),
                )
            };
            self.refuse("cpu_max below cpu_min, aborting.", d);
        }
        let has = |k: RuleKind| self.rules.rules[k.index()].is_some();
        self.rules.cpu_enabled =
            s.cpu_max >= 0 && s.cpu_min >= 0 && has(RuleKind::Hotplug) && has(RuleKind::Hotunplug);
        self.rules.mem_off = memory_verdict(&self.rules, self.facts);
        self.rules.mem_enabled = self.rules.mem_off.is_none();
        if !self.rules.cpu_enabled && !self.rules.mem_enabled && self.refusal.is_none() {
            let mut d = Diagnostic::refusal(
                DiagnosticCode::NothingToDo,
                Span::FILE,
                "neither the CPU group nor the memory group can run",
            );
            let memory = match &self.rules.mem_off {
                Some(off) => off.reason(),
                None => format!("needs {}", describe_missing_memory(&self.rules, self.facts)),
            };
            d = d.with_help(format!(
                "CPU needs {}; memory {memory}",
                describe_missing_cpu(&self.rules),
            ));
            self.refuse(
                "Exiting, because neither a valid cpu nor a valid memory hotplug configuration was found.",
                d,
            );
        }
        // Edge case D: cpuplugd will not start when CPU_MIN asks for more
        // CPUs than the guest has.
        if let (true, Ok(present)) = (self.rules.cpu_enabled, &self.facts.present_cpus)
            && s.cpu_min > i64::from(*present)
            && self.refusal.is_none()
        {
            let d = Diagnostic::refusal(
                DiagnosticCode::CpuMinAbovePresent,
                at(Setting::CpuMin),
                format!(
                    "CPU_MIN ({}) asks for more CPUs than the {present} present on {}",
                    s.cpu_min, self.facts.origin
                ),
            )
            .with_help(format!("set CPU_MIN to at most {present}"));
            self.refuse(format!("Detected {present} available cpus"), d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(at: u32, message: &str, notes: &[(u32, &str)]) -> Diagnostic {
        notes.iter().fold(
            Diagnostic::warning(
                DiagnosticCode::Syntax,
                Span::new(at as usize, at as usize + 1),
                message,
            ),
            |d, (n, m)| d.with_note(Span::new(*n as usize, *n as usize + 1), *m),
        )
    }

    #[test]
    fn comments_and_blank_lines_are_not_kept_but_counted() {
        // A 1 MB file of them held 100 MB as `Line`s while it was checked.
        let text = b"# a\n\n \t\n#\nx=\"1\"\n  # y=\"2\"\n";
        let kept: Vec<(usize, &[u8])> = split_lines(text)
            .iter()
            .map(|l| (l.number, l.raw))
            .collect();
        assert_eq!(kept, [(5, &b"x=\"1\""[..]), (6, &b"  # y=\"2\""[..])]);
        let many = b"#\n".repeat(100_000);
        assert!(split_lines(&many).is_empty());
    }

    #[test]
    fn repeats_merge_into_the_first_with_every_distinct_note_in_order() {
        let merged = merge_repeats(vec![
            finding(1, "a", &[(10, "used by HOTPLUG")]),
            finding(2, "a", &[]),
            finding(1, "b", &[]),
            finding(
                1,
                "a",
                &[(11, "used by HOTUNPLUG"), (10, "used by HOTPLUG")],
            ),
            finding(
                1,
                "a",
                &[(11, "used by HOTUNPLUG"), (11, "used by MEMPLUG")],
            ),
        ]);
        let shown: Vec<_> = merged
            .iter()
            .map(|d| {
                let notes: Vec<_> = d
                    .notes
                    .iter()
                    .map(|n| (n.span.start, n.message.as_str()))
                    .collect();
                (d.span.start, d.message.as_str(), notes)
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                (
                    1,
                    "a",
                    vec![
                        (10, "used by HOTPLUG"),
                        (11, "used by HOTUNPLUG"),
                        (11, "used by MEMPLUG")
                    ]
                ),
                (2, "a", vec![]),
                (1, "b", vec![]),
            ]
        );
    }

    #[test]
    fn many_distinct_findings_stay_as_they_were() {
        let all: Vec<_> = (0..50_000).map(|i| finding(i, "unused", &[])).collect();
        assert_eq!(merge_repeats(all.clone()), all);
    }
}
