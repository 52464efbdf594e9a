//! One failure policy for every thread: a panic anywhere puts the guest
//! back once and ends the process with 101, keeping the journal exactly
//! when the restore was incomplete. The panics are injected through the
//! test build's `fault-injection` feature (`PLUGTOP_FAULT=SITE:N`); a
//! shipped binary has no such hook. Also: `plugtop run` refuses to act on
//! a `/` that is not s390 unless told to.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;

use common::FakeRoot;

const CPU_DIR: &str = "sys/devices/system/cpu";

/// Four CPUs, cpu0 online; rules that plug a CPU every interval.
fn guest() -> (FakeRoot, tempfile::TempDir) {
    let root = FakeRoot::guest(4);
    root.one_cpu_online(4);
    let dir = common::tempdir();
    std::fs::write(dir.path().join("plug.conf"), common::PLUG_EVERY_INTERVAL).expect("rules");
    (root, dir)
}

fn online(root: &Path) -> Vec<u32> {
    common::online_cpus(root, 4)
}

fn run(root: &Path, rules: &Path, fault: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args([
            "run",
            "-f",
            "--interval-ms",
            "20",
            "--metrics-listen",
            "127.0.0.1:0",
            "-c",
        ])
        .arg(rules)
        .arg("--root")
        .arg(root)
        .env("PLUGTOP_FAULT", fault)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("plugtop run starts")
}

/// Reads the run's log until a line holds `want`; returns the metrics
/// address it announced and whether `want` was seen before the log ended.
fn read_until(lines: &mut impl Iterator<Item = String>, want: &str) -> (Option<String>, bool) {
    let mut addr = None;
    for line in lines {
        if let Some(rest) = line.split("metrics at http://").nth(1) {
            addr = rest.split('/').next().map(str::to_string);
        }
        if line.contains(want) {
            return (addr, true);
        }
    }
    (addr, false)
}

fn scrape(addr: &str) {
    if let Ok(mut s) = TcpStream::connect(addr) {
        let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
}

#[test]
fn a_panic_in_the_metrics_thread_restores_the_guest_and_ends_the_run() {
    let (root, dir) = guest();
    let mut child = run(root.path(), &dir.path().join("plug.conf"), "metrics:1");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let (addr, _) = read_until(&mut lines, "metrics at");
    let addr = addr.expect("the endpoint is announced");
    let (_, plugged) = read_until(&mut lines, "plugged cpu");
    assert!(plugged, "the run acts before the fault");
    assert_ne!(online(root.path()), vec![0]);
    scrape(&addr);
    let out = child.wait_with_output().expect("plugtop ends");
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert!(
        err.contains("injected fault in the metrics thread"),
        "{err}"
    );
    assert!(
        err.contains("the start state was restored and the journal removed"),
        "{err}"
    );
    assert_eq!(online(root.path()), vec![0], "the guest is put back");
    assert!(!root.path().join("run/plugtop/state").exists());
    assert!(!root.path().join("var/lock/cpuplugd.lock").exists());
}

#[test]
fn an_incomplete_restore_after_a_panic_keeps_the_journal_and_says_how_to_retry() {
    let (root, dir) = guest();
    let outside = common::tempdir();
    let mut child = run(root.path(), &dir.path().join("plug.conf"), "metrics:1");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let (addr, _) = read_until(&mut lines, "metrics at");
    let addr = addr.expect("the endpoint is announced");
    let (_, plugged) = read_until(&mut lines, "plugged cpu1");
    assert!(plugged);
    // cpu1 can no longer be written: its `online` leads outside the root.
    let target = outside.path().join("online");
    std::fs::write(&target, "1\n").expect("outside file");
    let link = root.path().join(format!("{CPU_DIR}/cpu1/online"));
    std::fs::remove_file(&link).expect("remove");
    let mut up = std::path::PathBuf::new();
    for _ in 0..root.path().components().count() + 4 {
        up.push("..");
    }
    std::os::unix::fs::symlink(up.join(target.strip_prefix("/").expect("absolute")), &link)
        .expect("link");
    scrape(&addr);
    let out = child.wait_with_output().expect("plugtop ends");
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert!(err.contains("cpu1"), "the failure is named: {err}");
    assert!(
        err.contains("is kept") && err.contains("plugtop restore --root"),
        "{err}"
    );
    assert!(
        root.path().join("run/plugtop/state").exists(),
        "the journal stays for plugtop restore"
    );
    assert_eq!(
        std::fs::read_to_string(&target).ok().as_deref(),
        Some("1\n"),
        "nothing outside the root was written"
    );
}

#[test]
fn run_refuses_a_non_s390_root_slash_without_the_option() {
    let dir = common::tempdir();
    let rules = dir.path().join("r.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"1\"\n",
    )
    .expect("rules");
    let own = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if own.contains("IBM/S390") {
        // On s390 the refusal does not apply (and this test must not act
        // on the machine): nothing to check here.
        return;
    }
    let lock_before = Path::new("/var/lock/cpuplugd.lock").exists();
    let journal_before = Path::new("/run/plugtop/state").exists();
    let out = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "-c"])
        .arg(&rules)
        .output()
        .expect("plugtop run");
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(78), "{err}");
    assert!(
        err.contains("not an s390 machine") && err.contains("--allow-non-zvm"),
        "{err}"
    );
    assert_eq!(Path::new("/var/lock/cpuplugd.lock").exists(), lock_before);
    assert_eq!(Path::new("/run/plugtop/state").exists(), journal_before);
}

#[test]
fn a_panic_in_the_screens_input_thread_restores_the_guest_and_the_terminal() {
    let (root, dir) = guest();
    let (master, mut child) = common::armed_screen_on_a_pty(
        root.path(),
        &dir.path().join("plug.conf"),
        (24, 80),
        Some("input:1"),
    );
    let mut reader = master.try_clone_reader().expect("reader");
    let mut input = master.take_writer().expect("writer");
    let (tx, rx) = channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let _master = master;
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let size = |n: u16| std::num::NonZeroU16::new(n).expect("non-zero");
    let mut screen = vt100::Parser::new(size(24), size(80), 0);
    let mut raw = Vec::new();
    // Until it acts (a CPU plugged), reading what it draws.
    while online(root.path()).len() < 2 {
        let bytes = rx.recv().expect("the screen runs until it acts");
        screen.process(&bytes);
        raw.extend_from_slice(&bytes);
    }
    input.write_all(b"x").expect("a key");
    input.flush().expect("flush");
    // Everything it prints until the terminal closes.
    while let Ok(bytes) = rx.recv() {
        screen.process(&bytes);
        raw.extend_from_slice(&bytes);
    }
    let status = child.wait().expect("plugtop ends");
    let text = String::from_utf8_lossy(&raw);
    assert_eq!(status.exit_code(), 101, "{text}");
    assert!(
        text.contains("injected fault in the input thread"),
        "{text}"
    );
    assert!(text.contains("start state was restored"), "{text}");
    assert_eq!(online(root.path()), vec![0], "the guest is put back");
    assert!(!root.path().join("run/plugtop/state").exists());
    // The terminal was given back before the panic was reported.
    let left = text
        .rfind("\x1b[?1049l")
        .expect("left the alternate screen");
    let reported = text.find("injected fault").expect("reported");
    assert!(left < reported, "{text}");
}

#[test]
fn a_bare_state_file_name_is_taken_from_the_current_directory() {
    let (root, dir) = guest();
    let mut child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "--interval-ms", "20", "--state", "st", "-c"])
        .arg(dir.path().join("plug.conf"))
        .arg("--root")
        .arg(root.path())
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("plugtop run starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let (_, plugged) = read_until(&mut lines, "plugged cpu");
    assert!(plugged, "it runs with --state st");
    assert!(dir.path().join("st").exists(), "the journal is ./st");
    drop(lines);
    let pid = child.id().to_string();
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    let out = child.wait_with_output().expect("plugtop ends");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!dir.path().join("st").exists(), "removed after the restore");
    assert_eq!(online(root.path()), vec![0]);
}
