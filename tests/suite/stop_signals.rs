//! Every signal that would end plugtop puts the guest back first and ends
//! the process: `plugtop run` on SIGUSR1, SIGALRM, SIGQUIT and a real-time
//! signal, and the armed screen on SIGTERM while its terminal is read by
//! nobody (the screen thread stuck in a write to it).

use crate::common;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

use common::FakeRoot;

/// Eight CPUs, cpu0 online; rules that plug a CPU every interval, in the
/// file `conf` of the directory returned.
fn guest(conf: &OsStr) -> (FakeRoot, tempfile::TempDir) {
    let root = FakeRoot::guest(8);
    root.one_cpu_online(8);
    let dir = common::tempdir();
    std::fs::write(dir.path().join(conf), common::PLUG_EVERY_INTERVAL).expect("rules");
    (root, dir)
}

fn online(root: &Path) -> Vec<u32> {
    common::online_cpus(root, 8)
}

fn journal(root: &Path) -> bool {
    root.join("run/plugtop/state").exists()
}

/// Sends signal number `signal` to `pid` with kill(1).
fn send(signal: i32, pid: u32) {
    let ok = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{signal} {pid}");
}

/// Kills `pid` with SIGKILL unless `done` says the test saw it end within
/// [`common::hang_guard`] (never reached when plugtop works); whether it had to.
fn guard(pid: u32) -> (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<bool>) {
    let (done, ended) = channel::<()>();
    let killer = std::thread::spawn(move || match ended.recv_timeout(common::hang_guard()) {
        Err(RecvTimeoutError::Timeout) => {
            send(9, pid);
            true
        }
        _ => false,
    });
    (done, killer)
}

/// How one `plugtop run` ended, and what ran while it acted.
pub(crate) struct Ended {
    pub status: Option<i32>,
    pub log: String,
    pub root: FakeRoot,
    /// The program the process ran (`/proc/PID/exe`) while it acted.
    pub exe: PathBuf,
    /// Its command name (`/proc/PID/comm`) while it acted.
    pub comm: String,
    /// Its command line (`/proc/PID/cmdline`) while it acted.
    pub cmdline: Vec<u8>,
    /// The command line it was started with, as cmdline has it.
    pub started_with: Vec<u8>,
    /// Its environment (`/proc/PID/environ`) while it acted.
    pub environ: Vec<u8>,
}

/// `plugtop run` acting on the guest until `signal`: the exit status and
/// the log. The guest is acted on (a CPU plugged) before the signal.
fn run_until(signal: i32) -> (Option<i32>, String, FakeRoot) {
    let ended = run_of_until(
        Path::new(env!("CARGO_BIN_EXE_plugtop")),
        OsStr::new("plug.conf"),
        signal,
    );
    (ended.status, ended.log, ended.root)
}

/// `program run` (`program` being plugtop, wherever it is installed) with
/// the rules in a file named `conf`, acting on the guest until `signal`.
pub(crate) fn run_of_until(program: &Path, conf: &OsStr, signal: i32) -> Ended {
    run_of_until_with(program, conf, signal, &[], &|_| {})
}

/// [`run_of_until`] with more variables in the environment, and `before`
/// done to the root once plugtop acts, before the signal.
pub(crate) fn run_of_until_with(
    program: &Path,
    conf: &OsStr,
    signal: i32,
    env: &[(&str, &str)],
    before: &dyn Fn(&Path),
) -> Ended {
    let (root, dir) = guest(conf);
    let rules = dir.path().join(conf);
    let args: Vec<&OsStr> = vec![
        OsStr::new("run"),
        OsStr::new("-f"),
        OsStr::new("--interval-ms"),
        OsStr::new("20"),
        OsStr::new("-c"),
        rules.as_os_str(),
        OsStr::new("--root"),
        root.path().as_os_str(),
    ];
    let mut child = Command::new(program)
        .args(&args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("plugtop run starts");
    let (done, killer) = guard(child.id());
    // The log (a foreground run logs to standard output).
    let mut lines = BufReader::new(child.stdout.take().expect("stdout"))
        .lines()
        .map_while(Result::ok);
    let mut log = String::new();
    for line in lines.by_ref() {
        log.push_str(&line);
        log.push('\n');
        if line.contains("plugged cpu") {
            break;
        }
    }
    assert!(log.contains("plugged cpu"), "it acts first:\n{log}");
    assert!(journal(root.path()), "the journal is there while it acts");
    let proc = PathBuf::from(format!("/proc/{}", child.id()));
    let exe = std::fs::read_link(proc.join("exe")).expect("its program");
    let cmdline = std::fs::read(proc.join("cmdline")).expect("its command line");
    let comm = std::fs::read_to_string(proc.join("comm")).expect("its command name");
    let environ = std::fs::read(proc.join("environ")).expect("its environment");
    before(root.path());
    send(signal, child.id());
    for line in lines {
        log.push_str(&line);
        log.push('\n');
    }
    let status = child.wait().expect("plugtop run ends");
    let _ = done.send(());
    assert!(
        !killer.join().expect("guard"),
        "killed by the guard:\n{log}"
    );
    let mut started_with = Vec::new();
    for arg in std::iter::once(program.as_os_str()).chain(args) {
        started_with.extend_from_slice(arg.as_encoded_bytes());
        started_with.push(0);
    }
    Ended {
        status: status.code(),
        log,
        root,
        exe,
        comm,
        cmdline,
        started_with,
        environ,
    }
}

fn run_puts_the_guest_back_on(signal: i32, name: &str) {
    let (status, log, root) = run_until(signal);
    assert_puts_the_guest_back(status, &log, &root, signal, name);
}

/// `plugtop run` ended by `signal` (named `name`) after putting the
/// guest back, with 128 + `signal`.
pub(crate) fn assert_puts_the_guest_back(
    status: Option<i32>,
    log: &str,
    root: &FakeRoot,
    signal: i32,
    name: &str,
) {
    assert_eq!(status, Some(128 + signal), "{name}:\n{log}");
    assert_eq!(
        online(root.path()),
        vec![0],
        "{name}: guest put back\n{log}"
    );
    assert!(!journal(root.path()), "{name}: journal removed\n{log}");
    assert!(
        log.contains(&format!("shutting down: ended by {name}")),
        "{name} named in the log:\n{log}"
    );
    assert!(log.contains("restored the start state"), "{log}");
    assert!(
        !root.path().join("var/lock/cpuplugd.lock").exists(),
        "{name}: the lock file goes"
    );
}

#[test]
fn sigusr1_ends_run_after_putting_the_guest_back() {
    run_puts_the_guest_back_on(10, "SIGUSR1");
}

#[test]
fn sigalrm_ends_run_after_putting_the_guest_back() {
    run_puts_the_guest_back_on(14, "SIGALRM");
}

#[test]
fn sigquit_and_a_real_time_signal_end_run_after_putting_the_guest_back() {
    run_puts_the_guest_back_on(3, "SIGQUIT");
    // SIGRTMIN is 34 with glibc and musl; +2 is one nothing else uses.
    run_puts_the_guest_back_on(36, "SIGRTMIN+2");
}

#[test]
fn sigterm_still_ends_run_with_status_zero_as_cpuplugd() {
    let (status, log, root) = run_until(15);
    assert_eq!(status, Some(0), "{log}");
    assert_eq!(online(root.path()), vec![0], "{log}");
    assert!(log.contains("shutting down: ended by SIGTERM"), "{log}");
}

/// Rules with no memory group (no CMM_MAX): at its end plugtop leaves
/// `cmm_pages` as another manager set it meanwhile, as cpuplugd does (it
/// puts the pool back only when its memory group is on); the CPUs go back.
#[test]
fn with_the_memory_group_off_the_end_leaves_the_pool_alone() {
    let pool = |root: &Path| root.join("proc/sys/vm/cmm_pages");
    let ended = run_of_until_with(
        Path::new(env!("CARGO_BIN_EXE_plugtop")),
        OsStr::new("cpu-only.conf"),
        15,
        &[],
        &|root| std::fs::write(pool(root), "5000\n").expect("another manager sizes the pool"),
    );
    assert_eq!(ended.status, Some(0), "{}", ended.log);
    assert_eq!(online(ended.root.path()), vec![0], "{}", ended.log);
    assert_eq!(
        std::fs::read_to_string(pool(ended.root.path()))
            .ok()
            .as_deref(),
        Some("5000\n"),
        "{}",
        ended.log
    );
    assert!(
        ended.log.contains("cpu0 online; cmm_pages left as it is"),
        "{}",
        ended.log
    );
}

/// The number of the `write` system call on this architecture, as
/// /proc/PID/syscall shows it (1 on x86-64 only).
const SYS_WRITE: u32 = if cfg!(target_arch = "x86_64") {
    1
} else if cfg!(any(
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
)) {
    64
} else {
    // s390x, powerpc64, x86 and arm.
    4
};

/// What the main thread of `pid` waits in: blocked in a write to the
/// terminal ("wait_woken" in n_tty_write), or the write system call on
/// standard output (fd 1) seen in /proc/PID/syscall.
fn blocked_writing(pid: u32) -> bool {
    let task = format!("/proc/{pid}/task/{pid}");
    let wchan = std::fs::read_to_string(format!("{task}/wchan")).unwrap_or_default();
    let syscall = std::fs::read_to_string(format!("{task}/syscall")).unwrap_or_default();
    wchan.contains("n_tty_write")
        || wchan == "wait_woken"
        || syscall.starts_with(&format!("{SYS_WRITE} 0x1 "))
}

#[test]
fn sigterm_while_nobody_reads_the_terminal_puts_the_guest_back_and_ends() {
    stuck_screen_then(15);
}

#[test]
fn sigusr1_while_nobody_reads_the_terminal_puts_the_guest_back_and_ends() {
    stuck_screen_then(10);
}

/// A panic (in the thread that reads keys, at the first key) while the
/// screen is stuck writing to a terminal nobody reads: the panic hook
/// gives the terminal a bounded try, then the guest is put back and the
/// process ends (101), its words to the stuck terminal bounded too.
#[test]
fn a_panic_while_nobody_reads_the_terminal_puts_the_guest_back_and_ends() {
    stuck_screen_ending(None);
}

/// The armed screen, its terminal never read, stuck writing to it: then
/// `signal`.
fn stuck_screen_then(signal: i32) {
    stuck_screen_ending(Some(signal));
}

/// The armed screen stuck writing to its unread terminal, ended by
/// `signal`, or (`None`) by a panic injected in its control thread.
fn stuck_screen_ending(signal: Option<i32>) {
    let (root, dir) = guest(OsStr::new("plug.conf"));
    // The master stays open and is never read: the terminal fills up.
    let (master, mut child) = common::armed_screen_on_a_pty(
        root.path(),
        &dir.path().join("plug.conf"),
        (50, 200),
        signal.is_none().then_some("input:1"),
    );
    let pid = child.process_id().expect("a pid");
    let (done, killer) = guard(pid);
    // Acting, and then stuck writing: each SIGCONT makes it redraw the
    // whole screen, which fills the terminal's buffer quickly.
    while online(root.path()).len() < 3 || !blocked_writing(pid) {
        // No clock here: if it never blocks, the guard kills it after
        // the hang guard and the test fails below on what the guard says.
        if child.try_wait().is_ok_and(|s| s.is_some()) {
            break;
        }
        if online(root.path()).len() >= 3 {
            send(18, pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(journal(root.path()), "the journal is there while it acts");
    match signal {
        Some(signal) => send(signal, pid),
        None => {
            // A key: the input side of the terminal still flows.
            let mut keys = master.take_writer().expect("the terminal's input");
            keys.write_all(b"z").expect("a key");
            keys.flush().expect("sent");
        }
    }
    let status = child.wait().expect("plugtop ends");
    let _ = done.send(());
    assert!(
        !killer.join().expect("guard"),
        "still running {}s after {signal:?} with the terminal unread",
        common::hang_guard().as_secs()
    );
    drop(master);
    let want = signal.map_or(101, |s| 128 + s as u32);
    assert_eq!(status.exit_code(), want);
    assert_eq!(online(root.path()), vec![0], "the guest is put back");
    assert!(!journal(root.path()), "the journal is removed");
    assert!(!root.path().join("var/lock/cpuplugd.lock").exists());
}
