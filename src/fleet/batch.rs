//! `plugtop fleet --batch`: the table as text lines or one JSON document,
//! for scripts and cron, and the exit status a check command needs.

use std::io::Write;

use serde::Serialize;

use super::format::{cell, pages_to_mib};
use super::model::{DriftGroup, Fleet, FleetColumn, Trouble, drift, drift_line, order};
use crate::report::Layout;
use crate::safe_text::terminal_safe_json;

/// What `--batch` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// Whether any guest is in trouble: the check's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetVerdict {
    AllWell,
    Trouble,
    /// No trouble seen, but the check could not look everywhere: a query
    /// failed, or no guest matched (a typo in `--match`). A check that
    /// passed on half the data would hide the trouble in the other half.
    Unsure,
}

#[derive(Serialize)]
struct JsonGuest<'a> {
    job: &'a str,
    instance: &'a str,
    zvm_name: &'a str,
    system: &'a str,
    troubles: Vec<Trouble>,
    stopped: bool,
    online: Option<f64>,
    present: Option<f64>,
    cpu_max: Option<f64>,
    pool_mib: Option<f64>,
    pool_max_mib: Option<f64>,
    mode: Option<&'a str>,
    flapping: bool,
    flap_period_seconds: Option<f64>,
    faulting: &'a [String],
    faulted: &'a [String],
    actions_per_hour: Option<f64>,
    age_seconds: Option<f64>,
    rules_file: Option<&'a str>,
    rules_crc32: Option<&'a str>,
    last_change: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonDrift<'a> {
    crc32: &'a str,
    files: &'a [String],
    instances: &'a [String],
    /// Not the file most of the fleet runs.
    odd: bool,
    note: Option<String>,
}

#[derive(Serialize)]
struct JsonFleet<'a> {
    at: f64,
    health: &'a super::model::Health,
    guests: Vec<JsonGuest<'a>>,
    drift: Vec<JsonDrift<'a>>,
}

/// Writes `fleet` sorted by trouble, in `format` (text laid out as
/// `layout` says); says whether any guest is in trouble.
pub fn write(
    fleet: &Fleet,
    (format, layout): (Format, Layout),
    stale_after: f64,
    out: &mut dyn Write,
) -> std::io::Result<FleetVerdict> {
    let rows = order(fleet, FleetColumn::Trouble, false, "", stale_after);
    let now = fleet.at;
    let troubled = fleet
        .guests
        .iter()
        .any(|g| !g.troubles(now, stale_after).is_empty());
    let groups = drift(fleet);
    match format {
        Format::Json => write_json(fleet, &rows, &groups, stale_after, out)?,
        Format::Text => write_text(fleet, (&rows, &groups, layout), stale_after, out)?,
    }
    Ok(if troubled {
        FleetVerdict::Trouble
    } else if !fleet.health.failed.is_empty() || fleet.guests.is_empty() {
        FleetVerdict::Unsure
    } else {
        FleetVerdict::AllWell
    })
}

/// The JSON document: guests in `rows`' order, the drift groups, health.
fn write_json(
    fleet: &Fleet,
    rows: &[usize],
    groups: &[DriftGroup],
    stale_after: f64,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let now = fleet.at;
    let guests = rows
        .iter()
        .map(|&i| {
            let g = &fleet.guests[i];
            JsonGuest {
                job: &g.job,
                instance: &g.instance,
                zvm_name: &g.zvm_name,
                system: &g.system,
                troubles: g.troubles(now, stale_after),
                stopped: g.stopped(now, stale_after),
                online: g.online,
                present: g.present,
                cpu_max: g.cpu_max,
                pool_mib: g.pool_pages.map(pages_to_mib),
                pool_max_mib: g.pool_max_pages.map(pages_to_mib),
                mode: g.mode.as_deref(),
                flapping: g.flapping,
                flap_period_seconds: g.flap_period,
                faulting: &g.faulting,
                faulted: &g.faulted,
                actions_per_hour: g.actions_per_hour,
                age_seconds: g.age(now),
                rules_file: g.rules_file.as_deref(),
                rules_crc32: g.rules_crc.as_deref(),
                last_change: g.last_change.as_deref(),
            }
        })
        .collect();
    let drift = groups
        .iter()
        .enumerate()
        .map(|(i, d)| JsonDrift {
            crc32: &d.crc32,
            files: &d.files,
            instances: &d.instances,
            odd: i > 0,
            note: (i > 0).then(|| drift_line(d)),
        })
        .collect();
    let doc = JsonFleet {
        at: now,
        health: &fleet.health,
        guests,
        drift,
    };
    let text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    writeln!(out, "{}", terminal_safe_json(&text))?;
    Ok(())
}

/// The text table, with `#` lines for failed queries, warnings and drift.
/// Narrow, it has the columns that fit the width, chosen in the screen's
/// order of importance; every cell stays whole.
fn write_text(
    fleet: &Fleet,
    (rows, groups, layout): (&[usize], &[DriftGroup], Layout),
    stale_after: f64,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let now = fleet.at;
    let h = &fleet.health;
    if !h.failed.is_empty() {
        writeln!(
            out,
            "# {} of {} queries failed: {}",
            h.failed.len(),
            h.queries,
            crate::safe_text::terminal_safe(&h.failed[0])
        )?;
    }
    for w in &h.warnings {
        writeln!(out, "# warning: {}", crate::safe_text::terminal_safe(w))?;
    }
    let all: Vec<Vec<String>> = std::iter::once(
        FleetColumn::ALL
            .iter()
            .map(|c| c.title().to_string())
            .collect(),
    )
    .chain(rows.iter().map(|&i| {
        FleetColumn::ALL
            .iter()
            .map(|&c| cell(&fleet.guests[i], c, now, stale_after))
            .collect()
    }))
    .collect();
    // Widths in columns as drawn: a label of wide characters lines up.
    use crate::report::words::{cols, pad_right};
    let measure = |c: usize| all.iter().map(|r| cols(&r[c])).max().unwrap_or(0);
    let shown: Vec<usize> = match layout {
        Layout::Wide => (0..FleetColumn::ALL.len()).collect(),
        Layout::Narrow { width } => {
            let index = |c: FleetColumn| FleetColumn::ALL.iter().position(|&a| a == c);
            // Two columns between cells: one more than the screen's one.
            super::table::columns_fitting(width + 1, |c| index(c).map_or(0, &measure) + 1)
                .into_iter()
                .filter_map(index)
                .collect()
        }
    };
    let table: Vec<Vec<String>> = all
        .iter()
        .map(|r| shown.iter().map(|&c| r[c].clone()).collect())
        .collect();
    let widths: Vec<usize> = (0..shown.len())
        .map(|c| table.iter().map(|r| cols(&r[c])).max().unwrap_or(0))
        .collect();
    for row in &table {
        let mut line = String::new();
        for (c, text) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(text);
            } else {
                line.push_str(&pad_right(text, widths[c] + 2));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    for d in groups.iter().skip(1) {
        writeln!(
            out,
            "# drift: {}: {}",
            crate::safe_text::terminal_safe(&drift_line(d)),
            crate::safe_text::terminal_safe(&d.instances.join(" "))
        )?;
    }
    Ok(())
}
