//! Acting on a live guest: the check that it may be changed at all (a z/VM
//! guest, or a root that is not this machine's `/`), what arming takes (the
//! lock, the journal) and gives back on the way out, and an actuator that
//! says what it is doing while a slow sysfs write runs, so the screen can
//! show it instead of freezing.

use std::sync::{Arc, Mutex};

use super::app::{App, ArmInfo, LogKind};
use super::run::Options;
use crate::control::controller::Mode;
use crate::control::guard::{self, Guard, GuardOptions};
use crate::control::lock;
use crate::control::session::MessageLevel;
use crate::kernel::Sample;
use crate::kernel::actuator::{ActError, Actuator, RootActuator};
use crate::kernel::cpu_choice::CpuChange;

/// What the actuator is doing right now ("unplugging a CPU"), and whom to
/// tell when that changes: the screen draws it while the write runs.
#[derive(Default)]
pub struct ProgressState {
    text: Mutex<Option<String>>,
    wake: Mutex<Option<Box<dyn Fn() + Send>>>,
}

/// Shared between the actuator (control thread) and the screen.
pub type Progress = Arc<ProgressState>;

impl ProgressState {
    /// What runs now, if anything.
    pub fn text(&self) -> Option<String> {
        self.text
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Calls `wake` whenever the text changes.
    pub fn on_change(&self, wake: impl Fn() + Send + 'static) {
        *self
            .wake
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Box::new(wake));
    }

    fn set(&self, value: Option<String>) {
        *self
            .text
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = value;
        if let Some(wake) = self
            .wake
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .as_ref()
        {
            wake();
        }
    }
}

/// An actuator that publishes what it is about to do until it is done.
pub struct Tracked<A> {
    pub inner: A,
    pub progress: Progress,
}

impl<A: Actuator> Tracked<A> {
    fn doing<T>(&mut self, what: String, f: impl FnOnce(&mut A) -> T) -> T {
        self.progress.set(Some(what));
        let result = f(&mut self.inner);
        self.progress.set(None);
        result
    }
}

impl<A: Actuator> Actuator for Tracked<A> {
    fn plug(&mut self, failures: &mut Vec<String>) -> Result<u32, ActError> {
        self.doing("plugging a CPU".into(), |a| a.plug(failures))
    }
    fn unplug(&mut self, failures: &mut Vec<String>) -> Result<u32, ActError> {
        self.doing("unplugging a CPU".into(), |a| a.unplug(failures))
    }
    fn set_pool(&mut self, pages: i64) -> Result<(), ActError> {
        self.doing(format!("setting cmm_pages to {pages}"), |a| {
            a.set_pool(pages)
        })
    }
    fn set_online(&mut self, wanted: &[u32], failures: &mut Vec<String>) -> Result<(), ActError> {
        self.doing("putting the start CPUs back".into(), |a| {
            a.set_online(wanted, failures)
        })
    }
    /// Reads only, quickly: nothing to show on the screen.
    fn would_take(&self, change: CpuChange, count: usize) -> Vec<u32> {
        self.inner.would_take(change, count)
    }
}

/// The guard's options for the screen's root.
fn guard_options(options: &Options) -> GuardOptions {
    GuardOptions {
        allow_non_zvm: options.allow_non_zvm,
        ..GuardOptions::new(&options.root)
    }
}

/// What arming `root` would take and put back, or why it is refused (the
/// guard's rule: on this machine's own `/` only s390, unless
/// `--allow-non-zvm`; test roots and the simulator need no such option).
pub fn arm_check(
    options: &Options,
    mode: Mode,
    latest: Option<&Sample>,
) -> Result<ArmInfo, String> {
    let root = &options.root;
    guard::check_machine(root, options.allow_non_zvm).map_err(|e| e.to_string())?;
    let id = crate::kernel::machine::identity(root);
    let guest = match (&id.guest_name, id.zvm_guest, id.s390) {
        (Some(name), true, _) => format!("z/VM guest {name}"),
        (None, true, _) => "a z/VM guest".to_string(),
        (_, false, true) => "s390x, not a z/VM guest (an LPAR?)".to_string(),
        (_, false, false) => "not an s390 z/VM guest".to_string(),
    };
    let sample = latest.ok_or("no reading yet; try again in a moment")?;
    let restore_to = format!(
        "CPUs {} online, cmm_pages {}",
        crate::kernel::recording::export::ranges(&sample.online),
        sample
            .cmm_pages
            .map_or("absent".to_string(), |p| p.to_string())
    );
    let g = guard_options(options);
    Ok(ArmInfo {
        mode,
        host: id.host,
        architecture: id.architecture,
        guest,
        root: root.display().to_string(),
        lock: root.join(lock::LOCK_FILE).display().to_string(),
        journal: g.state.display().to_string(),
        restore_to,
    })
}

/// Takes the guest through the guard (lock, journal) as it is in `first`
/// and gives the app an actuator.
pub fn arm(
    app: &mut App,
    options: &Options,
    first: Option<&Sample>,
    progress: &Progress,
) -> Result<Guard, String> {
    let sample = first.ok_or("no reading yet")?;
    let actuator = RootActuator::new(&options.root).map_err(|e| e.to_string())?;
    let guard = Guard::take(&guard_options(options), sample).map_err(|e| e.to_string())?;
    app.actuator = Some(Box::new(Tracked {
        inner: actuator,
        progress: Arc::clone(progress),
    }));
    Ok(guard)
}

/// Puts the guest back through the guard. The journal goes only after a
/// complete restore; otherwise it stays for `plugtop restore`, and the
/// error says what is left and how to retry.
pub fn disarm(guard: Guard, app: &mut App) -> Result<(), String> {
    let outcome = match app.actuator.as_mut() {
        Some(a) => guard.give_back(a.as_mut()),
        None => match RootActuator::new(&guard.options().root) {
            Ok(mut a) => guard.give_back(&mut a),
            Err(e) => return Err(format!("cannot put the guest back: {e}")),
        },
    };
    app.actuator = None;
    for (severity, line) in &outcome.lines {
        let kind = match severity {
            MessageLevel::Info => LogKind::Note,
            _ => LogKind::Problem,
        };
        app.note(kind, line.clone());
    }
    if outcome.complete {
        return Ok(());
    }
    Err(outcome
        .lines
        .iter()
        .filter(|(s, _)| *s != MessageLevel::Info)
        .map(|(_, l)| l.as_str())
        .collect::<Vec<_>>()
        .join("; "))
}
