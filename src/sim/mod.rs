//! A simulated z/VM guest: a model of CPUs, steal, loadavg and memory
//! reclaim that plays a scenario file. It plugs into the rest of plugtop
//! through the same [`Source`] and [`Actuator`] traits as a real root, so
//! the UI, the engine and the controller cannot tell the difference.

pub mod model;
pub mod published_root;
pub mod report;
pub mod run;
pub mod scenario;

use std::sync::{Arc, Mutex, MutexGuard};

use crate::kernel::actuator::{ActError, Actuator};
use crate::kernel::cpu_choice::{self, CpuChange, CpuFlags, Online};
use crate::kernel::source::SourceError;
use crate::kernel::{Sample, Source};
use crate::rules::SystemFacts;
pub use model::Guest;
pub use scenario::Scenario;

/// One guest, seen by a source and changed by an actuator (which may live
/// on the screen's control thread).
#[derive(Debug, Clone)]
pub struct SharedGuest(Arc<Mutex<Guest>>);

impl SharedGuest {
    /// Shares `guest`.
    pub fn new(guest: Guest) -> Self {
        SharedGuest(Arc::new(Mutex::new(guest)))
    }

    /// The guest, to read or change. (A panic elsewhere while it was held
    /// leaves it as it was: the model's state is plain data.)
    pub fn borrow(&self) -> MutexGuard<'_, Guest> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What the simulated machine offers, for loading rules against it.
pub fn facts(guest: &Guest) -> SystemFacts {
    let sample = guest.sample();
    SystemFacts {
        present_cpus: Ok(sample.present.cpus()),
        cmm_pages: true,
        // The simulator models a z/VM guest (`sim --serve` writes its cpuinfo).
        zvm_guest: Some(true),
        meminfo_names: Some(sample.meminfo.iter().map(|(n, _)| n.to_string()).collect()),
        vmstat_names: Some(sample.vmstat.iter().map(|(n, _)| n.to_string()).collect()),
        origin: format!("the simulated guest of {}", guest.scenario().name),
        history: None,
    }
}

/// Reads the simulated guest: the first reading is the start; every later
/// one first advances the model by one interval.
pub struct SimSource {
    guest: SharedGuest,
    interval: f64,
    started: bool,
    /// Ends the source after the scenario's duration (headless runs).
    pub stop_at_end: bool,
}

impl SimSource {
    /// A source that advances `interval` seconds between readings.
    pub fn new(guest: SharedGuest, interval: f64) -> Self {
        SimSource {
            guest,
            interval: interval.max(0.1),
            started: false,
            stop_at_end: false,
        }
    }
}

impl Source for SimSource {
    fn facts(&mut self) -> SystemFacts {
        facts(&self.guest.borrow())
    }

    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
        let mut guest = self.guest.borrow();
        if self.started {
            if self.stop_at_end && guest.t + self.interval > guest.scenario().length() + 1e-9 {
                return None;
            }
            guest.advance(self.interval);
        }
        self.started = true;
        Some(Ok(guest.sample()))
    }

    fn status(&self) -> Option<String> {
        let guest = self.guest.borrow();
        let scenario = guest.scenario();
        let clock = |t: f64| {
            let t = t.max(0.0) as u64;
            format!("{}:{:02}", t / 60, t % 60)
        };
        if guest.t > scenario.length() {
            return Some(format!(
                "scenario ended at {}; the last phase goes on",
                clock(scenario.length())
            ));
        }
        let phase = scenario
            .phase_at(guest.t)
            .map(|p| p.name.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "phase".into());
        Some(format!(
            "{phase} · {} of {}",
            clock(guest.t),
            clock(scenario.length())
        ))
    }
}

/// Changes the simulated guest, choosing CPUs as cpuplugd would on the
/// served root ([`crate::kernel::cpu_choice`]: by the names `cpuN` in
/// alphabetical order, every CPU hotpluggable and configured), so a
/// simulation, `plugtop sim --serve` and the screen name the same CPU.
pub struct SimActuator {
    guest: SharedGuest,
}

impl SimActuator {
    /// An actuator on `guest`.
    pub fn new(guest: SharedGuest) -> Self {
        SimActuator { guest }
    }

    fn change_one(&mut self, change: CpuChange) -> Result<u32, ActError> {
        let mut g = self.guest.borrow();
        let Some(&id) = cpu_choice::choose(change, &cpu_flags(&g), 1).first() else {
            let why = match change {
                CpuChange::Plug => "every CPU is online",
                CpuChange::Unplug => "only one CPU is online",
            };
            return Err(ActError::NoCpu(change.done(), why.into()));
        };
        g.set_cpu(id, change == CpuChange::Plug);
        Ok(id)
    }
}

/// The model's CPUs as the choice sees them.
fn cpu_flags(guest: &Guest) -> Vec<CpuFlags> {
    (0..guest.scenario().cpus)
        .map(|id| CpuFlags {
            id,
            online: Online::Reads(guest.cpu_online(id).map(i64::from)),
            configure: Some(1),
        })
        .collect()
}

impl Actuator for SimActuator {
    fn plug(&mut self, _failures: &mut Vec<String>) -> Result<u32, ActError> {
        self.change_one(CpuChange::Plug)
    }

    fn unplug(&mut self, _failures: &mut Vec<String>) -> Result<u32, ActError> {
        self.change_one(CpuChange::Unplug)
    }

    fn set_pool(&mut self, pages: i64) -> Result<(), ActError> {
        self.guest.borrow().set_pool(pages);
        Ok(())
    }

    fn set_online(&mut self, wanted: &[u32], _failures: &mut Vec<String>) -> Result<(), ActError> {
        let mut g = self.guest.borrow();
        for id in 0..g.scenario().cpus {
            g.set_cpu(id, wanted.contains(&id));
        }
        if g.online_count() == 0 {
            g.set_cpu(0, true);
        }
        Ok(())
    }

    fn would_take(&self, change: CpuChange, count: usize) -> Vec<u32> {
        cpu_choice::choose(change, &cpu_flags(&self.guest.borrow()), count)
    }
}
