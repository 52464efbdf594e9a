//! `plugtop import`: the history a guest already keeps (sysstat's `sa`
//! files, node_exporter's series in Prometheus) and cpuplugd's own log,
//! written as a plugtop recording, so every consumer of recordings (the
//! screen, `eval`, `whatif`, the Flips view, `tune --replay`) explains an
//! incident that happened before anyone ran plugtop.
//!
//! What each source has is rebuilt into the readings plugtop would have
//! taken (tick counters from percentages or seconds, /proc/meminfo and
//! /proc/vmstat names from the source's own); what it does not have is
//! left out, never set to zero: a /proc name missing from the layouts,
//! a keyword named in the header's [`Provenance::absent`]. A gap in the
//! history stays a gap: no reading is made up to fill it.
//!
//! The recording is written through the one writer
//! ([`RecordingWriter`]) into a new file beside the output, renamed into
//! place only when the whole history was read: bad input writes nothing.

pub mod actions;
pub mod prometheus;
pub mod sysstat;

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use crate::kernel::cpulist::CpuList;
use crate::kernel::fields::{FieldTable, Layout};
use crate::kernel::fs::{FsError, Placing, Replace, Root};
use crate::kernel::recording::{GuestAction, Header, RecordingWriter};
use crate::kernel::{CpuTicks, Sample, Stamp};

/// USER_HZ: the kernel counts /proc/stat ticks in hundredths of a second
/// on every architecture plugtop runs on.
pub const TICKS_PER_SECOND: f64 = 100.0;

/// Why an import wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The input cannot be used; the text names the file and offset or
    /// the query.
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Place(#[from] FsError),
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// What an import did, for the summary it prints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub samples: u64,
    pub bytes: u64,
    /// "sysstat, 60 s".
    pub label: String,
    pub first: Option<Stamp>,
    pub last: Option<Stamp>,
    /// Gaps left as gaps: (the last reading before, the first after).
    pub gaps: Vec<(Stamp, Stamp)>,
    /// Readings the history lacks, as rules spell them.
    pub absent: Vec<String>,
    /// cpuplugd's actions laid on the history.
    pub actions: usize,
    /// Things the user should know that did not stop the import.
    pub warnings: Vec<String>,
}

/// The most gaps listed one by one in the summary.
const GAPS_LISTED: usize = 1000;

/// Where the samples of an import go: the recording is created at the
/// first sample (the header needs what the history says about itself)
/// and placed only when the producer finished without an error.
pub struct Output<'a> {
    writer: Option<RecordingWriter<&'a mut File>>,
    file: Option<&'a mut File>,
    header: Option<Header>,
    actions: Vec<actions::Logged>,
    shown: String,
    summary: Summary,
    /// The history's interval in microseconds: a step longer than 1.5 of
    /// it is a gap.
    gap_limit: u64,
}

impl<'a> Output<'a> {
    /// Sets the header to write before the first sample: the machine and
    /// the provenance (its actions are added here, those before the
    /// history's first reading left out).
    pub fn header(&mut self, header: Header) {
        self.header = Some(header);
    }

    /// Appends one reading; the recording's header is written before the
    /// first. A reading later than the one before by more than 1.5 of the
    /// history's interval (and by more than a second: sysstat's stamps are
    /// whole seconds) follows a gap, which is noted, not filled.
    pub fn push(&mut self, sample: &Sample) -> Result<(), ImportError> {
        if self.writer.is_none() {
            let Some(mut header) = self.header.take() else {
                return Err(ImportError::Input(
                    "internal: a reading before the header".into(),
                ));
            };
            let p = header.imported.get_or_insert_with(Box::default);
            let from = Stamp {
                micros: sample
                    .stamp
                    .micros
                    .saturating_sub(i64::try_from(p.resolution_us).unwrap_or(i64::MAX)),
            };
            let mut laid: Vec<GuestAction> = std::mem::take(&mut self.actions)
                .iter()
                .filter_map(|l| l.action(sample.stamp))
                .filter(|a| a.at > from)
                .collect();
            laid.sort_by_key(|a| a.at);
            p.actions = laid;
            self.summary.label = p.label();
            self.summary.absent = p.absent.clone();
            self.summary.actions = p.actions.len();
            self.gap_limit = p.resolution_us;
            let Some(file) = self.file.take() else {
                return Err(ImportError::Input("internal: no file".into()));
            };
            self.writer =
                Some(RecordingWriter::new(file, &header).map_err(|e| self.write_error(e))?);
        }
        if let Some(last) = self.summary.last {
            let gap = sample.stamp.micros.saturating_sub(last.micros);
            // Whole-second stamps (sysstat's) jitter by up to a second.
            let late = gap.saturating_sub(i64::try_from(self.gap_limit).unwrap_or(i64::MAX));
            if gap as f64 > 1.5 * self.gap_limit as f64 && late > 1_000_000 {
                if self.summary.gaps.len() < GAPS_LISTED {
                    self.summary.gaps.push((last, sample.stamp));
                }
            } else if gap <= 0 {
                return Err(ImportError::Input(format!(
                    "a reading at {} does not come after the one before at {}: the history is out of order",
                    crate::report::time_of_day(sample.stamp),
                    crate::report::time_of_day(last)
                )));
            }
        }
        let Some(writer) = self.writer.as_mut() else {
            return Ok(());
        };
        let written = writer.append(sample);
        written.map_err(|e| self.write_error(e))?;
        self.summary.samples += 1;
        self.summary.first.get_or_insert(sample.stamp);
        self.summary.last = Some(sample.stamp);
        Ok(())
    }

    /// Actions known otherwise than from cpuplugd's log (what plugtop run
    /// applied, from its metrics); before the first reading.
    pub fn add_actions(&mut self, more: Vec<GuestAction>) {
        self.actions
            .extend(more.into_iter().map(|a| actions::Logged {
                when: actions::When::At(a.at),
                text: a.text,
            }));
    }

    /// A warning for the summary.
    pub fn warn(&mut self, text: String) {
        if self.summary.warnings.len() < 100 {
            self.summary.warnings.push(text);
        }
    }

    fn write_error(&self, source: std::io::Error) -> ImportError {
        ImportError::Write {
            path: self.shown.clone(),
            source,
        }
    }
}

impl Summary {
    /// The summary's lines, as `plugtop import` prints them.
    pub fn lines(&self, path: &Path) -> Vec<String> {
        let mut out = vec![format!(
            "imported {} ({}) to {}: {} bytes",
            crate::report::words::count(self.samples as f64, "reading", "readings"),
            self.label,
            path.display(),
            self.bytes
        )];
        if let (Some(first), Some(last)) = (self.first, self.last) {
            out.push(format!(
                "from {} to {} (UTC)",
                clock_day(first),
                clock_day(last)
            ));
        }
        for (before, after) in &self.gaps {
            out.push(format!(
                "gap: no readings from {} to {} (left as a gap, nothing made up)",
                clock_day(*before),
                clock_day(*after)
            ));
        }
        if !self.absent.is_empty() {
            out.push(format!(
                "not in this history: {} (rules naming them are not decided)",
                self.absent.join(", ")
            ));
        }
        if self.actions > 0 {
            out.push(format!(
                "{} of cpuplugd's actions laid on the readings",
                self.actions
            ));
        }
        for w in &self.warnings {
            out.push(format!("warning: {w}"));
        }
        out
    }
}

/// Creates `path` (never over an existing file) from what `produce`
/// pushes, whole or not at all: on any error nothing is left behind.
pub fn write_recording(
    path: &Path,
    actions: Vec<actions::Logged>,
    produce: impl FnOnce(&mut Output<'_>) -> Result<(), ImportError>,
) -> Result<Summary, ImportError> {
    let (dir, name) = Root::of_file(path)?;
    dir.check(Path::new(&name), Replace::Nothing)?;
    let shown = path.display().to_string();
    dir.write_streamed(
        Path::new(&name),
        Placing::new(Replace::Nothing),
        |file, _| {
            let mut out = Output {
                writer: None,
                file: Some(file),
                header: None,
                actions,
                shown: shown.clone(),
                summary: Summary::default(),
                gap_limit: 0,
            };
            produce(&mut out)?;
            let Some(writer) = out.writer else {
                return Err(ImportError::Input(
                    "the history holds no readings: nothing to import".into(),
                ));
            };
            let mut summary = out.summary;
            summary.bytes = writer.bytes();
            writer
                .into_inner()
                .sync_all()
                .map_err(|source| ImportError::Write {
                    path: shown.clone(),
                    source,
                })?;
            Ok(summary)
        },
    )
}

/// `YYYY-MM-DD HH:MM:SS` of a stamp (UTC).
pub fn clock_day(t: Stamp) -> String {
    match chrono::DateTime::from_timestamp(t.secs(), 0) {
        Some(d) => d.format("%Y-%m-%d %H:%M:%S").to_string(),
        None => crate::report::time_of_day(t),
    }
}

/// Seconds since the epoch of a UTC date and time of day as sysstat and
/// logs write them (`2024-05-01`, `03:10:22`).
pub fn utc_seconds(date: &str, time: &str) -> Option<i64> {
    let num = |s: &str| s.parse::<u32>().ok();
    let mut d = date.split('-');
    let (y, m, day) = (
        d.next()?.parse::<i32>().ok()?,
        num(d.next()?)?,
        num(d.next()?)?,
    );
    let mut t = time.split(':');
    let (hh, mm, ss) = (num(t.next()?)?, num(t.next()?)?, num(t.next()?)?);
    if d.next().is_some() || t.next().is_some() {
        return None;
    }
    Some(
        chrono::NaiveDate::from_ymd_opt(y, m, day)?
            .and_hms_opt(hh, mm, ss)?
            .and_utc()
            .timestamp(),
    )
}

/// A /proc table's names kept from reading to reading: a new layout only
/// when the names change, so the recording holds one layout record, not
/// one per reading.
#[derive(Debug, Default)]
pub struct NamedTable {
    names: Vec<String>,
    layout: Option<Arc<Layout>>,
}

impl NamedTable {
    /// A table of these (name, value) pairs, in order.
    pub fn of<S: AsRef<str>>(&mut self, pairs: &[(S, f64)]) -> FieldTable {
        let same = self.layout.is_some()
            && self.names.len() == pairs.len()
            && self
                .names
                .iter()
                .zip(pairs)
                .all(|(a, (b, _))| a == b.as_ref());
        if !same {
            self.names = pairs.iter().map(|(n, _)| n.as_ref().to_string()).collect();
            self.layout = Some(Arc::new(Layout::of(self.names.iter().map(String::as_str))));
        }
        let layout = match &self.layout {
            Some(l) => Arc::clone(l),
            None => Arc::new(Layout::of([])),
        };
        FieldTable::new(layout, pairs.iter().map(|(_, v)| *v).collect())
    }
}

/// Tick counters rebuilt from shares of an interval: the exact sums are
/// kept and each counter is that sum rounded to the nearest tick, so the
/// rounding of one interval is made up by the next and never adds up.
#[derive(Debug, Clone, Default)]
pub struct TickCounter {
    exact: [f64; 10],
}

impl TickCounter {
    /// Adds `ticks` (exact, in /proc/stat order).
    pub fn add(&mut self, ticks: [f64; 10]) {
        for (e, t) in self.exact.iter_mut().zip(ticks) {
            *e += t.max(0.0);
        }
    }

    /// Sets the counters to these totals (a source that keeps counters).
    pub fn set(&mut self, ticks: [f64; 10]) {
        self.exact = ticks;
    }

    /// The counters now, rounded to whole ticks.
    pub fn ticks(&self) -> CpuTicks {
        CpuTicks::from_columns(self.exact.map(|e| e.round().max(0.0) as u64))
    }
}

/// A reading of what a history gives, in the shape plugtop records: the
/// CPUs online (their numbers, sorted), present CPUs, the counters.
pub struct RebuiltReading {
    pub stamp: Stamp,
    pub all: CpuTicks,
    pub per_cpu: Vec<(u32, CpuTicks)>,
    pub online: Vec<u32>,
    pub present: u32,
    pub loadavg: f64,
    pub runnable: f64,
    pub meminfo: FieldTable,
    pub vmstat: FieldTable,
}

/// The sample of a reading: what a history never has (per-CPU sysfs
/// state, `cmm_pages`, polarization) is absent, as on a machine without it.
pub fn sample(r: RebuiltReading) -> Sample {
    let count = i32::try_from(r.online.len()).unwrap_or(i32::MAX);
    let mut s = Sample::bare(r.stamp, r.all, 0, r.present);
    s.per_cpu = r.per_cpu;
    s.online = CpuList {
        ids: r.online.into(),
        count,
    };
    s.loadavg = r.loadavg;
    s.runnable = r.runnable;
    s.meminfo = r.meminfo;
    s.vmstat = r.vmstat;
    s
}

/// Finds `program` on `PATH` (an executable regular file), as a shell would.
pub fn on_path(program: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
