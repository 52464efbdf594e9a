//! `plugtop record`: read samples from a source and keep them, as a
//! recording file or as conformance-format snapshot directories.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use super::{Pace, Status, Wait};
use crate::kernel::Source;
use crate::kernel::claimed_dir::{DirUse, claim};
use crate::kernel::fs::Root;
use crate::kernel::fs::{Placing, StagedFiles};
use crate::kernel::recording::export::write_snapshot;
use crate::kernel::recording::{Header, RecordingWriter};

/// Where the samples go.
pub enum Destination<'a> {
    /// A recording file (created; an existing file is never overwritten).
    Recording { path: &'a Path, header: Header },
    /// Numbered snapshot directories under this directory (a new or empty
    /// one, or one an earlier export filled: see
    /// [`claim`](crate::kernel::claimed_dir::claim)).
    Snapshots(&'a Path),
}

/// Records `from` (the source, in words) until the source ends, `count`
/// samples were taken, an error, or `stopped` says a stop signal came
/// (Ctrl-C, SIGTERM: `wait` returns early then); it starts with a line
/// saying what goes where, and ends with the same summary whichever way
/// it stopped.
pub fn run(
    source: &mut dyn Source,
    from: &str,
    target: Destination<'_>,
    pace: Pace,
    out: &mut dyn Write,
    (wait, stopped): (&mut dyn FnMut(Duration), &dyn Fn() -> bool),
) -> std::io::Result<Status> {
    let mut writer = match &target {
        Destination::Recording { path, header } => {
            Some(RecordingWriter::create(path, header).map_err(|e| {
                let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                    "it exists, and plugtop never overwrites a recording (remove it or name \
                     another file)"
                        .to_string()
                } else {
                    crate::error_chain::text(&e)
                };
                std::io::Error::new(e.kind(), format!("cannot create {}: {why}", path.display()))
            })?)
        }
        Destination::Snapshots(_) => None,
    };
    let exports = match &target {
        Destination::Snapshots(dir) => {
            Some(claim(dir, DirUse::Snapshots).map_err(std::io::Error::other)?)
        }
        Destination::Recording { .. } => None,
    };
    writeln!(out, "{}", start_line(from, &target, pace))?;
    out.flush()?;
    let mut taken = 0usize;
    let mut status = Status::Ok;
    while pace.count.is_none_or(|c| taken < c) && !stopped() {
        let Some(sample) = source.next_sample() else {
            break;
        };
        let sample = match sample {
            Ok(s) => s,
            Err(e) => {
                writeln!(
                    out,
                    "stopped: cannot read sample {taken}: {e}",
                    e = crate::error_chain::text(&e)
                )?;
                status = Status::Failed;
                break;
            }
        };
        match (&mut writer, &exports) {
            (Some(w), _) => {
                w.append(&sample)?;
            }
            (None, Some(dir)) => export(dir, taken, &sample)?,
            (None, None) => {}
        }
        taken += 1;
        if taken.is_multiple_of(60) {
            writeln!(
                out,
                "{}",
                crate::report::words::count(taken as f64, "sample", "samples")
            )?;
            out.flush()?;
        }
        if let Wait::Every(interval) = pace.wait
            && pace.count.is_none_or(|c| taken < c)
        {
            wait(interval);
        }
    }
    if let Some(w) = source.warning() {
        writeln!(out, "warning: {w}")?;
    }
    if stopped() {
        writeln!(out, "stopped by a signal")?;
    }
    match (&writer, &target) {
        (Some(w), Destination::Recording { path, .. }) => {
            let per = if taken > 0 {
                (w.bytes() as f64) / taken as f64
            } else {
                0.0
            };
            writeln!(
                out,
                "recorded {} to {}: {} bytes, {per:.0} bytes per sample",
                crate::report::words::count(taken as f64, "sample", "samples"),
                path.display(),
                w.bytes()
            )?;
        }
        (_, Destination::Snapshots(dir)) => writeln!(
            out,
            "wrote {} to {}",
            crate::report::words::count(taken as f64, "snapshot", "snapshots"),
            dir.display()
        )?,
        _ => {}
    }
    Ok(status)
}

/// What a recording starts by saying: what goes where, how often, how
/// many, and how it stops.
fn start_line(from: &str, target: &Destination<'_>, pace: Pace) -> String {
    let to = match target {
        Destination::Recording { path, .. } => format!("to {}", path.display()),
        Destination::Snapshots(dir) => format!("as snapshots under {}", dir.display()),
    };
    let every = match pace.wait {
        Wait::Every(i) => format!(
            " every {} s",
            crate::report::node_text::number(i.as_secs_f64())
        ),
        Wait::Update => " every UPDATE".to_string(),
        Wait::None => String::new(),
    };
    let count = pace
        .count
        .map(|c| {
            format!(
                ", {}",
                crate::report::words::count(c as f64, "sample", "samples")
            )
        })
        .unwrap_or_default();
    format!("recording {from}{every} {to}{count}; Ctrl-C stops")
}

/// Writes `sample` as snapshot `index` beneath `dir`: every file created
/// anew and renamed into place whole, never written through a link.
fn export(dir: &Root, index: usize, sample: &crate::kernel::Sample) -> std::io::Result<()> {
    let mut files = StagedFiles::new(dir, Placing::REPLACE);
    write_snapshot(&mut files, index, sample)
        .and_then(|()| files.commit())
        .map_err(std::io::Error::other)
}
