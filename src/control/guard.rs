//! Starting and stopping to act on a guest, written once for `plugtop run`,
//! the screen and `plugtop restore`, so the three refuse, lock, journal and
//! put back in the same order and say the same things.
//!
//! Taking a guest, in this order:
//! 1. the machine: on this machine's own `/`, only s390 (a z/VM guest, or
//!    an LPAR for CPUs, as cpuplugd) unless the user allowed any Linux;
//! 2. the lock: cpuplugd's pid file (even a stale one) and its lock file;
//! 3. the journal, under the lock and checked against the guest (a bad
//!    one refuses, naming its line): a running plugtop's (its pid holds
//!    this root's lock, started when the journal says) refuses, a dead
//!    one's refuses unless `--force` adopts its start state;
//! 4. the start state must be readable exactly, and one `plugtop restore`
//!    would put back (the journal check): a state it would refuse after a
//!    crash is not acted on (cpuplugd would start on it);
//! 5. the journal is written (fsynced) before the first write, and the
//!    failure policy ([`install_failure_policy`]) learns what to put back.
//!
//! Giving it back: the start state is restored; the journal is removed only
//! when the restore was complete (otherwise it stays for `plugtop restore`,
//! and the message says how); the lock file goes last.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::journal_check::{self, Part};
use super::lock::{self, GuestLock};
use super::restore_journal::{self, StartState};
use super::session::MessageLevel;
use crate::kernel::Sample;
use crate::kernel::actuator::Actuator;
use crate::kernel::root_file::paths;

/// Exit code of a process that panicked (as any Rust program's panic), after
/// the guest was put back or the journal kept.
pub const PANIC_EXIT: i32 = 101;

/// What taking a guest needs to know.
#[derive(Debug, Clone)]
pub struct GuardOptions {
    pub root: PathBuf,
    /// The restore journal (default `ROOT/run/plugtop/state`).
    pub state: PathBuf,
    /// Adopt a dead run's journal (its start state is what gets restored).
    pub force: bool,
    /// Act on this machine's own `/` although it is not s390.
    pub allow_non_zvm: bool,
    /// The root was given on the command line: messages repeat `--root`.
    pub root_given: bool,
    /// The pool is put back too: the memory group of the rules in force is
    /// on. cpuplugd leaves `cmm_pages` alone at its end when it is off
    /// (another manager's size stays), and so does plugtop.
    pub pool: bool,
    /// The screen asks: it has no `--force`, so a refusal names the
    /// commands that work from a shell.
    pub screen: bool,
}

impl GuardOptions {
    /// For `root` with the default journal; `--root` is repeated in
    /// messages unless the root is `/`.
    pub fn new(root: &Path) -> Self {
        GuardOptions {
            root: root.to_path_buf(),
            state: restore_journal::default_path(root),
            force: false,
            allow_non_zvm: false,
            root_given: root != Path::new("/"),
            pool: true,
            screen: false,
        }
    }

    /// How to keep a dead run's start state instead of restoring it: the
    /// daemon's `--force` (the screen has none).
    fn adopt_advice(&self) -> String {
        if self.screen {
            let root = if self.root_given {
                format!(" --root {}", self.root.display())
            } else {
                String::new()
            };
            format!(
                "then arm again; to keep its start state instead, `plugtop run --force{root} -c RULES` takes the guest over (the screen never does)"
            )
        } else {
            "or start with --force to keep its start state".to_string()
        }
    }

    /// The `plugtop restore` command that puts this guest back.
    pub fn restore_command(&self) -> String {
        let mut cmd = "plugtop restore".to_string();
        if self.root_given {
            cmd.push_str(&format!(" --root {}", self.root.display()));
        }
        if self.state != restore_journal::default_path(&self.root) {
            cmd.push_str(&format!(" --state {}", self.state.display()));
        }
        cmd
    }
}

/// Why a guest may not be acted on (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// This machine's own `/` is no s390 machine, and acting was not
    /// allowed (`--allow-non-zvm`).
    #[error(
        "{host} is not an s390 machine ({architecture}): cpuplugd's rules are meant for z/VM guests, and acting would take this machine's CPUs offline; start with --allow-non-zvm to act anyway, or try `plugtop --sim SCENARIO`"
    )]
    NotS390 { host: String, architecture: String },
    /// The root cannot be opened to write below it.
    #[error("cannot act on {}", root.display())]
    CannotAct {
        root: PathBuf,
        #[source]
        reason: std::io::Error,
    },
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    #[error(transparent)]
    Journal(#[from] restore_journal::JournalError),
    /// Another plugtop acts on this root (its journal is `journal`), or
    /// holds it while stopped (`stopped`: the screen's header says
    /// "STOPPED: nothing acts", and the refusal says the same, nu54 M7).
    #[error(
        "another plugtop (pid {pid}) {} {} (journal {})",
        if *stopped { "is stopped (SIGSTOP or Ctrl-Z) and holds" } else { "acts on" },
        root.display(),
        journal.display()
    )]
    AnotherActs {
        pid: u32,
        stopped: bool,
        root: PathBuf,
        journal: PathBuf,
    },
    /// A dead plugtop left the guest changed; `restore` is the command
    /// that puts it back.
    #[error(
        "a plugtop (pid {pid}) ended without restoring {}: run `{restore}` first, {adopt}",
        root.display()
    )]
    LeftChanged {
        pid: u32,
        root: PathBuf,
        restore: String,
        /// How to keep its start state instead, for who asks.
        adopt: String,
    },
    /// `plugtop restore` while the plugtop that journaled still runs.
    #[error("plugtop (pid {pid}) is still running and will restore on exit; stop it with SIGTERM")]
    StillRunning { pid: u32 },
    /// The start state cannot be read exactly, so it could not be restored.
    #[error(transparent)]
    Inexact(restore_journal::InexactStart),
    /// The start state is one `plugtop restore` would refuse to put back
    /// (after a crash nothing could restore it): plugtop does not act.
    /// `restore` is the restore command for this root.
    #[error(
        "refusing to act on {}: its start state could not be put back after a crash ({}; `{restore}` refuses such a journal); {}. cpuplugd would start on this state, plugtop does not; observe mode (`--mode observe`, or the screen unarmed) writes nothing and still runs",
        root.display(),
        crate::error_chain::text(why),
        remedy(root, why.part())
    )]
    Unrestorable {
        root: PathBuf,
        why: journal_check::NotRestorable,
        restore: String,
    },
    /// A journal refused by its form: `plugtop restore` put nothing back.
    #[error(
        "{}; nothing was restored, not even the lines that pass (a journal is put back whole or not at all); the journal is kept: correct that line, or put the guest right by hand and remove the journal",
        crate::error_chain::text(.0)
    )]
    BadJournal(restore_journal::JournalError),
}

/// Whether `root` is this machine's own `/`.
pub fn is_own_root(root: &Path) -> bool {
    std::fs::canonicalize(root).is_ok_and(|r| r == Path::new("/"))
}

/// Step 1: may plugtop change this machine at all? Test roots, served
/// simulators and any `--root` other than `/` may always be changed; this
/// machine's own `/` only when it is s390 (a z/VM guest, or an LPAR whose
/// CPUs cpuplugd also manages) or the user allowed it.
pub fn check_machine(root: &Path, allow_non_zvm: bool) -> Result<(), GuardError> {
    if allow_non_zvm || !is_own_root(root) {
        return Ok(());
    }
    let id = crate::kernel::machine::identity(root);
    if id.s390 {
        return Ok(());
    }
    Err(GuardError::NotS390 {
        host: id.host,
        architecture: id.architecture,
    })
}

/// A guest plugtop acts on: the lock is held and the start state
/// journaled until [`Guard::give_back`].
#[derive(Debug)]
pub struct Guard {
    options: GuardOptions,
    start: StartState,
    lock: Option<GuestLock>,
}

/// How giving a guest back went.
#[derive(Debug, Clone, PartialEq)]
pub struct GiveBack {
    /// Every CPU and the pool are as they were; the journal is gone.
    pub complete: bool,
    /// What to log, in order.
    pub lines: Vec<(MessageLevel, String)>,
}

/// What the failure policy puts back after a panic: the guard in force.
static ACTIVE: Mutex<Option<GuardOptions>> = Mutex::new(None);

impl Guard {
    /// Takes the guest as it is in `first` (steps 1–5 above). A refusal
    /// writes nothing and leaves no lock file behind.
    pub fn take(options: &GuardOptions, first: &Sample) -> Result<Guard, GuardError> {
        check_machine(&options.root, options.allow_non_zvm)?;
        let lock = lock::acquire(&options.root)?;
        match Self::journal_start(options, first) {
            Ok(start) => Ok(Guard {
                options: options.clone(),
                start,
                lock: Some(lock),
            }),
            Err(e) => {
                // Held until removed, so no other process's lock goes.
                lock::release(&options.root);
                drop(lock);
                Err(e)
            }
        }
    }

    /// Steps 3–5 under the lock: the start state to restore (an adopted
    /// one, or the guest as it is in `first`), checked and journaled.
    fn journal_start(options: &GuardOptions, first: &Sample) -> Result<StartState, GuardError> {
        let adopted = earlier_run(options)?;
        if let Some(why) = restore_journal::inexact(&first.online, first.cmm_pages) {
            return Err(GuardError::Inexact(why));
        }
        // The root as resolved, so `plugtop restore` finds it the same
        // from any directory and can tell another root's journal apart.
        let root = std::fs::canonicalize(&options.root).unwrap_or_else(|_| options.root.clone());
        let start = adopted.unwrap_or_else(|| StartState {
            pid: std::process::id(),
            started: None,
            root: root.display().to_string(),
            online: online_at_start(&options.root, &first.online.ids),
            cmm_pages: first.cmm_pages.filter(|_| options.pool),
        });
        journal_check::restorable(&options.root, &start.online, start.cmm_pages).map_err(
            |why| GuardError::Unrestorable {
                root: options.root.clone(),
                why,
                restore: options.restore_command(),
            },
        )?;
        let journaled = StartState {
            pid: std::process::id(),
            started: crate::kernel::processes::own_start_time(),
            ..start.clone()
        };
        restore_journal::write(&options.root, &options.state, &journaled)?;
        *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(options.clone());
        Ok(start)
    }

    /// What giving back restores.
    pub fn start(&self) -> &StartState {
        &self.start
    }

    /// What was asked for.
    pub fn options(&self) -> &GuardOptions {
        &self.options
    }

    /// Puts the guest back and releases it: the journal goes only after a
    /// complete restore, the lock file always.
    pub fn give_back(mut self, actuator: &mut dyn Actuator) -> GiveBack {
        *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let mut failures = Vec::new();
        if let Err(e) = restore_journal::restore(actuator, &self.start, &mut failures) {
            failures.push(crate::error_chain::text(&e));
        }
        let mut lines: Vec<(MessageLevel, String)> = failures
            .iter()
            .map(|f| (MessageLevel::Error, format!("restore: {f}")))
            .collect();
        let complete = failures.is_empty();
        if complete {
            let mut said = format!("restored the start state: {}", describe(&self.start));
            let held = crate::kernel::machine::pool_pages(&self.options.root);
            if let Some(note) = release_note(self.start.cmm_pages, held) {
                said.push_str(&note);
            }
            lines.push((MessageLevel::Info, said));
            if let Err(e) = restore_journal::remove(&self.options.root, &self.options.state) {
                lines.push((
                    MessageLevel::Error,
                    format!(
                        "cannot remove the journal {}: {e}",
                        self.options.state.display(),
                        e = crate::error_chain::text(&e)
                    ),
                ));
            }
        } else {
            lines.push((MessageLevel::Error, kept_message(&self.options)));
        }
        self.lock.take();
        lock::release(&self.options.root);
        GiveBack { complete, lines }
    }
}

/// The CPUs online at the start, as the writes that put them back find
/// them: each CPU's own `online` file where it reads 1 or 0 (what cpuplugd
/// reads of a CPU before it plugs, unplugs or restores one), the online
/// list `listed` (`devices/system/cpu/online`, from which cpuplugd takes
/// only its start count) for the others: a CPU without the file (always
/// online), one whose file reads nothing usable or that is not there (the
/// journal check then refuses it). A kernel keeps the two the same; a root
/// another program writes may not (`plugtop sim --serve` rewrites the list
/// a step after a CPU's file changes), and a start state taken from the
/// list alone then put the wrong CPU back.
fn online_at_start(root: &Path, listed: &[u32]) -> Vec<u32> {
    use crate::kernel::cpu_choice::Online;
    let cpus = crate::kernel::cpu_dir::CpuDir::new(root);
    let mut ids = cpus.ids();
    ids.extend_from_slice(listed);
    ids.sort_unstable();
    ids.dedup();
    let online: Vec<u32> = ids
        .into_iter()
        .filter(|&id| match cpus.online(id) {
            Online::Reads(Some(1)) => true,
            Online::Reads(Some(0)) => false,
            _ => listed.contains(&id),
        })
        .collect();
    // None online is no guest's state: the list stands then.
    if online.is_empty() {
        listed.to_vec()
    } else {
        online
    }
}

/// What the admin can do about a start state restore would refuse (the
/// `part` of it below `root`). cpuplugd would start on it: plugtop differs
/// on purpose, since after a crash nothing could put such a guest back.
fn remedy(root: &Path, part: Part) -> String {
    match part {
        Part::Pool => format!(
            "set cmm_pages to a size this guest holds (`echo 0 > {}` gives the pool's pages back) and start again",
            root.join(paths::CMM_PAGES).display()
        ),
        Part::Online => format!(
            "make every online CPU's directory below {} readable (is sysfs whole?) and start again",
            root.join(paths::CPU_DIR).display()
        ),
        Part::Root => "make the root readable and start again".to_string(),
    }
}

/// What to add to "restored the start state" when the pool written back
/// (`target`) is smaller than what `cmm_pages` reads right after (`held`):
/// a real kernel reads the pages it still holds and frees them over
/// seconds, so a user who looks sees a larger number and is told why.
fn release_note(target: Option<i64>, held: Option<i64>) -> Option<String> {
    let releasing = held? - target?;
    (releasing > 0).then(|| {
        format!(
            "; the kernel is releasing {releasing} pages (cmm_pages reads the pages still held until it has)"
        )
    })
}

/// "CPUs 0-3 online, cmm_pages 0" ("cpu0 online" for one; the pool not
/// named where it is not put back).
fn describe(start: &StartState) -> String {
    let list = crate::kernel::cpulist::CpuList {
        count: i32::try_from(start.online.len()).unwrap_or(i32::MAX),
        ids: start.online.clone().into(),
    };
    let online = crate::report::words::online_list(&list);
    match start.cmm_pages {
        Some(pages) => format!("{online}, cmm_pages {pages}"),
        // No pool, or the memory group off: cmm_pages is not touched.
        None => format!("{online}; cmm_pages left as it is"),
    }
}

fn kept_message(options: &GuardOptions) -> String {
    format!(
        "the start state was not fully restored; the journal {} is kept: fix the cause and run `{}`",
        options.state.display(),
        options.restore_command()
    )
}

/// Step 3: the journal of an earlier run, if one may be adopted; an error
/// when another plugtop still acts or a dead one left the guest changed.
pub fn earlier_run(options: &GuardOptions) -> Result<Option<StartState>, GuardError> {
    match restore_journal::read_checked(&options.root, &options.state)? {
        Some(old) if still_running(options, &old) => Err(GuardError::AnotherActs {
            pid: old.pid,
            stopped: crate::kernel::processes::stopped(old.pid),
            root: options.root.clone(),
            journal: options.state.clone(),
        }),
        Some(old) if !options.force => Err(GuardError::LeftChanged {
            pid: old.pid,
            root: options.root.clone(),
            restore: options.restore_command(),
            adopt: options.adopt_advice(),
        }),
        other => Ok(other),
    }
}

/// A plugtop that ended without putting the guest back, as its journal
/// tells: for an observer to say at once, before anyone arms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadRun {
    pub pid: u32,
    /// When it started, seconds since the epoch (`None` in a journal of
    /// version 1, or one from before the last boot).
    pub since: Option<i64>,
    /// The journal's path.
    pub journal: String,
    /// What it found and `plugtop restore` puts back ("cpu0 online,
    /// cmm_pages 0").
    pub found: String,
    /// The command that puts it back.
    pub restore: String,
}

/// The dead run whose journal lies below the root, if any (read bounded
/// and checked, as arming reads it; a running plugtop's journal, none, or
/// one that cannot be read is no dead run here: arming says why).
pub fn dead_run(options: &GuardOptions) -> Option<DeadRun> {
    let old = restore_journal::read_checked(&options.root, &options.state).ok()??;
    if still_running(options, &old) {
        return None;
    }
    let since = old
        .started
        .and_then(crate::kernel::processes::epoch_of_ticks)
        .filter(|t| t.is_finite() && *t >= 0.0)
        .map(|t| t as i64);
    Some(DeadRun {
        pid: old.pid,
        since,
        journal: options.state.display().to_string(),
        found: describe(&old),
        restore: options.restore_command(),
    })
}

/// Whether the plugtop that wrote `journal` still acts on this root (and
/// will restore on exit): its pid holds this root's lock, as every plugtop
/// acting on a root does whatever its binary is called, and started when
/// the journal says. A pid reused by another process, a plugtop that only
/// observes and one acting on another root hold no such lock: the journal
/// is a dead run's, which may be restored.
fn still_running(options: &GuardOptions, journal: &StartState) -> bool {
    journal.pid != std::process::id()
        && crate::kernel::processes::started_as_recorded(journal.pid, journal.started)
        && lock::held_by(&options.root, journal.pid)
}

/// `plugtop restore`: puts a guest back from the journal a dead plugtop
/// left. `Ok(None)` when there is no journal.
pub fn restore_from_journal(options: &GuardOptions) -> Result<Option<GiveBack>, GuardError> {
    let start = match restore_journal::read_checked(&options.root, &options.state) {
        Ok(Some(start)) => start,
        Ok(None) => return Ok(None),
        Err(e @ restore_journal::JournalError::Malformed { .. }) => {
            return Err(GuardError::BadJournal(e));
        }
        Err(e) => return Err(e.into()),
    };
    if still_running(options, &start) {
        return Err(GuardError::StillRunning { pid: start.pid });
    }
    let lock = lock::acquire(&options.root)?;
    let mut actuator =
        crate::kernel::actuator::RootActuator::new(&options.root).map_err(|reason| {
            GuardError::CannotAct {
                root: options.root.clone(),
                reason,
            }
        })?;
    let guard = Guard {
        options: options.clone(),
        start,
        lock: Some(lock),
    };
    Ok(Some(guard.give_back(&mut actuator)))
}

/// How long the words after a panic (its report, what was restored) may
/// take once the guest was given back: standard error may be a terminal
/// nobody reads.
const PANIC_WORDS: std::time::Duration = std::time::Duration::from_secs(2);

/// The failure policy, for the whole process: a panic in any thread puts
/// the guest in force back once (waiting for a write in flight, stopping
/// every later one), keeps the journal exactly when that restore was
/// incomplete, says so, and ends the process with [`PANIC_EXIT`], so a
/// service manager restarts it and nothing runs on after the guest was
/// given back. Installed once by the binary before any thread starts (a
/// hook installed later, as the screen's that gives the terminal back,
/// runs before it).
pub fn install_failure_policy() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        static ENDING: AtomicBool = AtomicBool::new(false);
        if ENDING.swap(true, Ordering::SeqCst) {
            // Another thread is already putting the guest back and ending
            // the process: this one waits for that.
            loop {
                std::thread::park();
            }
        }
        // The guest first, saying nothing yet: standard error may be a
        // terminal nobody reads, where any write blocks for good.
        let said = give_back_after_panic();
        // Then the words, with a bound: after the guest was given back
        // nothing may keep the process alive.
        let _ = std::thread::Builder::new().spawn(|| {
            std::thread::sleep(PANIC_WORDS);
            std::process::exit(PANIC_EXIT);
        });
        report(info);
        for line in said {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{line}");
        }
        std::process::exit(PANIC_EXIT);
    }));
}

/// The panic path of giving back: nothing here may panic again (that
/// would abort half-way), so every error is passed over, and nothing is
/// written (that might block): what it has to say is returned.
fn give_back_after_panic() -> Vec<String> {
    let mut said = Vec::new();
    let active = match ACTIVE.try_lock() {
        Ok(mut g) => g.take(),
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner().take(),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    let Some(options) = active else {
        said.push("plugtop: ended by a panic; it was not acting on a guest".to_string());
        return said;
    };
    let (_writes_stopped, actuator) = crate::kernel::actuator::stop_writes_for_restore(
        &options.root,
        std::time::Duration::from_secs(2),
    );
    let restored = match (
        restore_journal::read_checked(&options.root, &options.state),
        actuator,
    ) {
        (Ok(Some(start)), Ok(mut actuator)) => {
            let mut failures = Vec::new();
            let ok = restore_journal::restore(&mut actuator, &start, &mut failures).is_ok()
                && failures.is_empty();
            for f in &failures {
                said.push(format!("plugtop: restore: {f}"));
            }
            ok
        }
        (Ok(None), _) => {
            said.push(format!(
                "plugtop: ended by a panic; no journal at {} to restore from",
                options.state.display()
            ));
            false
        }
        (Err(e), _) => {
            said.push(format!(
                "plugtop: restore: {}",
                crate::error_chain::text(&e)
            ));
            false
        }
        (_, Err(e)) => {
            said.push(format!(
                "plugtop: restore: {}",
                crate::error_chain::text(&e)
            ));
            false
        }
    };
    let message = if restored {
        let removed = restore_journal::remove(&options.root, &options.state).is_ok();
        lock::release(&options.root);
        if removed {
            "plugtop: ended by a panic; the start state was restored and the journal removed"
                .to_string()
        } else {
            format!(
                "plugtop: ended by a panic; the start state was restored, but the journal {} could not be removed",
                options.state.display()
            )
        }
    } else {
        lock::release(&options.root);
        format!("plugtop: ended by a panic; {}", kept_message(&options))
    };
    said.push(message);
    said
}

#[cfg(test)]
mod tests {
    use super::release_note;

    #[test]
    fn a_pool_the_kernel_still_holds_after_the_restore_is_said_to_be_released() {
        assert_eq!(
            release_note(Some(0), Some(208_590)).as_deref(),
            Some(
                "; the kernel is releasing 208590 pages (cmm_pages reads the pages still held until it has)"
            )
        );
        assert_eq!(
            release_note(Some(100), Some(150)).map(|n| n.contains(" 50 pages")),
            Some(true)
        );
        // Released already, grown back (not plugtop's), or no pool: nothing to say.
        for (target, held) in [
            (Some(0), Some(0)),
            (Some(10), Some(5)),
            (None, Some(9)),
            (Some(0), None),
        ] {
            assert_eq!(release_note(target, held), None, "{target:?} {held:?}");
        }
    }
}
