//! The mode plugtop acts in. Observe computes and reports but never writes;
//! step-confirm turns each decision into a pending proposal the user accepts
//! or rejects; autonomous applies every decision, as cpuplugd would. The UI
//! and the headless runner share this type; every change is an [`Event`].

use std::fmt;

use crate::engine::{CpuAction, Decision};
use crate::kernel::Sample;
use crate::kernel::actuator::Actuator;
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

/// A decision waiting for the user, in step-confirm mode. While it waits,
/// each interval that asks for the same kind of change revises it to that
/// interval's exact values, so what the user approves is what is applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The reading it was (last) decided on.
    pub reading: usize,
    pub actions: Vec<Action>,
    /// The rules that decided, with their values.
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
    /// Observe mode: what would have been done.
    Would {
        action: Action,
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
    /// The pending proposal now carries the latest interval's values.
    Revised {
        proposal: Proposal,
        before: Vec<Action>,
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
            Event::Would { action, why } => write!(f, "would {action} ({why})"),
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
            Event::Proposed(p) => write!(
                f,
                "proposed: {} ({}) — accept or reject",
                list(&p.actions),
                p.why
            ),
            Event::Revised { proposal, before } => write!(
                f,
                "proposal revised: {} (was {})",
                list(&proposal.actions),
                list(before)
            ),
            Event::Approved(p) => write!(f, "approved: {}", list(&p.actions)),
            Event::Withdrawn { proposal, why } => {
                write!(f, "withdrawn: {} ({why})", list(&proposal.actions))
            }
            Event::Rejected(p) => write!(f, "rejected: {}", list(&p.actions)),
            Event::NotApplied { proposal, why } => {
                write!(
                    f,
                    "not applied: {} no longer holds ({why})",
                    list(&proposal.actions)
                )
            }
            Event::ModeChanged { from, to } => write!(f, "mode changed from {from} to {to}"),
        }
    }
}

fn list(actions: &[Action]) -> String {
    actions
        .iter()
        .map(Action::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The actions a decision asks for, and why, in words.
pub fn actions_of(decision: &Decision) -> (Vec<Action>, String) {
    let mut actions = Vec::new();
    let mut why = Vec::new();
    if let Some(cpu) = &decision.cpu {
        match cpu.action {
            CpuAction::Plug => {
                actions.push(Action::PlugCpu);
                why.push(format!("HOTPLUG true, {} CPUs online", cpu.onumcpus));
            }
            CpuAction::Unplug => {
                actions.push(Action::UnplugCpu);
                why.push(format!("HOTUNPLUG true, {} CPUs online", cpu.onumcpus));
            }
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
        let rule = match (mem.memplug, mem.memunplug) {
            (Some(true), _) => format!("MEMPLUG true, CMM_DEC {}", mem.cmm_dec.unwrap_or(0)),
            (_, Some(true)) => format!("MEMUNPLUG true, CMM_INC {}", mem.cmm_inc.unwrap_or(0)),
            _ => "pool outside CMM_MIN..CMM_MAX".to_string(),
        };
        why.push(rule);
    }
    (actions, why.join("; "))
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
        let present = (sample.present.ids.len() as i64).max(listed);
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
            error: e.to_string(),
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
    latest_why: String,
}

impl Controller {
    /// A controller in `mode`.
    pub fn new(mode: Mode) -> Self {
        Controller {
            mode,
            pending: None,
            latest: Vec::new(),
            latest_why: String::new(),
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
        let (actions, why) = actions_of(decision);
        self.latest = actions.clone();
        self.latest_why = why.clone();
        match self.mode {
            Mode::Observe => actions
                .into_iter()
                .map(|action| Event::Would {
                    action,
                    why: why.clone(),
                })
                .collect(),
            Mode::Auto => actions
                .into_iter()
                .flat_map(|a| apply(a, actuator))
                .collect(),
            // The start limits come first: the rules propose again once
            // they are answered.
            Mode::Step if self.pending.as_ref().is_some_and(|p| p.limits) => Vec::new(),
            Mode::Step => {
                let mut events = Vec::new();
                if let Some(p) = &mut self.pending {
                    if same_kind(&p.actions, &actions) {
                        if p.actions != actions {
                            let before = std::mem::replace(&mut p.actions, actions);
                            p.changed =
                                before.iter().zip(&p.actions).map(|(a, b)| a != b).collect();
                            p.revisions += 1;
                            p.reading = decision.reading;
                            p.why = why;
                            events.push(Event::Revised {
                                proposal: p.clone(),
                                before,
                            });
                        }
                        return events;
                    }
                    let why_not = if actions.is_empty() {
                        "the rules no longer ask for it".to_string()
                    } else {
                        format!("the rules now ask for: {}", list(&actions))
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
                        reading: decision.reading,
                        changed: vec![false; actions.len()],
                        actions,
                        why,
                        revisions: 0,
                        limits: false,
                    };
                    events.push(Event::Proposed(p.clone()));
                    self.pending = Some(p);
                }
                events
            }
        }
    }

    /// Accepts the pending proposal as `shown` to the user: exactly its
    /// actions are applied, and only if it is still what the rules ask for
    /// and still what was shown (a revision that arrived after the screen
    /// was drawn is not approved by a key pressed before it).
    pub fn accept(&mut self, shown: &Proposal, actuator: &mut dyn Actuator) -> Vec<Event> {
        let Some(p) = self.pending.take() else {
            return Vec::new();
        };
        if p.actions != shown.actions {
            let why = "it changed after it was shown; look again".to_string();
            self.pending = Some(p.clone());
            return vec![Event::NotApplied { proposal: p, why }];
        }
        if !p.limits && !same_kind(&p.actions, &self.latest) {
            let why = if self.latest.is_empty() {
                "the latest interval decided nothing".to_string()
            } else {
                format!("the latest interval decided: {}", list(&self.latest))
            };
            return vec![Event::NotApplied { proposal: p, why }];
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
                if p.actions != actions {
                    let before = std::mem::replace(&mut p.actions, actions);
                    p.changed = (0..p.actions.len())
                        .map(|i| before.get(i) != p.actions.get(i))
                        .collect();
                    p.revisions += 1;
                    p.reading = reading;
                    p.why = why;
                    events.push(Event::Revised {
                        proposal: p.clone(),
                        before,
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
                let p = Proposal {
                    reading,
                    changed: vec![false; actions.len()],
                    actions,
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

    #[derive(Default)]
    struct Fake {
        writes: Vec<String>,
    }

    impl Actuator for Fake {
        fn plug(&mut self, _: &mut Vec<String>) -> Result<u32, ActError> {
            self.writes.push("plug".into());
            Ok(2)
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
        assert_eq!(events.len(), 2);
        assert!(
            events[0]
                .to_string()
                .starts_with("would plug a CPU (HOTPLUG true")
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
        assert_eq!(c.pending().map(|p| p.reading), Some(1));
        let shown = c.pending().cloned().expect("pending");
        let events = c.accept(&shown, &mut a);
        assert_eq!(a.writes, vec!["plug"]);
        assert!(matches!(
            events.as_slice(),
            [Event::Approved(_), Event::Applied { cpu: Some(2), .. }]
        ));
        assert_eq!(events[0].to_string(), "approved: plug a CPU");
        assert!(c.pending().is_none());
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
            meminfo_names: None,
            vmstat_names: None,
            origin: "test".into(),
        };
        let file = SourceFile::new(
            "r.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"2\"\nCPU_MAX=\"2\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = load(&file, &facts).rules;
        let mut sample = Sample {
            stamp: crate::kernel::Stamp::new(1, 0),
            ticks: crate::kernel::CpuTicks::default(),
            per_cpu: Vec::new(),
            loadavg: 0.0,
            runnable: 0.0,
            meminfo: crate::kernel::fields::FieldTable::from_pairs([("MemFree", 1.0)]),
            vmstat: crate::kernel::fields::FieldTable::from_pairs([("pgpgin", 1.0)]),
            online: CpuList::default(),
            present: CpuList::parse(b"0-3\n").unwrap_or_default(),
            possible: None,
            cpus: Vec::new(),
            cmm_pages: None,
            polarization: None,
            proc_bytes: Default::default(),
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
    }
}
