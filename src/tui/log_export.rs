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
        // Escaped as on the screen: the file is read with `cat` and `less`,
        // and a line may quote a process name or a file's bytes.
        .map(|l| {
            format!(
                "{} {}\n",
                view::clock(l.stamp),
                crate::report::terminal_safe_lines(&l.shown())
            )
        })
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::control::controller::Mode;
    use crate::rules::{SourceFile, SystemFacts, load};
    use crate::tui::app::SourceLabel;

    #[test]
    fn the_exported_log_is_escaped_as_the_screen_shows_it() {
        let facts = SystemFacts::any_machine(4, "test");
        let file = SourceFile::new(
            "t.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = Arc::new(load(&file, &facts).rules);
        let mut app = App::new(rules, file, SourceLabel::Live("/".into()), Mode::Observe);
        // A hint quoting a process name any user chose.
        app.note(
            LogKind::Note,
            "pid 7 x\u{1b}]0;PWN\u{7}\u{1b}[2J\u{9b}1m\u{202e}: 0",
        );
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("log.txt");
        export(&mut app, &path);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.contains("pid 7 x\\u{1b}]0;PWN"), "{text}");
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{text:?}"
        );
    }
}
