//! Diagnosis exercises: a recording of a misbehaving guest and its rules;
//! the trainee points at the rule and comparison whose flips made it
//! misbehave (what the Flips view shows), and the answer is graded against
//! the course's truth. The truth itself is checked against the recording:
//! [`tally`] replays it under the rules, open loop, and counts every
//! comparison that flipped a decision, as the Flips view explains them.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::course::{DiagnosisAnswer, rule_kind};
use crate::control::flap::Moves;
use crate::engine::Engine;
use crate::kernel::Source;
use crate::kernel::recording::RecordingSource;
use crate::report::flips::{CONDITIONS, Flip, flips};
use crate::report::trace::label;
use crate::rules::eval::Trace;
use crate::rules::expr::{BinOp, NodeKind};
use crate::rules::{RuleKind, RuleSet, SourceFile, SystemFacts};

/// One comparison a trainee may point at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    #[serde(serialize_with = "rule_name")]
    pub rule: RuleKind,
    /// The comparison as written in the file.
    pub text: String,
    /// Its two sides as the Flips view labels them.
    pub left: String,
    pub right: String,
}

fn rule_name<S: serde::Serializer>(k: &RuleKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.file_name())
}

impl Choice {
    /// "HOTUNPLUG: idle > 50", as the screen lists it and an answer file
    /// holds it.
    pub fn line(&self) -> String {
        format!("{}: {}", self.rule.file_name(), self.text)
    }

    /// Whether `answer` names this comparison (case of the rule and
    /// blanks in the comparison do not matter).
    pub fn answers(&self, answer: &DiagnosisAnswer) -> bool {
        self.rule == answer.rule && squeeze(&self.text) == squeeze(&answer.comparison)
    }
}

/// Text without blanks (cpuplugd ignores them too).
fn squeeze(t: &str) -> String {
    t.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Every `<` and `>` comparison of the condition rules, in rule order.
pub fn choices(rules: &RuleSet, source: &SourceFile) -> Vec<Choice> {
    let mut out = Vec::new();
    for kind in CONDITIONS {
        let Some(rule) = rules.rule(kind) else {
            continue;
        };
        for node in rule.nodes.clone() {
            let n = rules.node(node);
            let NodeKind::Binary(BinOp::Greater | BinOp::Less, l, r) = n.kind else {
                continue;
            };
            let choice = Choice {
                rule: kind,
                text: source.snippet(n.span).trim().to_string(),
                left: label(rules, source, l),
                right: label(rules, source, r),
            };
            if !out.contains(&choice) {
                out.push(choice);
            }
        }
    }
    out
}

/// Why a recording could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum DiagnoseError {
    #[error(transparent)]
    Recording(#[from] crate::kernel::recording::RecordingError),
    #[error(transparent)]
    Rules(#[from] crate::rules::LoadError),
}

/// How often each comparison flipped a decision over a recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tally {
    /// Choices with their flip counts, most first (ties in rule order).
    pub counts: Vec<(Choice, usize)>,
    /// Decisions that changed.
    pub changes: usize,
}

impl Tally {
    /// The comparison that flipped most, if any flipped.
    pub fn culprit(&self) -> Option<&Choice> {
        self.counts.first().filter(|(_, n)| *n > 0).map(|(c, _)| c)
    }
}

/// The machine a recording was made on, for loading its rules.
pub fn recording_facts(path: &Path) -> Result<SystemFacts, DiagnoseError> {
    Ok(RecordingSource::open(path)?.facts())
}

/// Replays the recording at `path` under `file`'s rules (open loop, as the
/// Flips view explains a replay): `start` makes a state of the rules as
/// loaded, and `change` is given it with each change of decision (the
/// comparisons' flips, the moves before and after, the reading) and says
/// whether to go on.
fn each_change<S>(
    path: &Path,
    file: &SourceFile,
    start: impl FnOnce(&RuleSet, &SourceFile) -> S,
    mut change: impl FnMut(&mut S, Vec<Flip>, &Moves, &Moves, usize) -> bool,
) -> Result<S, DiagnoseError> {
    let mut source = RecordingSource::open(path)?;
    let facts = source.facts();
    let (rules, file) = crate::rules::load_source(file.clone(), &facts)?;
    let rules = Arc::new(rules);
    let mut state = start(&rules, &file);
    let mut engine = Engine::new(Arc::clone(&rules));
    let mut previous: Option<(Trace, Moves)> = None;
    while let Some(sample) = source.next_sample() {
        let Ok(sample) = sample else { continue };
        let mut trace = Trace::new();
        let Some(decision) = engine.push(&sample, &mut trace) else {
            continue;
        };
        if decision.fatal.is_some() {
            break;
        }
        let moves = Moves::of(&decision);
        if let Some((before, old)) = &previous
            && *old != moves
        {
            let flipped = flips(&rules, &file, before, &trace);
            if !change(&mut state, flipped, old, &moves, decision.reading) {
                break;
            }
        }
        previous = Some((trace, moves));
    }
    Ok(state)
}

/// Replays the recording at `path` under `file`'s rules and counts, per
/// comparison, the decisions it flipped.
pub fn tally(path: &Path, file: &SourceFile) -> Result<Tally, DiagnoseError> {
    let (list, counts, changes) = each_change(
        path,
        file,
        |rules, file| {
            let list = choices(rules, file);
            let counts = vec![0usize; list.len()];
            (list, counts, 0)
        },
        |(list, counts, changes), flipped, _, _, _| {
            *changes += 1;
            // What flipped counts; a rule's comparisons held only because
            // it was not evaluated before do not.
            for f in flipped.into_iter().filter(|f| f.flipped()) {
                if let Some(i) = list
                    .iter()
                    .position(|c| c.rule == f.rule && c.left == f.left && c.right == f.right)
                {
                    counts[i] += 1;
                }
            }
            true
        },
    )?;
    let mut counted: Vec<(Choice, usize)> = list.into_iter().zip(counts).collect();
    counted.sort_by_key(|c| std::cmp::Reverse(c.1));
    Ok(Tally {
        counts: counted,
        changes,
    })
}

/// The recording's changes of decision, each with the comparisons that
/// flipped it, as the Flips view words them (at most `most` changes): what
/// a trainee reads to answer.
pub fn change_lines(
    path: &Path,
    file: &SourceFile,
    most: usize,
) -> Result<Vec<String>, DiagnoseError> {
    if most == 0 {
        return Ok(Vec::new());
    }
    each_change(
        path,
        file,
        |_, _| Vec::new(),
        |out, flipped, old, moves, reading| {
            let why = crate::report::flips::lines(&flipped);
            out.push(format!("#{reading} {old} → {moves}"));
            out.extend(why.into_iter().map(|w| format!("  {w}")));
            out.len() < most
        },
    )
}

/// Reads a trainee's answer: `RULE: comparison` on its first non-blank,
/// non-comment line.
pub fn parse_answer(text: &str) -> Result<DiagnosisAnswer, String> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .ok_or("the answer is empty; write `RULE: comparison`, e.g. `HOTPLUG: loadavg > 1`")?;
    let (rule, comparison) = line
        .split_once(':')
        .ok_or("an answer is `RULE: comparison`, e.g. `HOTPLUG: loadavg > 1`")?;
    let rule = rule_kind(rule).ok_or_else(|| {
        format!(
            "{:?} is no rule; the rules are HOTPLUG, HOTUNPLUG, MEMPLUG and MEMUNPLUG",
            crate::report::terminal_safe(rule.trim())
        )
    })?;
    Ok(DiagnosisAnswer {
        rule,
        comparison: comparison.trim().to_string(),
    })
}

/// Whether `given` is the truth `truth`.
pub fn correct(given: &DiagnosisAnswer, truth: &DiagnosisAnswer) -> bool {
    given.rule == truth.rule && squeeze(&given.comparison) == squeeze(&truth.comparison)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_with_any_case_and_blanks() {
        let a = parse_answer("# why\n hotunplug :  idle>50 \n").expect("answer");
        assert_eq!(a.rule, RuleKind::Hotunplug);
        let truth = DiagnosisAnswer {
            rule: RuleKind::Hotunplug,
            comparison: "idle > 50".into(),
        };
        assert!(correct(&a, &truth));
        assert!(parse_answer("").is_err());
        assert!(parse_answer("idle > 50").is_err());
        assert!(
            parse_answer("CPU_MAX: 3")
                .expect_err("no rule")
                .contains("no rule")
        );
    }
}
