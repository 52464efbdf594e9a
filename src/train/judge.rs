//! Judging a trainee's rule file: the exercise's goal must hold on every
//! held-out seed of its workload and of each held-out scenario, so a file
//! fitted to the one run the trainee practised on does not pass. The runs
//! themselves are `plugtop tune`'s ([`crate::tune::Workload::report`]):
//! the same closed loop on the simulated guest, the same refusal of a file
//! cpuplugd would refuse.

use serde::Serialize;

use super::course::{Exercise, WorkloadPath};
use super::goal::ClauseCheck;
use crate::rules::{Severity, SourceFile, SystemFacts, load};
use crate::sim::Scenario;
use crate::sim::report::SimReport;
use crate::tune::Workload;

/// The most terms a judged file's rules may expand to. Each held-out run
/// evaluates them every interval: variables that double each other
/// expand to 131,072 terms that cpuplugd takes but that cost 5 s a run,
/// so one such submission made a class's grading take minutes. A
/// cpuplugd file a trainee writes has tens of terms.
pub const MAX_JUDGED_TERMS: usize = 10_000;

/// The clause every judged run must meet whatever its goal says.
/// Named as a goal names it, with what happened: a verdict lists it among
/// the clauses missed.
pub const STOPPED_CLAUSE: &str = "not stopped (cpuplugd exited before the end)";

/// Why an exercise's workload could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error(transparent)]
    Scenario(#[from] crate::sim::scenario::ScenarioError),
    /// A workload longer than a held-out run may be, with no `duration`
    /// to shorten it: grading a class would take hours.
    #[error(
        "{name} lasts {seconds} s; a held-out run lasts at most {most} s: give the exercise a `duration`"
    )]
    TooLong {
        name: String,
        seconds: f64,
        most: f64,
    },
    #[error("{path}")]
    Recording {
        path: String,
        #[source]
        source: crate::tune::recorded::WorkloadError,
    },
}

/// One held-out workload, ready to run: its name for tables, and the
/// machine its rules are loaded against.
#[derive(Debug, Clone)]
pub struct JudgedWorkload {
    pub name: String,
    pub workload: Workload,
    pub facts: SystemFacts,
}

/// An exercise's workloads, read once and judged against many files.
#[derive(Debug, Clone)]
pub struct ExerciseJudge {
    /// The practice workload (its own seed) first, then the held-out
    /// scenarios.
    pub workloads: Vec<JudgedWorkload>,
    pub seeds: Vec<u64>,
}

/// One graded run.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub workload: String,
    pub seed: u64,
    pub met: bool,
    /// The clauses, each checked (empty when the run did not happen).
    pub checks: Vec<ClauseCheck>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<SimReport>,
}

/// A rule file judged on an exercise.
#[derive(Debug, Clone, Serialize)]
pub struct ExerciseVerdict {
    pub passed: bool,
    /// Why it failed without running: cpuplugd refuses it, it cannot be
    /// read, it is no rule file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub runs: Vec<Run>,
    /// The lint warnings the file draws (codes), each once.
    pub lints: Vec<&'static str>,
}

impl ExerciseVerdict {
    /// A file failed before it ran.
    pub fn failed(reason: impl Into<String>) -> ExerciseVerdict {
        ExerciseVerdict {
            passed: false,
            reason: Some(reason.into()),
            runs: Vec::new(),
            lints: Vec::new(),
        }
    }

    /// The clauses missed, each once, in the order first missed, with the
    /// run that first missed it (its value is that run's).
    pub fn missed(&self) -> Vec<(&Run, &ClauseCheck)> {
        let mut out: Vec<(&Run, &ClauseCheck)> = Vec::new();
        for r in &self.runs {
            for c in &r.checks {
                if !c.met && !out.iter().any(|(_, o)| o.clause == c.clause) {
                    out.push((r, c));
                }
            }
        }
        out
    }

    /// Each clause missed in one line, its value labelled and the run it
    /// is from named: "guest_to_working_set <= 1.6: guest_to_working_set
    /// was 2.31 (webserver, seed 1009)".
    pub fn missed_lines(&self) -> Vec<String> {
        self.missed()
            .iter()
            .map(|(r, c)| format!("{} ({}, seed {})", c.describe(), r.workload, r.seed))
            .collect()
    }

    /// The verdict without the clauses missed: "held on 3 of 3 held-out
    /// runs", "held on 1 of 3 held-out runs" (the goal; whether that
    /// passes is said beside it, PASSED or not yet), or the reason.
    pub fn headline(&self) -> String {
        if let Some(r) = &self.reason {
            return r.clone();
        }
        let met = self.runs.iter().filter(|r| r.met).count();
        format!("held on {met} of {} held-out runs", self.runs.len())
    }

    /// One line: the headline and the clauses missed.
    pub fn summary(&self) -> String {
        let missed = self.missed_lines();
        if self.reason.is_some() || missed.is_empty() {
            return self.headline();
        }
        format!("{}; missed: {}", self.headline(), missed.join("; "))
    }
}

/// The scenario of a workload file: a scenario, or a recording played as
/// one (as `plugtop tune --replay` plays it).
pub fn scenario_of(w: &WorkloadPath) -> Result<(Scenario, bool), JudgeError> {
    match w {
        WorkloadPath::Scenario(p) => Ok((Scenario::load(p)?, false)),
        WorkloadPath::Recording(p) => {
            let r = crate::tune::recorded::scenario(p).map_err(|source| JudgeError::Recording {
                path: p.display().to_string(),
                source,
            })?;
            Ok((r.scenario, r.old_kernel))
        }
    }
}

impl ExerciseJudge {
    /// Reads the exercise's workloads.
    pub fn new(exercise: &Exercise) -> Result<ExerciseJudge, JudgeError> {
        let mut paths = vec![exercise.workload.clone()];
        paths.extend(
            exercise
                .held_out_scenarios
                .iter()
                .map(|p| WorkloadPath::Scenario(p.clone())),
        );
        let mut workloads = Vec::new();
        for p in &paths {
            let (scenario, recorded_old) = scenario_of(p)?;
            let most = super::course::MAX_RUN_SECONDS;
            if exercise.duration.is_none() && scenario.length() > most {
                return Err(JudgeError::TooLong {
                    name: scenario.name.clone(),
                    seconds: scenario.length(),
                    most,
                });
            }
            let workload = Workload {
                scenario,
                old_kernel: exercise.old_kernel || recorded_old,
                duration: exercise.duration,
            };
            let facts = workload.facts();
            workloads.push(JudgedWorkload {
                name: workload.scenario.name.clone(),
                workload,
                facts,
            });
        }
        Ok(ExerciseJudge {
            workloads,
            seeds: exercise.seeds.clone(),
        })
    }

    /// The machine the practice run's rules load against.
    pub fn facts(&self) -> &SystemFacts {
        &self.workloads[0].facts
    }

    /// The lint warnings `file` draws on the practice machine, each once.
    pub fn lints(&self, file: &SourceFile) -> Vec<&'static str> {
        let mut codes: Vec<&'static str> = Vec::new();
        for d in load(file, self.facts()).diagnostics {
            if d.severity == Severity::Warning && !codes.contains(&d.code.as_str()) {
                codes.push(d.code.as_str());
            }
        }
        codes
    }

    /// How many held-out runs judging a file takes (every seed of every
    /// workload).
    pub fn runs(&self) -> usize {
        self.workloads.len().saturating_mul(self.seeds.len())
    }

    /// Judges `file` against `exercise`'s goal on every held-out run; the
    /// first refusal ends it.
    pub fn judge(&self, exercise: &Exercise, file: &SourceFile) -> ExerciseVerdict {
        self.judge_each(exercise, file, &mut |_, _| true)
            .unwrap_or_else(|| ExerciseVerdict::failed("judging was stopped"))
    }

    /// [`Self::judge`], telling `ran(done, of)` after each held-out run,
    /// so the screen can show how far judging is while it runs on a
    /// thread of its own; `ran` returning false stops it (None: stopped
    /// before the end, as when the trainee moves on or quits).
    pub fn judge_each(
        &self,
        exercise: &Exercise,
        file: &SourceFile,
        ran: &mut dyn FnMut(usize, usize) -> bool,
    ) -> Option<ExerciseVerdict> {
        let Some(goal) = &exercise.goal else {
            return Some(ExerciseVerdict::failed(
                "this exercise is answered, not solved with rules",
            ));
        };
        let outcome = load(file, self.facts());
        if let Some(r) = outcome.refusal {
            return Some(ExerciseVerdict {
                lints: self.lints(file),
                ..ExerciseVerdict::failed(format!("cpuplugd refuses the file: {}", r.message))
            });
        }
        let terms = outcome.rules.nodes.len();
        if terms > MAX_JUDGED_TERMS {
            return Some(ExerciseVerdict {
                lints: self.lints(file),
                ..ExerciseVerdict::failed(format!(
                    "the rules expand past {MAX_JUDGED_TERMS} terms: {terms}; every held-out \
                     run evaluates them each interval"
                ))
            });
        }
        let total = self.runs();
        let mut runs = Vec::new();
        for held in &self.workloads {
            for &seed in &self.seeds {
                let run = match held.workload.with_seed(seed).report(file, &held.facts) {
                    Ok(report) => {
                        // A run that stopped (cpuplugd exited) fails
                        // whatever the goal says: its report covers the
                        // seconds before the stop, when nothing was unmet
                        // yet.
                        let mut checks = goal.check(&report);
                        let ran_through = report.fatal.is_none();
                        if !ran_through {
                            // Said once: a goal's own "not stopped" is this.
                            checks.retain(|c| c.field != Some("stopped") || c.met);
                            checks.insert(
                                0,
                                ClauseCheck {
                                    clause: STOPPED_CLAUSE.to_string(),
                                    met: false,
                                    field: None,
                                    value: None,
                                },
                            );
                        }
                        Run {
                            workload: held.name.clone(),
                            seed,
                            met: ran_through && goal.met(&report),
                            checks,
                            report: Some(report),
                        }
                    }
                    Err(why) => {
                        return Some(ExerciseVerdict {
                            lints: self.lints(file),
                            ..ExerciseVerdict::failed(format!(
                                "on {} seed {seed}: {why}",
                                held.name
                            ))
                        });
                    }
                };
                runs.push(run);
                crate::faults::panic_at(crate::faults::Site::Judge, runs.len());
                if !ran(runs.len(), total) {
                    return None;
                }
            }
        }
        Some(ExerciseVerdict {
            passed: runs.iter().all(|r| r.met),
            reason: None,
            runs,
            lints: self.lints(file),
        })
    }
}
