//! A readable account of each decided interval, for `plugtop eval` without
//! `--jsonl`.

use std::fmt::Write as _;

use crate::engine::{CpuAction, Decision, GroupStatus};
use crate::rules::{RuleKind, RuleSet};

/// A short description of how the file loaded.
pub fn header(rules: &RuleSet) -> String {
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
    out.push_str(&columns());
    out.push('\n');
    out
}

/// The names of the columns of [`row`] (also `plugtop run -V`'s header).
pub fn columns() -> String {
    format!(
        "{:>8}  {:<9} {:<9} {:<8}  {:<9} {:<9} {:>10} {:>10} {:>12}",
        "reading",
        RuleKind::Hotplug.file_name(),
        RuleKind::Hotunplug.file_name(),
        "CPU",
        RuleKind::Memplug.file_name(),
        RuleKind::Memunplug.file_name(),
        RuleKind::CmmInc.file_name(),
        RuleKind::CmmDec.file_name(),
        "pool"
    )
}

fn truth(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "true",
        Some(false) => "false",
        None => "-",
    }
}

/// One interval as a table row (or the reason cpuplugd would stop).
pub fn row(out: &mut String, d: &Decision) {
    if let Some(f) = &d.fatal {
        let _ = writeln!(
            out,
            "{:>8}  cpuplugd would exit here: {}",
            d.reading, f.message
        );
        return;
    }
    let _ = write!(out, "{:>8}  ", d.reading);
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
                    "{:<9} {:<9} {:<8}  ",
                    truth(c.hotplug),
                    truth(c.hotunplug),
                    action
                );
            }
            GroupStatus::Fault(f) => {
                let _ = write!(
                    out,
                    "{:<28}  ",
                    format!("skipped: {}", crate::report::fault_words::short(f))
                );
            }
            GroupStatus::Vertical => {
                let _ = write!(out, "{:<28}  ", "skipped: vertical");
            }
        },
        None => {
            let _ = write!(out, "{:<28}  ", "");
        }
    }
    if let Some(m) = &d.mem {
        match m.status {
            GroupStatus::Ok => {
                let num = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
                let pool = if m.cmm_pages_new == m.cmm_pages {
                    m.cmm_pages.to_string()
                } else {
                    format!("{}→{}", m.cmm_pages, m.cmm_pages_new)
                };
                let _ = write!(
                    out,
                    "{:<9} {:<9} {:>10} {:>10} {:>12}",
                    truth(m.memplug),
                    truth(m.memunplug),
                    num(m.cmm_inc),
                    num(m.cmm_dec),
                    pool
                );
            }
            GroupStatus::Fault(f) => {
                let _ = write!(out, "skipped: {}", crate::report::fault_words::short(f));
            }
            GroupStatus::Vertical => {}
        }
    }
    out.push('\n');
}
