//! node_exporter's series in the site's Prometheus, read back through the
//! fleet view's one client ([`crate::fleet::query`]: timeouts, a bounded
//! body, decoding that refuses surprises) and rebuilt into readings:
//!
//! - `/proc/stat` ticks from `node_cpu_seconds_total{cpu, mode}` (× 100,
//!   USER_HZ, rounded to the tick; node_exporter reads them from
//!   /proc/stat, so these are the kernel's own counters), guest time from
//!   `node_cpu_guest_seconds_total` (absent when the exporter has none);
//!   the `cpu` line is the sum of the CPUs'. A CPU with no series at a
//!   time is offline then.
//! - `/proc/meminfo` from `node_memory_<Name>_bytes` (÷ 1024: kB, as the
//!   kernel writes it; `_kB` and `_bytes` both end the same way there).
//! - `/proc/vmstat` from `node_vmstat_<name>`.
//! - `/proc/loadavg` from `node_load1` and `node_procs_running`.
//!
//! The range is read in windows of at most [`WINDOW_POINTS`] steps, each
//! written before the next is asked for, so memory stays that of one
//! window however long the range. A step at which a series has no value
//! is a gap for that reading (no CPU series: no reading at all), and a
//! step that only repeats the scrape before it is left out: neither makes
//! up an interval. One query first finds where the CPU series has samples
//! ([`Extent`]): windows that cannot hold any are not asked, and the
//! scrape interval is probed where the samples are.

use std::collections::BTreeMap;

use super::{ImportError, NamedTable, Output, RebuiltReading, TickCounter, sample};
use crate::fleet::query::{PromSeries, Prometheus, QueryError};
use crate::kernel::recording::{GuestAction, Header, Provenance};
use crate::kernel::{CpuTicks, Stamp};
use crate::number::brief;

/// Steps per range query: Prometheus answers at most 11,000 points per
/// series, and a window of this many keeps one answer a few MiB for a
/// large guest.
pub const WINDOW_POINTS: usize = 720;

/// What to import and from where.
pub struct PromOptions<'a> {
    pub instance: &'a str,
    pub from: f64,
    pub to: f64,
    /// Seconds between readings (default: the series' own scrape interval,
    /// found from the first samples).
    pub step: Option<f64>,
    /// How the source is named in messages (the URL).
    pub url: &'a str,
    /// The `instance` label of the guest's `plugtop run --metrics-listen`,
    /// when it has one: the actions it applied come along.
    pub plugtop_instance: Option<&'a str>,
}

/// The /proc/stat column of each node_exporter mode.
fn mode_column(mode: &str) -> Option<usize> {
    Some(match mode {
        "user" => 0,
        "nice" => 1,
        "system" => 2,
        "idle" => 3,
        "iowait" => 4,
        "irq" => 5,
        "softirq" => 6,
        "steal" => 7,
        _ => return None,
    })
}

/// The latest time, in seconds from 1970 (and the earliest, negated), that
/// Prometheus's API takes: its own `maxTime`, `i64::MAX` milliseconds less
/// the seconds from year 1 to 1970.
const PROMETHEUS_LATEST: f64 = 9_223_309_901_257_974.0;

/// The options checked before any query: times in order and within what
/// Prometheus takes, an instance that is a plain label value, a step of a
/// millisecond or more.
fn checked(options: &PromOptions<'_>) -> Result<(), ImportError> {
    let PromOptions {
        instance,
        from,
        to,
        step,
        ..
    } = *options;
    if !(from.is_finite() && to.is_finite() && from < to) {
        return Err(ImportError::Input(format!(
            "--from must come before --to ({} .. {})",
            brief(from),
            brief(to)
        )));
    }
    for (option, t) in [("--from", from), ("--to", to)] {
        if t.abs() > PROMETHEUS_LATEST {
            return Err(ImportError::Input(format!(
                "{option} {} is beyond the times Prometheus takes (at most {PROMETHEUS_LATEST} s from 1970, either way)",
                brief(t)
            )));
        }
    }
    if instance.contains(['"', '\\', '\n']) {
        return Err(ImportError::Input(format!(
            "--instance {instance:?}: a label value without quotes or backslashes"
        )));
    }
    if let Some(s) = step
        && !(s.is_finite() && s >= 0.001)
    {
        return Err(ImportError::Input(if s > 0.0 && s.is_finite() {
            format!(
                "--step {} is shorter than 0.001 s, the shortest step (Prometheus counts milliseconds)",
                brief(s)
            )
        } else {
            format!(
                "--step must be a positive number of seconds, not {}",
                brief(s)
            )
        }));
    }
    Ok(())
}

/// Reads the instance's series from `prom` into `out`.
pub fn import(
    prom: &dyn Prometheus,
    options: &PromOptions<'_>,
    out: &mut Output<'_>,
) -> Result<(), ImportError> {
    let PromOptions {
        instance,
        from,
        to,
        step,
        url,
        plugtop_instance,
    } = *options;
    checked(options)?;
    let sel = format!("{{instance=\"{instance}\"}}");
    let fail = |query: &str, e: QueryError| {
        // A refusal over the points asked for (Prometheus answers at most
        // 11,000 a series) is mended by a coarser step; any other is said
        // as Prometheus said it.
        let advice = match &e {
            QueryError::Refused(_, why) if why.contains("resolution") || why.contains("points") => {
                "; give a larger --step"
            }
            _ => "",
        };
        ImportError::Input(format!("{url}: the query {query}: {e}{advice}"))
    };
    // Where the series has samples at all: the scrape interval is probed
    // there, and the windows before, after and between are not asked.
    let Some(extent) = Extent::find(prom, &sel, from, to).map_err(|(q, e)| fail(&q, e))? else {
        return Err(ImportError::Input(format!(
            "{url}: the query node_cpu_seconds_total{sel} answered no series: no node_exporter CPU series for instance {instance:?} from {} to {} (check --instance against `up{{instance=...}}`)",
            super::clock_day(Stamp::new(from as i64, 0)),
            super::clock_day(Stamp::new(to as i64, 0))
        )));
    };
    let step = match step {
        Some(s) => s,
        None => match scrape_interval(prom, &sel, &extent).map_err(|(q, e)| fail(&q, e))? {
            Some(s) => s,
            None => {
                out.warn(format!(
                    "{url}: cannot tell the scrape interval of {instance:?} (fewer than two of its samples in the 10 minutes up to {}); assuming 60 s; give --step",
                    super::clock_day(Stamp::new(extent.last as i64, 0))
                ));
                60.0
            }
        },
    };
    if let Some(pi) = plugtop_instance {
        let applied = applied_actions(prom, pi, from, to, step).map_err(|(q, e)| fail(&q, e))?;
        out.add_actions(applied);
    }
    let queries = Queries::new(&sel);
    let mut state = NodeImport::default();
    let step_ms = ((step * 1000.0).round() as i64).max(1);
    let from_ms = (from * 1000.0).round() as i64;
    let to_ms = (to.min(extent.last) * 1000.0).round() as i64;
    // The first step of --from's grid that can see the first sample.
    let skip_ms = (((extent.first - extent.edge) * 1000.0).round() as i64)
        .saturating_sub(from_ms)
        .max(0);
    let mut t_ms = from_ms.saturating_add(skip_ms / step_ms * step_ms);
    while t_ms <= to_ms {
        let end_ms = t_ms
            .saturating_add(step_ms.saturating_mul(WINDOW_POINTS as i64 - 1))
            .min(to_ms);
        if !extent.has_samples(t_ms as f64 / 1000.0, end_ms as f64 / 1000.0) {
            t_ms = end_ms.saturating_add(step_ms);
            continue;
        }
        let mut answers = Vec::with_capacity(queries.all.len());
        for q in &queries.all {
            let a = prom
                .range(
                    q,
                    t_ms as f64 / 1000.0,
                    end_ms as f64 / 1000.0,
                    step_ms as f64 / 1000.0,
                )
                .map_err(|e| fail(q, e))?;
            for w in a.warnings {
                out.warn(format!("{url}: {q}: {w}"));
            }
            answers.push(a.data);
        }
        state.window(&answers, t_ms, end_ms, step_ms, instance, out)?;
        t_ms = end_ms.saturating_add(step_ms);
    }
    if state.readings == 0 {
        return Err(ImportError::Input(format!(
            "{url}: instance {instance:?} has CPU series but no reading in this range"
        )));
    }
    Ok(())
}

/// What `plugtop run` on the guest applied (`plugtop_applied_actions_total`
/// by `action`), as actions at the step where each counter rose; read in
/// windows as the series are, bounded by
/// [`MOST_ACTIONS`](super::actions::MOST_ACTIONS). A counter that falls
/// (plugtop restarted) starts again from its new value.
fn applied_actions(
    prom: &dyn Prometheus,
    instance: &str,
    from: f64,
    to: f64,
    step: f64,
) -> Result<Vec<GuestAction>, (String, QueryError)> {
    if instance.contains(['"', '\\', '\n']) {
        return Err((
            instance.to_string(),
            QueryError::BadUrl("a label value without quotes or backslashes".into()),
        ));
    }
    let q = format!("plugtop_applied_actions_total{{instance=\"{instance}\"}}");
    let span = step * (WINDOW_POINTS - 1) as f64;
    let mut last: BTreeMap<String, f64> = BTreeMap::new();
    let mut found = Vec::new();
    let mut t = from;
    while t <= to && found.len() < super::actions::MOST_ACTIONS {
        let end = (t + span).min(to);
        let a = prom.range(&q, t, end, step).map_err(|e| (q.clone(), e))?;
        for s in &a.data {
            let action = s.labels.get("action").cloned().unwrap_or_default();
            let words = match action.as_str() {
                "plug" => "plugtop plugged a CPU",
                "unplug" => "plugtop unplugged a CPU",
                "pool_up" => "plugtop grew the CMM pool",
                "pool_down" => "plugtop shrank the CMM pool",
                _ => continue,
            };
            for (pt, v) in &s.points {
                let before = last.insert(action.clone(), *v);
                let rose = before.map_or(0.0, |b| v - b);
                if rose >= 1.0 {
                    found.push(GuestAction {
                        at: Stamp {
                            micros: (pt * 1e6).round() as i64,
                        },
                        text: if rose >= 2.0 {
                            format!("{words} ({rose} times)")
                        } else {
                            words.to_string()
                        },
                    });
                }
            }
        }
        t = end + step;
    }
    found.sort_by_key(|a| a.at);
    found.truncate(super::actions::MOST_ACTIONS);
    Ok(found)
}

/// The queries of one window, the CPU ticks first.
struct Queries {
    all: Vec<String>,
}

impl Queries {
    fn new(sel: &str) -> Queries {
        let all = vec![
            format!("node_cpu_seconds_total{sel}"),
            format!("node_cpu_guest_seconds_total{sel}"),
            format!("{{__name__=~\"node_memory_.+_bytes\",{}", &sel[1..]),
            format!("{{__name__=~\"node_vmstat_.+\",{}", &sel[1..]),
            format!("node_load1{sel}"),
            format!("node_procs_running{sel}"),
        ];
        Queries { all }
    }
}

/// How far back Prometheus looks for a sample at a step (its default
/// `--query.lookback-delta`), in seconds.
const LOOKBACK: f64 = 300.0;

/// Spans the window is cut into to find where the series has samples
/// (under the 11,000 points Prometheus answers a series).
const EXTENT_POINTS: f64 = 10_000.0;

/// Where in `--from .. --to` the instance's CPU series has samples: one
/// range query counting samples in spans of `span` seconds, at most
/// [`EXTENT_POINTS`] of them however long the window.
struct Extent {
    /// The span of each count, seconds.
    span: f64,
    /// The ends of the spans that hold samples (each counts the samples
    /// in `(t - span, t]`), in order.
    held: Vec<f64>,
    /// The first and last of them, as ends of spans `edge` long (looked
    /// at again, finer, when `span` is long).
    first: f64,
    last: f64,
    edge: f64,
}

impl Extent {
    fn find(
        prom: &dyn Prometheus,
        sel: &str,
        from: f64,
        to: f64,
    ) -> Result<Option<Extent>, (String, QueryError)> {
        let (span, held) = held_spans(prom, sel, from, to)?;
        let (Some(&(mut first)), Some(&(mut last))) = (held.first(), held.last()) else {
            return Ok(None);
        };
        // A long window's spans are long: its ends are looked at again,
        // finer, until a span is a minute at most (two more queries for a
        // year, four for a thousand), so the scrape interval is probed
        // where the last samples are.
        let mut fine = span;
        while fine > 60.0 {
            let (s, h) = held_spans(prom, sel, (first - fine).max(from), first.min(to))?;
            first = h.first().copied().unwrap_or(first);
            let (_, h) = held_spans(prom, sel, (last - fine).max(from), last.min(to))?;
            last = h.last().copied().unwrap_or(last);
            fine = s;
        }
        Ok(Some(Extent {
            span,
            held,
            first,
            last,
            edge: fine,
        }))
    }

    /// Whether a range query over `start..=end` can find a value: a sample
    /// in it, or up to [`LOOKBACK`] before it.
    fn has_samples(&self, start: f64, end: f64) -> bool {
        let i = self.held.partition_point(|t| *t <= start - LOOKBACK);
        self.held.get(i).is_some_and(|t| *t < end + self.span)
    }
}

/// The ends of the spans of `from .. to` (cut into at most
/// [`EXTENT_POINTS`], each a second at least) that hold samples of the
/// instance's CPU series, in order, and the spans' length.
fn held_spans(
    prom: &dyn Prometheus,
    sel: &str,
    from: f64,
    to: f64,
) -> Result<(f64, Vec<f64>), (String, QueryError)> {
    let span_ms = (((to - from) * 1000.0 / EXTENT_POINTS).ceil() as i64).max(1000);
    let span = span_ms as f64 / 1000.0;
    let q = format!(
        "count(count_over_time(node_cpu_seconds_total{{mode=\"idle\",{}}}[{span_ms}ms]))",
        &sel[1..sel.len() - 1]
    );
    let a = prom
        .range(&q, from, to + span, span)
        .map_err(|e| (q.clone(), e))?;
    let mut held: Vec<f64> = a
        .data
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|(_, n)| *n > 0.0)
        .map(|(t, _)| *t)
        .collect();
    held.sort_by(f64::total_cmp);
    held.dedup();
    Ok((span, held))
}

/// The scrape interval of the instance's CPU series: the smallest step
/// between its timestamps in the last ten minutes it has samples in (a
/// guest or exporter that came up after --from, or went away before
/// --to, has none at the window's ends), else its first ten.
fn scrape_interval(
    prom: &dyn Prometheus,
    sel: &str,
    extent: &Extent,
) -> Result<Option<f64>, (String, QueryError)> {
    let q = format!(
        "timestamp(node_cpu_seconds_total{{mode=\"idle\",{}}})",
        &sel[1..sel.len() - 1]
    );
    let first = extent.first - extent.edge;
    // Where the timestamp changes is a scrape.
    for (start, end) in [
        ((extent.last - 600.0).max(first), extent.last),
        (first, (first + 600.0).min(extent.last)),
    ] {
        let a = prom
            .range(&q, start, end, 1.0)
            .map_err(|e| (q.clone(), e))?;
        let mut best = f64::INFINITY;
        if let Some(s) = a.data.first() {
            let mut last: Option<f64> = None;
            for (_, v) in &s.points {
                if let Some(l) = last
                    && *v > l
                {
                    best = best.min(*v - l);
                }
                last = Some(*v);
            }
        }
        if best.is_finite() && best > 0.0 {
            return Ok(Some(best));
        }
    }
    Ok(None)
}

#[derive(Default)]
struct NodeImport {
    header_given: bool,
    /// The `cpu` line's total ticks of the last reading.
    last_total: Option<u64>,
    readings: u64,
    meminfo: NamedTable,
    vmstat: NamedTable,
}

/// A series' value at `t` (matched to the millisecond, as the API
/// writes times).
fn at(s: &PromSeries, t: i64) -> Option<f64> {
    s.points
        .binary_search_by_key(&t, |(pt, _)| (pt * 1000.0).round() as i64)
        .ok()
        .map(|i| s.points[i].1)
}

/// Each CPU's series by its number, with the /proc/stat column of each.
type CpuSeries<'a> = BTreeMap<u32, Vec<(usize, &'a PromSeries)>>;

fn cpus_by_number<'a>(cpu: &'a [PromSeries], guest: &'a [PromSeries]) -> CpuSeries<'a> {
    let cpu_of = |s: &PromSeries| -> Option<u32> {
        s.labels
            .get("cpu")?
            .parse::<u32>()
            .ok()
            .filter(|c| *c < 65_536)
    };
    let mut cpus: CpuSeries<'a> = BTreeMap::new();
    for s in cpu {
        if let (Some(c), Some(col)) = (cpu_of(s), s.labels.get("mode").and_then(|m| mode_column(m)))
        {
            cpus.entry(c).or_default().push((col, s));
        }
    }
    for s in guest {
        let col = match s.labels.get("mode").map(String::as_str) {
            Some("user") => 8,
            Some("nice") => 9,
            _ => continue,
        };
        if let Some(c) = cpu_of(s) {
            cpus.entry(c).or_default().push((col, s));
        }
    }
    cpus
}

/// The `cpu` line and the `cpuN` lines at `t`; `None` when no CPU has a
/// value then (a gap). A CPU without values at `t` is offline then.
fn ticks_at(cpus: &CpuSeries<'_>, t: i64) -> Option<(CpuTicks, Vec<(u32, CpuTicks)>)> {
    let mut per_cpu = Vec::with_capacity(cpus.len());
    let mut all = [0.0f64; 10];
    for (c, series) in cpus {
        let mut cols = [0.0f64; 10];
        let mut seen = false;
        for (col, s) in series {
            if let Some(v) = at(s, t) {
                cols[*col] = v * super::TICKS_PER_SECOND;
                seen = true;
            }
        }
        if seen {
            for (a, v) in all.iter_mut().zip(cols) {
                *a += v;
            }
            let mut counter = TickCounter::default();
            counter.set(cols);
            per_cpu.push((*c, counter.ticks()));
        }
    }
    if per_cpu.is_empty() {
        return None;
    }
    let mut counter = TickCounter::default();
    counter.set(all);
    Some((counter.ticks(), per_cpu))
}

/// The values at `t` of the series named `prefix<name>suffix`, by name.
fn table_at<'a>(
    series: &'a [PromSeries],
    prefix: &str,
    suffix: &str,
    t: i64,
    scale: f64,
) -> Vec<(&'a str, f64)> {
    let mut out: Vec<(&str, f64)> = series
        .iter()
        .filter_map(|s| {
            let name = s
                .labels
                .get("__name__")?
                .strip_prefix(prefix)?
                .strip_suffix(suffix)?;
            at(s, t).map(|v| (name, (v / scale).round()))
        })
        .collect();
    out.sort_by_key(|(n, _)| meminfo_order(n));
    out
}

impl NodeImport {
    fn window(
        &mut self,
        answers: &[Vec<PromSeries>],
        start_ms: i64,
        end_ms: i64,
        step_ms: i64,
        instance: &str,
        out: &mut Output<'_>,
    ) -> Result<(), ImportError> {
        let [cpu, guest, memory, vmstat, load, running] = answers else {
            return Ok(());
        };
        let cpus = cpus_by_number(cpu, guest);
        let present = cpus.keys().next_back().map_or(0, |l| l + 1);
        for t in (start_ms..=end_ms).step_by(step_ms as usize) {
            // No CPU series at this step: a gap, left as one.
            let Some((all, per_cpu)) = ticks_at(&cpus, t) else {
                continue;
            };
            // The same scrape again (the step is finer than the scrapes,
            // or a scrape came late): not a new reading, so no interval of
            // zero ticks is made up. Time always adds ticks, idle ones too.
            if self.last_total == Some(all.total()) {
                continue;
            }
            self.last_total = Some(all.total());
            let first = |v: &Vec<PromSeries>| v.first().and_then(|s| at(s, t));
            let stamp = Stamp {
                micros: t.saturating_mul(1000),
            };
            if !self.header_given {
                self.header_given = true;
                let mut absent = Vec::new();
                if guest.is_empty() {
                    absent.extend(["guest".to_string(), "guest_nice".to_string()]);
                }
                if load.is_empty() {
                    absent.push("loadavg".into());
                }
                if running.is_empty() {
                    absent.push("runnable_proc".into());
                }
                out.header(header(instance, present, step_ms, stamp, absent));
            }
            let online: Vec<u32> = per_cpu.iter().map(|(c, _)| *c).collect();
            let reading = RebuiltReading {
                stamp,
                all,
                per_cpu,
                online,
                present,
                loadavg: first(load).unwrap_or(0.0),
                runnable: first(running).unwrap_or(0.0),
                meminfo: self
                    .meminfo
                    .of(&table_at(memory, "node_memory_", "_bytes", t, 1024.0)),
                vmstat: self
                    .vmstat
                    .of(&table_at(vmstat, "node_vmstat_", "", t, 1.0)),
            };
            out.push(&sample(reading))?;
            self.readings += 1;
        }
        Ok(())
    }
}

/// The recording's header for node_exporter's series of `instance`.
fn header(
    instance: &str,
    present: u32,
    step_ms: i64,
    started: Stamp,
    absent: Vec<String>,
) -> Header {
    let name: String = instance.chars().take(256).collect();
    Header {
        host: name.clone(),
        kernel: "unknown".into(),
        cpu_model: "unknown (from node_exporter)".into(),
        root: name,
        page_size: 4096,
        present_cpus: present,
        interval_us: step_ms as u64 * 1000,
        started,
        imported: Some(Box::new(Provenance {
            source: "node_exporter".into(),
            resolution_us: step_ms as u64 * 1000,
            absent,
            actions: Vec::new(),
        })),
    }
}

/// /proc/meminfo's own order for the names it starts with, the rest after
/// by name: rules read the first line of a name, and a table in the
/// kernel's order reads like the kernel's.
fn meminfo_order(name: &str) -> (usize, &str) {
    const ORDER: [&str; 8] = [
        "MemTotal",
        "MemFree",
        "MemAvailable",
        "Buffers",
        "Cached",
        "SwapCached",
        "Active",
        "Inactive",
    ];
    (
        ORDER.iter().position(|n| *n == name).unwrap_or(ORDER.len()),
        name,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::query::{PromAnswer, PromPoint, PromSeries};

    /// node_exporter scraped every 2 s from `first` on, nothing before.
    struct LateSeries {
        first: f64,
    }

    impl Prometheus for LateSeries {
        fn instant(&self, _: &str, _: f64) -> Result<PromAnswer<Vec<PromPoint>>, QueryError> {
            Err(QueryError::Transport("not used".into()))
        }

        fn range(
            &self,
            _: &str,
            start: f64,
            end: f64,
            step: f64,
        ) -> Result<PromAnswer<Vec<PromSeries>>, QueryError> {
            let points: Vec<(f64, f64)> = (0..)
                .map(|i| start + f64::from(i) * step)
                .take_while(|t| *t <= end)
                .filter(|t| *t >= self.first)
                .map(|t| (t, self.first + 2.0 * ((t - self.first) / 2.0).floor()))
                .collect();
            let data = if points.is_empty() {
                Vec::new()
            } else {
                vec![PromSeries {
                    labels: Default::default(),
                    points,
                }]
            };
            Ok(PromAnswer {
                data,
                warnings: Vec::new(),
            })
        }
    }

    #[test]
    fn the_scrape_interval_is_found_where_the_series_has_samples() {
        // newuser51 #7: the series starts 40 minutes into an hour's window.
        let from = 1_700_000_000.0;
        let prom = LateSeries {
            first: from + 2400.0,
        };
        let sel = "{instance=\"g:9100\"}";
        let extent = Extent::find(&prom, sel, from, from + 3600.0)
            .ok()
            .flatten()
            .expect("samples found");
        assert!(extent.first >= from + 2400.0 && extent.first < from + 2401.0);
        assert!(!extent.has_samples(from, from + 2000.0));
        assert!(extent.has_samples(from, from + 2400.0));
        assert_eq!(scrape_interval(&prom, sel, &extent).ok(), Some(Some(2.0)));
        // No sample anywhere: no extent (the import says "no series").
        let never = LateSeries { first: f64::MAX };
        assert!(
            Extent::find(&never, sel, from, from + 3600.0)
                .ok()
                .is_some_and(|e| e.is_none())
        );
    }
}
