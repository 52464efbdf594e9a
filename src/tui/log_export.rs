//! `e`: writing the log to the path the user gave (see
//! [`crate::tui::state_dir`] for the default offered).

use std::path::Path;

use crate::kernel::fs::Replace;
use crate::tui::log_book::{LogBook, LogKind};
use crate::tui::modal::Dialog;
use crate::tui::update::Update;
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

/// Writes `text` to `path`, never over an existing file nor through a
/// link, in a directory that exists (or plugtop's own state directory),
/// as the what-if editor's Ctrl-S places a file
/// ([`crate::tui::state_dir::place`], whose words say why not). What the
/// screen shows of it, paused or not, and logs: written, or why not. Run
/// by the control thread, so a slow disk never stops the screen.
pub fn write(path: &Path, text: &str) -> Vec<Update> {
    let shown = path.display().to_string();
    match crate::tui::state_dir::place(path, text.as_bytes(), Replace::Nothing) {
        Ok(()) => vec![
            Update::Note(LogKind::Note, format!("log exported to {shown}")),
            Update::Show(Dialog::Exported(shown)),
        ],
        Err(e) => Update::failed(format!(
            "cannot export the log to {shown}: {}",
            crate::error_chain::text(&e)
        )),
    }
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
        let said = write(&path, &text(&log));
        assert!(
            matches!(&said[..], [Update::Note(LogKind::Note, _), Update::Show(Dialog::Exported(p))] if Path::new(p) == path),
            "{said:?}"
        );
        let written = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(written.contains("pid 7 x\\u{1b}]0;PWN"), "{written}");
        assert!(
            !written
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{written:?}"
        );
        // Never over an existing file, nor a FIFO, nor into a directory
        // that does not exist (made only when it is plugtop's own): each
        // said where the user looks, in the words the what-if editor's
        // Ctrl-S uses.
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join("fifo"),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let fifo = dir.path().join("fifo").display().to_string();
        let missing = dir.path().join("no/such");
        for (to, says) in [
            (path.clone(), format!("{} exists already", path.display())),
            (
                dir.path().join("fifo"),
                format!("{fifo} is a FIFO; plugtop replaces only a regular file"),
            ),
            (
                missing.join("log.txt"),
                format!("the directory {} does not exist", missing.display()),
            ),
        ] {
            let said = write(&to, "other");
            assert!(
                matches!(&said[..], [Update::Note(LogKind::Problem, n), Update::Show(Dialog::Message(m))]
                    if n == m && m.starts_with("cannot export the log to ") && m.contains(&says)
                        && !m.contains("os error")),
                "{said:?}"
            );
        }
        assert!(!dir.path().join("no").exists());
    }
}
