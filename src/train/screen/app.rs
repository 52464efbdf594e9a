//! The training screen's state and the one function that changes it
//! ([`TrainApp::update`]): keys become [`TrainAction`]s, the event loop adds
//! ticks (simulated intervals to run, seconds spent) and saves made by
//! another editor. Drawing only reads this state ([`super::draw`]).

use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::workspace::WorkingCopy;
use crate::rules::{RuleKind, RuleSet, SourceFile, SystemFacts, load};
use crate::sim::run::{SimOptions, SimRun};
use crate::train::course::{Course, Exercise, Kind};
use crate::train::diagnose::{self, Choice};
use crate::train::goal::ClauseCheck;
use crate::train::judge::ExerciseJudge;
use crate::train::progress::CourseProgress;
use crate::tui::whatif::WhatIfEditor;

/// Simulated seconds per real second, slowest first; 0 is as fast as the
/// machine can.
pub const SPEEDS: [f64; 5] = [1.0, 10.0, 100.0, 1000.0, 0.0];

/// What the trainee or the event loop asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum TrainAction {
    Quit,
    Next,
    Previous,
    /// Judge the rules on the held-out seeds (a rules exercise), or
    /// answer with the selected comparison (a diagnosis).
    Submit,
    /// Run or pause the practice run.
    Pause,
    Faster,
    Slower,
    /// The practice run from the start again.
    Restart,
    /// Open the what-if editor on the rules.
    Edit,
    /// A key for the editor (while it is open).
    EditorKey(KeyEvent),
    /// Pasted text for the editor.
    Paste(String),
    /// Next or previous field in the editor.
    Field(isize),
    /// Apply the editor's edit: save the working copy and run again.
    Apply,
    /// Close the editor without applying.
    Cancel,
    /// Move the diagnosis's selection.
    Choose(isize),
    /// Run up to this many simulated intervals (the loop paces them).
    Run(usize),
    /// Seconds spent in the exercise since the last tick.
    Spent(f64),
    /// The working copy was saved by another editor: its bytes.
    Saved(Vec<u8>),
}

/// The practice run on the screen: the exercise's workload with its own
/// seed, under the trainee's current rules.
pub struct Practice {
    pub run: SimRun,
    /// Its length, simulated seconds.
    pub length: f64,
    /// The goal's clauses checked against the report so far.
    pub checks: Vec<ClauseCheck>,
    /// Figures of the report so far, for the score panel.
    pub figures: Vec<(&'static str, String)>,
}

/// What the trainee is working on in the exercise shown.
pub struct Current {
    pub index: usize,
    /// The working copy and its rules (the file, and the rules when
    /// cpuplugd takes them, else why not).
    pub copy: Option<WorkingCopy>,
    pub file: SourceFile,
    pub rules: Result<Arc<RuleSet>, String>,
    pub facts: SystemFacts,
    pub judge: Option<ExerciseJudge>,
    pub practice: Option<Practice>,
    pub paused: bool,
    pub editor: Option<WhatIfEditor>,
    /// A diagnosis: the comparisons to point at, the selected one, and the
    /// Flips view's lines of the recording.
    pub choices: Vec<Choice>,
    pub selected: usize,
    pub flips: Vec<String>,
    /// The last judgement, in one line, and whether it passed.
    pub verdict: Option<(bool, String)>,
}

/// The screen's whole state.
pub struct TrainApp {
    pub course: Course,
    pub progress: CourseProgress,
    /// Where progress is kept (None: not kept, in tests without a state
    /// directory).
    pub progress_path: Option<PathBuf>,
    /// Where the working copies are.
    pub work_dir: Option<PathBuf>,
    pub current: Current,
    pub speed: usize,
    /// A message for the status line.
    pub status: String,
    pub quit: bool,
    pub mono: bool,
}

fn figures(r: &crate::sim::report::SimReport) -> Vec<(&'static str, String)> {
    vec![
        ("unmet CPU-s", format!("{:.1}", r.unmet_cpu_seconds)),
        ("CPUs online", format!("{:.2}", r.avg_online_cpus)),
        (
            "guest/working set",
            format!("{:.2}", r.guest_to_working_set),
        ),
        ("throughput", format!("{:.1}%", r.throughput_ratio * 100.0)),
        (
            "changes cpu/pool",
            format!("{}/{}", r.cpu_changes, r.pool_changes),
        ),
        ("reversals", r.reversals.to_string()),
    ]
}

impl TrainApp {
    /// The screen on `course`, at exercise `start_at` (else the first not
    /// solved), with `progress` kept at `progress_path` and working copies
    /// under `work_dir` (neither: in memory only).
    pub fn new(
        course: Course,
        progress: CourseProgress,
        progress_path: Option<PathBuf>,
        work_dir: Option<PathBuf>,
        start_at: Option<&str>,
    ) -> TrainApp {
        let index = start_at
            .and_then(|id| course.exercises.iter().position(|e| e.id == id))
            .or_else(|| {
                course
                    .exercises
                    .iter()
                    .position(|e| !progress.exercises.get(&e.id).is_some_and(|p| p.solved))
            })
            .unwrap_or(0);
        let mut app = TrainApp {
            current: Current {
                index,
                copy: None,
                file: SourceFile::new("", Vec::new()),
                rules: Err(String::new()),
                facts: SystemFacts::any_machine(1, "no machine yet"),
                judge: None,
                practice: None,
                paused: false,
                editor: None,
                choices: Vec::new(),
                selected: 0,
                flips: Vec::new(),
                verdict: None,
            },
            course,
            progress,
            progress_path,
            work_dir,
            speed: 2,
            status: String::new(),
            quit: false,
            mono: false,
        };
        app.open(index);
        app
    }

    /// The exercise shown.
    pub fn exercise(&self) -> &Exercise {
        &self.course.exercises[self.current.index]
    }

    /// Opens exercise `index`: its working copy, its workloads, a fresh
    /// practice run.
    fn open(&mut self, index: usize) {
        let ex = self.course.exercises[index].clone();
        self.current = Current {
            index,
            copy: None,
            file: SourceFile::new("", Vec::new()),
            rules: Err(String::new()),
            facts: SystemFacts::any_machine(1, "no machine yet"),
            judge: None,
            practice: None,
            paused: false,
            editor: None,
            choices: Vec::new(),
            selected: 0,
            flips: Vec::new(),
            verdict: None,
        };
        self.status.clear();
        let bytes = match &self.work_dir {
            Some(dir) => match WorkingCopy::open(dir, &ex.id, &ex.start) {
                Ok((copy, bytes)) => {
                    self.current.copy = Some(copy);
                    bytes
                }
                Err(e) => {
                    self.status = format!("working copy: {e}");
                    crate::rules::read_rule_bytes(&ex.start).unwrap_or_default()
                }
            },
            None => crate::rules::read_rule_bytes(&ex.start).unwrap_or_default(),
        };
        // The start file by its path in the course; the working copy by
        // its whole path (the trainee opens it in their editor).
        let name = self.current.copy.as_ref().map_or_else(
            || {
                ex.start
                    .strip_prefix(&self.course.dir)
                    .unwrap_or(&ex.start)
                    .display()
                    .to_string()
            },
            |c| c.path.display().to_string(),
        );
        match ex.kind {
            Kind::Rules => match ExerciseJudge::new(&ex) {
                Ok(j) => {
                    self.current.facts = j.facts().clone();
                    self.current.judge = Some(j);
                }
                Err(e) => self.status = format!("the exercise's workload: {e}"),
            },
            Kind::Diagnosis => {
                if let crate::train::course::WorkloadPath::Recording(p) = &ex.workload {
                    match diagnose::recording_facts(p) {
                        Ok(f) => self.current.facts = f,
                        Err(e) => self.status = format!("the recording: {e}"),
                    }
                    let file = SourceFile::new(name.clone(), bytes.clone());
                    match diagnose::change_lines(p, &file, 40) {
                        Ok(lines) => self.current.flips = lines,
                        Err(e) => self.status = format!("the recording: {e}"),
                    }
                }
            }
        }
        self.load(SourceFile::new(name, bytes));
    }

    /// Takes `file` as the trainee's rules, and starts the practice run
    /// when cpuplugd takes them.
    fn load(&mut self, file: SourceFile) {
        let outcome = load(&file, &self.current.facts);
        self.current.rules = match outcome.refusal {
            Some(r) => Err(r.message),
            None => Ok(Arc::new(outcome.rules)),
        };
        if let Ok(rules) = &self.current.rules {
            self.current.choices = diagnose::choices(rules, &file);
            self.current.selected = self
                .current
                .selected
                .min(self.current.choices.len().saturating_sub(1));
        }
        self.current.file = file;
        self.restart();
    }

    /// The practice run from the start, when there are rules to run.
    fn restart(&mut self) {
        self.current.practice = None;
        let (Some(judge), Ok(rules)) = (&self.current.judge, &self.current.rules) else {
            return;
        };
        let Some(held) = judge.workloads.first() else {
            return;
        };
        let w = &held.workload;
        let options = SimOptions {
            duration: w.duration,
            old_kernel: w.old_kernel,
            ..SimOptions::default()
        };
        let length = w.duration.unwrap_or_else(|| w.scenario.length());
        match SimRun::start(&w.scenario, Arc::clone(rules), &self.current.file, &options) {
            Ok(run) => {
                self.current.practice = Some(Practice {
                    run,
                    length,
                    checks: Vec::new(),
                    figures: Vec::new(),
                });
                self.score();
            }
            Err(e) => self.status = format!("cannot run: {e}"),
        }
    }

    /// The live score of the practice run.
    fn score(&mut self) {
        let goal = self.course.exercises[self.current.index].goal.clone();
        if let (Some(p), Some(goal)) = (&mut self.current.practice, goal) {
            let report = p.run.report();
            p.checks = goal.check(&report);
            p.figures = figures(&report);
        }
    }

    /// Saves progress when it is kept; a failure goes to the status line.
    fn save(&mut self) {
        if let Some(path) = &self.progress_path
            && let Err(e) = self.progress.save(path)
        {
            self.status = format!("progress not kept: {e}");
        }
    }

    /// Whether the editor is open (keys go to it).
    pub fn editing(&self) -> bool {
        self.current.editor.is_some()
    }

    /// The hints unlocked so far.
    pub fn hints(&self) -> Vec<&str> {
        let p = self
            .progress
            .exercises
            .get(&self.exercise().id)
            .cloned()
            .unwrap_or_default();
        self.exercise()
            .hints
            .iter()
            .filter(|h| h.unlocked(p.failed(), p.seconds))
            .map(|h| h.text.as_str())
            .collect()
    }

    /// The action a key stands for here.
    pub fn action_for(&self, key: KeyEvent) -> Option<TrainAction> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Some(TrainAction::Quit);
        }
        if self.editing() {
            return Some(match key.code {
                KeyCode::Enter => TrainAction::Apply,
                KeyCode::Esc => TrainAction::Cancel,
                KeyCode::Tab => TrainAction::Field(1),
                KeyCode::BackTab => TrainAction::Field(-1),
                _ => TrainAction::EditorKey(key),
            });
        }
        let diagnosis = self.exercise().kind == Kind::Diagnosis;
        Some(match key.code {
            KeyCode::Char('q') => TrainAction::Quit,
            KeyCode::Char('n') | KeyCode::PageDown => TrainAction::Next,
            KeyCode::Char('p') | KeyCode::PageUp => TrainAction::Previous,
            KeyCode::Char('s') => TrainAction::Submit,
            KeyCode::Enter if diagnosis => TrainAction::Submit,
            KeyCode::Up if diagnosis => TrainAction::Choose(-1),
            KeyCode::Down if diagnosis => TrainAction::Choose(1),
            KeyCode::Char(' ') => TrainAction::Pause,
            KeyCode::Char('+') | KeyCode::Char('=') => TrainAction::Faster,
            KeyCode::Char('-') => TrainAction::Slower,
            KeyCode::Char('r') => TrainAction::Restart,
            KeyCode::Char('e') | KeyCode::Enter if !diagnosis => TrainAction::Edit,
            _ => return None,
        })
    }

    /// Simulated seconds per real second now (0: as fast as it can).
    pub fn speed(&self) -> f64 {
        SPEEDS[self.speed.min(SPEEDS.len() - 1)]
    }

    /// Whether the practice run wants intervals run.
    pub fn running(&self) -> bool {
        !self.current.paused
            && self
                .current
                .practice
                .as_ref()
                .is_some_and(|p| !p.run.ended())
    }

    /// The one place the state changes.
    pub fn update(&mut self, action: TrainAction) {
        match action {
            TrainAction::Quit => {
                self.save();
                self.quit = true;
            }
            TrainAction::Next | TrainAction::Previous => {
                let n = self.course.exercises.len();
                let to = if action == TrainAction::Next {
                    (self.current.index + 1) % n
                } else {
                    (self.current.index + n - 1) % n
                };
                self.save();
                self.open(to);
            }
            TrainAction::Submit => self.submit(),
            TrainAction::Pause => self.current.paused = !self.current.paused,
            TrainAction::Faster => self.speed = (self.speed + 1).min(SPEEDS.len() - 1),
            TrainAction::Slower => self.speed = self.speed.saturating_sub(1),
            TrainAction::Restart => {
                self.current.paused = false;
                self.restart();
            }
            TrainAction::Edit => {
                if let Ok(rules) = &self.current.rules {
                    self.current.editor = Some(WhatIfEditor::open(
                        rules,
                        &self.current.file,
                        RuleKind::Hotplug,
                    ));
                } else {
                    self.status =
                        "cpuplugd refuses the file: fix it in your editor (the path is above)"
                            .into();
                }
            }
            TrainAction::EditorKey(key) => {
                if let Some(e) = &mut self.current.editor {
                    e.key(key);
                }
            }
            TrainAction::Paste(text) => {
                if let Some(e) = &mut self.current.editor {
                    e.insert(&text);
                }
            }
            TrainAction::Field(by) => {
                if let (Some(e), Ok(rules)) = (&mut self.current.editor, &self.current.rules) {
                    e.step_field(rules, &self.current.file, by);
                }
            }
            TrainAction::Apply => self.apply(),
            TrainAction::Cancel => self.current.editor = None,
            TrainAction::Choose(by) => {
                let n = self.current.choices.len() as isize;
                if n > 0 {
                    self.current.selected =
                        (self.current.selected as isize + by).rem_euclid(n) as usize;
                }
            }
            TrainAction::Run(intervals) => {
                if let Some(p) = &mut self.current.practice {
                    for _ in 0..intervals {
                        match p.run.step(&mut |_| {}) {
                            Ok(true) => {}
                            Ok(false) => break,
                            Err(e) => {
                                self.status = format!("the run: {e}");
                                break;
                            }
                        }
                    }
                }
                self.score();
            }
            TrainAction::Spent(seconds) => {
                let id = self.exercise().id.clone();
                let p = self.progress.of(&id);
                if !p.solved {
                    p.seconds += seconds.max(0.0);
                }
            }
            TrainAction::Saved(bytes) => {
                let name = self.current.file.name().to_string();
                self.current.editor = None;
                self.load(SourceFile::new(name, bytes));
                self.status = "reloaded the rules saved in your editor".into();
            }
        }
    }

    /// Applies the editor's edit: written to the working copy, loaded,
    /// run again; or, when cpuplugd would refuse it, the editor stays open
    /// with the error.
    fn apply(&mut self) {
        let (Some(editor), Ok(rules)) = (&mut self.current.editor, &self.current.rules) else {
            return;
        };
        let rules = Arc::clone(rules);
        if editor
            .check(&rules, &self.current.file, &self.current.facts)
            .is_none()
        {
            return;
        }
        let (edited, _) = editor.edited_file(&rules, &self.current.file);
        let bytes = edited.bytes().to_vec();
        if let Some(copy) = &mut self.current.copy
            && let Err(e) = copy.write(&bytes)
        {
            self.status = format!("not saved: {e}");
        }
        self.current.editor = None;
        let name = self.current.file.name().to_string();
        self.load(SourceFile::new(name, bytes));
        self.status = "applied; the practice run starts again".into();
    }

    /// Judges the rules on the held-out seeds, or the diagnosis's answer.
    fn submit(&mut self) {
        let ex = self.exercise().clone();
        let (passed, summary) = match ex.kind {
            Kind::Rules => match &self.current.judge {
                Some(judge) => {
                    let v = judge.judge(&ex, &self.current.file);
                    (v.passed, v.summary())
                }
                None => (false, "the exercise's workload could not be read".into()),
            },
            Kind::Diagnosis => {
                match (self.current.choices.get(self.current.selected), &ex.answer) {
                    (Some(c), Some(truth)) if c.answers(truth) => {
                        (true, format!("right: {}", c.line()))
                    }
                    (Some(c), _) => (false, format!("not {}", c.line())),
                    (None, _) => (false, "nothing to point at".into()),
                }
            }
        };
        let p = self.progress.of(&ex.id);
        p.attempts = p.attempts.saturating_add(1);
        if passed && !p.solved {
            p.late = ex.time_limit.is_some_and(|limit| p.seconds > limit);
        }
        p.solved |= passed;
        self.current.verdict = Some((passed, summary));
        self.save();
    }

    /// Whether the exercise shown is solved.
    pub fn solved(&self) -> bool {
        self.progress
            .exercises
            .get(&self.exercise().id)
            .is_some_and(|p| p.solved)
    }
}
