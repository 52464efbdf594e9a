//! What `plugtop tune` prints: the knobs found, a table of the Pareto
//! front like the seed paper's (the start and the reference beside it),
//! the recommended file as a unified diff, and the recommendation on other
//! seeds beside the training one.

use std::fmt::Write as _;

use super::Tuned;
use super::knobs::Knob;
use super::score::{Score, front_by_cpus};

/// The most front rows shown (the fewest CPUs first).
const MAX_ROWS: usize = 12;

fn row(out: &mut String, label: &str, s: &Score) {
    if let Some(f) = &s.fatal {
        let _ = writeln!(out, "  {label:<18} stops cpuplugd: {f}");
        return;
    }
    let _ = writeln!(
        out,
        "  {label:<18} {:>9.1} {:>6.2} {:>7.2} {:>6} {:>6.1}% {:>4} {:>4} {:>4} {}",
        s.unmet_cpu_seconds,
        s.avg_online_cpus,
        s.guest_to_working_set,
        s.direct_scan_stalls,
        s.throughput_ratio * 100.0,
        s.cpu_changes,
        s.pool_changes,
        s.reversals,
        if s.flapping { "FLAPS" } else { "no" },
    );
}

fn header(out: &mut String) {
    let heads = [
        ("unmet", "CPU-s", 9),
        ("CPUs", "avg", 6),
        ("guest/", "WS", 7),
        ("stalls", "", 6),
        ("thru-", "put", 7),
        ("CPU", "chg", 4),
        ("pool", "chg", 4),
        ("rev", "", 4),
        ("flaps", "", 0),
    ];
    for line in 0..2 {
        let mut text = format!("  {:<18}", "");
        for (top, bottom, width) in heads {
            let word = if line == 0 { top } else { bottom };
            let _ = write!(text, " {word:>width$}");
        }
        let _ = writeln!(out, "{}", text.trim_end());
    }
}

/// The knobs, one a line, with where they are written and their range.
pub fn knobs_text(knobs: &[Knob]) -> String {
    use super::knobs::KnobKind;
    let mut out = String::new();
    for k in knobs {
        let kind = match k.kind {
            KnobKind::Threshold => "threshold",
            KnobKind::Percent => "threshold (% of a CPU)",
            KnobKind::Offset => "offset",
            KnobKind::CpuOffset => "offset (CPUs)",
            KnobKind::Divisor => "divisor",
            KnobKind::Limit(_) => "limit",
        };
        let _ = writeln!(
            out,
            "  {:>5}:{:<4} {:<12} {:>8}  {kind}, searched over {}..{}",
            k.line,
            k.column,
            k.owner,
            k.text(k.value),
            k.text(k.range.0),
            k.text(k.range.1)
        );
    }
    out
}

/// The table: start, reference, and the front spread over its range of
/// CPUs (one row per distinct outcome), the recommendation marked.
pub fn table(t: &Tuned, against: Option<&str>) -> String {
    let mut out = String::new();
    header(&mut out);
    row(&mut out, "start", &t.candidates[0].1);
    if let Some(name) = against {
        let full = format!("ref {}", short(name));
        let label: String = if full.chars().count() > 18 {
            full.chars().take(17).chain(['…']).collect()
        } else {
            full
        };
        row(&mut out, &label, &t.reference);
    }
    let scores = t.front_scores();
    let mut front = front_by_cpus(&scores, None);
    // Candidates whose outcomes read the same in the table are one row.
    front.dedup_by(|a, b| row_text(scores[*a]) == row_text(scores[*b]));
    let mut listed: Vec<usize> = if front.len() <= MAX_ROWS {
        front.clone()
    } else {
        (0..MAX_ROWS)
            .map(|k| front[k * (front.len() - 1) / (MAX_ROWS - 1)])
            .collect()
    };
    if let Some(r) = t.recommended
        && !listed.contains(&r)
    {
        listed.push(r);
    }
    for i in listed {
        let label = if Some(i) == t.recommended {
            format!("★ recommended #{i}")
        } else {
            format!("front #{i}")
        };
        row(&mut out, &label, scores[i]);
    }
    if front.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "  ({} distinct outcomes on the front; --format json lists every one)",
            front.len()
        );
    }
    out
}

fn row_text(s: &Score) -> String {
    let mut out = String::new();
    row(&mut out, "", s);
    out
}

fn short(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// A unified diff of two files that have the same lines but for changed
/// numbers (a tuned file never adds or removes a line).
pub fn diff(old_name: &str, old: &[u8], new_name: &str, new: &[u8]) -> String {
    let a: Vec<&str> = std::str::from_utf8(old)
        .unwrap_or("")
        .split_inclusive('\n')
        .collect();
    let b: Vec<&str> = std::str::from_utf8(new)
        .unwrap_or("")
        .split_inclusive('\n')
        .collect();
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x != y {
            let _ = write!(out, "@@ -{0},1 +{0},1 @@\n-{x}", i + 1);
            if !x.ends_with('\n') {
                out.push('\n');
            }
            let _ = write!(out, "+{y}");
            if !y.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// The start, the reference and the recommendation on what they were not
/// tuned on (other seeds, or a recording's second half).
pub fn seeds_table(rows: &[(String, String, Score)]) -> String {
    let mut out = String::new();
    header(&mut out);
    for (label, workload, s) in rows {
        row(&mut out, &format!("{label} {workload}"), s);
    }
    out
}
