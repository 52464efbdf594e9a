//! `plugtop run` starts, reloads and ends as cpuplugd does, on test roots:
//! one test per way the two used to end differently.

use crate::common;
use crate::common::text;

use std::io::Read;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use common::FakeRoot;

/// A guest with `cpus` present, the first `online` of them online, with
/// `configure` files unless told otherwise, CMM, and z/VM's cpuinfo.
fn guest(cpus: u32, online: u32, configure: bool) -> FakeRoot {
    let root = FakeRoot::guest(cpus);
    for i in 0..cpus {
        let dir = format!("sys/devices/system/cpu/cpu{i}");
        root.write(
            &format!("{dir}/online"),
            if i < online { "1\n" } else { "0\n" },
        );
        if configure {
            root.write(&format!("{dir}/configure"), "1\n");
        }
    }
    let list = if online == 1 {
        "0\n".to_string()
    } else {
        format!("0-{}\n", online - 1)
    };
    root.write("sys/devices/system/cpu/online", &list);
    root
}

fn rules(root: &FakeRoot, text: &str) -> String {
    let path = root.path().join("rules.conf");
    std::fs::write(&path, text).expect("rules");
    path.to_string_lossy().into_owned()
}

fn cpu(root: &FakeRoot, i: u32) -> String {
    std::fs::read_to_string(
        root.path()
            .join(format!("sys/devices/system/cpu/cpu{i}/online")),
    )
    .unwrap_or_default()
    .trim()
    .to_string()
}

/// `plugtop run -f -V` on the root, fast; killed if the test fails.
struct Run {
    child: Option<Child>,
    /// What it printed so far (stdout, then stderr), read as it comes.
    printed: [Arc<Mutex<Vec<u8>>>; 2],
    readers: Vec<std::thread::JoinHandle<()>>,
}

/// Copies what a pipe carries into `into` until it closes.
fn collect(
    mut pipe: impl Read + Send + 'static,
    into: Arc<Mutex<Vec<u8>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut chunk) {
            if n == 0 {
                break;
            }
            if let Ok(mut buf) = into.lock() {
                buf.extend_from_slice(&chunk[..n]);
            }
        }
    })
}

impl Run {
    fn start(root: &FakeRoot, rules: &str) -> Run {
        Run::every(root, rules, "20")
    }

    /// As [`Run::start`], one interval every `ms` milliseconds.
    fn every(root: &FakeRoot, rules: &str, ms: &str) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
            .args([
                "run",
                "-f",
                "-V",
                "--interval-ms",
                ms,
                "-c",
                rules,
                "--root",
            ])
            .arg(root.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start plugtop run");
        let printed = [Arc::default(), Arc::default()];
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(collect(out, Arc::clone(&printed[0])));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(collect(err, Arc::clone(&printed[1])));
        }
        Run {
            child: Some(child),
            printed,
            readers,
        }
    }

    /// Everything printed so far.
    fn log(&self) -> String {
        self.printed
            .iter()
            .map(|p| {
                String::from_utf8_lossy(&p.lock().map(|b| b.clone()).unwrap_or_default())
                    .into_owned()
            })
            .collect()
    }

    /// Waits until what it printed shows `what`.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) {
        common::wait_until(what, || ok(&self.log()));
    }

    fn signal(&self, name: &str) {
        let pid = self.child.as_ref().map_or(0, Child::id);
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{name}");
    }

    fn finish(mut self) -> Output {
        let status = match self.child.take() {
            Some(mut c) => c.wait().expect("wait"),
            None => panic!("already finished"),
        };
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let take = |p: &Arc<Mutex<Vec<u8>>>| p.lock().map(|b| b.clone()).unwrap_or_default();
        Output {
            status,
            stdout: take(&self.printed[0]),
            stderr: take(&self.printed[1]),
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The reading numbers of the verbose rows, in order.
fn readings(log: &str) -> Vec<usize> {
    log.lines()
        .filter_map(|l| l.get(9..)?.split_whitespace().next()?.parse().ok())
        .collect()
}

const IDLE_RULES: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"cpustat.user[3] < 0\"\nHOTUNPLUG=\"0\"\n";

#[test]
fn sighup_reapplies_a_lowered_cpu_max_at_once_and_keeps_the_history() {
    let root = guest(4, 4, true);
    let rules = rules(&root, IDLE_RULES);
    let run = Run::start(&root, &rules);
    run.wait_for("a few intervals have passed", |log| {
        readings(log).len() >= 5
    });
    std::fs::write(&rules, IDLE_RULES.replace("CPU_MAX=\"0\"", "CPU_MAX=\"2\"")).expect("rules");
    run.signal("HUP");
    // cpuplugd's order: the first online CPUs by name.
    common::wait_until("cpu0 and cpu1 go offline", || {
        cpu(&root, 0) == "0" && cpu(&root, 1) == "0"
    });
    let before = readings(&run.log()).len();
    run.wait_for("a few more intervals", |log| {
        readings(log).len() >= before + 5
    });
    run.signal("TERM");
    let out = run.finish();
    let log = text(&out);
    assert!(log.contains("reloaded"), "{log}");
    assert!(
        log.contains("unplugged cpu0") && log.contains("unplugged cpu1"),
        "{log}"
    );
    let rows = readings(&log);
    assert!(
        rows.windows(2).all(|w| w[1] == w[0] + 1),
        "no reading without a decision across the reload (history kept): {rows:?}\n{log}"
    );
    assert_eq!(
        (cpu(&root, 0), cpu(&root, 1), cpu(&root, 2)),
        ("1".into(), "1".into(), "1".into()),
        "the start state is restored at the end"
    );
}

/// newuser51 #11: a failed reload is one log entry on one line (the first
/// error with its place and the summary), not the excerpt and caret.
#[test]
fn a_failed_reload_is_one_line() {
    let root = guest(4, 4, true);
    let rules = rules(&root, IDLE_RULES);
    let run = Run::start(&root, &rules);
    run.wait_for("a first interval", |log| !readings(log).is_empty());
    std::fs::write(&rules, format!("{IDLE_RULES}HOTPLUG=\"idle >= 3\"\n")).expect("rules");
    run.signal("HUP");
    run.wait_for("the reload refused", |log| log.contains("reload failed"));
    run.signal("TERM");
    let log = text(&run.finish());
    let line = log
        .lines()
        .find(|l| l.contains("reload failed"))
        .unwrap_or_default();
    assert!(
        line.contains(":6:") && line.contains("error"),
        "{line}\n{log}"
    );
    assert!(line.contains("cpuplugd would refuse it"), "{line}");
    assert!(
        !log.lines()
            .any(|l| l.trim_start().starts_with('|') || l.contains("^^")),
        "{log}"
    );
}

/// Issue 42, item 1: a SIGHUP to a 2 MiB file of 150,000 chained variables
/// and 10,000 unknown names (minutes of checking on the control loop
/// before) neither stops the readings nor delays SIGTERM: the old rules
/// decide on, every reading in turn, the file is refused as cpuplugd
/// refuses it (its variables past 4,096 bytes), and the guest comes back.
#[test]
fn a_reload_to_a_hostile_file_never_stalls_the_readings_nor_the_stop() {
    let root = guest(4, 2, true);
    let plug_all = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n";
    let rules = rules(&root, plug_all);
    let run = Run::every(&root, &rules, "100");
    common::wait_until("cpu3 is plugged", || cpu(&root, 3) == "1");
    // Three-character names: 150,000 of them chained fit in 2 MiB.
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let name = |i: usize| {
        let at = |k: usize| char::from(CHARS[k]);
        format!(
            "{}{}{}",
            at(i / (62 * 62) % 52),
            at(i / 62 % 62),
            at(i % 62)
        )
    };
    let mut hostile = format!(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n{}=\"1\"\n",
        name(0)
    );
    for i in 1..150_000 {
        hostile.push_str(&format!("{}=\"{}\"\n", name(i), name(i - 1)));
    }
    for i in 0..10_000 {
        hostile.push_str(&format!("HOTUNPLUG=\"unknown{i} > 1\"\n"));
    }
    hostile.push_str(&format!("HOTPLUG=\"{} > 1\"\n", name(149_999)));
    assert!(hostile.len() <= 2 << 20, "{} bytes", hostile.len());
    std::fs::write(&rules, &hostile).expect("rules");
    let before = readings(&run.log()).len();
    run.signal("HUP");
    run.wait_for("the reload refused and three readings after it", |log| {
        log.contains("reload failed") && readings(log).len() >= before + 3
    });
    let log = run.log();
    assert!(log.contains("buffer for variables too small"), "{log}");
    // Counted, not timed: the readings the log showed before the stop,
    // then at most the one under way and one printed meanwhile.
    let asked = readings(&log).len();
    run.signal("TERM");
    let out = run.finish();
    let log = text(&out);
    let rows = readings(&log);
    assert!(
        rows.windows(2).all(|w| w[1] == w[0] + 1),
        "every reading decided, none skipped, across the reload: {rows:?}"
    );
    assert!(
        rows.len() <= asked + 2,
        "SIGTERM acted on within an interval: {} readings after it\n{log}",
        rows.len() - asked
    );
    assert!(log.contains("ended by SIGTERM"), "{log}");
    assert_eq!(
        (0..4).map(|i| cpu(&root, i)).collect::<Vec<_>>(),
        ["1", "1", "0", "0"],
        "the start state is restored"
    );
}

#[test]
fn outside_z_vm_the_memory_group_is_off_and_without_cpuinfo_it_does_not_start() {
    let root = guest(2, 1, true);
    root.write(
        "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\n",
    );
    root.write("proc/sys/vm/cmm_pages", "500\n");
    let rules = rules(
        &root,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nCMM_INC=\"10\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n",
    );
    let run = Run::start(&root, &rules);
    run.wait_for("a few intervals have passed", |log| {
        readings(log).len() >= 5
    });
    run.signal("TERM");
    let log = text(&run.finish());
    assert!(
        log.contains("memory group off: not a z/VM guest (no `version = FF` in /proc/cpuinfo)"),
        "{log}"
    );
    let pool = std::fs::read_to_string(root.path().join("proc/sys/vm/cmm_pages"));
    assert_eq!(
        pool.ok().as_deref(),
        Some("500\n"),
        "cmm_pages never written"
    );

    root.remove("proc/cpuinfo");
    let out = Run::start(&root, &rules).finish();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("proc/cpuinfo"), "{}", text(&out));
}

#[test]
fn cpu_min_above_the_cpus_present_is_refused_at_start() {
    let root = guest(4, 4, true);
    let rules = rules(
        &root,
        "UPDATE=\"1\"\nCPU_MIN=\"8\"\nCPU_MAX=\"8\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    );
    let out = Run::start(&root, &rules).finish();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("Detected 4 available cpus"),
        "{}",
        text(&out)
    );
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "nothing written"
    );
}

#[test]
fn cpus_without_configure_files_are_never_plugged() {
    // CPU_MIN above the online count cannot be reached: cpuplugd exits 1.
    let root = guest(4, 1, false);
    let rules_min = rules(
        &root,
        "UPDATE=\"1\"\nCPU_MIN=\"3\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    );
    let out = Run::start(&root, &rules_min).finish();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("configure"), "{}", text(&out));
    assert_eq!(cpu(&root, 1), "0");
    // HOTPLUG true never plugs such a CPU either, and says why when verbose.
    let rules_plug = rules(
        &root,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n",
    );
    let run = Run::start(&root, &rules_plug);
    run.wait_for("HOTPLUG was tried", |log| {
        log.contains("no `configure` file") && readings(log).len() >= 3
    });
    run.signal("TERM");
    let log = text(&run.finish());
    assert!(log.contains("no `configure` file"), "{log}");
    for i in 1..4 {
        assert_eq!(cpu(&root, i), "0", "cpu{i}");
    }
}

#[test]
fn a_fatal_memory_rule_comes_after_that_intervals_cpu_action() {
    let root = guest(4, 1, true);
    let rules = rules(
        &root,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nCMM_INC=\"10\"\nMEMPLUG=\"meminfo.NoSuchField > 1\"\nMEMUNPLUG=\"0\"\n",
    );
    let out = Run::start(&root, &rules).finish();
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    let plugged = log.find("plugged cpu1");
    let fatal = log.find("NoSuchField");
    assert!(
        plugged.is_some() && plugged < fatal,
        "the CPU action first, then the stop: {log}"
    );
    assert_eq!(cpu(&root, 1), "0", "restored before exiting");
    assert!(!root.path().join("run/plugtop/state").exists());
}

#[test]
fn start_up_refusals_exit_1_and_the_detached_parent_reports_them() {
    let root = guest(2, 1, true);
    let bad = rules(&root, "UPDATE=\"1\"\nHOTPLUG=\"loadavg >= 1\"\n");
    let out = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-c", &bad, "--root"])
        .arg(root.path())
        .output()
        .expect("run without -f");
    assert_eq!(
        out.status.code(),
        Some(1),
        "the parent exits with the refusal's status, cpuplugd's"
    );
    assert!(
        crate::common::said(&out).contains(">="),
        "and says why: {}",
        crate::common::said(&out)
    );
    assert!(!root.path().join("run/plugtop.pid").exists());
}

#[test]
fn a_stale_cpuplugd_pid_file_refuses_the_start() {
    // cpuplugd refuses to start while its pid file exists, stale or not,
    // and so does plugtop run; it says why the file is stale, never that
    // a cpuplugd runs (newuser51 #8).
    let root = guest(2, 1, true);
    root.write("run/cpuplugd.pid", "999999999\n");
    let rules = rules(&root, IDLE_RULES);
    let out = Run::start(&root, &rules).finish();
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out);
    assert!(said.contains("/run/cpuplugd.pid exists but"), "{said}");
    assert!(
        said.contains("cpuplugd would refuse to start too"),
        "{said}"
    );
    assert!(!said.contains("cpuplugd is running"), "{said}");
    assert!(!root.path().join("run/plugtop/state").exists());
}

#[test]
fn verbose_says_what_cpuplugd_says_and_the_lock_goes_at_exit() {
    let root = guest(2, 1, true);
    let rules = rules(
        &root,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"1\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nCMM_INC=\"-100\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n",
    );
    let run = Run::start(&root, &rules);
    run.wait_for("both limits were met", |log| {
        log.contains("maximum cpu limit is reached") && log.contains("cmm_inc went negative")
    });
    assert!(root.path().join("var/lock/cpuplugd.lock").exists());
    run.signal("TERM");
    let log = text(&run.finish());
    for want in [
        "reading HOTPL HOTUN CPU",
        "maximum cpu limit is reached",
        "cmm_inc went negative (-100), set it to 0.",
        "shutting down",
        "terminated",
    ] {
        assert!(log.contains(want), "missing {want:?} in:\n{log}");
    }
    assert!(
        !root.path().join("var/lock/cpuplugd.lock").exists(),
        "the lock file is removed on exit"
    );
}

/// nu54 F2: the online list a step behind a CPU's own file, as a `plugtop
/// sim --serve` root is right after `plugtop restore` wrote cpu0 back: the
/// start state journaled (and put back at the stop) is what each CPU's own
/// file says, cpu0, not the cpu1 the list still named (the stop then put
/// cpu1 online and cpu0 offline).
#[test]
fn the_start_state_is_what_each_cpus_own_online_file_says() {
    let root = guest(2, 1, true);
    root.write("sys/devices/system/cpu/online", "1\n");
    let rules = rules(
        &root,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    );
    let run = Run::start(&root, &rules);
    let journal = root.path().join("run/plugtop/state");
    common::wait_until("the journal written", || {
        std::fs::read_to_string(&journal).is_ok_and(|t| t.contains("\ncmm_pages "))
    });
    let written = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(written.contains("\nonline 0\n"), "{written}");
    run.signal("TERM");
    let out = run.finish();
    assert_eq!(
        (cpu(&root, 0), cpu(&root, 1)),
        ("1".to_string(), "0".to_string()),
        "{}",
        text(&out)
    );
}
