//! Whether a pid recorded in a journal is still *that* plugtop, acting on
//! that root: pids are reused, binaries are renamed, and another plugtop
//! may run on another root; a dead run's pid taken by an unrelated process
//! must neither block `plugtop restore` nor get that process a SIGTERM
//! from an admin. What tells is the guest lock: every plugtop that acts on
//! a root holds that root's lock (a `flock`) until it has given the guest
//! back, whatever its command is called. The start time the journal
//! recorded tells a reused pid apart besides.
//!
//! These read this machine's own `/proc`, never the one below `--root`:
//! the pid in a journal is that of the plugtop process that wrote it, which
//! ran here whatever root it acted on (a test root's or a served
//! simulator's `proc/` holds made-up numbers, and a guest's mounted `/proc`
//! would not be this machine's processes).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// `/proc/PID/stat` is one line of a few hundred bytes (the command name
/// is at most 15 bytes): anything longer is not what the kernel writes.
const STAT_LIMIT: u64 = 4096;
/// `/proc/locks` has a line of about 60 bytes per lock on the machine:
/// what is read of it is bounded (a lock past this is not seen, so the pid
/// counts as not holding it; the lock itself still keeps a second plugtop
/// out).
const LOCKS_LIMIT: u64 = 16 << 20;

fn proc_file(pid: u32, name: &str) -> std::path::PathBuf {
    Path::new("/proc").join(pid.to_string()).join(name)
}

/// Field 22 of a `/proc/PID/stat` line: the start time in clock ticks
/// after boot, which tells two processes with the same pid apart. The
/// fields are counted after the last `)`, since the command name may hold
/// spaces and parentheses.
pub fn start_time_of_stat(stat: &[u8]) -> Option<u64> {
    let close = stat.iter().rposition(|b| *b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    // Field 3 (the state) is the first after the name: 22 is the 20th.
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

/// Field 3 of a `/proc/PID/stat` line: the process's state (`R`, `S`,
/// `T` stopped, `t` stopped by a tracer, ...), the first field after the
/// last `)`.
pub fn state_of_stat(stat: &[u8]) -> Option<char> {
    let close = stat.iter().rposition(|b| *b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    rest.split_ascii_whitespace().next()?.chars().next()
}

/// Process `pid`'s `/proc/PID/stat` line, read bounded and without
/// blocking; `None` when there is no such process.
fn stat_of(pid: u32) -> Option<Vec<u8>> {
    if pid == 0 {
        return None;
    }
    let file = super::fs::open_path(&proc_file(pid, "stat")).ok()?;
    super::fs::read_bounded(&file, STAT_LIMIT, super::fs::PastLimit::Cut).ok()
}

/// When process `pid` started (clock ticks after boot), read bounded and
/// without blocking; `None` when there is no such process.
pub fn start_time(pid: u32) -> Option<u64> {
    start_time_of_stat(&stat_of(pid)?)
}

/// Whether process `pid` is stopped now (SIGSTOP, Ctrl-Z, a tracer: state
/// `T` or `t`): it runs no code, so whatever lock it holds, it acts on
/// nothing. Unreadable or gone: not stopped.
pub fn stopped(pid: u32) -> bool {
    stat_of(pid)
        .and_then(|stat| state_of_stat(&stat))
        .is_some_and(|state| matches!(state, 'T' | 't'))
}

/// This machine's uptime in seconds: the first number of `/proc/uptime`
/// (one short line, where /proc/stat's `btime` can come after megabytes of
/// interrupt counts), read bounded and without blocking.
pub fn uptime() -> Option<f64> {
    let file = super::fs::open_path(Path::new("/proc/uptime")).ok()?;
    let text = super::fs::read_bounded(&file, 128, super::fs::PastLimit::Cut).ok()?;
    std::str::from_utf8(&text)
        .ok()?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()
}

/// When a process that started `after_boot` seconds after boot started, in
/// seconds since the epoch: now, less the uptime, plus that.
pub fn epoch_of(after_boot: f64) -> Option<f64> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    Some(now - uptime()? + after_boot)
}

/// When process `pid` started, in seconds since the epoch; `None` when it
/// or the uptime cannot be read.
pub fn started_at(pid: u32) -> Option<f64> {
    epoch_of_ticks(start_time(pid)?)
}

/// A start time in clock ticks after boot (`/proc/PID/stat`'s field 22,
/// as a journal keeps it) in seconds since the epoch; `None` when the
/// uptime cannot be read or the ticks lie past it (a start from before
/// the last boot).
pub fn epoch_of_ticks(ticks: u64) -> Option<f64> {
    let after_boot = ticks as f64 / rustix::param::clock_ticks_per_second().max(1) as f64;
    if uptime()? < after_boot {
        return None;
    }
    epoch_of(after_boot)
}

/// This process's start time, recorded in the journal it writes.
pub fn own_start_time() -> Option<u64> {
    start_time(std::process::id())
}

/// Whether process `pid` runs, and started when `started` says (when it
/// was recorded: a journal of version 1 has no start time).
pub fn started_as_recorded(pid: u32, started: Option<u64>) -> bool {
    start_time(pid).is_some_and(|now| started.is_none_or(|s| s == now))
}

/// A file as `/proc/locks` names it: its device's major and minor numbers
/// and its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockedFile {
    /// The device's major number (hexadecimal in `/proc/locks`).
    pub major: u32,
    /// The device's minor number (hexadecimal in `/proc/locks`).
    pub minor: u32,
    /// The inode number (decimal in `/proc/locks`).
    pub inode: u64,
}

impl LockedFile {
    /// The file of a `stat` (`st_dev`, `st_ino`).
    pub fn of(dev: u64, inode: u64) -> Self {
        LockedFile {
            major: rustix::fs::major(dev),
            minor: rustix::fs::minor(dev),
            inode,
        }
    }
}

/// Whether process `pid` holds a `flock` on `file` now, as this machine's
/// `/proc/locks` says: looked up, never taken, so nothing that starts at
/// that moment is turned away. Read bounded and without blocking;
/// unreadable counts as not held.
pub fn holds_flock(pid: u32, file: LockedFile) -> bool {
    flock_holders(file).contains(&pid)
}

/// The processes that hold a `flock` on `file` now, as this machine's
/// `/proc/locks` says (looked up, never taken; read bounded and without
/// blocking; unreadable: none).
pub fn flock_holders(file: LockedFile) -> Vec<u32> {
    let path = Path::new("/proc/locks");
    let Ok(locks) = super::fs::open_path(path) else {
        return Vec::new();
    };
    BufReader::new(locks.take(LOCKS_LIMIT))
        .split(b'\n')
        .map_while(Result::ok)
        .filter_map(|line| flock_holder(&line))
        .filter(|(_, f)| *f == file)
        .map(|(pid, _)| pid)
        .collect()
}

/// The first process this machine's lock table says holds a `flock` on
/// the regular file `rel` below `beneath` (other than `except`), with its
/// command name made terminal-safe when it can be read; `None` when
/// nobody does or the table does not say.
pub fn flock_holder_of(
    beneath: &super::fs::Root,
    rel: &Path,
    except: Option<u32>,
) -> Option<(u32, Option<String>)> {
    let (dev, inode) = beneath.regular_id(rel)?;
    let pid = flock_holders(LockedFile::of(dev, inode))
        .into_iter()
        .find(|&pid| Some(pid) != except)?;
    let name = command_name(pid).map(|n| crate::safe_text::terminal_safe(&n).into_owned());
    Some((pid, name))
}

/// Who holds a `flock` on the regular file `rel` below `beneath`, in words
/// for a refusal (" (pid 4242, plugtop)"), or nothing when the lock table
/// does not say.
pub fn flock_holder_words(beneath: &super::fs::Root, rel: &Path) -> String {
    holder_words(flock_holder_of(beneath, rel, None))
}

/// A holder as [`flock_holder_of`] gives it, in words for a refusal
/// (" (pid 4242, plugtop)"), or nothing for none.
pub fn holder_words(holder: Option<(u32, Option<String>)>) -> String {
    holder
        .map(|(pid, name)| match name {
            Some(name) => format!(" (pid {pid}, {name})"),
            None => format!(" (pid {pid})"),
        })
        .unwrap_or_default()
}

/// The command name of process `pid` (`/proc/PID/comm`, at most 64 bytes,
/// read without blocking), as the kernel has it (any bytes: escape it
/// before showing it).
pub fn command_name(pid: u32) -> Option<String> {
    let file = super::fs::open_path(Path::new(&format!("/proc/{pid}/comm"))).ok()?;
    let bytes = super::fs::read_bounded(&file, 64, super::fs::PastLimit::Cut).ok()?;
    let name = String::from_utf8_lossy(&bytes).trim_end().to_string();
    (!name.is_empty()).then_some(name)
}

/// The holder and the file of a `/proc/locks` line of a `flock` held
/// (`1: FLOCK  ADVISORY  WRITE 4242 fe:00:1234 0 EOF`); `None` for other
/// locks, for a process waiting for one (`1: -> FLOCK ...`) and for
/// anything else.
fn flock_holder(line: &[u8]) -> Option<(u32, LockedFile)> {
    let text = std::str::from_utf8(line).ok()?;
    let mut fields = text.split_ascii_whitespace();
    let _number = fields.next()?;
    if fields.next()? != "FLOCK" {
        return None;
    }
    let _advisory = fields.next()?;
    let _access = fields.next()?;
    let pid = fields.next()?.parse().ok()?;
    let mut id = fields.next()?.splitn(3, ':');
    let major = u32::from_str_radix(id.next()?, 16).ok()?;
    let minor = u32::from_str_radix(id.next()?, 16).ok()?;
    let inode = id.next()?.parse().ok()?;
    Some((
        pid,
        LockedFile {
            major,
            minor,
            inode,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_counted_after_the_last_parenthesis() {
        let line = b"42 (a) b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(start_time_of_stat(line), Some(987_654));
        assert_eq!(start_time_of_stat(b"42 (plugtop) S 1 2"), None);
        assert_eq!(start_time_of_stat(b"no parenthesis 1 2 3"), None);
    }

    fn file(major: u32, minor: u32, inode: u64) -> LockedFile {
        LockedFile {
            major,
            minor,
            inode,
        }
    }

    #[test]
    fn the_state_is_the_first_field_after_the_last_parenthesis() {
        assert_eq!(state_of_stat(b"42 (a) b) T 1 42"), Some('T'));
        assert_eq!(state_of_stat(b"42 (sh) S 1 42"), Some('S'));
        assert_eq!(state_of_stat(b"42 (sh)"), None);
        assert_eq!(state_of_stat(b"no parenthesis"), None);
        assert!(!stopped(std::process::id()), "this test runs");
    }

    #[test]
    fn a_held_flock_is_read_and_waiters_and_other_locks_are_not() {
        assert_eq!(
            flock_holder(b"1: FLOCK  ADVISORY  WRITE 4242 fe:00:10010719 0 EOF"),
            Some((4242, file(0xfe, 0, 10_010_719)))
        );
        assert_eq!(
            flock_holder(b"12: FLOCK  ADVISORY  READ 7 103:1a:5 0 EOF"),
            Some((7, file(0x103, 0x1a, 5)))
        );
        for other in [
            &b"1: -> FLOCK  ADVISORY  WRITE 4242 fe:00:1 0 EOF"[..],
            b"2: POSIX  ADVISORY  WRITE 4242 fe:00:1 0 EOF",
            b"3: OFDLCK ADVISORY  WRITE -1 fe:00:1 0 EOF",
            b"4: FLOCK  ADVISORY  WRITE -1 fe:00:1 0 EOF",
            b"5: FLOCK  ADVISORY  WRITE 1 zz:00:1 0 EOF",
            b"6: FLOCK",
            b"",
            b"\xff\xfe",
        ] {
            assert_eq!(
                flock_holder(other),
                None,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }

    #[test]
    fn a_lock_this_process_holds_is_found_by_its_file() {
        use std::os::unix::fs::MetadataExt as _;
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("lock");
        let held = std::fs::File::create(&path).expect("file");
        let meta = held.metadata().expect("stat");
        let locked = LockedFile::of(meta.dev(), meta.ino());
        let me = std::process::id();
        assert!(!holds_flock(me, locked), "not locked yet");
        held.try_lock().expect("lock");
        assert!(holds_flock(me, locked));
        assert!(!holds_flock(me + 1, locked), "another pid");
        let other = LockedFile {
            inode: meta.ino() + 1,
            ..locked
        };
        assert!(!holds_flock(me, other), "another file");
        held.unlock().expect("unlock");
        assert!(!holds_flock(me, locked), "released");
    }

    #[test]
    fn this_test_process_started_as_it_says() {
        let me = std::process::id();
        let started = own_start_time();
        assert!(started.is_some(), "this process has a start time");
        assert!(started_as_recorded(me, started));
        assert!(started_as_recorded(me, None));
        assert!(!started_as_recorded(me, started.map(|s| s + 1)));
        assert!(!started_as_recorded(0, None));
    }
}
