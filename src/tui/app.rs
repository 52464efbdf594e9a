//! Everything the screen shows, as plain state owned by the screen thread.
//! The control thread's [`Update`]s come in through [`App::apply`]; keys
//! become [`KeyAction`]s handled by [`App::update`], which answers with
//! what the control thread must do ([`Command`]). Drawing (`view`) only
//! reads this. Nothing here touches the terminal or the guest.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::KeyEvent;

use super::command::Command;
use super::cpu_panel::PanelSize;
use super::draw_memo::{EntryMemo, UnitMemo};
use super::flips::Flips;
use super::graph_scale::GraphScale;
use super::keys::KeyAction;
use super::layer_keys::{EDITOR_KEYS, EditorAction, TUNE_KEYS, TuneAction, action_in};
use super::line_input::LineInput;
use super::list_rows;
use super::log_book::LogBook;
use super::modal::{Modal, Modals};
use super::seek::SeekTo;
use super::selection::Selection;
use super::timeline::Timeline;
use super::update::{Board, DecidedReading, Update};
use crate::control::flap::Moves;
use crate::control::patterns::Hint;
use crate::kernel::Stamp;
use crate::kernel::deltas::CpuLoad;
use crate::report::trace;
use crate::report::units::{ValueUnit, variable_units};
use crate::rules::{NodeId, RuleSet, SourceFile, SystemFacts};
use crate::sim::Scenario;
use crate::tui::tuning::{TuneJob, Wake};
use crate::tui::whatif::{Past, WhatIfEditor};

pub use super::log_book::{LogKind, LogLine};
pub use super::modal::{ArmInfo, Dialog};
pub use super::selection::View;
pub use super::timeline::{FRAME_BYTES, FRAMES, Interval, cpu_of_pin, cpu_pin};

mod keeping;
mod paging;
mod seeking;

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

impl SourceLabel {
    /// Whose clock the readings' times are, as the log says it: the log
    /// keeps to this one clock.
    pub fn clock(&self) -> &'static str {
        match self {
            SourceLabel::Live(_) => "times UTC",
            SourceLabel::Replay { .. } => "recorded times, UTC",
            SourceLabel::Sim { .. } => "simulated times",
        }
    }
}

/// What the header says of the machine (the kernel's `Machine` says more).
#[derive(Debug, Clone)]
pub struct HeaderMachine {
    pub host: String,
    /// What the live machine is: "z/VM LINUX01", or "not a z/VM guest"
    /// (recordings and the simulator leave it out).
    pub guest: Option<String>,
    pub kernel: String,
}

/// The whole screen state.
pub struct App {
    source: SourceLabel,
    machine: HeaderMachine,
    /// Where the source stands: the simulator's phase, or that its
    /// scenario ended.
    source_status: Option<String>,
    /// The source stopped early on this damage (a recording cut short).
    damage: Option<String>,
    /// Who else acts on the guest observed (cpuplugd, another plugtop).
    acting_elsewhere: Option<crate::control::lock::Actor>,
    /// A plugtop that ended without putting this guest back (its journal).
    left_changed: Option<crate::control::guard::DeadRun>,
    /// plugtop's own CPU use, percent of one CPU.
    own_cpu: Option<f64>,
    color: bool,
    /// Mouse reporting wanted (`m` turns it off so text can be selected).
    mouse: bool,
    /// The terminal's size, as the screen last saw it (for clicks).
    screen_size: (u16, u16),
    /// The room the help's keys have, as the screen last drew it.
    help_keys: Option<(usize, usize)>,
    /// The session as the control thread last told it.
    board: Board,
    /// The proposal last shown went without an answer from this screen:
    /// the control thread withdrew it (a `y` then says so).
    withdrawn: bool,
    /// `y` or `n` answered the proposal shown (so its going is no
    /// withdrawal).
    answered: bool,
    /// The unit of each of the board's rules' variables, by index: worked
    /// out when the rules change, not at every frame.
    variable_units: Vec<ValueUnit>,
    /// The overview's log panel as last drawn: each line's cells, kept for
    /// the panel's width and colours.
    log_panel: EntryMemo<(u16, bool), LogLine>,
    /// The units of the values the rules' explanations show.
    node_units: UnitMemo,
    timeline: Timeline,
    log: LogBook,
    selection: Selection,
    modals: Modals,
    /// A tune of the loaded rules (`T` on the simulator), running or done;
    /// its box is [`Modal::Tune`].
    tune: Option<TuneJob>,
    /// Wakes the screen when a tune finishes (nothing when no screen
    /// thread waits: line mode, tests).
    wake: Wake,
    /// `Esc` on a proposal: its box is hidden (a badge stays) until the
    /// proposal changes or the user answers.
    proposal_hidden: bool,
    /// What the machine offers, for loading edited rules.
    facts: Option<SystemFacts>,
    /// Names the rules use that this kernel lacks: cpuplugd would stop the
    /// first time it evaluates them. Each with where and what to write.
    kernel_lint: Vec<String>,
    /// Known patterns seen so far, with their evidence.
    hints: Vec<Hint>,
    /// The scenario (and old-kernel names) when the source is the simulator,
    /// so a what-if can run closed loop.
    sim: Option<(Scenario, bool)>,
    /// Candidates the screen's tune evaluates (`--tune-budget`; default
    /// as `plugtop tune`).
    tune_budget: Option<usize>,
    /// The write to the guest in progress, as the control thread said.
    working: Option<String>,
    /// How the graphs scale their bars (`z`).
    graph_scale: GraphScale,
    /// The Log and Flips views' width and rows on this screen: what one
    /// page of them shows.
    list_area: (u16, u16),
    /// The time of the newest reading and of the first, by the source's
    /// clock: log lines are stamped with it, and `J +18h` counts from it.
    clock: Option<(Stamp, Stamp)>,
    /// The page of the help shown (`?` at 80×24 takes more than one).
    help_page: usize,
    readings: usize,
    quit: bool,
}

impl App {
    /// A screen for the session `board` describes, before the first reading.
    pub fn new(board: Board, source: SourceLabel) -> Self {
        App {
            source,
            machine: HeaderMachine {
                host: "unknown".into(),
                guest: None,
                kernel: "unknown".into(),
            },
            source_status: None,
            damage: None,
            acting_elsewhere: None,
            withdrawn: false,
            answered: false,
            left_changed: None,
            own_cpu: None,
            color: true,
            mouse: true,
            screen_size: (80, 24),
            help_keys: None,
            variable_units: variable_units(board.rules()),
            log_panel: EntryMemo::default(),
            node_units: UnitMemo::default(),
            board,
            timeline: Timeline::new(),
            log: LogBook::new(),
            selection: Selection::default(),
            modals: Modals::default(),
            tune: None,
            wake: Arc::new(|| {}),
            proposal_hidden: false,
            facts: None,
            kernel_lint: Vec::new(),
            hints: Vec::new(),
            sim: None,
            tune_budget: None,
            working: None,
            graph_scale: GraphScale::default(),
            list_area: (79, 20),
            clock: None,
            help_page: 0,
            readings: 0,
            quit: false,
        }
    }

    /// Names the machine in the header.
    pub fn set_machine(&mut self, machine: HeaderMachine) {
        self.machine = machine;
    }

    /// Colours, or plain text (`--mono`, `NO_COLOR`).
    pub fn set_color(&mut self, color: bool) {
        self.color = color;
    }

    /// How a tune wakes the screen when it finishes: the screen thread
    /// draws only when something arrives.
    pub fn set_wake(&mut self, wake: Wake) {
        self.wake = wake;
    }

    /// The simulator's scenario, for tunes and closed-loop what-ifs.
    /// Candidates the screen's tune evaluates instead of the default.
    pub fn set_tune_budget(&mut self, budget: Option<usize>) {
        self.tune_budget = budget;
    }

    pub fn set_sim(&mut self, scenario: Scenario, old_kernel: bool) {
        self.sim = Some((scenario, old_kernel));
    }

    /// Where samples come from.
    pub fn source(&self) -> &SourceLabel {
        &self.source
    }

    /// The machine the header names.
    pub fn machine(&self) -> &HeaderMachine {
        &self.machine
    }

    /// Where the source stands, if it says.
    pub fn source_status(&self) -> Option<&str> {
        self.source_status.as_deref()
    }

    /// The damage the source stopped early on, if it did.
    pub fn damage(&self) -> Option<&str> {
        self.damage.as_deref()
    }

    /// Who else acts on the guest observed, as last looked up.
    pub fn acting_elsewhere(&self) -> Option<&crate::control::lock::Actor> {
        self.acting_elsewhere.as_ref()
    }

    /// A plugtop that ended without putting this guest back, if any.
    pub fn left_changed(&self) -> Option<&crate::control::guard::DeadRun> {
        self.left_changed.as_ref()
    }

    /// plugtop's own CPU use, percent of one CPU.
    pub fn own_cpu(&self) -> Option<f64> {
        self.own_cpu
    }

    /// Whether to draw in colour.
    pub fn color(&self) -> bool {
        self.color
    }

    /// Whether mouse reporting is wanted.
    pub fn mouse(&self) -> bool {
        self.mouse
    }

    /// The terminal's size, as last seen.
    pub fn screen_size(&self) -> (u16, u16) {
        self.screen_size
    }

    /// The terminal is `width`×`height`, and the CPU panel's inside is
    /// `cpus` on it ([`super::view::cpu_panel_size`]): clicks are placed on
    /// it, and PgDn and `c` act on what the panel shows, so paging never
    /// skips a CPU.
    pub fn set_screen_size(&mut self, width: u16, height: u16, cpus: PanelSize) {
        self.screen_size = (width, height);
        self.selection.cpus_mut().set_size(cpus);
    }

    /// The room the help's keys have, as the screen draws the help (its
    /// box less the rows saying what the header left out,
    /// [`super::view::help_keys_inside`]): the help's pages turn by it.
    pub fn set_help_keys(&mut self, room: (usize, usize)) {
        self.help_keys = Some(room);
    }

    /// The room the help's keys have: as last told, else the whole box.
    fn help_keys(&self) -> (usize, usize) {
        self.help_keys
            .unwrap_or_else(|| crate::tui::help::inside(self.screen_size.0, self.screen_size.1))
    }

    /// The Log and Flips views are `width` columns by `rows` on this
    /// screen ([`super::view::list_area`]): PgUp and PgDn page by what
    /// they show.
    pub fn set_list_area(&mut self, width: u16, rows: u16) {
        self.list_area = (width, rows);
    }

    /// How the graphs scale their bars.
    pub fn graph_scale(&self) -> GraphScale {
        self.graph_scale
    }

    /// The session as last told.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The rules in force.
    pub fn rules(&self) -> &Arc<RuleSet> {
        self.board.rules()
    }

    /// The overview's log panel as last drawn (a memo for drawing).
    pub fn log_panel(&self) -> &EntryMemo<(u16, bool), LogLine> {
        &self.log_panel
    }

    /// The units of the values the rules' explanations show, kept from
    /// frame to frame (a memo for drawing).
    pub fn node_units(&self) -> &UnitMemo {
        &self.node_units
    }

    /// The unit of each variable of the rules in force, by its index.
    pub fn variable_units(&self) -> &[ValueUnit] {
        &self.variable_units
    }

    /// The session as the control thread tells it now; the variables'
    /// units worked out again when its rules are others.
    fn set_board(&mut self, board: Board) {
        if !Arc::ptr_eq(board.rules(), self.board.rules()) {
            self.variable_units = variable_units(board.rules());
        }
        match (self.board.pending().is_some(), board.pending().is_some()) {
            (true, false) => self.withdrawn = !std::mem::take(&mut self.answered),
            (_, true) => self.withdrawn = false,
            _ => {}
        }
        self.board = board;
    }

    /// The file they came from.
    pub fn file(&self) -> &SourceFile {
        self.board.file()
    }

    /// The intervals and where the screen stands in them.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The interval the screens show now.
    pub fn frame(&self) -> Option<&Interval> {
        self.timeline.frame()
    }

    /// The interval before the one shown.
    pub fn previous_frame(&self) -> Option<&Interval> {
        self.timeline.previous_frame()
    }

    /// The log.
    pub fn log(&self) -> &LogBook {
        &self.log
    }

    /// The log lines said up to the interval shown (all of them when
    /// following live), oldest first, a repeat counted as of it: a log
    /// reads like a story, and a finding's detail lines follow it.
    pub fn log_shown(&self) -> impl DoubleEndedIterator<Item = Cow<'_, LogLine>> {
        let until = self
            .timeline
            .cursor()
            .and_then(|_| self.frame())
            .map(|f| f.sample.stamp);
        self.log.until(until)
    }

    /// What the watch over flips had found by the interval shown (the
    /// newest when following live): paused or travelling, the Flips view
    /// lists nothing newer than the interval the other panels show, and
    /// nothing moves under the reader.
    pub fn flips_shown(&self) -> &Flips {
        match self.timeline.cursor().and_then(|_| self.frame()) {
            Some(f) => &f.flips,
            None => self.board.flips(),
        }
    }

    /// The view and the places in it.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// The view and the places in it, to move (clicks).
    pub fn selection_mut(&mut self) -> &mut Selection {
        &mut self.selection
    }

    /// What lies over the screen.
    pub fn modals(&self) -> &Modals {
        &self.modals
    }

    /// The screen was drawn as the app stands: what is on top is seen.
    pub fn drawn(&mut self) {
        self.modals.drawn();
    }

    /// The tune, running or done.
    pub fn tune(&self) -> Option<&TuneJob> {
        self.tune.as_ref()
    }

    /// The tune, to move its cursor.
    pub fn tune_mut(&mut self) -> Option<&mut TuneJob> {
        self.tune.as_mut()
    }

    /// Whether the proposal's box was put away with `Esc`.
    pub fn proposal_hidden(&self) -> bool {
        self.proposal_hidden
    }

    /// What the kernel lacks that the rules name.
    pub fn kernel_lint(&self) -> &[String] {
        &self.kernel_lint
    }

    /// Known patterns seen so far.
    pub fn hints(&self) -> &[Hint] {
        &self.hints
    }

    /// The write to the guest in progress, if one is.
    pub fn working(&self) -> Option<&str> {
        self.working.as_deref()
    }

    /// The page of the help shown.
    pub fn help_page(&self) -> usize {
        self.help_page
    }

    /// What the machine offers, as edited rules are loaded against.
    pub fn facts(&self) -> Option<&SystemFacts> {
        self.facts.as_ref()
    }

    /// Readings the control thread has reported.
    pub fn readings(&self) -> usize {
        self.readings
    }

    /// Whether the user quit.
    pub fn quit(&self) -> bool {
        self.quit
    }

    /// Adds a log line stamped with the newest reading's time: the log
    /// keeps to the source's one clock (a line said before the first
    /// reading gets that reading's time).
    pub fn note(&mut self, kind: LogKind, text: impl Into<String>) {
        match self.clock {
            Some((newest, _)) => self.log.note(newest, kind, text.into()),
            None => self.log.note_undated(kind, text.into()),
        }
    }

    /// The newest reading was taken at `stamp`.
    fn tick(&mut self, stamp: Stamp) {
        match &mut self.clock {
            Some((newest, _)) => *newest = stamp,
            None => {
                self.clock = Some((stamp, stamp));
                self.log.date_undated(stamp);
            }
        }
    }

    fn note_all(&mut self, lines: Vec<(LogKind, String)>) {
        for (kind, text) in lines {
            self.note(kind, text);
        }
    }

    /// Takes what the control thread says.
    pub fn apply(&mut self, update: Update) {
        match update {
            Update::Reading(reading) => self.take_reading(*reading),
            Update::Acted { board, lines } => {
                self.set_board(*board);
                self.proposal_hidden = false;
                self.note_all(lines);
            }
            Update::Reloaded { board, lines } => {
                // A tune of the old rules says nothing of the new ones.
                self.tune = None;
                self.modals.close(&Modal::Tune);
                self.set_board(*board);
                if let Some(facts) = self.facts.clone() {
                    self.set_facts(facts);
                }
                self.selection.fold_all();
                self.note(LogKind::Note, "rules reloaded; the history is kept");
                self.note_all(lines);
            }
            Update::Note(kind, text) => self.note(kind, text),
            Update::Show(dialog) => self.show(dialog),
            Update::Status(status) => self.source_status = status,
            Update::Acting(actor) => {
                if let Some(why) = actor.as_ref().and_then(|a| a.stale.as_ref()) {
                    self.note(
                        LogKind::Note,
                        format!(
                            "cpuplugd's pid file is stale: it {why}; arming is not blocked by it"
                        ),
                    );
                }
                if let Some(a) = actor.as_ref().filter(|a| a.stopped) {
                    self.note(
                        LogKind::Note,
                        format!(
                            "{} pid {} holds the guest lock but is stopped (Ctrl-Z, SIGSTOP): nothing acts until it is continued",
                            a.name, a.pid
                        ),
                    );
                }
                self.acting_elsewhere = actor;
            }
            Update::LeftChanged(dead) => self.left_changed = dead.map(|d| *d),
            Update::OwnCpu(percent) => self.own_cpu = Some(percent),
            Update::Speed(speed) => {
                if let SourceLabel::Replay { speed: s, .. } | SourceLabel::Sim { speed: s, .. } =
                    &mut self.source
                {
                    *s = speed;
                }
            }
            Update::Working(what) => self.working = what,
            Update::Missed(readings) => {
                self.readings += readings;
                self.note(
                    LogKind::Problem,
                    format!(
                        "{} not shown: the terminal was not read",
                        crate::report::words::count(readings as f64, "reading", "readings")
                    ),
                );
            }
            Update::Passed(passed) => self.take_passed(*passed),
            Update::SeekEnd(sought) => self.arrived(sought),
            Update::Damaged(what) => self.damage = Some(what),
            Update::Ended(_) => {}
        }
    }

    /// One reading: its interval goes on the timeline (and its values to
    /// the graphs), its lines in the log.
    fn take_reading(&mut self, reading: DecidedReading) {
        let DecidedReading {
            frame,
            stamp,
            lines,
            hints,
            proposed,
            board,
        } = reading;
        self.readings += 1;
        self.set_board(board);
        self.tick(stamp);
        if let Some(frame) = frame {
            self.timeline.push(frame);
            self.hints.extend(hints);
            if proposed {
                self.proposal_hidden = false;
            }
        }
        self.note_all(lines);
    }

    /// Handles one user action; what the control thread must do for it.
    pub fn update(&mut self, action: KeyAction) -> Option<Command> {
        match self.modals.top() {
            Some(Modal::Dialog(dialog)) => {
                let dialog = dialog.clone();
                return self.answer(dialog, action);
            }
            Some(Modal::Help) => {
                if self.turn_help_page(action) {
                    return None;
                }
                self.modals.close_top();
                if action != KeyAction::Quit {
                    return None;
                }
            }
            _ => {}
        }
        match action {
            KeyAction::Quit => {
                self.quit = true;
                return Some(Command::Quit);
            }
            KeyAction::Help => {
                self.help_page = 0;
                self.modals.open(Modal::Help);
            }
            KeyAction::Pause
            | KeyAction::Back
            | KeyAction::Forward
            | KeyAction::Oldest
            | KeyAction::PreviousChange => self.timeline.travel(action),
            // Past the intervals kept, a replay reads ahead to the change.
            KeyAction::NextChange => {
                let here = self.timeline.cursor();
                self.timeline.travel(action);
                if self.timeline.cursor() == here {
                    return self.next_change_ahead();
                }
            }
            // The newest of a replay is its end, read ahead to at once.
            KeyAction::Newest => {
                self.timeline.travel(action);
                if matches!(self.source, SourceLabel::Replay { .. }) {
                    return Some(Command::Seek(SeekTo::End));
                }
            }
            KeyAction::GoTo => self.modals.open(Modal::GoTo(LineInput::new(""))),
            KeyAction::Observe => {
                return Some(Command::SetMode(crate::control::controller::Mode::Observe));
            }
            KeyAction::Step
            | KeyAction::Autonomous
            | KeyAction::Reload
            | KeyAction::Faster
            | KeyAction::Slower => return Some(Command::Act(action)),
            KeyAction::Yes => return self.confirm(),
            KeyAction::No => {
                self.answered = self.board.pending().is_some();
                return Some(Command::Reject);
            }
            KeyAction::Later => {
                if self.board.pending().is_some() {
                    self.proposal_hidden = true;
                } else if self.working.is_some() {
                    return Some(Command::StopSeek);
                }
            }
            KeyAction::WhatIf => self.open_whatif(),
            KeyAction::NextView => self.selection.cycle_view(true),
            KeyAction::PreviousView => self.selection.cycle_view(false),
            KeyAction::Up => self.scroll(true),
            KeyAction::Down => self.scroll(false),
            KeyAction::PageUp => self.page(true),
            KeyAction::PageDown => self.page(false),
            KeyAction::Top | KeyAction::Bottom => {
                return self.go_to_end(action == KeyAction::Top);
            }
            KeyAction::Scale => self.graph_scale = self.graph_scale.next(),
            KeyAction::CpuLayout | KeyAction::CpuOrder => self.cpu_panel_key(action),
            KeyAction::NextRule => self.selection.next_rule(),
            KeyAction::Expand => self.toggle_expanded(),
            KeyAction::Pin => self.toggle_pin(),
            KeyAction::Search => {
                self.selection.show(View::Log);
                self.log.start_search();
                self.modals.open(Modal::Search);
            }
            KeyAction::Mouse => self.mouse = !self.mouse,
            KeyAction::ShowView(n) => {
                if let Some(v) = View::ALL.get(usize::from(n.saturating_sub(1))) {
                    self.selection.show(*v);
                }
            }
            KeyAction::Tune => self.start_tune(),
            KeyAction::Export => self.open_export(),
            KeyAction::Redraw => {}
        }
        None
    }

    /// `c` switches the CPU panel between meters and the table, `b` their
    /// order.
    fn cpu_panel_key(&mut self, action: KeyAction) {
        if action == KeyAction::CpuLayout {
            self.selection
                .cpus_mut()
                .toggle_layout(loads(&self.timeline));
        } else {
            self.selection.cpus_mut().toggle_order();
        }
    }

    /// `e`: asks where to export the log, offering a new file named after
    /// the local time.
    fn open_export(&mut self) {
        use crate::tui::state_dir::{default_log_path, in_use, local_stamp};
        let path = default_log_path(&local_stamp(), in_use);
        self.modals
            .open(Modal::Export(LineInput::new(path.display().to_string())));
    }

    /// An action on the dialog on top: `y` answers a question, `n` or
    /// `Esc` closes it, any key closes a message.
    fn answer(&mut self, dialog: Dialog, action: KeyAction) -> Option<Command> {
        match (dialog, action) {
            (Dialog::ConfirmAuto, KeyAction::Yes) => {
                self.modals.close_top();
                Some(Command::SetMode(crate::control::controller::Mode::Auto))
            }
            (Dialog::Arm(info), KeyAction::Yes) => {
                self.modals.close_top();
                Some(Command::Arm(info.mode))
            }
            (Dialog::ConfirmAuto | Dialog::Arm(_), KeyAction::No | KeyAction::Later)
            | (Dialog::Message(_) | Dialog::ReloadFailed(_) | Dialog::Exported(_), _) => {
                self.modals.close_top();
                None
            }
            (d @ (Dialog::Apply(_) | Dialog::Replace(_) | Dialog::Written(_)), action) => {
                self.answer_keep(d, action)
            }
            _ => None,
        }
    }

    /// Turns the help's page for a paging key (PgDn, ↓, Space, → on;
    /// PgUp, ↑, ← back) when it has more than one; whether it did.
    fn turn_help_page(&mut self, action: KeyAction) -> bool {
        let by: isize = match action {
            KeyAction::PageDown | KeyAction::Down | KeyAction::Pause | KeyAction::Forward => 1,
            KeyAction::PageUp | KeyAction::Up | KeyAction::Back => -1,
            _ => return false,
        };
        let (w, h) = self.help_keys();
        let pages = crate::tui::help::pages(w, h);
        if pages < 2 {
            return false;
        }
        self.help_page = self.help_page.saturating_add_signed(by).min(pages - 1);
        true
    }

    fn scroll(&mut self, up: bool) {
        let rows = match self.selection.view() {
            View::Overview => self.pinnable().len(),
            // ↑ goes back no further than the oldest change at the top.
            View::Flips => {
                let (heights, room) = self.flips_heights();
                list_rows::furthest(&heights, room) + 1
            }
            View::Log => {
                let furthest =
                    list_rows::furthest(&self.log_heights(), usize::from(self.list_area.1));
                self.log.scroll_by(up, furthest);
                return;
            }
            View::Rules | View::Graphs => 0,
        };
        self.selection.scroll(up, rows);
    }

    fn toggle_expanded(&mut self) {
        let Some(frame) = self.frame() else { return };
        let rows = trace::rows(
            &frame.rules,
            &frame.file,
            &frame.trace,
            self.selection.rule(),
            &|n| self.selection.is_expanded(n),
        );
        // The row under the cursor, when it is a variable: just that one.
        if let Some(row) = rows
            .get(self.selection.tree_scroll())
            .filter(|r| r.variable)
        {
            let node = row.node;
            self.selection.toggle_node(node);
            return;
        }
        let vars: Vec<NodeId> = rows.iter().filter(|r| r.variable).map(|r| r.node).collect();
        self.selection.toggle_all(vars);
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
        let selected = match self.selection.selected_cpu() {
            Some(id) => Some(cpu_pin(id)),
            None => self
                .pinnable()
                .get(self.selection.value_cursor())
                .map(|n| n.to_string()),
        };
        if let Some(name) = selected {
            self.timeline.toggle_pin(name);
        }
    }

    fn open_whatif(&mut self) {
        let mut editor =
            WhatIfEditor::open(self.board.rules(), self.board.file(), self.selection.rule());
        if let Some(facts) = &self.facts {
            let _ = editor.check(self.board.rules(), self.board.file(), facts);
        }
        self.modals.open(Modal::WhatIf(Box::new(editor)));
    }

    /// A key while the log search is being typed: text, Backspace, Enter
    /// to keep the filter, Esc to drop it.
    pub fn search_key(&mut self, key: KeyEvent) {
        if !self.log.search_key(key) {
            self.modals.close(&Modal::Search);
        }
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
            self.tune = Some(TuneJob::start(
                self.board.rules(),
                self.board.file(),
                scenario,
                *old_kernel,
                self.tune_budget,
                Arc::clone(&self.wake),
            ));
        }
        self.modals.open(Modal::Tune);
    }

    /// A key while the tune's box is on top ([`TUNE_KEYS`]): ↑↓ pick a
    /// point of the front, Enter opens it in the what-if editor and runs
    /// it, Ctrl-R and Ctrl-S apply or write it from there, Esc hides the box.
    pub fn tune_key(&mut self, key: KeyEvent) {
        if self.tune.is_none() {
            self.modals.close(&Modal::Tune);
            return;
        }
        match action_in(TUNE_KEYS, key) {
            Some(TuneAction::Close) => self.modals.close(&Modal::Tune),
            Some(TuneAction::Up) => self.tune.iter_mut().for_each(TuneJob::cursor_up),
            Some(TuneAction::Down) => self.tune.iter_mut().for_each(TuneJob::cursor_down),
            Some(TuneAction::Open) if self.open_picked_point() => self.run_whatif(),
            Some(TuneAction::Apply) if self.open_picked_point() => self.ask_apply(),
            Some(TuneAction::Write) if self.open_picked_point() => self.ask_write(),
            Some(TuneAction::Help) => {
                let (w, h) = self.help_keys();
                self.help_page = crate::tui::help::page_of(w, h, crate::tui::help::TUNE_HEADING);
                self.modals.open(Modal::Help);
            }
            _ => {}
        }
    }

    /// The tune's picked point in the what-if editor, the tune's box put
    /// away; whether there was one (the tune finished).
    fn open_picked_point(&mut self) -> bool {
        let Some(job) = self.tune.as_ref().filter(|j| j.finished()) else {
            return false;
        };
        let rows = job.front();
        let Some(row) = rows.get(job.cursor()) else {
            return false;
        };
        let Some(facts) = self.facts.as_ref() else {
            return false;
        };
        let Some(editor) = job.editor(self.board.rules(), self.board.file(), facts, row.index)
        else {
            return false;
        };
        let editor = editor.with_caution(job.not_recommended_because(row.index));
        self.modals.close(&Modal::Tune);
        self.modals.open(Modal::WhatIf(Box::new(editor)));
        true
    }

    /// A key while `e` asks for the log's path: editing, Enter gives the
    /// path to write (empty: nothing), Esc closes.
    pub fn export_key(&mut self, key: KeyEvent) -> Option<PathBuf> {
        let text = self.modals.prompt_key(Modals::export_on_top, key)?;
        let text = text.trim();
        (!text.is_empty()).then(|| PathBuf::from(text))
    }

    /// A key while the what-if editor is on top: editing, Tab for the next
    /// rule, Ctrl-O to name a whole rule file instead, Enter to run, Esc to
    /// close. The edit is checked at once.
    pub fn whatif_key(&mut self, key: KeyEvent) {
        if self.whatif_edit(key) {
            self.check_whatif();
        }
    }

    /// [`App::whatif_key`] without the check: whether the text changed so
    /// that it needs one ([`App::check_whatif`]). A batch of keys is
    /// checked once, not once per key.
    pub fn whatif_edit(&mut self, key: KeyEvent) -> bool {
        if self.modals.whatif_on_top().is_none() {
            return false;
        }
        let action = action_in(EDITOR_KEYS, key);
        match action {
            Some(EditorAction::Close) => {
                self.modals.close_top();
                return false;
            }
            Some(EditorAction::Run) => {
                self.run_whatif();
                return false;
            }
            Some(EditorAction::Apply) => {
                self.ask_apply();
                return false;
            }
            Some(EditorAction::Write) => {
                self.ask_write();
                return false;
            }
            _ => {}
        }
        let rules = Arc::clone(self.board.rules());
        let file = self.board.file();
        self.modals
            .whatif_on_top()
            .is_some_and(|editor| editor.edit(key, &rules, file))
    }

    /// Checks the open what-if edit the way cpuplugd would load it.
    pub fn check_whatif(&mut self) {
        let Some(facts) = &self.facts else { return };
        if let Some(editor) = self.modals.whatif_on_top() {
            let _ = editor.check(self.board.rules(), self.board.file(), facts);
        }
    }

    /// Whether typed text goes to a text input (the export path, the
    /// what-if editor or the log search: the layer on top) rather than
    /// being keys.
    pub fn typing(&self) -> bool {
        self.modals.top().is_some_and(Modal::takes_text)
    }

    /// Puts `text` (a paste, or a run of typed characters) into the text
    /// input on top as one edit, made one line; whether one had it. A
    /// what-if edit is left for [`App::check_whatif`].
    pub fn insert_text(&mut self, text: &str) -> bool {
        match self.modals.top_mut() {
            Some(Modal::Export(input)) => {
                input.insert_str(text);
            }
            Some(Modal::WhatIf(editor)) => {
                editor.insert(text);
            }
            Some(Modal::Search) => self.log.type_text(text),
            Some(Modal::GoTo(input)) => {
                input.insert_str(text);
            }
            Some(Modal::SaveRules(prompt)) => {
                prompt.input.insert_str(text);
            }
            _ => return false,
        }
        true
    }

    /// Runs the what-if editor on top over the history on screen.
    pub fn run_whatif(&mut self) {
        let Some(facts) = self.facts.clone() else {
            return;
        };
        // On a replay nothing is applied here: what the recorded guest did
        // after each reading (the CPUs and the pool of the next one) is
        // what answered its decision, as `plugtop whatif` counts it.
        let replay = matches!(self.source, SourceLabel::Replay { .. });
        let frames: Vec<&Interval> = self.timeline.frames().iter().rev().collect();
        let history: Vec<Past<'_>> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| Past {
                reading: f.number,
                sample: f.sample.as_ref(),
                decided: f.decision.as_ref().map(Moves::of).unwrap_or_default(),
                applied: match frames.get(i + 1) {
                    Some(next) if replay => Moves::between(&f.sample, &next.sample),
                    _ if replay => Moves::default(),
                    _ => f.applied,
                },
            })
            .collect();
        let scenario = self.sim.as_ref().map(|(s, old)| (s, *old));
        let board = &self.board;
        let Some(Modal::WhatIf(editor)) = self.modals.top_mut() else {
            return;
        };
        if let Some((rules, file)) = editor.check(board.rules(), board.file(), &facts) {
            editor.run(
                (rules, &file),
                (Arc::clone(board.rules()), board.file()),
                &history,
                scenario,
                board.flips().config(),
                board.rules().settings.update,
            );
        }
    }

    /// Checks the rules against the machine `facts` describes, before a
    /// missing name stops cpuplugd: the header shows a badge, the log why.
    pub fn set_facts(&mut self, facts: SystemFacts) {
        let file = self.board.file();
        let outcome = crate::rules::load(file, &facts);
        self.kernel_lint = outcome
            .diagnostics
            .iter()
            .filter(|d| d.daemon == crate::rules::diagnostic::DaemonEffect::StopsWhenEvaluated)
            .map(|d| {
                let at = file.position(d.span.start as usize);
                let help = d.help.as_ref().map_or(String::new(), |h| format!("; {h}"));
                format!("line {}:{}: {}{help}", at.line, at.column, d.message)
            })
            .collect();
        for l in self.kernel_lint.clone() {
            self.note(LogKind::Problem, l);
        }
        if let Some(line) = self.board.rules().memory_off_line() {
            self.note(LogKind::Note, line);
        }
        self.facts = Some(facts);
        self.hints.retain(|h| h.name == "cpu-affinity");
        for h in crate::control::patterns::from_rules(self.board.rules(), self.board.file()) {
            self.add_hint(h);
        }
    }

    /// Records a known pattern and logs it.
    pub fn add_hint(&mut self, hint: Hint) {
        self.note(LogKind::Note, hint.to_string());
        self.hints.push(hint);
    }

    /// `y`: approves the proposal on screen now, even if the control
    /// thread revises it before it gets to the key; with none, says why
    /// nothing happens (nu53 M4).
    fn confirm(&mut self) -> Option<Command> {
        if let Some(shown) = self.board.pending() {
            self.answered = true;
            return Some(Command::Accept(Box::new(shown.clone())));
        }
        if self.withdrawn {
            self.note(
                LogKind::Note,
                "nothing to confirm: the proposal was withdrawn",
            );
        } else if self.board.mode() == crate::control::controller::Mode::Step {
            self.note(LogKind::Note, "nothing to confirm: no proposal is waiting");
        }
        None
    }

    /// Puts a question or a message on top of the screen.
    pub fn show(&mut self, dialog: Dialog) {
        self.modals.open(Modal::Dialog(dialog));
    }
}

/// The CPUs of the interval shown, for paging and switching the CPU panel
/// (none before the first reading).
fn loads(timeline: &Timeline) -> &[CpuLoad] {
    timeline.frame().map_or(&[], |f| f.loads.get())
}
