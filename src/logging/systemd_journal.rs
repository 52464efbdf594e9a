//! The systemd journal, spoken to through its native protocol: one
//! datagram per entry, every field in it, so an entry keeps its priority,
//! its `MESSAGE_ID` and the fields a site filters on
//! (`journalctl PLUGTOP_ACTION=plug_cpu`). Written here rather than
//! through a logger crate so that the datagrams can be read back in tests
//! from a socket in a temporary directory.

use std::io::Write as _;
use std::os::unix::net::UnixDatagram;
use std::path::Path;

use super::{Entry, Level, LogSink, shown};

/// Where journald listens; plugtop logs there when it exists.
pub const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

/// The journal as a log sink.
#[derive(Debug)]
pub struct Journal {
    socket: UnixDatagram,
}

impl Journal {
    /// The journal, when this machine runs one.
    pub fn connect() -> Option<Journal> {
        Journal::connect_to(&socket_path())
    }

    /// The journal listening at `path` (a test's socket).
    pub fn connect_to(path: &Path) -> Option<Journal> {
        let socket = UnixDatagram::unbound().ok()?;
        socket.connect(path).ok()?;
        // A journal that stops taking entries must not hold the control
        // loop: a full queue is a failed send (the entry goes to stderr).
        socket.set_nonblocking(true).ok()?;
        Some(Journal { socket })
    }
}

/// The socket to log to: journald's, or in the test build the one
/// `PLUGTOP_TEST_JOURNAL_SOCKET` names.
fn socket_path() -> std::path::PathBuf {
    #[cfg(feature = "fault-injection")]
    if let Some(path) = std::env::var_os("PLUGTOP_TEST_JOURNAL_SOCKET") {
        return path.into();
    }
    JOURNAL_SOCKET.into()
}

/// Whether stderr is the journal's own stream (a service's `run -f`):
/// then a line on stderr would be a second entry, at the stream's
/// priority. The test build takes `PLUGTOP_TEST_JOURNAL_SOCKET` for it.
pub fn stderr_is_journal() -> bool {
    #[cfg(feature = "fault-injection")]
    if std::env::var_os("PLUGTOP_TEST_JOURNAL_SOCKET").is_some() {
        return true;
    }
    systemd_journal_logger::connected_to_journal()
}

/// Whether `key` may name a journal field that a client sets: capitals,
/// digits and `_`, not starting with `_` (journald's trusted fields) or a
/// digit, at most 64 bytes.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && !key.starts_with(|c: char| c == '_' || c.is_ascii_digit())
        && key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// One field: `KEY=value\n`, or, for a value with a newline in it, the
/// key, a newline, the value's length as 64-bit little-endian, the value
/// and a newline.
fn put_field(datagram: &mut Vec<u8>, key: &str, value: &[u8]) {
    datagram.extend_from_slice(key.as_bytes());
    if value.contains(&b'\n') {
        datagram.push(b'\n');
        datagram.extend_from_slice(&(value.len() as u64).to_le_bytes());
    } else {
        datagram.push(b'=');
    }
    datagram.extend_from_slice(value);
    datagram.push(b'\n');
}

/// The datagram for `entry`: the message (made safe for the terminal of
/// whoever reads the journal), its priority, plugtop's name, then the
/// entry's fields; a field whose name the journal would refuse is left
/// out rather than losing the entry.
pub fn datagram(entry: &Entry) -> Vec<u8> {
    let shown = shown(&entry.message);
    let message = crate::safe_text::cut_to(&shown, MAX_MESSAGE);
    let mut d = Vec::with_capacity(128 + message.len());
    put_field(&mut d, "MESSAGE", message.as_bytes());
    put_field(&mut d, "PRIORITY", &[b'0' + entry.priority as u8]);
    put_field(&mut d, "SYSLOG_IDENTIFIER", b"plugtop");
    for (key, value) in entry.fields.iter().filter(|(k, _)| valid_key(k)) {
        put_field(
            &mut d,
            key,
            crate::safe_text::cut_to(value, MAX_FIELD).as_bytes(),
        );
    }
    d
}

/// The longest message sent, bytes: an entry must fit one datagram (the
/// socket's buffer is about 200 KiB), or it would fall back to stderr, at
/// another priority and split into lines. A longer one is cut and says so.
const MAX_MESSAGE: usize = 16 * 1024;

/// The longest value of any other field, bytes.
const MAX_FIELD: usize = 4 * 1024;

impl LogSink for Journal {
    fn wants_fields(&self) -> bool {
        true
    }

    fn log(&mut self, level: Level, message: &str) {
        self.entry(&Entry::new(level.into(), message));
    }

    fn entry(&mut self, entry: &Entry) {
        // A journal that went away (or an entry too large for one
        // datagram) must not stop the daemon; stderr is what is left.
        if self.socket.send(&datagram(entry)).is_err() {
            let _ = writeln!(std::io::stderr(), "{}", shown(&entry.message));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logging::{Priority, message_id};

    #[test]
    fn a_huge_message_or_field_is_cut_to_fit_one_datagram() {
        let huge = "é".repeat(400_000);
        let entry = Entry::new(Priority::Err, huge.clone()).field("PLUGTOP_RULES", huge.clone());
        let d = datagram(&entry);
        assert!(d.len() < MAX_MESSAGE + MAX_FIELD + 1024, "{}", d.len());
        let text = String::from_utf8_lossy(&d);
        assert!(text.contains("bytes more)"), "says what was cut");
        assert!(text.contains("PRIORITY=3"));
    }

    /// The fields of a datagram, decoded as journald does.
    fn decode(mut d: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        while !d.is_empty() {
            let end = d.iter().position(|&b| b == b'\n' || b == b'=');
            let end = end.unwrap_or(d.len());
            let key = String::from_utf8_lossy(&d[..end]).into_owned();
            if d.get(end) == Some(&b'=') {
                let rest = &d[end + 1..];
                let nl = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                out.push((key, rest[..nl].to_vec()));
                d = rest.get(nl + 1..).unwrap_or_default();
            } else {
                let len = u64::from_le_bytes(d[end + 1..end + 9].try_into().unwrap()) as usize;
                let value = &d[end + 9..end + 9 + len];
                assert_eq!(d[end + 9 + len], b'\n');
                out.push((key, value.to_vec()));
                d = &d[end + 10 + len..];
            }
        }
        out
    }

    #[test]
    fn an_entry_is_one_datagram_with_its_priority_id_and_fields() {
        let entry = Entry::new(Priority::Err, "refused to start: x")
            .id(message_id::REFUSED)
            .field("PLUGTOP_DETAIL", "line one\nline two")
            .field("bad key", "left out")
            .field("_PID", "forged");
        let fields = decode(&datagram(&entry));
        let get = |k: &str| {
            fields
                .iter()
                .filter(|(key, _)| key == k)
                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(get("MESSAGE"), ["refused to start: x"]);
        assert_eq!(get("PRIORITY"), ["3"]);
        assert_eq!(get("SYSLOG_IDENTIFIER"), ["plugtop"]);
        assert_eq!(get("MESSAGE_ID"), [message_id::REFUSED.as_str()]);
        assert_eq!(get("PLUGTOP_DETAIL"), ["line one\nline two"]);
        assert!(get("_PID").is_empty() && get("bad key").is_empty());
    }

    #[test]
    fn a_message_with_control_characters_reaches_the_journal_made_safe() {
        let fields = decode(&datagram(&Entry::new(Priority::Info, "a\u{1b}[2Jb")));
        let message = String::from_utf8_lossy(&fields[0].1).into_owned();
        assert!(!message.contains('\u{1b}'), "{message:?}");
    }

    #[test]
    fn keys() {
        assert!(valid_key("PLUGTOP_CPU") && valid_key("MESSAGE_ID"));
        for bad in ["", "_PID", "1X", "lower", "A-B", &"A".repeat(65)] {
            assert!(!valid_key(bad), "{bad}");
        }
    }

    #[test]
    fn entries_reach_a_socket_and_a_closed_one_falls_back_without_failing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("socket");
        let listener = UnixDatagram::bind(&path).unwrap();
        let mut journal = Journal::connect_to(&path).unwrap();
        journal.error("bad");
        let mut buf = vec![0u8; 4096];
        let n = listener.recv(&mut buf).unwrap();
        let fields = decode(&buf[..n]);
        assert!(
            fields.contains(&("PRIORITY".into(), b"3".to_vec())),
            "{fields:?}"
        );
        drop(listener);
        journal.info("nobody listens");
        assert!(Journal::connect_to(&dir.path().join("none")).is_none());
    }

    #[test]
    fn a_journal_that_stops_reading_never_holds_the_logger() {
        // A datagram socket holds a few hundred entries unread
        // (net.unix.max_dgram_qlen); a blocking send would then wait
        // for a reader, and this test would never end.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("socket");
        let listener = UnixDatagram::bind(&path).unwrap();
        let mut journal = Journal::connect_to(&path).unwrap();
        for n in 0..4096 {
            journal.info(&format!("entry {n}"));
        }
        let mut buf = vec![0u8; 4096];
        let n = listener.recv(&mut buf).unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).contains("entry 0"));
    }
}
