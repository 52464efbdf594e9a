//! Changing the guest: CPUs on and off through sysfs, the CMM pool through
//! `cmm_pages`, always below one root directory. A plug or an unplug takes
//! the CPU cpuplugd takes ([`super::cpu_choice`]: the first by directory
//! name, `cpu10` before `cpu2`, trying the next when a write fails), reading
//! the files it decides on just before each write; the last online CPU is
//! never taken offline.
//!
//! Putting back an exact set of CPUs ([`Actuator::set_online`]: the journal's
//! restore, vertical polarization) differs from cpuplugd on purpose: cpuplugd
//! plugs or unplugs by name order until the *count* of online CPUs is the
//! start count, which can leave other CPUs online than at start; plugtop
//! puts back exactly the CPUs that were online.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::cpu_choice::{CpuChange, CpuFlags, Online};
use super::cpu_dir::CpuDir;
use super::sample::Sample;
use crate::kernel::fs::{FsError, Root, WriteTarget};
use crate::kernel::root::paths;

/// Why an action could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    #[error("no CPU can be {0}: {1}")]
    NoCpu(&'static str, String),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("no more writes: the guest was put back after a panic")]
    Stopped,
}

/// Held for every write to the guest, so that a panic hook's restore never
/// interleaves with a write another thread has begun.
static WRITING: Mutex<()> = Mutex::new(());

/// Set when a panic hook puts the guest back: from then on no other thread
/// may write, or a plug still on its way would undo the restore.
static STOPPED: AtomicBool = AtomicBool::new(false);

/// For a panic hook: waits (at most `patience`) for a write in flight to
/// finish, stops every later write, and gives an actuator that may still
/// write, for the restore. The guard keeps other threads out meanwhile.
pub fn stop_writes_for_restore(
    root: &Path,
    patience: Duration,
) -> (
    Option<MutexGuard<'static, ()>>,
    std::io::Result<RootActuator>,
) {
    let deadline = Instant::now() + patience;
    let guard = loop {
        match WRITING.try_lock() {
            Ok(g) => break Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => break Some(p.into_inner()),
            // The panicking thread may hold it itself: give up waiting.
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() >= deadline => break None,
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    };
    STOPPED.store(true, Ordering::SeqCst);
    let actuator = RootActuator::new(root).map(|mut a| {
        a.after_panic = true;
        a
    });
    (guard, actuator)
}

/// Something that changes CPUs and the pool: the real guest below a root,
/// the simulator, or nothing at all (observe mode).
pub trait Actuator {
    /// Brings one CPU online; returns its number. Failed attempts on other
    /// CPUs are reported through `failures`.
    fn plug(&mut self, failures: &mut Vec<String>) -> Result<u32, ActError>;
    /// Takes one CPU offline; returns its number.
    fn unplug(&mut self, failures: &mut Vec<String>) -> Result<u32, ActError>;
    /// Sets `cmm_pages`.
    fn set_pool(&mut self, pages: i64) -> Result<(), ActError>;
    /// Puts exactly these CPUs online (others offline, where possible).
    fn set_online(&mut self, wanted: &[u32], failures: &mut Vec<String>) -> Result<(), ActError>;
    /// The CPUs the next `count` plugs or unplugs would take, in order, were
    /// every write to succeed; empty when it cannot tell. Reads, never
    /// writes: "would …" messages and proposals name these CPUs, so it is
    /// asked only when an action is decided.
    fn would_take(&self, change: CpuChange, count: usize) -> Vec<u32>;

    /// The reading an interval decides on, before anything is done with
    /// it: an actuator of a real guest keeps its listing of the CPUs while
    /// the reading's online and present lists stay as they were (see
    /// [`CpuDir::lists_read`]). Nothing to do for the others.
    fn reading(&mut self, _sample: &Sample) {}
}

/// The guest below a root directory (`/` in production). Writes go through
/// [`Root::write_existing`]: resolved beneath the root, so no link (even
/// one swapped in while plugtop works) leads them outside.
#[derive(Debug, Clone)]
pub struct RootActuator {
    cpus: CpuDir,
    root: Arc<Root>,
    /// The panic hook's restore: it already holds the write lock.
    after_panic: bool,
    /// `cmm_pages`, kept open between the pool's writes.
    pool: WriteTarget,
}

impl RootActuator {
    /// An actuator for the guest below `root`.
    pub fn new(root: &Path) -> std::io::Result<Self> {
        Ok(RootActuator {
            cpus: CpuDir::new(root),
            root: Arc::new(Root::open(root)?),
            after_panic: false,
            pool: WriteTarget::default(),
        })
    }

    /// Writes `text` to `rel` below the root, under the write lock and the
    /// test build's gates, as every write to the guest is.
    fn write(&self, rel: &str, text: &str) -> Result<(), ActError> {
        let _guard = self.gate(rel)?;
        let written = self.root.write_existing(Path::new(rel), text.as_bytes());
        crate::faults::wait_for_write_acknowledged();
        Ok(written?)
    }

    /// What every write to the guest passes first: the write lock (held
    /// until the guard returned is dropped) and the test build's gates.
    fn gate(&self, rel: &str) -> Result<Option<MutexGuard<'static, ()>>, ActError> {
        let guard = if self.after_panic {
            None
        } else {
            let guard = WRITING.lock().unwrap_or_else(|p| p.into_inner());
            if STOPPED.load(Ordering::SeqCst) {
                return Err(ActError::Stopped);
            }
            Some(guard)
        };
        crate::faults::wait_at_write_gate();
        if crate::faults::write_fails(self.root.path(), rel) {
            let injected = std::io::Error::other("the write failed (injected)");
            return Err(ActError::Fs(FsError::io(
                &self.root.path().join(rel),
                injected,
            )));
        }
        Ok(guard)
    }

    fn set_cpu(&self, id: u32, online: bool) -> Result<(), ActError> {
        let written = self.write(
            &format!("{}/cpu{id}/online", paths::CPU_DIR),
            if online { "1\n" } else { "0\n" },
        );
        self.cpus.wrote(id, online, written.is_ok());
        written
    }

    /// Walks the CPUs in cpuplugd's order and writes to the first that
    /// `change` may take, the next when a write fails. Each CPU's files are
    /// read once, when it is reached, after any failed write before it;
    /// before an unplug the `online` files of the CPUs not reached yet are
    /// read, and the last online CPU is refused.
    fn change_one(&self, change: CpuChange, failures: &mut Vec<String>) -> Result<u32, ActError> {
        let ids = self.cpus.ids();
        let (mut tried, mut unconfigurable) = (0, 0);
        let mut read: Vec<CpuFlags> = Vec::new();
        for &id in &ids {
            let cpu = self.cpus.flags(id, change == CpuChange::Plug);
            read.push(cpu);
            if !cpu.wanted(change) {
                if change == CpuChange::Plug
                    && cpu.online == Online::Reads(Some(0))
                    && cpu.configure.is_none()
                {
                    unconfigurable += 1;
                }
                continue;
            }
            if change == CpuChange::Unplug && !self.cpus.another_online(&ids, id, &read) {
                return Err(ActError::NoCpu(
                    change.done(),
                    format!("cpu{id} is the last online CPU"),
                ));
            }
            tried += 1;
            match self.set_cpu(id, change == CpuChange::Plug) {
                Ok(()) => return Ok(id),
                Err(e) => {
                    failures.push(format!("cpu{id}: {}", crate::error_chain::text(&e)));
                    // What a failed write left is read again if asked.
                    read.retain(|c| c.id != id);
                }
            }
        }
        let why = match (tried, unconfigurable) {
            (0, 0) => "no candidate".to_string(),
            (0, n) => format!(
                "{n} offline CPUs have no `configure` file, and cpuplugd plugs only CPUs whose configure reads 1"
            ),
            (n, _) => format!("all {n} candidates failed"),
        };
        Err(ActError::NoCpu(change.done(), why))
    }
}

impl Actuator for RootActuator {
    /// Like cpuplugd, only a CPU whose `configure` reads 1 is plugged: an
    /// offline CPU without a `configure` file is never brought online.
    fn plug(&mut self, failures: &mut Vec<String>) -> Result<u32, ActError> {
        self.change_one(CpuChange::Plug, failures)
    }

    fn unplug(&mut self, failures: &mut Vec<String>) -> Result<u32, ActError> {
        self.change_one(CpuChange::Unplug, failures)
    }

    /// Through `cmm_pages` kept open ([`Root::write_kept`]): the pool
    /// moves every interval the memory rules act.
    fn set_pool(&mut self, pages: i64) -> Result<(), ActError> {
        let _guard = self.gate(paths::CMM_PAGES)?;
        let text = format!("{pages}\n");
        let written =
            self.root
                .write_kept(&mut self.pool, Path::new(paths::CMM_PAGES), text.as_bytes());
        crate::faults::wait_for_write_acknowledged();
        Ok(written?)
    }

    /// Only CPUs whose `online` file can be read are changed; one that
    /// reads anything but 1 counts as offline.
    fn set_online(&mut self, wanted: &[u32], failures: &mut Vec<String>) -> Result<(), ActError> {
        for id in self.cpus.ids() {
            let want = wanted.contains(&id);
            let differs = match self.cpus.online(id) {
                // No `online` file: the kernel keeps it as it is.
                Online::Fixed => continue,
                Online::Reads(value) => (value == Some(1)) != want,
                // Not known to be right: written, so a failure is seen
                // and the journal kept.
                Online::Unreadable => true,
            };
            if differs && let Err(e) = self.set_cpu(id, want) {
                failures.push(format!("cpu{id}: {}", crate::error_chain::text(&e)));
            }
        }
        Ok(())
    }

    fn would_take(&self, change: CpuChange, count: usize) -> Vec<u32> {
        self.cpus.would_take(change, count)
    }

    fn reading(&mut self, sample: &Sample) {
        self.cpus.lists_read(&sample.online, &sample.present);
    }
}

/// An actuator that never writes, for observe mode and guests that cannot
/// be written (a replay). Given a root it still says which CPU a change
/// would take, so observe mode's log names the CPU cpuplugd would pick.
#[derive(Debug, Clone, Default)]
pub struct NoWrites {
    cpus: Option<CpuDir>,
}

impl NoWrites {
    /// Refuses every write and names no CPU.
    pub fn blind() -> Self {
        NoWrites::default()
    }

    /// Refuses every write; names CPUs from what is below `root`.
    pub fn seeing(root: &Path) -> Self {
        NoWrites {
            cpus: Some(CpuDir::new(root)),
        }
    }

    fn refuse(what: &'static str) -> ActError {
        ActError::NoCpu(what, "this guest cannot be written".into())
    }
}

impl Actuator for NoWrites {
    fn plug(&mut self, _: &mut Vec<String>) -> Result<u32, ActError> {
        Err(Self::refuse("plugged"))
    }
    fn unplug(&mut self, _: &mut Vec<String>) -> Result<u32, ActError> {
        Err(Self::refuse("unplugged"))
    }
    fn set_pool(&mut self, _: i64) -> Result<(), ActError> {
        Err(Self::refuse("resized"))
    }
    fn set_online(&mut self, _: &[u32], _: &mut Vec<String>) -> Result<(), ActError> {
        Ok(())
    }
    fn would_take(&self, change: CpuChange, count: usize) -> Vec<u32> {
        self.cpus
            .as_ref()
            .map_or_else(Vec::new, |cpus| cpus.would_take(change, count))
    }
    fn reading(&mut self, sample: &Sample) {
        if let Some(cpus) = &self.cpus {
            cpus.lists_read(&sample.online, &sample.present);
        }
    }
}
