//! `plugtop run -f` end to end, against a temporary root kept alive by a
//! small test kernel: a thread that keeps `cpu/online` consistent with the
//! per-CPU `online` files plugtop writes and advances /proc/stat and the
//! memory counters according to a scripted load.
//!
//! The list follows each write before the write returns, as with a real
//! kernel: plugtop runs with `PLUGTOP_TEST_WRITE_TOKEN` (see
//! `plugtop::faults`), so each of its writes waits until the test kernel has
//! republished the list, however long the kernel thread is starved. (A list
//! that lagged made plugtop count too few CPUs and plug one past CPU_MAX.)

use crate::common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::FakeRoot;

const CPUS: u32 = 4;
const BUSY: u8 = 0;
const IDLE_UNDER_PRESSURE: u8 = 1;

/// What the test kernel saw after one of its steps.
#[derive(Debug, Clone, Copy)]
struct Seen {
    online: u32,
    pool: i64,
}

struct TestKernel {
    stop: Arc<AtomicBool>,
    phase: Arc<AtomicU8>,
    seen: Receiver<Seen>,
    thread: Option<JoinHandle<()>>,
}

fn atomic_write(path: &Path, text: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

fn online_ids(root: &Path) -> Vec<u32> {
    (0..CPUS)
        .filter(|i| {
            std::fs::read_to_string(root.join(format!("sys/devices/system/cpu/cpu{i}/online")))
                .is_ok_and(|t| t.trim() == "1")
        })
        .collect()
}

/// The pool, or `None` while plugtop is between truncating and writing it.
fn read_pool(root: &Path) -> Option<i64> {
    std::fs::read_to_string(root.join("proc/sys/vm/cmm_pages"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
}

fn pool(root: &Path) -> i64 {
    read_pool(root).unwrap_or(-1)
}

/// The file by which the test kernel tells plugtop its files agree with the
/// last write (`PLUGTOP_TEST_WRITE_TOKEN`): plugtop removes it after a
/// write, the kernel creates it again once it has published the list.
fn write_token(root: &Path) -> PathBuf {
    root.join("test-kernel-write-token")
}

/// Lays out `CPUS` CPUs of which only cpu0 is online, and CMM.
fn lay_out_cpus(root: &Path) {
    for i in 0..CPUS {
        let dir = root.join(format!("sys/devices/system/cpu/cpu{i}"));
        std::fs::create_dir_all(&dir).expect("cpu dir");
        std::fs::write(dir.join("online"), if i == 0 { "1\n" } else { "0\n" }).expect("online");
        std::fs::write(dir.join("configure"), "1\n").expect("configure");
    }
    std::fs::write(
        root.join("sys/devices/system/cpu/present"),
        format!("0-{}\n", CPUS - 1),
    )
    .expect("present");
    std::fs::write(root.join("proc/sys/vm/cmm_pages"), "0\n").expect("cmm_pages");
    std::fs::write(
        root.join("proc/cpuinfo"),
        plugtop::sim::published_root::zvm_cpuinfo(CPUS),
    )
    .expect("cpuinfo");
}

impl TestKernel {
    /// A guest with `CPUS` CPUs of which only cpu0 is online, and CMM.
    fn start(root: PathBuf) -> TestKernel {
        lay_out_cpus(&root);
        let stop = Arc::new(AtomicBool::new(false));
        let phase = Arc::new(AtomicU8::new(BUSY));
        let (tx, rx) = channel();
        let thread = {
            let (stop, phase) = (Arc::clone(&stop), Arc::clone(&phase));
            std::thread::spawn(move || kernel_loop(&root, &stop, &phase, &tx))
        };
        TestKernel {
            stop,
            phase,
            seen: rx,
            thread: Some(thread),
        }
    }

    /// Waits (bounded) until the kernel sees a state for which `done` holds;
    /// returns every state seen on the way.
    fn until(&self, what: &str, done: impl Fn(Seen) -> bool) -> Vec<Seen> {
        let deadline = Instant::now() + common::hang_guard();
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Ok(s) = self.seen.recv_timeout(Duration::from_millis(100)) {
                seen.push(s);
                if done(s) {
                    return seen;
                }
            }
        }
        panic!("timed out waiting for {what}; last seen {:?}", seen.last());
    }
}

impl Drop for TestKernel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One step every 5 ms of simulated kernel time.
fn kernel_loop(root: &Path, stop: &AtomicBool, phase: &AtomicU8, seen: &Sender<Seen>) {
    let mut ticks = [[0u64; 10]; CPUS as usize];
    let mut scans = 0u64;
    let mut step = 0u64;
    let mut last_pool = 0;
    let token = write_token(root);
    while !stop.load(Ordering::SeqCst) {
        step += 1;
        // Seen gone before the `online` files are read: plugtop removes it
        // only after its write, so the list below includes that write.
        let acknowledge = !token.exists();
        let online = online_ids(root);
        let busy = phase.load(Ordering::SeqCst) == BUSY;
        for id in &online {
            let t = &mut ticks[*id as usize];
            if busy {
                t[0] += 9;
                t[3] += 1;
            } else {
                t[0] += 1;
                t[3] += 9;
            }
        }
        if !busy {
            scans += 500;
        }
        let mut total = [0u64; 10];
        for t in &ticks {
            for (a, b) in total.iter_mut().zip(t) {
                *a += b;
            }
        }
        let mut stat = String::from("cpu ");
        for v in total {
            let _ = write!(stat, " {v}");
        }
        stat.push('\n');
        for id in &online {
            let _ = write!(stat, "cpu{id}");
            for v in ticks[*id as usize] {
                let _ = write!(stat, " {v}");
            }
            stat.push('\n');
        }
        atomic_write(&root.join("proc/stat"), &stat);
        let list = online
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        atomic_write(
            &root.join("sys/devices/system/cpu/online"),
            &format!("{list}\n"),
        );
        if acknowledge {
            std::fs::write(&token, "").expect("write token");
        }
        let free = if busy { 2_000_000 } else { 100_000 };
        atomic_write(
            &root.join("proc/meminfo"),
            &format!("MemTotal: 4000000 kB\nMemFree: {free} kB\nCached: 1000 kB\nShmem: 10 kB\n"),
        );
        atomic_write(
            &root.join("proc/vmstat"),
            &format!(
                "pgpgin {step}\npgpgout {step}\npswpin 0\npswpout 0\npgscan_kswapd 0\npgscan_direct {scans}\n"
            ),
        );
        last_pool = read_pool(root).unwrap_or(last_pool);
        let _ = seen.send(Seen {
            online: online.len() as u32,
            pool: last_pool,
        });
        std::thread::sleep(Duration::from_millis(5));
    }
}

const RULES: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"3\"\nCMM_MIN=\"0\"\nCMM_MAX=\"5000\"\n\
HOTPLUG=\"idle < 30\"\nHOTUNPLUG=\"idle > 150\"\nCMM_INC=\"1000\"\nCMM_DEC=\"2000\"\n\
MEMPLUG=\"vmstat.pgscan_direct[0] - vmstat.pgscan_direct[1] > 100\"\nMEMUNPLUG=\"meminfo.MemFree > 1000000\"\n";

fn guest() -> (FakeRoot, PathBuf) {
    let root = FakeRoot::guest(1);
    let rules = root.path().join("rules.conf");
    std::fs::write(&rules, RULES).expect("rules");
    (root, rules)
}

/// A `plugtop run` child, killed if the test fails before it ends (so a
/// failing test leaves no daemon behind).
struct Running(Option<Child>);

impl Running {
    fn wait_with_output(mut self) -> std::io::Result<std::process::Output> {
        match self.0.take() {
            Some(c) => c.wait_with_output(),
            None => Err(std::io::Error::other("already waited for")),
        }
    }
}

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        self.0.as_ref().expect("a running child")
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        self.0.as_mut().expect("a running child")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `plugtop` whose writes return only once the test kernel has followed
/// them (see [`write_token`]).
fn plugtop_beside_kernel(root: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plugtop"));
    cmd.env("PLUGTOP_TEST_WRITE_TOKEN", write_token(root));
    cmd
}

fn start_run(root: &Path, rules: &Path, extra_env: Option<(&str, &str)>) -> Running {
    let mut cmd = plugtop_beside_kernel(root);
    cmd.args(["run", "-f", "-V", "--interval-ms", "30", "-c"])
        .arg(rules)
        .arg("--root")
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some((k, v)) = extra_env {
        cmd.env(k, v);
    }
    Running(Some(cmd.spawn().expect("start plugtop run")))
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(child.id().to_string())
        .status();
    assert!(status.is_ok_and(|s| s.success()), "kill -{sig} failed");
}

fn assert_start_state(root: &Path) {
    assert_eq!(online_ids(root), vec![0], "CPUs back to the start state");
    assert_eq!(pool(root), 0, "pool back to the start state");
    assert!(
        !root.join("run/plugtop/state").exists(),
        "journal removed after the restore"
    );
}

#[test]
fn plugs_under_load_unplugs_when_idle_and_restores_on_sigterm() {
    let (root, rules) = guest();
    let kernel = TestKernel::start(root.path().to_path_buf());
    let child = start_run(root.path(), &rules, None);
    let busy = kernel.until("3 CPUs and a full pool under load", |s| {
        s.online == 3 && s.pool == 5000
    });
    assert!(
        root.path().join("run/plugtop/state").exists(),
        "journal written before acting"
    );
    kernel.phase.store(IDLE_UNDER_PRESSURE, Ordering::SeqCst);
    let idle = kernel.until(
        "1 CPU and an empty pool when idle under memory pressure",
        |s| s.online == 1 && s.pool == 0,
    );
    for s in busy.iter().chain(&idle) {
        assert!((1..=3).contains(&s.online), "CPU limits respected: {s:?}");
        assert!((0..=5000).contains(&s.pool), "pool limits respected: {s:?}");
    }
    kernel.phase.store(BUSY, Ordering::SeqCst);
    kernel.until("plugging again", |s| s.online == 3);
    // Reloaded rules that unplug under the same load: only they bring the
    // guest down to one CPU, so the reload is known to have happened
    // before the TERM (a wait on the old rules raced it under load).
    std::fs::write(
        &rules,
        RULES
            .replace("HOTPLUG=\"idle < 30\"", "HOTPLUG=\"0\"")
            .replace("HOTUNPLUG=\"idle > 150\"", "HOTUNPLUG=\"1\""),
    )
    .expect("new rules");
    signal(&child, "HUP");
    kernel.until("the reloaded rules unplugging", |s| s.online == 1);
    signal(&child, "TERM");
    let out = child.wait_with_output().expect("plugtop exits");
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{log}\n{}", crate::common::said(&out));
    assert!(
        log.contains("changing number of pages permanently reserved to 5000"),
        "{log}"
    );
    assert!(
        log.contains("plugged cpu1") && log.contains("unplugged cpu"),
        "{log}"
    );
    assert!(
        log.contains("reloaded") && log.contains("start state kept"),
        "{log}"
    );
    drop(kernel);
    assert_start_state(root.path());
}

/// `plugtop run -f | head`: cpuplugd dies of SIGPIPE with the guest as it
/// is; plugtop puts the guest back and ends as SIGPIPE would have ended it.
#[test]
fn a_log_reader_that_goes_away_ends_the_run_with_the_guest_put_back() {
    let (root, rules) = guest();
    let kernel = TestKernel::start(root.path().to_path_buf());
    let mut child = start_run(root.path(), &rules, None);
    kernel.until("3 CPUs and a full pool under load", |s| {
        s.online == 3 && s.pool == 5000
    });
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("plugtop exits");
    let said = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(141), "{said}");
    assert!(said.contains("the log's reader went away"), "{said}");
    drop(kernel);
    assert_start_state(root.path());
}

#[test]
fn a_panic_restores_the_start_state() {
    let (root, rules) = guest();
    let kernel = TestKernel::start(root.path().to_path_buf());
    let child = start_run(root.path(), &rules, Some(("PLUGTOP_FAULT", "control:16")));
    let out = child.wait_with_output().expect("plugtop exits");
    assert_eq!(out.status.code(), Some(101), "a panic ends the process");
    let err = crate::common::said(&out);
    assert!(
        err.contains("injected fault in the control thread")
            && err.contains("the start state was restored and the journal removed"),
        "{err}"
    );
    assert!(!root.path().join("run/plugtop/state").exists());
    drop(kernel);
    assert_start_state(root.path());
}

#[test]
fn kill_9_then_restore_puts_the_guest_back() {
    let (root, rules) = guest();
    let kernel = TestKernel::start(root.path().to_path_buf());
    let mut child = start_run(root.path(), &rules, None);
    kernel.until("a change to undo", |s| s.online >= 2 && s.pool > 0);
    child.kill().expect("kill -9");
    let _ = child.wait();
    drop(kernel);
    assert!(
        root.path().join("run/plugtop/state").exists(),
        "the journal survives kill -9"
    );
    assert_ne!(online_ids(root.path()), vec![0]);
    let again = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "-c"])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .output()
        .expect("run");
    assert_eq!(
        again.status.code(),
        Some(78),
        "refuses to start over a dead plugtop's journal"
    );
    assert!(crate::common::said(&again).contains("plugtop restore"));
    let restore = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["restore", "--root"])
        .arg(root.path())
        .output()
        .expect("restore");
    assert!(
        restore.status.success(),
        "{}",
        crate::common::said(&restore)
    );
    assert_start_state(root.path());
}

#[test]
fn force_adopts_the_start_state_of_a_dead_run() {
    let (root, rules) = guest();
    let kernel = TestKernel::start(root.path().to_path_buf());
    let mut child = start_run(root.path(), &rules, None);
    kernel.until("a change to undo", |s| s.online >= 2 && s.pool > 0);
    child.kill().expect("kill -9");
    let _ = child.wait();
    let forced = plugtop_beside_kernel(root.path())
        .args(["run", "-f", "--force", "--interval-ms", "30", "-c"])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .env("PLUGTOP_FAULT", "control:3")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run --force");
    // Under the hang guard: its writes wait for the test kernel's token.
    let forced = common::Spawned::new(forced).finish("run --force");
    let out = String::from_utf8_lossy(&forced.stdout);
    assert!(
        out.contains("started"),
        "--force starts over a dead journal: {out}"
    );
    drop(kernel);
    // Its panic put back the start state of the dead run, not its own.
    assert_start_state(root.path());
}

#[test]
fn refuses_to_act_beside_cpuplugd_or_another_plugtop() {
    let (root, rules) = guest();
    let _kernel = TestKernel::start(root.path().to_path_buf());
    // cpuplugd acting on this root holds its lock (this test plays it);
    // the pid in its pid file is not looked up under --root (newuser51 #8).
    root.write("run/cpuplugd.pid", &format!("{}\n", std::process::id()));
    std::fs::create_dir_all(root.path().join("var/lock")).expect("lock dir");
    let lock = std::fs::File::create(root.path().join("var/lock/cpuplugd.lock")).expect("lock");
    lock.try_lock().expect("the lock is free");
    let out = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "-c"])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "cpuplugd's status for its own refusal"
    );
    // The pid file refuses first, as it does cpuplugd's own start.
    let err = crate::common::said(&out);
    assert!(
        err.contains("cpuplugd.pid exists but") && err.contains(&std::process::id().to_string()),
        "{err}"
    );
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "nothing written"
    );
    drop(lock);
    root.remove("run/cpuplugd.pid");

    let first = start_run(root.path(), &rules, None);
    _kernel.until("the first plugtop acting", |s| s.pool > 0);
    let second = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "-c"])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .output()
        .expect("second run");
    assert_eq!(
        second.status.code(),
        Some(1),
        "a second daemon: cpuplugd's status"
    );
    let err = crate::common::said(&second);
    assert!(
        err.contains("another plugtop") || err.contains("is locked"),
        "{err}"
    );
    signal(&first, "TERM");
    let _ = first.wait_with_output();
}

#[test]
fn without_f_it_detaches_writes_a_pid_file_and_stops_on_sigterm() {
    let (root, rules) = guest();
    let _kernel = TestKernel::start(root.path().to_path_buf());
    let status = plugtop_beside_kernel(root.path())
        .args(["run", "--mode", "observe", "--interval-ms", "20", "-c"])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .status()
        .expect("run");
    assert!(status.success(), "the parent returns at once");
    let pid_file = root.path().join("run/plugtop.pid");
    let deadline = Instant::now() + common::hang_guard();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "no pid file");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(
        Path::new(&format!("/proc/{pid}")).exists(),
        "the daemon runs"
    );
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
    while pid_file.exists() {
        assert!(Instant::now() < deadline, "the daemon did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_refused_second_daemon_leaves_the_first_ones_pid_file_alone() {
    let (root, rules) = guest();
    let _kernel = TestKernel::start(root.path().to_path_buf());
    let start = || {
        plugtop_beside_kernel(root.path())
            .args(["run", "--interval-ms", "20", "-c"])
            .arg(&rules)
            .arg("--root")
            .arg(root.path())
            .output()
            .expect("run")
    };
    let first = start();
    assert!(first.status.success(), "{first:?}");
    // The pid file is written before the daemon tells its parent it runs.
    let pid_file = root.path().join("run/plugtop.pid");
    let pid = std::fs::read_to_string(&pid_file).expect("the first daemon's pid file");
    let second = start();
    assert_eq!(second.status.code(), Some(1), "the guest is taken");
    assert!(
        crate::common::said(&second).contains("locked"),
        "{second:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&pid_file).ok().as_deref(),
        Some(pid.as_str()),
        "the refused start left the running daemon's pid file as it was"
    );
    let pid = pid.trim().to_string();
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    // It ends by removing its pid file (bounded by polls, not by time).
    for _ in 0..100_000 {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!pid_file.exists(), "the daemon removed its pid file");
}

/// The most starved test kernel there can be: it publishes `cpu/online`
/// only when plugtop's write token asks it to, never on its own, until
/// `stop`.
fn acknowledge_only(root: &Path, stop: &AtomicBool) {
    let token = write_token(root);
    while !stop.load(Ordering::SeqCst) {
        if token.exists() {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let list: Vec<String> = online_ids(root).iter().map(u32::to_string).collect();
        atomic_write(
            &root.join("sys/devices/system/cpu/online"),
            &(list.join(",") + "\n"),
        );
        std::fs::write(&token, "").expect("write token");
    }
}

/// A write returns only once the kernel's list shows it, however late the
/// kernel gets to it: rules that plug every interval stop at CPU_MAX, and
/// intervals that follow (which read the list after the last write) plug
/// nothing more. Before, a lagging list made plugtop plug one CPU too many.
#[test]
fn a_write_returns_only_after_the_kernel_list_follows_it() {
    let (root, _) = guest();
    lay_out_cpus(root.path());
    let rules = root.path().join("plug.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"3\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let stop = Arc::new(AtomicBool::new(false));
    let kernel = {
        let (root, stop) = (root.path().to_path_buf(), Arc::clone(&stop));
        std::thread::spawn(move || acknowledge_only(&root, &stop))
    };
    let mut child = start_run(root.path(), &rules, None);
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The verbose log's interval lines: time, reading number, ….
    let reading = |line: &str| line.split_whitespace().nth(1)?.parse::<u64>().ok();
    let mut log = Vec::new();
    while !log
        .iter()
        .any(|l: &String| reading(l).is_some_and(|n| n >= 8))
    {
        match lines.recv_timeout(common::hang_guard()) {
            Ok(line) => log.push(line),
            Err(e) => panic!("no 8th interval ({e}): {log:#?}"),
        }
    }
    assert_eq!(
        online_ids(root.path()),
        vec![0, 1, 2],
        "CPU_MAX reached and kept: {log:#?}"
    );
    signal(&child, "TERM");
    let out = child.wait_with_output().expect("plugtop exits");
    log.extend(lines.iter());
    assert!(out.status.success(), "{}", crate::common::said(&out));
    assert!(log.iter().any(|l| l == "plugged cpu2"), "{log:#?}");
    assert!(
        !log.iter()
            .any(|l| l.starts_with("plugged cpu3") || l.contains("cannot plug")),
        "nothing plugged past CPU_MAX: {log:#?}"
    );
    stop.store(true, Ordering::SeqCst);
    kernel.join().expect("the test kernel");
    assert_eq!(online_ids(root.path()), vec![0], "the start state is back");
}
