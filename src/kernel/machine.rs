//! What machine a root belongs to, for recording headers: host name,
//! kernel release, CPU model and page size.

use std::io::BufReader;
use std::path::Path;

use procfs_core::{CpuInfo, FromBufRead};

/// A short description of the machine under a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub host: String,
    pub kernel: String,
    pub cpu_model: String,
    pub page_size: u64,
}

fn first_line(root: &Path, rel: &str) -> Option<String> {
    let text = std::fs::read_to_string(root.join(rel)).ok()?;
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// Reads `proc/sys/kernel/{hostname,osrelease}`, `proc/cpuinfo` (with
/// procfs's parser) and the page size from `proc/self/smaps`; anything
/// missing reads as "unknown" (or 4096 for the page size).
pub fn describe(root: &Path) -> Machine {
    let cpu_model = std::fs::File::open(root.join("proc/cpuinfo"))
        .ok()
        .and_then(|f| CpuInfo::from_buf_read(BufReader::new(f)).ok())
        .and_then(|info| {
            ["model name", "machine", "vendor_id", "cpu"]
                .iter()
                .find_map(|key| info.get_field(0, key).map(str::to_string))
        })
        .unwrap_or_else(|| "unknown".into());
    let page_size = std::fs::read_to_string(root.join("proc/self/smaps"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("KernelPageSize:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or(4096, |kb| kb * 1024);
    Machine {
        host: first_line(root, "proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
        kernel: first_line(root, "proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        cpu_model,
        page_size,
    }
}

/// Whether /proc/cpuinfo says this is a z/VM guest: on s390 each
/// `processor N:` line carries `version = FF` under z/VM (an LPAR shows the
/// machine's own version). cpuplugd manages memory only then.
pub fn is_zvm_guest(cpuinfo: &[u8]) -> bool {
    cpuinfo
        .split(|b| *b == b'\n')
        .any(|line| line.starts_with(b"processor") && contains(line, b"version = FF"))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// What a person needs to know before letting plugtop change a machine:
/// is it an s390 z/VM guest, as cpuplugd expects, and which one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub host: String,
    /// From /proc/cpuinfo (`IBM/S390` on s390), or "unknown".
    pub architecture: String,
    pub s390: bool,
    pub zvm_guest: bool,
    /// The z/VM guest name from /proc/sysinfo (`VM00 Name:`), when present.
    pub guest_name: Option<String>,
}

/// Reads the identity of the machine below `root` (bounded reads; what is
/// missing reads as unknown, never as an error).
pub fn identity(root: &Path) -> Identity {
    let read = |rel: &str| super::regular::read_small(&root.join(rel), 1 << 20).unwrap_or_default();
    let cpuinfo = read("proc/cpuinfo");
    let sysinfo = read("proc/sysinfo");
    let s390 = contains(&cpuinfo, b"IBM/S390");
    let architecture = if s390 {
        "s390x".to_string()
    } else {
        describe(root).cpu_model
    };
    let guest_name = String::from_utf8_lossy(&sysinfo)
        .lines()
        .find_map(|l| l.strip_prefix("VM00 Name:"))
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty());
    Identity {
        host: first_line(root, "proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
        architecture,
        s390,
        zvm_guest: s390 && is_zvm_guest(&cpuinfo),
        guest_name,
    }
}

/// The first line of `cpu/online` below `root` ("" when unreadable).
pub fn online_list(root: &Path) -> String {
    first_line(root, super::root::paths::ONLINE).unwrap_or_default()
}

/// How many CPUs `cpu/present` below `root` lists (0 when unreadable).
pub fn present_cpus(root: &Path) -> u32 {
    std::fs::read(root.join(super::root::paths::PRESENT))
        .ok()
        .and_then(|t| super::cpulist::CpuList::parse(&t))
        .map_or(0, |l| l.cpus())
}

/// /proc/cpuinfo below `root`, bounded; an error when it cannot be read
/// (cpuplugd does not start then).
pub fn cpuinfo(root: &Path) -> std::io::Result<Vec<u8>> {
    super::regular::read_small(&root.join("proc/cpuinfo"), 1 << 20)
}

/// This process's CPU time so far, in nanoseconds (the screen shows its
/// own cost).
pub fn own_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Whether a process with this pid exists on this machine.
pub fn pid_alive(pid: u32) -> bool {
    pid != 0 && Path::new("/proc").join(pid.to_string()).exists()
}
