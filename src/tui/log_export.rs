//! `e`: writing the log to the path the user gave (see
//! [`crate::tui::state_dir`] for the default offered).

use std::io::Write as _;
use std::path::Path;

use crate::tui::app::{App, LogKind};
use crate::tui::view;

/// Writes the log to `path` (its directory made if missing), never over
/// an existing file, and says in the log what happened.
pub fn export(app: &mut App, path: &Path) {
    let shown = path.display().to_string();
    let text: String = app
        .log
        .iter()
        .map(|l| format!("{} {}\n", view::clock(l.stamp), l.shown()))
        .collect();
    match write_new(path, text.as_bytes()) {
        Ok(()) => app.note(LogKind::Note, format!("log exported to {shown}")),
        Err(e) => app.note(
            LogKind::Problem,
            format!("cannot export the log to {shown}: {e}"),
        ),
    }
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}
