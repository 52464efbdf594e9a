//! `plugtop run` replaces itself with the daemon's own small program,
//! `plugtop-run`, only when that is installed beside it as a program of
//! the same owner nobody else may change (src/cli/run_exe.rs); the command
//! line passes unchanged, and the exit statuses, the log and what is said
//! on a refusal are the same as when the run stays in `plugtop`. Anything
//! else beside it (a link, a file that is not executable or not a program,
//! one others may write, a directory) and the run stays in `plugtop`.

use crate::common;
use crate::stop_signals::{Ended, assert_puts_the_guest_back, run_of_until, run_of_until_with};

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A directory holding `plugtop` (a hard link to the one built, or a copy).
fn installed_alone() -> tempfile::TempDir {
    let dir = common::tempdir();
    install(
        Path::new(env!("CARGO_BIN_EXE_plugtop")),
        &dir.path().join("plugtop"),
    );
    dir
}

/// A directory holding `plugtop` and `plugtop-run`, as the packages install them.
fn installed_together() -> tempfile::TempDir {
    let dir = installed_alone();
    install(
        Path::new(env!("CARGO_BIN_EXE_plugtop-run")),
        &dir.path().join("plugtop-run"),
    );
    dir
}

fn install(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).expect("copy the program");
    }
}

/// `plugtop run` from `dir` until SIGUSR1, with rules in a file whose name
/// has a space and a byte that is not UTF-8.
fn run_from(dir: &Path) -> Ended {
    let conf = OsStr::from_bytes(b"plug rules \xff.conf");
    let ended = run_of_until(&dir.join("plugtop"), conf, 10);
    assert_puts_the_guest_back(ended.status, &ended.log, &ended.root, 10, "SIGUSR1");
    assert_eq!(
        ended.cmdline, ended.started_with,
        "the command line passes unchanged"
    );
    assert_eq!(
        ended.comm, "plugtop\n",
        "ps and the lock's holder name plugtop"
    );
    ended
}

fn ran(ended: &Ended) -> PathBuf {
    ended.exe.clone()
}

/// The value of `name` in an environment as /proc/PID/environ has it.
fn var<'a>(environ: &'a [u8], name: &str) -> Option<&'a [u8]> {
    environ
        .split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(name.as_bytes())?.strip_prefix(b"="))
}

#[test]
fn installed_together_run_replaces_itself_with_plugtop_run() {
    let dir = installed_together();
    let ended = run_from(dir.path());
    assert_eq!(ran(&ended), dir.path().join("plugtop-run"), "{}", ended.log);
    // What plugtop parsed, handed over; and one malloc arena for its
    // threads, before whatever the caller set (glibc cuts the variable
    // after the first setting it reads, in place: environ shows that one).
    assert!(var(&ended.environ, "PLUGTOP_RUN_REQUEST").is_some());
    assert_eq!(
        var(&ended.environ, "GLIBC_TUNABLES"),
        Some(&b"glibc.malloc.arena_max=1"[..])
    );
}

#[test]
fn installed_alone_run_stays_in_plugtop() {
    let dir = installed_alone();
    let ended = run_from(dir.path());
    assert_eq!(ran(&ended), dir.path().join("plugtop"), "{}", ended.log);
    assert_eq!(var(&ended.environ, "PLUGTOP_RUN_REQUEST"), None);
    assert_eq!(
        var(&ended.environ, "GLIBC_TUNABLES").map(<[u8]>::to_vec),
        std::env::var_os("GLIBC_TUNABLES").map(|t| t.as_bytes().to_vec()),
        "the environment is left as it was"
    );
}

#[test]
fn a_plugtop_run_built_from_other_sources_hands_the_run_back_to_plugtop() {
    // `cargo run` builds plugtop alone: the plugtop-run beside it is then
    // older. What plugtop says of its sources differs from plugtop-run's
    // own, and the run goes back to plugtop, which acts itself.
    let dir = installed_together();
    let conf = OsStr::new("rules.conf");
    let ended = run_of_until_with(
        &dir.path().join("plugtop-run"),
        conf,
        10,
        &[("PLUGTOP_SOURCES", "built-from-other-sources")],
        &|_| {},
    );
    assert_puts_the_guest_back(ended.status, &ended.log, &ended.root, 10, "SIGUSR1");
    assert_eq!(ran(&ended), dir.path().join("plugtop"), "{}", ended.log);
    assert_eq!(ended.comm, "plugtop\n");
}

/// What is beside `plugtop`, put there by `lay`, is not run: the run stays.
fn stays_with(lay: impl FnOnce(&Path)) {
    let dir = installed_alone();
    lay(&dir.path().join("plugtop-run"));
    let ended = run_from(dir.path());
    assert_eq!(ran(&ended), dir.path().join("plugtop"), "{}", ended.log);
}

#[test]
fn a_link_beside_is_not_followed() {
    stays_with(|at| {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_plugtop-run"), at).expect("link");
    });
}

#[test]
fn a_file_beside_that_is_not_executable_is_not_run() {
    stays_with(|at| {
        // A copy: a hard link would change the mode of the one built.
        std::fs::copy(env!("CARGO_BIN_EXE_plugtop-run"), at).expect("copy");
        std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    });
}

#[test]
fn a_program_beside_that_others_may_write_is_not_run() {
    stays_with(|at| {
        std::fs::copy(env!("CARGO_BIN_EXE_plugtop-run"), at).expect("copy");
        std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o757)).expect("chmod");
    });
}

#[test]
fn an_executable_file_beside_that_is_no_program_is_not_run() {
    // The shell would run it (execvp falls back to /bin/sh): it would
    // leave a mark and end the run with 3.
    let marker = common::tempdir();
    let mark = marker.path().join("ran");
    stays_with(|at| {
        std::fs::write(at, format!("touch '{}'\nexit 3\n", mark.display())).expect("write");
        std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    });
    assert!(!mark.exists(), "the file beside was run");
}

#[test]
fn a_directory_beside_is_not_run() {
    stays_with(|at| std::fs::create_dir(at).expect("mkdir"));
}

#[test]
fn a_fifo_beside_neither_blocks_nor_is_run() {
    stays_with(|at| {
        let ok = std::process::Command::new("mkfifo")
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mkfifo");
    });
}

/// `program ARGS` with `env` added: status, stdout, stderr.
fn answer(
    program: &Path,
    args: &[&OsStr],
    env: &[(&OsStr, &OsStr)],
) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("it runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        crate::common::said(&out),
    )
}

#[test]
fn refusals_say_and_exit_the_same_through_plugtop_run() {
    let together = installed_together();
    let alone = installed_alone();
    let root = common::FakeRoot::guest(2);
    let rules = common::tempdir();
    let bad = rules.path().join("bad.conf");
    std::fs::write(
        &bad,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"(\"\n",
    )
    .expect("rules");
    let missing = rules.path().join("missing.conf");
    let no_root = rules.path().join("no-root");
    let cases: [Vec<&OsStr>; 4] = [
        vec![
            OsStr::new("-c"),
            bad.as_os_str(),
            OsStr::new("--root"),
            root.path().as_os_str(),
        ],
        vec![
            OsStr::new("-c"),
            missing.as_os_str(),
            OsStr::new("--root"),
            root.path().as_os_str(),
        ],
        vec![
            OsStr::new("-c"),
            bad.as_os_str(),
            OsStr::new("--root"),
            no_root.as_os_str(),
        ],
        vec![
            OsStr::new("-c"),
            bad.as_os_str(),
            OsStr::new("--replay"),
            missing.as_os_str(),
        ],
    ];
    for args in cases {
        let args: Vec<&OsStr> = [OsStr::new("run"), OsStr::new("-f")]
            .into_iter()
            .chain(args)
            .collect();
        let through = answer(&together.path().join("plugtop"), &args, &[]);
        let here = answer(&alone.path().join("plugtop"), &args, &[]);
        assert_ne!(through.0, Some(0), "{args:?} is refused: {through:?}");
        assert!(!through.2.is_empty(), "{args:?} says why");
        assert_eq!(through, here, "{args:?}");
    }
}

/// adv51: the hidden `--interval-ms 0` was taken, and the loop read the
/// guest with no pause (1.65 s of CPU in 3 s). Refused by both binaries,
/// before anything is read (a spin would hang this test).
#[test]
fn a_zero_interval_is_refused_through_plugtop_run_and_alone() {
    let together = installed_together();
    let alone = installed_alone();
    let root = common::FakeRoot::guest(2);
    let rules = common::tempdir();
    let file = rules.path().join("r.conf");
    std::fs::write(&file, common::PLUG_EVERY_INTERVAL).expect("rules");
    let args: Vec<&OsStr> = vec![
        OsStr::new("run"),
        OsStr::new("-f"),
        OsStr::new("--mode"),
        OsStr::new("observe"),
        OsStr::new("--interval-ms"),
        OsStr::new("0"),
        OsStr::new("-c"),
        file.as_os_str(),
        OsStr::new("--root"),
        root.path().as_os_str(),
    ];
    let through = answer(&together.path().join("plugtop"), &args, &[]);
    let here = answer(&alone.path().join("plugtop"), &args, &[]);
    assert_eq!(through.0, Some(1), "{through:?}");
    assert!(
        through
            .2
            .contains("--interval-ms 0 would read the guest with no pause"),
        "{through:?}"
    );
    assert_eq!(through, here);
}

/// `plugtop run` reads the command line, and `plugtop-run` has no
/// parser: started by hand, whatever the arguments, it says how to start
/// it and exits 1 (as `plugtop run` on bad options), touching nothing.
#[test]
fn plugtop_run_started_by_hand_says_to_start_plugtop_run() {
    let dir = installed_together();
    for args in [
        &["run", "--help"][..],
        &["run", "-v"],
        &[],
        &["run", "-f", "-c", "x", "--root", "/"],
        &["-f", "-c", "x"],
    ] {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let (status, out, err) = answer(&dir.path().join("plugtop-run"), &args, &[]);
        assert_eq!(status, Some(1), "{args:?}: {err}");
        assert_eq!(out, "", "{args:?}");
        assert!(
            err.contains("started by `plugtop run`") && err.contains("plugtop run --help"),
            "{args:?}: {err}"
        );
    }
}

/// What `plugtop` hands over, in the environment, forged: refused with
/// the field named, before anything is read or acted on.
#[test]
fn plugtop_run_refuses_a_forged_hand_over() {
    let dir = installed_together();
    for (forged, field) in [
        (&b""[..], "(config: "),
        (b"config=1:x", "(foreground: "),
        (b"config=9999999999999999999999:x", "(config: "),
        (
            b"config=6:x.conf foreground=1:1 verbose=1:0 root=1:/ mode=4:step",
            "(mode: ",
        ),
        (b"config=\xff\n-c", "(config: "),
    ] {
        let (status, out, err) = answer(
            &dir.path().join("plugtop-run"),
            &[OsStr::new("run"), OsStr::new("-f")],
            &[(OsStr::new("PLUGTOP_RUN_REQUEST"), OsStr::from_bytes(forged))],
        );
        assert_eq!(status, Some(1), "{forged:?}: {err}");
        assert_eq!(out, "");
        assert!(
            err.contains("cannot read what it was handed") && err.contains(field),
            "{forged:?}: {err}"
        );
    }
}

/// With two programs in the package, `cargo run` (the README's first
/// command) needs to be told which one is the screen.
#[test]
fn cargo_run_runs_plugtop_not_the_daemon_alone() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("Cargo.toml");
    assert!(
        manifest
            .lines()
            .any(|l| l.replace(' ', "") == "default-run=\"plugtop\""),
        "Cargo.toml names no default-run"
    );
}
