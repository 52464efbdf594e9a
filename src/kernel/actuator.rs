//! Changing the guest: CPUs on and off through sysfs, the CMM pool through
//! `cmm_pages`, always below one root directory. Which CPU is chosen follows
//! SEMANTICS.md section 6: plug the lowest-numbered offline CPU whose
//! `configure` reads 1 (like cpuplugd, never one without a `configure`
//! file), unplug the highest-numbered online CPU that has an `online` file;
//! when a write fails, try the next.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::kernel::beneath::Beneath;

use crate::kernel::root::paths;

/// Why an action could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    #[error("no CPU can be {0}: {1}")]
    NoCpu(&'static str, String),
    #[error("{path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Beneath(#[from] crate::kernel::beneath::BeneathError),
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
/// or the simulator.
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
}

/// The guest below a root directory (`/` in production). Writes go through
/// [`Beneath`]: resolved inside the root as in a chroot, so no link (even
/// one swapped in while plugtop works) leads them outside.
#[derive(Debug, Clone)]
pub struct RootActuator {
    root: PathBuf,
    beneath: Arc<Beneath>,
    /// Test-only (`PLUGTOP_TEST_WRITE_DELAY_MS`): every write takes this
    /// long, as taking an s390 CPU offline can.
    delay: Option<std::time::Duration>,
    /// The panic hook's restore: it already holds the write lock.
    after_panic: bool,
}

/// One CPU directory's state as found now.
#[derive(Debug, Clone, Copy)]
struct CpuEntry {
    id: u32,
    online: Option<bool>,
    configured: Option<bool>,
}

fn read_flag(path: &Path) -> Option<bool> {
    let text = super::regular::read_small(path, 64).ok()?;
    Some(text.trim_ascii() == b"1")
}

impl RootActuator {
    /// An actuator for the guest below `root`.
    pub fn new(root: &Path) -> std::io::Result<Self> {
        Ok(RootActuator {
            root: root.to_path_buf(),
            beneath: Arc::new(Beneath::open(root)?),
            delay: crate::faults::write_delay(),
            after_panic: false,
        })
    }

    fn cpus(&self) -> Vec<CpuEntry> {
        let dir = self.root.join(paths::CPU_DIR);
        let mut cpus: Vec<CpuEntry> = fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| {
                        let name = e.file_name();
                        let id = name.to_str()?.strip_prefix("cpu")?.parse::<u32>().ok()?;
                        let base = e.path();
                        Some(CpuEntry {
                            id,
                            online: read_flag(&base.join("online")),
                            configured: read_flag(&base.join("configure")),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        cpus.sort_by_key(|c| c.id);
        cpus
    }

    /// Writes `text` to `rel` below the root, resolved as in a chroot.
    fn write(&self, rel: &str, text: &str) -> Result<(), ActError> {
        let _guard = if self.after_panic {
            None
        } else {
            let guard = WRITING.lock().unwrap_or_else(|p| p.into_inner());
            if STOPPED.load(Ordering::SeqCst) {
                return Err(ActError::Stopped);
            }
            Some(guard)
        };
        if let Some(d) = self.delay {
            std::thread::sleep(d);
        }
        Ok(self
            .beneath
            .write_existing(Path::new(rel), text.as_bytes())?)
    }

    fn set_cpu(&self, id: u32, online: bool) -> Result<(), ActError> {
        self.write(
            &format!("{}/cpu{id}/online", paths::CPU_DIR),
            if online { "1\n" } else { "0\n" },
        )
    }

    fn first_that_works(
        &self,
        candidates: impl Iterator<Item = u32>,
        online: bool,
        what: &'static str,
        failures: &mut Vec<String>,
    ) -> Result<u32, ActError> {
        let mut tried = 0;
        for id in candidates {
            tried += 1;
            match self.set_cpu(id, online) {
                Ok(()) => return Ok(id),
                Err(e) => failures.push(format!("cpu{id}: {e}")),
            }
        }
        let why = if tried == 0 {
            "no candidate".to_string()
        } else {
            format!("all {tried} candidates failed")
        };
        Err(ActError::NoCpu(what, why))
    }
}

impl Actuator for RootActuator {
    /// Like cpuplugd, only a CPU whose `configure` reads 1 is plugged: an
    /// offline CPU without a `configure` file is never brought online.
    fn plug(&mut self, failures: &mut Vec<String>) -> Result<u32, ActError> {
        let cpus = self.cpus();
        let candidates: Vec<u32> = cpus
            .iter()
            .filter(|c| c.online == Some(false) && c.configured == Some(true))
            .map(|c| c.id)
            .collect();
        let unconfigurable = cpus
            .iter()
            .filter(|c| c.online == Some(false) && c.configured.is_none())
            .count();
        if candidates.is_empty() && unconfigurable > 0 {
            return Err(ActError::NoCpu(
                "plugged",
                format!(
                    "{unconfigurable} offline CPUs have no `configure` file, and cpuplugd plugs only CPUs whose configure reads 1"
                ),
            ));
        }
        self.first_that_works(candidates.into_iter(), true, "plugged", failures)
    }

    fn unplug(&mut self, failures: &mut Vec<String>) -> Result<u32, ActError> {
        let candidates: Vec<u32> = self
            .cpus()
            .into_iter()
            .rev()
            .filter(|c| c.online == Some(true))
            .map(|c| c.id)
            .collect();
        self.first_that_works(candidates.into_iter(), false, "unplugged", failures)
    }

    fn set_pool(&mut self, pages: i64) -> Result<(), ActError> {
        self.write(paths::CMM_PAGES, &format!("{pages}\n"))
    }

    fn set_online(&mut self, wanted: &[u32], failures: &mut Vec<String>) -> Result<(), ActError> {
        for cpu in self.cpus() {
            let Some(online) = cpu.online else { continue };
            let want = wanted.contains(&cpu.id);
            if online != want
                && let Err(e) = self.set_cpu(cpu.id, want)
            {
                failures.push(format!("cpu{}: {e}", cpu.id));
            }
        }
        Ok(())
    }
}
