//! One interval's readings: plain data, the same whether it came from the
//! live kernel, a recording, a conformance snapshot or the simulator.

use super::cpulist::CpuList;
use super::fields::FieldTable;
use super::loadavg::LoadavgText;

/// Tick counters of one `cpu` line of /proc/stat, in the kernel's order.
/// Missing columns (old kernels) read as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTicks {
    /// The ten columns in /proc/stat order.
    pub fn columns(&self) -> [u64; 10] {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
            self.guest,
            self.guest_nice,
        ]
    }

    /// Builds ticks from up to ten columns.
    pub fn from_columns(c: [u64; 10]) -> Self {
        CpuTicks {
            user: c[0],
            nice: c[1],
            system: c[2],
            idle: c[3],
            iowait: c[4],
            irq: c[5],
            softirq: c[6],
            steal: c[7],
            guest: c[8],
            guest_nice: c[9],
        }
    }

    /// cpuplugd's `total_ticks`: the sum of all ten columns, so guest time
    /// (already inside user and nice) counts twice.
    pub fn total(&self) -> u64 {
        self.columns().iter().fold(0u64, |a, b| a.wrapping_add(*b))
    }
}

/// When a reading was taken, to the microsecond, as `gettimeofday` gives
/// it. Kept exact so recordings and snapshot exports reproduce cpuplugd's
/// `time` value bit for bit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    /// Microseconds since the epoch.
    pub micros: i64,
}

impl Stamp {
    /// From seconds and microseconds.
    pub fn new(secs: i64, micros: u32) -> Self {
        Stamp {
            micros: secs
                .saturating_mul(1_000_000)
                .saturating_add(i64::from(micros)),
        }
    }

    /// Whole seconds.
    pub fn secs(self) -> i64 {
        self.micros.div_euclid(1_000_000)
    }

    /// The microseconds past the second.
    pub fn subsec_micros(self) -> u32 {
        self.micros.rem_euclid(1_000_000) as u32
    }

    /// cpuplugd's `tv_sec + (double) tv_usec / 1000000`.
    pub fn seconds(self) -> f64 {
        self.secs() as f64 + f64::from(self.subsec_micros()) / 1_000_000.0
    }
}

/// CPU polarization on s390 (`/sys/devices/system/cpu/dispatching`). In
/// vertical polarization cpuplugd changes no CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polarization {
    Horizontal,
    Vertical,
}

/// The sysfs state of one CPU directory (`cpuN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuState {
    pub id: u32,
    /// `cpuN/online`; `None` when the file is missing (not hotpluggable).
    pub online: Option<bool>,
    /// `cpuN/configure`; `None` on machines without it.
    pub configured: Option<bool>,
}

/// The byte lengths of /proc/meminfo and /proc/vmstat as read (0: not
/// known, e.g. the simulator). cpuplugd sizes its buffers at twice the
/// length it finds at start and stops when a later file fills one (edge
/// case F), so the engine needs the lengths, not only the values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcBytes {
    pub meminfo: u32,
    pub vmstat: u32,
}

/// Everything read in one interval.
#[derive(Debug)]
pub struct Sample {
    /// When it was read.
    pub stamp: Stamp,
    /// The aggregate `cpu` line of /proc/stat.
    pub ticks: CpuTicks,
    /// The `cpuN` lines, by CPU number.
    pub per_cpu: Vec<(u32, CpuTicks)>,
    /// First field of /proc/loadavg.
    pub loadavg: f64,
    /// The number before the `/` in the fourth field of /proc/loadavg.
    pub runnable: f64,
    /// /proc/loadavg read but not converted (no rule named a load; both
    /// loads are then NaN until [`Sample::convert_loadavg`]).
    pub loadavg_text: Option<LoadavgText>,
    pub meminfo: FieldTable,
    pub vmstat: FieldTable,
    pub online: CpuList,
    pub present: CpuList,
    /// `cpu/possible`, when the machine has it.
    pub possible: Option<CpuList>,
    /// Per-CPU sysfs state, when the source has it (live roots do, snapshots do not).
    /// Shared like the CPU lists: unchanged from one reading to the next,
    /// it is the same slice.
    pub cpus: std::sync::Arc<[CpuState]>,
    /// `/proc/sys/vm/cmm_pages`, absent on machines without CMM.
    pub cmm_pages: Option<i64>,
    /// `None` when the machine has no `dispatching` file (treated as horizontal).
    pub polarization: Option<Polarization>,
    /// How long the /proc tables were.
    pub proc_bytes: ProcBytes,
}

// A copy into a sample copied before reuses its lists and tables: the
// incident watch keeps the previous reading, and the loop check builds
// readings, every interval.
impl Clone for Sample {
    fn clone(&self) -> Self {
        Sample {
            stamp: self.stamp,
            ticks: self.ticks,
            per_cpu: self.per_cpu.clone(),
            loadavg: self.loadavg,
            runnable: self.runnable,
            loadavg_text: self.loadavg_text,
            meminfo: self.meminfo.clone(),
            vmstat: self.vmstat.clone(),
            online: self.online.clone(),
            present: self.present.clone(),
            possible: self.possible.clone(),
            cpus: self.cpus.clone(),
            cmm_pages: self.cmm_pages,
            polarization: self.polarization,
            proc_bytes: self.proc_bytes,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        let Sample {
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
        } = self;
        *stamp = source.stamp;
        *ticks = source.ticks;
        per_cpu.clone_from(&source.per_cpu);
        *loadavg = source.loadavg;
        *runnable = source.runnable;
        *loadavg_text = source.loadavg_text;
        meminfo.clone_from(&source.meminfo);
        vmstat.clone_from(&source.vmstat);
        online.clone_from(&source.online);
        present.clone_from(&source.present);
        possible.clone_from(&source.possible);
        cpus.clone_from(&source.cpus);
        *cmm_pages = source.cmm_pages;
        *polarization = source.polarization;
        *proc_bytes = source.proc_bytes;
    }
}

impl Sample {
    /// Converts the kept /proc/loadavg text into both loads (rules that
    /// read them were loaded after this reading was taken).
    pub fn convert_loadavg(&mut self) {
        if let Some(text) = self.loadavg_text.take()
            && let Some((loadavg, runnable)) = text.parse()
        {
            self.loadavg = loadavg;
            self.runnable = runnable;
        }
    }

    /// A reading of `ticks` at `stamp` with CPUs 0..`online` of
    /// 0..`present` online and nothing else read (no per-CPU lines, empty
    /// /proc tables, no CMM): tests and tools fill in the rest with struct
    /// update syntax instead of spelling out every field.
    pub fn bare(stamp: Stamp, ticks: CpuTicks, online: u32, present: u32) -> Sample {
        Sample {
            stamp,
            ticks,
            per_cpu: Vec::new(),
            loadavg: 0.0,
            runnable: 0.0,
            loadavg_text: None,
            meminfo: FieldTable::from_pairs([]),
            vmstat: FieldTable::from_pairs([]),
            online: CpuList::first(online),
            present: CpuList::first(present),
            possible: None,
            cpus: Default::default(),
            cmm_pages: None,
            polarization: None,
            proc_bytes: ProcBytes::default(),
        }
    }

    /// For tests: [`Sample::bare`] with what a memory group reads, 4096 of
    /// 8192 KiB free, nothing swapped, the paging counters `pgpgin` and
    /// `pgpgout` as given, and a pool of `pool` pages.
    #[cfg(test)]
    pub(crate) fn with_memory(
        stamp: Stamp,
        ticks: CpuTicks,
        (online, present): (u32, u32),
        (pgpgin, pgpgout): (f64, f64),
        pool: i64,
    ) -> Sample {
        Sample {
            meminfo: FieldTable::from_pairs([("MemFree", 4096.0), ("MemTotal", 8192.0)]),
            vmstat: FieldTable::from_pairs([
                ("pswpin", 0.0),
                ("pswpout", 0.0),
                ("pgpgin", pgpgin),
                ("pgpgout", pgpgout),
            ]),
            cmm_pages: Some(pool),
            ..Sample::bare(stamp, ticks, online, present)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy into a sample that held other lists and tables is the
    /// source, field for field (the watch keeps its previous reading so).
    #[test]
    fn a_copy_into_another_sample_is_the_source() {
        let ticks = CpuTicks {
            user: 7,
            idle: 9,
            ..CpuTicks::default()
        };
        let source = Sample {
            per_cpu: vec![(0, ticks), (3, ticks)],
            meminfo: FieldTable::from_pairs([("MemFree", 5.0), ("MemTotal", 9.0)]),
            possible: Some(CpuList::first(8)),
            cmm_pages: Some(12),
            polarization: Some(Polarization::Vertical),
            cpus: vec![CpuState {
                id: 3,
                online: Some(true),
                configured: None,
            }]
            .into(),
            ..Sample::bare(Stamp::new(5, 7), ticks, 2, 4)
        };
        let mut copy = Sample {
            vmstat: FieldTable::from_pairs([("pgpgin", 1.0)]),
            ..Sample::bare(Stamp::new(1, 0), CpuTicks::default(), 64, 64)
        };
        copy.clone_from(&source);
        assert_eq!(format!("{copy:?}"), format!("{source:?}"));
        assert_eq!(format!("{:?}", source.clone()), format!("{source:?}"));
    }
}
