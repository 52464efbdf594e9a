//! One guest's control loop, interval by interval: the part of cpuplugd's
//! main loop that is the same whoever drives it. The screen, `plugtop run`
//! and the simulator each feed readings to a [`Session`] and show or log the
//! [`Step`] it returns; none of them decides, limits or acts on its own, so
//! "autonomous: acts like cpuplugd" holds for all three.
//!
//! Per reading, in cpuplugd's order: a reading older than the last is
//! skipped; the first reading applies the start limits (CPUs into
//! CPU_MIN..CPU_MAX, the pool into CMM_MIN..CMM_MAX); a change of
//! polarization suspends CPU changes (restoring the start CPUs) or re-applies
//! the limits; then the engine decides, the watch looks for flapping, and the
//! controller acts per mode. A memory rule that stops cpuplugd stops it after
//! that interval's CPU action, as in cpuplugd's loop.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use super::controller::{Action, Controller, Event, Mode, Proposal, apply, start_limits};
use super::flap::FlapConfig;
use super::patterns::{Hint, PatternWatch};
use super::watch::{Finding, Watch};
use crate::engine::{Decision, Engine, Fatal};
use crate::kernel::actuator::Actuator;
use crate::kernel::cpu_choice::CpuChange;
use crate::kernel::{Interest, Polarization, Sample, Stamp};
use crate::logging::Priority;
use crate::rules::eval::{NoTrace, Trace};
use crate::rules::{RuleSet, SourceFile};

/// Why a reading was not decided on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    /// Its time stamp is not after the previous reading's.
    ClockWentBack,
}

/// How serious a message of a step is (what the log's priority becomes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageLevel {
    Info,
    Warning,
    Error,
}

impl From<MessageLevel> for Priority {
    fn from(level: MessageLevel) -> Priority {
        match level {
            MessageLevel::Info => Priority::Info,
            MessageLevel::Warning => Priority::Warning,
            MessageLevel::Error => Priority::Err,
        }
    }
}

/// Something a step has to say besides the controller's events.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// Vertical polarization began: CPU changes stop, the start CPUs return.
    VerticalPolarization,
    /// Horizontal again: the CPU limits are re-applied.
    HorizontalPolarization,
    /// A limit stopped the rules' action (cpuplugd's verbose messages).
    LimitReached(&'static str),
    /// A rule group was skipped for this interval by a floating-point fault.
    Fault { group: &'static str, fault: String },
    /// CMM_INC or CMM_DEC came out negative and counts as 0.
    Negative { name: &'static str, value: i64 },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::VerticalPolarization => f.write_str(
                "vertical polarization: CPU changes suspended, start CPU count restored",
            ),
            Notice::HorizontalPolarization => {
                f.write_str("horizontal polarization again: CPU limits re-applied")
            }
            Notice::LimitReached(what) => write!(f, "{what} limit is reached"),
            Notice::Fault { group, fault } => {
                write!(f, "{group} rules skipped this interval: {fault}")
            }
            Notice::Negative { name, value } => {
                write!(f, "{name} went negative ({value}), set it to 0.")
            }
        }
    }
}

/// What one reading did.
#[derive(Debug, Clone, Default)]
pub struct Step {
    /// Set when the reading was skipped; nothing else is then.
    pub skipped: Option<Skipped>,
    /// Start limits (first reading, reload, polarization back to horizontal).
    pub limits: Vec<Event>,
    pub notices: Vec<Notice>,
    /// `None` while the history fills.
    pub decision: Option<Decision>,
    /// Flapping, changed decisions with their reasons, feedback loops.
    pub findings: Vec<Finding>,
    /// Known patterns (loadavg lag, steal while the pool grows, Shmem
    /// counted as free) seen for the first time in this reading.
    pub hints: Vec<Hint>,
    /// What the controller did with the decision.
    pub events: Vec<Event>,
    /// Set when cpuplugd would exit after this reading.
    pub fatal: Option<Fatal>,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skipped::ClockWentBack => {
                f.write_str("the clock went backwards; skipping this interval")
            }
        }
    }
}

/// How serious a controller event is.
pub fn event_severity(e: &Event) -> MessageLevel {
    match e {
        Event::Failed { .. } | Event::CpuWriteFailed(_) => MessageLevel::Error,
        _ => MessageLevel::Info,
    }
}

/// One guest's loop state.
#[derive(Debug, Clone)]
pub struct Session {
    rules: Arc<RuleSet>,
    file: SourceFile,
    engine: Engine,
    watch: Watch,
    patterns: PatternWatch,
    trace: Trace,
    /// Tracing only the intervals that need a trace (see
    /// [`Session::trace_only_when_needed`]): the engine as it was before
    /// the newest reading, to trace the interval before a change that may
    /// be shown.
    lean: Option<Engine>,
    controller: Controller,
    /// The start limits are owed: the session began acting after its first
    /// reading (the screen armed later), and in step-confirm the user has
    /// not answered their proposal yet.
    limits_due: bool,
    /// The number of the newest reading in the run (what a proposal of the
    /// start limits was decided on).
    latest_reading: usize,
    /// CPUs online at the first reading (what vertical polarization restores).
    start_online: Option<Vec<u32>>,
    vertical: bool,
    last_stamp: Option<Stamp>,
    /// The latest readings, as deep as the history, replayed into new rules
    /// on a reload so decisions go on at once, as cpuplugd's do.
    recent: VecDeque<Arc<Sample>>,
    /// The reading `recent` let go of last: when nothing else holds it,
    /// the next reading takes its place ([`Session::shared`]) rather than
    /// one allocation freed and another made every interval.
    spare: Option<Arc<Sample>>,
}

impl Session {
    /// A session for `rules` (loaded from `file`) in `mode`.
    pub fn new(rules: Arc<RuleSet>, file: SourceFile, mode: Mode, flap: FlapConfig) -> Self {
        Session {
            engine: Engine::new(Arc::clone(&rules)),
            patterns: PatternWatch::new(&rules),
            rules,
            file,
            watch: Watch::new(flap),
            trace: Trace::new(),
            lean: None,
            controller: Controller::new(mode),
            limits_due: false,
            latest_reading: 0,
            start_online: None,
            vertical: false,
            last_stamp: None,
            recent: VecDeque::new(),
            spare: None,
        }
    }

    /// `sample` shared, as [`Session::step`] takes it: in the place of a
    /// reading this session no longer keeps and nothing else holds, or in
    /// a new one.
    pub fn shared(&mut self, sample: Sample) -> Arc<Sample> {
        if let Some(mut kept) = self.spare.take()
            && let Some(place) = Arc::get_mut(&mut kept)
        {
            *place = sample;
            return kept;
        }
        Arc::new(sample)
    }

    /// The rules in force.
    pub fn rules(&self) -> &Arc<RuleSet> {
        &self.rules
    }

    /// The file they came from.
    pub fn file(&self) -> &SourceFile {
        &self.file
    }

    /// What this session reads of a sample: what its rules decide on and
    /// what its hints look at (a source told this reads less).
    pub fn interest(&self) -> Interest {
        let mut interest = self.engine.interest();
        if let Some(names) = &mut interest.meminfo {
            names.extend(super::patterns::MEMINFO_READ.map(String::from));
        }
        interest
    }

    /// The engine (variables' values, readings so far).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The incident watch.
    pub fn watch(&self) -> &Watch {
        &self.watch
    }

    /// The truth trace of the latest decision (of the latest that needed
    /// one, after [`Session::trace_only_when_needed`]).
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Decides without a truth trace from now on, and traces an interval
    /// only when something reads its trace: a group's fault (its notice
    /// names the sub-expression) or a change of decision that may be shown
    /// (its flips compare the trace before with the one after, the one
    /// before traced again from a copy of the engine, kept only then; see
    /// [`Watch::may_show_next_change`]). The decisions, notices and the
    /// lines logged are the same (other changes keep no explanation);
    /// deciding runs the rules' flat programs instead of walking and
    /// recording the tree. For `plugtop run` without metrics: nothing else
    /// there reads the trace.
    pub fn trace_only_when_needed(&mut self) {
        if self.lean.is_none() {
            self.lean = Some(self.engine.clone());
            self.watch.keep_no_traces();
        }
    }

    /// The mode and any pending proposal.
    pub fn controller(&self) -> &Controller {
        &self.controller
    }

    /// Switches the mode. A session that begins to act after its first
    /// reading owes the guest cpuplugd's start limits, as if it started
    /// now: applied at once in autonomous mode, proposed in step-confirm
    /// (and revised every reading until answered).
    pub fn set_mode(&mut self, mode: Mode, actuator: &mut dyn Actuator) -> Vec<Event> {
        let was_acting = self.controller.mode() != Mode::Observe;
        let mut events = self.controller.set_mode(mode);
        if mode == Mode::Observe {
            self.limits_due = false;
            return events;
        }
        // Acting begins now, or step-confirm's limits go unanswered into
        // autonomous mode: the limits apply to the newest reading.
        if (!was_acting || self.limits_due)
            && let Some(latest) = self.recent.back().cloned()
        {
            events.extend(self.limits(&latest, actuator));
        }
        events
    }

    /// `y` on the proposal as it was shown: only exactly that is applied.
    pub fn accept(&mut self, shown: &Proposal, actuator: &mut dyn Actuator) -> Vec<Event> {
        let events = self.controller.accept(shown, actuator);
        if shown.limits && events.iter().any(|e| matches!(e, Event::Approved(_))) {
            self.limits_due = false;
        }
        events
    }

    /// `n` on the pending proposal.
    pub fn reject(&mut self) -> Vec<Event> {
        let events = self.controller.reject();
        if events
            .iter()
            .any(|e| matches!(e, Event::Rejected(p) if p.limits))
        {
            self.limits_due = false;
        }
        events
    }

    fn acting(&self) -> bool {
        self.controller.mode() == Mode::Auto
    }

    /// Takes one reading and does what cpuplugd would do with it.
    pub fn step(&mut self, sample: Arc<Sample>, actuator: &mut dyn Actuator) -> Step {
        let mut step = Step::default();
        if self.last_stamp.is_some_and(|last| sample.stamp <= last) {
            self.last_stamp = Some(sample.stamp);
            step.skipped = Some(Skipped::ClockWentBack);
            return step;
        }
        self.last_stamp = Some(sample.stamp);
        self.latest_reading = self.engine.first_reading() + self.engine.readings();
        self.remember(&sample);
        if self.start_online.is_none() {
            self.start_online = Some(sample.online.ids.to_vec());
            self.vertical = sample.polarization == Some(Polarization::Vertical);
            step.limits = self.limits(&sample, actuator);
            step.fatal = unreachable_minimum(&self.rules, &step.limits);
            if step.fatal.is_some() {
                return step;
            }
        } else {
            self.polarization(&sample, actuator, &mut step);
            if self.limits_due && !self.vertical {
                step.limits.extend(self.limits(&sample, actuator));
            }
        }
        let pushed = match &mut self.lean {
            Some(before) => {
                // Kept only for a change that may be shown.
                if self.watch.may_show_next_change() {
                    before.clone_from(&self.engine);
                }
                self.engine.push(&sample, &mut NoTrace)
            }
            None => self.engine.push(&sample, &mut self.trace),
        };
        let Some(decision) = pushed else {
            return step;
        };
        self.decide(&sample, decision, actuator, &mut step);
        step
    }

    /// The groups a fault skipped in `decision`, as one notice in plain
    /// words: both groups skipped say so in one line, so an interval that
    /// repeats says the same line again and the log counts it (two lines a
    /// turn alternated and filled the log).
    fn fault_notice(&self, decision: &Decision) -> Option<Notice> {
        use crate::engine::GroupStatus;
        use crate::report::fault_words::{CPU_RULES, MEMORY_RULES, group_fault};
        let words = |status: Option<GroupStatus>, group: &[crate::rules::RuleKind]| match status {
            Some(GroupStatus::Fault(f)) => {
                Some(group_fault(&self.rules, &self.file, &self.trace, group, f))
            }
            _ => None,
        };
        let cpu = words(decision.cpu.map(|c| c.status), &CPU_RULES);
        let mem = words(decision.mem.map(|m| m.status), &MEMORY_RULES);
        Some(match (cpu, mem) {
            (Some(c), Some(m)) if c == m => Notice::Fault {
                group: "CPU and memory",
                fault: c,
            },
            (Some(c), Some(m)) => Notice::Fault {
                group: "CPU and memory",
                fault: format!("CPU: {c}; memory: {m}"),
            },
            (Some(c), None) => Notice::Fault {
                group: "CPU",
                fault: c,
            },
            (None, Some(m)) => Notice::Fault {
                group: "memory",
                fault: m,
            },
            (None, None) => return None,
        })
    }

    fn decide(
        &mut self,
        sample: &Sample,
        decision: Decision,
        actuator: &mut dyn Actuator,
        step: &mut Step,
    ) {
        use crate::engine::GroupStatus;
        if let Some(fatal) = &decision.fatal {
            // cpuplugd carries out the CPU group's action before the memory
            // group stops it.
            if fatal.group == Some("memory") && decision.cpu.is_some() {
                let cpu_only = Decision {
                    mem: None,
                    fatal: None,
                    ..decision.clone()
                };
                step.events = self.controller.decide(&cpu_only, actuator);
            }
            step.fatal = Some(fatal.clone());
            step.decision = Some(decision);
            return;
        }
        if self.lean.is_some() {
            self.trace_if_needed(&decision);
        }
        if let Some(notice) = self.fault_notice(&decision) {
            step.notices.push(notice);
        }
        if let Some(cpu) = decision.cpu.filter(|c| c.limited) {
            step.notices
                .push(Notice::LimitReached(if cpu.hotplug == Some(true) {
                    "maximum cpu"
                } else {
                    "minimum cpu"
                }));
        }
        if let Some(mem) = decision.mem
            && mem.status == GroupStatus::Ok
        {
            let used = match (mem.memplug, mem.memunplug) {
                (Some(true), _) => Some(("cmm_dec", mem.cmm_dec)),
                (_, Some(true)) => Some(("cmm_inc", mem.cmm_inc)),
                _ => None,
            };
            if let Some((name, Some(value))) = used
                && value < 0
            {
                step.notices.push(Notice::Negative { name, value });
            }
            if mem.cmm_pages <= self.rules.settings.cmm_min && mem.memplug == Some(true) {
                step.notices.push(Notice::LimitReached("minimum memory"));
            }
        }
        step.findings = self
            .watch
            .observe(&self.engine, &self.file, &decision, &self.trace);
        if let Some(previous) = self
            .recent
            .len()
            .checked_sub(2)
            .and_then(|i| self.recent.get(i))
        {
            step.hints = self.patterns.observe(previous, sample, &decision);
        }
        step.events = self.controller.decide(&decision, actuator);
        step.decision = Some(decision);
    }

    /// Traces the newest decision where something will read its trace (see
    /// [`Session::trace_only_when_needed`]): deciding again on the same
    /// history gives the same decision, now traced.
    fn trace_if_needed(&mut self, decision: &Decision) {
        use crate::engine::GroupStatus;
        let faulted = matches!(decision.cpu.map(|c| c.status), Some(GroupStatus::Fault(_)))
            || matches!(decision.mem.map(|m| m.status), Some(GroupStatus::Fault(_)));
        let changes = self.watch.changes(decision) && self.watch.may_show_next_change();
        if faulted || changes {
            let _ = self.engine.decide(&mut self.trace);
        }
        if changes
            && let (Some(before), Some(trace)) =
                (self.lean.as_mut(), self.watch.previous_trace_mut())
        {
            let _ = before.decide(trace);
        }
    }

    fn remember(&mut self, sample: &Arc<Sample>) {
        let keep = self.rules.history_depth as usize + 1;
        while self.recent.len() >= keep {
            self.spare = self.recent.pop_front();
        }
        self.recent.push_back(Arc::clone(sample));
    }

    /// cpuplugd's start-up adjustment, per mode: applied when autonomous,
    /// proposed in step-confirm (one proposal, revised to the latest
    /// reading, withdrawn once the limits hold), reported as what would be
    /// done when observing.
    fn limits(&mut self, sample: &Sample, actuator: &mut dyn Actuator) -> Vec<Event> {
        let wanted: Vec<(Action, &'static str)> = start_limits(&self.rules, sample)
            .into_iter()
            .filter(|(action, _)| {
                !(self.vertical && matches!(action, Action::PlugCpu | Action::UnplugCpu))
            })
            .collect();
        match self.controller.mode() {
            Mode::Observe => {
                // What would be done names the CPUs the plugs (or unplugs)
                // would take one after the other.
                let mut named = Named::asking(&wanted, actuator);
                wanted
                    .into_iter()
                    .map(|(action, why)| Event::Would {
                        action,
                        cpu: named.next(action),
                        why: why.to_string(),
                    })
                    .collect()
            }
            Mode::Step => {
                let events = self.controller.propose_limits(&wanted, self.latest_reading);
                self.limits_due = !wanted.is_empty();
                events
            }
            Mode::Auto => {
                self.limits_due = false;
                let mut events = Vec::new();
                // After a CPU write fails, the other CPUs would fail the same way.
                let mut cpu_failed = false;
                for (action, _) in wanted {
                    let cpu = matches!(action, Action::PlugCpu | Action::UnplugCpu);
                    if cpu && cpu_failed {
                        continue;
                    }
                    let applied = apply(action, actuator);
                    cpu_failed |= cpu && applied.iter().any(|e| matches!(e, Event::Failed { .. }));
                    events.extend(applied);
                }
                events
            }
        }
    }

    fn polarization(&mut self, sample: &Sample, actuator: &mut dyn Actuator, step: &mut Step) {
        let vertical = sample.polarization == Some(Polarization::Vertical);
        if vertical == self.vertical {
            return;
        }
        self.vertical = vertical;
        if vertical {
            step.notices.push(Notice::VerticalPolarization);
            if self.acting() {
                let mut failures = Vec::new();
                let start = self.start_online.clone().unwrap_or_default();
                if let Err(e) = actuator.set_online(&start, &mut failures) {
                    failures.push(crate::error_chain::text(&e));
                }
                step.limits
                    .extend(failures.into_iter().map(Event::CpuWriteFailed));
            }
        } else {
            step.notices.push(Notice::HorizontalPolarization);
            step.limits = self.limits(sample, actuator);
        }
    }

    /// Takes new rules (SIGHUP, `r`): the history is kept (the latest
    /// readings are fed to the new rules), the watch goes on, and the limits
    /// of the new rules apply at once, as cpuplugd re-applies them.
    pub fn reload(
        &mut self,
        rules: Arc<RuleSet>,
        file: SourceFile,
        actuator: &mut dyn Actuator,
    ) -> Vec<Event> {
        let taken = self.engine.first_reading() + self.engine.readings();
        self.engine =
            Engine::new(Arc::clone(&rules)).continuing(taken.saturating_sub(self.recent.len()));
        self.patterns = PatternWatch::new(&rules);
        self.rules = rules;
        self.file = file;
        let loads = self.engine.interest().loadavg;
        for sample in &mut self.recent {
            if loads && sample.loadavg_text.is_some() {
                Arc::make_mut(sample).convert_loadavg();
            }
            let _ = self.engine.push(sample, &mut NoTrace);
        }
        match self.recent.back().cloned() {
            Some(latest) if !self.vertical => self.limits(&latest, actuator),
            _ => Vec::new(),
        }
    }
}

/// The CPUs a run of start-limit plugs or unplugs would take, in turn.
#[derive(Default)]
struct Named {
    plugs: std::vec::IntoIter<u32>,
    unplugs: std::vec::IntoIter<u32>,
}

impl Named {
    /// Asks `actuator` once per direction the limits go.
    fn asking(limits: &[(Action, &str)], actuator: &dyn Actuator) -> Self {
        let count = |wanted: Action| limits.iter().filter(|(a, _)| *a == wanted).count();
        let ask = |change, n| {
            if n == 0 {
                Vec::new()
            } else {
                actuator.would_take(change, n)
            }
        };
        Named {
            plugs: ask(CpuChange::Plug, count(Action::PlugCpu)).into_iter(),
            unplugs: ask(CpuChange::Unplug, count(Action::UnplugCpu)).into_iter(),
        }
    }

    /// The CPU `action` would take after the ones named before it.
    fn next(&mut self, action: Action) -> Option<u32> {
        match action.cpu_change()? {
            CpuChange::Plug => self.plugs.next(),
            CpuChange::Unplug => self.unplugs.next(),
        }
    }
}

/// cpuplugd stops when it cannot bring the guest up to CPU_MIN at start
/// (no CPU it may plug is left).
fn unreachable_minimum(rules: &RuleSet, limits: &[Event]) -> Option<Fatal> {
    limits.iter().find_map(|e| match e {
        Event::Failed {
            action: Action::PlugCpu,
            error,
            ..
        } => Some(Fatal {
            message: format!(
                "cannot bring the guest up to CPU_MIN ({}): {error}",
                rules.settings.cpu_min
            ),
            node: None,
            group: Some("cpu"),
        }),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{CpuTicks, Stamp};
    use crate::rules::{SystemFacts, load};

    fn session() -> Session {
        let file = SourceFile::new(
            "t.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"cpustat.user[1] > 1e9\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
        assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
        Session::new(
            Arc::new(outcome.rules),
            file,
            Mode::Observe,
            FlapConfig::default(),
        )
    }

    fn reading(t: i64) -> Sample {
        let ticks = CpuTicks {
            user: t as u64 * 10,
            idle: t as u64 * 90,
            ..CpuTicks::default()
        };
        Sample::bare(Stamp::new(t, 0), ticks, 2, 4)
    }

    /// Steps readings 1 to 3 through a session whose history keeps two
    /// (the third lets go of the first), the first also held by the caller
    /// when `hold`; then reading 4 as the session shares it, the first
    /// reading's place and, if held, the first reading.
    fn fourth_after_the_first_let_go(
        hold: bool,
    ) -> (Arc<Sample>, *const Sample, Option<Arc<Sample>>) {
        let mut s = session();
        let mut actuator = crate::kernel::actuator::NoWrites::default();
        let first = s.shared(reading(1));
        let first_at = Arc::as_ptr(&first);
        let held = hold.then(|| Arc::clone(&first));
        s.step(first, &mut actuator);
        for t in 2..=3 {
            let r = s.shared(reading(t));
            s.step(r, &mut actuator);
        }
        (s.shared(reading(4)), first_at, held)
    }

    #[test]
    fn a_reading_let_go_of_and_held_by_nothing_else_takes_the_next_ones_place() {
        let (fourth, first_at, _) = fourth_after_the_first_let_go(false);
        assert_eq!(Arc::as_ptr(&fourth), first_at, "the first reading's place");
        assert_eq!(fourth.stamp, Stamp::new(4, 0), "holding the new reading");
    }

    #[test]
    fn a_reading_let_go_of_but_held_elsewhere_is_left_as_it_is() {
        let (fourth, first_at, held) = fourth_after_the_first_let_go(true);
        assert_ne!(Arc::as_ptr(&fourth), first_at, "a new place");
        let held = held.expect("held");
        assert_eq!(held.stamp, Stamp::new(1, 0), "the held reading unchanged");
        assert_eq!(fourth.stamp, Stamp::new(4, 0));
    }
}
