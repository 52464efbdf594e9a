//! The user tasks below a root and the CPUs each may run on
//! (`/proc/PID/status`), for the pattern that warns about CPU binding.

use std::ffi::CString;
use std::path::Path;

use super::fs::{PastLimit, Resolve, Root, check_regular, read_bounded};

/// The most tasks looked at, and the most of one `status` file read: a
/// damaged root cannot make the hint read without end.
const MOST_TASKS: usize = 1 << 16;
const STATUS_BYTES: u64 = 64 << 10;

/// A user task (one with memory of its own) and its `Cpus_allowed_list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCpus {
    pub pid: String,
    pub name: String,
    pub allowed: String,
}

/// Every user task below `root` with the CPUs it may run on; kernel
/// threads (no `VmRSS`) are left out.
/// Read as every file under a root is: as in a chroot, bounded and
/// regular-only (see [`Root`]).
pub fn task_cpus(root: &Path) -> Vec<TaskCpus> {
    let Ok(root_dir) = Root::open(root) else {
        return Vec::new();
    };
    let Some(mut entries) = root_dir
        .open_dir(Path::new("proc"), Resolve::InRoot)
        .ok()
        .and_then(|fd| rustix::fs::Dir::new(fd).ok())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for _ in 0..MOST_TASKS {
        let Some(Ok(e)) = entries.read() else { break };
        let Some(pid) = std::str::from_utf8(e.file_name().to_bytes())
            .ok()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(status) = CString::new(format!("{pid}/status")) else {
            continue;
        };
        let Ok(dir) = entries.fd() else { break };
        let Ok(file) = root_dir.open_below(dir, "proc", &status, Resolve::InRoot) else {
            continue;
        };
        let read = check_regular(&file, "")
            .and_then(|()| read_bounded(&file, STATUS_BYTES, PastLimit::Cut));
        let Ok(bytes) = read else {
            continue;
        };
        let status = String::from_utf8_lossy(&bytes);
        if !status.contains("\nVmRSS:") {
            continue;
        }
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_string())
        };
        if let Some(allowed) = field("Cpus_allowed_list:") {
            out.push(TaskCpus {
                pid: pid.to_string(),
                name: field("Name:").unwrap_or_default(),
                allowed,
            });
        }
    }
    out
}
