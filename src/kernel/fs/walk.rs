//! Resolving a path beneath a root directory the way a chroot does, with
//! file descriptors only: an absolute link means "from the root", relative
//! links are followed, and a `..` that would climb above the root is
//! refused. Nothing is checked by name and then opened by name, so a link
//! swapped in between two steps can change where a path leads only to
//! another place inside the root.
//!
//! One `openat2(RESOLVE_BENEATH)` does it whenever the path holds no
//! absolute link and no `..` above the root (the kernel refuses those with
//! `EXDEV`); then, and on kernels without `openat2` (RHEL 8 has 4.18), the
//! path is walked here one component at a time.
//!
//! Reads of a root's kernel files ([`open_in_root`]) resolve exactly as a
//! chroot does: a `..` at the root stays there (`RESOLVE_IN_ROOT`), so a
//! read never fails for a link a chrooted reader would follow.

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// The most links one resolution follows, as Linux does (`MAXSYMLINKS`).
pub const MAX_LINKS: u32 = 40;

/// Whether the last component may be a link that is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// Followed, as opening a path for reading or writing does.
    Follow,
    /// Never followed: a link there is refused (a file plugtop creates or
    /// locks must be the file itself, never what a planted link names).
    Refuse,
}

/// Why a path beneath the root could not be resolved or opened.
#[derive(Debug)]
pub enum WalkError {
    /// A `..` (in the path or in a link's target) climbs above the root.
    Outside,
    /// More than [`MAX_LINKS`] links on the way: a loop, most likely.
    Loop,
    /// The last component is a link, and [`Last::Refuse`] was asked.
    LastIsLink,
    /// What the system said.
    Io(std::io::Error),
}

impl From<Errno> for WalkError {
    fn from(e: Errno) -> Self {
        WalkError::Io(e.into())
    }
}

/// What a `..` at the root does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Climb {
    /// Refused ([`WalkError::Outside`]): for writes, where a path leading
    /// there is a mistake or an attack worth naming.
    Refuse,
    /// Stays at the root, as in a chroot: for reads.
    Clamp,
}

/// Cleared once the kernel says it has no `openat2`: every later path is
/// walked without asking again.
static HAS_OPENAT2: AtomicBool = AtomicBool::new(true);

/// Opens `rel` beneath `root` with `flags` (`O_CLOEXEC` and, for
/// [`Last::Refuse`], `O_NOFOLLOW` added).
pub fn open(
    root: &OwnedFd,
    rel: &[u8],
    flags: OFlags,
    mode: Mode,
    last: Last,
) -> Result<OwnedFd, WalkError> {
    open_by(root, rel, flags, mode, last, Climb::Refuse, kernel_first())
}

/// Opens `rel` below `root` for reading exactly as a process chrooted at
/// `root` would (`O_CLOEXEC` added): absolute links lead from the root and
/// a `..` at the root stays there, so nothing outside can be reached.
///
/// `rel` is a C string already, handed to `openat2` as it is: a path given
/// as bytes is copied into one for each call, and the daemon opens most of
/// its files anew every interval.
pub fn open_in_root(root: BorrowedFd<'_>, rel: &CStr, flags: OFlags) -> Result<OwnedFd, WalkError> {
    let bytes = rel.to_bytes();
    if bytes.is_empty() || flags.contains(OFlags::CREATE) {
        return open_by(
            root,
            bytes,
            flags,
            Mode::empty(),
            Last::Follow,
            Climb::Clamp,
            kernel_first(),
        );
    }
    // As open_by: the same flags, the kernel asked first, then the walk.
    let flags = flags | OFlags::CLOEXEC;
    if kernel_first()
        && let Some(fd) = in_one_call(root, rel, flags, Mode::empty(), Climb::Clamp)?
    {
        return Ok(fd);
    }
    walk_open(
        root,
        bytes,
        flags,
        Mode::empty(),
        Last::Follow,
        Climb::Clamp,
    )
}

/// Opens `rel` (plain names, no `..`) below `dir` when no component of it
/// is a link; `Ok(None)` when one is or may be, and the caller resolves the
/// path from the root instead. Costs one `openat2` where a walk from the
/// root costs one lookup per component: for thousands of `cpuN/online`.
pub fn open_unlinked(
    dir: BorrowedFd<'_>,
    rel: &CStr,
    flags: OFlags,
) -> Result<Option<OwnedFd>, WalkError> {
    open_unlinked_by(dir, rel, flags, kernel_first())
}

fn open_unlinked_by(
    dir: BorrowedFd<'_>,
    rel: &CStr,
    flags: OFlags,
    kernel: bool,
) -> Result<Option<OwnedFd>, WalkError> {
    let names: Vec<&[u8]> = rel.to_bytes().split(|b| *b == b'/').collect();
    let Some((last, dirs)) = names.split_last() else {
        return Ok(None);
    };
    if !names.iter().all(|n| is_name(n)) {
        return Ok(None);
    }
    let flags = flags | OFlags::CLOEXEC;
    if kernel {
        let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match openat2(dir, rel, flags, Mode::empty(), how) {
            Ok(fd) => return Ok(Some(fd)),
            Err(Errno::NOSYS) => HAS_OPENAT2.store(false, Ordering::Relaxed),
            // A link on the way, a race, or a filter hiding openat2.
            Err(Errno::LOOP | Errno::AGAIN | Errno::XDEV | Errno::PERM) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    let step = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut here: Option<OwnedFd> = None;
    for name in dirs {
        let at = here.as_ref().map_or(dir, AsFd::as_fd);
        match rustix::fs::openat(at, *name, step, Mode::empty()) {
            Ok(fd) => here = Some(fd),
            // A link, or no directory at all: the walk from the root says.
            Err(Errno::NOTDIR | Errno::LOOP) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    let at = here.as_ref().map_or(dir, AsFd::as_fd);
    match rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW, Mode::empty()) {
        Ok(fd) if is_link(&fd, flags)? => Ok(None),
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::LOOP) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn open_by(
    root: impl AsFd,
    rel: &[u8],
    flags: OFlags,
    mode: Mode,
    last: Last,
    climb: Climb,
    kernel: bool,
) -> Result<OwnedFd, WalkError> {
    let root = root.as_fd();
    let rel = if rel.is_empty() { &b"."[..] } else { rel };
    // openat2 refuses a mode without O_CREAT.
    let mode = if flags.contains(OFlags::CREATE) {
        mode
    } else {
        Mode::empty()
    };
    let mut flags = flags | OFlags::CLOEXEC;
    if last == Last::Refuse {
        flags |= OFlags::NOFOLLOW;
    }
    if kernel && let Some(fd) = in_one_call(root, rel, flags, mode, climb)? {
        return Ok(fd);
    }
    walk_open(root, rel, flags, mode, last, climb)
}

/// [`open_by`] component by component, where the kernel has no `openat2`
/// or will not resolve the path in one call. Never inlined, so that a
/// profile tells its cost apart: valgrind has no `openat2`, and
/// `scripts/callgrind-eval.sh` counts this walk separately.
#[inline(never)]
fn walk_open(
    root: BorrowedFd<'_>,
    rel: &[u8],
    flags: OFlags,
    mode: Mode,
    last: Last,
    climb: Climb,
) -> Result<OwnedFd, WalkError> {
    let mut walk = Walk::new(root, rel, climb);
    loop {
        let Some(name) = walk.up_to_last(false)? else {
            // The path names a directory it reached by `..`.
            return Ok(rustix::fs::openat(walk.here(), c".", flags, mode)?);
        };
        let opened = match rustix::fs::openat(walk.here(), &name, flags | OFlags::NOFOLLOW, mode) {
            // O_PATH with O_NOFOLLOW opens a link itself where any other
            // open fails with ELOOP: taken as that ELOOP, so a link to a
            // file inside the root is followed as openat2 follows it.
            // (Asked for with Last::Refuse, the link itself is what the
            // kernel gives too.)
            Ok(fd) if last == Last::Follow && is_link(&fd, flags)? => Err(Errno::LOOP),
            other => other,
        };
        match opened {
            Ok(fd) => return Ok(fd),
            Err(Errno::LOOP) if last == Last::Refuse => return Err(WalkError::LastIsLink),
            // A link (a directory wanted gives ENOTDIR for a link to one).
            Err(e @ (Errno::LOOP | Errno::NOTDIR)) => {
                if !walk.follow(&name)? {
                    return Err(e.into());
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Whether `fd`, opened with `flags` and `O_NOFOLLOW`, is a link itself:
/// only an `O_PATH` open can give one (every other open of a link fails
/// with `ELOOP`), so only that one pays for the `fstat`.
fn is_link(fd: &OwnedFd, flags: OFlags) -> Result<bool, WalkError> {
    if !flags.contains(OFlags::PATH) {
        return Ok(false);
    }
    let st = rustix::fs::fstat(fd)?;
    Ok(rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink)
}

/// The directory holding the last component of `rel`, and that component
/// (never followed: for renaming and removing the name itself).
pub fn parent(root: &OwnedFd, rel: &[u8]) -> Result<(OwnedFd, Vec<u8>), WalkError> {
    parent_by(root, rel, kernel_first())
}

fn parent_by(root: &OwnedFd, rel: &[u8], kernel: bool) -> Result<(OwnedFd, Vec<u8>), WalkError> {
    let (dir, name) = match rel.iter().rposition(|b| *b == b'/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => (&b""[..], rel),
    };
    if kernel && is_name(name) {
        let dir = if dir.is_empty() { &b"."[..] } else { dir };
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if let Some(fd) = in_one_call(root.as_fd(), dir, flags, Mode::empty(), Climb::Refuse)? {
            return Ok((fd, name.to_vec()));
        }
    }
    let mut walk = Walk::new(root.as_fd(), rel, Climb::Refuse);
    let Some(name) = walk.up_to_last(false)? else {
        return Err(WalkError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "names a directory, not a file",
        )));
    };
    let here = rustix::fs::openat(
        walk.here(),
        c".",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok((here, name))
}

/// Makes `rel` a directory beneath `root`, creating what is missing on
/// the way (also where a link leads to a directory not there yet: it is
/// inside the root all the same).
pub fn create_dirs(root: &OwnedFd, rel: &[u8]) -> Result<(), WalkError> {
    create_dirs_by(root, rel, kernel_first())
}

fn create_dirs_by(root: &OwnedFd, rel: &[u8], kernel: bool) -> Result<(), WalkError> {
    let rel = if rel.is_empty() { &b"."[..] } else { rel };
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if kernel {
        match in_one_call(root.as_fd(), rel, flags, Mode::empty(), Climb::Refuse) {
            Ok(Some(_)) => return Ok(()),
            // Missing on the way: walked, and made.
            Err(WalkError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
            Ok(None) => {}
            Err(e) => return Err(e),
        }
    }
    let mut walk = Walk::new(root.as_fd(), rel, Climb::Refuse);
    // A last component that is a link puts its target's components back.
    while let Some(name) = walk.up_to_last(true)? {
        walk.enter(&name, true)?;
    }
    Ok(())
}

/// Whether to ask the kernel first: until it says it has no `openat2`.
fn kernel_first() -> bool {
    HAS_OPENAT2.load(Ordering::Relaxed)
}

/// The kernel's `openat2`, or in the test build's no-openat2 pass
/// ([`openat2_hidden`](crate::faults::openat2_hidden)) the `ENOSYS` a
/// kernel before 5.6 answers, so that pass takes exactly the way such a
/// kernel makes plugtop take.
fn openat2(
    dir: BorrowedFd<'_>,
    rel: impl rustix::path::Arg,
    flags: OFlags,
    mode: Mode,
    how: ResolveFlags,
) -> rustix::io::Result<OwnedFd> {
    if crate::faults::openat2_hidden() {
        return Err(Errno::NOSYS);
    }
    rustix::fs::openat2(dir, rel, flags, mode, how)
}

/// A plain file name: not empty, `.` or `..`.
fn is_name(name: &[u8]) -> bool {
    !matches!(name, b"" | b"." | b"..")
}

/// The kernel's resolution beneath `root`: `None` when it cannot say (for
/// [`Climb::Refuse`], an absolute link or a `..` above the root on the
/// way; or no `openat2`), and the path must be walked. Never inlined, so
/// that a profile tells its cost apart (`scripts/callgrind-eval.sh` counts
/// it in place of the walk valgrind makes of each open).
#[inline(never)]
fn in_one_call(
    root: BorrowedFd<'_>,
    rel: impl rustix::path::Arg,
    flags: OFlags,
    mode: Mode,
    climb: Climb,
) -> Result<Option<OwnedFd>, WalkError> {
    let confine = match climb {
        Climb::Refuse => ResolveFlags::BENEATH,
        Climb::Clamp => ResolveFlags::IN_ROOT,
    };
    let how = confine | ResolveFlags::NO_MAGICLINKS;
    match openat2(root, rel, flags, mode, how) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOSYS) => {
            HAS_OPENAT2.store(false, Ordering::Relaxed);
            Ok(None)
        }
        // EXDEV: an escape as the kernel sees it; EAGAIN: a race it would
        // not resolve; ELOOP: a loop, or a last link not to be followed;
        // EPERM: a seccomp filter that hides openat2. The walk says which.
        Err(Errno::XDEV | Errno::AGAIN | Errno::LOOP | Errno::PERM) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// One walk from the root, component by component.
struct Walk<'r> {
    root: BorrowedFd<'r>,
    /// The directories entered below the root, the current one last; `..`
    /// goes back to the one before (never looked up by name).
    dirs: Vec<OwnedFd>,
    /// The components still to resolve, the next one last.
    todo: Vec<Vec<u8>>,
    links: u32,
    climb: Climb,
}

impl<'r> Walk<'r> {
    fn new(root: BorrowedFd<'r>, rel: &[u8], climb: Climb) -> Self {
        let mut walk = Walk {
            root,
            dirs: Vec::new(),
            todo: Vec::new(),
            links: 0,
            climb,
        };
        walk.push(rel);
        walk
    }

    /// Puts `path` before what is left; an absolute one starts at the root.
    fn push(&mut self, path: &[u8]) {
        if path.starts_with(b"/") {
            self.dirs.clear();
        }
        let parts = path.split(|b| *b == b'/').rev();
        self.todo.extend(
            parts
                .filter(|p| !matches!(*p, b"" | b"."))
                .map(<[u8]>::to_vec),
        );
    }

    /// The directory the walk stands in.
    fn here(&self) -> BorrowedFd<'_> {
        self.dirs.last().map_or(self.root, AsFd::as_fd)
    }

    /// Resolves every component but the last, which it returns (`None` when
    /// the path ends in the directory reached, after a `..` or at the root).
    fn up_to_last(&mut self, create: bool) -> Result<Option<Vec<u8>>, WalkError> {
        while let Some(part) = self.todo.pop() {
            if part == b".." {
                if self.dirs.pop().is_none() && self.climb == Climb::Refuse {
                    return Err(WalkError::Outside);
                }
            } else if self.todo.is_empty() {
                return Ok(Some(part));
            } else {
                self.enter(&part, create)?;
            }
        }
        Ok(None)
    }

    /// Steps into the directory `name`, or puts the target of the link
    /// `name` in its place; creates it first when missing and `create`.
    fn enter(&mut self, name: &[u8], create: bool) -> Result<(), WalkError> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // A directory removed again right after it was made: try again,
        // a few times.
        for _ in 0..3 {
            match rustix::fs::openat(self.here(), name, flags, Mode::empty()) {
                Ok(fd) => {
                    self.dirs.push(fd);
                    return Ok(());
                }
                // A link to anything, or no directory at all.
                Err(Errno::NOTDIR) => {
                    return if self.follow(name)? {
                        Ok(())
                    } else {
                        Err(Errno::NOTDIR.into())
                    };
                }
                Err(Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(self.here(), name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(Errno::NOENT.into())
    }

    /// When `name` (in the current directory) is a link: puts its target
    /// in its place and says true; false when it is no link.
    fn follow(&mut self, name: &[u8]) -> Result<bool, WalkError> {
        let target = match rustix::fs::readlinkat(self.here(), name, Vec::new()) {
            Ok(t) => t,
            Err(Errno::INVAL) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(WalkError::Loop);
        }
        let target = target.into_bytes();
        if target.is_empty() {
            return Err(Errno::NOENT.into());
        }
        self.push(&target);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::Path;

    fn root_fd(dir: &Path) -> OwnedFd {
        rustix::fs::open(
            dir,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .expect("root")
    }

    fn read(root: &OwnedFd, rel: &str, climb: Climb, kernel: bool) -> Result<String, WalkError> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK;
        let fd = open_by(
            root,
            rel.as_bytes(),
            flags,
            Mode::empty(),
            Last::Follow,
            climb,
            kernel,
        )?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::fs::File::from(fd), &mut text).expect("read");
        Ok(text)
    }

    /// Every case once with the kernel's resolution first and once walked
    /// only (as on a kernel without openat2).
    fn both_ways(check: impl Fn(bool)) {
        check(true);
        check(false);
    }

    #[test]
    fn links_resolve_as_in_a_chroot_and_never_climb_out() {
        let dir = tempfile::tempdir().expect("dir");
        let root_path = dir.path().join("root");
        let outside = dir.path().join("x");
        std::fs::create_dir_all(root_path.join("run/lock")).expect("dirs");
        std::fs::create_dir_all(root_path.join("c")).expect("dirs");
        std::fs::create_dir_all(root_path.join("var")).expect("dirs");
        std::fs::write(&outside, "outside").expect("outside");
        std::fs::write(root_path.join("run/lock/f"), "inside").expect("inside");
        std::fs::write(root_path.join("c/d"), "chain").expect("chain");
        symlink("/run/lock", root_path.join("var/lock")).expect("link");
        symlink("/b", root_path.join("a")).expect("link");
        symlink("/c/d", root_path.join("b")).expect("link");
        symlink("../lock/./f", root_path.join("run/lock/rel")).expect("link");
        symlink("../../x", root_path.join("var/up")).expect("link");
        symlink("loop2", root_path.join("loop1")).expect("link");
        symlink("/loop1", root_path.join("loop2")).expect("link");
        let root = root_fd(&root_path);
        both_ways(|kernel| {
            for (rel, want) in [
                ("var/lock/f", "inside"),
                ("/var/lock/f", "inside"),
                ("a", "chain"),
                ("var/lock/rel", "inside"),
                ("var/lock/../lock/f", "inside"),
                ("run/../c/d", "chain"),
            ] {
                let got = read(&root, rel, Climb::Refuse, kernel)
                    .unwrap_or_else(|e| panic!("{rel}: {e:?}"));
                assert_eq!(got, want, "{rel}");
            }
            for rel in ["var/up", "..", "../x", "run/../../x", "var/lock/../../../x"] {
                assert!(
                    matches!(
                        read(&root, rel, Climb::Refuse, kernel),
                        Err(WalkError::Outside)
                    ),
                    "{rel} is refused"
                );
            }
            assert!(matches!(
                read(&root, "loop1", Climb::Refuse, kernel),
                Err(WalkError::Loop)
            ));
            let missing = read(&root, "var/lock/missing", Climb::Refuse, kernel);
            assert!(
                matches!(&missing, Err(WalkError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound),
                "{missing:?}"
            );
        });
        crate::kernel::fs::tests::holds(&outside, "outside");
    }

    #[test]
    fn a_last_link_is_refused_when_asked_and_directories_are_made_through_links() {
        let dir = tempfile::tempdir().expect("dir");
        let outside = tempfile::tempdir().expect("outside");
        std::fs::create_dir_all(dir.path().join("var")).expect("var");
        symlink("/run/lock", dir.path().join("var/lock")).expect("link");
        symlink(outside.path().join("f"), dir.path().join("planted")).expect("link");
        symlink("../../x", dir.path().join("var/up")).expect("link");
        let root = root_fd(dir.path());
        both_ways(|kernel| {
            let _ = std::fs::remove_dir_all(dir.path().join("run"));
            // The last component a link to a directory not there yet.
            create_dirs_by(&root, b"var/lock", kernel).expect("the link's target");
            assert!(dir.path().join("run/lock").is_dir());
            let up = create_dirs_by(&root, b"var/up", kernel);
            assert!(matches!(up, Err(WalkError::Outside)), "{up:?}");
            create_dirs_by(&root, b"var/lock/deeper", kernel).expect("dirs through the link");
            assert!(dir.path().join("run/lock/deeper").is_dir());
            create_dirs_by(&root, b"run/plain/deeper", kernel).expect("plain dirs");
            assert!(dir.path().join("run/plain/deeper").is_dir());
            let flags = OFlags::WRONLY | OFlags::CREATE;
            let mode = Mode::from_raw_mode(0o644);
            let e = open_by(
                &root,
                b"planted",
                flags,
                mode,
                Last::Refuse,
                Climb::Refuse,
                kernel,
            );
            assert!(matches!(e, Err(WalkError::LastIsLink)), "{e:?}");
            let (_dir, name) = parent_by(&root, b"var/lock/deeper/x", kernel).expect("parent");
            assert_eq!(name, b"x");
            assert!(parent_by(&root, b"var/..", kernel).is_err(), "no file name");
        });
        assert!(!outside.path().join("f").exists(), "nothing made outside");
    }

    #[test]
    fn reads_in_root_stay_at_the_root_on_dot_dot_as_a_chroot_does() {
        let dir = tempfile::tempdir().expect("dir");
        let root_path = dir.path().join("root");
        std::fs::create_dir_all(root_path.join("proc")).expect("dirs");
        std::fs::create_dir_all(root_path.join("x")).expect("dirs");
        std::fs::write(dir.path().join("x"), "outside").expect("outside");
        std::fs::write(root_path.join("x/f"), "inside").expect("inside");
        symlink("../../../../x/f", root_path.join("proc/up")).expect("link");
        symlink("/x/f", root_path.join("proc/abs")).expect("link");
        symlink("/../x/f", root_path.join("proc/abs-up")).expect("link");
        let root = root_fd(&root_path);
        both_ways(|kernel| {
            for rel in ["proc/up", "proc/abs", "proc/abs-up", "../x/f", "../../x/f"] {
                let text = read(&root, rel, Climb::Clamp, kernel)
                    .unwrap_or_else(|e| panic!("{rel}: {e:?}"));
                assert_eq!(text, "inside", "{rel} (kernel {kernel})");
            }
        });
    }

    /// A path-only open (the existence check of a root's files) follows a
    /// last link inside the root on both ways: `O_PATH | O_NOFOLLOW` would
    /// open the link itself, and the file would be taken for missing.
    #[test]
    fn path_only_opens_follow_a_last_link_as_the_kernel_does() {
        let dir = tempfile::tempdir().expect("dir");
        let root_path = dir.path().join("root");
        std::fs::create_dir_all(root_path.join("proc/sys/vm")).expect("dirs");
        std::fs::create_dir_all(root_path.join("kept")).expect("dirs");
        std::fs::write(root_path.join("kept/pages"), "7\n").expect("file");
        symlink("/kept/pages", root_path.join("proc/sys/vm/abs")).expect("link");
        symlink("../../../kept/pages", root_path.join("proc/sys/vm/rel")).expect("link");
        symlink("/kept/none", root_path.join("proc/sys/vm/dangling")).expect("link");
        let root = root_fd(&root_path);
        let is_file = |fd: &OwnedFd| {
            let st = rustix::fs::fstat(fd).expect("fstat");
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
        };
        both_ways(|kernel| {
            for climb in [Climb::Clamp, Climb::Refuse] {
                for rel in ["proc/sys/vm/abs", "proc/sys/vm/rel"] {
                    let fd = open_by(
                        &root,
                        rel.as_bytes(),
                        OFlags::PATH,
                        Mode::empty(),
                        Last::Follow,
                        climb,
                        kernel,
                    )
                    .unwrap_or_else(|e| panic!("{rel}: {e:?}"));
                    assert!(is_file(&fd), "{rel} (kernel {kernel}, {climb:?})");
                }
                let dangling = open_by(
                    &root,
                    b"proc/sys/vm/dangling",
                    OFlags::PATH,
                    Mode::empty(),
                    Last::Follow,
                    climb,
                    kernel,
                );
                assert!(
                    matches!(&dangling, Err(WalkError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound),
                    "{dangling:?} (kernel {kernel})"
                );
                // Not followed when asked: the link itself, as the kernel
                // opens it for O_PATH | O_NOFOLLOW.
                let link = open_by(
                    &root,
                    b"proc/sys/vm/abs",
                    OFlags::PATH,
                    Mode::empty(),
                    Last::Refuse,
                    climb,
                    kernel,
                )
                .expect("the link itself");
                assert!(
                    is_link(&link, OFlags::PATH).expect("fstat"),
                    "kernel {kernel}"
                );
            }
            let vm = root_fd(&root_path.join("proc/sys/vm"));
            let below = open_unlinked_by(vm.as_fd(), c"abs", OFlags::PATH, kernel);
            assert!(matches!(below, Ok(None)), "{below:?} (kernel {kernel})");
        });
    }

    #[test]
    fn unlinked_opens_give_way_at_any_link_on_the_path() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join("cpu0")).expect("cpu0");
        std::fs::write(dir.path().join("cpu0/online"), "1\n").expect("online");
        symlink("cpu0", dir.path().join("cpu1")).expect("link");
        std::fs::create_dir_all(dir.path().join("cpu2")).expect("cpu2");
        symlink("/etc/hostname", dir.path().join("cpu2/online")).expect("link");
        let at = root_fd(dir.path());
        both_ways(|kernel| {
            let flags = OFlags::RDONLY | OFlags::NONBLOCK;
            let open = |rel: &CStr| open_unlinked_by(at.as_fd(), rel, flags, kernel);
            assert!(matches!(open(c"cpu0/online"), Ok(Some(_))), "{kernel}");
            for rel in [
                c"cpu1/online",
                c"cpu2/online",
                c"cpu0/../cpu0/online",
                c"/cpu0/online",
            ] {
                assert!(matches!(open(rel), Ok(None)), "{rel:?} (kernel {kernel})");
            }
            let missing = open(c"cpu0/configure");
            assert!(
                matches!(&missing, Err(WalkError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound),
                "{missing:?}"
            );
        });
    }
}
