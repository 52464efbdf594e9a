//! `plugtop record`: samples kept as a recording file or as snapshot
//! directories.

use std::io::Write;
use std::path::Path;

use super::interval::positive_interval;
use super::sources::open_source;
use crate::cli::RecordArgs;
use plugtop::commands::{self, Pace, Status, Wait};
use plugtop::kernel::live::wall_clock;
use plugtop::kernel::machine::describe;
use plugtop::kernel::recording::{Header, RecordingSource};
use plugtop::kernel::snapshots::SnapshotSource;

/// `plugtop record`.
pub fn run(args: RecordArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let RecordArgs {
        output,
        export_snapshots,
        from,
        interval,
        count,
    } = args;
    if count == Some(0) {
        anyhow::bail!("--count 0 would record nothing: give 1 or more samples");
    }
    let (mut source, live) = open_source(&from, Some(Path::new("/")))?;
    let wait = if live {
        Wait::Every(positive_interval(interval)?)
    } else {
        Wait::None
    };
    let machine = match (&from.replay, &from.snapshots) {
        (Some(file), _) => RecordingSource::open(file).map(|r| r.header().clone()).ok(),
        (None, Some(dir)) => SnapshotSource::open(dir)
            .ok()
            .and_then(|s| s.first_dir())
            .map(|d| header_for(&d, interval)),
        (None, None) => Some(header_for(
            from.root.as_deref().unwrap_or(Path::new("/")),
            interval,
        )),
    };
    let header = machine.unwrap_or_else(|| header_for(Path::new("/nonexistent"), interval));
    let target = match (&output, &export_snapshots) {
        (_, Some(dir)) => commands::record::Destination::Snapshots(dir),
        (Some(path), None) => commands::record::Destination::Recording { path, header },
        (None, None) => {
            anyhow::bail!("say where to write: -o FILE or --export-snapshots DIR")
        }
    };
    // Ctrl-C or SIGTERM ends the recording with its summary, as `--count`
    // does: the file holds every sample taken.
    let signals = plugtop::daemon::Signals::install()?;
    let stopped = || signals.stop.load(std::sync::atomic::Ordering::SeqCst);
    let mut park = |d: std::time::Duration| {
        let until = plugtop::pace::deadline(std::time::Instant::now(), d);
        plugtop::pace::park_until(until, &stopped);
    };
    let what = match (&from.replay, &from.snapshots, &from.root) {
        (Some(file), _, _) => format!("the recording {}", file.display()),
        (None, Some(dir), _) => format!("the snapshots in {}", dir.display()),
        (None, None, Some(root)) => root.display().to_string(),
        (None, None, None) => "this machine (/)".to_string(),
    };
    Ok(commands::record::run(
        source.as_mut(),
        &plugtop::report::terminal_safe(&what),
        target,
        Pace { count, wait },
        out,
        (&mut park, &stopped),
    )?)
}

/// A recording header for the machine under `root`.
fn header_for(root: &Path, interval: f64) -> Header {
    let m = describe(root);
    let present_cpus = plugtop::kernel::machine::present_cpus(root);
    Header {
        host: m.host,
        kernel: m.kernel,
        cpu_model: m.cpu_model,
        root: root.display().to_string(),
        page_size: m.page_size,
        present_cpus,
        interval_us: (interval.max(0.0) * 1e6) as u64,
        started: wall_clock(),
        imported: None,
    }
}
