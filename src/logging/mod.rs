//! Where the messages of `plugtop run` (and `plugtop restore`) go: the
//! terminal in the foreground; as a daemon, the systemd journal with
//! structured fields when it is there ([`Journal`]), else syslog through
//! /dev/log ([`SysLog`]). One event is one [`Entry`], its details fields
//! of it; the main events carry a fixed [`message_id`].

mod console;
pub mod message_id;
mod systemd_journal;

pub use message_id::MessageId;
pub use systemd_journal::{JOURNAL_SOCKET, Journal, stderr_is_journal};

use std::borrow::Cow;
use std::io::Write;
use std::os::unix::net::UnixDatagram;

/// How serious a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

/// A syslog priority, for the journal and syslog: actions are notices,
/// faults warnings, refusals errors, the rest information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Err = 3,
    Warning = 4,
    Notice = 5,
    Info = 6,
}

impl Priority {
    /// The level a sink without priorities writes it at: warnings and
    /// worse are errors.
    pub fn level(self) -> Level {
        if self <= Priority::Warning {
            Level::Error
        } else {
            Level::Info
        }
    }
}

impl From<Level> for Priority {
    fn from(level: Level) -> Priority {
        match level {
            Level::Error => Priority::Err,
            Level::Info => Priority::Info,
        }
    }
}

/// One message with the fields a site filters on (`PLUGTOP_ACTION`,
/// `PLUGTOP_RULE`, `PLUGTOP_MODE`, ...): names in capitals, as the journal
/// wants them.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub priority: Priority,
    pub message: String,
    pub fields: Vec<(&'static str, String)>,
}

impl Entry {
    /// An entry without fields.
    pub fn new(priority: Priority, message: impl Into<String>) -> Entry {
        Entry {
            priority,
            message: message.into(),
            fields: Vec::new(),
        }
    }

    /// With the journal's `MESSAGE_ID`.
    pub fn id(self, id: MessageId) -> Entry {
        self.field("MESSAGE_ID", id.as_str())
    }

    /// With one more field (a name may come more than once).
    pub fn field(mut self, key: &'static str, value: impl Into<String>) -> Entry {
        self.fields.push((key, value.into()));
        self
    }
}

/// The entry for a refused start: priority err, so `journalctl -p err`
/// shows why the service did not start.
pub fn refusal_entry(reason: &str) -> Entry {
    Entry::new(Priority::Err, format!("refused to start: {reason}"))
        .id(message_id::REFUSED)
        .field("PLUGTOP_REFUSED", "1")
}

/// A sink for log lines.
pub trait LogSink {
    /// Writes one message.
    fn log(&mut self, level: Level, message: &str);

    /// Whether this sink keeps an entry's fields (the journal does): the
    /// others are not handed fields they would drop.
    fn wants_fields(&self) -> bool {
        false
    }

    /// Writes one structured message; sinks without fields write its text
    /// at the matching level.
    fn entry(&mut self, entry: &Entry) {
        self.log(entry.priority.level(), &entry.message);
    }

    /// An informational message.
    fn info(&mut self, message: &str) {
        self.log(Level::Info, message);
    }

    /// An error message.
    fn error(&mut self, message: &str) {
        self.log(Level::Error, message);
    }

    /// Whether the stream this sink writes to was closed by its reader
    /// (`plugtop run -f | head`): cpuplugd would die of SIGPIPE at that
    /// write, so `run` stops, the guest put back first.
    fn output_closed(&self) -> bool {
        false
    }

    /// Waits, a bounded time, until what was logged so far is written.
    fn flush(&mut self) {}
}

/// A message as a terminal or a log file gets it: each of its lines made
/// safe ([`crate::report::terminal_safe`]), so a hostname or a file's text
/// in it cannot drive the terminal of whoever reads the log.
pub(crate) fn shown(message: &str) -> Cow<'_, str> {
    crate::report::terminal_safe_lines(message)
}

/// Info to stdout, errors to stderr (cpuplugd's foreground behaviour),
/// written by a thread of their own ([`console`]): a terminal held by
/// Ctrl-S or a pipe nobody reads must not hold the control loop, which
/// would then put the guest back on no signal (cpuplugd waits in its
/// write). A closed stdout or stderr is [`LogSink::output_closed`], where
/// cpuplugd would die of SIGPIPE.
#[derive(Debug, Default)]
pub struct Console {
    writer: Option<console::Writer>,
}

impl LogSink for Console {
    fn log(&mut self, level: Level, message: &str) {
        let line = shown(message);
        if self.writer.is_none() && console::may_hold() {
            self.writer = console::Writer::start();
        }
        match &mut self.writer {
            Some(writer) => writer.send(level, line.into_owned()),
            // Files that never hold a write (a regular file, /dev/null),
            // or no thread to be had: written here.
            None => console::write(level, &line),
        }
    }

    fn output_closed(&self) -> bool {
        self.writer.as_ref().is_some_and(console::Writer::closed)
    }

    fn flush(&mut self) {
        if let Some(writer) = &self.writer {
            writer.flush();
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The system log, reached through the /dev/log socket (RFC 3164 lines,
/// facility daemon). Falls back to stderr when there is no socket.
#[derive(Debug)]
pub struct SysLog {
    socket: Option<UnixDatagram>,
    pid: u32,
}

impl SysLog {
    /// Connects to /dev/log if it exists.
    pub fn new() -> Self {
        SysLog {
            socket: UnixDatagram::unbound()
                .ok()
                // A syslog that stops reading must not hold the control
                // loop: a full queue is a failed send (the line goes to
                // stderr), never a wait.
                .filter(|s| s.connect("/dev/log").is_ok() && s.set_nonblocking(true).is_ok()),
            pid: std::process::id(),
        }
    }

    /// Whether /dev/log took the connection (else lines go to stderr).
    pub fn connected(&self) -> bool {
        self.socket.is_some()
    }

    fn send(&mut self, priority: Priority, message: &str) {
        let priority = 3 * 8 + priority as u8;
        let message = shown(message);
        let line = format!("<{priority}>plugtop[{}]: {message}", self.pid);
        let sent = self
            .socket
            .as_ref()
            .is_some_and(|s| s.send(line.as_bytes()).is_ok());
        if !sent {
            let _ = writeln!(std::io::stderr(), "{message}");
        }
    }
}

impl Default for SysLog {
    fn default() -> Self {
        SysLog::new()
    }
}

impl LogSink for SysLog {
    fn log(&mut self, level: Level, message: &str) {
        self.send(level.into(), message);
    }

    fn entry(&mut self, entry: &Entry) {
        self.send(entry.priority, &entry.message);
    }
}

/// Keeps lines in memory, and the structured entries apart (tests).
#[derive(Debug, Default)]
pub struct Memory {
    pub lines: Vec<(Level, String)>,
    pub entries: Vec<Entry>,
}

impl LogSink for Memory {
    fn wants_fields(&self) -> bool {
        true
    }

    fn log(&mut self, level: Level, message: &str) {
        self.lines.push((level, message.to_string()));
    }

    fn entry(&mut self, entry: &Entry) {
        self.lines
            .push((entry.priority.level(), entry.message.clone()));
        self.entries.push(entry.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinks_without_fields_write_an_entrys_text_at_its_level() {
        let mut m = Memory::default();
        m.entry(&Entry {
            priority: Priority::Warning,
            message: "warning: x".into(),
            fields: vec![("PLUGTOP_MODE", "auto".into())],
        });
        assert_eq!(m.lines, vec![(Level::Error, "warning: x".to_string())]);
        assert_eq!(m.entries.len(), 1);
    }
}
