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
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use super::course::{Course, Exercise, Kind};
use super::diagnose;
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
    /// The goal's clauses missed, with the first value that missed.
    pub missed: Vec<String>,
    pub lints: Vec<&'static str>,
    /// Averages over the held-out runs, for the table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmet_cpu_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_online_cpus: Option<f64>,
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
            unmet_cpu_seconds: None,
            avg_online_cpus: None,
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
    pub rows: Vec<GradeRow>,
}

/// A mistake and how many submissions made it.
#[derive(Debug, Clone, Serialize)]
pub struct Mistake {
    pub what: String,
    pub count: usize,
    /// For a missed clause: its values in the submissions that missed it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<f64>,
}

/// The class's results.
#[derive(Debug, Clone, Serialize)]
pub struct Grades {
    pub course: String,
    pub trainees: Vec<String>,
    pub tables: Vec<Table>,
    /// Lint codes by how many submissions drew them, most first.
    pub lints: Vec<Mistake>,
    /// "exercise: clause" by how many submissions missed it, most first.
    pub missed: Vec<Mistake>,
    /// Failures before running (refused, unreadable, missing), by reason
    /// kind, most first.
    pub failures: Vec<Mistake>,
}

/// The trainees: the subdirectories of `dir`, sorted. Anything else there
/// is skipped; a link to a directory is not followed.
fn trainees(dir: &Path) -> Result<Vec<(String, PathBuf)>, GradeError> {
    let err = |source| GradeError::Dir {
        path: dir.display().to_string(),
        source,
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
        if kind.is_dir() {
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

fn submission(path: &Path) -> Result<Vec<u8>, String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("not submitted".into());
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
    if bytes.contains(&0) {
        return Err("a binary file, not a rule file".into());
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
            reason,
            missed: Vec::new(),
            lints: Vec::new(),
            unmet_cpu_seconds: None,
            avg_online_cpus: None,
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
                    (Ok(a), _) => row(
                        false,
                        format!(
                            "pointed at {}: {}",
                            a.rule.file_name(),
                            echoed(&a.comparison)
                        ),
                    ),
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
                let reports: Vec<_> = verdict
                    .runs
                    .iter()
                    .filter_map(|r| r.report.as_ref())
                    .collect();
                let mean = |f: fn(&crate::sim::report::SimReport) -> f64| {
                    (!reports.is_empty())
                        .then(|| reports.iter().map(|r| f(r)).sum::<f64>() / reports.len() as f64)
                };
                GradeRow {
                    trainee: trainee.to_string(),
                    passed: verdict.passed,
                    runs_met: verdict.runs.iter().filter(|r| r.met).count(),
                    runs: verdict.runs.len(),
                    reason: if verdict.passed {
                        String::new()
                    } else {
                        verdict.summary()
                    },
                    missed: verdict.missed().iter().map(|c| c.describe()).collect(),
                    lints: verdict.lints.clone(),
                    unmet_cpu_seconds: mean(|r| r.unmet_cpu_seconds),
                    avg_online_cpus: mean(|r| r.avg_online_cpus),
                }
            }
        }
    }
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
    let next = AtomicUsize::new(0);
    let results: Vec<Vec<(usize, GradeRow)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.clamp(1, 64))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&(e, t)) = jobs.get(i) else { break };
                        let (name, path) = &trainees[t];
                        // A panic judging one submission fails it alone:
                        // the thread goes on, and the rows it graded stay.
                        let graded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            prepared[e].grade(name, path)
                        }))
                        .unwrap_or_else(|_| {
                            GradeRow::failed(
                                name,
                                "grading this submission failed (an internal error)",
                            )
                        });
                        done.push((i, graded));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut rows: Vec<Option<GradeRow>> = vec![None; jobs.len()];
    for (i, row) in results.into_iter().flatten() {
        rows[i] = Some(row);
    }
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
            rows,
        });
    }
    let (lints, missed, failures) = mistakes(&tables);
    Ok(Grades {
        course: course.title.clone(),
        trainees: trainees.into_iter().map(|(n, _)| n).collect(),
        tables,
        lints,
        missed,
        failures,
    })
}

/// The value a missed clause's description ends with: "(was 52.3)".
fn value_of(described: &str) -> Option<f64> {
    let v = described.rsplit_once("(was ")?.1.strip_suffix(')')?;
    v.parse().ok()
}

/// The clause part of a missed clause's description.
fn clause_of(described: &str) -> &str {
    described
        .rsplit_once(" (was ")
        .map_or(described, |(c, _)| c)
}

/// The kind of a failure reason, for counting: its text up to the first
/// colon or semicolon ("cpuplugd refuses the file", "the answer is
/// empty"), where the particulars and the advice begin.
fn reason_kind(reason: &str) -> &str {
    reason.split([':', ';']).next().unwrap_or(reason).trim()
}

type Tallies = (Vec<Mistake>, Vec<Mistake>, Vec<Mistake>);

fn mistakes(tables: &[Table]) -> Tallies {
    let mut lints: BTreeMap<String, usize> = BTreeMap::new();
    let mut missed: BTreeMap<String, (usize, Vec<f64>)> = BTreeMap::new();
    let mut failures: BTreeMap<String, usize> = BTreeMap::new();
    for t in tables {
        for r in &t.rows {
            for l in &r.lints {
                *lints.entry((*l).to_string()).or_default() += 1;
            }
            for m in &r.missed {
                let e = missed
                    .entry(format!("{}: {}", t.id, clause_of(m)))
                    .or_default();
                e.0 += 1;
                e.1.extend(value_of(m));
            }
            if !r.passed && r.runs == 0 && !r.reason.is_empty() && r.reason != "not submitted" {
                *failures
                    .entry(format!("{}: {}", t.id, reason_kind(&r.reason)))
                    .or_default() += 1;
            }
        }
    }
    let sorted = |m: BTreeMap<String, (usize, Vec<f64>)>| {
        let mut v: Vec<Mistake> = m
            .into_iter()
            .map(|(what, (count, values))| Mistake {
                what,
                count,
                values,
            })
            .collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(a.what.cmp(&b.what)));
        v
    };
    let counts = |m: BTreeMap<String, usize>| {
        sorted(m.into_iter().map(|(k, n)| (k, (n, Vec::new()))).collect())
    };
    (counts(lints), sorted(missed), counts(failures))
}

fn range(values: &[f64]) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.is_empty() {
        String::new()
    } else if lo == hi {
        format!(" (was {})", super::goal::short_number(lo))
    } else {
        format!(
            " (was {} to {})",
            super::goal::short_number(lo),
            super::goal::short_number(hi)
        )
    }
}

/// The grades as text tables, one per exercise, then the common mistakes.
pub fn text(g: &Grades) -> String {
    let mut out = format!("{} — {} trainees\n", safe(&g.course), g.trainees.len());
    let width = g
        .trainees
        .iter()
        .map(|t| safe(t).chars().count())
        .max()
        .unwrap_or(7)
        .clamp(7, 24);
    for t in &g.tables {
        let passed = t.rows.iter().filter(|r| r.passed).count();
        let _ = writeln!(
            out,
            "\n{} — {} ({passed} of {} passed)\n  goal: {}",
            safe(&t.id),
            safe(&t.title),
            t.rows.len(),
            safe(&t.goal)
        );
        let _ = writeln!(
            out,
            "  {:<width$}  {:<6}  {:>5}  why",
            "trainee", "result", "runs"
        );
        for r in &t.rows {
            let name: String = safe(&r.trainee).chars().take(width).collect();
            let runs = if r.runs > 0 {
                format!("{}/{}", r.runs_met, r.runs)
            } else {
                "-".into()
            };
            let _ = writeln!(
                out,
                "  {:<width$}  {:<6}  {:>5}  {}",
                name,
                if r.passed { "pass" } else { "FAIL" },
                runs,
                safe(&r.reason)
            );
        }
    }
    out.push_str("\nCommon mistakes\n");
    if g.missed.is_empty() && g.lints.is_empty() && g.failures.is_empty() {
        out.push_str("  none\n");
    }
    for m in &g.missed {
        let _ = writeln!(
            out,
            "  {:>3} × missed {}{}",
            m.count,
            safe(&m.what),
            range(&m.values)
        );
    }
    for m in &g.failures {
        let _ = writeln!(out, "  {:>3} × {}", m.count, safe(&m.what));
    }
    for m in &g.lints {
        let _ = writeln!(out, "  {:>3} × lint {}", m.count, safe(&m.what));
    }
    out
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

/// The grades as CSV: one line per exercise and trainee.
pub fn csv(g: &Grades) -> String {
    let mut out = String::from(
        "exercise,trainee,passed,runs_met,runs,unmet_cpu_seconds,avg_online_cpus,reason,missed,lints\n",
    );
    let num = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
    for t in &g.tables {
        for r in &t.rows {
            let fields = [
                csv_field(&t.id),
                csv_field(&r.trainee),
                r.passed.to_string(),
                r.runs_met.to_string(),
                r.runs.to_string(),
                num(r.unmet_cpu_seconds),
                num(r.avg_online_cpus),
                csv_field(&r.reason),
                csv_field(&r.missed.join("; ")),
                csv_field(&r.lints.join(" ")),
            ];
            out.push_str(&fields.join(","));
            out.push('\n');
        }
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

    #[test]
    fn csv_quotes_and_defuses_formulas() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn missed_values_are_read_back() {
        assert_eq!(value_of("x < 40 (was 52.5)"), Some(52.5));
        assert_eq!(clause_of("x < 40 (was 52.5)"), "x < 40");
        assert_eq!(value_of("not flapping"), None);
    }
}
