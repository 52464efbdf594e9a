//! Directories plugtop fills, attacked: `plugtop sim --serve DIR` and
//! `plugtop record --export-snapshots DIR`. plugtop runs as root, so it
//! writes only below DIR (resolved as in a chroot: an absolute link leads
//! into DIR, a `..` cannot climb out), every file is created exclusively
//! and renamed over a regular file or nothing, a FIFO never hangs it, and
//! DIR itself is refused when it is `/` or holds someone else's files.

use crate::common::text;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use plugtop::kernel::claimed_dir::{ClaimError, DirUse, claim};
use plugtop::kernel::fs::FsError;
use plugtop::kernel::fs::Root;
use plugtop::kernel::fs::is_temporary;
use plugtop::sim::published_root::{AtEnd, Served, publish_all, serve, take_writes};
use plugtop::sim::{Guest, Scenario};

const UNTOUCHED: &str = "another file, untouched\n";
const DAYTRADER: &str = "examples/scenarios/daytrader.toml";
const SERIES: &str = "tests/fixtures/series/oldkernel";

/// A directory holding `served` (the directory plugtop fills, claimed)
/// and, beside it, a file and a directory plugtop must never touch.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        std::fs::write(dir.path().join("precious"), UNTOUCHED).expect("outside file");
        std::fs::create_dir(dir.path().join("elsewhere")).expect("outside dir");
        Setup { dir }
    }

    fn served(&self) -> PathBuf {
        self.dir.path().join("served")
    }

    fn precious(&self) -> PathBuf {
        self.dir.path().join("precious")
    }

    fn elsewhere(&self) -> PathBuf {
        self.dir.path().join("elsewhere")
    }

    /// The file and directory outside are as they were.
    fn assert_outside_untouched(&self) {
        assert_eq!(
            std::fs::read_to_string(self.precious()).ok().as_deref(),
            Some(UNTOUCHED)
        );
        let left = std::fs::read_dir(self.elsewhere()).expect("list").count();
        assert_eq!(left, 0, "nothing made outside");
    }
}

fn guest() -> Guest {
    let text =
        "name = \"t\"\ncpus = 3\nonline = 3\nmemory_mib = 1024\nduration = \"0:05\"\nphases = []\n";
    Guest::new(&Scenario::parse("t", text).expect("scenario"), false)
}

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("mkfifo");
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Temporary files left anywhere below `dir`.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let path = e.path();
        if is_temporary(&e.file_name()) {
            found.push(path.clone());
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(temporaries(&path));
        }
    }
    found
}

/// Serves `guest` below `root` for its five seconds; `each_second` runs
/// in place of the wait, so the test acts between two seconds.
fn serve_with(
    guest: &mut Guest,
    root: &Root,
    each_second: &mut dyn FnMut(),
) -> Result<Vec<String>, FsError> {
    let stop = AtomicBool::new(false);
    let mut lines = Vec::new();
    let served = serve(
        guest,
        root,
        AtEnd::Stop,
        &stop,
        &mut |_: Duration, _| each_second(),
        &mut |l| lines.push(l.to_string()),
    )?;
    assert_eq!(served, Served::Ended);
    Ok(lines)
}

#[test]
fn a_planted_link_at_a_published_file_is_refused_not_written_through() {
    let s = Setup::new();
    let root = claim(&s.served(), DirUse::ServedRoot).expect("new directory");
    let mut g = guest();
    let stat = s.served().join("proc/stat");
    let result = serve_with(&mut g, &root, &mut || {
        if !stat.is_symlink() {
            std::fs::remove_file(&stat).expect("rm");
            symlink(s.precious(), &stat).expect("link");
        }
    });
    match result {
        Err(e @ FsError::NotReplaceable { .. }) => {
            assert!(
                e.to_string().contains("/proc/stat is a symbolic link"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(stat.is_symlink(), "the link is left as it was");
    assert!(temporaries(&s.served()).is_empty());
    s.assert_outside_untouched();
}

#[test]
fn links_on_the_way_lead_into_dir_or_are_refused() {
    let s = Setup::new();
    // An absolute link to the outside directory's real path leads to the
    // same path inside DIR, as in a chroot.
    let root = claim(&s.served(), DirUse::ServedRoot).expect("new directory");
    symlink(s.elsewhere(), s.served().join("sys")).expect("absolute link");
    symlink("/elsewhere-in-dir", s.served().join("proc")).expect("absolute link");
    let mut g = guest();
    serve_with(&mut g, &root, &mut || {}).expect("served inside");
    let inside = s
        .served()
        .join(s.elsewhere().strip_prefix("/").expect("abs"));
    assert!(inside.join("devices/system/cpu/online").is_file());
    assert!(s.served().join("elsewhere-in-dir/stat").is_file());

    // A relative link that climbs out is refused; nothing is placed.
    let s = Setup::new();
    let root = claim(&s.served(), DirUse::ServedRoot).expect("new directory");
    symlink("../elsewhere", s.served().join("sys")).expect("climbing link");
    let e = publish_all(&guest(), &root).expect_err("outside");
    assert!(e.to_string().contains("leads outside the root"), "{e}");
    std::fs::remove_dir_all(s.served().join("proc")).expect("rm");
    symlink("../../precious", s.served().join("proc")).expect("climbing link");
    std::fs::remove_file(s.served().join("sys")).expect("rm");
    let e = publish_all(&guest(), &root).expect_err("outside");
    assert!(e.to_string().contains("leads outside the root"), "{e}");
    assert!(temporaries(&s.served()).is_empty());
    s.assert_outside_untouched();
}

#[test]
fn fifos_at_the_controls_are_skipped_and_at_a_published_file_refused_without_a_hang() {
    let s = Setup::new();
    let root = claim(&s.served(), DirUse::ServedRoot).expect("new directory");
    let cpu = s.served().join("sys/devices/system/cpu");
    let fifos = [
        cpu.join("cpu1/online"),
        s.served().join("proc/sys/vm/cmm_pages"),
    ];
    let mut g = guest();
    let lines = serve_with(&mut g, &root, &mut || {
        if !is_fifo(&fifos[0]) {
            for control in &fifos {
                std::fs::remove_file(control).expect("rm");
                mkfifo(control);
            }
            std::fs::write(cpu.join("cpu2/online"), "0\n").expect("write");
        }
    })
    .expect("served to the end");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].ends_with(" cpu2 offline"), "{lines:?}");
    assert_eq!(g.online_count(), 2);
    assert!(fifos.iter().all(|f| is_fifo(f)), "left as they were");
    // Served again, the controls are published anew: a FIFO there is
    // refused with the reason, at once.
    let e = publish_all(&guest(), &root).expect_err("refused");
    assert!(e.to_string().contains("/cmm_pages is a FIFO"), "{e}");

    // A FIFO where a file is published each second stops the simulator
    // with the reason; nothing waits on it.
    let s = Setup::new();
    let root = claim(&s.served(), DirUse::ServedRoot).expect("new directory");
    let loadavg = s.served().join("proc/loadavg");
    let mut g = guest();
    let result = serve_with(&mut g, &root, &mut || {
        if !is_fifo(&loadavg) {
            std::fs::remove_file(&loadavg).expect("rm");
            mkfifo(&loadavg);
        }
    });
    let e = result.expect_err("refused");
    assert!(e.to_string().contains("/proc/loadavg is a FIFO"), "{e}");
    assert!(temporaries(&s.served()).is_empty());
    s.assert_outside_untouched();
}

#[test]
fn a_control_swapped_for_a_link_outside_or_to_a_huge_file_is_not_taken() {
    let s = Setup::new();
    let root = claim(&s.served(), DirUse::ServedRoot).expect("new directory");
    let mut g = guest();
    publish_all(&g, &root).expect("published");
    std::fs::write(s.precious(), "0\n").expect("outside says 0");
    let online = s.served().join("sys/devices/system/cpu/cpu1/online");
    std::fs::remove_file(&online).expect("rm");
    symlink("../../../../../../precious", &online).expect("climbing link");
    let cmm = s.served().join("proc/sys/vm/cmm_pages");
    std::fs::write(&cmm, format!("{}1\n", "0".repeat(100_000))).expect("long");
    assert!(take_writes(&mut g, &root).is_empty());
    assert_eq!(g.online_count(), 3);
    // Absurd pool sizes are bounded by the model and shown as they are.
    for absurd in ["-5", "9223372036854775807"] {
        std::fs::write(&cmm, format!("{absurd}\n")).expect("write");
        let changes = take_writes(&mut g, &root);
        assert_eq!(changes.first(), Some(&format!("cmm_pages {absurd}")));
        let shown = std::fs::read_to_string(&cmm).expect("cmm_pages");
        assert_eq!(shown, format!("{}\n", g.pool()));
        assert!((0..i64::MAX).contains(&g.pool()), "{}", g.pool());
    }
}

fn plugtop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run plugtop")
}

fn sim_serve(dir: &str) -> Output {
    plugtop(&[
        "sim",
        DAYTRADER,
        "--serve",
        dir,
        "--fast",
        "--duration",
        "0:03",
    ])
}

#[test]
fn serve_refuses_slash_and_a_foreign_directory_and_reuses_its_own() {
    for slash in ["/", "/tmp/../"] {
        let o = sim_serve(slash);
        assert!(!o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("is / itself"), "{}", text(&o));
    }
    let s = Setup::new();
    let o = sim_serve(&s.dir.path().to_string_lossy());
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("is not empty and plugtop did not fill it"),
        "{}",
        text(&o)
    );
    let mut names: Vec<_> = std::fs::read_dir(s.dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["elsewhere", "precious"], "nothing written");

    let served = s.served().to_string_lossy().into_owned();
    for run in 0..2 {
        let o = sim_serve(&served);
        assert!(o.status.success(), "run {run}: {}", text(&o));
    }
    assert!(s.served().join(".plugtop-sim").is_file());
    assert!(s.served().join("proc/stat").is_file());
    // An export directory is not a served root.
    let o = plugtop(&[
        "record",
        "--snapshots",
        SERIES,
        "--export-snapshots",
        &served,
    ]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(".plugtop-snapshots"), "{}", text(&o));
    s.assert_outside_untouched();
}

fn export(dir: &Path) -> Output {
    plugtop(&[
        "record",
        "--snapshots",
        SERIES,
        "--export-snapshots",
        &dir.to_string_lossy(),
    ])
}

#[test]
fn exports_go_only_below_their_directory_never_through_a_link() {
    let s = Setup::new();
    let out = s.served();
    let o = export(&out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join(".plugtop-snapshots").is_file());
    assert!(out.join("000019/proc/stat").is_file());
    let o = export(&out);
    assert!(o.status.success(), "its own again: {}", text(&o));

    // A link planted at a file, and a snapshot directory that climbs out.
    let stat = out.join("000000/proc/stat");
    std::fs::remove_file(&stat).expect("rm");
    symlink(s.precious(), &stat).expect("link");
    let o = export(&out);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("/000000/proc/stat is a symbolic link"),
        "{}",
        text(&o)
    );
    std::fs::remove_file(&stat).expect("rm");
    std::fs::remove_dir_all(out.join("000001")).expect("rm");
    symlink("../elsewhere", out.join("000001")).expect("climbing link");
    let o = export(&out);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("leads outside the root"), "{}", text(&o));
    // An absolute link leads into the export directory, as in a chroot.
    std::fs::remove_file(out.join("000001")).expect("rm");
    symlink("/moved", out.join("000001")).expect("absolute link");
    let o = export(&out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("moved/proc/stat").is_file());
    assert!(temporaries(&out).is_empty());
    s.assert_outside_untouched();

    let foreign = s.dir.path().join("foreign");
    std::fs::create_dir(&foreign).expect("dir");
    std::fs::write(foreign.join("notes"), "mine\n").expect("file");
    let o = export(&foreign);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("is not empty and plugtop did not fill it"),
        "{}",
        text(&o)
    );
    let e = claim(&foreign, DirUse::Snapshots).expect_err("foreign");
    assert!(matches!(e, ClaimError::Foreign { .. }), "{e}");
    assert_eq!(std::fs::read_dir(&foreign).expect("list").count(), 1);
}

#[test]
fn serve_on_a_fifo_says_it_is_a_fifo_not_a_directory() {
    // nu53 M13: was "cannot use the directory X: File exists (os error 17)".
    let dir = crate::common::tempdir();
    let fifo = dir.path().join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("mkfifo");
    let out = crate::common::plugtop(&[
        "sim",
        "examples/scenarios/oscillating.toml",
        "--serve",
        fifo.to_str().expect("utf-8 path"),
    ]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is a FIFO, not a directory"), "{err}");
    assert!(!err.contains("os error"), "{err}");
}
