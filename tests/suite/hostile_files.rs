//! Files plugtop writes, attacked: the metrics textfile and `plugtop
//! generate`. plugtop runs as root, so every file it creates is created
//! exclusively beneath its directory under an unpredictable name, never
//! through a link, and renamed only over a regular file or nothing; and a
//! full or closed standard output is an error, never a panic.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use plugtop::control::controller::Mode;
use plugtop::control::flap::FlapConfig;
use plugtop::daemon::{MetricsOptions, RunOptions, Signals, StartError, run_with};
use plugtop::kernel::fs::{FsError, is_temporary};
use plugtop::logging::Memory;
use plugtop::metrics::textfile::Textfile;
use plugtop::sim::run::{SimOptions, guest_for};
use plugtop::sim::{Scenario, SharedGuest, SimActuator, SimSource};

const UNTOUCHED: &[u8] = b"another file, untouched\n";

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("mkfifo");
}

fn names(dir: &Path) -> Vec<OsString> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    v.sort();
    v
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// A victim file outside the textfile's directory that must never change.
fn victim() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, UNTOUCHED).expect("victim");
    (dir, victim)
}

#[test]
fn links_planted_at_guessable_temporary_names_are_never_followed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_v, victim) = victim();
    let path = dir.path().join("plugtop.prom");
    // The old predictable name, names like the new ones, and a thousand
    // guesses at the random part: none may be opened.
    let mut planted = vec![format!("plugtop.prom.tmp.{}", std::process::id())];
    planted.push(".plugtop-0000000000000000.tmp".into());
    planted.push(".plugtop-ffffffffffffffff.tmp".into());
    planted.extend((1..=1000u64).map(|i| {
        format!(
            ".plugtop-{:016x}.tmp",
            i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        )
    }));
    for name in &planted {
        symlink(&victim, dir.path().join(name)).expect("plant a link");
    }
    let mut textfile = Textfile::open(&path).expect("a fresh textfile is accepted");
    for i in 0..50 {
        textfile
            .write(&format!("a {i}\n"))
            .expect("written beside the links");
    }
    assert_eq!(std::fs::read(&victim).expect("victim"), UNTOUCHED);
    assert!(std::fs::read_to_string(&path).is_ok_and(|t| t.ends_with("\na 49\n")));
    for name in &planted {
        assert!(is_link(&dir.path().join(name)), "{name} was replaced");
    }
    let left: Vec<_> = names(dir.path())
        .into_iter()
        .filter(|n| is_temporary(n) && !planted.iter().any(|p| OsString::from(p) == *n))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn a_textfile_that_is_a_link_fifo_directory_or_socket_is_refused_and_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_v, victim) = victim();
    let link = dir.path().join("link.prom");
    symlink(&victim, &link).expect("link");
    let dangling = dir.path().join("dangling.prom");
    symlink(dir.path().join("nowhere"), &dangling).expect("dangling link");
    let fifo = dir.path().join("fifo.prom");
    mkfifo(&fifo);
    let subdir = dir.path().join("dir.prom");
    std::fs::create_dir(&subdir).expect("dir");
    let link_to_dir = dir.path().join("dirlink.prom");
    symlink(&subdir, &link_to_dir).expect("link to a directory");
    let socket = dir.path().join("socket.prom");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("socket");
    for (path, kind) in [
        (&link, "a symbolic link"),
        (&dangling, "a symbolic link"),
        (&fifo, "a FIFO"),
        (&subdir, "a directory"),
        (&link_to_dir, "a symbolic link"),
        (&socket, "a socket"),
    ] {
        match Textfile::open(path) {
            Err(FsError::NotReplaceable { kind: k, .. }) => assert_eq!(k, kind, "{path:?}"),
            other => panic!("{path:?}: {other:?}"),
        }
    }
    assert_eq!(std::fs::read(&victim).expect("victim"), UNTOUCHED);
    assert!(is_link(&link) && is_link(&dangling) && is_link(&link_to_dir));
    assert!(
        !dir.path().join("nowhere").exists(),
        "the dangling link was written through"
    );
    assert!(std::fs::symlink_metadata(&fifo).is_ok_and(|m| !m.is_file()));
    assert!(names(&subdir).is_empty());
    assert!(!names(dir.path()).iter().any(|n| is_temporary(n)));
}

#[test]
fn a_textfile_swapped_for_a_fifo_or_link_after_the_start_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_v, victim) = victim();
    let path = dir.path().join("plugtop.prom");
    let mut textfile = Textfile::open(&path).expect("open");
    textfile.write("a 1\n").expect("first write");
    std::fs::remove_file(&path).expect("remove");
    // A FIFO with no reader: opening it for writing would wait forever.
    mkfifo(&path);
    assert!(matches!(
        textfile.write("a 2\n"),
        Err(FsError::NotReplaceable { kind: "a FIFO", .. })
    ));
    std::fs::remove_file(&path).expect("remove");
    symlink(&victim, &path).expect("link");
    assert!(matches!(
        textfile.write("a 3\n"),
        Err(FsError::NotReplaceable {
            kind: "a symbolic link",
            ..
        })
    ));
    assert_eq!(std::fs::read(&victim).expect("victim"), UNTOUCHED);
    assert!(is_link(&path));
    // Back to a regular file: written again.
    std::fs::remove_file(&path).expect("remove");
    textfile.write("a 4\n").expect("works again");
    assert!(std::fs::read_to_string(&path).is_ok_and(|t| t.ends_with("\na 4\n")));
    assert_eq!(names(dir.path()), vec![OsString::from("plugtop.prom")]);
}

#[test]
fn a_moved_directory_keeps_the_writes_where_the_start_found_it() {
    // The directory is opened once: a link put where it was cannot send
    // the next write elsewhere.
    let top = tempfile::tempdir().expect("tempdir");
    let real = top.path().join("textfiles");
    std::fs::create_dir(&real).expect("dir");
    let mut textfile = Textfile::open(&real.join("plugtop.prom")).expect("open");
    let moved = top.path().join("moved");
    std::fs::rename(&real, &moved).expect("move the directory");
    let elsewhere = top.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("elsewhere");
    symlink(&elsewhere, &real).expect("a link where the directory was");
    textfile.write("a 1\n").expect("written");
    assert!(
        std::fs::read_to_string(moved.join("plugtop.prom")).is_ok_and(|t| t.ends_with("\na 1\n"))
    );
    assert!(names(&elsewhere).is_empty());
}

#[test]
fn a_device_at_the_textfile_is_refused() {
    // /dev/null's twin (character device 1:3) in a temporary directory:
    // making one needs root, so without it this case skips itself.
    let dir = tempfile::tempdir().expect("tempdir");
    let null = dir.path().join("null");
    let made = rustix::fs::mknodat(
        rustix::fs::CWD,
        &null,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    );
    if made.is_err() {
        eprintln!("skipped: cannot make a device node here (not root?)");
        return;
    }
    assert!(matches!(
        Textfile::open(&null),
        Err(FsError::NotReplaceable {
            kind: "a device",
            ..
        })
    ));
    let kind = std::fs::symlink_metadata(&null)
        .expect("still there")
        .file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(&kind));
}

#[test]
fn missing_directories_and_nameless_paths_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("file");
    std::fs::write(&file, "x").expect("file");
    for path in [
        dir.path().join("missing/plugtop.prom"),
        file.join("plugtop.prom"),
        PathBuf::from("/"),
        dir.path().join(".."),
    ] {
        assert!(Textfile::open(&path).is_err(), "{path:?}");
    }
}

/// `plugtop run`'s loop on a simulated guest with `textfile`; how it ended.
fn run_with_textfile(
    dir: &Path,
    textfile: PathBuf,
) -> (Result<plugtop::daemon::Ending, StartError>, Memory) {
    let scenario = Scenario::load(Path::new("examples/scenarios/oscillating.toml"))
        .expect("the shipped scenario loads");
    let options = SimOptions {
        duration: Some(5.0),
        ..SimOptions::default()
    };
    let guest = SharedGuest::new(guest_for(&scenario, &options));
    let mut source = SimSource::new(guest.clone(), 1.0);
    source.stop_at_end = true;
    let mut actuator = SimActuator::new(guest.clone());
    std::fs::create_dir_all(dir.join("proc/sys/kernel")).expect("root");
    std::fs::write(
        dir.join("proc/cpuinfo"),
        plugtop::sim::published_root::zvm_cpuinfo(4),
    )
    .expect("cpuinfo");
    std::fs::write(
        dir.join("proc/sysinfo"),
        plugtop::sim::published_root::zvm_sysinfo("LINUX07", 4),
    )
    .expect("sysinfo");
    let run = RunOptions {
        rules: "examples/rules/oscillating-tight.conf".into(),
        root: dir.to_path_buf(),
        mode: Mode::Auto,
        state: dir.join("run/plugtop/state"),
        force: false,
        verbose: false,
        table: plugtop::report::Layout::Wide,
        interval: Some(Duration::ZERO),
        allow_non_zvm: false,
        pid_file: false,
        flap: FlapConfig::default(),
        check_lpar: false,
        on_started: None,
        metrics: MetricsOptions {
            listen: None,
            textfile: Some(textfile),
        },
    };
    let mut log = Memory::default();
    let ended = run_with(
        &run,
        &mut source,
        &mut actuator,
        &mut log,
        &Signals::default(),
    );
    (ended, log)
}

#[test]
fn run_refuses_to_start_on_a_fifo_or_link_textfile_and_writes_nothing() {
    let (_v, victim) = victim();
    for plant in ["fifo", "link", "dir"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        match plant {
            "fifo" => mkfifo(&path),
            "link" => symlink(&victim, &path).expect("link"),
            _ => std::fs::create_dir(&path).expect("dir"),
        }
        let (ended, _) = run_with_textfile(dir.path(), path.clone());
        match ended {
            Err(e @ StartError::Textfile { .. }) => {
                let why = e.to_string();
                assert!(why.contains("--metrics-textfile"), "{why}");
                assert!(why.contains("plugtop.prom"), "{why}");
            }
            other => panic!("{plant}: {other:?}"),
        }
        // Nothing written: no state, no journal, no temporary file.
        assert!(!dir.path().join("run").exists(), "{plant}: state written");
        assert!(!names(dir.path()).iter().any(|n| is_temporary(n)));
    }
    assert_eq!(std::fs::read(&victim).expect("victim"), UNTOUCHED);
}

#[test]
fn run_refuses_a_textfile_path_that_holds_a_file_plugtop_did_not_write() {
    // The daemon's own rule file, or a password file, named by mistake:
    // refused at the start, kept byte for byte, nothing written.
    let rules = std::fs::read("examples/rules/oscillating-tight.conf").expect("rules");
    for (name, content) in [
        ("cpuplugd.conf", rules),
        ("passwd", b"root:x:0:0:root:/root:/bin/bash\n".to_vec()),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(name);
        std::fs::write(&path, &content).expect("the file");
        let (ended, _) = run_with_textfile(dir.path(), path.clone());
        match ended {
            Err(e @ StartError::Textfile { .. }) => {
                let why = plugtop::error_chain::text(&e);
                assert!(why.contains(name), "{why}");
                assert!(
                    why.contains("not a metrics textfile plugtop wrote"),
                    "{why}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(std::fs::read(&path).expect("kept"), content, "{name}");
        assert!(!dir.path().join("run").exists(), "{name}: state written");
        assert!(!names(dir.path()).iter().any(|n| is_temporary(n)));
    }
    // An earlier run's textfile (left by SIGKILL) is taken over: the start
    // goes past it (this harness's root then stops at its missing CPUs).
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("plugtop.prom");
    std::fs::write(
        &path,
        format!(
            "{}\nplugtop_cpus_online 2\n",
            plugtop::metrics::textfile::HEADER
        ),
    )
    .expect("an earlier textfile");
    let (ended, _) = run_with_textfile(dir.path(), path.clone());
    assert!(
        !matches!(ended, Err(StartError::Textfile { .. })),
        "{ended:?}"
    );
}

#[test]
fn run_with_a_missing_textfile_directory_refuses_to_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (ended, _) = run_with_textfile(dir.path(), dir.path().join("missing/plugtop.prom"));
    assert!(
        matches!(ended, Err(ref e @ StartError::Textfile { .. }) if e.to_string().contains("missing")),
        "{ended:?}"
    );
    assert!(!dir.path().join("run").exists());
}

fn plugtop(args: &[&str], stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("plugtop runs")
}

fn stderr(o: &Output) -> String {
    crate::common::said(o)
}

#[test]
fn generate_man_refuses_existing_pages_and_links_and_force_replaces_only_files() {
    let (_v, victim) = victim();
    let dir = tempfile::tempdir().expect("tempdir");
    let top = dir.path().join("man");
    let man = top.join("man1");
    std::fs::create_dir_all(&man).expect("man");
    std::fs::write(man.join("plugtop.1"), "an older page\n").expect("old page");
    let man_arg = top.display().to_string();
    // An existing page: refused, nothing written.
    let o = plugtop(&["generate", "man", &man_arg], Stdio::piped());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("plugtop.1") && stderr(&o).contains("--force"),
        "{}",
        stderr(&o)
    );
    assert_eq!(names(&man), vec![OsString::from("plugtop.1")]);
    // --force replaces a regular page.
    let o = plugtop(&["generate", "man", "--force", &man_arg], Stdio::piped());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(man.join("plugtop.1"))
            .expect("page")
            .starts_with('.')
    );
    let pages = names(&man);
    assert_eq!(pages.len(), 14, "{pages:?}");
    assert_eq!(
        names(&top.join("man5")),
        vec![OsString::from("plugtop-rules.5")]
    );
    // A link, a FIFO or a directory at a page's name: refused with --force
    // too, nothing written through, nothing replaced.
    for (page, plant) in [
        ("plugtop-run.1", "link"),
        ("plugtop-sim.1", "fifo"),
        ("../man5/plugtop-rules.5", "dir"),
    ] {
        let at = man.join(page);
        std::fs::remove_file(&at).expect("remove page");
        match plant {
            "link" => symlink(&victim, &at).expect("link"),
            "fifo" => mkfifo(&at),
            _ => std::fs::create_dir(&at).expect("dir"),
        }
        for force in [false, true] {
            let mut args = vec!["generate", "man", &man_arg];
            if force {
                args.push("--force");
            }
            let o = plugtop(&args, Stdio::piped());
            assert_eq!(o.status.code(), Some(2), "{page} {force}: {}", stderr(&o));
            // Without --force the existing pages are named first.
            if force {
                let name = page.trim_start_matches("../man5/");
                assert!(stderr(&o).contains(name), "{}", stderr(&o));
            }
        }
        std::fs::remove_dir(&at)
            .or_else(|_| std::fs::remove_file(&at))
            .expect("clean");
        std::fs::write(&at, "a page\n").expect("page back");
    }
    assert_eq!(std::fs::read(&victim).expect("victim"), UNTOUCHED);
    assert!(!names(&man).iter().any(|n| is_temporary(n)));
}

#[test]
fn generate_man_never_writes_through_a_link_planted_in_a_fresh_directory() {
    // Links at every page name but one: nothing written anywhere.
    let (v, victim) = victim();
    let top = tempfile::tempdir().expect("tempdir");
    let man = top.path().join("man1");
    std::fs::create_dir(&man).expect("man1");
    for page in [
        "plugtop.1",
        "plugtop-check.1",
        "plugtop-eval.1",
        "plugtop-run.1",
    ] {
        symlink(v.path().join(page), man.join(page)).expect("dangling link");
    }
    let o = plugtop(
        &[
            "generate",
            "man",
            &top.path().display().to_string(),
            "--force",
        ],
        Stdio::piped(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(names(v.path()), vec![OsString::from("victim")]);
    assert_eq!(std::fs::read(&victim).expect("victim"), UNTOUCHED);
    assert_eq!(names(&man).len(), 4);
    assert!(!top.path().join("man5/plugtop-rules.5").exists());
}

#[test]
fn completions_to_a_full_disk_fail_with_a_message_and_no_panic() {
    let full = match File::create("/dev/full") {
        Ok(f) => f,
        Err(e) => {
            eprintln!("skipped: no /dev/full here ({e})");
            return;
        }
    };
    for shell in ["bash", "zsh", "fish"] {
        let o = plugtop(
            &["generate", "completions", shell],
            Stdio::from(full.try_clone().expect("dup")),
        );
        assert_eq!(o.status.code(), Some(1), "{shell}: {}", stderr(&o));
        assert!(stderr(&o).contains("No space left"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let o = plugtop(
        &[
            "generate",
            "man",
            &dir.path().join("man").display().to_string(),
        ],
        Stdio::from(full),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn completions_to_a_closed_pipe_end_quietly() {
    for shell in ["bash", "zsh", "fish"] {
        // The reading end is closed before plugtop starts: every write fails.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let o = plugtop(&["generate", "completions", shell], Stdio::from(writer));
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        assert!(o.stderr.is_empty(), "{shell}: {}", stderr(&o));
    }
}
