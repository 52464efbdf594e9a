//! What the rules decided and what became of it: decided, applied and
//! failed actions, every series created at 0 when plugtop starts (so the
//! first failure is an increase a query sees, not a series born at 1), and
//! counted through handles kept from the start (an interval allocates
//! nothing here).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::optional_gauge::OptionalGauge;
use super::{Labels, labels, register};
use crate::control::controller::{Action, Event};
use crate::engine::{CpuAction, Decision};

/// The `action` label values, indexed by [`index`].
pub const ACTIONS: [&str; 4] = ["plug", "unplug", "pool_up", "pool_down"];

/// Why an action failed: a write was refused (the kernel, or a file that
/// is not where or what it should be), or no CPU could be taken at all.
pub const REASONS: [&str; 2] = ["write", "no_cpu"];

/// The counters, by action (and reason).
#[derive(Debug)]
pub struct ActionCounters {
    decided: [Counter; 4],
    applied: [Counter; 4],
    /// `no_cpu` only for the CPU actions.
    failed: [[Option<Counter>; 2]; 4],
    last_action: OptionalGauge,
}

/// The position of `action` in [`ACTIONS`].
fn index(action: &Action) -> usize {
    match action {
        Action::PlugCpu => 0,
        Action::UnplugCpu => 1,
        Action::Pool { from, to } if to > from => 2,
        Action::Pool { .. } => 3,
    }
}

impl ActionCounters {
    /// Registers the families with every known series at 0.
    pub fn register(r: &mut Registry) -> Self {
        let decided: Family<Labels, Counter> = register(r, "decided_actions");
        let applied: Family<Labels, Counter> = register(r, "applied_actions");
        let failed: Family<Labels, Counter> = register(r, "failed_actions");
        let by_action = |f: &Family<Labels, Counter>| {
            ACTIONS.map(|a| f.get_or_create_owned(&labels(&[("action", a)])))
        };
        let failed = std::array::from_fn(|i| {
            std::array::from_fn(|j| {
                (i < 2 || REASONS[j] == "write").then(|| {
                    failed.get_or_create_owned(&labels(&[
                        ("action", ACTIONS[i]),
                        ("reason", REASONS[j]),
                    ]))
                })
            })
        });
        let last_action = OptionalGauge::default();
        r.register(
            "last_action_timestamp_seconds",
            super::families::help("last_action_timestamp_seconds"),
            last_action.clone(),
        );
        ActionCounters {
            decided: by_action(&decided),
            applied: by_action(&applied),
            failed,
            last_action,
        }
    }

    /// What the rules decided at this interval, whatever the mode does
    /// with it (observe's "would", a proposal, a write).
    pub fn decided(&self, d: &Decision) {
        // cpuplugd carries out the CPU group's action before a memory
        // group's fatal stops it; any other fatal stops both.
        let memory_fatal = d.fatal.as_ref().map(|f| f.group == Some("memory"));
        if memory_fatal == Some(false) {
            return;
        }
        if let Some(c) = &d.cpu {
            match c.action {
                CpuAction::Plug => self.decided[0].inc(),
                CpuAction::Unplug => self.decided[1].inc(),
                CpuAction::None => 0,
            };
        }
        if let Some(m) = &d.mem
            && memory_fatal.is_none()
            && m.cmm_pages_new != m.cmm_pages
        {
            self.decided[if m.cmm_pages_new > m.cmm_pages { 2 } else { 3 }].inc();
        }
    }

    /// Writes done and failed, as the controller reported them; `at` is
    /// the reading's time. A failure with nothing left to take after
    /// writes failed on the way is a write failure, not "no CPU".
    pub fn outcomes(&self, events: &[Event], at: f64) {
        let mut writes_failed = false;
        for e in events {
            match e {
                Event::CpuWriteFailed(_) => writes_failed = true,
                Event::Applied { action, .. } => {
                    self.applied[index(action)].inc();
                    self.last_action.set(Some(at));
                    writes_failed = false;
                }
                Event::Failed {
                    action,
                    nothing_left,
                    ..
                } => {
                    let reason = usize::from(*nothing_left && !writes_failed);
                    let row = &self.failed[index(action)];
                    if let Some(c) = row[reason].as_ref().or(row[0].as_ref()) {
                        c.inc();
                    }
                    writes_failed = false;
                }
                _ => {}
            }
        }
    }
}
