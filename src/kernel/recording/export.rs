//! Samples back to files: one conformance-format snapshot directory per
//! sample (proc/, sys/ and `time`), so an incident recorded on a guest can be
//! attached to a bug report and become a test case.

use std::fmt::Write as _;

use crate::kernel::cpulist::CpuList;
use crate::kernel::root::paths;
use crate::kernel::{CpuTicks, Polarization, Sample};

/// Where the files of a written root go: the same text serves a served
/// simulated guest and exported snapshots, each writing as it must (see
/// [`StagedFiles`](crate::kernel::fs::StagedFiles)). Any
/// `FnMut(rel, text)` is one, to filter or prefix the names.
pub trait RootSink {
    /// What a failed write says.
    type Error;
    /// Writes `text` as the file `rel` (relative to the root, `proc/stat`).
    fn put(&mut self, rel: &str, text: &str) -> Result<(), Self::Error>;
}

impl<F, E> RootSink for F
where
    F: FnMut(&str, &str) -> Result<(), E>,
{
    type Error = E;
    fn put(&mut self, rel: &str, text: &str) -> Result<(), E> {
        self(rel, text)
    }
}

impl RootSink for crate::kernel::fs::StagedFiles<'_> {
    type Error = crate::kernel::fs::FsError;
    fn put(&mut self, rel: &str, text: &str) -> Result<(), Self::Error> {
        self.stage(rel, text.as_bytes())
    }
}

/// Puts `sample` as snapshot number `index` into `sink` (`000042/proc/stat`,
/// ..., `000042/time`).
pub fn write_snapshot<S: RootSink>(
    sink: &mut S,
    index: usize,
    sample: &Sample,
) -> Result<(), S::Error> {
    let mut below = |rel: &str, text: &str| sink.put(&format!("{index:06}/{rel}"), text);
    write_root(&mut below, sample)?;
    below(
        "time",
        &format!(
            "{}.{:06}\n",
            sample.stamp.secs(),
            sample.stamp.subsec_micros()
        ),
    )
}

/// Puts `sample` as the /proc and /sys files of a root into `sink`, so any
/// reader of a root directory (plugtop, cpuplugd in a chroot, scripts)
/// sees it.
pub fn write_root<S: RootSink>(sink: &mut S, sample: &Sample) -> Result<(), S::Error> {
    let mut put = |rel: &str, text: &str| sink.put(rel, text);
    let mut stat = String::new();
    ticks_line(&mut stat, "cpu ", &sample.ticks);
    for (id, t) in &sample.per_cpu {
        ticks_line(&mut stat, &format!("cpu{id}"), t);
    }
    put(paths::STAT, &stat)?;
    put(
        paths::LOADAVG,
        &format!(
            "{} 0.00 0.00 {}/1 1\n",
            number(sample.loadavg),
            number(sample.runnable)
        ),
    )?;
    let mut meminfo = String::new();
    for (name, v) in sample.meminfo.iter() {
        let _ = writeln!(meminfo, "{name}: {} kB", number(v));
    }
    put(paths::MEMINFO, &meminfo)?;
    let mut vmstat = String::new();
    for (name, v) in sample.vmstat.iter() {
        let _ = writeln!(vmstat, "{name} {}", number(v));
    }
    put(paths::VMSTAT, &vmstat)?;
    if let Some(pages) = sample.cmm_pages {
        put(paths::CMM_PAGES, &format!("{pages}\n"))?;
    }
    put(paths::ONLINE, &format!("{}\n", ranges(&sample.online)))?;
    put(paths::PRESENT, &format!("{}\n", ranges(&sample.present)))?;
    if let Some(possible) = &sample.possible {
        put(paths::POSSIBLE, &format!("{}\n", ranges(possible)))?;
    }
    if let Some(p) = sample.polarization {
        put(
            paths::DISPATCHING,
            if p == Polarization::Vertical {
                "1\n"
            } else {
                "0\n"
            },
        )?;
    }
    for cpu in sample.cpus.iter() {
        let base = format!("{}/cpu{}", paths::CPU_DIR, cpu.id);
        if let Some(online) = cpu.online {
            put(
                &format!("{base}/online"),
                if online { "1\n" } else { "0\n" },
            )?;
        }
        if let Some(configured) = cpu.configured {
            put(
                &format!("{base}/configure"),
                if configured { "1\n" } else { "0\n" },
            )?;
        }
    }
    Ok(())
}

fn ticks_line(out: &mut String, label: &str, t: &CpuTicks) {
    out.push_str(label);
    for c in t.columns() {
        let _ = write!(out, " {c}");
    }
    out.push('\n');
}

/// The shortest text that reads back as the same double.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A CPU list as sysfs prints it (`0-3,8`).
pub fn ranges(list: &CpuList) -> String {
    let mut out = String::new();
    let mut i = 0;
    let ids = &list.ids;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            let _ = write!(out, "{start}");
        } else {
            let _ = write!(out, "{start}-{end}");
        }
        i += 1;
    }
    out
}
