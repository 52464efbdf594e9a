//! Acting on a live guest: the check that it may be changed at all (a z/VM
//! guest, or a root that is not this machine's `/`), what arming takes (the
//! lock, the journal) and gives back on the way out, and an actuator that
//! says what it is doing while a slow sysfs write runs, so the screen can
//! show it instead of freezing.

use std::sync::Arc;

use super::log_book::LogKind;
use super::modal::ArmInfo;
use super::options::Options;
use crate::control::controller::Mode;
use crate::control::guard::{self, Guard, GuardError, GuardOptions};
use crate::control::lock;
use crate::control::session::MessageLevel;
use crate::kernel::Sample;
use crate::kernel::actuator::{ActError, Actuator, RootActuator};
use crate::kernel::cpu_choice::CpuChange;

/// Whom an actuator tells what it is doing ("unplugging a CPU") and that
/// it is done (`None`): the screen shows it while the write runs.
pub type Progress = Arc<dyn Fn(Option<String>) + Send + Sync>;

/// Why plugtop will not, or cannot, act on this guest.
#[derive(Debug, thiserror::Error)]
pub enum ArmError {
    /// The machine, the lock or the journal refused it.
    #[error(transparent)]
    Refused(#[from] GuardError),
    /// What the guest is to be put back to is not known yet.
    #[error("no reading yet; try again in a moment")]
    NoReading,
    /// The root's sysfs cannot be opened for writing.
    #[error(transparent)]
    Unwritable(std::io::Error),
}

/// Why the guest could not be fully put back; the journal is kept for
/// `plugtop restore`.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// Nothing could be written to put it back.
    #[error("cannot put the guest back")]
    Unwritable(#[source] std::io::Error),
    /// What is left and how to retry, one line each.
    #[error("{}", .0.join("; "))]
    Incomplete(Vec<String>),
}

/// An actuator that publishes what it is about to do until it is done.
pub struct Tracked<A> {
    pub inner: A,
    pub progress: Progress,
}

impl<A: Actuator> Tracked<A> {
    fn doing<T>(&mut self, what: String, f: impl FnOnce(&mut A) -> T) -> T {
        (self.progress)(Some(what));
        let result = f(&mut self.inner);
        (self.progress)(None);
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
/// The pool is put back only when the memory group of the rules in force
/// is on (`pool`), as cpuplugd does.
fn guard_options(options: &Options, pool: bool) -> GuardOptions {
    GuardOptions {
        allow_non_zvm: options.allow_non_zvm,
        pool,
        screen: true,
        ..GuardOptions::new(&options.root)
    }
}

/// The plugtop that ended without putting the screen's guest back, as
/// its journal tells, if any.
pub fn dead_run(options: &Options) -> Option<guard::DeadRun> {
    guard::dead_run(&guard_options(options, true))
}

/// What arming `root` would take and put back, or why it is refused (the
/// guard's rule: on this machine's own `/` only s390, unless
/// `--allow-non-zvm`; test roots and the simulator need no such option).
pub fn arm_check(
    options: &Options,
    mode: Mode,
    latest: Option<&Sample>,
    pool: bool,
) -> Result<ArmInfo, ArmError> {
    let root = &options.root;
    guard::check_machine(root, options.allow_non_zvm)?;
    let g = guard_options(options, pool);
    // A dead run's journal (or a running plugtop's) refuses before the
    // question, which would promise a restore arming cannot make.
    guard::earlier_run(&g)?;
    // Another holder of the lock (a plugtop daemon, cpuplugd) refuses
    // before the question too, naming its pid (nu53 M3).
    lock::would_refuse(root).map_err(GuardError::from)?;
    let id = crate::kernel::machine::identity(root);
    let guest = match (&id.guest_name, id.zvm_guest, id.s390) {
        (Some(name), true, _) => format!("z/VM guest {name}"),
        (None, true, _) => "a z/VM guest".to_string(),
        (_, false, true) => "s390x, not a z/VM guest (an LPAR?)".to_string(),
        (_, false, false) => "not an s390 z/VM guest".to_string(),
    };
    let sample = latest.ok_or(ArmError::NoReading)?;
    let online = crate::report::words::online_list(&sample.online);
    let restore_to = match sample.cmm_pages.filter(|_| pool) {
        Some(pages) => format!("{online}, cmm_pages {pages}"),
        None if pool => format!("{online}; cmm_pages left as it is"),
        None => format!("{online}; cmm_pages left as it is (memory group off)"),
    };
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

/// Takes the guest through the guard (lock, journal) as it is in `first`;
/// the guard, and the actuator to act with, which tells `progress` what it
/// writes.
pub fn arm(
    options: &Options,
    first: Option<&Sample>,
    progress: &Progress,
    pool: bool,
) -> Result<(Guard, Tracked<RootActuator>), ArmError> {
    let sample = first.ok_or(ArmError::NoReading)?;
    let actuator = RootActuator::new(&options.root).map_err(ArmError::Unwritable)?;
    let guard = Guard::take(&guard_options(options, pool), sample)?;
    let tracked = Tracked {
        inner: actuator,
        progress: Arc::clone(progress),
    };
    Ok((guard, tracked))
}

/// Puts the guest back through the guard with the actuator that acted
/// (a fresh one when there is none); what it did goes to `say`. The
/// journal goes only after a complete restore; otherwise it stays for
/// `plugtop restore`, and the error says what is left and how to retry.
pub fn disarm(
    guard: Guard,
    actuator: Option<Box<dyn Actuator + Send>>,
    say: &mut dyn FnMut(LogKind, String),
) -> Result<(), RestoreError> {
    let outcome = match actuator {
        Some(mut a) => guard.give_back(a.as_mut()),
        None => match RootActuator::new(&guard.options().root) {
            Ok(mut a) => guard.give_back(&mut a),
            Err(e) => return Err(RestoreError::Unwritable(e)),
        },
    };
    for (severity, line) in &outcome.lines {
        let kind = match severity {
            MessageLevel::Info => LogKind::Note,
            _ => LogKind::Problem,
        };
        say(kind, line.clone());
    }
    if outcome.complete {
        return Ok(());
    }
    Err(RestoreError::Incomplete(
        outcome
            .lines
            .into_iter()
            .filter(|(s, _)| *s != MessageLevel::Info)
            .map(|(_, l)| l)
            .collect(),
    ))
}
