//! From a rule's text to expression nodes, the way cpuplugd reads it: the
//! pest grammar decides the shape, and this builder resolves names the way
//! the daemon does (a user variable first, then a predefined name), inlines
//! variables as their own parsed text, and explains every failure.

use std::collections::HashMap;

use pest::Parser;
use pest::iterators::Pair;
use pest_derive::Parser;

use super::diagnostic::{Diagnostic, DiagnosticCode};
use super::expr::{BinOp, CpuStat, Keyword, Node, NodeId, NodeKind, Reading, RuleKind};
use super::source::Span;
use super::suggest;
use crate::number;

/// The generated pest parser for `grammar/cpuplugd.pest`.
#[derive(Parser)]
#[grammar = "../grammar/cpuplugd.pest"]
pub struct RuleGrammar;

/// cpuplugd's limit on a name's length.
pub const MAX_NAME: usize = 128;

/// Guard against files whose variables expand into astronomically large
/// trees (cpuplugd itself would take forever or crash on them).
const MAX_NODES: usize = 1_000_000;

/// How deep variables may name each other: every variable takes at least
/// three bytes of cpuplugd's 4,096 for all of them, so no file cpuplugd
/// loads nests deeper. A deeper chain (150,000 variables each naming the
/// one before) was expanded one level per variable, with a cycle check
/// across all levels at each.
pub const MAX_DEPTH: usize = VARIABLE_BUFFER / 3;

/// cpuplugd's buffer for all variables (names, values and separators).
pub const VARIABLE_BUFFER: usize = 4096;

/// A user variable as defined in the file.
#[derive(Debug, Clone)]
pub struct VarDef {
    pub name: String,
    /// The value after whitespace removal, as cpuplugd stores it.
    /// Shared: every expansion and every scratch copy reads the same bytes.
    pub text: std::sync::Arc<[u8]>,
    /// File offset of each byte of `text`.
    pub text_map: std::sync::Arc<[u32]>,
    pub name_span: Span,
    pub value_span: Span,
    pub line: usize,
    /// How often a parsed rule inlined it (directly or through another variable).
    pub uses: u32,
}

/// Field names the rules refer to, each given a slot once.
#[derive(Debug, Clone, Default)]
pub struct FieldNames {
    pub meminfo: Vec<String>,
    pub vmstat: Vec<String>,
    pub unknown_cpustat: Vec<String>,
    /// Each name's slot, by list (0 meminfo, 1 vmstat, 2 cpustat): a file
    /// naming 100,000 distinct fields searched its lists once per reading.
    slots: HashMap<(u8, String), u32>,
}

impl FieldNames {
    fn slot(&mut self, list: u8, name: &str) -> u32 {
        let names = match list {
            0 => &mut self.meminfo,
            1 => &mut self.vmstat,
            _ => &mut self.unknown_cpustat,
        };
        *self
            .slots
            .entry((list, name.to_string()))
            .or_insert_with(|| {
                names.push(name.to_string());
                (names.len() - 1) as u32
            })
    }
}

/// What is being parsed: a rule's value or a variable's (inlined) text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Rule(RuleKind),
    Var(u32),
}

/// A parse failure: the diagnostic for the user and the message cpuplugd
/// itself prints when it refuses the file.
#[derive(Debug, Clone)]
pub struct ParseError {
    pub diagnostic: Box<Diagnostic>,
    pub daemon_message: String,
}

/// Text to parse and where each of its bytes came from in the file.
#[derive(Clone, Copy)]
pub struct Text<'t> {
    pub bytes: &'t [u8],
    pub map: &'t [u32],
    /// File offset just after the text (for spans at its end).
    pub end: u32,
}

impl Text<'_> {
    fn offset(&self, i: usize) -> u32 {
        self.map.get(i).copied().unwrap_or(self.end)
    }

    /// File span of `[a, b)` in this text.
    pub fn span(&self, a: usize, b: usize) -> Span {
        if b > a && b <= self.map.len() {
            Span {
                start: self.map[a],
                end: self.map[b - 1] + 1,
            }
        } else {
            let at = self.offset(a);
            Span { start: at, end: at }
        }
    }

    fn tail(&self, from: usize) -> String {
        String::from_utf8_lossy(&self.bytes[from.min(self.bytes.len())..]).into_owned()
    }
}

/// Builds expression nodes into a rule set's arena.
pub struct ExprBuilder<'a> {
    pub nodes: &'a mut Vec<Node>,
    pub vars: &'a mut [VarDef],
    /// Variables defined so far (cpuplugd only sees those).
    pub var_lookup: &'a HashMap<String, u32>,
    /// Every variable in the file with its line, to explain forward references.
    pub all_vars: &'a HashMap<String, usize>,
    pub history_max: &'a mut u32,
    pub fields: &'a mut FieldNames,
    pub expanding: Vec<u32>,
    /// Variables already inlined while the same variables were defined:
    /// where their nodes start and their body. A variable named again is
    /// copied, not parsed again, so a file whose variables double at every
    /// level reaches the node limit in milliseconds instead of seconds. The
    /// owner empties it whenever a variable is defined or nodes are dropped.
    pub inlined: &'a mut HashMap<u32, (NodeId, NodeId)>,
    /// What "did you mean" may still compare in this file.
    pub suggestions: &'a suggest::Budget,
    /// The errors after the first in what [`ExprBuilder::parse`] read
    /// last (names cpuplugd does not know, past the first), for the caller
    /// to report beside it: every error on a line at once.
    pub later: Vec<ParseError>,
}

impl ExprBuilder<'_> {
    /// Parses `text` completely (as a rule value or a variable's text).
    /// On failure the error is the first in the text, as cpuplugd would
    /// name it; [`ExprBuilder::later`] then holds those after it.
    pub fn parse(&mut self, text: Text<'_>, unit: Unit) -> Result<NodeId, ParseError> {
        self.later.clear();
        let result = self.parse_text(text, unit);
        if self.later.is_empty() {
            return result;
        }
        let mut found = std::mem::take(&mut self.later);
        if let Err(e) = result {
            found.push(e);
        }
        let first = found.remove(0);
        self.later = found;
        Err(first)
    }

    /// A name cpuplugd does not know: the rule is refused, but the reading
    /// goes on past it (as a 0) so that every other name on the line is
    /// checked too, up to [`MAX_LATER_ERRORS`].
    fn go_on_past(
        &mut self,
        e: ParseError,
        span: Span,
        text: Text<'_>,
    ) -> Result<NodeId, ParseError> {
        if self.later.len() >= MAX_LATER_ERRORS {
            return Err(e);
        }
        self.later.push(e);
        self.push(NodeKind::Const(0.0), span, text)
    }

    fn parse_text(&mut self, text: Text<'_>, unit: Unit) -> Result<NodeId, ParseError> {
        let unit_name = self.unit_name(unit);
        let whole = text.tail(0);
        let failed = |diagnostic: Diagnostic| ParseError {
            diagnostic: Box::new(diagnostic),
            daemon_message: format!("parsing error at {unit_name}, position: {whole}"),
        };
        if let Some((_, d)) = foreign_operator(text) {
            return Err(failed(d));
        }
        let Ok(source) = std::str::from_utf8(text.bytes) else {
            let at = std::str::from_utf8(text.bytes)
                .err()
                .map_or(0, |e| e.valid_up_to());
            return Err(failed(
                Diagnostic::refusal(
                    DiagnosticCode::UnexpectedCharacter,
                    text.span(at, at + 1),
                    "unexpected non-ASCII character",
                )
                .with_help("rules use only ASCII letters, digits, `_`, `.`, `[`, `]`, `(`, `)` and operators"),
            ));
        };
        let pairs = match RuleGrammar::parse(Rule::rule_prefix, source) {
            Ok(pairs) => pairs,
            Err(e) => {
                let at = match e.location {
                    pest::error::InputLocation::Pos(p) => p,
                    pest::error::InputLocation::Span((p, _)) => p,
                };
                return Err(failed(syntax_error(text, at)));
            }
        };
        let Some(top) = pairs.into_iter().next() else {
            return Err(failed(syntax_error(text, 0)));
        };
        let consumed = top.as_span().end();
        let Some(expr) = top.into_inner().next() else {
            return Err(failed(syntax_error(text, 0)));
        };
        let root = self.build(expr, text, unit)?;
        if consumed < text.bytes.len() {
            return Err(ParseError {
                diagnostic: Box::new(leftover_cause(text, consumed)),
                daemon_message: format!(
                    "parsing error at {unit_name}, position: {}",
                    text.tail(consumed)
                ),
            });
        }
        Ok(root)
    }

    fn unit_name(&self, unit: Unit) -> String {
        match unit {
            Unit::Rule(kind) => kind.daemon_name().to_string(),
            Unit::Var(v) => self.vars[v as usize].name.clone(),
        }
    }

    fn push(&mut self, kind: NodeKind, span: Span, text: Text<'_>) -> Result<NodeId, ParseError> {
        if self.nodes.len() >= MAX_NODES {
            return Err(too_large(span, text));
        }
        self.nodes.push(Node {
            kind,
            span,
            paren: false,
        });
        Ok((self.nodes.len() - 1) as NodeId)
    }

    fn build(
        &mut self,
        pair: Pair<'_, Rule>,
        text: Text<'_>,
        unit: Unit,
    ) -> Result<NodeId, ParseError> {
        let ps = pair.as_span();
        let span = text.span(ps.start(), ps.end());
        match pair.as_rule() {
            Rule::neg0 | Rule::neg1 | Rule::neg2 | Rule::neg3 | Rule::neg4 | Rule::neg5 => {
                let inner = self.only_child(pair, text, unit)?;
                self.push(NodeKind::Neg(inner), span, text)
            }
            Rule::not0 | Rule::not1 | Rule::not2 | Rule::not3 | Rule::not4 | Rule::not5 => {
                let inner = self.only_child(pair, text, unit)?;
                self.push(NodeKind::Not(inner), span, text)
            }
            Rule::chain0 | Rule::chain1 | Rule::chain2 | Rule::chain3 | Rule::chain4 => {
                let mut inner = pair.into_inner();
                let Some(first) = inner.next() else {
                    return Err(self.internal(text, ps.start()));
                };
                let mut left = self.build(first, text, unit)?;
                while let Some(op_pair) = inner.next() {
                    let op = match op_pair.as_str() {
                        "|" => BinOp::Or,
                        "&" => BinOp::And,
                        ">" => BinOp::Greater,
                        "<" => BinOp::Less,
                        "+" => BinOp::Add,
                        "-" => BinOp::Sub,
                        "*" => BinOp::Mul,
                        _ => BinOp::Div,
                    };
                    let Some(rhs) = inner.next() else {
                        return Err(self.internal(text, op_pair.as_span().start()));
                    };
                    let right = self.build(rhs, text, unit)?;
                    let joined = self.nodes[left as usize]
                        .span
                        .join(self.nodes[right as usize].span);
                    left = self.push(NodeKind::Binary(op, left, right), joined, text)?;
                }
                Ok(left)
            }
            Rule::paren => {
                let id = self.only_child(pair, text, unit)?;
                let node = &mut self.nodes[id as usize];
                node.span = span;
                node.paren = true;
                Ok(id)
            }
            Rule::number => self.push(NodeKind::Const(number::value_of(pair.as_str())), span, text),
            Rule::symbol => self.symbol(pair, text, unit),
            _ => Err(self.internal(text, ps.start())),
        }
    }

    fn only_child(
        &mut self,
        pair: Pair<'_, Rule>,
        text: Text<'_>,
        unit: Unit,
    ) -> Result<NodeId, ParseError> {
        let at = pair.as_span().start();
        match pair.into_inner().next() {
            Some(child) => self.build(child, text, unit),
            None => Err(self.internal(text, at)),
        }
    }

    fn internal(&self, text: Text<'_>, at: usize) -> ParseError {
        ParseError {
            diagnostic: Box::new(syntax_error(text, at)),
            daemon_message: format!("parsing error, position: {}", text.tail(at)),
        }
    }

    fn symbol(
        &mut self,
        pair: Pair<'_, Rule>,
        text: Text<'_>,
        unit: Unit,
    ) -> Result<NodeId, ParseError> {
        let ps = pair.as_span();
        let span = text.span(ps.start(), ps.end());
        let (word, word_range, field, index) = symbol_parts(pair);
        let word_span = text.span(word_range.0, word_range.1);
        let whole = text.tail(0);
        let unit_name = self.unit_name(unit);
        let refuse = |d: Diagnostic| ParseError {
            diagnostic: Box::new(d),
            daemon_message: format!("parsing error at {unit_name}, position: {whole}"),
        };

        if word.len() > MAX_NAME {
            return Err(name_too_long(word, word_span, text.tail(word_range.0)));
        }

        // Edge case A: a term without a name reads the variable named "",
        // when the file defined one; otherwise it is the syntax error it
        // always was.
        if word.is_empty() && !self.var_lookup.contains_key("") {
            return Err(refuse(syntax_error(text, ps.start())));
        }
        if let Some(&var) = self.var_lookup.get(word) {
            if let Some(d) = variable_misuse(word, field, index, text, ps.end()) {
                return Err(refuse(d));
            }
            return self.inline_var(var, word_span, text, unit);
        }

        if let Some((name, _, fend)) = field {
            let reading = match word {
                "meminfo" => Some(Reading::Meminfo(self.fields.slot(0, name))),
                "vmstat" => Some(Reading::Vmstat(self.fields.slot(1, name))),
                "cpustat" => Some(match CpuStat::from_name(name) {
                    Some(f) => Reading::Cpustat(f),
                    None => Reading::CpustatUnknown(self.fields.slot(2, name)),
                }),
                _ => None,
            };
            let Some(reading) = reading else {
                let dotted = format!("{word}.{name}");
                let at = text.span(word_range.0, fend);
                let e = refuse(self.unknown_name(&dotted, at, unit));
                return self.go_on_past(e, span, text);
            };
            let index_value = self.note_index(index);
            return self.push(
                NodeKind::Reading {
                    reading,
                    index: index_value,
                },
                span,
                text,
            );
        }

        if word == "time" {
            let index_value = self.note_index(index);
            return self.push(
                NodeKind::Reading {
                    reading: Reading::Time,
                    index: index_value,
                },
                span,
                text,
            );
        }
        if let Some(keyword) = Keyword::ALL.into_iter().find(|k| k.name() == word) {
            if let Some((_, start, end)) = index {
                let e = refuse(
                    Diagnostic::refusal(
                        DiagnosticCode::KeywordWithIndex,
                        text.span(start, end),
                        format!("`{word}` takes no history index"),
                    )
                    .with_help(format!(
                        "`{word}` is already computed over the last interval; only meminfo., vmstat., cpustat. and time take [n]"
                    )),
                );
                return self.go_on_past(e, span, text);
            }
            return self.push(NodeKind::Keyword(keyword), span, text);
        }
        let e = refuse(self.unknown_name(word, word_span, unit));
        self.go_on_past(e, span, text)
    }

    fn note_index(&mut self, index: Option<(u32, usize, usize)>) -> u32 {
        let value = index.map_or(0, |(v, _, _)| v);
        if *self.history_max < value {
            *self.history_max = value;
        }
        value
    }

    fn inline_var(
        &mut self,
        var: u32,
        at: Span,
        text: Text<'_>,
        unit: Unit,
    ) -> Result<NodeId, ParseError> {
        if self.expanding.len() >= MAX_DEPTH {
            return Err(too_deep(at, text));
        }
        if self.expanding.contains(&var) {
            let name = self.vars[var as usize].name.clone();
            return Err(ParseError {
                diagnostic: Box::new(
                    Diagnostic::refusal(
                        DiagnosticCode::SelfReference,
                        at,
                        format!("variable `{name}` refers to itself"),
                    )
                    .with_note(self.vars[var as usize].value_span, "its definition")
                    .with_help("cpuplugd would copy its text forever and crash"),
                ),
                daemon_message: format!("variable {name} refers to itself"),
            });
        }
        let def = &self.vars[var as usize];
        if def.text.is_empty() && !self.var_lookup.contains_key("") {
            let name = def.name.clone();
            let value_span = def.value_span;
            let whole = text.tail(0);
            let unit_name = self.unit_name(unit);
            return Err(ParseError {
                diagnostic: Box::new(
                    Diagnostic::refusal(
                        DiagnosticCode::EmptyVariable,
                        at,
                        format!("variable `{name}` is empty"),
                    )
                    .with_note(value_span, "defined here as \"\""),
                ),
                daemon_message: format!("parsing error at {unit_name}, position: {whole}"),
            });
        }
        self.vars[var as usize].uses += 1;
        if let Some(&(first, body)) = self.inlined.get(&var) {
            let body = self.copy_inlined(first, body, at, text)?;
            return self.push(NodeKind::Var { var, body }, at, text);
        }
        let first = self.nodes.len() as NodeId;
        let def = &self.vars[var as usize];
        let body_text = def.text.clone();
        let body_map = def.text_map.clone();
        let body_end = def.value_span.end;
        self.expanding.push(var);
        let mark = self.later.len();
        let body = self.parse_text(
            Text {
                bytes: &body_text,
                map: &body_map,
                end: body_end,
            },
            Unit::Var(var),
        );
        self.expanding.pop();
        // Every error met in the variable's text says where it was used.
        let used_by = match unit {
            Unit::Rule(kind) => kind.file_name().to_string(),
            Unit::Var(v) => format!("variable `{}`", self.vars[v as usize].name),
        };
        let note = |e: &mut ParseError| {
            if e.diagnostic.notes.len() < 4 {
                e.diagnostic.notes.push(super::diagnostic::Note {
                    span: at,
                    message: format!("used by {used_by} here"),
                });
            }
        };
        self.later[mark..].iter_mut().for_each(note);
        let body = body.map_err(|mut e| {
            note(&mut e);
            e
        })?;
        self.inlined.insert(var, (first, body));
        self.push(NodeKind::Var { var, body }, at, text)
    }

    /// A copy of the nodes `first..=body` (one variable's parsed text, which
    /// the parser pushed in one piece, its body last), at the arena's end.
    fn copy_inlined(
        &mut self,
        first: NodeId,
        body: NodeId,
        at: Span,
        text: Text<'_>,
    ) -> Result<NodeId, ParseError> {
        let (first, body) = (first as usize, body as usize);
        let count = body + 1 - first;
        if self.nodes.len() + count > MAX_NODES {
            return Err(too_large(at, text));
        }
        let shift = (self.nodes.len() - first) as NodeId;
        let moved = |id: NodeId| id + shift;
        for i in first..=body {
            let mut node = self.nodes[i].clone();
            node.kind = match node.kind {
                NodeKind::Neg(c) => NodeKind::Neg(moved(c)),
                NodeKind::Not(c) => NodeKind::Not(moved(c)),
                NodeKind::Binary(op, l, r) => NodeKind::Binary(op, moved(l), moved(r)),
                NodeKind::Var { var, body } => {
                    if let Some(def) = self.vars.get_mut(var as usize) {
                        def.uses += 1;
                    }
                    NodeKind::Var {
                        var,
                        body: moved(body),
                    }
                }
                other => other,
            };
            self.nodes.push(node);
        }
        Ok(moved(body as NodeId))
    }

    fn unknown_name(&self, word: &str, span: Span, unit: Unit) -> Diagnostic {
        let d = Diagnostic::refusal(
            DiagnosticCode::UnknownName,
            span,
            format!("unknown name `{word}`"),
        );
        // `meminfo Buffers` arrives as `meminfoBuffers`.
        for prefix in ["meminfo", "vmstat", "cpustat"] {
            if let Some(rest) = word.strip_prefix(prefix)
                && !rest.is_empty()
                && !rest.starts_with('.')
                && rest.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
            {
                return Diagnostic {
                    message: format!(
                        "unknown name `{word}`: cpuplugd removes all spaces, so `{prefix} {rest}` reads as one word"
                    ),
                    ..d
                }
                .with_replacement(format!("{prefix}.{rest}"));
            }
        }
        if let Some(line) = self.all_vars.get(word) {
            let here = match unit {
                Unit::Rule(kind) => kind.file_name().to_string(),
                Unit::Var(v) => format!("variable `{}`", self.vars[v as usize].name),
            };
            return d.with_help(format!(
                "`{word}` is defined on line {line}, after {here}; cpuplugd only knows variables defined before the rule that uses them: move the definition up"
            ));
        }
        if let Some(keyword) = Keyword::ALL
            .iter()
            .map(|k| k.name())
            .chain(["time"])
            .find(|k| k.eq_ignore_ascii_case(word))
        {
            return d
                .with_help(format!(
                    "names in rules are case-sensitive: write `{keyword}`"
                ))
                .with_replacement(keyword.to_string());
        }
        let candidates = Keyword::ALL
            .iter()
            .map(|k| k.name())
            .chain(["time"])
            .chain(self.var_lookup.keys().map(String::as_str));
        if let Some(best) = self.suggestions.best_match(word, candidates) {
            return d
                .with_help(format!("did you mean `{best}`?"))
                .with_replacement(best.to_string());
        }
        d.with_help("a name is a user variable defined above, loadavg, onumcpus, runnable_proc, a CPU share (user, idle, ...), freemem, apcr, swaprate, time, or meminfo./vmstat./cpustat. followed by a field")
    }
}

/// The refusal of a rule whose variables expand past [`MAX_NODES`].
fn too_large(span: Span, text: Text<'_>) -> ParseError {
    ParseError {
        diagnostic: Box::new(
            Diagnostic::refusal(
                DiagnosticCode::TooLarge,
                span,
                "with this rule, the rules expand to more than a million terms in all",
            )
            .with_help(
                "cpuplugd copies a variable's text everywhere it is named; use fewer nested variables",
            ),
        ),
        daemon_message: format!("expression too large: {}", text.tail(0)),
    }
}

/// The refusal of variables nested past [`MAX_DEPTH`].
fn too_deep(span: Span, text: Text<'_>) -> ParseError {
    ParseError {
        diagnostic: Box::new(
            Diagnostic::refusal(
                DiagnosticCode::TooDeep,
                span,
                format!("variables name each other more than {MAX_DEPTH} deep here; plugtop stopped expanding them"),
            )
            .with_help("no file within cpuplugd's 4,096 bytes of variables nests this deep: use fewer variables"),
        ),
        daemon_message: format!("buffer for variables too small: nested past {MAX_DEPTH} at {}", text.tail(0)),
    }
}

/// cpuplugd's limit on the length of a name.
fn name_too_long(word: &str, span: Span, rest: String) -> ParseError {
    ParseError {
        diagnostic: Box::new(Diagnostic::refusal(
            DiagnosticCode::NameTooLong,
            span,
            format!(
                "a name of {} characters; cpuplugd allows at most {MAX_NAME}",
                word.len()
            ),
        )),
        daemon_message: format!("Variable name too long (max. length is {MAX_NAME} chars): {rest}"),
    }
}

/// A user variable cannot take `.field` or `[n]` (cpuplugd tries user
/// variables first, so the name cannot mean the keyword either).
fn variable_misuse(
    word: &str,
    field: Option<(&str, usize, usize)>,
    index: Option<(u32, usize, usize)>,
    text: Text<'_>,
    end: usize,
) -> Option<Diagnostic> {
    if let Some((_, start, _)) = field {
        let dot = start.saturating_sub(1);
        return Some(
            Diagnostic::refusal(
                DiagnosticCode::VariableWithField,
                text.span(dot, end),
                format!("`{word}` is a user variable here, so `.` cannot follow it"),
            )
            .with_help(format!(
                "cpuplugd tries user variables first; rename the variable `{word}` so it does not hide `{word}.`"
            )),
        );
    }
    if let Some((_, start, end)) = index {
        return Some(
            Diagnostic::refusal(
                DiagnosticCode::VariableWithIndex,
                text.span(start, end),
                format!("user variable `{word}` cannot take a history index"),
            )
            .with_help(
                "only meminfo., vmstat., cpustat. and time take [n]; put the index on those names inside the variable",
            ),
        );
    }
    None
}

/// A name's parts: the word and where it is, the `.field` and the `[n]`.
type Parts<'a> = (
    &'a str,
    (usize, usize),
    Option<(&'a str, usize, usize)>,
    Option<(u32, usize, usize)>,
);

/// Splits a parsed name into its parts.
fn symbol_parts(pair: Pair<'_, Rule>) -> Parts<'_> {
    let start = pair.as_span().start();
    let mut word = "";
    let mut word_range = (start, start);
    let mut field: Option<(&str, usize, usize)> = None;
    let mut index: Option<(u32, usize, usize)> = None;
    for part in pair.into_inner() {
        let s = part.as_span();
        match part.as_rule() {
            Rule::word => {
                word = part.as_str();
                word_range = (s.start(), s.end());
            }
            Rule::field => field = Some((part.as_str(), s.start(), s.end())),
            Rule::index => {
                let digits = part.as_str().trim_start_matches('[').trim_end_matches(']');
                index = Some((c_index(digits), s.start(), s.end()));
            }
            _ => {}
        }
    }
    (word, word_range, field, index)
}

/// The history index as cpuplugd stores it: `strtol` into an `unsigned int`.
fn c_index(digits: &str) -> u32 {
    let mut v: i64 = 0;
    for b in digits.bytes() {
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    v as u32
}

pub(crate) fn example_field(word: &str) -> &'static str {
    match word {
        "meminfo" => "MemFree",
        "vmstat" => "pgscan_direct",
        _ => "user",
    }
}

/// How many errors one rule's line reports past its first: each foreign
/// operator is read as cpuplugd's nearest one and the rule read again.
pub const MAX_LATER_ERRORS: usize = 8;

/// The first operator from another language in `text` (its byte offset),
/// rewritten in place as cpuplugd's nearest one (`&&` as `&`, `>=` as
/// `>`), so that the errors after it can be looked for; false when the
/// text has none. The byte's file offset stays the operator's first.
pub fn read_past_foreign_operator(bytes: &mut Vec<u8>, map: &mut Vec<u32>, end: u32) -> bool {
    let Some((at, _)) = foreign_operator(Text { bytes, map, end }) else {
        return false;
    };
    let nearest = match bytes[at] {
        b'=' | b'!' => b'>',
        first => first,
    };
    bytes[at] = nearest;
    bytes.remove(at + 1);
    if at + 1 < map.len() {
        map.remove(at + 1);
    }
    true
}

/// Operators from other languages, recognised only to say what to write:
/// the first one's byte offset and what to say.
fn foreign_operator(text: Text<'_>) -> Option<(usize, Diagnostic)> {
    let b = text.bytes;
    for i in 0..b.len().saturating_sub(1) {
        let pair = &b[i..i + 2];
        let (msg, help, replacement) = match pair {
            b"&&" => (
                "`&&` is not an operator in cpuplugd rules",
                "cpuplugd's logical and is a single `&`",
                Some("&"),
            ),
            b"||" => (
                "`||` is not an operator in cpuplugd rules",
                "cpuplugd's logical or is a single `|`",
                Some("|"),
            ),
            b">=" => (
                "cpuplugd has no `>=`",
                "write `!(x < y)` for `x >= y`, in parentheses of its own beside other terms: `!` takes everything to its right, so `!(x < y) & z` is `!((x < y) & z)`; or `x > y` if equality does not matter",
                None,
            ),
            b"<=" => (
                "cpuplugd has no `<=`",
                "write `!(x > y)` for `x <= y`, in parentheses of its own beside other terms: `!` takes everything to its right, so `!(x > y) & z` is `!((x > y) & z)`; or `x < y` if equality does not matter",
                None,
            ),
            b"==" => (
                "cpuplugd has no `==`",
                "values are doubles; compare with a tolerance, e.g. `x > y - 0.5 & x < y + 0.5`, or write `(!(x < y)) & (!(x > y))` (without the parentheses around the first, its `!` would take the rest)",
                None,
            ),
            b"!=" => ("cpuplugd has no `!=`", "write `(x < y | x > y)`", None),
            _ => continue,
        };
        let d = Diagnostic::refusal(DiagnosticCode::ForeignOperator, text.span(i, i + 2), msg)
            .with_help(help);
        return Some((
            i,
            match replacement {
                Some(r) => Diagnostic {
                    replacement: Some(r.to_string()),
                    ..d
                },
                None => d,
            },
        ));
    }
    None
}

fn syntax_error(text: Text<'_>, at: usize) -> Diagnostic {
    let at = at.min(text.bytes.len());
    if at >= text.bytes.len() {
        let span = text.span(text.bytes.len(), text.bytes.len());
        if let Some(&last) = text.bytes.last()
            && b"|&<>+-*/!".contains(&last)
        {
            let n = text.bytes.len();
            return Diagnostic::refusal(
                DiagnosticCode::Syntax,
                text.span(n - 1, n),
                format!(
                    "`{}` at the end needs a number, a name or `(` after it",
                    char::from(last)
                ),
            );
        }
        let open = text.bytes.iter().filter(|b| **b == b'(').count();
        let close = text.bytes.iter().filter(|b| **b == b')').count();
        if open > close {
            return Diagnostic::refusal(DiagnosticCode::Syntax, span, "missing `)`")
                .with_help(format!("{} `(` but only {close} `)`", open));
        }
        if text.bytes.is_empty() {
            return Diagnostic::refusal(DiagnosticCode::Syntax, span, "empty expression");
        }
        return Diagnostic::refusal(
            DiagnosticCode::Syntax,
            span,
            "the expression ends where a number or a name should follow",
        );
    }
    let (c, len) = char_at(text.bytes, at);
    let span = text.span(at, at + len);
    let what = describe(c);
    Diagnostic::refusal(
        DiagnosticCode::Syntax,
        span,
        format!("expected a number, a name, `(`, `-` or `!`, found {what}"),
    )
}

/// Why the text after a complete expression does not parse. When it starts
/// with an operator, the operator is fine: what follows it is what failed
/// (`(a < 1) | (b > (c / 3 +` fails at its end, not at `|`), so the search
/// goes on there.
fn leftover_cause(text: Text<'_>, mut at: usize) -> Diagnostic {
    let b = text.bytes;
    while at < b.len() && b"|&<>+-*/".contains(&b[at]) {
        let from = at + 1;
        let Ok(rest) = std::str::from_utf8(&b[from..]) else {
            break;
        };
        match RuleGrammar::parse(Rule::rule_prefix, rest) {
            Err(e) => {
                let p = match e.location {
                    pest::error::InputLocation::Pos(p) => p,
                    pest::error::InputLocation::Span((p, _)) => p,
                };
                return syntax_error(text, from + p);
            }
            Ok(pairs) => {
                let consumed = pairs.into_iter().next().map_or(0, |p| p.as_span().end());
                if consumed == 0 || from + consumed >= b.len() {
                    break;
                }
                at = from + consumed;
            }
        }
    }
    leftover_error(text, at)
}

fn leftover_error(text: Text<'_>, at: usize) -> Diagnostic {
    let b = text.bytes;
    let (c, len) = char_at(b, at);
    let span = text.span(at, at + len);
    // A digit right after a field name: the name ended at the digit.
    if c.is_ascii_digit() && at > 0 && (b[at - 1].is_ascii_alphabetic() || b[at - 1] == b'_') {
        let mut start = at;
        while start > 0
            && (b[start - 1].is_ascii_alphanumeric()
                || b[start - 1] == b'_'
                || b[start - 1] == b'.')
        {
            start -= 1;
        }
        let mut end = at;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
            end += 1;
        }
        let name = String::from_utf8_lossy(&b[start..end]).into_owned();
        let kept = String::from_utf8_lossy(&b[start..at]).into_owned();
        let mut d = Diagnostic::refusal(
            DiagnosticCode::DigitInName,
            text.span(at, end),
            format!(
                "cpuplugd reads field names up to the first digit: `{name}` is read as `{kept}` followed by `{}`",
                &name[kept.len()..]
            ),
        );
        if let Some(field) = name.strip_prefix("vmstat.")
            && let Some(new) = suggest::renamed_vmstat(field)
        {
            d = d.with_help(format!(
                "no field with digits can be used; on kernels since 4.8 the per-zone counters are merged into `vmstat.{new}`"
            ));
        } else {
            d = d.with_help("fields with digits in their names cannot be used in cpuplugd rules");
        }
        return d;
    }
    if "|&<>+-*/".contains(c) {
        return Diagnostic::refusal(
            DiagnosticCode::Syntax,
            span,
            format!("`{c}` needs a number, a name or `(` after it"),
        );
    }
    let mut d = Diagnostic::refusal(
        DiagnosticCode::Syntax,
        span,
        format!(
            "unexpected {}: cpuplugd stops reading the rule here",
            describe(c)
        ),
    );
    d = match c {
        ')' => d.with_help("this `)` has no matching `(`"),
        '(' | '0'..='9' | 'a'..='z' | 'A'..='Z' | '_' => d.with_help("an operator (`|`, `&`, `<`, `>`, `+`, `-`, `*`, `/`) is missing before it"),
        '=' => d.with_help("cpuplugd has no `=` comparison; see `<` and `>`"),
        '"' => d.with_help("a value is the text between the first and the last `\"` on the line"),
        '[' => d.with_help("only meminfo., vmstat., cpustat. and time take a history index `[n]`, and n must be digits"),
        _ => d.with_help("cpuplugd knows only `|`, `&`, `<`, `>`, `+`, `-`, `*`, `/`, `!` and parentheses"),
    };
    d
}

/// The character that starts at byte `at` (all of its UTF-8 bytes) and its
/// length in bytes; a byte that starts no character is U+FFFD, one byte.
fn char_at(bytes: &[u8], at: usize) -> (char, usize) {
    let rest = &bytes[at.min(bytes.len())..(at + 4).min(bytes.len())];
    let valid = match std::str::from_utf8(rest) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or(""),
    };
    match valid.chars().next() {
        Some(c) => (c, c.len_utf8()),
        None => (char::REPLACEMENT_CHARACTER, 1),
    }
}

fn describe(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("`{c}`")
    } else if c.is_control() || c == ' ' {
        format!("character {}", c.escape_default())
    } else {
        format!("character `{c}` (U+{:04X})", u32::from(c))
    }
}
