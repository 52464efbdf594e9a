//! Acting on a live guest: the check that it may be changed at all (a z/VM
//! guest, or a root that is not this machine's `/`), what arming takes (the
//! lock, the journal) and gives back on the way out, and an actuator that
//! says what it is doing while a slow sysfs write runs, so the screen can
//! show it instead of freezing.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::app::{App, ArmInfo};
use super::run::Options;
use crate::control::controller::Mode;
use crate::control::journal::{self, StartState};
use crate::control::lock::{self, GuestLock};
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

/// What an armed (acting) UI holds, released and undone on quit.
pub struct Armed {
    _lock: GuestLock,
    state: PathBuf,
    root: PathBuf,
    start: StartState,
}

/// Whether this root is this machine's own `/`.
fn is_own_root(root: &Path) -> bool {
    std::fs::canonicalize(root).is_ok_and(|r| r == Path::new("/"))
}

/// What arming `root` would take and put back, or why it is refused: on
/// this machine's own `/` only an s390 z/VM guest may be changed, unless
/// `--allow-non-zvm` says otherwise. Test roots and the simulator need no
/// such option.
pub fn arm_check(
    options: &Options,
    mode: Mode,
    latest: Option<&Sample>,
) -> Result<ArmInfo, String> {
    let root = &options.root;
    let id = crate::kernel::machine::identity(root);
    let guest = match (&id.guest_name, id.zvm_guest, id.s390) {
        (Some(name), true, _) => format!("z/VM guest {name}"),
        (None, true, _) => "a z/VM guest".to_string(),
        (_, false, true) => "s390x, not a z/VM guest (an LPAR?)".to_string(),
        (_, false, false) => "not an s390 z/VM guest".to_string(),
    };
    if is_own_root(root) && !id.zvm_guest && !options.allow_non_zvm {
        return Err(format!(
            "{} is {} ({}): cpuplugd's rules are meant for z/VM guests, and {mode} mode would take this machine's CPUs offline. Start plugtop with --allow-non-zvm to act anyway, or try it on `plugtop --sim SCENARIO`.",
            id.host, guest, id.architecture
        ));
    }
    let sample = latest.ok_or("no reading yet; try again in a moment")?;
    let restore_to = format!(
        "CPUs {} online, cmm_pages {}",
        crate::kernel::recording::export::ranges(&sample.online),
        sample
            .cmm_pages
            .map_or("absent".to_string(), |p| p.to_string())
    );
    Ok(ArmInfo {
        mode,
        host: id.host,
        architecture: id.architecture,
        guest,
        root: root.display().to_string(),
        lock: root.join(lock::LOCK_FILE).display().to_string(),
        journal: journal::default_path(root).display().to_string(),
        restore_to,
    })
}

/// Takes the lock, writes the journal and gives the app an actuator.
pub fn arm(
    app: &mut App,
    root: &Path,
    first: Option<&Sample>,
    progress: &Progress,
) -> Result<Armed, String> {
    let lock = lock::acquire(root).map_err(|e| e.to_string())?;
    let actuator = RootActuator::new(root).map_err(|e| e.to_string())?;
    let state = journal::default_path(root);
    if let Some(old) = journal::read(&state).map_err(|e| e.to_string())? {
        return Err(format!(
            "a plugtop (pid {}) did not restore this guest; run `plugtop restore` first",
            old.pid
        ));
    }
    let sample = first.ok_or("no reading yet")?;
    if let Some(why) = journal::inexact(&sample.online, sample.cmm_pages) {
        return Err(why);
    }
    let start = StartState {
        pid: std::process::id(),
        root: root.display().to_string(),
        online: sample.online.ids.clone(),
        cmm_pages: sample.cmm_pages,
    };
    journal::write(root, &state, &start).map_err(|e| e.to_string())?;
    crate::daemon::install_panic_hook(root.to_path_buf(), state.clone());
    app.actuator = Some(Box::new(Tracked {
        inner: actuator,
        progress: Arc::clone(progress),
    }));
    Ok(Armed {
        _lock: lock,
        state,
        root: root.to_path_buf(),
        start,
    })
}

/// Puts the guest back. The journal goes only after a complete restore;
/// otherwise it stays for `plugtop restore`, and the error says what is left.
pub fn disarm(armed: Armed, app: &mut App) -> Result<(), String> {
    let mut failures = Vec::new();
    match app.actuator.as_mut() {
        Some(a) => {
            if let Err(e) = journal::restore(a.as_mut(), &armed.start, &mut failures) {
                failures.push(e.to_string());
            }
        }
        None => failures.push("no actuator".into()),
    }
    app.actuator = None;
    if failures.is_empty() {
        let _ = journal::remove(&armed.root, &armed.state);
        lock::release(&armed.root);
        return Ok(());
    }
    Err(format!(
        "the guest was not fully put back ({}); the journal {} is kept: fix the cause and run `plugtop restore --root {}`",
        failures.join("; "),
        armed.state.display(),
        armed.root.display()
    ))
}
