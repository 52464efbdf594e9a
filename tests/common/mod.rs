//! Fake roots laid out like `/`, built in temporary directories, so tests
//! never touch the real /proc or /sys.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// How long a test waits for something that should happen before it calls
/// it hung and fails. A hang guard, never a measurement: CI shares a loaded
/// 2-core machine, so what things cost is measured in `scripts/` and
/// `benches/`, and a pass never depends on how fast it came. 120 s, or
/// the seconds PLUGTOP_TEST_HANG_GUARD says: an emulated machine
/// (scripts/s390x-suite.sh) runs the same work tens of times slower.
pub fn hang_guard() -> Duration {
    static GUARD: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *GUARD.get_or_init(|| {
        let secs = std::env::var("PLUGTOP_TEST_HANG_GUARD")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(120);
        Duration::from_secs(secs)
    })
}

/// A temporary root directory with proc/ and sys/ files.
pub struct FakeRoot {
    dir: tempfile::TempDir,
}

/// One CPU's ten tick columns.
pub type Ticks = [u64; 10];

impl FakeRoot {
    /// An empty root.
    pub fn new() -> Self {
        FakeRoot {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file below the root, creating directories.
    pub fn write(&self, rel: &str, text: &str) {
        let path = self.dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create directories");
        }
        std::fs::write(path, text).expect("write file");
    }

    /// `n` CPUs whose `online` and `configure` files exist, cpu0 the only
    /// one online: a guest for rules that plug a CPU every interval.
    pub fn one_cpu_online(&self, n: u32) {
        for i in 0..n {
            self.write(
                &format!("sys/devices/system/cpu/cpu{i}/online"),
                if i == 0 { "1\n" } else { "0\n" },
            );
            self.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
        }
        self.write("sys/devices/system/cpu/online", "0\n");
    }

    /// Removes a file below the root.
    pub fn remove(&self, rel: &str) {
        let _ = std::fs::remove_file(self.dir.path().join(rel));
    }

    /// /proc/stat with the aggregate line (sum of the CPUs) and one line per CPU given.
    pub fn stat(&self, cpus: &[(u32, Ticks)]) {
        let mut total = [0u64; 10];
        for (_, t) in cpus {
            for (a, b) in total.iter_mut().zip(t) {
                *a += b;
            }
        }
        let mut text = String::from("cpu ");
        for v in total {
            let _ = write!(text, " {v}");
        }
        text.push('\n');
        for (id, t) in cpus {
            let _ = write!(text, "cpu{id}");
            for v in t {
                let _ = write!(text, " {v}");
            }
            text.push('\n');
        }
        text.push_str("intr 12345 0 0 0\nctxt 999\nbtime 1700000000\nprocesses 4242\nprocs_running 2\nprocs_blocked 0\n");
        self.write("proc/stat", &text);
    }

    /// /proc/meminfo from name/kB pairs.
    pub fn meminfo(&self, fields: &[(&str, u64)]) {
        let text: String = fields
            .iter()
            .map(|(n, v)| format!("{n}:{:>16} kB\n", v))
            .collect();
        self.write("proc/meminfo", &text);
    }

    /// /proc/vmstat from name/value pairs.
    pub fn vmstat(&self, fields: &[(&str, u64)]) {
        let text: String = fields.iter().map(|(n, v)| format!("{n} {v}\n")).collect();
        self.write("proc/vmstat", &text);
    }

    /// A small, complete guest: `n` CPUs all online, CMM present.
    pub fn guest(n: u32) -> Self {
        let root = FakeRoot::new();
        let cpus: Vec<(u32, Ticks)> = (0..n)
            .map(|i| (i, [100 + u64::from(i), 1, 50, 1000, 5, 0, 2, 7, 0, 0]))
            .collect();
        root.stat(&cpus);
        root.write("proc/loadavg", "0.42 0.30 0.20 2/150 4242\n");
        root.meminfo(&[
            ("MemTotal", 2_097_152),
            ("MemFree", 524_288),
            ("Cached", 262_144),
            ("Shmem", 1024),
        ]);
        root.vmstat(&[
            ("nr_free_pages", 131_072),
            ("pgpgin", 1000),
            ("pgpgout", 2000),
            ("pswpin", 0),
            ("pswpout", 0),
            ("pgscan_kswapd", 10),
            ("pgscan_direct", 0),
        ]);
        root.write("proc/sys/vm/cmm_pages", "0\n");
        root.write(
            "proc/cpuinfo",
            &plugtop::sim::published_root::zvm_cpuinfo(n),
        );
        root.write(
            "proc/sysinfo",
            &plugtop::sim::published_root::zvm_sysinfo("LINUX01", n),
        );
        let list = if n == 1 {
            "0\n".to_string()
        } else {
            format!("0-{}\n", n - 1)
        };
        root.write("sys/devices/system/cpu/online", &list);
        root.write("sys/devices/system/cpu/present", &list);
        root.write("sys/devices/system/cpu/possible", &list);
        root
    }
}

/// Runs the plugtop binary (from the repository root, as cargo runs tests).
/// Rules that plug a CPU every interval, up to every CPU present.
pub const PLUG_EVERY_INTERVAL: &str =
    "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n";

/// Which of the first `n` CPUs below `root` are online now.
pub fn online_cpus(root: &Path, n: u32) -> Vec<u32> {
    (0..n)
        .filter(|i| {
            std::fs::read_to_string(root.join(format!("sys/devices/system/cpu/cpu{i}/online")))
                .is_ok_and(|t| t.trim() == "1")
        })
        .collect()
}

/// A finished command's standard output, then its standard error
/// ([`said`]).
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), said(o))
}

/// A finished command's standard error with the rows it wrapped at 80
/// columns (in a pipe, as here) joined back into their lines, so a test
/// looks for a message whole: a row that goes on a line is indented two
/// columns; a rule's quoted line (`6 | ...`), its caret and its notes
/// (`= ...`) are lines of their own.
pub fn said(o: &Output) -> String {
    unwrapped(&String::from_utf8_lossy(&o.stderr))
}

/// [`said`] of any text.
pub fn unwrapped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_start();
        let row = line.starts_with("  ")
            && !body.starts_with(['|', '=', '^'])
            && !body
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .starts_with(" |")
            && out.ends_with('\n')
            && !out.ends_with("\n\n")
            && !out.is_empty();
        if row {
            out.pop();
            out.push(' ');
            out.push_str(body);
        } else {
            out.push_str(line);
        }
    }
    out
}

pub fn plugtop(args: &[&str]) -> std::process::Output {
    match std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(args)
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("cannot run plugtop: {e}"),
    }
}

/// A temporary directory, removed when dropped.
pub fn tempdir() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    }
}

/// A shipped scenario, by file name without `.toml`.
pub fn scenario(name: &str) -> plugtop::sim::Scenario {
    let path = Path::new("examples/scenarios").join(format!("{name}.toml"));
    match plugtop::sim::Scenario::load(&path) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// The shipped scenario `scenario` under the shipped rule file `rules`
/// (file names without extensions), headless.
pub fn simulate(
    scenario_name: &str,
    rules: &str,
    options: &plugtop::sim::run::SimOptions,
) -> plugtop::sim::run::SimOutcome {
    let path = Path::new("examples/rules").join(format!("{rules}.conf"));
    match plugtop::sim::run::simulate(
        &scenario(scenario_name),
        &path,
        options,
        &mut |_| {},
        &mut |_| {},
    ) {
        Ok(o) => o,
        Err(e) => panic!("{rules} on {scenario_name}: {e}"),
    }
}

/// `scenario_name` under `rules` for `seconds`, a reading every
/// `interval` simulated seconds, recorded as `rec`.
pub fn record_simulated(scenario_name: &str, rules: &str, seconds: f64, interval: f64, rec: &Path) {
    let options = plugtop::sim::run::SimOptions {
        duration: Some(seconds),
        interval: Some(interval),
        old_kernel: false,
        record: Some(rec.to_path_buf()),
        keep_timeline: false,
        flap: plugtop::control::flap::FlapConfig::default(),
    };
    simulate(scenario_name, rules, &options);
}

/// Records the fixture series `tests/fixtures/series/oldkernel` (20
/// samples) as `dir/name`; the recording's path.
pub fn record_fixture_series(dir: &Path, name: &str) -> String {
    let rec = dir.join(name).to_string_lossy().into_owned();
    let o = plugtop(&[
        "record",
        "-o",
        &rec,
        "--snapshots",
        "tests/fixtures/series/oldkernel",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    rec
}

/// A relative link target that climbs out of wherever the link sits (more
/// `..` than any temporary directory is deep) and then down to `target`
/// (absolute): a link that leads outside a root by `..`.
pub fn climbing_to(target: &Path) -> std::path::PathBuf {
    let down = target.strip_prefix("/").unwrap_or(target);
    Path::new(&"../".repeat(64)).join(down)
}

/// Makes `root/dev/zero` the zero device; false when not allowed (not root).
pub fn zero_device_in(root: &std::path::Path) -> bool {
    std::fs::create_dir_all(root.join("dev")).expect("dev");
    let zero = rustix::fs::makedev(1, 5);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("dev/zero"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        zero,
    )
    .is_ok()
}

/// A child process that is killed when dropped, so a failing test never
/// leaves a daemon running behind it.
pub struct Spawned(Option<Child>);

impl Spawned {
    /// Takes charge of `child`.
    pub fn new(child: Child) -> Self {
        Spawned(Some(child))
    }

    /// The child itself (to take its pipes, say).
    pub fn child(&mut self) -> &mut Child {
        match self.0.as_mut() {
            Some(c) => c,
            None => panic!("the child was already waited for"),
        }
    }

    /// Sends it `signal`.
    pub fn signal(&mut self, signal: rustix::process::Signal) {
        let pid = self.child().id();
        kill(pid, signal);
    }

    /// Whether it has ended already (never waits).
    pub fn has_ended(&mut self) -> bool {
        matches!(self.child().try_wait(), Ok(Some(_)))
    }

    /// Waits for it to end; past [`hang_guard`] kills it and fails the
    /// test saying `what` hung. Its stdout and stderr, when piped and not
    /// taken already, are read meanwhile (so a chatty child never blocks
    /// on a full pipe).
    pub fn finish(mut self, what: &str) -> Output {
        let Some(child) = self.0.take() else {
            panic!("{what}: already waited for");
        };
        let pid = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(hang_guard()) {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => panic!("{what}: cannot wait for it: {e}"),
            Err(_) => {
                kill(pid, rustix::process::Signal::KILL);
                panic!("{what}: still running after {:?}; killed", hang_guard())
            }
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Sends `signal` to the process `pid` (a child of this test).
pub fn kill(pid: u32, signal: rustix::process::Signal) {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// Sets the soft limit of descriptors of the process `pid` (a child of
/// this test; its hard limit kept, the one this test has).
pub fn descriptor_limit(pid: u32, soft: u64) {
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum;
    rustix::process::prlimit(
        rustix::process::Pid::from_raw(i32::try_from(pid).expect("a pid")),
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: Some(soft),
            maximum: hard,
        },
    )
    .expect("set the process's limit of descriptors");
}

/// Waits until `done` holds, looking again every few milliseconds; fails
/// the test saying `what` never happened past [`hang_guard`].
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + hang_guard();
    while !done() {
        assert!(
            Instant::now() < deadline,
            "{what}: not after {:?}",
            hang_guard()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The screen acting (`--mode auto`, every 50 ms) on `root` with the rules
/// at `rules`, in a pseudo-terminal of `rows` x `cols`, with
/// `PLUGTOP_FAULT` set to `fault` when given. Returns the terminal's master
/// side (the test reads it, or on purpose never does) and the child.
pub fn armed_screen_on_a_pty(
    root: &Path,
    rules: &Path,
    (rows, cols): (u16, u16),
    fault: Option<&str>,
) -> (
    Box<dyn portable_pty::MasterPty + Send>,
    Box<dyn portable_pty::Child + Send + Sync>,
) {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let pair = native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("pty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_plugtop"));
    cmd.args(["--mode", "auto", "--interval", "0.05", "--root"]);
    cmd.arg(root);
    cmd.arg("-c");
    cmd.arg(rules);
    cmd.env("TERM", "xterm-256color");
    if let Some(fault) = fault {
        cmd.env("PLUGTOP_FAULT", fault);
    }
    cmd.cwd(env!("CARGO_MANIFEST_DIR"));
    let child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    (pair.master, child)
}
