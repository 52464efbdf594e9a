//! The restore journal as an attacker or a damaged disk leaves it: every
//! bad journal is refused before anything is written, with its path, the
//! line and what is wrong, exit 1, and kept; a dead run's pid reused by
//! another process does not block the restore.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::FakeRoot;

const CPUS: u32 = 4;
const STATE: &str = "run/plugtop/state";
/// A pid no process has (above the kernel's `PID_MAX_LIMIT`).
const DEAD_PID: u32 = 999_999_999;

/// A guest with four hotpluggable CPUs (cpu3 offline) and a pool of 100.
fn guest() -> FakeRoot {
    let root = FakeRoot::guest(CPUS);
    for i in 0..CPUS {
        let on = if i == 3 { "0\n" } else { "1\n" };
        root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), on);
        root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
    }
    root.write("sys/devices/system/cpu/online", "0-2\n");
    root.write("proc/sys/vm/cmm_pages", "100\n");
    root
}

/// What a restore would write: every CPU's `online` and the pool.
fn guest_files(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = (0..CPUS)
        .map(|i| {
            std::fs::read_to_string(root.join(format!("sys/devices/system/cpu/cpu{i}/online")))
                .unwrap_or_default()
        })
        .collect();
    files.push(std::fs::read_to_string(root.join("proc/sys/vm/cmm_pages")).unwrap_or_default());
    files
}

fn canonical(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).expect("canonical root")
}

/// The lines of a good version-2 journal for `root`, by a dead run.
fn good_lines(root: &Path) -> Vec<String> {
    vec![
        "plugtop-state 2".into(),
        format!("pid {DEAD_PID}"),
        "started 12345".into(),
        format!("root {}", canonical(root).display()),
        "online 0-3".into(),
        "cmm_pages 0".into(),
    ]
}

fn write_journal(root: &FakeRoot, lines: &[String]) {
    root.write(STATE, &(lines.join("\n") + "\n"));
}

fn restore(root: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["restore", "--root"])
        .arg(root)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("run plugtop restore")
}

/// A refused journal: exit 1 (restore) or 78 (run), nothing written, the
/// journal kept as it was, and the message naming the journal and
/// `named` (its line).
fn assert_refused(out: &Output, named: &str) {
    let err = crate::common::said(out);
    assert!(matches!(out.status.code(), Some(1 | 78)), "{err}");
    assert!(
        err.contains("run/plugtop/state"),
        "names the journal: {err}"
    );
    assert!(err.contains(named), "names {named:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The good journal of a fresh guest changed by `edit`: restoring it is
/// refused naming `named`, writes nothing, keeps the journal as it was and
/// leaves no lock behind.
fn refused(edit: impl Fn(&mut Vec<String>), named: &str) {
    let root = guest();
    let mut lines = good_lines(root.path());
    edit(&mut lines);
    write_journal(&root, &lines);
    let before = guest_files(root.path());
    let journal = std::fs::read(root.path().join(STATE)).expect("journal");
    let out = restore(root.path(), &[]);
    assert_refused(&out, named);
    assert_eq!(guest_files(root.path()), before, "nothing written");
    assert_eq!(
        std::fs::read(root.path().join(STATE)).ok(),
        Some(journal),
        "the journal is kept as it was"
    );
    assert!(
        !root.path().join("var/lock/cpuplugd.lock").exists(),
        "no lock left behind"
    );
}

fn set(n: usize, text: &'static str) -> impl Fn(&mut Vec<String>) {
    move |lines: &mut Vec<String>| lines[n - 1] = text.to_string()
}

#[test]
fn a_cpu_the_guest_does_not_have_is_refused() {
    refused(set(5, "online 99"), "line 5");
    refused(set(5, "online 0-3,7"), "cpu7 does not exist");
}

#[test]
fn an_empty_or_absurd_online_list_is_refused_with_bounded_work() {
    refused(set(5, "online "), "line 5");
    refused(set(5, "online"), "refusing to take every CPU offline");
    refused(set(5, "online 0-100000"), "line 5");
    refused(set(5, "online 0-4294967295"), "line 5");
    refused(set(5, "online 3-1"), "line 5");
    refused(set(5, "online 0,0,1"), "line 5");
    refused(set(5, "online 0-1,0-1"), "line 5");
    refused(set(5, "online -1"), "line 5");
    refused(set(5, "online zero"), "line 5");
}

#[test]
fn a_pool_the_guest_cannot_hold_is_refused() {
    refused(set(6, "cmm_pages -5"), "line 6");
    refused(set(6, "cmm_pages 9223372036854775807"), "line 6");
    refused(set(6, "cmm_pages 9223372036854775808"), "line 6");
    // MemTotal is 2 GiB: 524,288 pages of 4 KiB.
    refused(set(6, "cmm_pages 524289"), "more than the guest's memory");
    refused(set(6, "cmm_pages 1e3"), "line 6");
    refused(set(6, "cmm_pages "), "line 6");
}

#[test]
fn a_pool_on_a_guest_without_cmm_or_meminfo_is_refused() {
    let root = guest();
    write_journal(&root, &good_lines(root.path()));
    root.remove("proc/sys/vm/cmm_pages");
    let out = restore(root.path(), &[]);
    assert_refused(&out, "line 6");
    assert!(root.path().join(STATE).exists());
    let root = guest();
    write_journal(&root, &good_lines(root.path()));
    root.write("proc/meminfo", "MemFree: 1 kB\n");
    let out = restore(root.path(), &[]);
    assert_refused(&out, "no MemTotal");
    assert_eq!(
        std::fs::read_to_string(root.path().join("proc/sys/vm/cmm_pages")).ok(),
        Some("100\n".into())
    );
}

#[test]
fn missing_lines_are_refused_and_none_is_the_only_way_to_skip_the_pool() {
    for (n, key) in [
        (2, "pid"),
        (3, "started"),
        (4, "root"),
        (5, "online"),
        (6, "cmm_pages"),
    ] {
        refused(
            |lines: &mut Vec<String>| {
                lines.remove(n - 1);
            },
            &format!("the {key} line is missing"),
        );
    }
}

#[test]
fn duplicate_lines_are_refused_naming_both() {
    refused(
        |lines: &mut Vec<String>| lines.push("online 0".into()),
        "line 7: online given again (first on line 5)",
    );
    refused(
        |lines: &mut Vec<String>| lines.insert(2, "pid 1".into()),
        "line 3: pid given again",
    );
}

#[test]
fn garbage_is_refused_with_its_line() {
    refused(set(1, "plugtop-state 3"), "line 1");
    refused(set(1, "#!/bin/sh"), "line 1");
    refused(|l: &mut Vec<String>| l.push(String::new()), "line 7");
    refused(|l: &mut Vec<String>| l.push("rm -rf /".into()), "line 7");
    refused(set(2, "pid 0"), "line 2");
    refused(set(2, "pid -1"), "line 2");
    refused(set(2, "pid \u{1b}[2J"), "line 2");
    refused(set(3, "started soon"), "line 3");
    refused(set(5, "online\t0-3"), "line 5");
    // Bytes that are not text: the line they are on is named.
    let root = guest();
    std::fs::create_dir_all(root.path().join("run/plugtop")).expect("dir");
    let mut bytes = b"plugtop-state 2\npid 1\n".to_vec();
    bytes.extend_from_slice(b"root \xff\xfe\n");
    std::fs::write(root.path().join(STATE), &bytes).expect("journal");
    let out = restore(root.path(), &[]);
    assert_refused(&out, "line 3");
}

#[test]
fn a_journal_for_another_root_is_refused() {
    let other = guest();
    refused(
        |lines: &mut Vec<String>| lines[3] = format!("root {}", other.path().display()),
        "line 4",
    );
    refused(set(4, "root /nonexistent/plugtop/root"), "line 4");
    refused(set(4, "root "), "line 4");
}

#[test]
fn a_huge_sparse_journal_is_refused_without_reading_it_all() {
    let root = guest();
    std::fs::create_dir_all(root.path().join("run/plugtop")).expect("dir");
    let file = std::fs::File::create(root.path().join(STATE)).expect("journal");
    file.set_len(300 << 20).expect("300 MB, sparse");
    drop(file);
    let before = guest_files(root.path());
    let out = restore(root.path(), &[]);
    assert_refused(&out, "more than");
    assert_eq!(guest_files(root.path()), before);
    assert_eq!(
        std::fs::metadata(root.path().join(STATE))
            .map(|m| m.len())
            .ok(),
        Some(300 << 20),
        "kept"
    );
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success());
}

#[test]
fn a_fifo_journal_is_refused_without_hanging_in_the_root_or_outside_it() {
    let root = guest();
    std::fs::create_dir_all(root.path().join("run/plugtop")).expect("dir");
    mkfifo(&root.path().join(STATE));
    let before = guest_files(root.path());
    // `output` waits for the exit: a hang would never return.
    let out = restore(root.path(), &[]);
    assert_refused(&out, "not a regular file");
    assert_eq!(guest_files(root.path()), before);
    assert!(root.path().join(STATE).exists(), "kept");

    let outside = common::tempdir();
    let fifo = outside.path().join("state");
    mkfifo(&fifo);
    let out = restore(root.path(), &["--state", &fifo.display().to_string()]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    assert_eq!(guest_files(root.path()), before);
}

#[test]
fn a_state_outside_the_root_is_bounded_and_regular_only() {
    let root = guest();
    let before = guest_files(root.path());
    let outside = common::tempdir();
    let zero = outside.path().join("state");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("link");
    let out = restore(root.path(), &["--state", &zero.display().to_string()]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("symbolic link"),
        "a link is never followed: {err}"
    );
    let out = restore(root.path(), &["--state", "/dev/zero"]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let big = outside.path().join("big");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(300 << 20))
        .expect("sparse");
    let out = restore(root.path(), &["--state", &big.display().to_string()]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("more than"), "{err}");
    // A damaged journal there is checked as strictly.
    let bad = outside.path().join("bad");
    let mut lines = good_lines(root.path());
    lines[4] = "online 99".into();
    std::fs::write(&bad, lines.join("\n") + "\n").expect("journal");
    let out = restore(root.path(), &["--state", &bad.display().to_string()]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("line 5"), "{err}");
    assert!(bad.exists(), "kept");
    assert_eq!(guest_files(root.path()), before);
}

/// A restore that went through: the journal's start state is back, the
/// journal and the lock are gone.
fn assert_restored(root: &FakeRoot, out: &Output) {
    let err = crate::common::said(out);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        guest_files(root.path()),
        vec!["1\n", "1\n", "1\n", "1\n", "0\n"],
        "cpu3 back online, the pool back to 0"
    );
    assert!(!root.path().join(STATE).exists(), "journal removed");
    assert!(
        !root.path().join("var/lock/cpuplugd.lock").exists(),
        "restore removes the lock it took"
    );
}

#[test]
fn a_pid_reused_by_another_process_does_not_block_the_restore() {
    // This test process is alive, with the very start time recorded, but
    // it is not plugtop: the run that wrote the journal is gone.
    let root = guest();
    let mut lines = good_lines(root.path());
    lines[1] = format!("pid {}", std::process::id());
    lines[2] = format!("started {}", start_time_of(std::process::id()));
    write_journal(&root, &lines);
    let out = restore(root.path(), &[]);
    assert_restored(&root, &out);
    assert!(!crate::common::said(&out).contains("SIGTERM"));
}

#[test]
fn a_version_1_journal_is_still_read_and_a_live_non_plugtop_pid_is_dead() {
    let root = guest();
    let lines: Vec<String> = good_lines(root.path())
        .into_iter()
        .filter(|l| !l.starts_with("started"))
        .map(|l| match l.as_str() {
            "plugtop-state 2" => "plugtop-state 1".into(),
            l if l.starts_with("pid ") => format!("pid {}", std::process::id()),
            _ => l,
        })
        .collect();
    write_journal(&root, &lines);
    let out = restore(root.path(), &[]);
    assert_restored(&root, &out);
    // Version 1 has no `started` line: one is refused there.
    refused(
        |l: &mut Vec<String>| l[0] = "plugtop-state 1".into(),
        "line 3: unknown line",
    );
}

#[test]
fn run_refuses_a_dead_runs_bad_journal_with_its_line() {
    let root = guest();
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"3\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let mut lines = good_lines(root.path());
    lines[5] = "cmm_pages -5".into();
    write_journal(&root, &lines);
    let before = guest_files(root.path());
    let out = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "--force", "-c"])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_refused(&out, "line 6");
    assert_eq!(guest_files(root.path()), before);
    assert!(root.path().join(STATE).exists(), "kept");
}

/// Field 22 of process `pid`'s stat line.
fn start_time_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = &stat[stat.rfind(')').expect("name") + 1..];
    after
        .split_whitespace()
        .nth(19)
        .and_then(|t| t.parse().ok())
        .expect("start time")
}

/// A plugtop child killed when dropped, with the root it works on.
struct Other {
    child: std::process::Child,
    root: FakeRoot,
    _bin: Option<tempfile::TempDir>,
}

impl Drop for Other {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `command` with its standard output and error into one pipe
/// (plugtop logs information to the one, errors to the other): the child
/// and the lines it writes, in order.
fn spawn_merged(
    mut command: Command,
) -> (
    std::process::Child,
    std::io::Lines<std::io::BufReader<std::io::PipeReader>>,
) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    command
        .stdin(Stdio::null())
        .stdout(writer.try_clone().expect("pipe"))
        .stderr(writer);
    let child = command.spawn().expect("plugtop starts");
    // The parent's ends of the writer go with the command, so the lines
    // end when the child's do.
    drop(command);
    (
        child,
        std::io::BufRead::lines(std::io::BufReader::new(reader)),
    )
}

/// Starts `program` with `args` on a guest of its own (`--root` last) and
/// reads its output until a line holds `ready` (a run's "started in", an
/// observer's first interval): by then a run holds its root's lock.
fn start_other(
    program: &Path,
    args: &[&str],
    ready: &str,
    bin: Option<tempfile::TempDir>,
) -> Other {
    let root = guest();
    let rules = act_rules(&root);
    let mut command = Command::new(program);
    command
        .args(args)
        .arg("-c")
        .arg(&rules)
        .arg("--root")
        .arg(root.path());
    let (child, mut lines) = spawn_merged(command);
    let seen = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.contains(ready));
    assert!(seen, "{} never said {ready:?}", program.display());
    // The rest of its output is read away, so it never blocks on a pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Other {
        child,
        root,
        _bin: bin,
    }
}

/// plugtop acting (`run -f`) on a root of its own.
fn another_plugtop() -> Other {
    start_other(
        Path::new(env!("CARGO_BIN_EXE_plugtop")),
        &["run", "-f"],
        "started in",
        None,
    )
}

/// The plugtop binary under another name (as a distribution might install
/// it), in a directory removed with the process.
fn renamed_plugtop(args: &[&str], ready: &str) -> Other {
    let dir = common::tempdir();
    let renamed = dir.path().join("cpuplugd-x");
    // A link is a new name for the same program, without the "text file
    // busy" a fresh copy can meet when it is executed at once.
    std::fs::hard_link(env!("CARGO_BIN_EXE_plugtop"), &renamed)
        .or_else(|_| std::fs::copy(env!("CARGO_BIN_EXE_plugtop"), &renamed).map(drop))
        .expect("the binary under another name");
    start_other(&renamed, args, ready, Some(dir))
}

/// The journal of `root` rewritten to name process `pid` (version 1
/// without a start time, version 2 with `started`).
fn journal_naming(root: &FakeRoot, pid: u32, started: Option<u64>) {
    let mut lines = good_lines(root.path());
    lines[1] = format!("pid {pid}");
    match started {
        Some(t) => lines[2] = format!("started {t}"),
        None => {
            lines[0] = "plugtop-state 1".into();
            lines.remove(2);
        }
    }
    write_journal(root, &lines);
}

#[test]
fn a_plugtop_acting_on_another_root_does_not_block_this_ones_restore() {
    let other = another_plugtop();
    let pid = other.child.id();
    let started = start_time_of(pid);
    for recorded in [Some(started), None] {
        let root = guest();
        journal_naming(&root, pid, recorded);
        let out = restore(root.path(), &[]);
        assert_restored(&root, &out);
        assert!(!crate::common::said(&out).contains("SIGTERM"));
    }
    // Its own root's journal is a running plugtop's, with the start time
    // it recorded: refused, nothing written, kept.
    let before = guest_files(other.root.path());
    let out = restore(other.root.path(), &[]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("plugtop (pid {pid}) is still running")) && err.contains("SIGTERM"),
        "{err}"
    );
    assert_eq!(guest_files(other.root.path()), before, "nothing written");
    assert!(other.root.path().join(STATE).exists(), "kept");
    // The same pid with another start time is a reused pid: not the run
    // that wrote the journal (the lock it holds keeps `restore` out all
    // the same, saying so).
    journal_naming(&other.root, pid, Some(started + 1));
    let out = restore(other.root.path(), &[]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("locked") && !err.contains("SIGTERM"), "{err}");
    assert_eq!(guest_files(other.root.path()), before, "nothing written");
}

#[test]
fn an_observer_named_plugtop_is_no_run_acting_on_this_root() {
    // The reviewer's case: `plugtop --batch` on another root, its pid in a
    // version-1 journal here.
    let observer = start_other(
        Path::new(env!("CARGO_BIN_EXE_plugtop")),
        &["--batch", "--interval", "0.05"],
        "#",
        None,
    );
    let pid = observer.child.id();
    for recorded in [None, Some(start_time_of(pid))] {
        let root = guest();
        journal_naming(&root, pid, recorded);
        let out = restore(root.path(), &[]);
        assert_restored(&root, &out);
    }
    // `run --force` adopts that journal: it starts, and gives back the
    // start state the journal recorded (cpu3 online, the pool at 0).
    let root = guest();
    journal_naming(&root, pid, None);
    let mut command = Command::new(env!("CARGO_BIN_EXE_plugtop"));
    command
        .args(["run", "-f", "--force", "-c"])
        .arg(act_rules(&root))
        .arg("--root")
        .arg(root.path());
    let (mut run, mut lines) = spawn_merged(command);
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let started = first.contains("started in");
    let _ = Command::new("kill")
        .args(["-TERM", &run.id().to_string()])
        .status();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = run.wait().expect("wait");
    assert!(started, "run --force refused: {first} {rest:?}");
    assert!(status.success(), "{rest:?}");
    assert_eq!(
        guest_files(root.path()),
        vec!["1\n", "1\n", "1\n", "1\n", "0\n"],
        "the adopted start state is given back"
    );
    assert!(!root.path().join(STATE).exists());
}

#[test]
fn a_renamed_plugtop_acting_on_this_root_is_recognised_by_its_lock() {
    let renamed = renamed_plugtop(&["run", "-f"], "started in");
    let pid = renamed.child.id();
    let root = &renamed.root;
    let before = guest_files(root.path());
    // Its own journal (version 2), and the same rewritten as version 1.
    for rewrite in [false, true] {
        if rewrite {
            journal_naming(root, pid, None);
        }
        let out = restore(root.path(), &[]);
        let err = crate::common::said(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("plugtop (pid {pid}) is still running")),
            "{err}"
        );
        assert_eq!(guest_files(root.path()), before, "nothing written");
        assert!(root.path().join(STATE).exists(), "kept");
    }
    let (code, err) = run_refusing(root, &["--force"]);
    assert_eq!(
        code,
        Some(1),
        "another controller: cpuplugd's status; {err}"
    );
    assert!(err.contains("locked"), "{err}");
    assert_eq!(guest_files(root.path()), before, "nothing written");
}

#[test]
fn a_link_where_the_journal_belongs_is_refused_not_taken_for_no_journal() {
    let root = guest();
    std::fs::create_dir_all(root.path().join("run/plugtop")).expect("dir");
    // A good journal beside it, a link to it, a link to /dev/zero (which
    // does not exist beneath the root) and a link leading nowhere: plugtop
    // writes its journal as a regular file, so each is damage or a plant.
    write_journal(&root, &good_lines(root.path()));
    let good = root.path().join("run/plugtop/good");
    std::fs::rename(root.path().join(STATE), &good).expect("move");
    for target in ["good", "/run/plugtop/good", "/dev/zero", "nowhere"] {
        std::os::unix::fs::symlink(target, root.path().join(STATE)).expect("link");
        let before = guest_files(root.path());
        let out = restore(root.path(), &[]);
        assert_refused(&out, "link");
        assert_eq!(
            guest_files(root.path()),
            before,
            "{target}: nothing written"
        );
        assert!(
            std::fs::symlink_metadata(root.path().join(STATE)).is_ok(),
            "{target}: the link is kept for the admin to look at"
        );
        std::fs::remove_file(root.path().join(STATE)).expect("unlink");
    }
}

/// Rules that would act at once (CPU_MAX 3 of 4, cpu3 offline: nothing to
/// do, but the run takes the guest).
fn act_rules(root: &FakeRoot) -> PathBuf {
    let rules = root.path().join("rules.conf");
    // A memory group that never moves the pool: with it on, the pool is
    // part of what is put back (with it off, plugtop leaves the pool alone
    // as cpuplugd does, and a pool restore could not refuse).
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"3\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n\
         CMM_MIN=\"0\"\nCMM_MAX=\"524288\"\nCMM_INC=\"0\"\nCMM_DEC=\"0\"\n\
         MEMPLUG=\"0\"\nMEMUNPLUG=\"0\"\n",
    )
    .expect("rules");
    rules
}

/// `plugtop run -f` on `root`, expected to refuse at start: its log. A
/// run that starts instead is stopped at its first line (it says
/// "started"), and the test fails; nothing waits on a clock.
fn run_refusing(root: &FakeRoot, extra: &[&str]) -> (Option<i32>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_plugtop"));
    command
        .args(["run", "-f", "-c"])
        .arg(act_rules(root))
        .arg("--root")
        .arg(root.path())
        .args(extra);
    let (mut child, mut lines) = spawn_merged(command);
    // The first line decides: a start is stopped at once.
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    if first.contains("started in") {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the run started: {first}");
    }
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("wait");
    (
        status.code(),
        crate::common::unwrapped(
            &[first]
                .into_iter()
                .chain(rest)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    )
}

/// Nothing of plugtop's is left below `root` after a refused start.
fn assert_nothing_left(root: &Path) {
    for rel in [STATE, "run/plugtop.pid", "var/lock/cpuplugd.lock"] {
        assert!(
            std::fs::symlink_metadata(root.join(rel)).is_err(),
            "{rel} left behind"
        );
    }
}

/// A start state `plugtop restore` would refuse: `run` refuses to act on
/// it (exit 78, plugtop's own refusal), naming the value and why, saying what to do and that
/// cpuplugd would start; it writes nothing and leaves nothing behind.
fn run_refuses_start(edit: impl Fn(&FakeRoot), named: &str, remedy: &str) {
    let root = guest();
    edit(&root);
    let before = guest_files(root.path());
    let (code, err) = run_refusing(&root, &[]);
    assert_eq!(code, Some(78), "{err}");
    for want in [
        named,
        remedy,
        "could not be put back",
        "cpuplugd would start",
    ] {
        assert!(err.contains(want), "says {want:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(guest_files(root.path()), before, "nothing written");
    assert_nothing_left(root.path());
}

#[test]
fn run_refuses_a_start_state_restore_would_refuse() {
    let pool = "set cmm_pages to a size this guest holds";
    // MemTotal is 2 GiB: 524,288 pages of 4 KiB.
    for pages in ["99999999", "524289", "9223372036854775806"] {
        run_refuses_start(
            |r| r.write("proc/sys/vm/cmm_pages", &format!("{pages}\n")),
            &format!("cmm_pages {pages} is more than the guest's memory holds"),
            pool,
        );
    }
    for pages in ["-1", "-9223372036854775807"] {
        run_refuses_start(
            |r| r.write("proc/sys/vm/cmm_pages", &format!("{pages}\n")),
            &format!("cmm_pages {pages} is negative"),
            pool,
        );
    }
    run_refuses_start(|r| r.meminfo(&[("MemFree", 524_288)]), "no MemTotal", pool);
    run_refuses_start(
        |r| {
            std::fs::remove_dir_all(r.path().join("sys/devices/system/cpu/cpu1")).expect("rm");
        },
        "cpu1 does not exist",
        "make every online CPU's directory",
    );
    // An online file that is a directory: it cannot be read back.
    run_refuses_start(
        |r| {
            let online = r.path().join("sys/devices/system/cpu/cpu2/online");
            std::fs::remove_file(&online).expect("rm");
            std::fs::create_dir(&online).expect("dir");
        },
        "cpu2's online file cannot be read",
        "make every online CPU's directory",
    );
}

#[test]
fn run_force_refuses_a_start_state_restore_would_refuse_too() {
    let root = guest();
    root.write("proc/sys/vm/cmm_pages", "-1\n");
    let before = guest_files(root.path());
    let (code, err) = run_refusing(&root, &["--force"]);
    assert_eq!(code, Some(78), "{err}");
    assert!(err.contains("cmm_pages -1 is negative"), "{err}");
    assert_eq!(guest_files(root.path()), before);
    assert_nothing_left(root.path());
}

#[test]
fn the_start_state_check_is_the_journal_check() {
    use plugtop::control::journal_check::{Part, restorable};
    let root = guest();
    let r = root.path();
    // The part refused, or none.
    let refused =
        |online: &[u32], pool: Option<i64>| restorable(r, online, pool).err().map(|e| e.part());
    assert_eq!(refused(&[0, 1, 2], Some(0)), None);
    assert_eq!(refused(&[0, 1, 2], Some(524_288)), None, "all of memory");
    assert_eq!(refused(&[0, 1, 2], None), None);
    assert_eq!(refused(&[0, 1, 2], Some(524_289)), Some(Part::Pool));
    assert_eq!(refused(&[0, 1, 2], Some(i64::MIN)), Some(Part::Pool));
    assert_eq!(refused(&[0, 4], Some(0)), Some(Part::Online));
    assert_eq!(refused(&[u32::MAX], None), Some(Part::Online));
    // Said as before.
    let said = |online: &[u32], pool: Option<i64>| {
        restorable(r, online, pool)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert_eq!(
        said(&[0, 1, 2], Some(524_289)),
        "cmm_pages 524289 is more than the guest's memory holds (524288 pages of 4 KiB in MemTotal 2097152 kB)"
    );
    assert_eq!(
        said(&[0], Some(-1)),
        "cmm_pages -1 is negative: no pool has fewer than 0 pages"
    );
    assert_eq!(
        said(&[0, 4], Some(0)),
        format!(
            "cpu4 does not exist below {}/sys/devices/system/cpu",
            r.display()
        )
    );
    // Without a pool file, only "no pool" passes.
    root.remove("proc/sys/vm/cmm_pages");
    assert_eq!(refused(&[0], None), None);
    assert_eq!(refused(&[0], Some(0)), Some(Part::Pool));
    assert_eq!(
        said(&[0], Some(0)),
        "cmm_pages 0 is given, but the guest has no proc/sys/vm/cmm_pages"
    );
    let gone = common::tempdir();
    let missing = gone.path().join("no-root");
    assert_eq!(
        restorable(&missing, &[0], None).err().map(|e| e.part()),
        Some(Part::Root)
    );
}

#[test]
fn a_journal_whose_pool_alone_fails_restores_nothing_and_says_so() {
    let root = guest();
    let mut lines = good_lines(root.path());
    lines[5] = "cmm_pages 524289".into();
    write_journal(&root, &lines);
    let before = guest_files(root.path());
    let out = restore(root.path(), &[]);
    assert_refused(&out, "line 6");
    let err = crate::common::said(&out);
    assert!(err.contains("nothing was restored"), "{err}");
    assert!(err.contains("the journal is kept"), "{err}");
    assert_eq!(guest_files(root.path()), before, "not even the CPUs");
}

#[test]
fn a_socket_or_directory_where_the_journal_belongs_is_refused_as_no_journal_plugtop_wrote() {
    for plant in ["socket", "directory"] {
        let root = guest();
        let state = root.path().join(STATE);
        std::fs::create_dir_all(state.parent().expect("parent")).expect("dir");
        match plant {
            "socket" => drop(std::os::unix::net::UnixListener::bind(&state).expect("socket")),
            _ => std::fs::create_dir(&state).expect("dir"),
        }
        let before = guest_files(root.path());
        let out = restore(root.path(), &[]);
        let err = crate::common::said(&out);
        assert_eq!(out.status.code(), Some(1), "{plant}: {err}");
        assert!(err.contains("not a regular file"), "{plant}: {err}");
        let (code, err) = run_refusing(&root, &[]);
        assert_eq!(code, Some(78), "{plant}: {err}");
        assert_eq!(guest_files(root.path()), before);
        assert!(std::fs::symlink_metadata(&state).is_ok(), "{plant}: kept");
    }
}

/// nu54 M5: a start refused with 78 after the metrics endpoint was bound
/// never said "metrics at http://…" first, as if it served.
#[test]
fn a_refused_start_does_not_say_where_its_metrics_are() {
    let root = guest();
    root.write("proc/sys/vm/cmm_pages", "-1\n");
    let (code, err) = run_refusing(&root, &["--force", "--metrics-listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(78), "{err}");
    assert!(err.contains("cmm_pages -1 is negative"), "{err}");
    assert!(!err.contains("metrics at"), "{err}");
    assert_nothing_left(root.path());
}
