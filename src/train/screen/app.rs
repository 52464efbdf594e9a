//! The training screen's state and the one function that changes it
//! ([`TrainApp::update`]): keys become [`TrainAction`]s, the event loop adds
//! ticks (simulated intervals to run, seconds spent) and saves made by
//! another editor. Drawing only reads this state ([`super::draw`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::workspace::{WorkingCopy, write_answer};
use crate::rules::{RuleKind, RuleSet, Severity, SourceFile, SystemFacts, load};
use crate::sim::run::{SimOptions, SimRun};
use crate::train::course::{Course, Exercise, Kind};
use crate::train::diagnose::{self, Choice};
use crate::train::goal::ClauseCheck;
use crate::train::judge::ExerciseJudge;
use crate::train::progress::CourseProgress;
use crate::tui::layer_keys::{EDITOR_KEYS, EditorAction, LayerBinding, action_in, ctrl, plain};
use crate::tui::whatif::{Field, WhatIfEditor};

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
    /// A key for the editor (while it is open): the main screen's editing
    /// keys ([`crate::tui::whatif::WhatIfEditor::edit`]), the edit checked
    /// at once.
    EditorKey(KeyEvent),
    /// Pasted text for the editor.
    Paste(String),
    /// Scroll the exercise panel by this many rows (negative: up); a
    /// page is the panel's height.
    Scroll(isize),
    /// Scroll the exercise panel by this many pages.
    Page(isize),
    /// How much text the help and the exercise panel hold and show at the
    /// terminal's size now (the event loop measures it with the draw
    /// before each key): how far they scroll.
    Fit(Fit),
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
    /// Open or close the help.
    Help,
    /// News from the judging thread.
    Judge(JudgeNews),
}

/// What the thread judging a submission tells the screen.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgeNews {
    /// This many of the held-out runs are done.
    Ran { done: usize, of: usize },
    /// The verdict: passed or not, the headline and each clause missed.
    Judged(Verdict),
    /// The thread ended without a verdict (it panicked): the submission
    /// is not counted.
    Lost,
}

/// How many rows of wrapped text a scrolling part of the screen holds,
/// and how many it shows at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rows {
    pub total: usize,
    pub shown: usize,
}

impl Rows {
    /// The most rows it can be scrolled past.
    pub fn most(self) -> usize {
        self.total.saturating_sub(self.shown)
    }
}

/// The scrolling parts of the screen at the terminal's size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fit {
    pub exercise: Rows,
    pub help: Rows,
}

/// A judgement as the screen shows it: passed or not, its headline ("met
/// on 1 of 2 held-out runs", or why the file did not run, or the answer's
/// verdict), and each goal clause missed with its value labelled and the
/// run it is from, one line each (wrapped in the exercise panel, never
/// cut).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub passed: bool,
    pub headline: String,
    pub missed: Vec<String>,
}

impl Verdict {
    /// A verdict without clauses (a diagnosis's answer, a file that did
    /// not run).
    pub fn plain(passed: bool, headline: impl Into<String>) -> Verdict {
        Verdict {
            passed,
            headline: headline.into(),
            missed: Vec::new(),
        }
    }
}

/// A submission being judged on a thread of its own, so a long held-out
/// run never freezes the screen: which exercise, how far, and the way to
/// stop it.
pub struct JudgingThread {
    /// The exercise's index and id (the verdict counts for it).
    pub index: usize,
    pub id: String,
    pub done: usize,
    pub of: usize,
    news: Receiver<JudgeNews>,
    stop: Arc<AtomicBool>,
}

impl JudgingThread {
    /// Asks the thread to stop after the run it is in (its news is then
    /// dropped with the receiver).
    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The keys of an exercise that asks for rules, outside the editor and
/// the help: the action each stands for and how the help writes it. These
/// tables make both the dispatch and the `?` help (the first row that
/// matches wins).
const RULES_KEYS: &[LayerBinding<TrainAction>] = &[
    LayerBinding {
        action: TrainAction::Edit,
        keys: &[plain(KeyCode::Char('e')), plain(KeyCode::Enter)],
        shown: "e Enter",
        description: "edit the rules in the what-if editor",
    },
    LayerBinding {
        action: TrainAction::Submit,
        keys: &[plain(KeyCode::Char('s'))],
        shown: "s",
        description: "submit: judge the rules on the held-out runs",
    },
    LayerBinding {
        action: TrainAction::Pause,
        keys: &[plain(KeyCode::Char(' '))],
        shown: "space",
        description: "pause or run the practice run",
    },
    LayerBinding {
        action: TrainAction::Faster,
        keys: &[plain(KeyCode::Char('+')), plain(KeyCode::Char('='))],
        shown: "+",
        description: "faster: 1×, 10×, 100×, 1000×, max",
    },
    LayerBinding {
        action: TrainAction::Slower,
        keys: &[plain(KeyCode::Char('-'))],
        shown: "-",
        description: "slower",
    },
    LayerBinding {
        action: TrainAction::Restart,
        keys: &[plain(KeyCode::Char('r'))],
        shown: "r",
        description: "the practice run from the start",
    },
    LayerBinding {
        action: TrainAction::Scroll(-1),
        keys: &[plain(KeyCode::Up)],
        shown: "↑",
        description: "scroll the exercise panel up a line",
    },
    LayerBinding {
        action: TrainAction::Scroll(1),
        keys: &[plain(KeyCode::Down)],
        shown: "↓",
        description: "scroll the exercise panel down a line",
    },
];

/// The keys of a diagnosis.
const DIAGNOSIS_KEYS: &[LayerBinding<TrainAction>] = &[
    LayerBinding {
        action: TrainAction::Choose(-1),
        keys: &[plain(KeyCode::Up)],
        shown: "↑",
        description: "point at the comparison above",
    },
    LayerBinding {
        action: TrainAction::Choose(1),
        keys: &[plain(KeyCode::Down)],
        shown: "↓",
        description: "point at the comparison below",
    },
    LayerBinding {
        action: TrainAction::Submit,
        keys: &[plain(KeyCode::Enter), plain(KeyCode::Char('s'))],
        shown: "Enter s",
        description: "answer: this comparison is the culprit",
    },
];

/// The keys of every exercise, after its own kind's.
const SHARED_KEYS: &[LayerBinding<TrainAction>] = &[
    LayerBinding {
        action: TrainAction::Page(-1),
        keys: &[plain(KeyCode::PageUp)],
        shown: "PgUp",
        description: "scroll the exercise panel up a page",
    },
    LayerBinding {
        action: TrainAction::Page(1),
        keys: &[plain(KeyCode::PageDown)],
        shown: "PgDn",
        description: "scroll the exercise panel down a page (the result, hints, brief)",
    },
    LayerBinding {
        action: TrainAction::Next,
        keys: &[plain(KeyCode::Char('n'))],
        shown: "n",
        description: "the next exercise",
    },
    LayerBinding {
        action: TrainAction::Previous,
        keys: &[plain(KeyCode::Char('p'))],
        shown: "p",
        description: "the previous exercise",
    },
    LayerBinding {
        action: TrainAction::Help,
        keys: &[plain(KeyCode::Char('?'))],
        shown: "?",
        description: "this help (? or Esc closes it)",
    },
    LayerBinding {
        action: TrainAction::Quit,
        keys: &[plain(KeyCode::Char('q')), ctrl('c')],
        shown: "q Ctrl-C",
        description: "quit (progress is kept)",
    },
];

/// The screen's keys valid in an exercise of `kind`, in the order the
/// help lists them and the dispatch tries them.
pub fn keys_for(kind: Kind) -> impl Iterator<Item = &'static LayerBinding<TrainAction>> {
    let own = match kind {
        Kind::Rules => RULES_KEYS,
        Kind::Diagnosis => DIAGNOSIS_KEYS,
    };
    own.iter().chain(SHARED_KEYS)
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
    /// The start file's bytes (a copy still holding them is untouched).
    pub start: Vec<u8>,
    pub file: SourceFile,
    /// The rules when cpuplugd takes them, else plugtop's first error
    /// (`line:column: message`, sharper than cpuplugd's own words).
    pub rules: Result<Arc<RuleSet>, String>,
    /// The rules as plugtop read them, taken or refused: the what-if
    /// editor opens on them, so a refused file is fixed on the screen.
    pub parsed: Arc<RuleSet>,
    /// The line of that first error, where the editor opens.
    pub refused_at: Option<usize>,
    pub facts: SystemFacts,
    pub judge: Option<ExerciseJudge>,
    pub practice: Option<Practice>,
    pub paused: bool,
    pub editor: Option<WhatIfEditor>,
    /// A diagnosis: the comparisons to point at, the selected one (none
    /// at first, so that Enter alone never answers), and the Flips view's
    /// lines of the recording.
    pub choices: Vec<Choice>,
    pub selected: Option<usize>,
    pub flips: Vec<String>,
    /// The last judgement.
    pub verdict: Option<Verdict>,
    /// How many rows of the exercise panel are scrolled past (the draw
    /// keeps it within the panel's text).
    pub scroll: usize,
}

impl Current {
    /// Exercise `index` before its working copy is read: no rules, no run.
    fn empty(index: usize) -> Self {
        let facts = SystemFacts::any_machine(1, "no machine yet");
        let none = SourceFile::new("", Vec::new());
        let parsed = Arc::new(load(&none, &facts).rules);
        Current {
            index,
            copy: None,
            start: Vec::new(),
            file: none,
            rules: Err(String::new()),
            parsed,
            refused_at: None,
            facts,
            judge: None,
            practice: None,
            paused: false,
            editor: None,
            choices: Vec::new(),
            selected: None,
            flips: Vec::new(),
            verdict: None,
            scroll: 0,
        }
    }
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
    /// The `?` help is open (over the screen), and how many of its rows
    /// are scrolled past.
    pub help: bool,
    pub help_scroll: usize,
    /// A submission being judged, off the screen's thread.
    pub judging: Option<JudgingThread>,
    /// How far the help and the exercise panel scroll at the terminal's
    /// size (the event loop tells it).
    pub fit: Fit,
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
            current: Current::empty(index),
            course,
            progress,
            progress_path,
            work_dir,
            speed: 2,
            status: String::new(),
            quit: false,
            mono: false,
            help: false,
            help_scroll: 0,
            judging: None,
            fit: Fit::default(),
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
        self.current = Current::empty(index);
        self.status.clear();
        // A diagnosis has nothing to edit: its answer is what is kept.
        let work_dir = self.work_dir.as_ref().filter(|_| ex.kind == Kind::Rules);
        self.current.start = crate::rules::read_rule_bytes(&ex.start).unwrap_or_default();
        let bytes = match work_dir {
            Some(dir) => match WorkingCopy::open(dir, &ex.id, &ex.start) {
                Ok((copy, bytes)) => {
                    self.current.copy = Some(copy);
                    bytes
                }
                Err(e) => {
                    self.status = format!("working copy: {}", crate::error_chain::text(&e));
                    self.current.start.clone()
                }
            },
            None => self.current.start.clone(),
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
                Err(e) => {
                    self.status =
                        format!("the exercise's workload: {}", crate::error_chain::text(&e))
                }
            },
            Kind::Diagnosis => {
                if let crate::train::course::WorkloadPath::Recording(p) = &ex.workload {
                    match diagnose::recording_facts(p) {
                        Ok(f) => self.current.facts = f,
                        Err(e) => {
                            self.status = format!("the recording: {}", crate::error_chain::text(&e))
                        }
                    }
                    let file = SourceFile::new(name.clone(), bytes.clone());
                    match diagnose::change_lines(p, &file, 40) {
                        Ok(lines) => self.current.flips = lines,
                        Err(e) => {
                            self.status = format!("the recording: {}", crate::error_chain::text(&e))
                        }
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
        let first = outcome
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error && !d.span.is_file())
            .map(|d| (file.position(d.span.start as usize), &d.message));
        self.current.refused_at = first.as_ref().map(|(p, _)| p.line);
        let refused = outcome.refusal.as_ref().map(|r| match &first {
            Some((p, message)) => format!("{}:{}: {message}", p.line, p.column),
            None => r.message.clone(),
        });
        let parsed = Arc::new(outcome.rules);
        self.current.rules = match refused {
            Some(why) => Err(why),
            None => Ok(Arc::clone(&parsed)),
        };
        self.current.parsed = parsed;
        if let Ok(rules) = &self.current.rules {
            self.current.choices = diagnose::choices(rules, &file);
            let n = self.current.choices.len();
            self.current.selected = self.current.selected.filter(|i| *i < n);
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
            Err(e) => self.status = format!("cannot run: {}", crate::error_chain::text(&e)),
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
            self.status = format!("progress not kept: {}", crate::error_chain::text(&e));
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
            // The main screen's editor keys: Enter, which runs the edit
            // there, applies it here (the practice run is the run).
            return Some(match action_in(EDITOR_KEYS, key) {
                Some(EditorAction::Run) => TrainAction::Apply,
                Some(EditorAction::Close) => TrainAction::Cancel,
                _ => TrainAction::EditorKey(key),
            });
        }
        if self.help {
            // The help closes with `?` or Esc; `q` still quits; ↑↓ PgUp
            // PgDn scroll it; other keys do nothing behind it.
            return match key.code {
                KeyCode::Char('?') | KeyCode::Esc => Some(TrainAction::Help),
                KeyCode::Char('q') => Some(TrainAction::Quit),
                KeyCode::Up => Some(TrainAction::Scroll(-1)),
                KeyCode::Down => Some(TrainAction::Scroll(1)),
                KeyCode::PageUp => Some(TrainAction::Page(-1)),
                KeyCode::PageDown => Some(TrainAction::Page(1)),
                _ => None,
            };
        }
        keys_for(self.exercise().kind)
            .find(|b| b.keys.iter().any(|c| c.matches(key)))
            .map(|b| b.action.clone())
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
                if let Some(j) = self.judging.take() {
                    j.stop();
                }
                self.put_away();
                self.save();
                self.quit = true;
            }
            TrainAction::Next => self.move_by(1),
            TrainAction::Previous => self.move_by(-1),
            TrainAction::Submit => self.submit(),
            TrainAction::Pause => self.current.paused = !self.current.paused,
            TrainAction::Faster => self.speed = (self.speed + 1).min(SPEEDS.len() - 1),
            TrainAction::Slower => self.speed = self.speed.saturating_sub(1),
            TrainAction::Restart => {
                self.current.paused = false;
                self.restart();
            }
            TrainAction::Edit => self.edit(),
            TrainAction::EditorKey(key) => {
                let current = &mut self.current;
                let rules = &current.parsed;
                if let Some(e) = &mut current.editor
                    && e.edit(key, rules, &current.file)
                {
                    let _ = e.check(rules, &current.file, &current.facts);
                }
            }
            TrainAction::Paste(text) => {
                let current = &mut self.current;
                let rules = &current.parsed;
                if let Some(e) = &mut current.editor {
                    e.insert(&text);
                    let _ = e.check(rules, &current.file, &current.facts);
                }
            }
            TrainAction::Scroll(by) => self.scroll_by(by),
            TrainAction::Page(by) => self.page_by(by),
            TrainAction::Fit(fit) => {
                self.fit = fit;
                self.current.scroll = self.current.scroll.min(fit.exercise.most());
                self.help_scroll = self.help_scroll.min(fit.help.most());
            }
            TrainAction::Apply => self.apply(),
            TrainAction::Cancel => self.current.editor = None,
            TrainAction::Choose(by) => {
                let n = self.current.choices.len() as isize;
                if n > 0 {
                    // From none, down is the first and up the last.
                    let from = self
                        .current
                        .selected
                        .map_or(if by > 0 { -1 } else { 0 }, |i| i as isize);
                    self.current.selected = Some((from + by).rem_euclid(n) as usize);
                }
            }
            TrainAction::Run(intervals) => {
                if let Some(p) = &mut self.current.practice {
                    for _ in 0..intervals {
                        match p.run.step(&mut |_| {}) {
                            Ok(true) => {}
                            Ok(false) => break,
                            Err(e) => {
                                self.status = format!("the run: {}", crate::error_chain::text(&e));
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
            TrainAction::Help => {
                self.help = !self.help;
                self.help_scroll = 0;
            }
            TrainAction::Judge(news) => self.judged(news),
        }
    }

    /// Opens the what-if editor on the rules as plugtop read them: a file
    /// cpuplugd refuses opens at the field holding plugtop's first error,
    /// which the check then shows with its caret.
    fn edit(&mut self) {
        let current = &mut self.current;
        let (rules, file) = (&current.parsed, &current.file);
        let mut editor = WhatIfEditor::open(rules, file, RuleKind::Hotplug);
        if let Some(line) = current.refused_at {
            for _ in 0..Field::all(rules).len() {
                if editor.field().line(rules, file) == Some(line) {
                    break;
                }
                editor.step_field(rules, file, 1);
            }
        }
        let _ = editor.check(rules, file, &current.facts);
        current.editor = Some(editor);
    }

    /// Scrolls by `by` pages: a page is what shows at once but a row, which
    /// stays in sight so the eye keeps its place.
    fn page_by(&mut self, by: isize) {
        let rows = if self.help {
            self.fit.help
        } else {
            self.fit.exercise
        };
        let page = rows.shown.saturating_sub(1).max(1);
        self.scroll_by(by.saturating_mul(page as isize));
    }

    /// Scrolls the help when it is open, else the exercise panel, by `by`
    /// rows, within its text.
    fn scroll_by(&mut self, by: isize) {
        let (scroll, rows) = if self.help {
            (&mut self.help_scroll, self.fit.help)
        } else {
            (&mut self.current.scroll, self.fit.exercise)
        };
        *scroll = scroll.saturating_add_signed(by).min(rows.most());
    }

    /// Opens the exercise `by` after (or before) the one shown. Moving on
    /// stops a judging under way: the submission is not counted (submit
    /// again to have it judged).
    fn move_by(&mut self, by: isize) {
        if let Some(j) = self.judging.take() {
            j.stop();
        }
        let n = self.course.exercises.len().max(1) as isize;
        let to = (self.current.index as isize + by).rem_euclid(n) as usize;
        self.put_away();
        self.save();
        self.open(to);
    }

    /// Leaving the exercise shown: its working copy is put away when the
    /// trainee neither changed nor submitted it, so that the working
    /// directory holds only work done (what `train grade` reads).
    fn put_away(&mut self) {
        let id = &self.course.exercises[self.current.index].id;
        let submitted = self
            .progress
            .exercises
            .get(id)
            .is_some_and(|p| p.attempts > 0);
        if let Some(copy) = &self.current.copy
            && !submitted
            && let Err(e) = copy.put_away_untouched(&self.current.start)
        {
            self.status = format!("working copy: {}", crate::error_chain::text(&e));
        }
    }

    /// The news the judging thread has sent since the last look, without
    /// waiting (the event loop makes each an action).
    pub fn judge_news(&self) -> Vec<JudgeNews> {
        let mut out = Vec::new();
        if let Some(j) = &self.judging {
            loop {
                match j.news.try_recv() {
                    Ok(n) => out.push(n),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        // A thread that ended without its verdict.
                        if !out.iter().any(|n| matches!(n, JudgeNews::Judged { .. })) {
                            out.push(JudgeNews::Lost);
                        }
                        break;
                    }
                }
            }
        }
        out
    }

    /// Waits up to `timeout` for the judging thread's next news (for
    /// tests and a loop with nothing else to do; the screen's loop never
    /// waits on it).
    pub fn wait_judge_news(&self, timeout: std::time::Duration) -> Option<JudgeNews> {
        let j = self.judging.as_ref()?;
        match j.news.recv_timeout(timeout) {
            Ok(n) => Some(n),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => Some(JudgeNews::Lost),
        }
    }

    /// Takes the judging thread's news.
    fn judged(&mut self, news: JudgeNews) {
        let Some(j) = &mut self.judging else {
            return;
        };
        match news {
            JudgeNews::Ran { done, of } => {
                j.done = done;
                j.of = of;
            }
            JudgeNews::Lost => {
                self.judging = None;
                self.status =
                    "judging stopped without a verdict (an internal error); submit again".into();
            }
            JudgeNews::Judged(verdict) => {
                let (index, id) = (j.index, j.id.clone());
                self.judging = None;
                self.count(index, &id, verdict);
            }
        }
    }

    /// Counts an attempt at exercise `index` (`id`) and shows its verdict
    /// at the top of the exercise panel.
    fn count(&mut self, index: usize, id: &str, verdict: Verdict) {
        let passed = verdict.passed;
        let time_limit = self.course.exercises.get(index).and_then(|e| e.time_limit);
        let p = self.progress.of(id);
        p.attempts = p.attempts.saturating_add(1);
        if passed && !p.solved {
            p.late = time_limit.is_some_and(|limit| p.seconds > limit);
        }
        p.solved |= passed;
        if self.current.index == index {
            self.current.verdict = Some(verdict);
            self.current.scroll = 0;
            // The verdict is the news now (the status line shows it).
            self.status.clear();
        }
        self.save();
    }

    /// Applies the editor's edit: written to the working copy, loaded,
    /// run again; or, when cpuplugd would refuse it, the editor stays open
    /// with the error.
    fn apply(&mut self) {
        let rules = &self.current.parsed;
        let Some(editor) = &mut self.current.editor else {
            return;
        };
        // The file the editor holds: the edited fields, or a whole rule
        // file named (Ctrl-O), as cpuplugd would load it.
        let Some((_, edited)) = editor.check(rules, &self.current.file, &self.current.facts) else {
            return;
        };
        let bytes = edited.bytes().to_vec();
        // A working copy that cannot be written (replaced by a link, its
        // directory gone) must be said, not hidden under "applied": the
        // trainee would lose the edit on leaving.
        let unsaved = match &mut self.current.copy {
            Some(copy) => copy.write(&bytes).err(),
            None => None,
        };
        self.current.editor = None;
        let name = self.current.file.name().to_string();
        self.load(SourceFile::new(name, bytes));
        self.status = match unsaved {
            Some(e) => format!(
                "applied here but not saved to the working copy: {}",
                crate::error_chain::text(&e)
            ),
            None => "applied; the practice run starts again".into(),
        };
    }

    /// Judges the rules on the held-out seeds (on a thread of its own: the
    /// verdict comes back as [`TrainAction::Judge`]), or the diagnosis's
    /// answer (at once).
    fn submit(&mut self) {
        let ex = self.exercise().clone();
        let index = self.current.index;
        match ex.kind {
            Kind::Rules => {
                if self.judging.is_some() {
                    self.status = "still judging the last submission".into();
                    return;
                }
                match &self.current.judge {
                    Some(judge) => self.start_judging(judge.clone(), ex),
                    None => self.count(
                        index,
                        &ex.id,
                        Verdict::plain(false, "the exercise's workload could not be read"),
                    ),
                }
            }
            Kind::Diagnosis => {
                let Some(selected) = self.current.selected else {
                    // Not an attempt: nothing was pointed at yet.
                    self.status = "choose a comparison with ↑↓ first, then Enter".into();
                    return;
                };
                let chosen = self.current.choices.get(selected);
                let verdict = match (chosen, &ex.answer) {
                    (Some(c), Some(truth)) if c.answers(truth) => {
                        Verdict::plain(true, format!("right: {}", c.line()))
                    }
                    (Some(c), _) => Verdict::plain(false, format!("not {}", c.line())),
                    (None, _) => Verdict::plain(false, "nothing to point at"),
                };
                // The answer is kept where `train grade` reads it.
                let kept = match (chosen, &self.work_dir) {
                    (Some(c), Some(dir)) => Some(write_answer(dir, &ex.id, &c.line()).map(drop)),
                    _ => None,
                };
                self.count(index, &ex.id, verdict);
                // Saved, the verdict is the news (the help names the file).
                if let Some(Err(e)) = kept {
                    self.status = format!("answer not saved: {}", crate::error_chain::text(&e));
                }
            }
        }
    }

    /// Starts judging the rules shown on a thread of its own, which tells
    /// how far it is after each held-out run and stops when asked.
    fn start_judging(&mut self, judge: ExerciseJudge, ex: Exercise) {
        let file = self.current.file.clone();
        let (send, news) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let of = judge.runs();
        let spawned = std::thread::Builder::new()
            .name("train-judge".into())
            .spawn(move || {
                let verdict = judge.judge_each(&ex, &file, &mut |done, of| {
                    // A screen gone (the receiver dropped) stops it too.
                    send.send(JudgeNews::Ran { done, of }).is_ok()
                        && !stopped.load(Ordering::Relaxed)
                });
                if let Some(v) = verdict {
                    let _ = send.send(JudgeNews::Judged(Verdict {
                        passed: v.passed,
                        headline: v.headline(),
                        missed: v.missed_lines(),
                    }));
                }
            });
        match spawned {
            Ok(_) => {
                self.current.verdict = None;
                self.judging = Some(JudgingThread {
                    index: self.current.index,
                    id: self.exercise().id.clone(),
                    done: 0,
                    of,
                    news,
                    stop,
                });
            }
            Err(e) => self.status = format!("cannot judge: {e}"),
        }
    }

    /// Whether the exercise shown is solved.
    pub fn solved(&self) -> bool {
        self.progress
            .exercises
            .get(&self.exercise().id)
            .is_some_and(|p| p.solved)
    }
}
