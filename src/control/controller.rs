//! The mode plugtop acts in. Observe computes and reports but never writes;
//! step-confirm turns each decision into a pending proposal the user accepts
//! or rejects; autonomous applies every decision, as cpuplugd would. The UI
//! and the headless runner share this type; every change is an [`Event`].

use std::fmt;

use crate::engine::{CpuAction, Decision};
use crate::kernel::Sample;
use crate::kernel::actuator::Actuator;
use crate::kernel::cpu_choice::CpuChange;
use crate::kernel::cpulist::MAX_CPUS;
use crate::rules::RuleSet;

/// How plugtop acts on decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Observe,
    Step,
    Auto,
}

impl Mode {
    /// The short name logs and metrics use as a field or label value.
    pub fn key(self) -> &'static str {
        match self {
            Mode::Observe => "observe",
            Mode::Step => "step",
            Mode::Auto => "auto",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Observe => "observe",
            Mode::Step => "step-confirm",
            Mode::Auto => "autonomous",
        })
    }
}

/// One change to the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    PlugCpu,
    UnplugCpu,
    /// Set `cmm_pages` from `from` to `to`.
    Pool {
        from: i64,
        to: i64,
    },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::PlugCpu => f.write_str("plug a CPU"),
            Action::UnplugCpu => f.write_str("unplug a CPU"),
            Action::Pool { from, to } => write!(f, "set cmm_pages {from} -> {to}"),
        }
    }
}

impl Action {
    /// The change of a CPU this action makes, if it is a CPU action.
    pub fn cpu_change(self) -> Option<CpuChange> {
        match self {
            Action::PlugCpu => Some(CpuChange::Plug),
            Action::UnplugCpu => Some(CpuChange::Unplug),
            Action::Pool { .. } => None,
        }
    }

    /// The action in words, naming the CPU it would take when known
    /// ("plug cpu10"), as cpuplugd's log would name it.
    pub fn naming(self, cpu: Option<u32>) -> String {
        match (self, cpu) {
            (Action::PlugCpu, Some(c)) => format!("plug cpu{c}"),
            (Action::UnplugCpu, Some(c)) => format!("unplug cpu{c}"),
            _ => self.to_string(),
        }
    }
}

/// The CPU the CPU action among `actions` would take now, asked of the
/// actuator only when there is one.
fn cpu_for(actions: &[Action], actuator: &dyn Actuator) -> Option<u32> {
    let change = actions.iter().find_map(|a| a.cpu_change())?;
    actuator.would_take(change, 1).first().copied()
}

/// A decision waiting for the user, in step-confirm mode. While it waits,
/// each interval that asks for the same kind of change brings it to that
/// interval's exact values and reasons, so what the user sees is the
/// latest and what the user approves is what is applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The latest reading that asked for it.
    pub reading: usize,
    /// The reading that first asked for it.
    pub since: usize,
    pub actions: Vec<Action>,
    /// The CPU its CPU action would take (as of the latest reading), when
    /// the actuator can tell.
    pub cpu: Option<u32>,
    /// The rules that decided at the latest reading, with their values.
    pub why: String,
    /// How often it was revised since first proposed.
    pub revisions: u32,
    /// Which of `actions` the latest revision changed (for the screen to mark).
    pub changed: Vec<bool>,
    /// cpuplugd's start limits (CPU_MIN, CPU_MAX, the pool's range), owed
    /// because acting began after the first reading: they stand until
    /// answered, whatever the rules decide meanwhile.
    pub limits: bool,
}

/// Something the controller did or would do; the log and the UI show these.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Observe mode: what would have been done, naming the CPU cpuplugd
    /// would take when the actuator can tell.
    Would {
        action: Action,
        cpu: Option<u32>,
        why: String,
    },
    /// Applied (with the CPU number for CPU actions).
    Applied {
        action: Action,
        cpu: Option<u32>,
    },
    /// Could not be applied.
    Failed {
        action: Action,
        error: String,
        /// No CPU was left to act on (cpuplugd only says so when verbose);
        /// otherwise a write failed.
        nothing_left: bool,
    },
    /// A write on one CPU failed and the next was tried.
    CpuWriteFailed(String),
    Proposed(Proposal),
    /// The pending proposal's actions (or its CPU) changed to the latest
    /// interval's.
    Revised {
        proposal: Proposal,
        before: Vec<Action>,
        before_cpu: Option<u32>,
    },
    /// The user approved exactly these actions; what follows applies them.
    Approved(Proposal),
    /// A pending proposal no longer holds at the latest interval.
    Withdrawn {
        proposal: Proposal,
        why: String,
    },
    Rejected(Proposal),
    /// Accepted, but it no longer held, so nothing was written.
    NotApplied {
        proposal: Proposal,
        why: String,
    },
    ModeChanged {
        from: Mode,
        to: Mode,
    },
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Would { action, cpu, why } => {
                write!(f, "would {} ({why})", action.naming(*cpu))
            }
            Event::Applied {
                action: Action::PlugCpu,
                cpu: Some(c),
            } => write!(f, "plugged cpu{c}"),
            Event::Applied {
                action: Action::UnplugCpu,
                cpu: Some(c),
            } => write!(f, "unplugged cpu{c}"),
            Event::Applied {
                action: Action::Pool { to, .. },
                ..
            } => {
                write!(f, "changing number of pages permanently reserved to {to}")
            }
            Event::Applied { action, .. } => write!(f, "{action}"),
            Event::Failed { action, error, .. } => write!(f, "cannot {action}: {error}"),
            Event::CpuWriteFailed(e) => write!(f, "write failed, trying the next CPU: {e}"),
            Event::Proposed(p) => {
                write!(f, "proposed: {} ({}) — accept or reject", p.what(), p.why)
            }
            Event::Revised {
                proposal,
                before,
                before_cpu,
            } => write!(
                f,
                "proposal revised: {} (was {})",
                proposal.what(),
                list(before, *before_cpu)
            ),
            Event::Approved(p) => write!(f, "approved: {}", p.what()),
            Event::Withdrawn { proposal, why } => {
                write!(f, "withdrawn: {} ({why})", proposal.what())
            }
            Event::Rejected(p) => write!(f, "rejected: {}", p.what()),
            Event::NotApplied { proposal, why } => {
                write!(
                    f,
                    "not applied: {} no longer holds ({why})",
                    proposal.what()
                )
            }
            Event::ModeChanged { from, to } => write!(f, "mode changed from {from} to {to}"),
        }
    }
}

/// `actions` in words, the CPU action naming `cpu`.
fn list(actions: &[Action], cpu: Option<u32>) -> String {
    actions
        .iter()
        .map(|a| a.naming(cpu))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Proposal {
    /// Its actions in words, naming the CPU ("plug cpu10, set cmm_pages
    /// 0 -> 100"): what the box and the log show.
    pub fn what(&self) -> String {
        list(&self.actions, self.cpu)
    }

    /// How many intervals it has stood since it was first proposed.
    pub fn standing(&self) -> usize {
        self.reading.saturating_sub(self.since)
    }
}

/// The actions a decision asks for, and why, in words: all of them
/// together (what a proposal holding them all shows).
pub fn actions_of(decision: &Decision) -> (Vec<Action>, String) {
    let reasons = reasoned_actions(decision);
    let why = reasons
        .iter()
        .map(|(_, why)| why.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    (reasons.into_iter().map(|(a, _)| a).collect(), why)
}

/// Each action a decision asks for with the rule that decided it alone: a
/// CPU action names HOTPLUG or HOTUNPLUG, a pool change MEMPLUG or
/// MEMUNPLUG (or the pool's limits), never the other group's rule.
pub fn reasoned_actions(decision: &Decision) -> Vec<(Action, String)> {
    let mut out = Vec::new();
    if let Some(cpu) = &decision.cpu {
        let online = crate::report::words::cpus(cpu.onumcpus);
        match cpu.action {
            CpuAction::Plug => {
                out.push((Action::PlugCpu, format!("HOTPLUG true, {online} online")))
            }
            CpuAction::Unplug => out.push((
                Action::UnplugCpu,
                format!("HOTUNPLUG true, {online} online"),
            )),
            CpuAction::None => {}
        }
    }
    if let Some(mem) = &decision.mem
        && mem.cmm_pages_new != mem.cmm_pages
    {
        let rule = match (mem.memplug, mem.memunplug) {
            (Some(true), _) => format!("MEMPLUG true, CMM_DEC {}", mem.cmm_dec.unwrap_or(0)),
            (_, Some(true)) => format!("MEMUNPLUG true, CMM_INC {}", mem.cmm_inc.unwrap_or(0)),
            _ => "pool outside CMM_MIN..CMM_MAX".to_string(),
        };
        out.push((
            Action::Pool {
                from: mem.cmm_pages,
                to: mem.cmm_pages_new,
            },
            rule,
        ));
    }
    out
}

/// The actions a decision asks for, without words (autonomous mode needs
/// none: it applies them, and the log says what was done), so an acting
/// interval formats nothing it does not show.
fn actions_only(decision: &Decision) -> Vec<Action> {
    let mut actions = Vec::new();
    if let Some(cpu) = &decision.cpu {
        match cpu.action {
            CpuAction::Plug => actions.push(Action::PlugCpu),
            CpuAction::Unplug => actions.push(Action::UnplugCpu),
            CpuAction::None => {}
        }
    }
    if let Some(mem) = &decision.mem
        && mem.cmm_pages_new != mem.cmm_pages
    {
        actions.push(Action::Pool {
            from: mem.cmm_pages,
            to: mem.cmm_pages_new,
        });
    }
    actions
}

/// Why a decision asks for its actions, in words (all of them together).
fn why_of(decision: &Decision) -> String {
    actions_of(decision).1
}

fn same_kind(a: &[Action], b: &[Action]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Action::Pool { from: f1, to: t1 }, Action::Pool { from: f2, to: t2 }) => {
                (t1 > f1) == (t2 > f2)
            }
            _ => x == y,
        })
}

/// What starting cpuplugd does to a guest outside the rule file's limits,
/// with the reason for each: CPUs up to CPU_MIN or down to CPU_MAX (one
/// action per CPU), the pool into CMM_MIN..CMM_MAX.
pub fn start_limits(rules: &RuleSet, sample: &Sample) -> Vec<(Action, &'static str)> {
    let s = rules.settings;
    let mut actions = Vec::new();
    if rules.cpu_enabled {
        // Never more actions than there are CPUs to act on: a damaged
        // online list (`0-1000000000`) must not queue a billion of them.
        let online = i64::from(sample.online.count);
        let listed = sample.online.ids.len() as i64;
        // The present CPUs the rules were loaded with count too (the
        // reading's list may be older than CPUs the hypervisor added since),
        // but only up to the CPUs the guest can have: that count comes from
        // a list that may have been damaged (`0-1000000000`), and the
        // possible CPUs (fixed at boot) bound every present list. Without
        // them the reading's lists alone bound the plugs.
        let possible = sample
            .possible
            .as_ref()
            .map_or(0, |p| p.ids.len().min(MAX_CPUS as usize) as i64);
        let at_load = rules
            .present_at_load
            .map_or(0, |n| i64::from(n.min(MAX_CPUS)).min(possible));
        let present = (sample.present.ids.len() as i64).max(listed).max(at_load);
        let plugs = (s.cpu_min - online).clamp(0, (present - listed).max(0));
        let unplugs = (online - s.cpu_max).clamp(0, listed);
        for _ in 0..plugs {
            actions.push((Action::PlugCpu, "below CPU_MIN"));
        }
        for _ in 0..unplugs {
            actions.push((Action::UnplugCpu, "above CPU_MAX"));
        }
    }
    if rules.mem_enabled
        && let Some(pages) = sample.cmm_pages
    {
        let to = pages.clamp(s.cmm_min, s.cmm_max.max(s.cmm_min));
        if to != pages {
            actions.push((
                Action::Pool { from: pages, to },
                "pool outside CMM_MIN..CMM_MAX",
            ));
        }
    }
    actions
}

/// Applies `action`, returning the events it caused.
pub fn apply(action: Action, actuator: &mut dyn Actuator) -> Vec<Event> {
    let mut failures = Vec::new();
    let result = match action {
        Action::PlugCpu => actuator.plug(&mut failures).map(Some),
        Action::UnplugCpu => actuator.unplug(&mut failures).map(Some),
        Action::Pool { to, .. } => actuator.set_pool(to).map(|()| None),
    };
    let mut events: Vec<Event> = failures.into_iter().map(Event::CpuWriteFailed).collect();
    events.push(match result {
        Ok(cpu) => Event::Applied { action, cpu },
        Err(e) => Event::Failed {
            action,
            nothing_left: matches!(e, crate::kernel::actuator::ActError::NoCpu(..)),
            error: crate::error_chain::text(&e),
        },
    });
    events
}

/// The mode, the pending proposal, and the latest decision's actions.
#[derive(Debug, Clone)]
pub struct Controller {
    mode: Mode,
    pending: Option<Proposal>,
    latest: Vec<Action>,
}

impl Controller {
    /// A controller in `mode`.
    pub fn new(mode: Mode) -> Self {
        Controller {
            mode,
            pending: None,
            latest: Vec::new(),
        }
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The proposal waiting for the user, in step-confirm mode.
    pub fn pending(&self) -> Option<&Proposal> {
        self.pending.as_ref()
    }

    /// Switches mode; a pending proposal is withdrawn (it was never applied).
    pub fn set_mode(&mut self, mode: Mode) -> Vec<Event> {
        if mode == self.mode {
            return Vec::new();
        }
        let mut events = vec![Event::ModeChanged {
            from: self.mode,
            to: mode,
        }];
        if let Some(p) = self.pending.take() {
            events.push(Event::Withdrawn {
                proposal: p,
                why: format!("switched to {mode}"),
            });
        }
        self.mode = mode;
        events
    }

    /// Handles one interval's decision.
    pub fn decide(&mut self, decision: &Decision, actuator: &mut dyn Actuator) -> Vec<Event> {
        let actions = actions_only(decision);
        self.latest.clone_from(&actions);
        match self.mode {
            // Each "would" names only the rule behind its own action.
            Mode::Observe => {
                let cpu = cpu_for(&actions, actuator);
                reasoned_actions(decision)
                    .into_iter()
                    .map(|(action, why)| Event::Would {
                        action,
                        cpu: cpu.filter(|_| action.cpu_change().is_some()),
                        why,
                    })
                    .collect()
            }
            // Most intervals do nothing: no events to gather.
            Mode::Auto if actions.is_empty() => Vec::new(),
            Mode::Auto => actions
                .into_iter()
                .flat_map(|a| apply(a, actuator))
                .collect(),
            // The start limits come first: the rules propose again once
            // they are answered.
            Mode::Step if self.pending.as_ref().is_some_and(|p| p.limits) => Vec::new(),
            Mode::Step => {
                let cpu = cpu_for(&actions, actuator);
                self.propose(decision.reading, actions, cpu, why_of(decision))
            }
        }
    }

    /// Step-confirm: the same kind of change brings the pending proposal
    /// to this interval's values and reasons (a revision when its actions
    /// or its CPU changed); another kind withdraws it and proposes anew.
    fn propose(
        &mut self,
        reading: usize,
        actions: Vec<Action>,
        cpu: Option<u32>,
        why: String,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        if let Some(p) = &mut self.pending {
            if same_kind(&p.actions, &actions) {
                p.reading = reading;
                p.why = why;
                if p.actions != actions || p.cpu != cpu {
                    let before = std::mem::replace(&mut p.actions, actions);
                    let before_cpu = std::mem::replace(&mut p.cpu, cpu);
                    p.changed = before
                        .iter()
                        .zip(&p.actions)
                        .map(|(a, b)| a != b || (b.cpu_change().is_some() && before_cpu != cpu))
                        .collect();
                    p.revisions += 1;
                    events.push(Event::Revised {
                        proposal: p.clone(),
                        before,
                        before_cpu,
                    });
                }
                return events;
            }
            let why_not = if actions.is_empty() {
                "the rules no longer ask for it".to_string()
            } else {
                format!("the rules now ask for: {}", list(&actions, cpu))
            };
            if let Some(p) = self.pending.take() {
                events.push(Event::Withdrawn {
                    proposal: p,
                    why: why_not,
                });
            }
        }
        if !actions.is_empty() {
            let p = Proposal {
                reading,
                since: reading,
                changed: vec![false; actions.len()],
                actions,
                cpu,
                why,
                revisions: 0,
                limits: false,
            };
            events.push(Event::Proposed(p.clone()));
            self.pending = Some(p);
        }
        events
    }

    /// Accepts the pending proposal as `shown` to the user: exactly its
    /// actions are applied, and only if it is still what the rules ask for,
    /// still what was shown (a revision that arrived after the screen was
    /// drawn is not approved by a key pressed before it), and the CPU it
    /// names is still the one a plug or unplug would take.
    pub fn accept(&mut self, shown: &Proposal, actuator: &mut dyn Actuator) -> Vec<Event> {
        let Some(mut p) = self.pending.take() else {
            return Vec::new();
        };
        if p.actions != shown.actions || p.cpu != shown.cpu {
            let why = "it changed after it was shown; look again".to_string();
            self.pending = Some(p.clone());
            return vec![Event::NotApplied { proposal: p, why }];
        }
        if !p.limits && !same_kind(&p.actions, &self.latest) {
            let why = if self.latest.is_empty() {
                "the latest interval decided nothing".to_string()
            } else {
                format!("the latest interval decided: {}", list(&self.latest, None))
            };
            return vec![Event::NotApplied { proposal: p, why }];
        }
        if let Some(named) = p.cpu {
            let now = cpu_for(&p.actions, actuator);
            if now != Some(named) {
                let why = match now {
                    Some(c) => format!("cpu{c} would be taken now, not cpu{named}; look again"),
                    None => format!("cpu{named} can no longer be taken"),
                };
                let event = Event::NotApplied {
                    proposal: p.clone(),
                    why,
                };
                p.changed = p.actions.iter().map(|a| a.cpu_change().is_some()).collect();
                p.cpu = now;
                p.revisions += 1;
                self.pending = Some(p);
                return vec![event];
            }
        }
        let mut events = vec![Event::Approved(p.clone())];
        events.extend(p.actions.iter().flat_map(|a| apply(*a, actuator)));
        events
    }

    /// Rejects the pending proposal.
    /// Step-confirm's form of the start limits: `wanted` (with why) as one
    /// proposal decided on `reading`, replacing a rules' proposal, revised
    /// while it stands, withdrawn once nothing is wanted.
    pub fn propose_limits(
        &mut self,
        wanted: &[(Action, &'static str)],
        reading: usize,
    ) -> Vec<Event> {
        let actions: Vec<Action> = wanted.iter().map(|(a, _)| *a).collect();
        let mut whys: Vec<&str> = Vec::new();
        for (_, why) in wanted {
            if !whys.contains(why) {
                whys.push(why);
            }
        }
        let why = format!("start limits: {}", whys.join(", "));
        let mut events = Vec::new();
        match self.pending.as_mut() {
            Some(p) if p.limits && actions.is_empty() => {
                if let Some(p) = self.pending.take() {
                    events.push(Event::Withdrawn {
                        proposal: p,
                        why: "the limits hold now".into(),
                    });
                }
            }
            Some(p) if p.limits => {
                p.reading = reading;
                p.why = why;
                if p.actions != actions {
                    let before = std::mem::replace(&mut p.actions, actions);
                    p.changed = (0..p.actions.len())
                        .map(|i| before.get(i) != p.actions.get(i))
                        .collect();
                    p.revisions += 1;
                    events.push(Event::Revised {
                        proposal: p.clone(),
                        before,
                        before_cpu: None,
                    });
                }
            }
            _ if actions.is_empty() => {}
            _ => {
                if let Some(p) = self.pending.take() {
                    events.push(Event::Withdrawn {
                        proposal: p,
                        why: "cpuplugd's start limits come first".into(),
                    });
                }
                // Several CPUs may be owed: the box names none, each is
                // chosen as cpuplugd would when the proposal is applied.
                let p = Proposal {
                    reading,
                    since: reading,
                    changed: vec![false; actions.len()],
                    actions,
                    cpu: None,
                    why,
                    revisions: 0,
                    limits: true,
                };
                events.push(Event::Proposed(p.clone()));
                self.pending = Some(p);
            }
        }
        events
    }

    pub fn reject(&mut self) -> Vec<Event> {
        self.pending
            .take()
            .map(Event::Rejected)
            .into_iter()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{CpuDecision, GroupStatus, MemDecision};
    use crate::kernel::actuator::ActError;

    struct Fake {
        writes: Vec<String>,
        /// The CPU a plug takes (another program may plug it first).
        next_plug: u32,
    }

    impl Default for Fake {
        fn default() -> Self {
            Fake {
                writes: Vec::new(),
                next_plug: 2,
            }
        }
    }

    impl Actuator for Fake {
        fn plug(&mut self, _: &mut Vec<String>) -> Result<u32, ActError> {
            self.writes.push("plug".into());
            Ok(self.next_plug)
        }
        fn unplug(&mut self, _: &mut Vec<String>) -> Result<u32, ActError> {
            self.writes.push("unplug".into());
            Ok(3)
        }
        fn set_pool(&mut self, pages: i64) -> Result<(), ActError> {
            self.writes.push(format!("pool {pages}"));
            Ok(())
        }
        fn set_online(&mut self, _: &[u32], _: &mut Vec<String>) -> Result<(), ActError> {
            Ok(())
        }
        fn would_take(&self, change: CpuChange, count: usize) -> Vec<u32> {
            let first = match change {
                CpuChange::Plug => self.next_plug,
                CpuChange::Unplug => 3,
            };
            (first..).take(count).collect()
        }
    }

    fn decision(reading: usize, action: CpuAction, pool: Option<(i64, i64)>) -> Decision {
        Decision {
            reading,
            cpu: Some(CpuDecision {
                status: GroupStatus::Ok,
                hotplug: Some(action == CpuAction::Plug),
                hotunplug: (action != CpuAction::Plug).then_some(action == CpuAction::Unplug),
                action,
                limited: false,
                onumcpus: 2.0,
            }),
            mem: pool.map(|(from, to)| MemDecision {
                status: GroupStatus::Ok,
                memplug: Some(to < from),
                memunplug: (to >= from).then_some(to > from),
                cmm_inc: Some(100),
                cmm_dec: Some(100),
                cmm_pages: from,
                cmm_pages_new: to,
            }),
            fatal: None,
        }
    }

    #[test]
    fn observe_never_writes() {
        let mut c = Controller::new(Mode::Observe);
        let mut a = Fake::default();
        let events = c.decide(&decision(1, CpuAction::Plug, Some((0, 100))), &mut a);
        assert!(a.writes.is_empty());
        let text: Vec<String> = events.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "would plug cpu2 (HOTPLUG true, 2 CPUs online)",
                "would set cmm_pages 0 -> 100 (MEMUNPLUG true, CMM_INC 100)"
            ],
            "the CPU a plug would take is named, the pool names none; each names its own rule"
        );
        let events = c.decide(&decision(2, CpuAction::Unplug, None), &mut a);
        assert!(matches!(
            events.as_slice(),
            [Event::Would {
                action: Action::UnplugCpu,
                cpu: Some(3),
                ..
            }]
        ));
    }

    #[test]
    fn each_would_names_only_the_rule_behind_it_and_counts_one_cpu_as_one() {
        let mut c = Controller::new(Mode::Observe);
        let mut a = Fake::default();
        let mut d = decision(1, CpuAction::Unplug, Some((100, 0)));
        if let Some(cpu) = &mut d.cpu {
            cpu.onumcpus = 1.0;
        }
        let text: Vec<String> = c
            .decide(&d, &mut a)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            text,
            [
                "would unplug cpu3 (HOTUNPLUG true, 1 CPU online)",
                "would set cmm_pages 100 -> 0 (MEMPLUG true, CMM_DEC 100)"
            ]
        );
        // A pool moved by its limits alone names no rule; the CPU group
        // that decided nothing adds nothing to it.
        let mut limits = decision(2, CpuAction::None, Some((100, 50)));
        if let Some(mem) = &mut limits.mem {
            mem.memplug = Some(false);
            mem.memunplug = Some(false);
        }
        let text: Vec<String> = c
            .decide(&limits, &mut a)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            text,
            ["would set cmm_pages 100 -> 50 (pool outside CMM_MIN..CMM_MAX)"]
        );
        // A proposal holds both actions, so it names both rules.
        let (_, why) = actions_of(&d);
        assert_eq!(
            why,
            "HOTUNPLUG true, 1 CPU online; MEMPLUG true, CMM_DEC 100"
        );
    }

    #[test]
    fn autonomous_applies_everything() {
        let mut c = Controller::new(Mode::Auto);
        let mut a = Fake::default();
        let events = c.decide(&decision(1, CpuAction::Unplug, Some((0, 100))), &mut a);
        assert_eq!(a.writes, vec!["unplug", "pool 100"]);
        assert_eq!(events[0].to_string(), "unplugged cpu3");
        assert_eq!(
            events[1].to_string(),
            "changing number of pages permanently reserved to 100"
        );
    }

    #[test]
    fn step_confirm_proposes_and_applies_only_when_accepted() {
        let mut c = Controller::new(Mode::Step);
        let mut a = Fake::default();
        let events = c.decide(&decision(1, CpuAction::Plug, None), &mut a);
        assert!(matches!(events.as_slice(), [Event::Proposed(_)]));
        assert!(a.writes.is_empty(), "nothing written while pending");
        assert!(
            c.decide(&decision(2, CpuAction::Plug, None), &mut a)
                .is_empty(),
            "still the same proposal"
        );
        assert_eq!(
            c.pending().map(|p| (p.since, p.reading, p.standing())),
            Some((1, 2, 1))
        );
        let shown = c.pending().cloned().expect("pending");
        let events = c.accept(&shown, &mut a);
        assert_eq!(a.writes, vec!["plug"]);
        assert!(matches!(
            events.as_slice(),
            [Event::Approved(_), Event::Applied { cpu: Some(2), .. }]
        ));
        assert_eq!(events[0].to_string(), "approved: plug cpu2");
        assert!(c.pending().is_none());
    }

    #[test]
    fn a_standing_proposal_carries_the_latest_values_and_since_when_it_stands() {
        let mut c = Controller::new(Mode::Step);
        let mut a = Fake::default();
        let online = |reading: usize, n: f64| {
            let mut d = decision(reading, CpuAction::Plug, None);
            if let Some(cpu) = &mut d.cpu {
                cpu.onumcpus = n;
            }
            d
        };
        c.decide(&online(3, 2.0), &mut a);
        for (reading, n) in [(4, 3.0), (5, 5.0), (10, 7.0)] {
            let events = c.decide(&online(reading, n), &mut a);
            assert!(events.is_empty(), "the same proposal: {events:?}");
        }
        let p = c.pending().cloned().expect("pending");
        assert_eq!((p.since, p.reading, p.standing()), (3, 10, 7));
        assert_eq!(p.why, "HOTPLUG true, 7 CPUs online", "the latest values");
        assert_eq!((p.revisions, p.what().as_str()), (0, "plug cpu2"));
        // Another program plugs cpu2: the proposal now names cpu5, marked.
        a.next_plug = 5;
        let events = c.decide(&online(11, 8.0), &mut a);
        let text: Vec<String> = events.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["proposal revised: plug cpu5 (was plug cpu2)"]);
        let p = c.pending().cloned().expect("pending");
        assert_eq!((p.since, p.reading, p.revisions), (3, 11, 1));
        assert_eq!(p.changed, [true]);
    }

    #[test]
    fn y_applies_only_the_cpu_on_screen() {
        let mut c = Controller::new(Mode::Step);
        let mut a = Fake::default();
        c.decide(&decision(1, CpuAction::Plug, None), &mut a);
        let shown = c.pending().cloned().expect("pending");
        assert_eq!(shown.cpu, Some(2));
        // Between the drawing and the key, cpu2 was plugged by someone else.
        a.next_plug = 4;
        let events = c.accept(&shown, &mut a);
        assert!(
            matches!(&events[..], [Event::NotApplied { why, .. }] if why.contains("cpu4 would be taken now, not cpu2")),
            "{events:?}"
        );
        assert!(a.writes.is_empty(), "nothing written");
        let now = c
            .pending()
            .cloned()
            .expect("still pending, naming the new CPU");
        assert_eq!((now.cpu, now.changed.as_slice()), (Some(4), &[true][..]));
        // The box redrawn, `y` applies it.
        let events = c.accept(&now, &mut a);
        assert_eq!(a.writes, ["plug"]);
        assert!(matches!(
            events.as_slice(),
            [Event::Approved(_), Event::Applied { cpu: Some(4), .. }]
        ));
    }

    #[test]
    fn a_proposal_that_no_longer_holds_is_withdrawn_or_not_applied() {
        let mut c = Controller::new(Mode::Step);
        let mut a = Fake::default();
        c.decide(&decision(1, CpuAction::Plug, None), &mut a);
        let events = c.decide(&decision(2, CpuAction::None, None), &mut a);
        assert!(matches!(&events[..], [Event::Withdrawn { why, .. }] if why.contains("no longer")));
        assert!(c.pending().is_none());
        // Accepting after the rules changed their mind writes nothing.
        c.decide(&decision(3, CpuAction::Unplug, None), &mut a);
        let mut stale = c.clone();
        stale.latest = vec![Action::PlugCpu];
        let shown = stale.pending().cloned().expect("pending");
        let events = stale.accept(&shown, &mut a);
        assert!(
            matches!(&events[..], [Event::NotApplied { .. }]),
            "{events:?}"
        );
        assert!(a.writes.is_empty());
    }

    #[test]
    fn rejecting_and_switching_modes_are_logged() {
        let mut c = Controller::new(Mode::Step);
        let mut a = Fake::default();
        c.decide(&decision(1, CpuAction::Plug, None), &mut a);
        assert!(matches!(&c.reject()[..], [Event::Rejected(_)]));
        c.decide(&decision(2, CpuAction::Plug, None), &mut a);
        let events = c.set_mode(Mode::Auto);
        assert_eq!(
            events[0].to_string(),
            "mode changed from step-confirm to autonomous"
        );
        assert!(matches!(events[1], Event::Withdrawn { .. }));
        assert!(a.writes.is_empty());
        assert!(c.set_mode(Mode::Auto).is_empty());
    }

    #[test]
    fn a_moving_pool_target_revises_the_proposal_and_exactly_the_shown_one_is_applied() {
        let mut c = Controller::new(Mode::Step);
        let mut a = Fake::default();
        c.decide(&decision(1, CpuAction::None, Some((0, 119_164))), &mut a);
        let first = c.pending().cloned().expect("pending");
        let events = c.decide(&decision(2, CpuAction::None, Some((0, 36_476))), &mut a);
        assert_eq!(
            events.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec!["proposal revised: set cmm_pages 0 -> 36476 (was set cmm_pages 0 -> 119164)"]
        );
        let shown = c.pending().cloned().expect("still pending");
        assert_eq!(shown.changed, vec![true]);
        assert_eq!(shown.revisions, 1);
        // A key pressed while the old box was on screen approves nothing.
        let stale = c.accept(&first, &mut a);
        assert!(
            matches!(&stale[..], [Event::NotApplied { .. }]),
            "{stale:?}"
        );
        assert!(a.writes.is_empty());
        let events = c.accept(&shown, &mut a);
        assert_eq!(events[0].to_string(), "approved: set cmm_pages 0 -> 36476");
        assert_eq!(a.writes, vec!["pool 36476"], "exactly what was shown");
    }

    #[test]
    fn start_limits_never_ask_for_more_cpus_than_exist() {
        use crate::kernel::cpulist::CpuList;
        use crate::rules::{SourceFile, SystemFacts, load};
        let facts = SystemFacts {
            present_cpus: Ok(4),
            cmm_pages: false,
            zvm_guest: None,
            meminfo_names: None,
            vmstat_names: None,
            origin: "test".into(),
            history: None,
        };
        let file = SourceFile::new(
            "r.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"2\"\nCPU_MAX=\"2\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = load(&file, &facts).rules;
        let mut sample = Sample {
            meminfo: crate::kernel::fields::FieldTable::from_pairs([("MemFree", 1.0)]),
            vmstat: crate::kernel::fields::FieldTable::from_pairs([("pgpgin", 1.0)]),
            online: CpuList::default(),
            present: CpuList::parse(b"0-3\n").unwrap_or_default(),
            ..Sample::bare(
                crate::kernel::Stamp::new(1, 0),
                crate::kernel::CpuTicks::default(),
                0,
                0,
            )
        };
        // A damaged list: a billion CPUs counted, none listed.
        sample.online = CpuList::parse(b"0-1000000000\n").unwrap_or_default();
        let actions = start_limits(&rules, &sample);
        assert!(actions.is_empty(), "{} actions", actions.len());
        sample.online = CpuList::parse(b"0-3\n").unwrap_or_default();
        assert_eq!(
            start_limits(&rules, &sample).len(),
            2,
            "two of four unplugged"
        );
        // A reading whose present list is older than the rules (CPUs were
        // added since it was read): CPU_MIN is reached as cpuplugd, which
        // reads the present CPUs afresh, reaches it.
        let file = SourceFile::new(
            "r.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"3\"\nCPU_MAX=\"4\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = load(&file, &facts).rules;
        sample.online = CpuList::parse(b"0\n").unwrap_or_default();
        sample.present = CpuList::parse(b"0\n").unwrap_or_default();
        sample.possible = CpuList::parse(b"0-3\n");
        let actions = start_limits(&rules, &sample);
        assert_eq!(
            actions,
            vec![(Action::PlugCpu, "below CPU_MIN"); 2],
            "one CPU online of four present"
        );
    }

    /// A present list damaged when the rules were loaded (a billion CPUs
    /// counted, so CPU_MIN may ask for 100,000) queues no more plugs than
    /// the guest has possible CPUs, and none when those are not known and
    /// the reading lists no present CPU: never one per CPU a count names.
    #[test]
    fn start_limits_plug_no_more_than_possible_cpus_after_a_damaged_present_list() {
        use crate::kernel::cpulist::CpuList;
        use crate::rules::{SourceFile, SystemFacts, load};
        let facts = SystemFacts::any_machine(1_000_000_001, "test");
        let file = SourceFile::new(
            "r.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"100000\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = load(&file, &facts).rules;
        assert!(rules.cpu_enabled, "the count allows CPU_MIN");
        let mut sample = Sample::bare(crate::kernel::Stamp::new(1, 0), Default::default(), 1, 1);
        sample.online = CpuList::parse(b"0\n").unwrap_or_default();
        sample.present = CpuList::parse(b"0-1000000000\n").unwrap_or_default();
        sample.possible = CpuList::parse(b"0-3\n");
        let plugs = start_limits(&rules, &sample);
        assert_eq!(plugs.len(), 3, "three possible CPUs offline");
        assert!(plugs.iter().all(|(a, _)| *a == Action::PlugCpu));
        sample.possible = None;
        assert_eq!(start_limits(&rules, &sample).len(), 0);
    }
}
