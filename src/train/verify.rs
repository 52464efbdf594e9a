//! A trainer's check of a course (`plugtop train check`, and the test that
//! keeps the built-in course true): every exercise's start file must fail
//! and its reference must pass on the held-out seeds; a diagnosis's truth
//! must be the comparison that really flipped most in its recording, and
//! its start (the incident's rules) must offer it as a choice.

use serde::Serialize;

use super::course::{Course, Exercise, Kind, WorkloadPath};
use super::diagnose;
use super::judge::{ExerciseJudge, ExerciseVerdict};
use crate::rules::SourceFile;

/// One exercise checked.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub id: String,
    /// Whether the exercise is as the trainer meant it.
    pub ok: bool,
    /// What was found, one line each.
    pub findings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<ExerciseVerdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<ExerciseVerdict>,
}

fn read(path: &std::path::Path) -> Result<SourceFile, String> {
    crate::rules::read_rule_bytes(path)
        .map(|b| SourceFile::new(path.display().to_string(), b))
        .map_err(|e| {
            format!(
                "cannot read {}: {}",
                path.display(),
                crate::error_chain::innermost(&e)
            )
        })
}

/// Files no goal may pass: the one that stops cpuplugd after its first
/// interval (a rule naming a field /proc/meminfo lacks), and the one that
/// plugs every CPU and gives the guest all its memory, always.
pub const FOOLS: [(&str, &str); 2] = [
    (
        "a file that stops cpuplugd",
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"0\"\nCMM_INC=\"0\"\nMEMPLUG=\"meminfo.NoSuchField > 0\"\nMEMUNPLUG=\"0\"\n",
    ),
    (
        "plugging everything",
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"0\"\nCMM_INC=\"0\"\nMEMPLUG=\"1\"\nMEMUNPLUG=\"0\"\n",
    ),
];

/// Judges the [`FOOLS`] on `exercise`, each said in `findings`; true when
/// one passes (the goal does not bound what it should).
fn fools_pass(judge: &ExerciseJudge, exercise: &Exercise, findings: &mut Vec<String>) -> bool {
    let mut fooled = false;
    for (name, text) in FOOLS {
        let file = SourceFile::new(format!("<{name}>"), text.as_bytes().to_vec());
        let v = judge.judge(exercise, &file);
        if v.passed {
            fooled = true;
            findings.push(format!(
                "{name} passes: the goal must bound the cost too (avg_online_cpus, guest_to_working_set or avg_guest_mib)"
            ));
        } else {
            findings.push(format!("{name} fails: {}", v.summary()));
        }
    }
    fooled
}

/// Checks one exercise.
pub fn check(exercise: &Exercise) -> Checked {
    let mut findings = Vec::new();
    let mut out = Checked {
        id: exercise.id.clone(),
        ok: false,
        findings: Vec::new(),
        start: None,
        reference: None,
    };
    match exercise.kind {
        Kind::Rules => {
            let judge = match ExerciseJudge::new(exercise) {
                Ok(j) => j,
                Err(e) => {
                    out.findings
                        .push(format!("the workload: {}", crate::error_chain::text(&e)));
                    return out;
                }
            };
            // The practice run plays the workload with its own seed: held
            // out too, a file fitted to what the trainee watched would be
            // graded on it.
            let practice = judge.workloads.first().map(|w| w.workload.scenario.seed);
            let seen = practice.filter(|s| judge.seeds.contains(s));
            if let Some(seed) = seen {
                findings.push(format!(
                    "held-out seed {seed} is the practice run's own (the workload's `seed`): \
                     pick another, so the practice run is never a graded one"
                ));
            }
            let start = read(&exercise.start).map(|f| judge.judge(exercise, &f));
            match &start {
                Ok(v) if v.passed => findings.push("the start file already passes".to_string()),
                Ok(v) => findings.push(format!("start fails: {}", v.summary())),
                Err(e) => findings.push(e.clone()),
            }
            let reference = exercise
                .reference
                .as_ref()
                .map(|p| read(p).map(|f| judge.judge(exercise, &f)));
            match &reference {
                None => findings.push("no reference solution".to_string()),
                Some(Ok(v)) if v.passed => findings.push(format!("reference {}", v.summary())),
                Some(Ok(v)) => findings.push(format!("the reference fails: {}", v.summary())),
                Some(Err(e)) => findings.push(e.clone()),
            }
            let fooled = fools_pass(&judge, exercise, &mut findings);
            out.ok = seen.is_none()
                && !fooled
                && matches!(&start, Ok(v) if !v.passed)
                && matches!(&reference, Some(Ok(v)) if v.passed);
            out.start = start.ok();
            out.reference = reference.and_then(Result::ok);
        }
        Kind::Diagnosis => {
            let (WorkloadPath::Recording(rec), Some(truth)) =
                (&exercise.workload, &exercise.answer)
            else {
                out.findings
                    .push("a diagnosis needs a recording and an answer".into());
                return out;
            };
            match read(&exercise.start)
                .and_then(|f| diagnose::tally(rec, &f).map_err(|e| crate::error_chain::text(&e)))
            {
                Err(e) => findings.push(e),
                Ok(t) => match t.culprit() {
                    Some(c) if c.answers(truth) => {
                        out.ok = true;
                        findings.push(format!(
                            "the answer {} flipped {} of {} changed decisions",
                            c.line(),
                            t.counts[0].1,
                            t.changes
                        ));
                    }
                    Some(c) => findings.push(format!(
                        "the answer is not what flipped most: {} did ({} times)",
                        c.line(),
                        t.counts[0].1
                    )),
                    None => findings.push("no comparison flipped in the recording".into()),
                },
            }
        }
    }
    out.findings = findings;
    out
}

/// Checks every exercise of `course`, on up to `threads` threads, in the
/// course's order.
pub fn check_course(course: &Course, threads: usize) -> Vec<Checked> {
    let checked = crate::tune::threads::in_order(course.exercises.len(), threads.min(64), &|i| {
        let e = &course.exercises[i];
        // A panic checking one exercise is a failed check of it, said;
        // never a course left unchecked in silence with a zero exit status.
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(e)))
            .unwrap_or_else(|_| Checked {
                id: e.id.clone(),
                ok: false,
                findings: vec!["checking it failed (an internal error)".into()],
                start: None,
                reference: None,
            });
        Some(checked)
    });
    checked.into_iter().flatten().collect()
}
