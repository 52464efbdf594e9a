//! The figures a simulated run ends with, so rule files can be compared the
//! way the seed paper compares them: CPUs used, demand left unmet, guest
//! size against the working set, stalls, throughput, and how often the
//! rules changed their mind.

use std::fmt::Write as _;
use std::io::Write as _;

use serde::Serialize;

use crate::report::terminal_safe as safe;

/// One run's figures. The JSON keys are a stable interface (scripts and
/// trainers' material use them); add keys, never rename them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimReport {
    pub scenario: String,
    pub rules: String,
    /// Intervals decided.
    pub intervals: usize,
    /// Simulated seconds.
    pub seconds: f64,
    /// Online CPUs averaged over the intervals.
    pub avg_online_cpus: f64,
    /// Online CPUs averaged over simulated time (differs when an action
    /// lands mid-interval or the run ends between intervals).
    pub time_weighted_online_cpus: f64,
    /// CPU-seconds of demand that could not run (too few CPUs, steal).
    pub unmet_cpu_seconds: f64,
    /// MemTotal − CMM pool, averaged over the intervals.
    pub avg_guest_mib: f64,
    /// The workload's anonymous and shared memory, averaged likewise.
    pub avg_working_set_mib: f64,
    /// `avg_guest_mib / avg_working_set_mib` (0 without a working set).
    pub guest_to_working_set: f64,
    /// Model steps in which an allocation had to reclaim directly.
    pub direct_scan_stalls: u64,
    /// The working set's pages in swap, MiB, averaged over the intervals:
    /// what a guest smaller than its working set pays for in faults.
    pub avg_swapped_mib: f64,
    /// The most CPUs online at any interval.
    pub peak_online_cpus: u32,
    /// The most of the working set in swap at any interval, MiB.
    pub peak_swapped_mib: f64,
    /// Traffic to and from swap over the run (pswpin, pswpout), MiB: a
    /// guest that thrashes moves its shortfall in and out again and again.
    pub swapped_in_mib: f64,
    pub swapped_out_mib: f64,
    /// Thread-seconds stalled in direct reclaim, swapping, and waiting for
    /// pages faulted back from swap (what throughput loses to memory).
    pub memory_stall_seconds: f64,
    /// Work done relative to an ideally sized guest (1.0 = nothing lost).
    pub throughput_ratio: f64,
    pub cpu_changes: usize,
    pub pool_changes: usize,
    /// Changes whose direction reversed the previous one (CPU and pool).
    pub reversals: usize,
    /// Whether the flap detector called it flapping at any point.
    pub flapping: bool,
    /// The period of the first flapping it found, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flap_period_s: Option<f64>,
    /// Self-feeding loops the rules ran into, one per kind of action.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub feedback_loops: Vec<String>,
    /// The fatal error that ended the run early, as cpuplugd would exit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fatal: Option<String>,
}

/// The rows of the text report: label, and the value as text.
fn rows(r: &SimReport) -> Vec<(&'static str, String)> {
    vec![
        ("intervals", r.intervals.to_string()),
        ("simulated time", clock(r.seconds)),
        ("online CPUs, average", format!("{:.2}", r.avg_online_cpus)),
        (
            "online CPUs, time-weighted",
            format!("{:.2}", r.time_weighted_online_cpus),
        ),
        (
            "unmet CPU demand",
            format!("{:.1} CPU-s", r.unmet_cpu_seconds),
        ),
        (
            "guest memory, average",
            format!("{:.0} MiB", r.avg_guest_mib),
        ),
        (
            "working set, average",
            format!("{:.0} MiB", r.avg_working_set_mib),
        ),
        (
            "guest / working set",
            format!("{:.2}", r.guest_to_working_set),
        ),
        ("direct-scan stalls", r.direct_scan_stalls.to_string()),
        ("in swap, average", format!("{:.0} MiB", r.avg_swapped_mib)),
        (
            "swapped in / out",
            format!("{:.0} / {:.0} MiB", r.swapped_in_mib, r.swapped_out_mib),
        ),
        ("memory stalls", format!("{:.1} s", r.memory_stall_seconds)),
        (
            "throughput vs ideal",
            format!("{:.1}%", r.throughput_ratio * 100.0),
        ),
        ("CPU changes", r.cpu_changes.to_string()),
        ("pool changes", r.pool_changes.to_string()),
        ("reversals", r.reversals.to_string()),
        (
            "flapping",
            match (r.flapping, r.flap_period_s) {
                (true, Some(p)) => format!("yes, every {p:.1} s"),
                (true, None) => "yes".to_string(),
                _ => "no".to_string(),
            },
        ),
        ("feedback loops", r.feedback_loops.len().to_string()),
    ]
}

/// The figures that say what a rule file cost the guest (demand left
/// unmet, CPUs held, memory against the working set, work done, memory in
/// swap) and whether it flapped to get there: what the screen's
/// closed-loop what-if compares, as `--compare` words and formats them, so
/// a flapping edit cannot pass for a better one.
pub const KEY_FIGURES: [&str; 7] = [
    "unmet CPU demand",
    "online CPUs, average",
    "guest / working set",
    "throughput vs ideal",
    "in swap, average",
    "reversals",
    "flapping",
];

/// The rows of [`KEY_FIGURES`] for `r`, label and value as the report
/// shows them.
pub fn key_rows(r: &SimReport) -> Vec<(&'static str, String)> {
    rows(r)
        .into_iter()
        .filter(|(label, _)| KEY_FIGURES.contains(label))
        .collect()
}

/// `m:ss` (or `h:mm:ss` from an hour on) for simulated seconds.
pub fn clock(seconds: f64) -> String {
    let s = seconds.round() as i64;
    if s >= 3600 {
        crate::report::hms(s)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The report of one run, one figure per line.
pub fn text(r: &SimReport) -> String {
    let mut out = format!("{} with {}\n", safe(&r.scenario), safe(&r.rules));
    for (label, value) in rows(r) {
        let _ = writeln!(out, "  {label:<28}{value:>14}");
    }
    for l in &r.feedback_loops {
        let _ = writeln!(out, "  {}", safe(l));
    }
    if let Some(f) = &r.fatal {
        let _ = writeln!(out, "  ended early: {}", safe(f));
    }
    out
}

/// Two runs of one scenario side by side
/// ([`crate::report::side_by_side`]: narrow, fitted to its width, a long
/// rule file's name cut in its middle).
pub fn side_by_side(a: &SimReport, b: &SimReport, layout: crate::report::Layout) -> String {
    let name = |s: &str| crate::report::shown_file_name(s);
    let mut out = format!("{}\n", safe(&a.scenario));
    let mut table = vec![(String::new(), name(&a.rules), name(&b.rules))];
    table.extend(
        rows(a)
            .into_iter()
            .zip(rows(b))
            .map(|((label, x), (_, y))| (label.to_string(), x, y)),
    );
    crate::report::side_by_side::rows(&mut out, &table, 28, layout);
    for r in [a, b] {
        for l in &r.feedback_loops {
            let _ = writeln!(out, "  {}: {}", name(&r.rules), safe(l));
        }
        if let Some(f) = &r.fatal {
            let _ = writeln!(out, "  {} ended early: {}", name(&r.rules), safe(f));
        }
    }
    layout.prose(&out)
}

/// Said when a report (or a comparison) is asked for at a pace: nothing
/// shows until the end, so how long that is.
pub fn slow_report_note(scenario: &super::Scenario, duration: Option<f64>, speed: f64) -> String {
    let seconds = duration
        .or_else(|| super::scenario::seconds(&scenario.duration))
        .unwrap_or(0.0);
    format!(
        "simulating {} of {} at --speed {speed}: the report comes at the end, in about {} (--fast gives it at once)",
        clock(seconds),
        safe(&scenario.name),
        clock(seconds / speed),
    )
}

/// The line a `plugtop sim` that prints its actions starts with, at once:
/// what it simulates, under which rules, how fast, and how to stop it.
pub fn start_note(
    scenario: &super::Scenario,
    rules: &str,
    duration: Option<f64>,
    speed: Option<f64>,
) -> String {
    let seconds = duration
        .or_else(|| super::scenario::seconds(&scenario.duration))
        .unwrap_or(0.0);
    let pace = match speed {
        Some(speed) => format!(
            "at --speed {speed}: actions print as they happen, the report in about {}",
            clock(seconds / speed)
        ),
        None => "as fast as it runs (--fast): the actions, then the report".to_string(),
    };
    format!(
        "simulating {} of {} under {} {pace}; Ctrl-C stops",
        clock(seconds),
        safe(&scenario.name),
        safe(rules),
    )
}

/// Why a simulated cpuplugd stopped under `r.rules` ([`cpuplugd_stops`]).
pub fn stopped(r: &SimReport, old_kernel: bool) -> Option<String> {
    let fatal = r.fatal.as_ref()?;
    Some(cpuplugd_stops(
        &r.rules,
        &format!("stopped the simulated cpuplugd after {}", clock(r.seconds)),
        fatal,
        Some(old_kernel),
    ))
}

/// The one sentence `plugtop sim`, the screen's what-if and `plugtop
/// whatif` say when a rule file makes cpuplugd exit: `rules` `stopped`
/// ("stopped the simulated cpuplugd after 0:03", "would stop cpuplugd at
/// #24"), cpuplugd's own `fatal` words, and, when it stopped on a
/// /proc/vmstat name only old kernels have, what that means: on the
/// simulator (`old_kernel` is then `Some`) that `--old-kernel` has them.
pub fn cpuplugd_stops(rules: &str, stopped: &str, fatal: &str, old_kernel: Option<bool>) -> String {
    let old_name = ["_dma", "_normal", "_movable", "_dma32", "_high"]
        .iter()
        .any(|suffix| fatal.contains(&format!("{suffix} not found")));
    let hint = match old_kernel {
        _ if !old_name => "",
        Some(true) => "",
        Some(false) => {
            "; these rules name /proc/vmstat fields of old kernels (zone-suffixed, as in the seed paper): run with --old-kernel"
        }
        None => {
            "; these rules name /proc/vmstat fields of old kernels (zone-suffixed, as in the seed paper), which this guest's kernel lacks"
        }
    };
    format!("{rules} {stopped} (as cpuplugd would exit): {fatal}{hint}")
}

/// The end of `plugtop sim`: the report of `first` (beside `second`'s
/// with `--compare`) on `out`, as JSON or text, unless the rules stopped
/// the simulated cpuplugd: a run stopped early reports zeros that mean
/// nothing, so why is said on `err` instead (a JSON report still comes,
/// with its `fatal` field). `lines` says action lines came before (a
/// blank line then parts them from the report). False when a run stopped.
pub fn finish(
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
    json: bool,
    lines: bool,
    (first, second): (&SimReport, Option<&SimReport>),
    old_kernel: bool,
    layout: crate::report::Layout,
) -> std::io::Result<bool> {
    let stopped: Vec<String> = std::iter::once(first)
        .chain(second)
        .filter_map(|r| stopped(r, old_kernel))
        .collect();
    let a = first;
    if stopped.is_empty() || json {
        if json {
            let v = match second {
                Some(b) => serde_json::json!([a, b]).to_string(),
                None => serde_json::to_string(a)?,
            };
            writeln!(out, "{}", crate::report::terminal_safe_json(&v))?;
        } else {
            let mut out = crate::report::TerminalText::new(out);
            match second {
                Some(b) => write!(out, "{}", side_by_side(a, b, layout))?,
                None => write!(
                    out,
                    "{}{}",
                    if lines { "\n" } else { "" },
                    layout.prose(&text(a))
                )?,
            }
            out.flush()?;
        }
    }
    for s in &stopped {
        let said = format!("plugtop: {}", safe(s));
        write!(err, "{}", layout.on_stderr().prose(&said))?;
    }
    Ok(stopped.is_empty())
}
