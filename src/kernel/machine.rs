//! What machine a root belongs to, read once rather than every interval:
//! host name, kernel release, CPU model and page size (recording headers,
//! metrics labels), whether it is an s390 z/VM guest (may plugtop act on
//! it, does cpuplugd manage its memory), its /proc/cpuinfo, its online and
//! present CPU lists as a header shows them; and two facts about this
//! machine's processes (is a pid alive, this process's own CPU time).

use std::path::Path;

use procfs_core::{CpuInfo, FromBufRead};

use super::fs::{PastLimit, Resolve, Root, read_bounded};

/// A short description of the machine under a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub host: String,
    pub kernel: String,
    pub cpu_model: String,
    pub page_size: u64,
}

/// The most of a file under a root that a description reads: cpuinfo of a
/// large guest is tens of kilobytes; a link to /dev/zero is never read on.
const DESCRIBE_BYTES: u64 = 1 << 20;

/// `rel` below `root`, bounded, non-blocking and regular-only, resolved
/// as in a chroot (a link in the root never shows a file outside it).
fn described(root: &Path, rel: &str) -> Option<Vec<u8>> {
    read_in_root(root, rel, DESCRIBE_BYTES).ok()
}

/// `rel` below `root`, its first `limit` bytes, read the way every file
/// under a root is read to be shown ([`Resolve::InRoot`]).
fn read_in_root(root: &Path, rel: &str, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = Root::open(root)?.open_regular(Path::new(rel), Resolve::InRoot)?;
    read_bounded(&file, limit, PastLimit::Cut)
}

fn first_line(root: &Path, rel: &str) -> Option<String> {
    let bytes = described(root, rel)?;
    String::from_utf8_lossy(&bytes)
        .lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// The pages `cmm_pages` below `root` says the pool holds now (bounded,
/// as every read under a root); `None` when it cannot be read as a count.
/// On a real kernel that is the pages held, not the target last written:
/// after a write of 0 it falls as the kernel releases them.
pub fn pool_pages(root: &Path) -> Option<i64> {
    first_line(root, super::root::paths::CMM_PAGES)?
        .parse()
        .ok()
}

/// Reads `proc/sys/kernel/{hostname,osrelease}`, `proc/cpuinfo` (with
/// procfs's parser) and the page size from `proc/self/smaps`; anything
/// missing reads as "unknown" (or 4096 for the page size).
pub fn describe(root: &Path) -> Machine {
    // procfs's parser, fed only bytes read the bounded way.
    let cpu_model = described(root, "proc/cpuinfo")
        .and_then(|bytes| CpuInfo::from_buf_read(bytes.as_slice()).ok())
        .and_then(|info| {
            ["model name", "machine", "vendor_id", "cpu"]
                .iter()
                .find_map(|key| info.get_field(0, key).map(str::to_string))
        })
        .unwrap_or_else(|| "unknown".into());
    let page_size = described(root, "proc/self/smaps")
        .map(|b| String::from_utf8_lossy(&b).into_owned())
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
/// is it an s390 z/VM guest, as cpuplugd expects, and which one. The
/// screen's header and the metrics' `plugtop_guest_info` show it too, so a
/// fleet's series carry the guest's z/VM name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    pub host: String,
    /// From /proc/cpuinfo (`IBM/S390` on s390), or "unknown".
    pub architecture: String,
    pub s390: bool,
    pub zvm_guest: bool,
    /// The z/VM guest name from /proc/sysinfo (`VM00 Name:`), when present.
    pub guest_name: Option<String>,
    /// `VM00 Control Program:`, spaces squeezed ("z/VM 7.3.0").
    pub zvm_version: Option<String>,
    /// `LPAR Name:`.
    pub lpar_name: Option<String>,
    /// The machine type (`Type:` in sysinfo, else `machine =` in cpuinfo).
    pub machine_type: Option<String>,
    /// The guest's configured and standby CPUs (`VM00 CPUs Configured:`,
    /// `VM00 CPUs Standby:`).
    pub cpus_configured: Option<u32>,
    pub cpus_standby: Option<u32>,
}

impl Identity {
    /// One phrase for the header and logs: "z/VM guest LINUX01 (z/VM 7.3.0,
    /// LPAR SIMLPAR, type 8561)", or plainly "not a z/VM guest".
    pub fn summary(&self) -> String {
        if !self.zvm_guest {
            return "not a z/VM guest".to_string();
        }
        let mut parts = Vec::new();
        parts.extend(self.zvm_version.clone());
        parts.extend(self.lpar_name.as_ref().map(|l| format!("LPAR {l}")));
        parts.extend(self.machine_type.as_ref().map(|t| format!("type {t}")));
        let name = self.guest_name.as_deref().unwrap_or("(unnamed)");
        if parts.is_empty() {
            format!("z/VM guest {name}")
        } else {
            format!("z/VM guest {name} ({})", parts.join(", "))
        }
    }
}

impl Identity {
    /// The header's few words: "z/VM LINUX01" or "not a z/VM guest".
    pub fn short(&self) -> String {
        match (&self.zvm_guest, &self.guest_name) {
            (true, Some(name)) => format!("z/VM {name}"),
            (true, None) => "z/VM guest".to_string(),
            (false, _) => "not a z/VM guest".to_string(),
        }
    }
}

/// The value of a `Key: value` line of /proc/sysinfo, spaces squeezed.
fn sysinfo_value(sysinfo: &str, key: &str) -> Option<String> {
    sysinfo
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|v| !v.is_empty())
}

/// Reads the identity of the machine below `root` (bounded reads; what is
/// missing reads as unknown, never as an error).
pub fn identity(root: &Path) -> Identity {
    let read = |rel: &str| read_in_root(root, rel, DESCRIBE_BYTES).unwrap_or_default();
    let cpuinfo = read("proc/cpuinfo");
    let sysinfo = String::from_utf8_lossy(&read("proc/sysinfo")).into_owned();
    let s390 = contains(&cpuinfo, b"IBM/S390");
    let architecture = if s390 {
        "s390x".to_string()
    } else {
        describe(root).cpu_model
    };
    let cpuinfo_machine = String::from_utf8_lossy(&cpuinfo)
        .lines()
        .find_map(|l| {
            l.split_once("machine = ")
                .map(|(_, m)| m.trim().to_string())
        })
        .filter(|m| !m.is_empty());
    let count = |key: &str| sysinfo_value(&sysinfo, key).and_then(|v| v.parse().ok());
    Identity {
        host: first_line(root, "proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
        architecture,
        s390,
        zvm_guest: s390 && is_zvm_guest(&cpuinfo),
        guest_name: sysinfo_value(&sysinfo, "VM00 Name"),
        zvm_version: sysinfo_value(&sysinfo, "VM00 Control Program"),
        lpar_name: sysinfo_value(&sysinfo, "LPAR Name"),
        machine_type: sysinfo_value(&sysinfo, "Type").or(cpuinfo_machine),
        cpus_configured: count("VM00 CPUs Configured"),
        cpus_standby: count("VM00 CPUs Standby"),
    }
}

/// The first line of `cpu/online` below `root` ("" when unreadable).
pub fn online_list(root: &Path) -> String {
    first_line(root, super::root::paths::ONLINE).unwrap_or_default()
}

/// How many CPUs `cpu/present` below `root` lists (0 when unreadable).
pub fn present_cpus(root: &Path) -> u32 {
    read_in_root(root, super::root::paths::PRESENT, DESCRIBE_BYTES)
        .ok()
        .and_then(|t| super::cpulist::CpuList::parse(&t))
        .map_or(0, |l| l.cpus())
}

/// /proc/cpuinfo below `root`, bounded; an error when it cannot be read
/// (cpuplugd does not start then).
pub fn cpuinfo(root: &Path) -> std::io::Result<Vec<u8>> {
    read_in_root(root, "proc/cpuinfo", DESCRIBE_BYTES)
}

/// This process's CPU time so far, in nanoseconds (the screen shows its
/// own cost). `/proc/self/schedstat` is opened once and read again from
/// its start each time: opening it walks `/proc/self`, which cost the
/// screen more than reading it.
pub fn own_cpu_ns() -> Option<u64> {
    static SCHEDSTAT: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let file = SCHEDSTAT
        .get_or_init(|| std::fs::File::open("/proc/self/schedstat").ok())
        .as_ref()?;
    let mut buf = [0u8; 128];
    let n = rustix::io::pread(file, &mut buf, 0).ok()?;
    first_number(buf.get(..n)?)
}

/// The first whitespace-separated field of `text`, as a count.
fn first_number(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Read again from the kept file, the count only grows, as a fresh
    /// read of the file would show.
    #[test]
    fn own_cpu_time_is_read_again_from_the_kept_file() {
        let first = own_cpu_ns().expect("schedstat");
        let mut spin = 0u64;
        for i in 0..2_000_000u64 {
            spin = std::hint::black_box(spin.wrapping_add(i));
        }
        let second = own_cpu_ns().expect("schedstat");
        assert!(second >= first, "{first} then {second}");
        assert_eq!(first_number(b"123 456 7\n"), Some(123));
        assert_eq!(first_number(b""), None);
        assert_eq!(first_number(b"x 1"), None);
    }

    #[test]
    fn a_zvm_guests_identity_comes_from_sysinfo_and_cpuinfo() {
        let dir = std::env::temp_dir().join(format!("plugtop-identity-{}", std::process::id()));
        let _ = std::fs::create_dir_all(dir.join("proc"));
        let write = |rel: &str, text: &str| std::fs::write(dir.join(rel), text);
        assert!(write("proc/cpuinfo", &crate::sim::published_root::zvm_cpuinfo(2)).is_ok());
        assert!(
            write(
                "proc/sysinfo",
                &crate::sim::published_root::zvm_sysinfo("LINUX01", 2)
            )
            .is_ok()
        );
        let id = identity(&dir);
        assert!(id.zvm_guest);
        assert_eq!(id.guest_name.as_deref(), Some("LINUX01"));
        assert_eq!(id.zvm_version.as_deref(), Some("z/VM 7.3.0"));
        assert_eq!(id.lpar_name.as_deref(), Some("SIMLPAR"));
        assert_eq!(id.machine_type.as_deref(), Some("8561"));
        assert_eq!((id.cpus_configured, id.cpus_standby), (Some(2), Some(0)));
        assert_eq!(
            id.summary(),
            "z/VM guest LINUX01 (z/VM 7.3.0, LPAR SIMLPAR, type 8561)"
        );
        // Without sysinfo the machine type still comes from cpuinfo.
        assert!(std::fs::remove_file(dir.join("proc/sysinfo")).is_ok());
        let id = identity(&dir);
        assert_eq!(id.machine_type.as_deref(), Some("8561"));
        assert_eq!(id.guest_name, None);
        assert_eq!(id.summary(), "z/VM guest (unnamed) (type 8561)");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn anything_else_is_plainly_not_a_zvm_guest() {
        let id = identity(Path::new("/nonexistent-plugtop-root"));
        assert!(!id.zvm_guest);
        assert_eq!(id.summary(), "not a z/VM guest");
    }

    #[test]
    fn sysinfo_values_squeeze_spaces_and_ignore_empty_ones() {
        let text = "VM00 Control Program: z/VM    7.2.0\nLPAR Name:\nType: 3906\n";
        assert_eq!(
            sysinfo_value(text, "VM00 Control Program").as_deref(),
            Some("z/VM 7.2.0")
        );
        assert_eq!(sysinfo_value(text, "LPAR Name"), None);
        assert_eq!(sysinfo_value(text, "Type").as_deref(), Some("3906"));
        assert_eq!(sysinfo_value(text, "Typ"), None);
    }
}
