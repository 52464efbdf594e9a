//! Everything the screen shows, as plain state. Samples come in through
//! [`App::ingest`], keys become [`KeyAction`]s handled by [`App::update`], and
//! drawing (`view`) only reads this. Nothing here touches the terminal.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use super::keys::KeyAction;
use crate::control::controller::{Action, Event, Mode};
use crate::control::flap::{FlapConfig, Moves};
use crate::control::log_entries::{self, LineKind};
use crate::control::patterns::Hint;
use crate::control::session::{Session, Step};
use crate::engine::Decision;
use crate::history::History;
use crate::kernel::actuator::{Actuator, NoWrites};
use crate::kernel::deltas::{CpuLoad, cpu_loads};
use crate::kernel::{Sample, Stamp};
use crate::report::trace;
use crate::rules::eval::Trace;
use crate::rules::{NodeId, RuleKind, RuleSet, SourceFile, SystemFacts};
use crate::sim::Scenario;
use crate::tui::line_input::{LineInput, one_line};
use crate::tui::whatif::{Past, WhatIfEditor};

/// How many intervals the screens can go back to.
pub const FRAMES: usize = 600;
/// The most /proc text the kept intervals may hold together. A kernel's
/// meminfo and vmstat are a few kilobytes, so 600 intervals hold about
/// 3 MB; files of megabytes (a damaged or hostile root) shorten the
/// history instead of growing memory by hundreds of times their size.
pub const FRAME_BYTES: u64 = 32 << 20;

/// One interval as the screens show it.
#[derive(Debug, Clone)]
pub struct Interval {
    pub number: usize,
    pub sample: Arc<Sample>,
    pub decision: Option<Decision>,
    pub trace: Trace,
    pub loads: Vec<CpuLoad>,
    /// Each user variable some rule names, with its value this interval.
    pub variables: Vec<(String, Option<f64>)>,
    /// What was really done to the guest this interval (nothing in observe
    /// mode, an approval's actions in step-confirm).
    pub applied: Moves,
}

/// What kind of line the log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Decision,
    Action,
    Problem,
    Note,
}

/// One log line; the same line said again in a row is counted, not
/// repeated (observe mode says "would unplug cpu3" every interval).
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub stamp: Stamp,
    pub kind: LogKind,
    pub text: String,
    /// How many times in a row it was said (1 for once).
    pub times: u32,
    /// When it was last said.
    pub last: Stamp,
}

impl LogLine {
    /// The text with its repeat count, as shown and exported.
    pub fn shown(&self) -> String {
        if self.times > 1 {
            format!(
                "{} ×{} (last {})",
                self.text,
                self.times,
                crate::report::time_of_day(self.last)
            )
        } else {
            self.text.clone()
        }
    }
}

/// The views `Tab` cycles through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Overview,
    Rules,
    Graphs,
    /// Why the decisions changed: flapping, flips, feedback loops.
    Flips,
    Log,
}

impl View {
    /// In `Tab` order.
    pub const ALL: [View; 5] = [
        View::Overview,
        View::Rules,
        View::Graphs,
        View::Flips,
        View::Log,
    ];

    /// The name on the tab.
    pub fn title(self) -> &'static str {
        match self {
            View::Overview => "Overview",
            View::Rules => "Rules",
            View::Graphs => "Graphs",
            View::Flips => "Flips",
            View::Log => "Log",
        }
    }
}

/// What arming a live guest will take and give back, shown before it
/// happens so nobody changes a machine by habit (htop's `s` is strace).
#[derive(Debug, Clone, PartialEq)]
pub struct ArmInfo {
    /// The mode asked for.
    pub mode: Mode,
    pub host: String,
    pub architecture: String,
    /// "z/VM guest LINUX01", "s390x, not a z/VM guest (LPAR)", "not a z/VM guest".
    pub guest: String,
    pub root: String,
    pub lock: String,
    pub journal: String,
    /// What quitting puts back: the online CPUs and the pool.
    pub restore_to: String,
}

/// A question on top of the screen.
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    /// Switching to autonomous mode needs a yes.
    ConfirmAuto,
    /// Taking the lock and journaling a live guest needs a yes; the front
    /// end arms on `y`.
    Arm(ArmInfo),
    /// Something the user must read (e.g. why a mode is not possible).
    Message(String),
}

/// Where samples come from, for the header.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceLabel {
    Live(String),
    Replay {
        file: String,
        speed: f64,
    },
    /// The simulator, playing the named scenario.
    Sim {
        scenario: String,
        speed: f64,
    },
}

/// The whole UI state.
pub struct App {
    pub source: SourceLabel,
    pub host: String,
    /// What the live machine is: "z/VM LINUX01", or "not a z/VM guest"
    /// (recordings and the simulator leave it out).
    pub guest: Option<String>,
    pub kernel: String,
    /// The control loop: rules, engine, watch and controller.
    pub session: Session,
    pub frames: VecDeque<Interval>,
    /// `None` follows the newest interval; `Some(k)` shows the k-th newest.
    pub cursor: Option<usize>,
    pub paused: bool,
    /// `Esc` on a proposal: its box is hidden (a badge stays) until the
    /// proposal changes or the user answers.
    pub proposal_hidden: bool,
    /// Set once the lock is held and the journal written; `None` when the
    /// guest cannot be written (replay, read-only root).
    pub actuator: Option<Box<dyn Actuator + Send>>,
    /// What acts while [`App::actuator`] is `None`: it writes nothing, and
    /// on a live root it still names the CPU a change would take.
    pub observer: NoWrites,
    /// Why acting is not possible, when it is not.
    pub cannot_act: Option<String>,
    pub log: VecDeque<LogLine>,
    pub log_scroll: usize,
    pub flips_scroll: usize,
    pub view: View,
    pub rule: RuleKind,
    pub expanded: HashSet<NodeId>,
    pub tree_scroll: usize,
    pub cpu_scroll: usize,
    /// CPU rows one PgDn moves by: what the CPU table shows on this screen
    /// ([`super::view::cpu_page`]), so paging never skips a CPU.
    pub cpu_page: usize,
    /// The terminal's size, as the screen thread last saw it (for clicks).
    pub screen_size: (u16, u16),
    /// Mouse reporting wanted (`m` turns it off so text can be selected).
    pub mouse: bool,
    /// Where the source stands ([`crate::kernel::source::Source::status`]):
    /// the simulator's phase, or that its scenario ended.
    pub source_status: Option<String>,
    pub help: bool,
    pub dialog: Option<Dialog>,
    pub history: History,
    pub pinned: Vec<String>,
    pub value_cursor: usize,
    pub color: bool,
    /// plugtop's own CPU use, percent of one CPU.
    pub own_cpu: Option<f64>,
    pub quit: bool,
    /// The what-if editor, while open (keys go to it).
    pub whatif: Option<WhatIfEditor>,
    /// The Log view's search (`/`): lines containing this text, any case.
    pub log_filter: Option<String>,
    /// The search text is being typed (keys go to it).
    pub log_filter_editing: bool,
    /// The CPU row clicked last: highlighted, and `p` pins its busy share
    /// until the value cursor moves again.
    pub selected_cpu: Option<u32>,
    /// A tune of the loaded rules (`T` on the simulator), and whether its
    /// box is shown.
    pub tune: Option<crate::tui::tuning::TuneJob>,
    pub tune_shown: bool,
    /// `e` asks where to write the log: the path being typed.
    pub export_prompt: Option<LineInput>,
    /// What the machine offers, for loading edited rules.
    pub facts: Option<SystemFacts>,
    /// Names the rules use that this kernel lacks: cpuplugd would stop the
    /// first time it evaluates them. Each with where and what to write.
    pub kernel_lint: Vec<String>,
    /// Known patterns seen so far, with their evidence.
    pub hints: Vec<Hint>,
    /// The scenario (and old-kernel names) when the source is the simulator,
    /// so a what-if can run closed loop.
    pub sim: Option<(Scenario, bool)>,
    seen: usize,
}

impl App {
    /// A UI for `rules` (loaded from `file`), before the first sample.
    pub fn new(rules: Arc<RuleSet>, file: SourceFile, source: SourceLabel, mode: Mode) -> Self {
        App {
            session: Session::new(rules, file, mode, FlapConfig::default()),
            source,
            host: "unknown".into(),
            guest: None,
            kernel: "unknown".into(),
            frames: VecDeque::with_capacity(FRAMES),
            cursor: None,
            paused: false,
            proposal_hidden: false,
            actuator: None,
            observer: NoWrites::blind(),
            cannot_act: None,
            log: VecDeque::with_capacity(1000),
            log_scroll: 0,
            flips_scroll: 0,
            view: View::Overview,
            rule: RuleKind::Hotplug,
            expanded: HashSet::new(),
            tree_scroll: 0,
            cpu_scroll: 0,
            cpu_page: 8,
            screen_size: (80, 24),
            mouse: true,
            source_status: None,
            help: false,
            dialog: None,
            history: History::new(),
            pinned: Vec::new(),
            value_cursor: 0,
            color: true,
            own_cpu: None,
            quit: false,
            whatif: None,
            log_filter: None,
            log_filter_editing: false,
            export_prompt: None,
            tune: None,
            tune_shown: false,
            selected_cpu: None,
            facts: None,
            kernel_lint: Vec::new(),
            hints: Vec::new(),

            sim: None,
            seen: 0,
        }
    }

    /// The interval the screens show now.
    pub fn frame(&self) -> Option<&Interval> {
        self.frames.get(self.cursor.unwrap_or(0))
    }

    /// The interval before the one shown.
    pub fn previous_frame(&self) -> Option<&Interval> {
        self.frames.get(self.cursor.unwrap_or(0) + 1)
    }

    /// Adds a log line stamped with the newest reading's time.
    pub fn note(&mut self, kind: LogKind, text: impl Into<String>) {
        let stamp = self
            .frames
            .front()
            .map_or(Stamp::default(), |f| f.sample.stamp);
        let text = text.into();
        if let Some(last) = self.log.back_mut()
            && last.kind == kind
            && last.text == text
        {
            last.times = last.times.saturating_add(1);
            last.last = stamp;
            return;
        }
        if self.log.len() == 1000 {
            self.log.pop_front();
        }
        self.log.push_back(LogLine {
            stamp,
            kind,
            text,
            times: 1,
            last: stamp,
        });
    }

    /// The log lines said up to the interval shown (all of them when
    /// following live), oldest first: a log reads like a story, and a
    /// finding's detail lines follow it.
    pub fn log_shown(&self) -> impl DoubleEndedIterator<Item = &LogLine> {
        let until = self
            .cursor
            .and_then(|_| self.frame())
            .map(|f| f.sample.stamp);
        self.log
            .iter()
            .filter(move |l| until.is_none_or(|u| l.stamp <= u))
    }

    fn note_events(&mut self, events: Vec<Event>) {
        for e in events {
            let kind = match e {
                Event::Failed { .. } | Event::CpuWriteFailed(_) => LogKind::Problem,
                Event::Would { .. } => LogKind::Decision,
                _ => LogKind::Action,
            };
            self.note(kind, e.to_string());
        }
    }

    /// The rules in force.
    pub fn rules(&self) -> &Arc<RuleSet> {
        self.session.rules()
    }

    /// The file they came from.
    pub fn file(&self) -> &SourceFile {
        self.session.file()
    }

    /// Takes one reading: the session decides and acts per mode; the app
    /// remembers the frame and logs the step.
    pub fn ingest(&mut self, sample: Sample) {
        let sample = Arc::new(sample);
        let step = match self.actuator.as_mut() {
            Some(a) => self.session.step(Arc::clone(&sample), a.as_mut()),
            None => self.session.step(Arc::clone(&sample), &mut self.observer),
        };
        self.seen += 1;
        if step.skipped.is_some() {
            self.note_step(&step);
            return;
        }
        let loads = cpu_loads(self.frames.front().map(|f| f.sample.as_ref()), &sample);
        let engine = self.session.engine();
        let variables = self
            .rules()
            .variables
            .iter()
            .filter(|v| v.uses > 0)
            .map(|v| {
                (
                    v.name.clone(),
                    engine.variable(&v.name).and_then(Result::ok),
                )
            })
            .collect();
        self.history.push(Arc::clone(&sample));
        for name in self.pinned.clone() {
            let v = match cpu_of_pin(&name) {
                Some(id) => loads
                    .iter()
                    .find(|l| l.id() == id)
                    .and_then(CpuLoad::busy)
                    .map_or(f64::NAN, |b| b * 100.0),
                None => self
                    .session
                    .engine()
                    .variable(&name)
                    .and_then(Result::ok)
                    .unwrap_or(f64::NAN),
            };
            self.history.record_pinned(&name, v);
        }
        let frame = Interval {
            number: self.seen - 1,
            sample,
            decision: step.decision.clone(),
            trace: self.session.trace().clone(),
            loads,
            variables,
            applied: applied_moves(&step.events),
        };
        self.frames.push_front(frame);
        let mut bytes: u64 = self.frames.iter().map(|f| proc_bytes(&f.sample)).sum();
        while self.frames.len() > FRAMES || (self.frames.len() > 2 && bytes > FRAME_BYTES) {
            if let Some(old) = self.frames.pop_back() {
                bytes -= proc_bytes(&old.sample);
            }
        }
        if let Some(k) = self.cursor.as_mut() {
            *k = (*k + 1).min(self.frames.len() - 1);
        }
        self.hints.extend(step.hints.iter().cloned());
        if step
            .events
            .iter()
            .any(|e| matches!(e, Event::Proposed(_) | Event::Revised { .. }))
        {
            self.proposal_hidden = false;
        }
        self.note_step(&step);
    }

    /// Logs what a step did, as every front end says it
    /// ([`log_entries::step_lines`]), verbose.
    fn note_step(&mut self, step: &Step) {
        for line in log_entries::step_lines(step, &self.session, true, false) {
            let kind = match line.kind {
                LineKind::Decision => LogKind::Decision,
                LineKind::Action => LogKind::Action,
                LineKind::Problem => LogKind::Problem,
                LineKind::Note => LogKind::Note,
            };
            self.note(kind, line.entry.message);
        }
    }

    /// Handles one user action.
    pub fn update(&mut self, action: KeyAction) {
        if let Some(dialog) = self.dialog.clone() {
            match (dialog, action) {
                (Dialog::ConfirmAuto, KeyAction::Yes) => {
                    self.dialog = None;
                    self.set_mode(Mode::Auto);
                }
                (Dialog::ConfirmAuto | Dialog::Arm(_), KeyAction::No | KeyAction::Later)
                | (Dialog::Message(_), _) => self.dialog = None,
                _ => {}
            }
            return;
        }
        if self.help {
            self.help = false;
            if action != KeyAction::Quit {
                return;
            }
        }
        match action {
            KeyAction::Quit => self.quit = true,
            KeyAction::Help => self.help = true,
            KeyAction::Pause
            | KeyAction::Back
            | KeyAction::Forward
            | KeyAction::Oldest
            | KeyAction::Newest
            | KeyAction::PreviousChange
            | KeyAction::NextChange => self.travel(action),
            KeyAction::Observe => self.set_mode(Mode::Observe),
            KeyAction::Step => self.set_mode(Mode::Step),
            KeyAction::Autonomous => {
                if let Some(why) = &self.cannot_act {
                    self.dialog = Some(Dialog::Message(format!(
                        "Autonomous mode is not possible: {why}"
                    )));
                } else {
                    self.dialog = Some(Dialog::ConfirmAuto);
                }
            }
            KeyAction::Yes => {
                if let Some(shown) = self.session.controller().pending().cloned() {
                    self.accept(&shown);
                }
            }
            KeyAction::No => {
                let events = self.session.reject();
                self.proposal_hidden = false;
                self.note_events(events);
            }
            KeyAction::Later => {
                if self.session.controller().pending().is_some() {
                    self.proposal_hidden = true;
                }
            }
            KeyAction::WhatIf => self.open_whatif(),
            KeyAction::NextView => {
                let i = View::ALL.iter().position(|v| *v == self.view).unwrap_or(0);
                self.view = View::ALL[(i + 1) % View::ALL.len()];
            }
            KeyAction::PreviousView => {
                let i = View::ALL.iter().position(|v| *v == self.view).unwrap_or(0);
                self.view = View::ALL[(i + View::ALL.len() - 1) % View::ALL.len()];
            }
            KeyAction::Up => self.scroll(-1),
            KeyAction::Down => self.scroll(1),
            KeyAction::CpusUp => {
                self.cpu_scroll = self.cpu_scroll.saturating_sub(self.cpu_page.max(1));
            }
            KeyAction::CpusDown => {
                let n = self.frame().map_or(0, |f| f.loads.len());
                let next = self.cpu_scroll + self.cpu_page.max(1);
                if next < n {
                    self.cpu_scroll = next;
                }
            }
            KeyAction::NextRule => self.rule = RuleKind::ALL[(self.rule.index() + 1) % 6],
            KeyAction::Expand => self.toggle_expanded(),
            KeyAction::Pin => self.toggle_pin(),
            KeyAction::Search => self.start_search(),
            KeyAction::Mouse => self.mouse = !self.mouse,
            KeyAction::ShowView(n) => {
                if let Some(v) = View::ALL.get(usize::from(n.saturating_sub(1))) {
                    self.view = *v;
                }
            }
            KeyAction::Tune => self.start_tune(),
            KeyAction::Export => {
                let stamp = self
                    .frame()
                    .map_or(0, |f| f.sample.stamp.micros / 1_000_000);
                self.export_prompt = Some(LineInput::new(
                    crate::tui::state_dir::default_log_path(stamp)
                        .display()
                        .to_string(),
                ))
            }
            KeyAction::Reload | KeyAction::Faster | KeyAction::Slower | KeyAction::Redraw => {}
        }
    }

    /// Accepts the proposal as it was on screen when `y` was pressed: only
    /// exactly that is applied (a revision since then is not approved).
    pub fn accept(&mut self, shown: &crate::control::controller::Proposal) {
        let events = match self.actuator.as_mut() {
            Some(a) => self.session.accept(shown, a.as_mut()),
            None => self.session.accept(shown, &mut self.observer),
        };
        self.proposal_hidden = false;
        self.note_events(events);
    }

    /// Time travel: pause, step back and forth, jump to the ends.
    fn travel(&mut self, action: KeyAction) {
        match action {
            KeyAction::Pause => {
                self.paused = !self.paused;
                if self.paused && self.cursor.is_none() {
                    self.cursor = Some(0);
                } else if !self.paused {
                    self.cursor = None;
                }
            }
            KeyAction::Back => {
                let k = self.cursor.unwrap_or(0);
                if k + 1 < self.frames.len() {
                    self.cursor = Some(k + 1);
                    self.paused = true;
                }
            }
            KeyAction::Forward => match self.cursor {
                Some(0) | None => {
                    self.cursor = None;
                    self.paused = false;
                }
                Some(k) => self.cursor = Some(k - 1),
            },
            KeyAction::Oldest => {
                self.cursor = Some(self.frames.len().saturating_sub(1));
                self.paused = true;
            }
            KeyAction::PreviousChange | KeyAction::NextChange => {
                // What each interval did; a change is where it differs from
                // the interval shown.
                let moves = |k: usize| {
                    self.frames
                        .get(k)
                        .and_then(|f| f.decision.as_ref())
                        .map(crate::control::flap::Moves::of)
                };
                let here = self.cursor.unwrap_or(0);
                let now = moves(here);
                let found = if action == KeyAction::PreviousChange {
                    (here + 1..self.frames.len()).find(|k| moves(*k) != now)
                } else {
                    (0..here).rev().find(|k| moves(*k) != now)
                };
                if let Some(k) = found {
                    self.cursor = Some(k);
                    self.paused = true;
                }
            }
            KeyAction::Newest => {
                self.cursor = None;
                self.paused = false;
            }
            _ => {}
        }
    }

    fn scroll(&mut self, by: isize) {
        let step = |v: usize| if by < 0 { v.saturating_sub(1) } else { v + 1 };
        let back = |v: usize| if by < 0 { v + 1 } else { v.saturating_sub(1) };
        match self.view {
            View::Overview => {
                self.selected_cpu = None;
                let last = self.pinnable().len().saturating_sub(1);
                self.value_cursor = step(self.value_cursor).min(last);
            }
            View::Rules => self.tree_scroll = step(self.tree_scroll),
            View::Graphs => {}
            // Newest at the bottom, as in a terminal: ↑ goes back in time.
            View::Flips => {
                let most = self.session.watch().changes.len().saturating_sub(1);
                self.flips_scroll = back(self.flips_scroll).min(most);
            }
            View::Log => self.log_scroll = back(self.log_scroll).min(self.log.len()),
        }
    }

    fn toggle_expanded(&mut self) {
        let Some(frame) = self.frame() else { return };
        let rows = trace::rows(
            self.session.rules(),
            self.session.file(),
            &frame.trace,
            self.rule,
            &|n| self.expanded.contains(&n),
        );
        // The row under the cursor, when it is a variable: just that one.
        if let Some(row) = rows.get(self.tree_scroll).filter(|r| r.variable) {
            let node = row.node;
            if !self.expanded.remove(&node) {
                self.expanded.insert(node);
            }
            return;
        }
        let vars: Vec<NodeId> = rows.iter().filter(|r| r.variable).map(|r| r.node).collect();
        if vars.iter().all(|n| self.expanded.contains(n)) {
            self.expanded.clear();
        } else {
            self.expanded.extend(vars);
        }
    }

    /// The values the cursor moves over and `p` pins, in the order the
    /// Values panel lists them: CP_ActiveAVG and CP_idleAVG first (they
    /// lead the panel), then every other variable a rule uses.
    pub fn pinnable(&self) -> Vec<&str> {
        let Some(frame) = self.frame() else {
            return Vec::new();
        };
        let lead = ["CP_ActiveAVG", "CP_idleAVG"];
        let mut names: Vec<&str> = lead
            .into_iter()
            .filter(|l| frame.variables.iter().any(|(n, _)| n == l))
            .collect();
        names.extend(
            frame
                .variables
                .iter()
                .map(|(n, _)| n.as_str())
                .filter(|n| !lead.contains(n)),
        );
        names
    }

    fn toggle_pin(&mut self) {
        let selected = match self.selected_cpu {
            Some(id) => Some(cpu_pin(id)),
            None => self
                .pinnable()
                .get(self.value_cursor)
                .map(|n| n.to_string()),
        };
        let Some(name) = selected else {
            return;
        };
        if let Some(i) = self.pinned.iter().position(|p| *p == name) {
            self.pinned.remove(i);
            self.history.unpin(&name);
        } else {
            self.history.pin(&name);
            self.pinned.push(name);
        }
    }

    fn open_whatif(&mut self) {
        let mut editor = WhatIfEditor::open(self.session.rules(), self.session.file(), self.rule);
        if let Some(facts) = &self.facts {
            let _ = editor.check(self.session.rules(), self.session.file(), facts);
        }
        self.whatif = Some(editor);
    }

    fn start_search(&mut self) {
        self.view = View::Log;
        self.log_filter = Some(String::new());
        self.log_filter_editing = true;
        self.log_scroll = 0;
    }

    /// A key while the log search is being typed: text, Backspace, Enter
    /// to keep the filter, Esc to drop it.
    pub fn search_key(&mut self, key: crossterm::event::KeyEvent) {
        use crossterm::event::KeyCode;
        let text = self.log_filter.get_or_insert_with(String::new);
        match key.code {
            KeyCode::Char(c) => text.push(c),
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Enter => {
                self.log_filter_editing = false;
                if text.is_empty() {
                    self.log_filter = None;
                }
            }
            KeyCode::Esc => {
                self.log_filter_editing = false;
                self.log_filter = None;
            }
            _ => {}
        }
        self.log_scroll = 0;
    }

    /// `T`: starts tuning the loaded rules against the scenario (or shows
    /// the tune already running or done).
    fn start_tune(&mut self) {
        let Some((scenario, old_kernel)) = &self.sim else {
            self.show(Dialog::Message(
                "tuning plays the rules on the simulated guest: start plugtop with --sim SCENARIO (or run `plugtop tune`)".into(),
            ));
            return;
        };
        if self.tune.is_none() {
            self.tune = Some(crate::tui::tuning::TuneJob::start(
                self.session.rules(),
                self.session.file(),
                scenario,
                *old_kernel,
            ));
        }
        self.tune_shown = true;
    }

    /// A key while the tune's box is shown: ↑↓ pick a point of the front,
    /// Enter opens it in the what-if editor and runs it, Esc hides the box.
    pub fn tune_key(&mut self, key: crossterm::event::KeyEvent) {
        use crossterm::event::KeyCode;
        let Some(job) = self.tune.as_mut() else {
            self.tune_shown = false;
            return;
        };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => self.tune_shown = false,
            KeyCode::Up => job.cursor = job.cursor.saturating_sub(1),
            KeyCode::Down => {
                let rows = job.front().len();
                job.cursor = (job.cursor + 1).min(rows.saturating_sub(1));
            }
            KeyCode::Enter if job.finished() => {
                let rows = job.front();
                let Some(row) = rows.get(job.cursor) else {
                    return;
                };
                if let Some(editor) =
                    job.editor(self.session.rules(), self.session.file(), row.index)
                {
                    self.whatif = Some(editor);
                    self.tune_shown = false;
                    self.run_whatif();
                }
            }
            _ => {}
        }
    }

    /// A key while `e` asks for the log's path: editing, Enter gives the
    /// path to write (empty: nothing), Esc closes.
    pub fn export_key(&mut self, key: crossterm::event::KeyEvent) -> Option<std::path::PathBuf> {
        use crossterm::event::{KeyCode, KeyModifiers};
        let input = self.export_prompt.as_mut()?;
        match key.code {
            KeyCode::Enter => {
                let text = input.text.trim().to_string();
                self.export_prompt = None;
                (!text.is_empty()).then(|| std::path::PathBuf::from(text))
            }
            KeyCode::Esc => {
                self.export_prompt = None;
                None
            }
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.export_prompt = None;
                None
            }
            _ => {
                input.key(key);
                None
            }
        }
    }

    /// A key while the what-if editor is open: editing, Tab for the next
    /// rule, Ctrl-O to name a whole rule file instead, Enter to run, Esc to
    /// close. The edit is checked at once.
    pub fn whatif_key(&mut self, key: crossterm::event::KeyEvent) {
        if self.whatif_edit(key) {
            self.check_whatif();
        }
    }

    /// [`App::whatif_key`] without the check: whether the text changed so
    /// that it needs one ([`App::check_whatif`]). A batch of keys is
    /// checked once, not once per key.
    pub fn whatif_edit(&mut self, key: crossterm::event::KeyEvent) -> bool {
        use crossterm::event::{KeyCode, KeyModifiers};
        let Some(editor) = self.whatif.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Esc => {
                self.whatif = None;
                false
            }
            KeyCode::Enter => {
                self.run_whatif();
                false
            }
            KeyCode::Tab if !editor.file_mode => {
                editor.step_field(self.session.rules(), self.session.file(), 1);
                true
            }
            KeyCode::BackTab if !editor.file_mode => {
                editor.step_field(self.session.rules(), self.session.file(), -1);
                true
            }
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.whatif = None;
                false
            }
            KeyCode::Char('o') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                editor.toggle_file_mode(self.session.rules(), self.session.file());
                true
            }
            _ => editor.key(key),
        }
    }

    /// Checks the open what-if edit the way cpuplugd would load it.
    pub fn check_whatif(&mut self) {
        if let (Some(editor), Some(facts)) = (self.whatif.as_mut(), &self.facts) {
            let _ = editor.check(self.session.rules(), self.session.file(), facts);
        }
    }

    /// Whether typed text goes to a text input (the export path, the
    /// what-if editor or the log search, in that order, as keys do) rather
    /// than being keys.
    pub fn typing(&self) -> bool {
        let tune_box = self.tune_shown && self.whatif.is_none();
        !tune_box
            && (self.export_prompt.is_some() || self.whatif.is_some() || self.log_filter_editing)
    }

    /// Puts `text` (a paste, or a run of typed characters) into the text
    /// input that has the focus as one edit, made one line
    /// ([`one_line`]); whether one had it. A what-if edit is left for
    /// [`App::check_whatif`].
    pub fn insert_text(&mut self, text: &str) -> bool {
        if !self.typing() {
            return false;
        }
        if let Some(input) = self.export_prompt.as_mut() {
            input.insert_str(text);
        } else if let Some(editor) = self.whatif.as_mut() {
            editor.insert(text);
        } else {
            self.log_filter
                .get_or_insert_with(String::new)
                .push_str(&one_line(text));
            self.log_scroll = 0;
        }
        true
    }

    /// Runs the open editor's rules over the history on screen.
    pub fn run_whatif(&mut self) {
        let Some(facts) = self.facts.clone() else {
            return;
        };
        let Some(mut editor) = self.whatif.take() else {
            return;
        };
        if let Some((rules, file)) = editor.check(self.session.rules(), self.session.file(), &facts)
        {
            let history: Vec<Past<'_>> = self
                .frames
                .iter()
                .rev()
                .map(|f| Past {
                    reading: f.number,
                    sample: f.sample.as_ref(),
                    decided: f.decision.as_ref().map(Moves::of).unwrap_or_default(),
                    applied: f.applied,
                })
                .collect();
            let scenario = self.sim.as_ref().map(|(s, old)| (s, *old));
            editor.run(
                rules,
                &file,
                &history,
                scenario,
                self.session.watch().flap.config(),
                self.session.rules().settings.update,
            );
        }
        self.whatif = Some(editor);
    }

    /// Checks the rules against the machine `facts` describes, before a
    /// missing name stops cpuplugd: the header shows a badge, the log why.
    pub fn set_facts(&mut self, facts: SystemFacts) {
        let outcome = crate::rules::load(self.session.file(), &facts);
        self.kernel_lint = outcome
            .diagnostics
            .iter()
            .filter(|d| d.daemon == crate::rules::diagnostic::DaemonEffect::StopsWhenEvaluated)
            .map(|d| {
                let at = self.session.file().position(d.span.start as usize);
                let help = d.help.as_ref().map_or(String::new(), |h| format!("; {h}"));
                format!("line {}:{}: {}{help}", at.line, at.column, d.message)
            })
            .collect();
        for l in self.kernel_lint.clone() {
            self.note(LogKind::Problem, l);
        }
        self.facts = Some(facts);
        self.hints.retain(|h| h.name == "cpu-affinity");
        for h in crate::control::patterns::from_rules(self.session.rules(), self.session.file()) {
            self.add_hint(h);
        }
    }

    /// Records a known pattern and logs it.
    pub fn add_hint(&mut self, hint: Hint) {
        self.note(LogKind::Note, hint.to_string());
        self.hints.push(hint);
    }

    /// Switches mode, with the checks acting needs.
    pub fn set_mode(&mut self, mode: Mode) {
        if mode != Mode::Observe
            && let Some(why) = self.cannot_act.clone()
        {
            self.dialog = Some(Dialog::Message(format!(
                "{mode} mode is not possible: {why}"
            )));
            return;
        }
        let events = match self.actuator.as_mut() {
            Some(a) => self.session.set_mode(mode, a.as_mut()),
            None => self.session.set_mode(mode, &mut self.observer),
        };
        self.proposal_hidden = false;
        self.note_events(events);
    }

    /// Takes new rules (a reload): the history is kept, so decisions go
    /// on at once, and the new limits apply as cpuplugd applies them.
    pub fn reload(&mut self, rules: Arc<RuleSet>, file: SourceFile) {
        // A tune of the old rules says nothing of the new ones.
        self.tune = None;
        self.tune_shown = false;
        let events = match self.actuator.as_mut() {
            Some(a) => self.session.reload(rules, file, a.as_mut()),
            None => self.session.reload(rules, file, &mut self.observer),
        };
        if let Some(facts) = self.facts.clone() {
            self.set_facts(facts);
        }
        self.expanded.clear();
        self.note(LogKind::Note, "rules reloaded; the history is kept");
        self.note_events(events);
    }

    /// Puts a question or a message on top of the screen (the control
    /// thread's way to speak to the user).
    pub fn show(&mut self, dialog: Dialog) {
        self.dialog = Some(dialog);
    }

    /// Closes the dialog.
    pub fn close_dialog(&mut self) {
        self.dialog = None;
    }

    /// The newest figure of plugtop's own CPU use, percent of one CPU.
    pub fn measured_own_cpu(&mut self, percent: f64) {
        self.own_cpu = Some(percent);
    }

    /// Readings taken so far.
    pub fn readings(&self) -> usize {
        self.seen
    }

    /// The engine (for the CPU-time and variable lookups of the runner).
    pub fn engine(&self) -> &crate::engine::Engine {
        self.session.engine()
    }
}

/// What the controller really did this interval, as moves.
fn applied_moves(events: &[Event]) -> Moves {
    let mut moves = Moves::default();
    for e in events {
        if let Event::Applied { action, .. } = e {
            match action {
                Action::PlugCpu => moves.cpu = 1,
                Action::UnplugCpu => moves.cpu = -1,
                Action::Pool { from, to } => moves.pool = (to - from).signum() as i8,
            }
        }
    }
    moves
}

/// The pinned name of a CPU's busy share; it cannot be a variable's (no
/// variable name holds a space).
pub fn cpu_pin(id: u32) -> String {
    format!("cpu{id} busy%")
}

/// The CPU a pinned name stands for, if it is one.
fn cpu_of_pin(name: &str) -> Option<u32> {
    name.strip_prefix("cpu")?
        .strip_suffix(" busy%")?
        .parse()
        .ok()
}

/// How much /proc text a sample holds.
fn proc_bytes(sample: &Sample) -> u64 {
    u64::from(sample.proc_bytes.meminfo) + u64::from(sample.proc_bytes.vmstat)
}
