//! `e`: writing the log to the path the user gave (see
//! [`crate::tui::state_dir`] for the default offered).

use std::io::Write as _;
use std::path::Path;

use crate::tui::log_book::{LogBook, LogKind};
use crate::tui::view;

/// The log as the file holds it: one line each, with its time, escaped as
/// on the screen (the file is read with `cat` and `less`, and a line may
/// quote a process name or a file's bytes). Made by the screen, which
/// keeps the log.
pub fn text(log: &LogBook) -> String {
    log.lines()
        .iter()
        .map(|l| {
            format!(
                "{} {}\n",
                view::clock(l.stamp),
                crate::report::terminal_safe_lines(&l.shown())
            )
        })
        .collect()
}

/// Writes `text` to `path` (its directory made if missing), never over an
/// existing file; the log line that says what happened. Run by the control
/// thread, so a slow disk never stops the screen.
pub fn write(path: &Path, text: &str) -> (LogKind, String) {
    let shown = path.display().to_string();
    match write_new(path, text.as_bytes()) {
        Ok(()) => (LogKind::Note, format!("log exported to {shown}")),
        Err(e) => (
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Stamp;

    #[test]
    fn the_exported_log_is_escaped_as_the_screen_shows_it() {
        let mut log = LogBook::new();
        // A hint quoting a process name any user chose.
        log.note(
            Stamp::default(),
            LogKind::Note,
            "pid 7 x\u{1b}]0;PWN\u{7}\u{1b}[2J\u{9b}1m\u{202e}: 0".into(),
        );
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("log.txt");
        let (kind, said) = write(&path, &text(&log));
        assert_eq!(kind, LogKind::Note, "{said}");
        let written = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(written.contains("pid 7 x\\u{1b}]0;PWN"), "{written}");
        assert!(
            !written
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{written:?}"
        );
        // Never over an existing file.
        let (kind, said) = write(&path, "other");
        assert_eq!(kind, LogKind::Problem, "{said}");
        assert!(said.contains("cannot export"), "{said}");
    }
}
