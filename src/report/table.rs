//! A readable account of each decided interval, for `plugtop eval` without
//! `--jsonl`.

use std::fmt::Write as _;

use super::Layout;
use crate::engine::{CpuAction, Decision, GroupStatus};
use crate::rules::{RuleKind, RuleSet};

/// A short description of how the file loaded, and the columns' names.
pub fn header(rules: &RuleSet, layout: Layout) -> String {
    let s = rules.settings;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "update every {}s, history depth {}",
        s.update, rules.history_depth
    );
    if rules.cpu_enabled {
        let _ = writeln!(out, "CPU group:    on, {}..{} CPUs", s.cpu_min, s.cpu_max);
    } else {
        let _ = writeln!(out, "CPU group:    off");
    }
    if rules.mem_enabled {
        let _ = writeln!(
            out,
            "memory group: on, pool {}..{} pages",
            s.cmm_min, s.cmm_max
        );
    } else {
        let why = rules.memory_off_line();
        let why = why
            .as_deref()
            .and_then(|l| l.strip_prefix("memory group off"));
        let _ = writeln!(out, "memory group: off{}", why.unwrap_or_default());
    }
    out.push_str(&columns(layout));
    out.push('\n');
    out
}

/// The names of the columns of [`row`] (also `plugtop run -V`'s header).
/// Narrow, the rules' names are cut to five letters (HOTPL for HOTPLUG,
/// MEMUN for MEMUNPLUG) and the row fits 70 columns, 80 behind `run -V`'s
/// time stamp.
pub fn columns(layout: Layout) -> String {
    let w = Cells::of(layout);
    let name = |k: RuleKind| -> String { k.file_name().chars().take(w.name).collect() };
    let (inc, dec) = match layout {
        Layout::Wide => (name(RuleKind::CmmInc), name(RuleKind::CmmDec)),
        Layout::Narrow { .. } => ("INC".into(), "DEC".into()),
    };
    format!(
        "{:>r$}{gap}{:<t$} {:<t$} {:<8}  {:<t$} {:<t$} {inc:>n$} {dec:>n$} {:>p$}",
        "reading",
        name(RuleKind::Hotplug),
        name(RuleKind::Hotunplug),
        "CPU",
        name(RuleKind::Memplug),
        name(RuleKind::Memunplug),
        "pool",
        r = w.reading,
        gap = w.gap,
        t = w.truth,
        n = w.number,
        p = w.pool,
    )
}

/// The widths of a row's cells in a layout, and how its page counts are
/// written.
struct Cells {
    reading: usize,
    gap: &'static str,
    /// A rule's truth, and its name in the heading.
    truth: usize,
    name: usize,
    number: usize,
    pool: usize,
    pages: fn(i64) -> String,
}

impl Cells {
    fn of(layout: Layout) -> Cells {
        match layout {
            Layout::Wide => Cells {
                reading: 8,
                gap: "  ",
                truth: 9,
                name: usize::MAX,
                number: 10,
                pool: 12,
                pages: |v| v.to_string(),
            },
            Layout::Narrow { .. } => Cells {
                reading: 7,
                gap: " ",
                truth: 5,
                name: 5,
                number: 6,
                pool: 0,
                pages: compact,
            },
        }
    }
}

fn truth(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "true",
        Some(false) => "false",
        None => "-",
    }
}

/// A page count in at most six columns: whole below a million, else in
/// millions (`1.25M`) or billions (`3.5G`) to two decimals.
fn compact(v: i64) -> String {
    let scaled = |v: f64, unit: &str| {
        let s = format!("{v:.2}");
        format!("{}{unit}", s.trim_end_matches('0').trim_end_matches('.'))
    };
    match v.unsigned_abs() {
        0..1_000_000 => v.to_string(),
        1_000_000..1_000_000_000 => scaled(v as f64 / 1e6, "M"),
        _ => scaled(v as f64 / 1e9, "G"),
    }
}

/// The pool's cell: its size, or its move `before→after`; a move too
/// small to show in `pages`' digits (1.25M to 1.25M) as the size and the
/// pages it moved by (`1.25M+100`), never an arrow between equal numbers.
fn pool_cell(before: i64, after: i64, pages: fn(i64) -> String) -> String {
    let (a, b) = (pages(before), pages(after));
    if before == after {
        a
    } else if a != b {
        format!("{a}→{b}")
    } else if after > before {
        format!("{a}+{}", pages(after - before))
    } else {
        format!("{a}-{}", pages(before - after))
    }
}

/// One interval as a table row (or the reason cpuplugd would stop).
pub fn row(out: &mut String, d: &Decision, layout: Layout) {
    if let Some(f) = &d.fatal {
        let _ = writeln!(
            out,
            "{:>8}  cpuplugd would exit here: {}",
            d.reading, f.message
        );
        return;
    }
    let w = Cells::of(layout);
    let t = w.truth;
    // The CPU group's cells, or what stands in their place.
    let cpu = 2 * t + 10;
    let _ = write!(out, "{:>r$}{}", d.reading, w.gap, r = w.reading);
    match &d.cpu {
        Some(c) => match c.status {
            GroupStatus::Ok => {
                let action = match c.action {
                    CpuAction::Plug => "plug",
                    CpuAction::Unplug => "unplug",
                    CpuAction::None if c.limited => "at limit",
                    CpuAction::None => "-",
                };
                let _ = write!(
                    out,
                    "{:<t$} {:<t$} {:<8}  ",
                    truth(c.hotplug),
                    truth(c.hotunplug),
                    action
                );
            }
            GroupStatus::Fault(f) => {
                let _ = write!(
                    out,
                    "{:<cpu$}  ",
                    format!("skipped: {}", crate::report::fault_words::short(f))
                );
            }
            GroupStatus::Vertical => {
                let _ = write!(out, "{:<cpu$}  ", "skipped: vertical");
            }
        },
        None => {
            let _ = write!(out, "{:<cpu$}  ", "");
        }
    }
    if let Some(m) = &d.mem {
        match m.status {
            GroupStatus::Ok => {
                let num = |v: Option<i64>| v.map_or("-".to_string(), w.pages);
                let pool = pool_cell(m.cmm_pages, m.cmm_pages_new, w.pages);
                let _ = write!(
                    out,
                    "{:<t$} {:<t$} {:>n$} {:>n$} {:>p$}",
                    truth(m.memplug),
                    truth(m.memunplug),
                    num(m.cmm_inc),
                    num(m.cmm_dec),
                    pool,
                    n = w.number,
                    p = w.pool,
                );
            }
            GroupStatus::Fault(f) => {
                let _ = write!(out, "skipped: {}", crate::report::fault_words::short(f));
            }
            GroupStatus::Vertical => {}
        }
    }
    // A row without a memory group ends at its last cell, not in blanks.
    out.truncate(out.trim_end_matches(' ').len());
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_count_takes_six_columns_at_most() {
        assert_eq!(compact(0), "0");
        assert_eq!(compact(999_999), "999999");
        assert_eq!(compact(1_245_184), "1.25M");
        assert_eq!(compact(-1_000_000), "-1M");
        assert_eq!(compact(16_000_000_000), "16G");
        for v in [
            0,
            42,
            999_999,
            1_000_000,
            1_074_294,
            99_999_999,
            999_999_999,
        ] {
            assert!(compact(v).chars().count() <= 6, "{v}: {}", compact(v));
        }
    }

    /// Adversary F10: a pool moving by 100 pages near a million printed
    /// `1.25M→1.25M`, an arrow between equal numbers.
    #[test]
    fn a_pool_move_too_small_for_the_digits_shows_what_it_moved_by() {
        assert_eq!(pool_cell(1_245_000, 1_245_100, compact), "1.25M+100");
        assert_eq!(pool_cell(1_245_100, 1_245_000, compact), "1.25M-100");
        assert_eq!(pool_cell(1_245_000, 1_300_000, compact), "1.25M→1.3M");
        assert_eq!(pool_cell(1_245_000, 1_245_000, compact), "1.25M");
        assert_eq!(pool_cell(10, 20, compact), "10→20");
    }

    #[test]
    fn the_narrow_heading_is_70_columns_and_the_wide_one_as_it_was() {
        assert!(columns(Layout::Narrow { width: 80 }).chars().count() <= 70);
        assert!(columns(Layout::Wide).starts_with(" reading  HOTPLUG   HOTUNPLUG"));
    }
}
