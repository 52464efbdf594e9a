//! Reading a directory laid out like `/` (proc/..., sys/...): the live
//! machine, a test's temporary root, or one conformance snapshot.

use std::collections::HashMap;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::cpulist::CpuList;
use super::fields::{FieldParser, Malformed};
use super::procfs_text::{parse_loadavg, parse_long, parse_stat};
use super::sample::{CpuState, Polarization, ProcBytes, Sample, Stamp};
use super::source::{Interest, SourceError};
use crate::rules::SystemFacts;

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

/// What is known about one file of the current root.
#[derive(Debug)]
enum Slot {
    /// A kernel file, kept open.
    Kept(File),
    /// A plain file (a test root): opened again each time.
    Reopen,
    /// A kernel root's optional file that was not there.
    Missing,
}

/// Reads samples from root directories, keeping buffers and /proc layouts
/// between readings so a reading allocates little.
#[derive(Debug)]
pub struct RootReader {
    buf: Vec<u8>,
    /// One read's worth of a kept kernel file (zeroed once, reused).
    chunk: Vec<u8>,
    /// Kernel files (those that resolve into /proc or /sys) kept open and
    /// re-read from the start each interval: they are never replaced, and
    /// re-reading saves the path walk of an open every time.
    open: HashMap<&'static str, Slot>,
    open_root: PathBuf,
    /// `open_root` held open: files are opened relative to it, so no path
    /// is built and walked from `/` for each file (`None` if it would not
    /// open; paths are used then, and give the errors they give).
    root_dir: Option<OwnedFd>,
    /// Readings of `open_root` so far (decisions wait for the second one,
    /// so snapshot series, a new root each time, pay nothing for them).
    root_readings: u32,
    /// `cpu/possible` of a kernel root, which never changes while it runs.
    possible: Option<Option<CpuList>>,
    /// Reused for every path built under a root, so reading allocates no paths.
    path: PathBuf,
    meminfo: FieldParser,
    vmstat: FieldParser,
    /// Whether to scan `cpuN` directories for online/configure state.
    pub scan_cpu_dirs: bool,
    /// Whether to read the `cpuN` lines of /proc/stat.
    per_cpu: bool,
}

impl Default for RootReader {
    fn default() -> Self {
        RootReader::new()
    }
}

/// How much of a kernel file one `read` asks for.
const KERNEL_CHUNK: usize = 64 << 10;
/// More than this from one /proc or /sys file is refused: they are small.
const KERNEL_FILE_LIMIT: usize = 4 << 20;

/// Reads a file from where it stands to its end, bounded. /proc and /sys
/// hand out whole lines and stop short only where the next line would not
/// fit, and a regular file stops short only at its end, so a read that
/// leaves more than a page of the chunk unused has reached the end: one
/// system call instead of two per file and interval.
fn read_whole(file: &File, chunk: &mut [u8], buf: &mut Vec<u8>) -> std::io::Result<()> {
    loop {
        let n = rustix::io::read(file, &mut *chunk)?;
        buf.extend_from_slice(&chunk[..n]);
        if n == 0 || n + 4096 < chunk.len() {
            return Ok(());
        }
        if buf.len() > KERNEL_FILE_LIMIT {
            return Err(std::io::Error::other(format!(
                "more than {} MiB; a kernel file this large is not what plugtop reads",
                KERNEL_FILE_LIMIT >> 20
            )));
        }
    }
}

impl RootReader {
    /// A reader that also scans per-CPU sysfs state.
    pub fn new() -> Self {
        RootReader {
            buf: Vec::with_capacity(16 * 1024),
            chunk: vec![0; KERNEL_CHUNK],
            open: HashMap::new(),
            open_root: PathBuf::new(),
            root_dir: None,
            root_readings: 0,
            possible: None,
            path: PathBuf::with_capacity(256),
            meminfo: FieldParser::new(b':'),
            vmstat: FieldParser::new(b' '),
            scan_cpu_dirs: true,
            per_cpu: true,
        }
    }

    /// Reads only what `interest` names from now on (see [`Interest`]).
    pub fn narrow(&mut self, interest: &Interest) {
        self.per_cpu = interest.per_cpu;
        self.meminfo.narrow(interest.meminfo.as_deref());
        self.vmstat.narrow(interest.vmstat.as_deref());
    }

    /// Reads `root/rel` into the buffer.
    fn read_into_buf(&mut self, root: &Path, rel: &'static str) -> std::io::Result<()> {
        self.buf.clear();
        if let Some(Slot::Kept(file)) = self.open.get(rel) {
            rustix::fs::seek(file, rustix::fs::SeekFrom::Start(0))?;
            return read_whole(file, &mut self.chunk, &mut self.buf);
        }
        let file = match &self.root_dir {
            Some(dir) => super::regular::open_at_for_reading(dir, rel)?,
            None => super::regular::open_for_reading(self.path_of(root, rel))?,
        };
        match read_whole(&file, &mut self.chunk, &mut self.buf) {
            Ok(()) if !self.buf.is_empty() => {}
            Ok(()) => super::regular::explain_empty(&file, self.path_of(root, rel))?,
            Err(e) => {
                super::regular::explain_empty(&file, self.path_of(root, rel))?;
                return Err(e);
            }
        }
        if self.root_readings >= 2 && !self.open.contains_key(rel) {
            let kernel = std::fs::canonicalize(self.path_of(root, rel))
                .is_ok_and(|p| p.starts_with("/proc/") || p.starts_with("/sys/"));
            self.open.insert(
                rel,
                if kernel {
                    Slot::Kept(file)
                } else {
                    Slot::Reopen
                },
            );
        }
        Ok(())
    }

    /// `root/rel`, built in the reused path buffer.
    fn path_of(&mut self, root: &Path, rel: &str) -> &Path {
        self.path.as_mut_os_string().clear();
        self.path.push(root);
        self.path.push(rel);
        &self.path
    }

    /// Makes `root` the current root: what is kept open belongs to it.
    /// True when it was another root before.
    fn enter(&mut self, root: &Path) -> bool {
        if self.open_root == root {
            return false;
        }
        self.open.clear();
        self.root_dir = super::regular::open_directory(root);
        self.open_root = root.to_path_buf();
        self.root_readings = 0;
        self.possible = None;
        true
    }

    /// Notes that a reading of `root` starts (see `root_readings`).
    fn start_reading(&mut self, root: &Path) {
        if !self.enter(root) && !self.kernel_root() {
            // A root that is not the kernel's may be a link that a replay
            // tool points at the next snapshot between readings: look it
            // up again, as opening by path did.
            self.root_dir = super::regular::open_directory(root);
        }
        self.root_readings = self.root_readings.saturating_add(1);
    }

    fn load(&mut self, root: &Path, rel: &'static str) -> Result<(), SourceError> {
        self.read_into_buf(root, rel)
            .map_err(|source| SourceError::Open {
                path: Path::new("/").join(rel),
                source,
            })
    }

    /// The bytes of one file below `root` (valid until the next read).
    pub fn read_file(&mut self, root: &Path, rel: &'static str) -> Result<&[u8], SourceError> {
        self.enter(root);
        self.load(root, rel)?;
        Ok(&self.buf)
    }

    /// True once this root's /proc/stat turned out to be the kernel's own.
    fn kernel_root(&self) -> bool {
        matches!(self.open.get(paths::STAT), Some(Slot::Kept(_)))
    }

    fn load_optional(&mut self, root: &Path, rel: &'static str) -> Result<bool, SourceError> {
        // A kernel file that was missing stays missing (dispatching exists
        // only on s390); look again once a minute or so.
        if matches!(self.open.get(rel), Some(Slot::Missing))
            && !self.root_readings.is_multiple_of(64)
        {
            return Ok(false);
        }
        match self.read_into_buf(root, rel) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if self.kernel_root() {
                    self.open.insert(rel, Slot::Missing);
                }
                Ok(false)
            }
            Err(source) => Err(SourceError::Open {
                path: Path::new("/").join(rel),
                source,
            }),
        }
    }

    fn bad_line(rel: &str, m: Malformed) -> SourceError {
        SourceError::Malformed {
            path: Path::new("/").join(rel),
            what: format!("line {}: {}", m.line, m.what),
        }
    }

    fn malformed(rel: &str, what: &str) -> SourceError {
        SourceError::Malformed {
            path: Path::new("/").join(rel),
            what: what.to_string(),
        }
    }

    /// Reads everything one interval needs from `root`, stamped with `time`.
    pub fn read(&mut self, root: &Path, stamp: Stamp) -> Result<Sample, SourceError> {
        self.start_reading(root);
        self.load(root, paths::MEMINFO)?;
        let byte_len = |buf: &[u8]| u32::try_from(buf.len()).unwrap_or(u32::MAX);
        let mut proc_bytes = ProcBytes {
            meminfo: byte_len(&self.buf),
            vmstat: 0,
        };
        let meminfo = self
            .meminfo
            .parse(&self.buf)
            .map_err(|m| Self::bad_line(paths::MEMINFO, m))?;
        self.load(root, paths::VMSTAT)?;
        proc_bytes.vmstat = byte_len(&self.buf);
        let vmstat = self
            .vmstat
            .parse(&self.buf)
            .map_err(|m| Self::bad_line(paths::VMSTAT, m))?;
        self.load(root, paths::STAT)?;
        let (ticks, per_cpu) =
            parse_stat(&self.buf, self.per_cpu).map_err(|m| Self::bad_line(paths::STAT, m))?;
        self.load(root, paths::LOADAVG)?;
        let (loadavg, runnable) = parse_loadavg(&self.buf).ok_or_else(|| {
            Self::malformed(
                paths::LOADAVG,
                "line 1: expected `LOAD1 LOAD5 LOAD15 RUNNING/TOTAL PID`",
            )
        })?;
        let online = self.cpu_list(root, paths::ONLINE)?;
        let present = self.cpu_list(root, paths::PRESENT)?;
        let possible = match &self.possible {
            Some(known) => known.clone(),
            None => {
                let list =
                    if self.load_optional(root, paths::POSSIBLE)? {
                        Some(CpuList::parse(&self.buf).ok_or_else(|| {
                            Self::malformed(paths::POSSIBLE, "malformed CPU list")
                        })?)
                    } else {
                        None
                    };
                if self.kernel_root() {
                    self.possible = Some(list.clone());
                }
                list
            }
        };
        let cmm_pages = if self.load_optional(root, paths::CMM_PAGES)? {
            // An empty or non-numeric cmm_pages is undefined in cpuplugd (it
            // converts whatever its read left in the buffer); plugtop reads
            // it as absent, so the memory group stops with a clear message.
            parse_long(&self.buf)
        } else {
            None
        };
        let polarization = if self.load_optional(root, paths::DISPATCHING)? {
            match parse_long(&self.buf) {
                Some(1) => Some(Polarization::Vertical),
                Some(_) => Some(Polarization::Horizontal),
                None => None,
            }
        } else {
            None
        };
        let cpus = if self.scan_cpu_dirs {
            self.cpu_states(root)?
        } else {
            Vec::new()
        };
        Ok(Sample {
            stamp,
            ticks,
            per_cpu,
            loadavg,
            runnable,
            meminfo,
            vmstat,
            online,
            present,
            possible,
            cpus,
            cmm_pages,
            polarization,
            proc_bytes,
        })
    }

    fn cpu_list(&mut self, root: &Path, rel: &'static str) -> Result<CpuList, SourceError> {
        self.load(root, rel)?;
        CpuList::parse(&self.buf).ok_or_else(|| Self::malformed(rel, "malformed CPU list"))
    }

    fn cpu_states(&mut self, root: &Path) -> Result<Vec<CpuState>, SourceError> {
        let dir = root.join(paths::CPU_DIR);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(Vec::new());
        };
        let mut cpus = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix("cpu"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let base = entry.path();
            let online = self.flag(&base.join("online"));
            let configured = self.flag(&base.join("configure"));
            cpus.push(CpuState {
                id,
                online,
                configured,
            });
        }
        cpus.sort_by_key(|c| c.id);
        Ok(cpus)
    }

    fn flag(&mut self, path: &PathBuf) -> Option<bool> {
        self.buf.clear();
        File::open(path)
            .and_then(|mut f| f.read_to_end(&mut self.buf))
            .ok()?;
        parse_long(&self.buf).map(|v| v == 1)
    }

    /// The names in a meminfo (`meminfo` true) or vmstat file, if readable.
    fn field_names(
        &mut self,
        root: &Path,
        rel: &'static str,
        meminfo: bool,
    ) -> Option<Vec<String>> {
        self.load(root, rel).ok()?;
        let parser = if meminfo {
            &mut self.meminfo
        } else {
            &mut self.vmstat
        };
        let table = parser.parse(&self.buf).ok()?;
        Some(table.layout().names().map(String::from).collect())
    }

    /// What rule loading needs to know about the machine under `root`.
    pub fn facts(&mut self, root: &Path) -> SystemFacts {
        self.enter(root);
        let origin = root.display().to_string();
        let present_cpus = match self.load(root, paths::PRESENT) {
            Ok(()) => match CpuList::parse(&self.buf) {
                Some(l) if l.count > 0 => Ok(l.cpus()),
                Some(l) => Err(format!("number of present cpus ({}) <= 0", l.count)),
                None => Err(format!("Malformed content of /{}", paths::PRESENT)),
            },
            Err(e) => Err(format!("Cannot open /{} file: {e}", paths::PRESENT)),
        };
        let cmm_pages = root.join(paths::CMM_PAGES).is_file();
        let meminfo_names = self.field_names(root, paths::MEMINFO, true);
        let vmstat_names = self.field_names(root, paths::VMSTAT, false);
        SystemFacts {
            present_cpus,
            cmm_pages,
            meminfo_names,
            vmstat_names,
            origin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root given as a link that is pointed elsewhere between readings is
    /// read where the link points at each reading.
    #[test]
    fn a_root_link_pointed_elsewhere_is_followed_at_the_next_reading() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots");
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let link = dir.path().join("current");
        let point = |to: &str| {
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(fixtures.join(to), &link).unwrap_or_else(|e| panic!("{e}"));
        };
        let mut reader = RootReader::new();
        reader.scan_cpu_dirs = false;
        let mut names = Vec::new();
        for (i, to) in ["oldkernel", "newkernel", "oldkernel"]
            .into_iter()
            .enumerate()
        {
            point(to);
            let s = reader
                .read(&link, Stamp::new(i as i64, 0))
                .unwrap_or_else(|e| panic!("{to}: {e}"));
            names.push(s.vmstat.get("pgscan_direct_dma").is_some());
        }
        assert_eq!(names, [true, false, true], "old, new, old kernel");
    }
}
