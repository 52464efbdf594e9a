//! The files a reading opens below a root, named once: each one's path for
//! messages and its C string for `openat`, so opening one builds and checks
//! no path.

use std::ffi::CStr;

/// Paths below a root, relative.
pub mod paths {
    pub const STAT: &str = "proc/stat";
    pub const LOADAVG: &str = "proc/loadavg";
    pub const MEMINFO: &str = "proc/meminfo";
    pub const VMSTAT: &str = "proc/vmstat";
    pub const CMM_PAGES: &str = "proc/sys/vm/cmm_pages";
    pub const CPU_DIR: &str = "sys/devices/system/cpu";
    pub const ONLINE: &str = "sys/devices/system/cpu/online";
    pub const PRESENT: &str = "sys/devices/system/cpu/present";
    pub const POSSIBLE: &str = "sys/devices/system/cpu/possible";
    pub const DISPATCHING: &str = "sys/devices/system/cpu/dispatching";
}

/// A file a reading opens below a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RootFile {
    Stat,
    Loadavg,
    Meminfo,
    Vmstat,
    CmmPages,
    Online,
    Present,
    Possible,
    Dispatching,
    /// A snapshot's time stamp (not a kernel file).
    Time,
}

impl RootFile {
    /// Its path below the root.
    pub fn rel(self) -> &'static str {
        match self {
            RootFile::Stat => paths::STAT,
            RootFile::Loadavg => paths::LOADAVG,
            RootFile::Meminfo => paths::MEMINFO,
            RootFile::Vmstat => paths::VMSTAT,
            RootFile::CmmPages => paths::CMM_PAGES,
            RootFile::Online => paths::ONLINE,
            RootFile::Present => paths::PRESENT,
            RootFile::Possible => paths::POSSIBLE,
            RootFile::Dispatching => paths::DISPATCHING,
            RootFile::Time => "time",
        }
    }

    /// The same path as a C string.
    pub fn c_rel(self) -> &'static CStr {
        match self {
            RootFile::Stat => c"proc/stat",
            RootFile::Loadavg => c"proc/loadavg",
            RootFile::Meminfo => c"proc/meminfo",
            RootFile::Vmstat => c"proc/vmstat",
            RootFile::CmmPages => c"proc/sys/vm/cmm_pages",
            RootFile::Online => c"sys/devices/system/cpu/online",
            RootFile::Present => c"sys/devices/system/cpu/present",
            RootFile::Possible => c"sys/devices/system/cpu/possible",
            RootFile::Dispatching => c"sys/devices/system/cpu/dispatching",
            RootFile::Time => c"time",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_has_one_path() {
        let all = [
            RootFile::Stat,
            RootFile::Loadavg,
            RootFile::Meminfo,
            RootFile::Vmstat,
            RootFile::CmmPages,
            RootFile::Online,
            RootFile::Present,
            RootFile::Possible,
            RootFile::Dispatching,
            RootFile::Time,
        ];
        for f in all {
            assert_eq!(f.c_rel().to_bytes(), f.rel().as_bytes(), "{f:?}");
        }
    }
}
