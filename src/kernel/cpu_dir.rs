//! The `cpuN` directories of /sys/devices/system/cpu below a root, read
//! afresh every time they are asked about and never written: what choosing
//! a CPU reads, for the actuator that acts and for observe mode, which only
//! names the CPU. Flags are read as cpuplugd reads them: the number at the
//! start of the first line.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::cpu_choice::{CpuFlags, Online, cpu_of_name, walk_order};
use super::integer::parse_long;
use super::root::paths;

/// cpuplugd reads a flag with `fgets` into 512 bytes: at most 511 of them.
const FLAG_BYTES: u64 = 511;

/// A read-only view of the CPU directories below one root.
#[derive(Debug, Clone)]
pub struct CpuDir {
    dir: PathBuf,
}

/// What reading one flag file gave.
enum Flag {
    Absent,
    Unreadable,
    Reads(Option<i64>),
}

fn read_flag(path: &Path) -> Flag {
    match super::regular::read_small(path, FLAG_BYTES) {
        Ok(bytes) => {
            let line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
            Flag::Reads(if line.is_empty() {
                None
            } else {
                parse_long(line)
            })
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Flag::Absent,
        Err(_) => Flag::Unreadable,
    }
}

impl CpuDir {
    /// The CPUs below `root`.
    pub fn new(root: &Path) -> Self {
        CpuDir {
            dir: root.join(paths::CPU_DIR),
        }
    }

    /// The ids of the CPU directories now, in the order cpuplugd visits
    /// them. Entries that are not directories are no CPUs.
    pub fn ids(&self) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut ids: Vec<u32> = entries
            .flatten()
            .filter_map(|e| {
                let id = cpu_of_name(e.file_name().as_encoded_bytes())?;
                let kind = e.file_type().ok()?;
                let dir = kind.is_dir() || (kind.is_symlink() && e.path().is_dir());
                dir.then_some(id)
            })
            .collect();
        walk_order(&mut ids);
        ids
    }

    fn file(&self, id: u32, name: &str) -> PathBuf {
        self.dir.join(format!("cpu{id}/{name}"))
    }

    /// What CPU `id`'s `online` file says now.
    pub fn online(&self, id: u32) -> Online {
        match read_flag(&self.file(id, "online")) {
            Flag::Absent => Online::Fixed,
            Flag::Unreadable => Online::Unreadable,
            Flag::Reads(v) => Online::Reads(v),
        }
    }

    /// What CPU `id`'s `configure` file says now (`None`: nothing usable).
    pub fn configure(&self, id: u32) -> Option<i64> {
        match read_flag(&self.file(id, "configure")) {
            Flag::Reads(v) => v,
            Flag::Absent | Flag::Unreadable => None,
        }
    }

    /// CPU `id` as it is now; `configure` is read only when `with_configure`
    /// (an unplug does not look at it).
    pub fn flags(&self, id: u32, with_configure: bool) -> CpuFlags {
        CpuFlags {
            id,
            online: self.online(id),
            configure: if with_configure {
                self.configure(id)
            } else {
                None
            },
        }
    }

    /// Every CPU as it is now, in walk order.
    pub fn all(&self, with_configure: bool) -> Vec<CpuFlags> {
        self.ids()
            .into_iter()
            .map(|id| self.flags(id, with_configure))
            .collect()
    }

    /// Whether one of `ids` other than `id` is online now: read file by
    /// file until one is, so the guard costs a read or two.
    pub fn another_online(&self, ids: &[u32], id: u32) -> bool {
        ids.iter()
            .filter(|other| **other != id)
            .any(|other| self.flags(*other, false).online())
    }
}
