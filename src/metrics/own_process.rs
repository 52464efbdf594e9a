//! The `process_*` families of plugtop's own process, read from
//! /proc/self when a scrape comes (on the endpoint's thread, never in the
//! control loop). Reads are bounded: /proc/self/stat is one short line,
//! and no more than [`STAT_BYTES`] of it is read, the descriptors counted
//! are at most [`MAX_FDS_COUNTED`].
//!
//! Only the HTTP endpoint has them: node_exporter exposes its own
//! `process_*`, and a textfile with the same names would clash with them.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;

use super::families::help;

/// More than /proc/self/stat ever holds (52 numbers and a 16-byte name).
const STAT_BYTES: u64 = 4096;

/// Counting stops here: the endpoint keeps descriptors well below it.
const MAX_FDS_COUNTED: usize = 1 << 20;

/// What /proc/self/stat says, in units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    pub cpu_seconds: f64,
    pub threads: i64,
    pub virtual_bytes: i64,
    pub resident_bytes: i64,
    /// Seconds after boot the process started.
    pub started_after_boot: f64,
}

/// The fields of a /proc/PID/stat line (after the command name in
/// parentheses, which may hold spaces and parentheses itself).
pub fn parse_stat(text: &str, ticks_per_second: f64, page_size: i64) -> Option<Stat> {
    let (_, rest) = text.rsplit_once(')')?;
    // rest starts with " S ppid ...": field 3 of the line is its first.
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<i64>().ok());
    let ticks = |n: usize| field(n).map(|t| t as f64 / ticks_per_second);
    Some(Stat {
        cpu_seconds: ticks(14)? + ticks(15)?,
        threads: field(20)?,
        started_after_boot: ticks(22)?,
        virtual_bytes: field(23)?,
        resident_bytes: field(24)?.saturating_mul(page_size),
    })
}

/// Encodes the process families at each scrape.
#[derive(Debug)]
pub struct ProcessCollector {
    ticks_per_second: f64,
    page_size: i64,
    /// When the process started, worked out once (it does not change).
    start_time: Option<f64>,
}

impl ProcessCollector {
    /// Reads the clock tick and page size, and the start time once.
    pub fn new() -> Self {
        let ticks_per_second = rustix::param::clock_ticks_per_second() as f64;
        let page_size = i64::try_from(rustix::param::page_size()).unwrap_or(4096);
        let mut collector = ProcessCollector {
            ticks_per_second: ticks_per_second.max(1.0),
            page_size,
            start_time: None,
        };
        collector.start_time = collector.stat().and_then(|s| start_time(&s));
        collector
    }

    fn stat(&self) -> Option<Stat> {
        let text = first_bytes("/proc/self/stat")?;
        parse_stat(&text, self.ticks_per_second, self.page_size)
    }
}

impl Default for ProcessCollector {
    fn default() -> Self {
        Self::new()
    }
}

/// The first [`STAT_BYTES`] of `path`, when it can be read.
fn first_bytes(path: &str) -> Option<String> {
    use crate::kernel::fs::{PastLimit, open_path, read_bounded};
    let bytes = read_bounded(
        &open_path(std::path::Path::new(path)).ok()?,
        STAT_BYTES,
        PastLimit::Cut,
    )
    .ok()?;
    String::from_utf8(bytes).ok()
}

/// The epoch time the process started ([`crate::kernel::processes::epoch_of`]).
fn start_time(stat: &Stat) -> Option<f64> {
    crate::kernel::processes::epoch_of(stat.started_after_boot)
}

/// Open descriptors, counted in /proc/self/fd (the directory's own
/// descriptor, open while it is read, not counted).
fn open_fds() -> Option<i64> {
    let entries = std::fs::read_dir("/proc/self/fd").ok()?;
    let n = entries.take(MAX_FDS_COUNTED).count();
    Some(i64::try_from(n.saturating_sub(1)).unwrap_or(i64::MAX))
}

fn max_fds() -> Option<i64> {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    limit.current.map(|n| i64::try_from(n).unwrap_or(i64::MAX))
}

/// One gauge family, when it has a value.
fn gauge<N: prometheus_client::encoding::EncodeGaugeValue + std::fmt::Debug>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    unit: Option<&Unit>,
    value: Option<N>,
) -> Result<(), std::fmt::Error> {
    let Some(v) = value else { return Ok(()) };
    let g = ConstGauge::new(v);
    let metric = encoder.encode_descriptor(name, help(name), unit, g.metric_type())?;
    g.encode(metric)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stat = self.stat();
        if let Some(s) = stat {
            let cpu = ConstCounter::new(s.cpu_seconds);
            let metric = encoder.encode_descriptor(
                "process_cpu",
                help("process_cpu"),
                Some(&Unit::Seconds),
                cpu.metric_type(),
            )?;
            cpu.encode(metric)?;
        }
        let e = &mut encoder;
        gauge(
            e,
            "process_resident_memory",
            Some(&Unit::Bytes),
            stat.map(|s| s.resident_bytes),
        )?;
        gauge(
            e,
            "process_virtual_memory",
            Some(&Unit::Bytes),
            stat.map(|s| s.virtual_bytes),
        )?;
        gauge(e, "process_open_fds", None, open_fds())?;
        gauge(e, "process_max_fds", None, max_fds())?;
        gauge(e, "process_threads", None, stat.map(|s| s.threads))?;
        gauge(
            e,
            "process_start_time",
            Some(&Unit::Seconds),
            self.start_time,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_a_hostile_name_is_read_after_its_last_parenthesis() {
        let line = "42 (a) b) (c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 1000 12345678 300 18446744073709551615\n";
        let s = parse_stat(line, 100.0, 4096).expect("parses");
        assert_eq!(s.cpu_seconds, 3.0);
        assert_eq!(s.threads, 3);
        assert_eq!(s.started_after_boot, 10.0);
        assert_eq!(s.virtual_bytes, 12_345_678);
        assert_eq!(s.resident_bytes, 300 * 4096);
        assert_eq!(parse_stat("42 (x S 1", 100.0, 4096), None);
        assert_eq!(parse_stat("42 (x) S 1 2", 100.0, 4096), None);
    }

    #[test]
    fn this_process_is_described() {
        let c = ProcessCollector::new();
        let s = c.stat().expect("/proc/self/stat");
        assert!(s.threads >= 1 && s.resident_bytes > 0, "{s:?}");
        assert!(open_fds().is_some_and(|n| n >= 3));
        assert!(c.start_time.is_some_and(|t| t > 1e9));
    }
}
