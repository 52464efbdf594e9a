//! Readings nothing was decided on: the intervals a rule group skipped (by
//! group and reason) and the readings that failed (by file). Every known
//! series exists at 0 from the start, so a first fault is an increase.

use std::path::Path;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::{Labels, labels, register};
use crate::control::session::Step;
use crate::engine::GroupStatus;
use crate::kernel::SourceError;
use crate::kernel::root_file::RootFile;
use crate::rules::RuleSet;

/// The `group` label values.
pub const GROUPS: [&str; 2] = ["cpu", "memory"];

/// The `reason` label values of skipped intervals.
pub const SKIP_REASONS: [&str; 5] = [
    "fault",
    "history_filling",
    "group_off",
    "polarization",
    "clock",
];

/// The files a reading reads, as `file` label values; anything else (a
/// recording's or a snapshot's own files) is `other`.
const FILES: [RootFile; 9] = [
    RootFile::Stat,
    RootFile::Loadavg,
    RootFile::Meminfo,
    RootFile::Vmstat,
    RootFile::CmmPages,
    RootFile::Online,
    RootFile::Present,
    RootFile::Possible,
    RootFile::Dispatching,
];

/// The counters, through handles kept from the start.
#[derive(Debug)]
pub struct SkipCounters {
    skipped: [[Counter; 5]; 2],
    /// One per [`FILES`], then `other`.
    read_errors: [Counter; 10],
}

impl SkipCounters {
    /// Registers both families with every known series at 0.
    pub fn register(r: &mut Registry) -> Self {
        let skipped: Family<Labels, Counter> = register(r, "skipped_intervals");
        let errors: Family<Labels, Counter> = register(r, "read_errors");
        SkipCounters {
            skipped: GROUPS.map(|g| {
                SKIP_REASONS.map(|why| {
                    skipped.get_or_create_owned(&labels(&[("group", g), ("reason", why)]))
                })
            }),
            read_errors: std::array::from_fn(|i| {
                let file = FILES.get(i).map_or("other", |f| f.rel());
                errors.get_or_create_owned(&labels(&[("file", file)]))
            }),
        }
    }

    fn skip(&self, group: usize, reason: &str) {
        if let Some(i) = SKIP_REASONS.iter().position(|r| *r == reason) {
            self.skipped[group][i].inc();
        }
    }

    /// Why a group did not decide this interval, counted.
    pub fn count(&self, rules: &RuleSet, step: &Step) {
        let enabled = [rules.cpu_enabled, rules.mem_enabled];
        if step.skipped.is_some() {
            self.skip(0, "clock");
            self.skip(1, "clock");
            return;
        }
        for (group, on) in enabled.into_iter().enumerate() {
            if !on {
                self.skip(group, "group_off");
            } else if step.decision.is_none() {
                self.skip(group, "history_filling");
            }
        }
        let Some(d) = &step.decision else { return };
        if let Some(c) = &d.cpu {
            match c.status {
                GroupStatus::Fault(_) => self.skip(0, "fault"),
                GroupStatus::Vertical => self.skip(0, "polarization"),
                GroupStatus::Ok => {}
            }
        }
        if let Some(m) = &d.mem
            && matches!(m.status, GroupStatus::Fault(_))
        {
            self.skip(1, "fault");
        }
    }

    /// A reading that failed, counted by the file that failed.
    pub fn read_error(&self, error: &SourceError) {
        let path = match error {
            SourceError::Open { path, .. } | SourceError::Malformed { path, .. } => path,
        };
        let rel = path.strip_prefix("/").unwrap_or(path);
        let i = FILES
            .iter()
            .position(|f| rel == Path::new(f.rel()))
            .unwrap_or(FILES.len());
        self.read_errors[i].inc();
    }
}
