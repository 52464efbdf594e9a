//! sysstat's `sa` files, read through the distribution's own `sadf -j`
//! (found on `PATH`; the binary format is never read here) and rebuilt
//! into the readings plugtop records:
//!
//! - `/proc/stat` tick counters from `sar -u ALL -P ALL`: each interval
//!   adds `percent / 100 × interval × 100` ticks (USER_HZ) to a column
//!   (`× online CPUs` for the `cpu` line); sysstat's `%usr` and `%nice`
//!   leave out guest time, which the kernel counts inside `user` and
//!   `nice`, so it is added back. The counters are the running exact sums
//!   rounded to the nearest tick (see [`TickCounter`]): 1 tick in 100 per
//!   CPU-second at most, never accumulated. A CPU whose percentages are
//!   all zero (sysstat's way of showing an offline CPU) or that is not
//!   listed is offline: it has no `cpuN` line and is not in the online list.
//! - `/proc/meminfo` (kB, as the kernel writes it) from `sar -r ALL -S`:
//!   `MemFree`, `MemAvailable`, `Buffers`, `Cached`, `Committed_AS`,
//!   `Active`, `Inactive`, `Dirty`, `AnonPages`, `Slab`, `KernelStack`,
//!   `PageTables`, `VmallocUsed`, `SwapFree`, `SwapCached`, and
//!   `MemTotal` = free + used + buffers + cached + slab (sysstat's
//!   `kbmemused` leaves those out), `SwapTotal` = free + used.
//! - `/proc/vmstat` counters from `sar -B` and `sar -W` (per-second
//!   rates × interval, summed from zero): `pgpgin`, `pgpgout` (kB, as the
//!   kernel counts them), `pgfault`, `pgmajfault`, `pgfree`,
//!   `pgscan_kswapd`, `pgscan_direct`, `pswpin`, `pswpout`. sysstat sums
//!   the kernel's `pgsteal_*` counters into one, which no kernel prints
//!   under one name, so `pgsteal` is left out.
//! - `/proc/loadavg` from `sar -q`: `ldavg-1`, and `runq-sz` + 1 (sysstat
//!   leaves its own collector out of the running tasks; a reader of
//!   `/proc/loadavg`, cpuplugd included, counts itself).
//!
//! An activity the file does not hold (the `sadf -H` list) is absent, not
//! zero. The counters start at zero: rules see the same differences as
//! on the guest, not the same totals since boot.

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{
    ImportError, NamedTable, Output, RebuiltReading, Summary, TickCounter, sample, utc_seconds,
};
use crate::kernel::recording::{Header, Provenance};
use crate::kernel::{CpuTicks, Stamp};

/// The most CPUs one reading may list (sysstat's own limit is 8192).
const MOST_CPUS: usize = 8192;

/// The most of `sadf`'s error output kept for a message.
const STDERR_KEPT: u64 = 4096;

/// What to import and how.
pub struct SysstatOptions<'a> {
    pub files: &'a [PathBuf],
    pub output: &'a Path,
    pub actions: Vec<super::actions::Logged>,
    /// The time limit of each `sadf` run.
    pub timeout: Duration,
    /// The `sadf` to run (default: found on `PATH`).
    pub sadf: Option<PathBuf>,
}

/// Imports `sa` files into one recording, in the order given.
pub fn import(options: SysstatOptions<'_>) -> Result<Summary, ImportError> {
    if options.files.is_empty() {
        return Err(ImportError::Input("name at least one sa file".into()));
    }
    let sadf = match &options.sadf {
        Some(p) => p.clone(),
        None => super::on_path("sadf").ok_or_else(|| {
            ImportError::Input(
                "sadf is not on PATH: install the distribution's `sysstat` package (apt-get install sysstat, zypper install sysstat, dnf install sysstat), which reads sa files"
                    .into(),
            )
        })?,
    };
    for file in options.files {
        // sadf would wait on a FIFO and read /dev/zero for ever.
        crate::kernel::fs::open_named(file)
            .map_err(|e| ImportError::Input(format!("{}: cannot read it: {e}", file.display())))?;
    }
    let mut state = SadfImport::default();
    super::write_recording(options.output, options.actions, |out| {
        for file in options.files {
            let activities = activities(&sadf, file, options.timeout)?;
            state.file = file.display().to_string();
            state.activities = activities.clone();
            let mut args: Vec<&str> = vec!["-j", "--"];
            if activities.cpu {
                args.extend(["-u", "ALL", "-P", "ALL"]);
            }
            if activities.memory {
                args.extend(["-r", "ALL", "-S"]);
            }
            if activities.paging {
                args.push("-B");
            }
            if activities.swapping {
                args.push("-W");
            }
            if activities.queue {
                args.push("-q");
            }
            if !activities.cpu {
                return Err(ImportError::Input(format!(
                    "{}: the file holds no CPU statistics (A_CPU): nothing to decide CPU rules on",
                    file.display()
                )));
            }
            let mut command = Command::new(&sadf);
            command.arg("-j").arg(file).args(&args[1..]);
            run_bounded(command, options.timeout, file, |stdout| {
                let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(
                    1 << 16,
                    stdout,
                ));
                let seed = Level {
                    state: &mut state,
                    out: &mut *out,
                    part: Part::Top,
                };
                let read = seed.deserialize(&mut de).and_then(|()| de.end());
                match read {
                    Ok(()) => Ok(()),
                    Err(e) => Err(state.error.take().unwrap_or_else(|| {
                        ImportError::Input(format!(
                            "{}: sadf's JSON does not read as sysstat's (line {}, column {}): {}",
                            file.display(),
                            e.line(),
                            e.column(),
                            strip_position(&e.to_string())
                        ))
                    })),
                }
            })?;
        }
        Ok(())
    })
}

/// serde_json's message without its own " at line L column C".
fn strip_position(text: &str) -> &str {
    text.split(" at line ").next().unwrap_or(text)
}

/// The activities an `sa` file holds, from `sadf -H`'s list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Activities {
    pub cpu: bool,
    pub memory: bool,
    pub paging: bool,
    pub swapping: bool,
    pub queue: bool,
    /// The sysstat version that wrote the file, as `sadf -H` says.
    pub version: String,
}

/// Reads `sadf -H`'s text: the activity names (`A_CPU`, ...) listed.
pub fn parse_activities(text: &str) -> Activities {
    let mut a = Activities::default();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("File created by sar/sadc from sysstat version ") {
            a.version = v.trim().chars().take(32).collect();
        }
        for word in line.split_whitespace() {
            match word {
                "A_CPU" => a.cpu = true,
                "A_MEMORY" => a.memory = true,
                "A_PAGE" => a.paging = true,
                "A_SWAP" => a.swapping = true,
                "A_QUEUE" => a.queue = true,
                _ => {}
            }
        }
    }
    a
}

fn activities(sadf: &Path, file: &Path, timeout: Duration) -> Result<Activities, ImportError> {
    let mut command = Command::new(sadf);
    command.arg("-H").arg(file);
    run_bounded(command, timeout, file, |mut stdout| {
        let mut text = String::new();
        (&mut stdout)
            .take(1 << 20)
            .read_to_string(&mut text)
            .map_err(|e| ImportError::Input(format!("{}: sadf -H: {e}", file.display())))?;
        Ok(parse_activities(&text))
    })
}

/// Runs `command` with its output given to `read`, stopped after
/// `timeout` (killed: a `sadf` that hangs costs the time limit, no more).
/// A failed run is an error naming `file` and what `sadf` said.
fn run_bounded<T>(
    mut command: Command,
    timeout: Duration,
    file: &Path,
    read: impl FnOnce(std::process::ChildStdout) -> Result<T, ImportError>,
) -> Result<T, ImportError> {
    let shown = file.display().to_string();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("LC_ALL", "C")
        .env("S_TIME_FORMAT", "ISO");
    let mut child: Child = command.spawn().map_err(|e| {
        ImportError::Input(format!(
            "{shown}: cannot run sadf ({e}): install the distribution's `sysstat` package"
        ))
    })?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(ImportError::Input(format!("{shown}: sadf has no output")));
    };
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let mut stderr = stderr.take(STDERR_KEPT);
        let _ = stderr.read_to_string(&mut text);
        // Read the rest past, so sadf never blocks writing it.
        let _ = std::io::copy(&mut stderr.into_inner(), &mut std::io::sink());
        text
    });
    let (done, finished) = mpsc::channel::<()>();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        let timed_out = matches!(
            finished.recv_timeout(timeout),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        if timed_out {
            // Our own child, by its id: its output then ends and the
            // reader sees the end.
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(pid as i32).unwrap_or(rustix::process::Pid::INIT),
                rustix::process::Signal::KILL,
            )
            .ok()
            .filter(|()| pid > 1);
        }
        timed_out
    });
    let result = read(stdout);
    let _ = done.send(());
    let status = if result.is_err() {
        let _ = child.kill();
        child.wait()
    } else {
        child.wait()
    };
    let timed_out = watchdog.join().unwrap_or(true);
    let said = errors.join().unwrap_or_default();
    let said = said.trim();
    if timed_out {
        return Err(ImportError::Input(format!(
            "{shown}: sadf did not finish within {} s (a hung sadf or a file too large; --timeout sets the limit)",
            timeout.as_secs_f64()
        )));
    }
    let status =
        status.map_err(|e| ImportError::Input(format!("{shown}: waiting for sadf: {e}")))?;
    if !status.success() {
        return Err(ImportError::Input(sadf_refusal(file, said, status.code())));
    }
    result
}

/// What a `sadf` that failed on `file` means, with the file's offset.
fn sadf_refusal(file: &Path, said: &str, code: Option<i32>) -> String {
    let shown = file.display();
    let words: String = said
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .collect::<Vec<_>>()
        .join("; ");
    let words = crate::report::terminal_safe(&words);
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    if said.contains("End of system activity file unexpected") {
        return format!(
            "{shown}: truncated at byte {size} (the end of the file, inside a record): sadf says \"{words}\""
        );
    }
    if said.contains("cannot read the format") {
        return format!(
            "{shown}: written by another sysstat version (format number at byte 2): sadf says \"{words}\"; `sadf -c` converts it"
        );
    }
    if said.contains("Invalid system activity file") {
        return format!("{shown}: not an sa file (byte 0): sadf says \"{words}\"");
    }
    format!(
        "{shown}: sadf failed (exit status {}): \"{words}\"",
        code.map_or("none".to_string(), |c| c.to_string())
    )
}

/// What the import carries from reading to reading (and file to file).
#[derive(Default)]
struct SadfImport {
    file: String,
    activities: Activities,
    host: Option<HostInfo>,
    header_given: bool,
    records: u64,
    all: TickCounter,
    per_cpu: Vec<Option<TickCounter>>,
    vmstat: [f64; VMSTAT_NAMES.len()],
    meminfo: NamedTable,
    vmstat_table: NamedTable,
    error: Option<ImportError>,
    last: Option<i64>,
}

/// A record's CPU lines as counters: the `cpu` line, the `cpuN` lines,
/// the online CPUs, the present count.
type CpuLines = (CpuTicks, Vec<(u32, CpuTicks)>, Vec<u32>, u32);

/// A /proc table's (name, value) pairs.
type Fields = Vec<(&'static str, f64)>;

/// A host's description in sadf's JSON.
#[derive(Debug, Clone, Default, Deserialize)]
struct HostInfo {
    #[serde(default)]
    nodename: String,
    #[serde(default)]
    release: String,
    #[serde(default)]
    machine: String,
    #[serde(rename = "number-of-cpus", default)]
    cpus: u32,
}

#[derive(Deserialize)]
struct Timestamp {
    date: String,
    time: String,
    #[serde(default)]
    utc: Option<u8>,
    interval: f64,
}

#[derive(Deserialize)]
struct SadfCpu {
    cpu: CpuName,
    usr: f64,
    nice: f64,
    sys: f64,
    iowait: f64,
    steal: f64,
    irq: f64,
    soft: f64,
    guest: f64,
    gnice: f64,
    idle: f64,
}

/// `"all"` or a CPU number (sadf writes it as a string).
enum CpuName {
    All,
    Cpu(u32),
}

impl<'de> Deserialize<'de> for CpuName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if text == "all" {
            return Ok(CpuName::All);
        }
        text.parse::<u32>()
            .ok()
            .filter(|n| (*n as usize) < MOST_CPUS)
            .map(CpuName::Cpu)
            .ok_or_else(|| {
                serde::de::Error::custom("a CPU that is neither \"all\" nor a number below 8192")
            })
    }
}

#[derive(Deserialize)]
struct Paging {
    pgpgin: f64,
    pgpgout: f64,
    fault: f64,
    majflt: f64,
    pgfree: f64,
    pgscank: f64,
    pgscand: f64,
}

#[derive(Deserialize)]
struct SwapPages {
    pswpin: f64,
    pswpout: f64,
}

#[derive(Deserialize)]
struct SadfMemory {
    memfree: f64,
    avail: Option<f64>,
    memused: f64,
    buffers: f64,
    cached: f64,
    commit: Option<f64>,
    active: Option<f64>,
    inactive: Option<f64>,
    dirty: Option<f64>,
    anonpg: Option<f64>,
    slab: Option<f64>,
    kstack: Option<f64>,
    pgtbl: Option<f64>,
    vmused: Option<f64>,
    swpfree: Option<f64>,
    swpused: Option<f64>,
    swpcad: Option<f64>,
}

#[derive(Deserialize)]
struct Queue {
    #[serde(rename = "runq-sz")]
    runq: f64,
    #[serde(rename = "ldavg-1")]
    ldavg1: f64,
}

#[derive(Deserialize)]
struct Record {
    timestamp: Timestamp,
    #[serde(rename = "cpu-load", default)]
    cpu_load: Option<Vec<SadfCpu>>,
    #[serde(default)]
    paging: Option<Paging>,
    #[serde(rename = "swap-pages", default)]
    swap: Option<SwapPages>,
    #[serde(default)]
    memory: Option<SadfMemory>,
    #[serde(default)]
    queue: Option<Queue>,
}

/// The vmstat counters rebuilt, in the order the recording lists them.
const VMSTAT_NAMES: [&str; 9] = [
    "pgpgin",
    "pgpgout",
    "pswpin",
    "pswpout",
    "pgfault",
    "pgmajfault",
    "pgfree",
    "pgscan_kswapd",
    "pgscan_direct",
];

impl SadfImport {
    fn fail(&mut self, what: String) -> String {
        let text = format!("{}: {what}", self.file);
        self.error = Some(ImportError::Input(text.clone()));
        text
    }

    fn absent(&self) -> Vec<String> {
        let mut absent = Vec::new();
        if !self.activities.queue {
            absent.extend(["loadavg".to_string(), "runnable_proc".to_string()]);
        }
        absent
    }

    /// The tick counters after a record's CPU lines: the `cpu` line's,
    /// the online CPUs' lines, the online CPUs and the present count.
    fn cpu_lines(
        &mut self,
        cpus: &[SadfCpu],
        host_cpus: u32,
        interval: f64,
        at: &str,
    ) -> Result<CpuLines, String> {
        let mut online = Vec::new();
        let mut all = None;
        let mut per_cpu_ticks = Vec::new();
        for c in cpus {
            let pct = [
                c.usr + c.guest,
                c.nice + c.gnice,
                c.sys,
                c.idle,
                c.iowait,
                c.irq,
                c.soft,
                c.steal,
                c.guest,
                c.gnice,
            ];
            if pct.iter().any(|p| !p.is_finite() || *p < 0.0 || *p > 100.5) {
                return Err(self.fail(format!("{at}: a CPU percentage outside 0..100")));
            }
            match c.cpu {
                CpuName::All => all = Some(pct),
                CpuName::Cpu(id) => {
                    // sysstat shows an offline CPU with every figure zero.
                    if pct.iter().sum::<f64>() > 0.0 {
                        online.push(id);
                        per_cpu_ticks.push((id, pct));
                    }
                }
            }
        }
        online.sort_unstable();
        online.dedup();
        let Some(all) = all else {
            return Err(self.fail(format!("{at}: no \"all\" CPU line")));
        };
        // Without per-CPU lines (sadf without -P), every CPU of the host
        // counts as online.
        let online_count = if per_cpu_ticks.is_empty() {
            host_cpus.max(1)
        } else {
            online.len() as u32
        };
        if per_cpu_ticks.is_empty() {
            online = (0..online_count).collect();
        }
        let per_second = interval * super::TICKS_PER_SECOND;
        self.all
            .add(all.map(|p| p / 100.0 * per_second * f64::from(online_count)));
        let mut per_cpu = Vec::with_capacity(per_cpu_ticks.len());
        for (id, pct) in per_cpu_ticks {
            let slot = id as usize;
            if self.per_cpu.len() <= slot {
                self.per_cpu.resize(slot + 1, None);
            }
            let counter = self.per_cpu[slot].get_or_insert_with(TickCounter::default);
            counter.add(pct.map(|p| p / 100.0 * per_second));
            per_cpu.push((id, counter.ticks()));
        }
        per_cpu.sort_unstable_by_key(|(id, _)| *id);
        let present = host_cpus
            .max(online.last().map_or(0, |l| l + 1))
            .max(online_count);
        Ok((self.all.ticks(), per_cpu, online, present))
    }

    /// /proc/meminfo and /proc/vmstat of a record, the counters carried on.
    fn memory_and_paging(
        &mut self,
        r: &Record,
        interval: f64,
        at: &str,
    ) -> Result<(Fields, Fields), String> {
        let mut meminfo: Vec<(&'static str, f64)> = Vec::new();
        if self.activities.memory {
            let Some(m) = &r.memory else {
                return Err(self.fail(format!(
                    "{at}: no memory statistics, though the file lists A_MEMORY"
                )));
            };
            memory_fields(m, &mut meminfo);
        }
        if self.activities.paging {
            let Some(p) = &r.paging else {
                return Err(self.fail(format!(
                    "{at}: no paging statistics, though the file lists A_PAGE"
                )));
            };
            for (i, rate) in [
                p.pgpgin, p.pgpgout, 0.0, 0.0, p.fault, p.majflt, p.pgfree, p.pgscank, p.pgscand,
            ]
            .into_iter()
            .enumerate()
            {
                self.vmstat[i] += rate.max(0.0) * interval;
            }
        }
        if self.activities.swapping
            && let Some(s) = &r.swap
        {
            self.vmstat[2] += s.pswpin.max(0.0) * interval;
            self.vmstat[3] += s.pswpout.max(0.0) * interval;
        }
        let vmstat: Vec<(&'static str, f64)> = VMSTAT_NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| match i {
                2 | 3 => self.activities.swapping,
                _ => self.activities.paging,
            })
            .map(|(i, name)| (*name, self.vmstat[i].round()))
            .collect();
        Ok((meminfo, vmstat))
    }

    /// The recording's header, from the first record.
    fn header(&self, host: &HostInfo, interval: f64, secs: i64) -> Header {
        Header {
            host: host.nodename.clone(),
            kernel: host.release.clone(),
            cpu_model: format!("{} (from sysstat)", host.machine),
            root: self.file.clone(),
            page_size: 4096,
            present_cpus: host.cpus,
            interval_us: (interval * 1e6) as u64,
            started: Stamp::new(secs, 0),
            imported: Some(Box::new(Provenance {
                source: "sysstat".into(),
                resolution_us: (interval * 1e6) as u64,
                absent: self.absent(),
                actions: Vec::new(),
            })),
        }
    }

    /// One record of sadf's `statistics`, as the next reading.
    fn record(&mut self, r: Record, out: &mut Output<'_>) -> Result<(), String> {
        self.records += 1;
        let n = self.records;
        let Some(host) = self.host.clone() else {
            return Err(self.fail("a record before the host's description".into()));
        };
        if r.timestamp.utc == Some(0) {
            return Err(self.fail(format!(
                "record {n}: times in local time (sadf -t); plugtop reads UTC"
            )));
        }
        let Some(secs) = utc_seconds(&r.timestamp.date, &r.timestamp.time) else {
            return Err(self.fail(format!(
                "record {n}: the time {:?} {:?} is not a date and time",
                r.timestamp.date, r.timestamp.time
            )));
        };
        let interval = r.timestamp.interval;
        if !(interval.is_finite() && interval > 0.0 && interval <= 86_400.0 * 366.0) {
            return Err(self.fail(format!(
                "record {n} at {} {}: an interval of {interval} s",
                r.timestamp.date, r.timestamp.time
            )));
        }
        if let Some(last) = self.last
            && secs <= last
        {
            // Files named out of order or overlapping: a reading that is
            // not after the one before is left out, said once each.
            out.warn(format!(
                "{}: record {n} at {} {} is not after the reading before: left out",
                self.file, r.timestamp.date, r.timestamp.time
            ));
            return Ok(());
        }
        let Some(cpus) = &r.cpu_load else {
            return Err(self.fail(format!(
                "record {n} at {} {}: no CPU statistics (\"cpu-load\")",
                r.timestamp.date, r.timestamp.time
            )));
        };
        let at = format!("record {n} at {} {}", r.timestamp.date, r.timestamp.time);
        let (all, per_cpu, online, present) = self.cpu_lines(cpus, host.cpus, interval, &at)?;
        let (meminfo, vmstat) = self.memory_and_paging(&r, interval, &at)?;
        let (loadavg, runnable) = match (&r.queue, self.activities.queue) {
            (Some(q), true) => (q.ldavg1, q.runq + 1.0),
            (None, true) => {
                return Err(self.fail(format!(
                    "{at}: no queue statistics, though the file lists A_QUEUE"
                )));
            }
            // Absent: named in the header, never decided on.
            (_, false) => (0.0, 0.0),
        };
        if !self.header_given {
            self.header_given = true;
            out.header(self.header(&host, interval, secs));
        }
        let reading = RebuiltReading {
            stamp: Stamp::new(secs, 0),
            all,
            per_cpu,
            online,
            present,
            loadavg,
            runnable,
            meminfo: self.meminfo.of(&meminfo),
            vmstat: self.vmstat_table.of(&vmstat),
        };
        self.last = Some(secs);
        out.push(&sample(reading)).map_err(|e| {
            let text = crate::error_chain::text(&e);
            self.error = Some(e);
            text
        })
    }
}

/// sysstat's memory figures under the kernel's /proc/meminfo names, in kB.
fn memory_fields(m: &SadfMemory, out: &mut Vec<(&'static str, f64)>) {
    let total = m.memfree + m.memused + m.buffers + m.cached + m.slab.unwrap_or(0.0);
    out.push(("MemTotal", total));
    out.push(("MemFree", m.memfree));
    let optional = [
        ("MemAvailable", m.avail),
        ("Buffers", Some(m.buffers)),
        ("Cached", Some(m.cached)),
        ("SwapCached", m.swpcad),
        ("Active", m.active),
        ("Inactive", m.inactive),
        (
            "SwapTotal",
            m.swpfree.zip(m.swpused).map(|(free, used)| free + used),
        ),
        ("SwapFree", m.swpfree),
        ("Dirty", m.dirty),
        ("AnonPages", m.anonpg),
        ("Slab", m.slab),
        ("KernelStack", m.kstack),
        ("PageTables", m.pgtbl),
        ("Committed_AS", m.commit),
        ("VmallocUsed", m.vmused),
    ];
    for (name, v) in optional {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            out.push((name, v));
        }
    }
}

/// Where in sadf's JSON a [`Level`] reads: `{"sysstat": {"hosts":
/// [{..., "statistics": [...]}]}}`.
#[derive(Clone, Copy)]
enum Part {
    /// The whole of it.
    Top,
    /// The object under `sysstat`.
    Sysstat,
    /// The list of hosts.
    Hosts,
    /// One host.
    Host,
    /// A host's list of records.
    Statistics,
}

/// One level of sadf's JSON, read as it streams in.
struct Level<'s, 'o, 'f> {
    state: &'s mut SadfImport,
    out: &'o mut Output<'f>,
    part: Part,
}

impl<'f> Level<'_, '_, 'f> {
    /// The level `part` below this one.
    fn below(&mut self, part: Part) -> Level<'_, '_, 'f> {
        Level {
            state: &mut *self.state,
            out: &mut *self.out,
            part,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Level<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.part {
            Part::Hosts | Part::Statistics => d.deserialize_seq(self),
            Part::Top | Part::Sysstat | Part::Host => d.deserialize_map(self),
        }
    }
}

impl<'de> Visitor<'de> for Level<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self.part {
            Part::Top => "sadf's JSON ({\"sysstat\": ...})",
            Part::Sysstat => "an object with \"hosts\"",
            Part::Hosts => "a list of hosts",
            Part::Host => "a host",
            Part::Statistics => "a list of records",
        })
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let within = match self.part {
            Part::Top => "sysstat",
            Part::Sysstat => "hosts",
            Part::Host => return self.host(map),
            Part::Hosts | Part::Statistics => {
                return Err(serde::de::Error::invalid_type(
                    serde::de::Unexpected::Map,
                    &self,
                ));
            }
        };
        let mut seen = false;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == within {
                seen = true;
                let part = match self.part {
                    Part::Top => Part::Sysstat,
                    _ => Part::Hosts,
                };
                map.next_value_seed(self.below(part))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if !seen && matches!(self.part, Part::Top) {
            return Err(serde::de::Error::custom("no \"sysstat\" object"));
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        match self.part {
            Part::Hosts => while seq.next_element_seed(self.below(Part::Host))?.is_some() {},
            Part::Statistics => {
                while let Some(record) = seq.next_element::<Record>()? {
                    self.state
                        .record(record, self.out)
                        .map_err(serde::de::Error::custom)?;
                }
            }
            Part::Top | Part::Sysstat | Part::Host => {
                return Err(serde::de::Error::invalid_type(
                    serde::de::Unexpected::Seq,
                    &self,
                ));
            }
        }
        Ok(())
    }
}

impl Level<'_, '_, '_> {
    /// One host: what it is, then its records.
    fn host<'de, A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut info = HostInfo::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "nodename" => info.nodename = cut(map.next_value::<String>()?),
                "release" => info.release = cut(map.next_value::<String>()?),
                "machine" => info.machine = cut(map.next_value::<String>()?),
                "number-of-cpus" => {
                    let n = map.next_value::<u32>()?;
                    if n as usize > MOST_CPUS {
                        return Err(serde::de::Error::custom(
                            self.state
                                .fail(format!("{n} CPUs: more than sysstat's 8192")),
                        ));
                    }
                    info.cpus = n;
                }
                "statistics" => {
                    match &self.state.host {
                        Some(h) if h.nodename != info.nodename || h.cpus != info.cpus => {
                            self.out.warn(format!(
                                "{}: host {} with {} CPUs follows host {} with {}",
                                self.state.file, info.nodename, info.cpus, h.nodename, h.cpus
                            ));
                        }
                        _ => {}
                    }
                    self.state.host = Some(info.clone());
                    map.next_value_seed(self.below(Part::Statistics))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Text from the file, cut to a sane length.
fn cut(text: String) -> String {
    text.chars().take(256).collect()
}
