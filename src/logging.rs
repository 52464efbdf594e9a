//! Where the headless runner's messages go: the terminal in the foreground,
//! the system log (journald or syslog, through /dev/log) as a daemon.

use std::io::Write;
use std::os::unix::net::UnixDatagram;

/// How serious a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

/// A sink for log lines.
pub trait Log {
    /// Writes one message.
    fn log(&mut self, level: Level, message: &str);

    /// An informational message.
    fn info(&mut self, message: &str) {
        self.log(Level::Info, message);
    }

    /// An error message.
    fn error(&mut self, message: &str) {
        self.log(Level::Error, message);
    }
}

/// Info to stdout, errors to stderr (cpuplugd's foreground behaviour).
#[derive(Debug, Default)]
pub struct Console;

impl Log for Console {
    fn log(&mut self, level: Level, message: &str) {
        // A closed terminal must not stop the daemon.
        let _ = match level {
            Level::Info => writeln!(std::io::stdout(), "{message}"),
            Level::Error => writeln!(std::io::stderr(), "{message}"),
        };
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
                .filter(|s| s.connect("/dev/log").is_ok()),
            pid: std::process::id(),
        }
    }
}

impl Default for SysLog {
    fn default() -> Self {
        SysLog::new()
    }
}

impl Log for SysLog {
    fn log(&mut self, level: Level, message: &str) {
        let priority = 3 * 8 + if level == Level::Error { 3 } else { 6 };
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

/// Keeps lines in memory (tests).
#[derive(Debug, Default)]
pub struct Memory {
    pub lines: Vec<(Level, String)>,
}

impl Log for Memory {
    fn log(&mut self, level: Level, message: &str) {
        self.lines.push((level, message.to_string()));
    }
}
