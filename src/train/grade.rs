//! `plugtop train grade COURSE DIR`: every trainee's submissions judged
//! on the held-out seeds, one table per exercise (text, CSV or JSON), and
//! what the class got wrong most: which lint warnings fired, which goal
//! clauses were missed and by how much, why files were refused.
//!
//! Submissions are `DIR/<trainee>/<exercise id>.conf` (a rule file) or
//! `.answer` (a diagnosis: `RULE: comparison`). Anything there is graded,
//! never trusted: a link, a directory, a FIFO, an unreadable or huge file,
//! a binary file or one cpuplugd refuses is a failed submission with the
//! reason, and grading goes on.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::course::{Course, Exercise, Kind};
use super::diagnose;
use super::goal::{FieldKind, Goal, ReportField, short_number};
use super::judge::{ExerciseJudge, ExerciseVerdict, JudgeError};
use super::progress::read_no_follow;
use crate::report::terminal_safe as safe;
use crate::rules::SourceFile;

/// The largest submission read: cpuplugd's rule files are a few KB.
pub const MAX_SUBMISSION_BYTES: u64 = 256 << 10;
/// At most this many trainees in a class directory.
pub const MAX_TRAINEES: usize = 10_000;
/// The most of a wrong answer's comparison a table echoes: an answer may
/// be 256 KiB on one line, and a class of such would make megabytes of
/// table (and of common mistakes) for a person to read.
pub const MAX_ECHOED_CHARS: usize = 120;

/// Why grading could not start (a bad submission never stops it).
#[derive(Debug, thiserror::Error)]
pub enum GradeError {
    #[error("cannot read the class directory {path}")]
    Dir {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The class directory named is a file (or a FIFO …): the usual slip
    /// of giving one submission where the class is expected.
    #[error(
        "{path} is {kind}, not a directory; give the class directory (one sub-directory per trainee, holding that trainee's files)"
    )]
    NotDir { path: String, kind: &'static str },
    #[error("more than {MAX_TRAINEES} entries in {0}")]
    TooMany(String),
    #[error("exercise {id}")]
    Workload {
        id: String,
        #[source]
        source: JudgeError,
    },
    #[error("exercise {id}")]
    Truth {
        id: String,
        #[source]
        source: diagnose::DiagnoseError,
    },
}

/// One trainee's result on one exercise.
#[derive(Debug, Clone, Serialize)]
pub struct GradeRow {
    pub trainee: String,
    pub passed: bool,
    /// Held-out runs that met the goal, and runs in all (0/0 for a
    /// diagnosis or a file that did not run).
    pub runs_met: usize,
    pub runs: usize,
    /// Why it failed, in one line ("" when it passed).
    pub reason: String,
    /// The goal's clauses missed, each with the run that first missed it
    /// and its value there.
    pub missed: Vec<Missed>,
    pub lints: Vec<&'static str>,
    /// The fields the exercise's goal names ([`Table::fields`]), in that
    /// order, over the held-out runs: a number's mean, a flag's count of
    /// runs where it held. Empty when the file did not run.
    pub values: Vec<f64>,
    /// What the class's common mistakes count this failure as (a refusal
    /// by its kind, a wrong answer whole); empty when none.
    #[serde(skip)]
    mistake: String,
}

/// A goal's clause a submission missed.
#[derive(Debug, Clone, Serialize)]
pub struct Missed {
    pub clause: String,
    /// The field the clause compares and its value in the run that first
    /// missed the clause (none for a flag or a compound clause).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    pub workload: String,
    pub seed: u64,
}

impl Missed {
    /// "x < 40: x was 52.3 (bursts, seed 1009)": the value labelled.
    pub fn line(&self) -> String {
        let check = crate::train::goal::ClauseCheck {
            clause: self.clause.clone(),
            met: false,
            field: self.field,
            value: self.value,
        };
        format!(
            "{} ({}, seed {})",
            check.describe(),
            self.workload,
            self.seed
        )
    }
}

impl GradeRow {
    /// A submission that failed before or without its runs.
    fn failed(trainee: &str, reason: &str) -> GradeRow {
        GradeRow {
            trainee: trainee.to_string(),
            passed: false,
            runs_met: 0,
            runs: 0,
            reason: reason.to_string(),
            missed: Vec::new(),
            lints: Vec::new(),
            values: Vec::new(),
            mistake: reason_kind(reason).to_string(),
        }
    }
}

/// One exercise's table.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub id: String,
    pub title: String,
    /// The goal, or the question for a diagnosis.
    pub goal: String,
    /// The report fields the goal names: the table's own columns (a
    /// memory exercise's are memory fields). Empty for a diagnosis.
    pub fields: Vec<&'static str>,
    pub rows: Vec<GradeRow>,
}

/// One trainee's results over the course.
#[derive(Debug, Clone, Serialize)]
pub struct Total {
    pub trainee: String,
    /// Exercises passed, and exercises in the course.
    pub passed: usize,
    pub exercises: usize,
    /// Exercises handed in (a submission, passed or not).
    pub submitted: usize,
    /// Held-out runs met, and run, over every exercise.
    pub runs_met: usize,
    pub runs: usize,
}

/// A mistake and how many submissions made it.
#[derive(Debug, Clone, Serialize)]
pub struct Mistake {
    pub what: String,
    pub count: usize,
    /// For a missed clause: its values in the submissions that missed it,
    /// and the field they are of.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<&'static str>,
    /// Who made it, in the order graded.
    pub trainees: Vec<String>,
}

/// The class's results.
#[derive(Debug, Clone, Serialize)]
pub struct Grades {
    pub course: String,
    pub trainees: Vec<String>,
    pub tables: Vec<Table>,
    /// Per trainee, in the order of `trainees`.
    pub totals: Vec<Total>,
    /// "exercise: lint code" by how many submissions drew them, most first.
    pub lints: Vec<Mistake>,
    /// "exercise: clause" by how many submissions missed it, most first.
    pub missed: Vec<Mistake>,
    /// Failures before running (refused, unreadable, missing), by reason
    /// kind, most first.
    pub failures: Vec<Mistake>,
    /// Files in a trainee's directory that are no exercise's submission
    /// (`trainee/name`, at most [`MAX_UNMATCHED`]): not graded, and said.
    pub unmatched: Vec<String>,
    /// How many such files there were in all.
    pub unmatched_total: usize,
}

impl Grades {
    /// The class's results from its tables: each trainee's totals and
    /// the mistakes counted over all of them; `unmatched` the files no
    /// exercise took and how many in all ([`unmatched`]).
    fn of(
        course: String,
        trainees: Vec<String>,
        tables: Vec<Table>,
        (unmatched, unmatched_total): (Vec<String>, usize),
    ) -> Grades {
        let (lints, missed, failures) = mistakes(&tables);
        Grades {
            course,
            totals: totals(&trainees, &tables),
            trainees,
            tables,
            lints,
            missed,
            failures,
            unmatched,
            unmatched_total,
        }
    }
}

/// The most files that match no exercise listed by name.
pub const MAX_UNMATCHED: usize = 100;

/// The files in the trainees' directories that are no exercise's
/// submission (an exercise id mistyped, a file in the wrong place): their
/// `trainee/name`, at most [`MAX_UNMATCHED`], and how many in all. A
/// trainee's directory is read as far as [`MAX_TRAINEES`] entries.
fn unmatched(course: &Course, trainees: &[(String, PathBuf)]) -> (Vec<String>, usize) {
    let wanted: Vec<String> = course
        .exercises
        .iter()
        .map(|ex| match ex.kind {
            Kind::Rules => format!("{}.conf", ex.id),
            Kind::Diagnosis => format!("{}.answer", ex.id),
        })
        .collect();
    let mut listed = Vec::new();
    let mut total = 0;
    for (name, dir) in trainees {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.take(MAX_TRAINEES).flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if wanted.contains(&file) {
                continue;
            }
            total += 1;
            if listed.len() < MAX_UNMATCHED {
                listed.push(format!("{name}/{file}"));
            }
        }
    }
    listed.sort();
    (listed, total)
}

/// The trainees: the subdirectories of `dir` whose names do not start with
/// a dot, sorted. Anything else there is skipped; a link to a directory is
/// not followed.
fn trainees(dir: &Path) -> Result<Vec<(String, PathBuf)>, GradeError> {
    let err = |source| match crate::kernel::fs::non_directory_at(dir) {
        Some(kind) => GradeError::NotDir {
            path: dir.display().to_string(),
            kind,
        },
        None => GradeError::Dir {
            path: dir.display().to_string(),
            source,
        },
    };
    let mut out = Vec::new();
    for (n, entry) in std::fs::read_dir(dir).map_err(err)?.enumerate() {
        if n >= MAX_TRAINEES {
            return Err(GradeError::TooMany(dir.display().to_string()));
        }
        let Ok(entry) = entry else { continue };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        // A hidden directory (`.git`, `.hidden`) is no trainee.
        if kind.is_dir() && !entry.file_name().as_encoded_bytes().starts_with(b".") {
            out.push((
                entry.file_name().to_string_lossy().into_owned(),
                entry.path(),
            ));
        }
    }
    out.sort();
    Ok(out)
}

/// A submission's bytes, or why it is no submission.
/// At most [`MAX_ECHOED_CHARS`] of `text`, with `…` when cut.
fn echoed(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHOED_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The reason of an exercise a trainee handed nothing in for.
const NOT_SUBMITTED: &str = "not submitted";

fn submission(path: &Path) -> Result<Vec<u8>, String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(NOT_SUBMITTED.into());
        }
        Err(e) => return Err(format!("cannot read it: {e}")),
        Ok(m) if m.file_type().is_symlink() => {
            return Err("a symbolic link; refusing to follow it".into());
        }
        Ok(m) if m.is_dir() => return Err("a directory, not a file".into()),
        Ok(m) if !m.is_file() => return Err("not a regular file".into()),
        Ok(_) => {}
    }
    let bytes =
        read_no_follow(path, MAX_SUBMISSION_BYTES).map_err(|e| format!("cannot read it: {e}"))?;
    if let Some(what) = crate::rules::not_a_rule_file(&bytes) {
        return Err(format!("{what}, not a rule file"));
    }
    Ok(bytes)
}

/// What grading an exercise needs, prepared once for the class.
enum Prepared<'a> {
    Rules(&'a Exercise, ExerciseJudge),
    Diagnosis(&'a Exercise),
}

impl Prepared<'_> {
    fn grade(&self, trainee: &str, dir: &Path) -> GradeRow {
        let row = |passed: bool, reason: String| GradeRow {
            trainee: trainee.to_string(),
            passed,
            runs_met: 0,
            runs: 0,
            mistake: if passed {
                String::new()
            } else {
                reason_kind(&reason).to_string()
            },
            reason,
            missed: Vec::new(),
            lints: Vec::new(),
            values: Vec::new(),
        };
        match self {
            Prepared::Diagnosis(ex) => {
                let path = dir.join(format!("{}.answer", ex.id));
                let given = submission(&path).and_then(|b| {
                    // Not UTF-8 is said as such, not graded as a garbled
                    // comparison.
                    let text = std::str::from_utf8(&b).map_err(|e| {
                        format!(
                            "not UTF-8: byte {} is not text; write `RULE: comparison`",
                            e.valid_up_to()
                        )
                    })?;
                    diagnose::parse_answer(text)
                });
                match (given, &ex.answer) {
                    (Err(why), _) => row(false, why),
                    (Ok(a), Some(truth)) if diagnose::correct(&a, truth) => {
                        row(true, String::new())
                    }
                    (Ok(a), _) => {
                        let reason = format!(
                            "pointed at {}: {}",
                            a.rule.file_name(),
                            echoed(&a.comparison)
                        );
                        // A wrong answer is counted whole: which
                        // comparison the class took for the culprit.
                        GradeRow {
                            mistake: reason.clone(),
                            ..row(false, reason)
                        }
                    }
                }
            }
            Prepared::Rules(ex, judge) => {
                let path = dir.join(format!("{}.conf", ex.id));
                let verdict = match submission(&path) {
                    Ok(bytes) => judge.judge(
                        ex,
                        &SourceFile::new(format!("{trainee}/{}.conf", ex.id), bytes),
                    ),
                    Err(why) => ExerciseVerdict::failed(why),
                };
                let values = goal_values(ex, &verdict);
                let reason = if verdict.passed {
                    String::new()
                } else {
                    verdict.summary()
                };
                GradeRow {
                    trainee: trainee.to_string(),
                    passed: verdict.passed,
                    runs_met: verdict.runs.iter().filter(|r| r.met).count(),
                    runs: verdict.runs.len(),
                    mistake: if verdict.runs.is_empty() && !verdict.passed {
                        reason_kind(&reason).to_string()
                    } else {
                        String::new()
                    },
                    reason,
                    missed: verdict
                        .missed()
                        .iter()
                        .map(|(r, c)| Missed {
                            clause: c.clause.clone(),
                            field: c.field,
                            value: c.value,
                            workload: r.workload.clone(),
                            seed: r.seed,
                        })
                        .collect(),
                    lints: verdict.lints.clone(),
                    values,
                }
            }
        }
    }
}

/// The values of the fields `ex`'s goal names over `verdict`'s held-out
/// runs: a number's mean, a flag's count of runs where it held (none when
/// nothing ran).
fn goal_values(ex: &Exercise, verdict: &ExerciseVerdict) -> Vec<f64> {
    let reports: Vec<_> = verdict
        .runs
        .iter()
        .filter_map(|r| r.report.as_ref())
        .collect();
    if reports.is_empty() {
        return Vec::new();
    }
    goal_fields(ex)
        .iter()
        .map(|f| {
            let sum: f64 = reports.iter().map(|r| f.value(r)).sum();
            match f.kind {
                FieldKind::Number => sum / reports.len() as f64,
                FieldKind::Flag => sum,
            }
        })
        .collect()
}

/// The report fields an exercise's goal names (none for a diagnosis).
fn goal_fields(ex: &Exercise) -> Vec<&'static ReportField> {
    ex.goal.as_ref().map(Goal::fields).unwrap_or_default()
}

/// Each trainee's totals over the tables, in the order of `trainees`.
fn totals(trainees: &[String], tables: &[Table]) -> Vec<Total> {
    trainees
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let rows: Vec<&GradeRow> = tables.iter().filter_map(|t| t.rows.get(i)).collect();
            Total {
                trainee: name.clone(),
                passed: rows.iter().filter(|r| r.passed).count(),
                exercises: tables.len(),
                submitted: rows.iter().filter(|r| r.reason != NOT_SUBMITTED).count(),
                runs_met: rows.iter().map(|r| r.runs_met).sum(),
                runs: rows.iter().map(|r| r.runs).sum(),
            }
        })
        .collect()
}

/// Grades every trainee under `dir` on every exercise of `course`, on
/// `threads` threads (the order of the tables does not depend on them).
pub fn grade(course: &Course, dir: &Path, threads: usize) -> Result<Grades, GradeError> {
    let trainees = trainees(dir)?;
    let mut prepared = Vec::new();
    for ex in &course.exercises {
        prepared.push(match ex.kind {
            Kind::Rules => Prepared::Rules(
                ex,
                ExerciseJudge::new(ex).map_err(|source| GradeError::Workload {
                    id: ex.id.clone(),
                    source,
                })?,
            ),
            Kind::Diagnosis => Prepared::Diagnosis(ex),
        });
    }
    let jobs: Vec<(usize, usize)> = (0..prepared.len())
        .flat_map(|e| (0..trainees.len()).map(move |t| (e, t)))
        .collect();
    let rows = crate::tune::threads::in_order(jobs.len(), threads.min(64), &|i| {
        let (e, t) = jobs[i];
        let (name, path) = &trainees[t];
        // A panic judging one submission fails it alone: the thread goes
        // on, and the rows it graded stay.
        let graded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            prepared[e].grade(name, path)
        }))
        .unwrap_or_else(|_| {
            GradeRow::failed(name, "grading this submission failed (an internal error)")
        });
        Some(graded)
    });
    let mut tables = Vec::new();
    for (e, ex) in course.exercises.iter().enumerate() {
        let rows: Vec<GradeRow> = (0..trainees.len())
            .map(|t| {
                rows[e * trainees.len() + t].clone().unwrap_or_else(|| {
                    GradeRow::failed(&trainees[t].0, "grading this submission failed")
                })
            })
            .collect();
        tables.push(Table {
            id: ex.id.clone(),
            title: ex.title.clone(),
            goal: match (&ex.goal, &ex.question) {
                (Some(g), _) => g.text().to_string(),
                (None, Some(q)) => q.clone(),
                _ => String::new(),
            },
            fields: goal_fields(ex).iter().map(|f| f.name).collect(),
            rows,
        });
    }
    let unmatched = unmatched(course, &trainees);
    let trainees: Vec<String> = trainees.into_iter().map(|(n, _)| n).collect();
    Ok(Grades::of(
        course.title.clone(),
        trainees,
        tables,
        unmatched,
    ))
}

/// The kind of a failure reason, for counting: its text up to the first
/// colon or semicolon ("cpuplugd refuses the file", "the answer is
/// empty"), where the particulars and the advice begin. A colon inside
/// backticks is part of what is quoted, not the end of the kind (nu54
/// F6: "an answer is `RULE: comparison`" was cut to "an answer is `RULE").
fn reason_kind(reason: &str) -> &str {
    let mut quoted = false;
    let end = reason
        .char_indices()
        .find(|&(_, c)| {
            quoted ^= c == '`';
            !quoted && matches!(c, ':' | ';')
        })
        .map_or(reason.len(), |(i, _)| i);
    reason[..end].trim()
}

type Tallies = (Vec<Mistake>, Vec<Mistake>, Vec<Mistake>);

/// Each kind of mistake ("exercise: what"), with who made it.
type Tally = BTreeMap<String, Mistake>;

/// Counts `what` once more, made by `trainee`.
fn tally<'a>(m: &'a mut Tally, what: String, trainee: &str) -> &'a mut Mistake {
    let e = m.entry(what.clone()).or_insert_with(|| Mistake {
        what,
        count: 0,
        values: Vec::new(),
        field: None,
        trainees: Vec::new(),
    });
    e.count += 1;
    e.trainees.push(trainee.to_string());
    e
}

fn mistakes(tables: &[Table]) -> Tallies {
    let (mut lints, mut missed, mut failures) = (Tally::new(), Tally::new(), Tally::new());
    for t in tables {
        for r in &t.rows {
            for l in &r.lints {
                tally(&mut lints, format!("{}: {l}", t.id), &r.trainee);
            }
            for m in &r.missed {
                let what = format!("{}: {}", t.id, m.clause);
                let e = tally(&mut missed, what, &r.trainee);
                e.values.extend(m.value);
                e.field = e.field.or(m.field);
            }
            if !r.mistake.is_empty() && r.reason != NOT_SUBMITTED {
                let what = format!("{}: {}", t.id, r.mistake);
                tally(&mut failures, what, &r.trainee);
            }
        }
    }
    let sorted = |m: Tally| {
        let mut v: Vec<Mistake> = m.into_values().collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(a.what.cmp(&b.what)));
        v
    };
    (sorted(lints), sorted(missed), sorted(failures))
}

/// " (alice, bob)": who made a mistake, the first few by name.
fn who(m: &Mistake) -> String {
    const NAMED: usize = 4;
    let names: Vec<String> = m
        .trainees
        .iter()
        .take(NAMED)
        .map(|t| safe(t).to_string())
        .collect();
    match m.trainees.len().saturating_sub(NAMED) {
        0 => format!(" ({})", names.join(", ")),
        more => format!(" ({} and {more} more)", names.join(", ")),
    }
}

/// ": guest_to_working_set was 1.9 to 2.3": the values a missed clause's
/// field had, labelled with the field.
fn range(m: &Mistake) -> String {
    let lo = m.values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = m.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let field = m.field.unwrap_or("the value");
    if m.values.is_empty() {
        String::new()
    } else if lo == hi {
        format!(
            ": {field} was {}",
            crate::train::goal::field_value_text(field, lo)
        )
    } else {
        format!(": {field} was {} to {}", short_number(lo), short_number(hi))
    }
}

/// The columns the text report keeps to: a terminal's 80.
const TEXT_COLUMNS: usize = 80;

/// `line` wrapped at [`TEXT_COLUMNS`], its rows after the first indented
/// by `indent`, each ended: a long reason or mistake is never cut.
fn wrapped(out: &mut String, line: &str, indent: usize) {
    for row in crate::tui::view::fit::wrap(line, TEXT_COLUMNS, indent) {
        out.push_str(row.trim_end());
        out.push('\n');
    }
}

/// A goal field's value as the report shows it: a number's mean, a
/// flag's count of runs.
fn field_value(field: &str, value: f64, runs: usize) -> String {
    match crate::train::goal::field(field).map(|f| f.kind) {
        Some(FieldKind::Flag) => format!("{field} in {} of {runs} runs", short_number(value)),
        _ => format!("{field} {}", short_number(value)),
    }
}

/// The grades as text tables, one per exercise (each row's goal fields
/// labelled, its reason wrapped under it), each trainee's totals, then the
/// common mistakes; no line is wider than 80 columns unless one word is.
pub fn text(g: &Grades) -> String {
    let mut out = format!(
        "{} — {}\n",
        safe(&g.course),
        crate::report::words::count(g.trainees.len() as f64, "trainee", "trainees")
    );
    use crate::report::words::{cols, middle_cut, pad_right};
    let width = g
        .trainees
        .iter()
        .map(|t| cols(&safe(t)))
        .max()
        .unwrap_or(7)
        .clamp(7, 24);
    // A longer name keeps its start and its end (two trainees of one
    // evening group stay apart), `…` between; a name of wide characters
    // is padded by the columns it takes.
    let name = |t: &str| pad_right(&middle_cut(&safe(t), width), width);
    for t in &g.tables {
        let passed = t.rows.iter().filter(|r| r.passed).count();
        let _ = writeln!(
            out,
            "\n{} — {} ({passed} of {} passed)",
            safe(&t.id),
            safe(&t.title),
            t.rows.len(),
        );
        wrapped(&mut out, &format!("  goal: {}", safe(&t.goal)), 8);
        if !t.fields.is_empty() {
            wrapped(
                &mut out,
                "  (under each trainee: the goal's fields over the held-out runs, a number's mean, a flag's count)",
                3,
            );
        }
        let _ = writeln!(
            out,
            "  {}  {:<13}  {:>5}",
            pad_right("trainee", width),
            "result",
            "runs"
        );
        for r in &t.rows {
            let runs = if r.runs > 0 {
                format!("{}/{}", r.runs_met, r.runs)
            } else {
                "-".into()
            };
            // Nothing handed in is not a fail (docs/training.md).
            let missing = r.reason == NOT_SUBMITTED;
            let result = match (r.passed, missing) {
                (true, _) => "pass",
                (false, true) => NOT_SUBMITTED,
                (false, false) => "FAIL",
            };
            let _ = writeln!(out, "  {}  {result:<13}  {runs:>5}", name(&r.trainee));
            if !r.values.is_empty() {
                let values: Vec<String> = t
                    .fields
                    .iter()
                    .zip(&r.values)
                    .map(|(f, v)| field_value(f, *v, r.runs))
                    .collect();
                wrapped(&mut out, &format!("      {}", values.join(" · ")), 6);
            }
            if !r.reason.is_empty() && !missing {
                wrapped(&mut out, &format!("      why: {}", safe(&r.reason)), 11);
            }
        }
    }
    out.push_str("\nTotals (exercises passed of the course's, held-out runs met)\n");
    let _ = writeln!(
        out,
        "  {}  {:>6}  {:>9}  {:>9}",
        pad_right("trainee", width),
        "passed",
        "submitted",
        "runs met"
    );
    for t in &g.totals {
        let _ = writeln!(
            out,
            "  {}  {:>6}  {:>9}  {:>9}",
            name(&t.trainee),
            format!("{}/{}", t.passed, t.exercises),
            t.submitted,
            format!("{}/{}", t.runs_met, t.runs),
        );
    }
    common_mistakes(&mut out, g);
    out
}

/// The common mistakes, each kind with its count, exercise and who: the
/// clauses missed, the failures before running, the lints drawn.
fn common_mistakes(out: &mut String, g: &Grades) {
    out.push_str("\nCommon mistakes\n");
    if g.missed.is_empty() && g.lints.is_empty() && g.failures.is_empty() {
        out.push_str("  none\n");
    }
    let kinds = [
        (&g.missed, "missed "),
        (&g.failures, ""),
        (&g.lints, "lint "),
    ];
    for (mistakes, kind) in kinds {
        for m in mistakes {
            // A missed clause's field values, when it has them.
            let line = format!(
                "  {:>3} × {kind}{}{}{}",
                m.count,
                safe(&m.what),
                range(m),
                who(m)
            );
            wrapped(out, &line, 8);
        }
    }
}

/// A CSV field, quoted when it needs to be; control characters (a
/// trainee's directory may be named with escapes) are shown, never sent.
fn csv_field(s: &str) -> String {
    let s = safe(s);
    // A formula-looking cell is made text for spreadsheets.
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// The report fields of every table, each once, in the order first named:
/// the CSV's value columns.
fn csv_fields(g: &Grades) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for f in g.tables.iter().flat_map(|t| &t.fields) {
        if !out.contains(f) {
            out.push(f);
        }
    }
    out
}

/// The grades as CSV: one line per exercise and trainee, then one per
/// trainee with their totals (exercise `(total)`, `passed` as exercises
/// passed of the course's). The value columns are the fields the goals
/// name, each filled only where the exercise's own goal names it (a
/// memory exercise's row has its memory fields and no CPU figures).
pub fn csv(g: &Grades) -> String {
    let fields = csv_fields(g);
    let mut out = String::from("exercise,trainee,passed,runs_met,runs");
    for f in &fields {
        out.push(',');
        out.push_str(f);
    }
    out.push_str(",reason,missed,lints\n");
    for t in &g.tables {
        for r in &t.rows {
            let mut cells = vec![
                csv_field(&t.id),
                csv_field(&r.trainee),
                r.passed.to_string(),
                r.runs_met.to_string(),
                r.runs.to_string(),
            ];
            for f in &fields {
                let at = t.fields.iter().position(|own| own == f);
                cells.push(
                    at.and_then(|i| r.values.get(i))
                        .map(|v| format!("{v:.3}"))
                        .unwrap_or_default(),
                );
            }
            let missed: Vec<String> = r.missed.iter().map(Missed::line).collect();
            cells.push(csv_field(&r.reason));
            cells.push(csv_field(&missed.join("; ")));
            cells.push(csv_field(&r.lints.join(" ")));
            out.push_str(&cells.join(","));
            out.push('\n');
        }
    }
    for t in &g.totals {
        let mut cells = vec![
            "(total)".to_string(),
            csv_field(&t.trainee),
            format!("{}/{}", t.passed, t.exercises),
            t.runs_met.to_string(),
            t.runs.to_string(),
        ];
        cells.extend(fields.iter().map(|_| String::new()));
        cells.extend([
            format!("submitted {} of {}", t.submitted, t.exercises),
            String::new(),
            String::new(),
        ]);
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// The grades as one JSON document.
pub fn json(g: &Grades) -> String {
    let mut s = serde_json::to_string_pretty(g)
        .unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nu54 F6: a colon inside backticks is quoted text, not where the
    /// kind of a failure ends.
    #[test]
    fn a_reasons_kind_ends_at_a_colon_outside_backticks() {
        let answer = "an answer is `RULE: comparison`, e.g. `HOTPLUG: loadavg > 1`";
        assert_eq!(reason_kind(answer), answer);
        assert_eq!(
            reason_kind("cpuplugd refuses the file: x.conf:3:1: error"),
            "cpuplugd refuses the file"
        );
        assert_eq!(
            reason_kind("the answer is empty; write one"),
            "the answer is empty"
        );
    }

    /// Names longer than the column keep their ends apart and say they
    /// were cut (adversary finding: two trainees read as one).
    #[test]
    fn long_trainee_names_stay_apart_in_the_text() {
        let mut g = class();
        let long = |end: &str| format!("student-2026-evening-group-{end}");
        for t in &mut g.tables {
            for (r, end) in t.rows.iter_mut().zip(["anna", "anton"]) {
                r.trainee = long(end);
            }
        }
        g.trainees = vec![long("anna"), long("anton")];
        let out = text(&g);
        assert!(
            out.contains("  student-2026…-group-anna ")
                && out.contains("  student-2026…group-anton "),
            "{out}"
        );
    }

    #[test]
    fn csv_quotes_and_defuses_formulas() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("plain"), "plain");
    }

    fn row(trainee: &str, passed: bool, runs: (usize, usize), values: Vec<f64>) -> GradeRow {
        GradeRow {
            trainee: trainee.into(),
            passed,
            runs_met: runs.0,
            runs: runs.1,
            reason: if passed {
                String::new()
            } else {
                "held on 0 of 2 held-out runs".into()
            },
            missed: if passed {
                Vec::new()
            } else {
                vec![Missed {
                    clause: "guest_to_working_set <= 1.6".into(),
                    field: Some("guest_to_working_set"),
                    value: Some(2.31),
                    workload: "webserver".into(),
                    seed: 1009,
                }]
            },
            lints: Vec::new(),
            values,
            mistake: String::new(),
        }
    }

    /// A CPU exercise and a memory one, two trainees; bob handed nothing
    /// in for the memory one.
    fn class() -> Grades {
        let table = |id: &str, goal: &str, fields, rows| Table {
            id: id.into(),
            title: id.into(),
            goal: goal.into(),
            fields,
            rows,
        };
        let tables = vec![
            table(
                "cpu",
                "unmet_cpu_seconds < 80 and not flapping",
                vec!["unmet_cpu_seconds", "flapping"],
                vec![
                    row("alice", true, (2, 2), vec![32.5, 0.0]),
                    row("bob", false, (0, 2), vec![120.0, 1.0]),
                ],
            ),
            table(
                "memory",
                "guest_to_working_set <= 1.6 and throughput_ratio >= 0.95",
                vec!["guest_to_working_set", "throughput_ratio"],
                vec![
                    row("alice", false, (1, 2), vec![1.9, 0.97]),
                    GradeRow::failed("bob", NOT_SUBMITTED),
                ],
            ),
        ];
        let trainees = vec!["alice".to_string(), "bob".to_string()];
        Grades::of("c".into(), trainees, tables, (Vec::new(), 0))
    }

    #[test]
    fn the_csv_has_each_goal_s_own_fields_labelled_and_per_trainee_totals() {
        let csv = csv(&class());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "exercise,trainee,passed,runs_met,runs,unmet_cpu_seconds,flapping,\
             guest_to_working_set,throughput_ratio,reason,missed,lints"
        );
        // A CPU row fills the CPU fields only, a memory row the memory
        // fields only.
        assert!(
            lines[1].starts_with("cpu,alice,true,2,2,32.500,0.000,,,"),
            "{}",
            lines[1]
        );
        assert!(
            lines[3].starts_with("memory,alice,false,1,2,,,1.900,0.970,"),
            "{}",
            lines[3]
        );
        // The missed value is labelled with its field and its run.
        assert!(
            lines[3].contains(
                "guest_to_working_set <= 1.6: guest_to_working_set was 2.31 (webserver, seed 1009)"
            ),
            "{}",
            lines[3]
        );
        assert!(!lines[3].contains("(was"), "{}", lines[3]);
        // Nothing handed in: no values.
        assert!(
            lines[4].starts_with("memory,bob,false,0,0,,,,,not submitted"),
            "{}",
            lines[4]
        );
        // The totals, one line per trainee.
        assert_eq!(lines[5], "(total),alice,1/2,3,4,,,,,submitted 2 of 2,,");
        assert_eq!(lines[6], "(total),bob,0/2,0,2,,,,,submitted 1 of 2,,");
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn totals_count_passes_submissions_and_runs() {
        let g = class();
        let alice = &g.totals[0];
        assert_eq!((alice.passed, alice.exercises, alice.submitted), (1, 2, 2));
        assert_eq!((alice.runs_met, alice.runs), (3, 4));
        let bob = &g.totals[1];
        assert_eq!(
            (bob.passed, bob.submitted, bob.runs_met, bob.runs),
            (0, 1, 0, 2)
        );
    }

    #[test]
    fn the_text_labels_each_value_and_cuts_no_line() {
        let t = text(&class());
        assert!(
            t.contains("      unmet_cpu_seconds 120 · flapping in 1 of 2 runs"),
            "{t}"
        );
        assert!(
            t.contains("      guest_to_working_set 1.9 · throughput_ratio 0.97"),
            "{t}"
        );
        assert!(t.contains("Totals"), "{t}");
        assert!(t.contains("  alice       1/2          2        3/4"), "{t}");
        // The missed clause's values, labelled with the field.
        assert!(
            t.contains("× missed memory: guest_to_working_set <= 1.6: guest_to_working_set was\n        2.31"),
            "{t}"
        );
        for line in t.lines() {
            assert!(line.chars().count() <= TEXT_COLUMNS, "{line:?}");
        }
    }

    /// Adversary F5: an exercise with no file reads "not submitted" (as
    /// docs/training.md says: not a fail), and a trainee named in wide
    /// characters is padded by the columns the name takes, so the columns
    /// after it stay in line.
    #[test]
    fn a_missing_exercise_is_not_submitted_and_wide_names_keep_the_columns() {
        let mut g = class();
        let wide = "张伟同学";
        for row in g.tables.iter_mut().flat_map(|t| t.rows.iter_mut()) {
            if row.trainee == "bob" {
                row.trainee = wide.into();
            }
        }
        for t in &mut g.totals {
            if t.trainee == "bob" {
                t.trainee = wide.into();
            }
        }
        g.trainees[1] = wide.into();
        let t = text(&g);
        let memory = t.split("\nmemory").nth(1).unwrap_or_default();
        let row = memory
            .lines()
            .find(|l| l.contains(wide))
            .unwrap_or_default();
        assert!(
            row.contains("not submitted") && !row.contains("FAIL"),
            "{t}"
        );
        assert!(!memory.contains("why: not submitted"), "{t}");
        // "alice" and the wide name end their column at the same place.
        let col = |who: &str, what: &str| {
            t.lines()
                .filter_map(|l| Some(&l[..l.find(what)?]).filter(|_| l.contains(who)))
                .map(crate::report::words::cols)
                .collect::<Vec<_>>()
        };
        assert_eq!(col("alice", "1/2").last(), col(wide, "0/2").last(), "{t}");
    }

    #[test]
    fn a_wrong_answer_is_counted_whole_among_the_mistakes() {
        let mut g = class();
        g.tables[1].rows[1] = GradeRow {
            mistake: "pointed at HOTUNPLUG: (CP_idle * onumcpus) > 0.8".into(),
            ..GradeRow::failed("bob", "pointed at HOTUNPLUG: (CP_idle * onumcpus) > 0.8")
        };
        let (_, _, failures) = mistakes(&g.tables);
        assert_eq!(
            failures[0].what,
            "memory: pointed at HOTUNPLUG: (CP_idle * onumcpus) > 0.8"
        );
    }
}
