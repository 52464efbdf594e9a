//! Samples back to files: one conformance-format snapshot directory per
//! sample (proc/, sys/ and `time`), so an incident recorded on a guest can be
//! attached to a bug report and become a test case.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::kernel::cpulist::CpuList;
use crate::kernel::root::paths;
use crate::kernel::{CpuTicks, Polarization, Sample};

/// Writes `sample` as snapshot number `index` under `dir` (`dir/000042/...`).
pub fn write_snapshot(dir: &Path, index: usize, sample: &Sample) -> std::io::Result<()> {
    let root = dir.join(format!("{index:06}"));
    write_root(&root, sample)?;
    fs::write(
        root.join("time"),
        format!(
            "{}.{:06}\n",
            sample.stamp.secs(),
            sample.stamp.subsec_micros()
        ),
    )
}

/// Writes `sample` as the /proc and /sys files below `root`, so any reader
/// of a root directory (plugtop, cpuplugd in a chroot, scripts) sees it.
pub fn write_root(root: &Path, sample: &Sample) -> std::io::Result<()> {
    let put = |rel: &str, text: &str| -> std::io::Result<()> {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(path, text)
    };
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
    for cpu in &sample.cpus {
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
