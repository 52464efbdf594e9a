//! Whether a pid recorded in a journal is still *that* plugtop: pids are
//! reused, and a dead run's pid taken by an unrelated process must neither
//! block `plugtop restore` nor get that process a SIGTERM from an admin.
//!
//! These read this machine's own `/proc`, never the one below `--root`:
//! the pid in a journal is that of the plugtop process that wrote it, which
//! ran here whatever root it acted on (a test root's or a served
//! simulator's `proc/` holds made-up numbers, and a guest's mounted `/proc`
//! would not be this machine's processes).

use std::path::Path;

/// `/proc/PID/stat` is one line of a few hundred bytes (the command name
/// is at most 15 bytes): anything longer is not what the kernel writes.
const STAT_LIMIT: u64 = 4096;
/// `/proc/PID/comm` is at most 16 bytes with its newline.
const COMM_LIMIT: u64 = 64;
/// The command name plugtop runs under.
const NAME: &str = "plugtop";

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

/// When process `pid` started (clock ticks after boot), read bounded and
/// without blocking; `None` when there is no such process.
pub fn start_time(pid: u32) -> Option<u64> {
    if pid == 0 {
        return None;
    }
    let stat = super::regular::read_small(&proc_file(pid, "stat"), STAT_LIMIT).ok()?;
    start_time_of_stat(&stat)
}

/// This process's start time, recorded in the journal it writes.
pub fn own_start_time() -> Option<u64> {
    start_time(std::process::id())
}

/// Whether process `pid` runs plugtop: its command name, or else the
/// name of its executable (which reads `plugtop (deleted)` after an
/// upgrade replaced the binary).
pub fn runs_plugtop(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    let comm = super::regular::read_small(&proc_file(pid, "comm"), COMM_LIMIT).unwrap_or_default();
    if comm.strip_suffix(b"\n").unwrap_or(&comm) == NAME.as_bytes() {
        return true;
    }
    std::fs::read_link(proc_file(pid, "exe")).is_ok_and(|exe| {
        exe.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.strip_suffix(" (deleted)").unwrap_or(n) == NAME)
    })
}

/// Whether the plugtop that recorded (`pid`, `started`) still runs: the
/// pid exists, runs plugtop, and (when the start time was recorded, as
/// journals of version 2 do) started at that time. A journal of version 1
/// has no start time: a live pid counts only if it runs plugtop.
pub fn plugtop_alive(pid: u32, started: Option<u64>) -> bool {
    let Some(now) = start_time(pid) else {
        return false;
    };
    if started.is_some_and(|s| s != now) {
        return false;
    }
    runs_plugtop(pid)
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

    #[test]
    fn this_test_process_is_alive_but_not_plugtop() {
        let me = std::process::id();
        let started = own_start_time();
        assert!(started.is_some(), "this process has a start time");
        assert!(!runs_plugtop(me));
        assert!(!plugtop_alive(me, started));
        assert!(!plugtop_alive(0, None));
    }
}
