//! Reading a directory laid out like `/` (proc/..., sys/...): the live
//! machine, a test's temporary root, or one conformance snapshot. Every
//! file is opened as a process chrooted at the root would open it (see
//! [`Resolve::InRoot`]): a link in the root never leads outside. The CPU
//! directory and its flags are read as the actuator reads them before it
//! writes ([`Resolve::Beneath`]: a `..` climbing out is refused), so the
//! screen and the actuator never disagree on a CPU.

use std::ffi::CStr;
use std::fs::File;
use std::io::ErrorKind;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cpu_choice::cpu_of_name;
use super::cpu_dir::FlagFile;
use super::cpulist::CpuList;
use super::facts::{PresentCpusError, SystemFacts};
use super::fields::{FieldParser, Malformed};
use super::fs::{KeptFiles, Resolve, Root, check_regular};
use super::loadavg::{LoadavgText, parse_loadavg};
use super::procfs_text::{parse_long, parse_stat};
use super::read_buffer::ReadBuffer;
use super::root_file::RootFile;
use super::sample::{CpuState, Polarization, ProcBytes, Sample, Stamp};
use super::source::{Interest, SourceError};

pub use super::root_file::paths;

/// Reads samples from root directories, keeping buffers and /proc layouts
/// between readings so a reading allocates little.
#[derive(Debug)]
pub struct RootReader {
    buf: ReadBuffer,
    /// Kernel files (those on /proc or /sys, however they got into the
    /// root) kept open and re-read from the start each interval: they are
    /// never replaced, and re-reading saves the path walk of an open every
    /// time.
    kept: KeptFiles<RootFile>,
    open_root: PathBuf,
    /// `open_root` held open: files are opened relative to it, so no path
    /// is built and walked from `/` for each file (`None` if it would not
    /// open; it is tried again, and its error reported, at each file).
    root_dir: Option<Root>,
    /// Readings of `open_root` so far (decisions wait for the second one,
    /// so snapshot series, a new root each time, pay nothing for them).
    root_readings: u32,
    /// `cpu/possible` of a kernel or pinned root, which never changes while
    /// it runs.
    possible: Option<Option<CpuList>>,
    /// Reused for every path built under a root, so reading allocates no paths.
    path: PathBuf,
    meminfo: FieldParser,
    vmstat: FieldParser,
    /// Whether to scan `cpuN` directories for online/configure state.
    pub scan_cpu_dirs: bool,
    /// The CPU states of a reading that does not scan them.
    no_cpus: Arc<[CpuState]>,
    /// A kernel root's CPU directory and `cpuN` flag files, kept open
    /// between readings.
    kept_cpus: KeptFiles<(u32, FlagFile)>,
    /// Whether to read the `cpuN` lines of /proc/stat.
    per_cpu: bool,
    /// Whether to read /proc/loadavg (unread: both loads are NaN).
    loadavg: bool,
    /// Whether to read it all the same, checked and kept unconverted.
    loadavg_text: bool,
    /// The present CPUs as last read, and whether they are read anew at
    /// every reading (see [`RootReader::present_cpus`]).
    present: PresentCpus,
    /// Whether the root directory, once opened, is kept for good: a guest
    /// that is acted on is read from the tree its actions, journal and
    /// restore go to, whatever is renamed or linked at its path later.
    pub pinned: bool,
}

impl Default for RootReader {
    fn default() -> Self {
        RootReader::new()
    }
}

impl RootReader {
    /// A reader that also scans per-CPU sysfs state.
    pub fn new() -> Self {
        RootReader {
            buf: ReadBuffer::default(),
            kept: KeptFiles::default(),
            open_root: PathBuf::new(),
            root_dir: None,
            root_readings: 0,
            possible: None,
            path: PathBuf::with_capacity(256),
            meminfo: FieldParser::new(b':'),
            vmstat: FieldParser::new(b' '),
            scan_cpu_dirs: true,
            no_cpus: Arc::new([]),
            kept_cpus: KeptFiles::default(),
            per_cpu: true,
            loadavg: true,
            loadavg_text: false,
            present: PresentCpus {
                each_reading: true,
                ..PresentCpus::default()
            },
            pinned: false,
        }
    }

    /// Reads only what `interest` names from now on (see [`Interest`]).
    pub fn narrow(&mut self, interest: &Interest) {
        self.per_cpu = interest.per_cpu;
        self.loadavg = interest.loadavg;
        self.loadavg_text = interest.loadavg_text;
        self.present.each_reading = interest.present_each_interval;
        // New interest (a start, a reload): the next reading is fresh.
        self.present.last = None;
        self.meminfo.narrow(interest.meminfo.as_deref());
        self.vmstat.narrow(interest.vmstat.as_deref());
    }

    /// The current root held open: opened again when it would not open
    /// before, so the error is the root's own.
    fn root_dir(&mut self, root: &Path) -> std::io::Result<&Root> {
        if self.root_dir.is_none() {
            self.root_dir = Some(Root::open(root)?);
        }
        self.root_dir
            .as_ref()
            .ok_or_else(|| std::io::Error::from(ErrorKind::NotFound))
    }

    /// Reads `root/file` into the buffer.
    fn read_into_buf(&mut self, root: &Path, file: RootFile) -> std::io::Result<()> {
        if let Some(kept) = self.kept.open_file(&file) {
            return self.buf.read_whole_from_start(kept);
        }
        let opened = self.root_dir(root)?.open_read(file.c_rel())?;
        let read = self.buf.read_whole(&opened);
        if read.is_err() || self.buf.bytes().is_empty() {
            // Why it read as nothing or failed: no regular file (a FIFO).
            check_regular(
                &opened,
                &self.path_of(root, file.rel()).display().to_string(),
            )?;
            read?;
        }
        if self.root_readings >= 2 && self.kept.get(&file).is_none() {
            self.kept.keep(file, opened);
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
        // The same spelling is the same root (comparing components would
        // parse both paths each reading).
        if self.open_root.as_os_str() == root.as_os_str() {
            return false;
        }
        self.kept = KeptFiles::default();
        self.kept_cpus = KeptFiles::default();
        self.root_dir = Root::open(root).ok();
        self.open_root.as_mut_os_string().clear();
        self.open_root.push(root);
        self.root_readings = 0;
        self.possible = None;
        self.present.forget();
        true
    }

    /// Notes that a reading of `root` starts (see `root_readings`).
    fn start_reading(&mut self, root: &Path) {
        if !self.enter(root) && !self.kernel_root() && !self.pinned {
            // A root that is not the kernel's may be a link that a replay
            // tool points at the next snapshot between readings: look it
            // up again, as opening by path did.
            self.root_dir = Root::open(root).ok();
        }
        self.root_readings = self.root_readings.saturating_add(1);
    }

    fn load(&mut self, root: &Path, file: RootFile) -> Result<(), SourceError> {
        self.read_into_buf(root, file)
            .map_err(|source| SourceError::Open {
                path: Path::new("/").join(file.rel()),
                source,
            })
    }

    /// True once this root's /proc/stat turned out to be the kernel's own.
    fn kernel_root(&self) -> bool {
        self.kept.open_file(&RootFile::Stat).is_some()
    }

    fn load_optional(&mut self, root: &Path, file: RootFile) -> Result<bool, SourceError> {
        // A kernel file that was missing stays missing (dispatching exists
        // only on s390); look again once a minute or so.
        if !self.kept.due(&file, self.root_readings) {
            return Ok(false);
        }
        match self.read_into_buf(root, file) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                // `dispatching` exists from boot on s390 or never: a pinned
                // root (the machine plugtop runs on, whatever its files
                // are) looks for it as seldom as a kernel root does.
                // `cmm_pages` comes and goes with the cmm module, and a
                // test root's with its test: looked for each time there.
                if self.kernel_root() || (self.pinned && file == RootFile::Dispatching) {
                    self.kept.missing(file);
                }
                Ok(false)
            }
            Err(source) => Err(SourceError::Open {
                path: Path::new("/").join(file.rel()),
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
        self.read_started(root, stamp)
    }

    /// As [`read`](Self::read), stamped by what `stamp_of` makes of the
    /// root's `time` file (a conformance snapshot's), read from the same
    /// opening of the root as the rest.
    pub fn read_timed(
        &mut self,
        root: &Path,
        stamp_of: impl FnOnce(&[u8]) -> Result<Stamp, SourceError>,
    ) -> Result<Sample, SourceError> {
        self.start_reading(root);
        self.load(root, RootFile::Time)?;
        let stamp = stamp_of(self.buf.bytes())?;
        self.read_started(root, stamp)
    }

    /// The reading [`start_reading`](Self::start_reading) began.
    fn read_started(&mut self, root: &Path, stamp: Stamp) -> Result<Sample, SourceError> {
        self.load(root, RootFile::Meminfo)?;
        let byte_len = |buf: &[u8]| u32::try_from(buf.len()).unwrap_or(u32::MAX);
        let mut proc_bytes = ProcBytes {
            meminfo: byte_len(self.buf.bytes()),
            vmstat: 0,
        };
        let meminfo = self
            .meminfo
            .parse(self.buf.bytes())
            .map_err(|m| Self::bad_line(paths::MEMINFO, m))?;
        self.load(root, RootFile::Vmstat)?;
        proc_bytes.vmstat = byte_len(self.buf.bytes());
        let vmstat = self
            .vmstat
            .parse(self.buf.bytes())
            .map_err(|m| Self::bad_line(paths::VMSTAT, m))?;
        self.load(root, RootFile::Stat)?;
        let (ticks, per_cpu) = parse_stat(self.buf.bytes(), self.per_cpu)
            .map_err(|m| Self::bad_line(paths::STAT, m))?;
        let mut loadavg_text = None;
        let (loadavg, runnable) = if self.loadavg || self.loadavg_text {
            self.load(root, RootFile::Loadavg)?;
            let kept = if self.loadavg {
                None
            } else {
                LoadavgText::keep(self.buf.bytes())
            };
            if kept.is_some() {
                loadavg_text = kept;
                (f64::NAN, f64::NAN)
            } else {
                parse_loadavg(self.buf.bytes()).map_err(|stop| {
                    Self::malformed(paths::LOADAVG, &stop.describe(self.buf.bytes()))
                })?
            }
        } else {
            (f64::NAN, f64::NAN)
        };
        let (online, online_changed) = self.online_cpus(root)?;
        let possible = match &self.possible {
            Some(known) => known.clone(),
            None => {
                let list =
                    if self.load_optional(root, RootFile::Possible)? {
                        Some(CpuList::parse(self.buf.bytes()).ok_or_else(|| {
                            Self::malformed(paths::POSSIBLE, "malformed CPU list")
                        })?)
                    } else {
                        None
                    };
                // A pinned root is one machine read for as long as plugtop
                // runs (the daemon's, the screen's): its possible CPUs are
                // fixed at boot, so the file is read once, as on a kernel
                // root, not every interval.
                if self.kernel_root() || self.pinned {
                    self.possible = Some(list.clone());
                }
                list
            }
        };
        let cmm_pages = if self.load_optional(root, RootFile::CmmPages)? {
            // An empty or non-numeric cmm_pages is undefined in cpuplugd (it
            // converts whatever its read left in the buffer); plugtop reads
            // it as absent, so the memory group stops with a clear message.
            parse_long(self.buf.bytes())
        } else {
            None
        };
        let polarization = if self.load_optional(root, RootFile::Dispatching)? {
            match parse_long(self.buf.bytes()) {
                Some(1) => Some(Polarization::Vertical),
                Some(_) => Some(Polarization::Horizontal),
                None => None,
            }
        } else {
            None
        };
        let present = self.present_cpus(root, online_changed, polarization)?;
        let cpus = if self.scan_cpu_dirs {
            self.cpu_states(root).into()
        } else {
            // One empty slice for every reading, not one made each time.
            Arc::clone(&self.no_cpus)
        };
        Ok(Sample {
            stamp,
            ticks,
            per_cpu,
            loadavg,
            runnable,
            loadavg_text,
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

    /// The present CPUs of this reading: read anew when every reading
    /// wants them, at the first reading of a root or after new interest, when
    /// the online list or the polarization moved (a CPU added or taken away,
    /// the start limits applied again), and every [`PRESENT_RECHECK`]th
    /// reading (a CPU the hypervisor added while nothing else moved);
    /// otherwise the list last read.
    fn present_cpus(
        &mut self,
        root: &Path,
        online_changed: bool,
        polarization: Option<Polarization>,
    ) -> Result<CpuList, SourceError> {
        let polarization_changed = self.present.polarization != polarization;
        self.present.polarization = polarization;
        // Only the one machine a reader stays on keeps its list: a root
        // that a replay tool points at another tree is read afresh.
        let kept = self.pinned || self.kernel_root();
        let due = self.present.each_reading
            || !kept
            || online_changed
            || polarization_changed
            || self.root_readings.is_multiple_of(PRESENT_RECHECK);
        if let Some(list) = self.present.last.as_ref().filter(|_| !due) {
            return Ok(list.clone());
        }
        // A list that would not read is read again at the next reading.
        self.present.last = None;
        let list = self.cpu_list(root, RootFile::Present)?;
        self.present.last = Some(list.clone());
        Ok(list)
    }

    /// The online CPUs of this reading, and whether their list moved since
    /// the last: the list read before when the text is the same (the
    /// same list, shared, not parsed again).
    fn online_cpus(&mut self, root: &Path) -> Result<(CpuList, bool), SourceError> {
        self.load(root, RootFile::Online)?;
        let now = self.buf.bytes();
        if let Some(list) = &self.present.online
            && self.present.online_text == now
        {
            return Ok((list.clone(), false));
        }
        let list = CpuList::parse(now)
            .ok_or_else(|| Self::malformed(RootFile::Online.rel(), "malformed CPU list"))?;
        let moved = self.present.online_moved(now);
        self.present.online = Some(list.clone());
        Ok((list, moved))
    }

    fn cpu_list(&mut self, root: &Path, file: RootFile) -> Result<CpuList, SourceError> {
        self.load(root, file)?;
        CpuList::parse(self.buf.bytes())
            .ok_or_else(|| Self::malformed(file.rel(), "malformed CPU list"))
    }

    /// Every `cpuN` directory's online and configure flags (`None` where
    /// one cannot be read); no CPUs when the directory cannot be read.
    fn cpu_states(&mut self, root: &Path) -> Vec<CpuState> {
        if self.root_dir(root).is_err() {
            return Vec::new();
        }
        let Some(root_dir) = self.root_dir.as_ref() else {
            return Vec::new();
        };
        let kernel = self.kept.open_file(&RootFile::Stat).is_some();
        // Kept only on a kernel root, as the flag files are.
        let open = || {
            root_dir
                .open_dir(Path::new(paths::CPU_DIR), Resolve::Beneath)
                .ok()
        };
        let Some(mut listing) = self.kept_cpus.take_dir(open) else {
            return Vec::new();
        };
        let mut flag = CpuFlagReader {
            root: root_dir,
            name: Vec::with_capacity(32),
            kept: kernel.then_some(&mut self.kept_cpus),
            reading: self.root_readings,
        };
        let mut cpus = Vec::new();
        let mut whole = false;
        for _ in 0..MOST_CPU_ENTRIES {
            let entry = match listing.dir.read() {
                Some(Ok(entry)) => entry,
                None => {
                    whole = true;
                    break;
                }
                Some(Err(_)) => break,
            };
            let name = entry.file_name().to_bytes();
            let Some(id) = cpu_of_name(name) else {
                continue;
            };
            let Ok(dir) = listing.dir.fd() else { break };
            cpus.push(CpuState {
                id,
                online: flag.read(dir, id, name, FlagFile::Online),
                configured: flag.read(dir, id, name, FlagFile::Configure),
            });
        }
        cpus.sort_unstable_by_key(|c| c.id);
        if kernel {
            // The CPUs not listed are gone, and their files with them.
            let listed = |id: &u32| cpus.binary_search_by_key(id, |c| c.id).is_ok();
            self.kept_cpus.retain(|(id, _)| listed(id));
            self.kept_cpus.give_back(listing, whole);
        }
        cpus
    }

    /// The names in a meminfo (`meminfo` true) or vmstat file, if readable.
    fn field_names(&mut self, root: &Path, file: RootFile, meminfo: bool) -> Option<Vec<String>> {
        self.load(root, file).ok()?;
        let parser = if meminfo {
            &mut self.meminfo
        } else {
            &mut self.vmstat
        };
        parser.parse(self.buf.bytes()).ok()?.kernel_names()
    }

    /// What rule loading needs to know about the machine under `root`.
    pub fn facts(&mut self, root: &Path) -> SystemFacts {
        self.enter(root);
        let origin = root.display().to_string();
        let present_cpus = match self.load(root, RootFile::Present) {
            Ok(()) => match CpuList::parse(self.buf.bytes()) {
                Some(l) if l.count > 0 => Ok(l.cpus()),
                Some(l) => Err(PresentCpusError::NoneListed(l.count)),
                None => Err(PresentCpusError::Malformed(paths::PRESENT)),
            },
            Err(e) => Err(PresentCpusError::Unreadable {
                path: paths::PRESENT,
                reason: crate::error_chain::innermost(&e),
            }),
        };
        let cmm_pages = self
            .root_dir(root)
            .is_ok_and(|dir| dir.is_file(RootFile::CmmPages.c_rel()));
        let meminfo_names = self.field_names(root, RootFile::Meminfo, true);
        let vmstat_names = self.field_names(root, RootFile::Vmstat, false);
        let zvm_guest = crate::kernel::machine::cpuinfo(root)
            .ok()
            .map(|text| crate::kernel::machine::is_zvm_guest(&text));
        SystemFacts {
            present_cpus,
            cmm_pages,
            zvm_guest,
            meminfo_names,
            vmstat_names,
            origin,
            history: None,
        }
    }
}

/// How often (in readings) a reader that need not read the present CPUs
/// every time looks at them anyway.
const PRESENT_RECHECK: u32 = 64;

/// What a reader remembers of the present CPUs between readings.
#[derive(Debug, Default)]
struct PresentCpus {
    /// Read anew at every reading.
    each_reading: bool,
    /// The list as last read (`None`: read it at the next reading).
    last: Option<CpuList>,
    /// The online list's text at the last reading, to see it move.
    online_text: Vec<u8>,
    /// The online list `online_text` reads as.
    online: Option<CpuList>,
    /// The polarization at the last reading.
    polarization: Option<Polarization>,
}

impl PresentCpus {
    /// Forgets what was read (another root).
    fn forget(&mut self) {
        self.last = None;
        self.online_text.clear();
        self.online = None;
        self.polarization = None;
    }

    /// True when the online list's text `now` differs from the last
    /// reading's; keeps `now` for the next (in a buffer reused, so a
    /// reading allocates nothing for it).
    fn online_moved(&mut self, now: &[u8]) -> bool {
        if self.online_text == now {
            return false;
        }
        self.online_text.clear();
        self.online_text.extend_from_slice(now);
        true
    }
}

/// The most entries of the CPU directory looked at: a kernel has a few
/// hundred (65,536 CPUs and the few files beside them fit); a damaged root
/// may have millions, and a reading must stay bounded.
const MOST_CPU_ENTRIES: usize = (1 << 16) + 1024;

/// Reads one CPU's flag files below the CPU directory, each by one lookup
/// from it (a walk from the root only where a link is on the way); on a
/// kernel root, from files kept open between readings.
struct CpuFlagReader<'a> {
    root: &'a Root,
    /// `cpuN/FILE` and its NUL, reused for every file.
    name: Vec<u8>,
    /// The kernel root's kept files (`None` for any other root).
    kept: Option<&'a mut KeptFiles<(u32, FlagFile)>>,
    /// Which reading of the root this is.
    reading: u32,
}

impl CpuFlagReader<'_> {
    /// `cpu/file` below `dir` is 1 (`None`: missing or unreadable).
    fn read(&mut self, dir: impl AsFd, id: u32, cpu: &[u8], flag: FlagFile) -> Option<bool> {
        let key = (id, flag);
        if let Some(kept) = self.kept.as_deref_mut() {
            if let Some(file) = kept.open_file(&key) {
                let value = flag_at_start(file);
                if value.is_none() {
                    // Gone with its CPU (ENODEV) or unreadable: opened anew
                    // next time, so a CPU that comes back is seen.
                    kept.forget(&key);
                }
                return value;
            }
            if !kept.due(&key, self.reading) {
                return None;
            }
        }
        self.name.clear();
        self.name.extend_from_slice(cpu);
        self.name.push(b'/');
        self.name.extend_from_slice(flag.name().as_bytes());
        self.name.push(0);
        let name = CStr::from_bytes_with_nul(&self.name).ok()?;
        // Never blocks, whatever sits where the flag should be (a FIFO).
        // Resolved as the actuator resolves the same flags (beneath the
        // root: a link climbing out is unreadable, never the root's own
        // file of that name), so the screen shows what the actuator sees.
        let opened = match self
            .root
            .open_below(dir.as_fd(), paths::CPU_DIR, name, Resolve::Beneath)
        {
            Ok(file) => file,
            Err(e) => {
                if let Some(kept) = self.kept.as_deref_mut().filter(|_| e.is_not_found()) {
                    kept.missing(key);
                }
                return None;
            }
        };
        let value = flag_at_start(&opened);
        if let Some(kept) = self.kept.as_deref_mut().filter(|_| value.is_some()) {
            kept.keep(key, opened);
        }
        value
    }
}

/// The flag at the start of `file`: 1 reads as true, another number as
/// false, anything else as unknown.
fn flag_at_start(file: &File) -> Option<bool> {
    let mut buf = [0u8; 512];
    let n = rustix::io::pread(file, &mut buf, 0).ok()?;
    parse_long(buf.get(..n)?).map(|v| v == 1)
}

/// A copy of the `newkernel` fixture root in a temporary directory (kept
/// while the directory lives), for tests that change its files.
#[cfg(test)]
pub(crate) fn fixture_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots/newkernel");
    let root = dir.path().join("root");
    let copy = std::process::Command::new("cp")
        .arg("-a")
        .arg(&fixture)
        .arg(&root)
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(copy.success());
    (dir, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pinned root's `possible` is read at its first reading only: a
    /// machine's possible CPUs are fixed at boot. An unpinned root (a
    /// snapshot series) reads it each time.
    #[test]
    fn a_pinned_root_reads_possible_once() {
        let (_dir, root) = fixture_copy();
        let possible = root.join(paths::POSSIBLE);
        std::fs::write(&possible, "0-3\n").unwrap_or_else(|e| panic!("{e}"));
        let counts = |pinned: bool| {
            std::fs::write(&possible, "0-3\n").unwrap_or_else(|e| panic!("{e}"));
            let mut reader = RootReader::new();
            reader.scan_cpu_dirs = false;
            reader.pinned = pinned;
            let mut seen = Vec::new();
            for i in 0..3 {
                let s = reader
                    .read(&root, Stamp::new(i, 0))
                    .unwrap_or_else(|e| panic!("{e}"));
                seen.push(s.possible.map(|p| p.count));
                std::fs::write(&possible, "0-7\n").unwrap_or_else(|e| panic!("{e}"));
            }
            seen
        };
        assert_eq!(counts(true), [Some(4); 3]);
        assert_eq!(counts(false), [Some(4), Some(8), Some(8)]);
    }

    /// A pinned root without `dispatching` (no s390) looks for it again
    /// only once every 64 readings; an unpinned one (a snapshot series)
    /// at every reading.
    #[test]
    fn a_pinned_root_looks_for_a_missing_dispatching_file_seldom() {
        let (_dir, root) = fixture_copy();
        let dispatching = root.join(paths::DISPATCHING);
        let first_seen = |pinned: bool| {
            let _ = std::fs::remove_file(&dispatching);
            let mut reader = RootReader::new();
            reader.scan_cpu_dirs = false;
            reader.pinned = pinned;
            for i in 1..=70 {
                let s = reader
                    .read(&root, Stamp::new(i, 0))
                    .unwrap_or_else(|e| panic!("{e}"));
                if s.polarization.is_some() {
                    return Some(i);
                }
                if i == 3 {
                    std::fs::write(&dispatching, "1\n").unwrap_or_else(|e| panic!("{e}"));
                }
            }
            None
        };
        assert_eq!(first_seen(false), Some(4));
        assert_eq!(first_seen(true), Some(64));
    }

    /// Interest that names no loadavg and no present CPUs each interval.
    fn lean() -> Interest {
        Interest {
            per_cpu: false,
            meminfo: None,
            vmstat: None,
            loadavg: false,
            loadavg_text: false,
            present_each_interval: false,
        }
    }

    /// A reader told the rules name no load reads no /proc/loadavg: a
    /// root without one reads, its loads NaN; told again (a reload to
    /// rules that name it), it reads the file and says it is missing.
    #[test]
    fn loadavg_is_read_only_when_wanted() {
        let (_dir, root) = fixture_copy();
        std::fs::remove_file(root.join(paths::LOADAVG)).unwrap_or_else(|e| panic!("{e}"));
        let mut reader = RootReader::new();
        reader.scan_cpu_dirs = false;
        reader.pinned = true;
        assert!(
            reader.read(&root, Stamp::new(0, 0)).is_err(),
            "everything is read by default"
        );
        reader.narrow(&lean());
        let s = reader
            .read(&root, Stamp::new(1, 0))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(s.loadavg.is_nan() && s.runnable.is_nan());
        reader.narrow(&Interest {
            loadavg: true,
            ..lean()
        });
        let err = reader.read(&root, Stamp::new(2, 0));
        assert!(
            matches!(&err, Err(SourceError::Open { path, .. }) if path.ends_with("loadavg")),
            "{err:?}"
        );
    }

    /// Told to keep /proc/loadavg's text (no rule names a load, a reload
    /// may bring one), a reader still reads and checks the file, converts
    /// nothing, and the kept text converts to what a reader told the rules
    /// name a load gives. A malformed file fails the reading either way.
    #[test]
    fn loadavg_text_is_checked_and_kept_unconverted() {
        let (_dir, root) = fixture_copy();
        let file = root.join(paths::LOADAVG);
        std::fs::write(&file, "1.25 0.5 0.25 3/99 4242\n").unwrap_or_else(|e| panic!("{e}"));
        let mut reader = RootReader::new();
        reader.scan_cpu_dirs = false;
        let kept = Interest {
            loadavg_text: true,
            ..lean()
        };
        reader.narrow(&kept);
        let mut s = reader
            .read(&root, Stamp::new(1, 0))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(s.loadavg.is_nan() && s.runnable.is_nan() && s.loadavg_text.is_some());
        s.convert_loadavg();
        assert_eq!((s.loadavg, s.runnable, s.loadavg_text), (1.25, 3.0, None));
        std::fs::write(&file, "busy\n").unwrap_or_else(|e| panic!("{e}"));
        let err = reader.read(&root, Stamp::new(2, 0));
        assert!(
            matches!(&err, Err(SourceError::Malformed { .. })),
            "{err:?}"
        );
        reader.narrow(&lean());
        assert!(reader.read(&root, Stamp::new(3, 0)).is_ok(), "not read");
    }

    /// A pinned reader that need not read the present CPUs every time
    /// reads them at its first reading, after new interest, when the online
    /// list or the polarization moves, and every 64th reading; each other
    /// reading carries the list last read. Wanted each interval, or on an
    /// unpinned root, they are read every time.
    #[test]
    fn present_cpus_are_read_again_when_something_could_have_moved() {
        let (_dir, root) = fixture_copy();
        let present = root.join(paths::PRESENT);
        let online = root.join(paths::ONLINE);
        let dispatching = root.join(paths::DISPATCHING);
        let write = |path: &Path, text: &str| {
            std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
        };
        let run = |pinned: bool, interest: Interest| {
            write(&present, "0-1\n");
            write(&online, "0\n");
            write(&dispatching, "0\n");
            let mut reader = RootReader::new();
            reader.scan_cpu_dirs = false;
            reader.pinned = pinned;
            reader.narrow(&interest);
            let mut seen = Vec::new();
            for i in 1..=70u32 {
                let s = reader
                    .read(&root, Stamp::new(i64::from(i), 0))
                    .unwrap_or_else(|e| panic!("{e}"));
                seen.push(s.present.count);
                match i {
                    // The hypervisor adds CPUs; nothing else moves.
                    2 => write(&present, "0-3\n"),
                    // A CPU goes online.
                    5 => write(&online, "0-1\n"),
                    6 => write(&present, "0-5\n"),
                    // Vertical polarization.
                    8 => write(&dispatching, "1\n"),
                    9 => write(&present, "0-7\n"),
                    10 => reader.narrow(&interest),
                    11 => write(&present, "0-9\n"),
                    _ => {}
                }
            }
            seen
        };
        let lean_run = run(true, lean());
        let expected_until_63: Vec<i32> = [2, 2, 2, 2, 2, 4, 4, 4, 6, 6, 8]
            .into_iter()
            .chain(std::iter::repeat_n(8, 52))
            .collect();
        assert_eq!(lean_run[..63], expected_until_63[..]);
        assert_eq!(lean_run[63], 10, "the 64th reading looks again");
        let every: Vec<i32> = [2, 2, 4, 4, 4, 4, 6, 6, 6, 8, 8]
            .into_iter()
            .chain(std::iter::repeat_n(10, 59))
            .collect();
        assert_eq!(
            run(
                true,
                Interest {
                    present_each_interval: true,
                    ..lean()
                }
            ),
            every
        );
        assert_eq!(run(false, lean()), every);
    }

    /// On the machine's own root (read only) the CPU flags read from the
    /// kept sysfs files are the ones a fresh reading opens and reads.
    #[test]
    fn kept_cpu_flags_read_what_fresh_opens_read() {
        let root = Path::new("/");
        if !root.join(paths::CPU_DIR).is_dir() {
            return;
        }
        let mut kept = RootReader::new();
        let mut flags = Vec::new();
        for i in 0..4 {
            let s = kept
                .read(root, Stamp::new(i, 0))
                .unwrap_or_else(|e| panic!("{e}"));
            flags = s.cpus.to_vec();
        }
        assert!(kept.kernel_root(), "/proc/stat is the kernel's");
        assert!(kept.kept_cpus.dir_is_kept(), "the CPU directory is kept");
        assert!(!flags.is_empty(), "this machine has CPUs");
        let fresh = RootReader::new()
            .read(root, Stamp::new(0, 0))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags, *fresh.cpus);
    }

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
