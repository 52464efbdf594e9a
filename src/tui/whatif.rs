//! The UI's what-if (`w`): edit rules, limits and variables in place (Tab
//! moves between them, every edit is kept), see at every keystroke whether
//! cpuplugd would accept the file, and on Enter see what the edited rules
//! would have done over the history on screen.
//!
//! Over live or recorded readings this is open loop (the readings cannot
//! react to other actions); on the simulator it is closed loop: the
//! scenario is played again from the same seed under the edited rules.

use std::sync::Arc;

use crate::control::controller::Mode;
use crate::control::flap::{FlapDetector, Moves};
use crate::control::session::Session;
use crate::kernel::Sample;
use crate::kernel::actuator::NoWrites;
use crate::rules::{RuleKind, RuleSet, Setting, Severity, SourceFile, SystemFacts, load};
use crate::sim::Scenario;
use crate::sim::report::SimReport;
use crate::sim::run::{SimOptions, simulate_loaded};
use crate::tui::layer_keys::{EDITOR_KEYS, EditorAction, action_in};
use crate::tui::line_input::LineInput;
use crossterm::event::KeyEvent;

/// What the edited rules would have done.
#[derive(Debug, Clone, PartialEq)]
pub struct Counterfactual {
    /// Per reading number of the history: what the edited rules did.
    pub actions: Vec<(usize, Moves)>,
    /// Reversals of the real decisions and of the edited ones.
    pub reversals: (usize, usize),
    /// Actions decided (CPU and pool) by the loaded rules and the edited ones.
    pub changes: (usize, usize),
    /// How many of the loaded rules' decisions were really applied to the
    /// guest: observe mode's "would" is not an action. On a replay, what
    /// the recorded guest did (as `plugtop whatif`'s "recorded" column).
    pub applied: usize,
    /// Of those, CPUs plugged and unplugged.
    pub applied_cpus: (usize, usize),
    pub closed_loop: bool,
    /// The newest reading it covers.
    pub upto: usize,
    /// Per reading number of the history it ran over, oldest first: what
    /// the loaded rules decided. The box draws and counts this window, the
    /// one kept at Enter, however the history moves on meanwhile.
    pub loaded: Vec<(usize, Moves)>,
    /// Set when the edit changes UPDATE: how the two paces were matched.
    pub pace: Option<String>,
    /// Closed loop: the report of the scenario played under the rules in
    /// force and under the edited ones, over the same time (what `plugtop
    /// sim --compare` shows); none for a replay, which cannot react.
    pub reports: Option<Box<(SimReport, SimReport)>>,
    /// Why cpuplugd would exit under the rules in force or the edited ones
    /// (closed loop) or under the edited ones (open loop), as `plugtop sim
    /// --compare` says it ([`crate::sim::report::cpuplugd_stops`]): the
    /// run ends there, and a stopped run's figures mean nothing.
    pub stops: Vec<String>,
}

/// What one line of the editor changes: a rule, a limit or a variable —
/// a tuner moves thresholds, limits and the averages they use together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    Rule(RuleKind),
    Limit(Setting),
    Variable(String),
}

impl Field {
    /// The name on the file's line.
    pub fn name(&self) -> &str {
        match self {
            Field::Rule(k) => k.file_name(),
            Field::Limit(s) => s.file_name(),
            Field::Variable(v) => v,
        }
    }

    /// Every field in editing order: the rules, the limits, then the
    /// file's variables as written.
    pub fn all(rules: &RuleSet) -> Vec<Field> {
        let mut out: Vec<Field> = RuleKind::ALL.iter().map(|k| Field::Rule(*k)).collect();
        out.extend(Setting::ALL.map(Field::Limit));
        out.extend(
            rules
                .variables
                .iter()
                .map(|v| Field::Variable(v.name.clone())),
        );
        out
    }

    /// The 1-based line that sets it (the last one counts), if any.
    pub fn line(&self, rules: &RuleSet, file: &SourceFile) -> Option<usize> {
        match self {
            Field::Rule(k) => rules.rule(*k).map(|r| r.line),
            Field::Limit(s) => {
                rules.setting_spans[s.index()].map(|s| file.line_of(s.start as usize))
            }
            Field::Variable(name) => rules
                .variables
                .iter()
                .find(|v| v.name == *name)
                .map(|v| v.line),
        }
    }

    /// Its text in the loaded file, or empty when the file does not set it.
    pub fn text(&self, rules: &RuleSet, file: &SourceFile) -> String {
        match self {
            Field::Rule(k) => rules
                .rule(*k)
                .map(|r| file.snippet(r.value_span))
                .unwrap_or_default(),
            // As written: CPU_MAX="0" means every CPU, not the count it
            // resolves to.
            Field::Limit(_) => self
                .line(rules, file)
                .map(|line| {
                    let text = String::from_utf8_lossy(file.line_bytes(line)).into_owned();
                    let value = text.split_once('=').map_or("", |(_, v)| v).trim();
                    value.trim_matches('"').to_string()
                })
                .unwrap_or_default(),
            Field::Variable(name) => rules
                .variables
                .iter()
                .find(|v| v.name == *name)
                .map(|v| file.snippet(v.value_span))
                .unwrap_or_default(),
        }
    }
}

/// The one-line editor and its result.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfEditor {
    /// The field being typed.
    field: Field,
    /// The field's text (or the rule file's path) being typed.
    input: LineInput,
    /// The first error cpuplugd would refuse the edited file for, and its
    /// column in `text` (0-based characters) when it lies there.
    error: Option<(String, Option<usize>)>,
    /// Where cpuplugd, having loaded the edit, would stop the first time it
    /// evaluates it (the first such place, `line L:C`): a file it loads is
    /// not yet a file it runs.
    stops: Option<String>,
    /// What the edited rules would have done, once they load.
    result: Option<Counterfactual>,
    /// The line is a rule file's path instead of one rule (Ctrl-O switches).
    file_mode: bool,
    /// Edits of the other fields, kept across Tab: all of them are tried
    /// together (HOTPLUG and HOTUNPLUG usually change as a pair).
    edits: Vec<(Field, String)>,
    /// How many times the edit was checked: loading a pasted megabyte is
    /// work, so a paste or a batch of keys is checked once (tests count).
    checks: usize,
    /// Why the tune did not recommend the point it holds (a point picked
    /// off the tune's front that is not the recommendation).
    caution: Option<String>,
}

impl WhatIfEditor {
    /// An editor on `kind`, holding its current text, the cursor at the end.
    pub fn open(rules: &RuleSet, file: &SourceFile, kind: RuleKind) -> Self {
        let field = Field::Rule(kind);
        let text = field.text(rules, file);
        WhatIfEditor {
            field,
            input: LineInput::new(text),
            error: None,
            stops: None,
            result: None,
            file_mode: false,
            edits: Vec::new(),
            checks: 0,
            caution: None,
        }
    }

    /// An editor holding `edits` (a tune's numbers), the first of them
    /// being typed; on HOTPLUG when there are none. An "edit" that changes
    /// only blanks is none (cpuplugd reads the same line): it is left out,
    /// so the editor opens on a field the edit really changed.
    pub fn with_edits(rules: &RuleSet, file: &SourceFile, mut edits: Vec<(Field, String)>) -> Self {
        edits.retain(|(f, t)| blanks_collapsed(t) != blanks_collapsed(&f.text(rules, file)));
        let mut editor = WhatIfEditor::open(rules, file, RuleKind::Hotplug);
        if let Some((first, text)) = edits.first().cloned() {
            editor.field = first;
            editor.input = LineInput::new(text);
        }
        editor.edits = edits;
        editor
    }

    /// Says why the tune did not recommend what it holds.
    pub fn with_caution(mut self, caution: Option<String>) -> Self {
        self.caution = caution;
        self
    }

    /// Why the tune did not recommend what it holds, if it did not.
    pub fn caution(&self) -> Option<&str> {
        self.caution.as_deref()
    }

    /// The field being typed.
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// The field's text (or the rule file's path) being typed.
    pub fn input(&self) -> &LineInput {
        &self.input
    }

    /// The first error cpuplugd would refuse the edited file for, and its
    /// column in the text when it lies there.
    pub fn error(&self) -> Option<&(String, Option<usize>)> {
        self.error.as_ref()
    }

    /// Where cpuplugd would stop after loading the edit, if anywhere.
    pub fn stops(&self) -> Option<&str> {
        self.stops.as_deref()
    }

    /// What the edited rules would have done, once they load.
    pub fn result(&self) -> Option<&Counterfactual> {
        self.result.as_ref()
    }

    /// Whether the line is a rule file's path instead of one rule.
    pub fn file_mode(&self) -> bool {
        self.file_mode
    }

    /// The edits kept of the other fields.
    pub fn edits(&self) -> &[(Field, String)] {
        &self.edits
    }

    /// How many times the edit was checked (a batch of keys is checked
    /// once).
    pub fn checks(&self) -> usize {
        self.checks
    }

    /// The fields whose text differs from the loaded file's, current
    /// included, in editing order.
    pub fn edited_fields(&self, rules: &RuleSet, file: &SourceFile) -> Vec<Field> {
        let edits = self.changed_edits(rules, file);
        Field::all(rules)
            .into_iter()
            .filter(|f| edits.iter().any(|(e, _)| e == f))
            .collect()
    }

    /// The edits that change something: a field typed back to what the
    /// file says (blanks aside, which cpuplugd skips) is no edit, and its
    /// line is left as it is.
    fn changed_edits(&self, rules: &RuleSet, file: &SourceFile) -> Vec<(Field, String)> {
        self.all_edits()
            .into_iter()
            .filter(|(f, t)| blanks_collapsed(t) != blanks_collapsed(&f.text(rules, file)))
            .collect()
    }

    /// Every edit: the kept ones and the one being typed.
    fn all_edits(&self) -> Vec<(Field, String)> {
        let mut all: Vec<(Field, String)> = self
            .edits
            .iter()
            .filter(|(f, _)| *f != self.field)
            .cloned()
            .collect();
        if !self.file_mode {
            all.push((self.field.clone(), self.input.text().to_string()));
        }
        all
    }

    /// Switches between editing the rules and naming a whole rule file.
    /// The edits are kept meanwhile: back from the file, the field typed
    /// before holds its edit again.
    pub fn toggle_file_mode(&mut self, rules: &RuleSet, file: &SourceFile) {
        if self.file_mode {
            self.file_mode = false;
            let text = self
                .edits
                .iter()
                .find(|(f, _)| *f == self.field)
                .map_or_else(|| self.field.text(rules, file), |(_, t)| t.clone());
            self.input = LineInput::new(text);
        } else {
            self.edits = self.all_edits();
            self.file_mode = true;
            self.input = LineInput::default();
        }
        self.error = None;
        self.stops = None;
        self.result = None;
    }

    /// Moves to the next field (`by` 1) or the previous one (`by` -1),
    /// keeping the edit of this one.
    pub fn step_field(&mut self, rules: &RuleSet, file: &SourceFile, by: isize) {
        let fields = Field::all(rules);
        let i = fields.iter().position(|f| *f == self.field).unwrap_or(0) as isize;
        let n = fields.len() as isize;
        let next = fields[(i + by).rem_euclid(n) as usize].clone();
        let edits = self.all_edits();
        let text = edits
            .iter()
            .find(|(f, _)| *f == next)
            .map_or_else(|| next.text(rules, file), |(_, t)| t.clone());
        self.edits = edits;
        self.field = next;
        self.input = LineInput::new(text);
    }

    /// A key of [`EDITOR_KEYS`] that stays in the editor: Tab and ⇧Tab move
    /// between the fields, Ctrl-O names a whole rule file (and back), any
    /// other key edits the text. Whether the edit may have changed, so
    /// that it needs a check. The keys that leave the editor (run, apply,
    /// write, close) are the screen's: each screen does its own with them.
    pub fn edit(&mut self, key: KeyEvent, rules: &RuleSet, file: &SourceFile) -> bool {
        match action_in(EDITOR_KEYS, key) {
            Some(EditorAction::NextField) if !self.file_mode => {
                self.step_field(rules, file, 1);
                true
            }
            Some(EditorAction::PreviousField) if !self.file_mode => {
                self.step_field(rules, file, -1);
                true
            }
            Some(EditorAction::FileMode) => {
                self.toggle_file_mode(rules, file);
                true
            }
            _ => self.key(key),
        }
    }

    /// An editing key on the text; a change drops the last result, which
    /// no longer matches. Whether it was an editing key.
    pub fn key(&mut self, key: KeyEvent) -> bool {
        match self.input.key(key) {
            Some(changed) => {
                if changed {
                    self.result = None;
                }
                true
            }
            None => false,
        }
    }

    /// Inserts pasted or typed `text` at the cursor, as one line; a change
    /// drops the last result, as a key's does.
    pub fn insert(&mut self, text: &str) {
        if self.input.insert_str(text) {
            self.result = None;
        }
    }

    /// The rule file with each edited field's line replaced (or the line
    /// appended when the file does not set it), and the byte offset where
    /// the typed text starts in it (`usize::MAX` when the field typed is
    /// unchanged, so not in it).
    pub fn edited_file(&self, rules: &RuleSet, file: &SourceFile) -> (SourceFile, usize) {
        let original = file.bytes();
        let edits = self.changed_edits(rules, file);
        let line_of = |field: &Field, text: &str| format!("{}=\"{}\"", field.name(), text);
        let mut replaced: Vec<(usize, usize, &Field, String)> = Vec::new();
        let mut appended: Vec<(&Field, String)> = Vec::new();
        // A new variable goes before the first rule (cpuplugd knows only the
        // variables defined above a rule): put in at that line's start.
        let first_rule = RuleKind::ALL
            .iter()
            .filter_map(|k| rules.rule(*k).map(|r| file.line_start(r.line)))
            .min();
        for (field, text) in &edits {
            match (field.line(rules, file), field, first_rule) {
                (Some(line), _, _) => {
                    let start = file.line_start(line);
                    let end = start + file.line_bytes(line).len();
                    replaced.push((start, end, field, line_of(field, text)));
                }
                (None, Field::Variable(_), Some(at)) => {
                    replaced.push((at, at, field, format!("{}\n", line_of(field, text))));
                }
                (None, _, _) => appended.push((field, line_of(field, text))),
            }
        }
        replaced.sort_by_key(|r| (r.0, r.1));
        let typed =
            |field: &Field, at: usize| (*field == self.field).then(|| at + field.name().len() + 2);
        let mut bytes = Vec::with_capacity(original.len() + 256);
        let mut at = None;
        let mut pos = 0;
        for (start, end, field, line) in &replaced {
            bytes.extend_from_slice(&original[pos..*start]);
            at = at.or(typed(field, bytes.len()));
            bytes.extend_from_slice(line.as_bytes());
            pos = *end;
        }
        bytes.extend_from_slice(&original[pos..]);
        for (field, line) in appended {
            if !bytes.ends_with(b"\n") && !bytes.is_empty() {
                bytes.push(b'\n');
            }
            at = at.or(typed(field, bytes.len()));
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        (
            SourceFile::new(edited_name(file.name()), bytes),
            at.unwrap_or(usize::MAX),
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
        self.checks += 1;
        self.stops = None;
        let first_stop = |f: &SourceFile, o: &crate::rules::LoadOutcome| {
            o.diagnostics
                .iter()
                .find(|d| d.daemon == crate::rules::diagnostic::DaemonEffect::StopsWhenEvaluated)
                .map(|d| {
                    let at = f.position(d.span.start as usize);
                    format!("line {}:{}", at.line, at.column)
                })
        };
        if self.file_mode {
            // Nothing typed yet is nothing wrong: the editor asks for a path.
            if self.input.text().trim().is_empty() {
                self.error = None;
                return None;
            }
            return match crate::rules::load_path(
                std::path::Path::new(self.input.text().trim()),
                facts,
            ) {
                Ok((r, f)) => {
                    self.error = None;
                    self.stops = first_stop(&f, &load(&f, facts));
                    Some((Arc::new(r), f))
                }
                Err(e) => {
                    self.error = Some((e.headline(), None));
                    None
                }
            };
        }
        if let Some(message) = self.label_typed() {
            self.error = Some((message, Some(0)));
            return None;
        }
        let (edited, at) = self.edited_file(rules, file);
        let outcome = load(&edited, facts);
        if outcome.refusal.is_none() {
            self.error = None;
            self.stops = first_stop(&edited, &outcome);
            return Some((Arc::new(outcome.rules), edited));
        }
        let first = outcome
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| {
                let start = d.span.start as usize;
                let text = &self.input.text();
                let column = (start >= at && start <= at.saturating_add(text.len()))
                    .then(|| {
                        text.get(..(start - at).min(text.len()))
                            .map_or(0, |t| t.chars().count())
                    })
                    .or_else(|| self.column_in_own_line(&edited, start));
                match column {
                    Some(_) => (d.message.clone(), column),
                    // In another field's line: say which.
                    None => (elsewhere(&edited, start, &d.message), None),
                }
            })
            .or_else(|| outcome.refusal.as_ref().map(|r| (r.message.clone(), None)));
        self.error = first;
        None
    }

    /// The column in the typed text of an error at byte `start` of
    /// `edited` that lies in the typed field's own line left as the file
    /// has it (a file cpuplugd refuses, opened at the field to fix): the
    /// text typed is the value between the line's `="` and `"`.
    fn column_in_own_line(&self, edited: &SourceFile, start: usize) -> Option<usize> {
        let line = edited.position(start).line;
        let text = edited.line_bytes(line);
        let eq = text.iter().position(|b| *b == b'=')?;
        let name = std::str::from_utf8(&text[..eq]).ok()?.trim();
        if name != self.field.name() {
            return None;
        }
        let quote = eq + 1 + text[eq + 1..].iter().position(|b| *b == b'"')? + 1;
        let into = (start.checked_sub(edited.line_start(line))?).checked_sub(quote)?;
        let column = std::str::from_utf8(text.get(quote..quote + into)?)
            .ok()?
            .chars()
            .count();
        (column <= self.input.text().chars().count()).then_some(column)
    }

    /// The field's own name typed (or pasted) before its text, as a line of
    /// the file has it (`MEMUNPLUG="…"`): the name is the label, drawn
    /// before the text, not part of it; said so rather than as cpuplugd's
    /// "unknown name".
    fn label_typed(&self) -> Option<String> {
        let name = self.field.name();
        let typed = self.input.text().trim_start();
        let rest = typed.get(..name.len())?;
        let after = typed[name.len()..].trim_start();
        (rest.eq_ignore_ascii_case(name) && after.starts_with('=')).then(|| {
            format!(
                "`{name}=` is the label, not part of the text: type only what comes after it (without quotes)"
            )
        })
    }

    /// Runs the edited rules (and their file) over `history` (oldest
    /// first), open loop, or closed loop on `scenario` when there is one,
    /// where the rules in force (`loaded`) are played again too, so the two
    /// runs' reports compare. `update` is the loaded rules' UPDATE, the pace the history
    /// was read at.
    pub fn run(
        &mut self,
        (rules, file): (Arc<RuleSet>, &SourceFile),
        loaded: (Arc<RuleSet>, &SourceFile),
        history: &[Past<'_>],
        scenario: Option<(&Scenario, bool)>,
        flap: crate::control::flap::FlapConfig,
        update: i64,
    ) {
        let old = update.max(1);
        let new = rules.settings.update.max(1);
        let first = history.first().map_or(0, |h| h.reading);
        let last = history.last().map_or(0, |h| h.reading);
        let mut actions = None;
        let mut reports = None;
        let mut stops = Vec::new();
        if let Some((scenario, old_kernel)) = scenario {
            let options = SimOptions {
                duration: Some((last as f64) * old as f64),
                old_kernel,
                keep_timeline: true,
                flap,
                ..SimOptions::default()
            };
            let in_force = simulate_loaded(
                scenario,
                loaded.0,
                loaded.1,
                &options,
                &mut |_| {},
                &mut |_| {},
            );
            if let Ok(o) = simulate_loaded(
                scenario,
                rules.clone(),
                file,
                &options,
                &mut |_| {},
                &mut |_| {},
            ) {
                let before = in_force.ok().map(|b| b.report);
                stops.extend(
                    before
                        .iter()
                        .chain([&o.report])
                        .filter_map(|r| crate::sim::report::stopped(r, old_kernel)),
                );
                if let Some(before) = before {
                    reports = Some(Box::new((before, o.report.clone())));
                }
                // The edited run's readings, placed at the history's
                // reading nearest in time.
                let mut placed: Vec<(usize, Moves)> = Vec::new();
                for p in &o.timeline {
                    let at = ((p.reading as i64 * new + old / 2) / old) as usize;
                    match placed.last_mut() {
                        Some((n, m)) if *n == at => {
                            if m.is_none() {
                                *m = p.moves;
                            }
                        }
                        _ => placed.push((at, p.moves)),
                    }
                }
                actions = Some(placed);
            }
        }
        let closed_loop = actions.is_some();
        let mut actions = actions.unwrap_or_else(|| {
            let (actions, stop) = open_loop((rules, file), history, flap, (old, new));
            stops.extend(stop);
            actions
        });
        actions.retain(|(r, _)| (first..=last).contains(r));
        let real: Vec<Moves> = history.iter().map(|h| h.decided).collect();
        let edited: Vec<Moves> = actions.iter().map(|a| a.1).collect();
        let pace = if new == old {
            None
        } else if closed_loop {
            Some(format!(
                "UPDATE {new} s: the edited run's readings are placed at the nearest of these, read every {old} s"
            ))
        } else if new > old {
            Some(format!(
                "UPDATE {new} s: the edited rules see one of these readings every {new} s (they were read every {old} s)"
            ))
        } else {
            Some(format!(
                "UPDATE {new} s: these readings are {old} s apart, so the edited rules see them every {old} s"
            ))
        };
        self.result = Some(Counterfactual {
            upto: last,
            loaded: history.iter().map(|h| (h.reading, h.decided)).collect(),
            reversals: (reversals(&real, flap), reversals(&edited, flap)),
            changes: (changes(&real), changes(&edited)),
            applied: history.iter().filter(|h| !h.applied.is_none()).count(),
            applied_cpus: (
                history.iter().filter(|h| h.applied.cpu > 0).count(),
                history.iter().filter(|h| h.applied.cpu < 0).count(),
            ),
            actions,
            closed_loop,
            pace,
            reports,
            stops,
        });
    }
}

/// The name of a file edited from the file `name`: marked once, however
/// often edited rules are applied and edited again.
fn edited_name(name: &str) -> String {
    if name.ends_with(" (edited)") {
        name.to_string()
    } else {
        format!("{name} (edited)")
    }
}

/// `text` trimmed, every run of blanks one space: how cpuplugd sees the
/// difference between two spellings of a value.
fn blanks_collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `message` about the byte `at` of the edited file, which lies outside
/// the text being typed: prefixed with the line's name and number, so an
/// error in a field edited earlier is not taken for one in this field.
fn elsewhere(edited: &SourceFile, at: usize, message: &str) -> String {
    let line = edited.position(at).line;
    let text = String::from_utf8_lossy(edited.line_bytes(line)).into_owned();
    let name = text.split_once('=').map_or("", |(n, _)| n.trim());
    let name: String = name.chars().take(40).collect();
    if name.is_empty() {
        format!("line {line}: {message}")
    } else {
        format!(
            "{} (line {line}): {message}",
            crate::report::terminal_safe(&name)
        )
    }
}

/// One interval of the screen's history, for the what-if.
#[derive(Debug, Clone, Copy)]
pub struct Past<'a> {
    pub reading: usize,
    pub sample: &'a Sample,
    /// What the loaded rules decided.
    pub decided: Moves,
    /// What was really done to the guest (nothing in observe mode).
    pub applied: Moves,
}

/// The edited rules over the readings as they were, at the edited UPDATE's
/// pace (`new`) where it is slower than the readings' (`old`), decided by
/// the [`Session`] every front end runs, observing; with why cpuplugd would
/// exit, if it would: nothing is decided after that.
fn open_loop(
    (rules, file): (Arc<RuleSet>, &SourceFile),
    history: &[Past<'_>],
    flap: crate::control::flap::FlapConfig,
    (old, new): (i64, i64),
) -> (Vec<(usize, Moves)>, Option<String>) {
    let name = file.name().to_string();
    let mut session = Session::new(rules, file.clone(), Mode::Observe, flap);
    let mut actions = Vec::new();
    let first = history.first().map_or(0, |h| h.reading);
    let mut due = 0i64;
    for h in history {
        let t = (h.reading - first) as i64 * old;
        if t < due {
            continue;
        }
        due = t + new;
        let step = session.step(Arc::new(h.sample.clone()), &mut NoWrites::blind());
        if let Some(d) = &step.decision {
            actions.push((h.reading, Moves::of(d)));
        }
        if let Some(f) = &step.fatal {
            let at = format!("would stop cpuplugd at #{}", h.reading);
            let stop = crate::sim::report::cpuplugd_stops(&name, &at, &f.message, None);
            return (actions, Some(stop));
        }
    }
    (actions, None)
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

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent};

    use super::*;

    const FILE: &[u8] = b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\n";

    fn loaded() -> (RuleSet, SourceFile, SystemFacts) {
        let facts = SystemFacts::any_machine(4, "test");
        let file = SourceFile::new("p.conf", FILE.to_vec());
        let rules = load(&file, &facts).rules;
        (rules, file, facts)
    }

    fn type_keys(editor: &mut WhatIfEditor, keys: &[KeyCode]) {
        for k in keys {
            editor.key(KeyEvent::from(*k));
        }
    }

    /// New-user finding 15: opened from the tune's front, the editor was on
    /// a variable whose text differed only in blanks ("What-if: ticks (2
    /// edited)"); it opens on a field the point changes.
    #[test]
    fn a_tune_s_edits_open_on_a_field_they_change() {
        let (rules, file, _) = loaded();
        let e = WhatIfEditor::with_edits(
            &rules,
            &file,
            vec![
                (Field::Limit(Setting::CpuMax), " 4 ".to_string()),
                (Field::Rule(RuleKind::Hotunplug), "idle > 40".to_string()),
            ],
        );
        assert_eq!(e.field(), &Field::Rule(RuleKind::Hotunplug));
        assert_eq!(e.input().text(), "idle > 40");
        assert_eq!(e.edited_fields(&rules, &file).len(), 1);
    }

    #[test]
    fn an_edit_typed_back_is_no_edit_blanks_aside() {
        let (rules, file, _) = loaded();
        let mut e = WhatIfEditor::open(&rules, &file, RuleKind::Hotplug);
        type_keys(&mut e, &[KeyCode::Char('5')]);
        assert_eq!(e.edited_fields(&rules, &file).len(), 1);
        type_keys(&mut e, &[KeyCode::Backspace]);
        assert!(e.edited_fields(&rules, &file).is_empty());
        // Typed again with other blanks: cpuplugd reads the same rule.
        e.input = LineInput::new("  idle   <  10 ");
        assert!(e.edited_fields(&rules, &file).is_empty(), "blanks only");
        let (edited, at) = e.edited_file(&rules, &file);
        assert_eq!(edited.bytes(), FILE, "the file as loaded");
        assert_eq!(at, usize::MAX, "the typed text is not in it");
        // Undone after moving on: still none, in any field.
        e.input = LineInput::new("idle < 9");
        e.step_field(&rules, &file, 1);
        e.step_field(&rules, &file, -1);
        e.input = LineInput::new("idle < 10");
        e.step_field(&rules, &file, 1);
        assert!(e.edited_fields(&rules, &file).is_empty());
    }

    #[test]
    fn a_field_the_file_does_not_set_adds_no_line_until_it_is_typed() {
        let (rules, file, facts) = loaded();
        let mut e = WhatIfEditor::open(&rules, &file, RuleKind::Hotplug);
        // Over every field, CMM_MAX (not in the file) among them.
        for _ in 0..Field::all(&rules).len() {
            e.step_field(&rules, &file, 1);
        }
        let (edited, _) = e.edited_file(&rules, &file);
        assert_eq!(edited.bytes(), FILE);
        while *e.field() != Field::Limit(Setting::CmmMax) {
            e.step_field(&rules, &file, 1);
        }
        type_keys(&mut e, &[KeyCode::Char('9')]);
        let (edited, _) = e.edited_file(&rules, &file);
        assert!(edited.bytes().ends_with(b"CMM_MAX=\"9\"\n"));
        assert!(e.check(&rules, &file, &facts).is_some());
    }

    #[test]
    fn naming_a_file_and_back_keeps_the_edits() {
        let (rules, file, facts) = loaded();
        let mut e = WhatIfEditor::open(&rules, &file, RuleKind::Hotplug);
        type_keys(&mut e, &[KeyCode::Backspace, KeyCode::Char('5')]);
        e.step_field(&rules, &file, 1);
        type_keys(&mut e, &[KeyCode::Backspace, KeyCode::Char('9')]);
        e.toggle_file_mode(&rules, &file);
        // An empty path is no error: the editor waits for one.
        assert!(e.check(&rules, &file, &facts).is_none());
        assert_eq!(e.error(), None);
        e.toggle_file_mode(&rules, &file);
        assert_eq!(e.input().text(), "idle > 59");
        assert_eq!(e.edited_fields(&rules, &file).len(), 2);
    }

    #[test]
    fn the_field_s_name_typed_again_is_said_to_be_the_label() {
        let (rules, file, facts) = loaded();
        let mut e = WhatIfEditor::open(&rules, &file, RuleKind::Hotplug);
        e.input = LineInput::new(" hotplug = \"idle < 5\"");
        assert!(e.check(&rules, &file, &facts).is_none());
        let (message, column) = e.error().cloned().unwrap_or_default();
        assert!(message.starts_with("`HOTPLUG=` is the label"), "{message}");
        assert_eq!(column, Some(0));
        // A value that only starts with the name's letters is checked as
        // cpuplugd checks it.
        e.input = LineInput::new("HOTPLUGGED < 5");
        assert!(e.check(&rules, &file, &facts).is_none());
        let (message, _) = e.error().cloned().unwrap_or_default();
        assert!(!message.contains("is the label"), "{message}");
    }

    #[test]
    fn tab_and_ctrl_o_move_the_editor_and_other_keys_edit() {
        use crossterm::event::KeyModifiers;
        let (rules, file, _) = loaded();
        let mut e = WhatIfEditor::open(&rules, &file, RuleKind::Hotplug);
        assert!(e.edit(KeyEvent::from(KeyCode::Tab), &rules, &file));
        assert_eq!(e.field().name(), "HOTUNPLUG");
        assert!(e.edit(KeyEvent::from(KeyCode::BackTab), &rules, &file));
        assert_eq!(e.field().name(), "HOTPLUG");
        let ctrl_o = KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL);
        assert!(e.edit(ctrl_o, &rules, &file));
        assert!(e.file_mode());
        assert!(e.edit(ctrl_o, &rules, &file));
        assert!(e.edit(KeyEvent::from(KeyCode::Char('1')), &rules, &file));
        assert_eq!(e.input().text(), "idle < 101");
        // Keys that leave the editor are the screen's: no edit here.
        let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
        assert!(!e.edit(ctrl_r, &rules, &file));
    }

    #[test]
    fn an_edited_file_is_marked_edited_once() {
        assert_eq!(edited_name("p.conf"), "p.conf (edited)");
        assert_eq!(edited_name("p.conf (edited)"), "p.conf (edited)");
    }

    #[test]
    fn an_error_in_a_field_edited_before_names_that_field() {
        let (rules, file, facts) = loaded();
        let mut e = WhatIfEditor::open(&rules, &file, RuleKind::Hotplug);
        type_keys(&mut e, &[KeyCode::Char('(')]);
        e.step_field(&rules, &file, 1);
        assert!(e.check(&rules, &file, &facts).is_none());
        let (message, column) = e.error().cloned().unwrap_or_default();
        assert_eq!(column, None, "not under the HOTUNPLUG text");
        assert!(message.starts_with("HOTPLUG (line 4): "), "{message}");
    }
}
