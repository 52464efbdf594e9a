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
