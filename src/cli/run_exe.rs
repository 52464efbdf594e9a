//! `plugtop run` in the daemon's own small program, `plugtop-run`
//! (src/bin/plugtop-run.rs): the same run built without the screen, the
//! tuner, the trainer, the fleet view and the language server, so that a
//! daemon that stays for months keeps fewer of its pages resident (about
//! half; scripts/README.md, `plugtop run` RSS).
//!
//! `plugtop run` replaces itself with it (same process, same arguments,
//! same standard streams and environment, and the arguments as `plugtop`
//! parsed them: src/cli/handover.rs) only when it is installed beside
//! the running program (the directory of /proc/self/exe, never PATH) as a
//! regular file, not a link, an ELF program executable by, owned by and
//! writable only by the running program's owner, in a directory nobody
//! else may write to.
//! Anything else, or an `exec` that fails, and the run goes on in this
//! process, unchanged. A `plugtop-run` built from other sources (`cargo
//! run` and `cargo build --bin plugtop` build `plugtop` alone; a package
//! half upgraded) hands the run back to `plugtop` at once, so the daemon
//! that acts is always the one `plugtop` was built with (build.rs).

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use super::handover;
use super::run::Request;

/// The daemon's own program's name, beside `plugtop`.
pub const NAME: &str = "plugtop-run";

/// The sources this program was built from (build.rs).
const SOURCES: &str = env!("PLUGTOP_SOURCES");

/// What `plugtop` tells `plugtop-run` of the sources it was built from.
const SOURCES_VAR: &str = "PLUGTOP_SOURCES";

/// Set when `plugtop-run` hands the run back: `plugtop` then runs it.
const HANDED_BACK_VAR: &str = "PLUGTOP_RUN_HANDED_BACK";

/// What `plugtop` hands `plugtop-run`: the run's [`Request`], encoded.
const REQUEST_VAR: &str = "PLUGTOP_RUN_REQUEST";

/// glibc's settings from the environment (`GLIBC_TUNABLES`, read at
/// start-up): `plugtop-run`'s threads share the one malloc arena. glibc
/// otherwise gives each thread that allocates an arena of its own, whose
/// pages stay resident after the thread ends (the rule file's loader:
/// 60 KiB, about 44 KiB of the daemon's RSS; scripts/README.md). The
/// caller's own settings come after, so they win.
const TUNABLES_VAR: &str = "GLIBC_TUNABLES";
const ONE_ARENA: &str = "glibc.malloc.arena_max=1";

/// Replaces this process with `plugtop-run`, this command line and
/// `request` (the same command line, parsed) if it is installed beside
/// this program; returns if not, or if that fails, or if `plugtop-run`
/// handed the run back.
pub fn exec_beside(request: &Request) {
    if std::env::var_os(HANDED_BACK_VAR).is_none() {
        let tunables = tunables(std::env::var_os(TUNABLES_VAR));
        exec(
            NAME,
            &[
                (SOURCES_VAR, OsStr::new(SOURCES)),
                (REQUEST_VAR, &handover::encode(request)),
                (TUNABLES_VAR, &tunables),
            ],
        );
    }
}

/// `plugtop-run`'s `GLIBC_TUNABLES`: one arena, then `theirs`.
fn tunables(theirs: Option<OsString>) -> OsString {
    let mut tunables = OsString::from(ONE_ARENA);
    if let Some(theirs) = theirs.filter(|t| !t.is_empty()) {
        tunables.push(":");
        tunables.push(theirs);
    }
    tunables
}

/// In `plugtop-run`: the request `plugtop` handed over, or `None` if it
/// was started otherwise (by hand).
#[allow(dead_code)] // plugtop-run's alone
pub fn handed_over() -> Option<anyhow::Result<Request>> {
    std::env::var_os(REQUEST_VAR).map(|text| handover::decode(&text))
}

/// In `plugtop-run`: whether `plugtop` handed over from other sources than
/// this program's. Then the run goes back to `plugtop` beside it; this
/// returns only if that cannot be done (the caller says so and stops).
#[allow(dead_code)] // plugtop-run's alone
pub fn hand_back_if_built_apart() -> bool {
    let theirs = std::env::var_os(SOURCES_VAR);
    if theirs.is_none_or(|theirs| theirs == SOURCES) {
        return false;
    }
    exec("plugtop", &[(HANDED_BACK_VAR, OsStr::new("1"))]);
    true
}

/// Replaces this process with the program `name` beside it, this command
/// line and `vars` added to the environment; returns if it is not there,
/// may not be run, or the exec fails.
fn exec(name: &str, vars: &[(&str, &OsStr)]) {
    let Some(program) = beside(name) else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("plugtop"));
    // Returns only on failure.
    let _ = std::process::Command::new(program)
        .arg0(arg0)
        .args(args)
        .envs(vars.iter().copied())
        .exec();
}

/// The program `name` beside the running one, if it may be run in its place.
fn beside(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let lean = dir.join(name);
    let ours = std::fs::metadata(&exe).ok()?;
    fit(&lean, dir, ours.uid()).then_some(lean)
}

/// Whether `lean` in `dir` may stand in for the program owned by `owner`:
/// a regular file (not a link, opened without following one and without
/// waiting), owned by `owner`, executable by its owner and writable by
/// nobody else, an ELF program (a file of text would be run by the shell),
/// in a directory nobody else may write to.
fn fit(lean: &Path, dir: &Path, owner: u32) -> bool {
    use rustix::fs::{Mode, OFlags};
    let others_write = 0o022;
    let Ok(dir) = std::fs::metadata(dir) else {
        return false;
    };
    if dir.uid() != owner || dir.permissions().mode() & others_write != 0 {
        return false;
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(lean, flags, Mode::empty()) else {
        return false;
    };
    let file = std::fs::File::from(fd);
    let Ok(meta) = file.metadata() else {
        return false;
    };
    let mode = meta.permissions().mode();
    if !meta.file_type().is_file()
        || meta.uid() != owner
        || mode & 0o100 == 0
        || mode & others_write != 0
    {
        return false;
    }
    let mut magic = [0u8; 4];
    std::io::Read::read_exact(&mut &file, &mut magic).is_ok() && magic == *b"\x7fELF"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glibc reads the settings left to right, a later one overriding an
    /// earlier (`ld.so --list-tunables` shows it).
    #[test]
    fn the_callers_glibc_tunables_come_after_one_arena() {
        assert_eq!(tunables(None), "glibc.malloc.arena_max=1");
        assert_eq!(tunables(Some("".into())), "glibc.malloc.arena_max=1");
        assert_eq!(
            tunables(Some("glibc.malloc.arena_max=4".into())),
            "glibc.malloc.arena_max=1:glibc.malloc.arena_max=4"
        );
    }
}
