//! Where the subcommands read a guest from: `--root`, `--replay` or
//! `--snapshots`, checked before anything is read, so a wrong path is one
//! clear error (exit 2) and not false findings from empty readings.

use std::path::Path;

use anyhow::Context;

use crate::cli::From;
use plugtop::kernel::Source;
use plugtop::kernel::fs::{PastLimit, Resolve, read_bounded};
use plugtop::kernel::live::LiveSource;
use plugtop::kernel::recording::RecordingSource;
use plugtop::kernel::snapshots::SnapshotSource;

/// Opens the source named on the command line (a live root when none is).
pub(super) fn open_source(
    from: &From,
    default_root: Option<&Path>,
) -> anyhow::Result<(Box<dyn Source>, bool)> {
    if let Some(dir) = &from.snapshots {
        let s = SnapshotSource::open(dir)
            .with_context(|| format!("cannot read snapshots in {}", dir.display()))?;
        return Ok((Box::new(s), false));
    }
    if let Some(file) = &from.replay {
        return Ok((Box::new(RecordingSource::open(file)?), false));
    }
    match from.root.as_deref().or(default_root) {
        Some(root) => {
            require_root(root)?;
            Ok((Box::new(LiveSource::new(root)), true))
        }
        None => {
            anyhow::bail!("say where to read from: --snapshots DIR, --replay FILE or --root DIR")
        }
    }
}

/// A root to read a guest from must be a directory with a readable
/// `proc/stat`: a missing or unreadable one is one clear error (exit 2),
/// not false rule errors from the empty readings it would give.
pub(super) fn require_root(root: &Path) -> anyhow::Result<()> {
    super::run::require_root_dir(root)?;
    let stat = root.join("proc/stat");
    let read = plugtop::kernel::fs::Root::open(root).and_then(|dir| {
        let file = dir.open_regular(Path::new("proc/stat"), Resolve::InRoot)?;
        read_bounded(&file, 1 << 20, PastLimit::Cut)
    });
    if let Err(e) = read {
        anyhow::bail!(
            "--root {}: cannot read {}: {} (a root holds proc/ and sys/ laid out like /)",
            root.display(),
            stat.display(),
            plugtop::error_chain::innermost(&e)
        );
    }
    Ok(())
}
