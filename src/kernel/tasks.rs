//! The user tasks below a root and the CPUs each may run on
//! (`/proc/PID/status`), for the pattern that warns about CPU binding.

use std::path::Path;

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
pub fn task_cpus(root: &Path) -> Vec<TaskCpus> {
    let Ok(entries) = std::fs::read_dir(root.join("proc")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten().take(MOST_TASKS) {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(bytes) = super::regular::read_small(&e.path().join("status"), STATUS_BYTES) else {
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
