//! A course file (TOML, `docs/training.md`): exercises, each a workload,
//! a starting rule file, a goal over the simulator's report and what the
//! trainee sees on the way (hints, an explanation once solved). Read
//! whole, checked whole: every problem comes back with its line and
//! column, and every path is resolved relative to the course file and
//! refused when it leads out of the course's directory (by `..`, an
//! absolute path or a symbolic link), so a course from elsewhere cannot
//! make plugtop read `/etc/shadow`.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::goal::{Goal, GoalError};
use crate::toml_file::FileKind;

/// The largest course file read: a course of a hundred exercises is tens
/// of KB.
pub const MAX_COURSE_BYTES: u64 = 1 << 20;
/// At most this many exercises in a course.
pub const MAX_EXERCISES: usize = 200;
/// At most this many held-out seeds per exercise (each is a run to grade).
pub const MAX_SEEDS: usize = 16;
/// At most this many held-out scenarios per exercise.
pub const MAX_HELD_OUT_SCENARIOS: usize = 8;
/// The longest held-out run, simulated seconds: grading 30 trainees must
/// take seconds, not hours.
pub const MAX_RUN_SECONDS: f64 = 4.0 * 3600.0;
/// The longest time limit, seconds (a day).
pub const MAX_TIME_LIMIT: f64 = 86_400.0;
/// At most this many hints per exercise.
pub const MAX_HINTS: usize = 32;
/// The longest text field (a brief, a hint, an explanation), characters.
pub const MAX_TEXT_CHARS: usize = 20_000;

/// Why a course could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CourseError {
    #[error("cannot read the course {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The TOML itself, or its shape (unknown keys, wrong types), where
    /// the reader gives no place (one bounded line).
    #[error("{path}: error: {message}")]
    Toml { path: String, message: String },
    /// A value that reads but makes no exercise, with where it is.
    #[error("{path}:{line}:{column}: error: {message}")]
    Invalid {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
}

/// What a trainee does in an exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Edit the rules until the report meets the goal.
    #[default]
    Rules,
    /// Point at the rule and comparison that made a recorded guest
    /// misbehave.
    Diagnosis,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CourseFile {
    title: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    held_out: HeldOutFile,
    #[serde(default)]
    exercise: Vec<Spanned<ExerciseFile>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct HeldOutFile {
    seeds: Option<Spanned<Vec<u64>>>,
    duration: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExerciseFile {
    id: Spanned<String>,
    title: String,
    #[serde(default)]
    kind: Kind,
    #[serde(default)]
    brief: String,
    scenario: Option<Spanned<String>>,
    recording: Option<Spanned<String>>,
    start: Spanned<String>,
    reference: Option<Spanned<String>>,
    goal: Option<Spanned<String>>,
    #[serde(default)]
    old_kernel: bool,
    seeds: Option<Spanned<Vec<u64>>>,
    duration: Option<Spanned<String>>,
    #[serde(default)]
    held_out_scenarios: Vec<Spanned<String>>,
    time_limit: Option<Spanned<String>>,
    #[serde(default)]
    hint: Vec<Spanned<HintFile>>,
    #[serde(default)]
    explanation: String,
    question: Option<String>,
    answer: Option<Spanned<AnswerFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HintFile {
    text: String,
    after_attempts: Option<u32>,
    after: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerFile {
    rule: Spanned<String>,
    comparison: String,
}

/// A checked course.
#[derive(Debug, Clone)]
pub struct Course {
    pub title: String,
    pub description: String,
    /// The course file, as given.
    pub path: PathBuf,
    /// The directory every path of the course lies in (canonical).
    pub dir: PathBuf,
    pub exercises: Vec<Exercise>,
}

/// Where an exercise's workload comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkloadPath {
    Scenario(PathBuf),
    Recording(PathBuf),
}

impl WorkloadPath {
    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            WorkloadPath::Scenario(p) | WorkloadPath::Recording(p) => p,
        }
    }
}

/// A hint and when it unlocks: after so many failed attempts, or so long
/// into the exercise, whichever comes first (neither: at once).
#[derive(Debug, Clone, PartialEq)]
pub struct CourseHint {
    pub text: String,
    pub after_attempts: Option<u32>,
    pub after_seconds: Option<f64>,
}

impl CourseHint {
    /// Whether the hint shows after `failed` failed attempts and `elapsed`
    /// seconds.
    pub fn unlocked(&self, failed: u32, elapsed: f64) -> bool {
        match (self.after_attempts, self.after_seconds) {
            (None, None) => true,
            (a, s) => a.is_some_and(|a| failed >= a) || s.is_some_and(|s| elapsed >= s),
        }
    }
}

/// The truth a diagnosis is graded against: the rule and its comparison
/// (as written, blanks ignored) whose flips made the guest misbehave.
#[derive(Debug, Clone, PartialEq)]
pub struct DiagnosisAnswer {
    pub rule: crate::rules::RuleKind,
    pub comparison: String,
}

/// One checked exercise.
#[derive(Debug, Clone)]
pub struct Exercise {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    /// What to try, shown with the goal.
    pub brief: String,
    pub workload: WorkloadPath,
    pub start: PathBuf,
    /// The trainer's solution (a rule file), checked by the course's tests.
    pub reference: Option<PathBuf>,
    /// For a rules exercise.
    pub goal: Option<Goal>,
    pub old_kernel: bool,
    /// Held-out seeds the goal must hold on.
    pub seeds: Vec<u64>,
    /// Simulated seconds of each held-out run (default: the workload's).
    pub duration: Option<f64>,
    /// Further scenarios the goal must hold on (with the same seeds).
    pub held_out_scenarios: Vec<PathBuf>,
    pub time_limit: Option<f64>,
    pub hints: Vec<CourseHint>,
    pub explanation: String,
    /// For a diagnosis exercise.
    pub question: Option<String>,
    pub answer: Option<DiagnosisAnswer>,
}

/// Held-out seeds when a course names none: different from every built-in
/// scenario's own seed, so the practice run is never a graded one.
pub const DEFAULT_SEEDS: [u64; 3] = [1009, 2003, 3001];

struct Checker<'a> {
    text: &'a str,
    shown: String,
    dir: PathBuf,
}

impl Checker<'_> {
    fn invalid(&self, offset: usize, message: impl Into<String>) -> CourseError {
        let (line, column) = crate::toml_file::line_column(self.text, offset);
        CourseError::Invalid {
            path: self.shown.clone(),
            line,
            column,
            message: message.into(),
        }
    }

    /// `rel` resolved against the course's directory, refused when it is
    /// absolute, missing, or leads out of the directory.
    fn path(&self, rel: &Spanned<String>) -> Result<PathBuf, CourseError> {
        let offset = rel.span().start;
        let given = Path::new(rel.get_ref());
        if given.is_absolute() {
            return Err(self.invalid(
                offset,
                format!(
                    "{} is an absolute path; paths in a course are relative to the course file",
                    rel.get_ref()
                ),
            ));
        }
        let joined = self.dir.join(given);
        let real = joined.canonicalize().map_err(|e| {
            self.invalid(
                offset,
                format!(
                    "{}: {} (paths in a course are relative to the course file, here {})",
                    rel.get_ref(),
                    crate::error_chain::innermost(&e),
                    self.dir.display()
                ),
            )
        })?;
        if !real.starts_with(&self.dir) {
            return Err(self.invalid(
                offset,
                format!(
                    "{} leads out of the course's directory {}; refusing it",
                    rel.get_ref(),
                    self.dir.display()
                ),
            ));
        }
        Ok(real)
    }

    fn seconds(&self, s: &Spanned<String>, most: f64, what: &str) -> Result<f64, CourseError> {
        match crate::sim::scenario::seconds(s.get_ref()) {
            Some(v) if v > 0.0 && v <= most => Ok(v),
            _ => Err(self.invalid(
                s.span().start,
                format!(
                    "{what} {:?} is not a duration between 1 s and {} s (write 90s, 5m, 1h or M:SS)",
                    s.get_ref(),
                    most
                ),
            )),
        }
    }

    fn seeds(&self, s: &Spanned<Vec<u64>>) -> Result<Vec<u64>, CourseError> {
        let seeds = s.get_ref();
        if seeds.is_empty() || seeds.len() > MAX_SEEDS {
            return Err(self.invalid(
                s.span().start,
                format!("seeds: give 1 to {MAX_SEEDS} held-out seeds"),
            ));
        }
        Ok(seeds.clone())
    }

    fn text(&self, offset: usize, t: &str, what: &str) -> Result<String, CourseError> {
        if t.chars().count() > MAX_TEXT_CHARS {
            return Err(self.invalid(
                offset,
                format!("{what} is longer than {MAX_TEXT_CHARS} characters"),
            ));
        }
        Ok(t.to_string())
    }
}

impl Course {
    /// Reads and checks the course at `path`.
    pub fn load(path: &Path) -> Result<Course, CourseError> {
        let shown = path.display().to_string();
        let read = |source| CourseError::Read {
            path: shown.clone(),
            source,
        };
        // The course's directory sits beside its file under the same name:
        // naming it is the likeliest slip, so say which file is meant.
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            let file = path.with_extension("toml");
            let hint = if file.is_file() {
                format!("; the course is the file {}", file.display())
            } else {
                String::new()
            };
            return Err(read(std::io::Error::other(format!(
                "a directory, not a course file{hint}"
            ))));
        }
        let bytes = crate::kernel::fs::read_named(path, MAX_COURSE_BYTES).map_err(read)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            read(std::io::Error::other(format!(
                "not UTF-8 text (byte {} is invalid)",
                e.utf8_error().valid_up_to()
            )))
        })?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = parent.canonicalize().map_err(read)?;
        Course::parse(&shown, &text, path, &dir)
    }

    /// Checks course `text` whose paths lie in `dir` (canonical).
    pub fn parse(shown: &str, text: &str, path: &Path, dir: &Path) -> Result<Course, CourseError> {
        let file: CourseFile = toml::from_str(text).map_err(|e| {
            // One bounded line, placed as the checks below place theirs.
            let (offset, message) = crate::toml_file::syntax_error(&e);
            let message = FileKind::explained(FileKind::Course, text, message);
            match offset {
                Some(at) => {
                    let (line, column) = crate::toml_file::line_column(text, at);
                    CourseError::Invalid {
                        path: shown.to_string(),
                        line,
                        column,
                        message,
                    }
                }
                None => CourseError::Toml {
                    path: shown.to_string(),
                    message,
                },
            }
        })?;
        let c = Checker {
            text,
            shown: shown.to_string(),
            dir: dir.to_path_buf(),
        };
        if file.exercise.is_empty() {
            return Err(c.invalid(0, "the course has no [[exercise]]"));
        }
        if file.exercise.len() > MAX_EXERCISES {
            return Err(c.invalid(
                file.exercise[MAX_EXERCISES].span().start,
                format!("more than {MAX_EXERCISES} exercises"),
            ));
        }
        let default_seeds = match &file.held_out.seeds {
            Some(s) => c.seeds(s)?,
            None => DEFAULT_SEEDS.to_vec(),
        };
        let default_duration = match &file.held_out.duration {
            Some(d) => Some(c.seconds(d, MAX_RUN_SECONDS, "held_out.duration")?),
            None => None,
        };
        let mut exercises: Vec<Exercise> = Vec::new();
        for spanned in &file.exercise {
            let at = spanned.span().start;
            let e = spanned.get_ref();
            let ex = exercise(&c, e, at, &default_seeds, default_duration)?;
            if exercises.iter().any(|x| x.id == ex.id) {
                return Err(c.invalid(e.id.span().start, format!("a second exercise {:?}", ex.id)));
            }
            exercises.push(ex);
        }
        Ok(Course {
            title: c.text(0, &file.title, "title")?,
            description: c.text(0, &file.description, "description")?,
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
            exercises,
        })
    }

    /// The exercise `id`.
    pub fn exercise(&self, id: &str) -> Option<&Exercise> {
        self.exercises.iter().find(|e| e.id == id)
    }

    /// `path` (one of the course's, in its canonical directory) as the
    /// trainee reaches it: beside the course file as they named it, so a
    /// command that names it works from where they started the course.
    pub fn as_named(&self, path: &Path) -> PathBuf {
        match (path.strip_prefix(&self.dir), self.path.parent()) {
            (Ok(inside), Some(parent)) => parent.join(inside),
            _ => path.to_path_buf(),
        }
    }

    /// A short name for the course, for its progress file: the file's stem.
    pub fn stem(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "course".into())
    }
}

fn exercise(
    c: &Checker,
    e: &ExerciseFile,
    at: usize,
    default_seeds: &[u64],
    default_duration: Option<f64>,
) -> Result<Exercise, CourseError> {
    let id = e.id.get_ref();
    let id_ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
    if !id_ok {
        return Err(c.invalid(
            e.id.span().start,
            "an exercise id is 1 to 64 letters, digits, `-` or `_` (it names the trainees' files)",
        ));
    }
    let (workload, goal, answer) = what_is_asked(c, e, at)?;
    let seeds = match &e.seeds {
        Some(s) => c.seeds(s)?,
        None => default_seeds.to_vec(),
    };
    let duration = match &e.duration {
        Some(d) => Some(c.seconds(d, MAX_RUN_SECONDS, "duration")?),
        None => default_duration,
    };
    if e.held_out_scenarios.len() > MAX_HELD_OUT_SCENARIOS {
        return Err(c.invalid(
            at,
            format!("more than {MAX_HELD_OUT_SCENARIOS} held_out_scenarios"),
        ));
    }
    let held_out_scenarios = e
        .held_out_scenarios
        .iter()
        .map(|s| c.path(s))
        .collect::<Result<Vec<_>, _>>()?;
    let time_limit = match &e.time_limit {
        Some(t) => Some(c.seconds(t, MAX_TIME_LIMIT, "time_limit")?),
        None => None,
    };
    if e.hint.len() > MAX_HINTS {
        return Err(c.invalid(at, format!("more than {MAX_HINTS} hints")));
    }
    let hints = hints(c, e)?;
    Ok(Exercise {
        id: id.clone(),
        title: c.text(at, &e.title, "title")?,
        kind: e.kind,
        brief: c.text(at, &e.brief, "brief")?,
        workload,
        start: c.path(&e.start)?,
        reference: e.reference.as_ref().map(|r| c.path(r)).transpose()?,
        goal,
        old_kernel: e.old_kernel,
        seeds,
        duration,
        held_out_scenarios,
        time_limit,
        hints,
        explanation: c.text(at, &e.explanation, "explanation")?,
        question: e
            .question
            .as_ref()
            .map(|q| c.text(at, q, "question"))
            .transpose()?,
        answer,
    })
}

/// An exercise's workload, goal and answer, checked against its kind.
fn what_is_asked(
    c: &Checker,
    e: &ExerciseFile,
    at: usize,
) -> Result<(WorkloadPath, Option<Goal>, Option<DiagnosisAnswer>), CourseError> {
    let id = e.id.get_ref();
    let workload = match (&e.scenario, &e.recording) {
        (Some(s), None) => WorkloadPath::Scenario(c.path(s)?),
        (None, Some(r)) => WorkloadPath::Recording(c.path(r)?),
        _ => {
            return Err(c.invalid(
                at,
                format!("exercise {id:?}: give either `scenario` or `recording`"),
            ));
        }
    };
    let goal = match &e.goal {
        Some(g) => Some(Goal::parse(g.get_ref()).map_err(|err| goal_error(c, g, &err))?),
        None => None,
    };
    let answer = match &e.answer {
        Some(a) => {
            let rule = rule_kind(a.get_ref().rule.get_ref()).ok_or_else(|| {
                c.invalid(
                    a.get_ref().rule.span().start,
                    "answer.rule is one of HOTPLUG, HOTUNPLUG, MEMPLUG, MEMUNPLUG",
                )
            })?;
            Some(DiagnosisAnswer {
                rule,
                comparison: a.get_ref().comparison.clone(),
            })
        }
        None => None,
    };
    match e.kind {
        Kind::Rules if goal.is_none() => {
            return Err(c.invalid(at, format!("exercise {id:?} needs a `goal`")));
        }
        Kind::Diagnosis if answer.is_none() || e.question.is_none() => {
            return Err(c.invalid(
                at,
                format!("diagnosis exercise {id:?} needs a `question` and an [exercise.answer]"),
            ));
        }
        Kind::Diagnosis if !matches!(workload, WorkloadPath::Recording(_)) => {
            return Err(c.invalid(
                at,
                format!("diagnosis exercise {id:?} is about a `recording`"),
            ));
        }
        _ => {}
    }
    Ok((workload, goal, answer))
}

/// An exercise's hints, checked.
fn hints(c: &Checker, e: &ExerciseFile) -> Result<Vec<CourseHint>, CourseError> {
    let mut hints = Vec::new();
    for h in &e.hint {
        let hf = h.get_ref();
        hints.push(CourseHint {
            text: c.text(h.span().start, &hf.text, "a hint")?,
            after_attempts: hf.after_attempts,
            after_seconds: match &hf.after {
                Some(a) => Some(c.seconds(a, MAX_TIME_LIMIT, "after")?),
                None => None,
            },
        });
    }
    Ok(hints)
}

/// A goal's error placed in the course file: the goal's string starts
/// after its opening quote.
fn goal_error(c: &Checker, g: &Spanned<String>, e: &GoalError) -> CourseError {
    let start = g.span().start;
    // Single-line goals (the usual) map exactly; a multi-line string's
    // later lines are reported at the goal's start with the goal's own
    // line and column in the message.
    let quote = c.text.get(start..).map_or(0, |t| {
        if t.starts_with("\"\"\"") || t.starts_with("'''") {
            3
        } else {
            1
        }
    });
    if e.line == 1 && quote == 1 {
        let offset = start + quote + byte_of_char(g.get_ref(), e.column - 1);
        c.invalid(offset, e.message.clone())
    } else {
        c.invalid(start, e.to_string())
    }
}

fn byte_of_char(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

/// A condition rule by its name in the file (any case).
pub fn rule_kind(name: &str) -> Option<crate::rules::RuleKind> {
    crate::rules::RuleKind::ALL
        .iter()
        .copied()
        .find(|k| k.file_name().eq_ignore_ascii_case(name.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            d.path().join("s.toml"),
            "name='s'\ncpus=2\nmemory_mib=1024\nduration='60'\n",
        )
        .expect("write");
        std::fs::write(d.path().join("a.conf"), "UPDATE=\"1\"\n").expect("write");
        d
    }

    fn parse(d: &Path, text: &str) -> Result<Course, CourseError> {
        let real = d.canonicalize().expect("canonical");
        Course::parse("c.toml", text, &d.join("c.toml"), &real)
    }

    const ONE: &str = "title='t'\n[[exercise]]\nid='e'\ntitle='E'\nscenario='s.toml'\nstart='a.conf'\ngoal='not flapping'\n";

    #[test]
    fn a_minimal_course_reads_with_default_seeds() {
        let d = dir();
        let c = parse(d.path(), ONE).expect("course");
        assert_eq!(c.exercises.len(), 1);
        assert_eq!(c.exercises[0].seeds, DEFAULT_SEEDS.to_vec());
    }

    #[test]
    fn unknown_keys_and_bad_goals_have_line_and_column() {
        let d = dir();
        let e = parse(d.path(), &ONE.replace("goal=", "gaol=")).expect_err("unknown key");
        assert!(e.to_string().contains("gaol"), "{e}");
        assert!(e.to_string().contains("c.toml:7:1: error: "), "{e}");
        let e = parse(d.path(), &ONE.replace("not flapping", "not flappin")).expect_err("goal");
        let s = e.to_string();
        assert!(s.contains("c.toml:7:11: error: "), "{s}");
        assert!(
            s.contains("unknown field `flappin`") && s.contains("unmet_cpu_seconds"),
            "{s}"
        );
    }

    #[test]
    fn paths_out_of_the_course_directory_are_refused() {
        let d = dir();
        let inner = d.path().join("course");
        std::fs::create_dir(&inner).expect("mkdir");
        std::fs::write(inner.join("a.conf"), "UPDATE=\"1\"\n").expect("write");
        std::os::unix::fs::symlink(d.path().join("s.toml"), inner.join("link.toml")).expect("ln");
        for (scenario, said) in [
            ("../s.toml", "leads out"),
            ("link.toml", "leads out"),
            ("/etc/passwd", "absolute"),
            ("missing.toml", "missing.toml"),
        ] {
            let text = ONE.replace("s.toml", scenario);
            let e = parse(&inner, &text).expect_err(scenario);
            assert!(e.to_string().contains(said), "{scenario}: {e}");
            assert!(e.to_string().contains("c.toml:5:"), "{scenario}: {e}");
        }
    }

    #[test]
    fn absurd_numbers_are_refused() {
        let d = dir();
        for (extra, said) in [
            ("duration='9999h'\n", "duration"),
            ("time_limit='0'\n", "time_limit"),
            ("seeds=[]\n", "seeds"),
            (
                "seeds=[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\n",
                "seeds",
            ),
            ("goal2=1\n", "goal2"),
        ] {
            let e = parse(d.path(), &format!("{ONE}{extra}")).expect_err(extra);
            assert!(e.to_string().contains(said), "{extra}: {e}");
        }
        let e = parse(d.path(), &ONE.replace("id='e'", "id='../x'")).expect_err("id");
        assert!(e.to_string().contains("exercise id"), "{e}");
    }

    #[test]
    fn hints_unlock_by_attempts_or_time() {
        let h = CourseHint {
            text: "t".into(),
            after_attempts: Some(2),
            after_seconds: Some(300.0),
        };
        assert!(!h.unlocked(1, 10.0));
        assert!(h.unlocked(2, 10.0));
        assert!(h.unlocked(0, 300.0));
    }
}
