//! The UI's what-if (`w`): edit one rule in place, see at every keystroke
//! whether cpuplugd would accept the file, and on Enter see what the edited
//! rules would have done over the history on screen.
//!
//! Over live or recorded readings this is open loop (the readings cannot
//! react to other actions); on the simulator it is closed loop: the
//! scenario is played again from the same seed under the edited rules.

use std::sync::Arc;

use crate::control::flap::{FlapDetector, Moves};
use crate::engine::Engine;
use crate::kernel::Sample;
use crate::rules::eval::NoTrace;
use crate::rules::{RuleKind, RuleSet, Severity, SourceFile, SystemFacts, load};
use crate::sim::Scenario;
use crate::sim::run::{SimOptions, simulate_loaded};

/// What the edited rules would have done.
#[derive(Debug, Clone, PartialEq)]
pub struct Counterfactual {
    /// Per reading number: what the edited rules did.
    pub actions: Vec<(usize, Moves)>,
    /// Reversals of the real decisions and of the edited ones.
    pub reversals: (usize, usize),
    /// Actions taken (CPU and pool) by each.
    pub changes: (usize, usize),
    pub closed_loop: bool,
    /// The newest reading it covers.
    pub upto: usize,
}

/// The one-line editor and its result.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfEditor {
    pub rule: RuleKind,
    pub text: String,
    /// Cursor position, in characters.
    pub cursor: usize,
    /// The first error cpuplugd would refuse the edited file for, and its
    /// column in `text` (0-based characters) when it lies there.
    pub error: Option<(String, Option<usize>)>,
    pub result: Option<Counterfactual>,
    /// The line is a rule file's path instead of one rule (Ctrl-O switches).
    pub file_mode: bool,
    /// Edits of the other rules, kept across Tab: all of them are tried
    /// together (HOTPLUG and HOTUNPLUG usually change as a pair).
    pub edits: Vec<(RuleKind, String)>,
}

/// The text of `kind` in the loaded rules, or empty when the file has none.
fn rule_text(rules: &RuleSet, file: &SourceFile, kind: RuleKind) -> String {
    rules
        .rule(kind)
        .map(|r| file.snippet(r.value_span))
        .unwrap_or_default()
}

impl WhatIfEditor {
    /// An editor on `kind`, holding its current text, the cursor at the end.
    pub fn open(rules: &RuleSet, file: &SourceFile, kind: RuleKind) -> Self {
        let text = rule_text(rules, file, kind);
        WhatIfEditor {
            rule: kind,
            cursor: text.chars().count(),
            text,
            error: None,
            result: None,
            file_mode: false,
            edits: Vec::new(),
        }
    }

    /// The rules whose text differs from the loaded file's, current included.
    pub fn edited_rules(&self, rules: &RuleSet, file: &SourceFile) -> Vec<RuleKind> {
        let mut out: Vec<RuleKind> = self
            .all_edits()
            .into_iter()
            .filter(|(k, t)| *t != rule_text(rules, file, *k))
            .map(|(k, _)| k)
            .collect();
        out.sort_by_key(|k| k.index());
        out
    }

    /// Every edit: the kept ones and the one being typed.
    fn all_edits(&self) -> Vec<(RuleKind, String)> {
        let mut all: Vec<(RuleKind, String)> = self
            .edits
            .iter()
            .filter(|(k, _)| *k != self.rule)
            .cloned()
            .collect();
        if !self.file_mode {
            all.push((self.rule, self.text.clone()));
        }
        all
    }

    /// Switches between editing the rule and naming a whole rule file.
    pub fn toggle_file_mode(&mut self, rules: &RuleSet, file: &SourceFile) {
        if self.file_mode {
            *self = WhatIfEditor::open(rules, file, self.rule);
        } else {
            self.file_mode = true;
            self.text.clear();
            self.cursor = 0;
            self.error = None;
            self.result = None;
        }
    }

    /// Moves to the next rule kind, keeping the edit of this one.
    pub fn next_rule(&mut self, rules: &RuleSet, file: &SourceFile) {
        let i = RuleKind::ALL
            .iter()
            .position(|k| *k == self.rule)
            .unwrap_or(0);
        let edits = self.all_edits();
        let next = RuleKind::ALL[(i + 1) % RuleKind::ALL.len()];
        let text = edits
            .iter()
            .find(|(k, _)| *k == next)
            .map_or_else(|| rule_text(rules, file, next), |(_, t)| t.clone());
        self.edits = edits;
        self.rule = next;
        self.cursor = text.chars().count();
        self.text = text;
    }

    fn byte(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map_or(self.text.len(), |(b, _)| b)
    }

    /// Inserts a character at the cursor.
    pub fn insert(&mut self, c: char) {
        let at = self.byte(self.cursor);
        self.text.insert(at, c);
        self.cursor += 1;
        self.result = None;
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if self.cursor > 0 {
            self.cursor -= 1;
            let at = self.byte(self.cursor);
            self.text.remove(at);
            self.result = None;
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if self.cursor < self.text.chars().count() {
            let at = self.byte(self.cursor);
            self.text.remove(at);
            self.result = None;
        }
    }

    /// Moves the cursor by `by` characters, within the text.
    pub fn move_by(&mut self, by: isize) {
        let n = self.text.chars().count() as isize;
        self.cursor = (self.cursor as isize + by).clamp(0, n) as usize;
    }

    /// To the start (`false`) or the end (`true`).
    pub fn home_end(&mut self, end: bool) {
        self.cursor = if end { self.text.chars().count() } else { 0 };
    }

    /// The rule file with this rule's line replaced by the edit (or the
    /// edit appended when the file has no such rule), and the byte offset
    /// where the edited text starts in it.
    pub fn edited_file(&self, rules: &RuleSet, file: &SourceFile) -> (SourceFile, usize) {
        let original = file.bytes();
        let edits = self.all_edits();
        let line_of = |kind: RuleKind, text: &str| format!("{}=\"{}\"", kind.file_name(), text);
        // Each edited rule replaces its line; rules the file lacks go at the end.
        let mut replaced: Vec<(usize, usize, RuleKind, String)> = edits
            .iter()
            .filter_map(|(k, t)| {
                rules.rule(*k).map(|r| {
                    let start = file.line_start(r.line);
                    (
                        start,
                        start + file.line_bytes(r.line).len(),
                        *k,
                        line_of(*k, t),
                    )
                })
            })
            .collect();
        replaced.sort_by_key(|r| r.0);
        let mut bytes = Vec::with_capacity(original.len() + 256);
        let mut at = None;
        let mut pos = 0;
        for (start, end, kind, line) in &replaced {
            bytes.extend_from_slice(&original[pos..*start]);
            if *kind == self.rule {
                at = Some(bytes.len() + kind.file_name().len() + 2);
            }
            bytes.extend_from_slice(line.as_bytes());
            pos = *end;
        }
        bytes.extend_from_slice(&original[pos..]);
        for (kind, text) in edits.iter().filter(|(k, _)| rules.rule(*k).is_none()) {
            if !bytes.ends_with(b"\n") && !bytes.is_empty() {
                bytes.push(b'\n');
            }
            if *kind == self.rule {
                at = Some(bytes.len() + kind.file_name().len() + 2);
            }
            bytes.extend_from_slice(line_of(*kind, text).as_bytes());
            bytes.push(b'\n');
        }
        (
            SourceFile::new(format!("{} (edited)", file.name()), bytes),
            at.unwrap_or(0),
        )
    }

    /// Loads the edited file: the rules when cpuplugd would take them,
    /// else the first refusing error (also kept in `self.error`).
    pub fn check(
        &mut self,
        rules: &RuleSet,
        file: &SourceFile,
        facts: &SystemFacts,
    ) -> Option<(Arc<RuleSet>, SourceFile)> {
        if self.file_mode {
            if self.text.trim().is_empty() {
                self.error = Some(("type the path of a rule file".into(), None));
                return None;
            }
            return match crate::rules::load_path(std::path::Path::new(self.text.trim()), facts) {
                Ok((r, f)) => {
                    self.error = None;
                    Some((Arc::new(r), f))
                }
                Err(e) => {
                    self.error = Some((e.headline(), None));
                    None
                }
            };
        }
        let (edited, at) = self.edited_file(rules, file);
        let outcome = load(&edited, facts);
        if outcome.refusal.is_none() {
            self.error = None;
            return Some((Arc::new(outcome.rules), edited));
        }
        let first = outcome
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| {
                let start = d.span.start as usize;
                let column = (start >= at && start <= at + self.text.len()).then(|| {
                    self.text[..(start - at).min(self.text.len())]
                        .chars()
                        .count()
                });
                (d.message.clone(), column)
            })
            .or_else(|| outcome.refusal.as_ref().map(|r| (r.message.clone(), None)));
        self.error = first;
        None
    }

    /// Runs the edited rules over `history` (oldest first, each with the
    /// reading number and the real decision's action word), open loop, or
    /// closed loop on `scenario` when there is one.
    pub fn run(
        &mut self,
        rules: Arc<RuleSet>,
        file: &SourceFile,
        history: &[(usize, &Sample, Moves)],
        scenario: Option<(&Scenario, bool)>,
        flap: crate::control::flap::FlapConfig,
    ) {
        let mut actions = Vec::new();
        let mut closed_loop = false;
        if let Some((scenario, old_kernel)) = scenario {
            let last = history.last().map_or(0, |h| h.0);
            let options = SimOptions {
                duration: Some((last as f64) * rules.settings.update.max(1) as f64),
                old_kernel,
                keep_timeline: true,
                flap,
                ..SimOptions::default()
            };
            if let Ok(o) = simulate_loaded(
                scenario,
                rules.clone(),
                file,
                &options,
                &mut |_| {},
                &mut |_| {},
            ) {
                closed_loop = true;
                actions = o.timeline.iter().map(|p| (p.reading, p.moves)).collect();
            }
        }
        if !closed_loop {
            let mut engine = Engine::new(rules);
            for (reading, sample, _) in history {
                if let Some(d) = engine.push(sample, &mut NoTrace) {
                    actions.push((*reading, Moves::of(&d)));
                }
            }
        }
        let first = history.first().map_or(0, |h| h.0);
        actions.retain(|(r, _)| *r >= first);
        let real: Vec<Moves> = history.iter().map(|h| h.2).collect();
        let edited: Vec<Moves> = actions.iter().map(|a| a.1).collect();
        self.result = Some(Counterfactual {
            upto: history.last().map_or(0, |h| h.0),
            reversals: (reversals(&real, flap), reversals(&edited, flap)),
            changes: (changes(&real), changes(&edited)),
            actions,
            closed_loop,
        });
    }
}

fn changes(moves: &[Moves]) -> usize {
    moves.iter().filter(|m| !m.is_none()).count()
}

fn reversals(moves: &[Moves], flap: crate::control::flap::FlapConfig) -> usize {
    let mut d = FlapDetector::new(flap);
    for (i, m) in moves.iter().enumerate() {
        d.observe(i, *m);
    }
    d.total_reversals()
}
