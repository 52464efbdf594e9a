//! The base protocol's framing: `Content-Length: N` headers, a blank line,
//! N bytes of JSON. Read here rather than by `lsp-server`, which allocates
//! whatever length a header claims: a client saying 10^12 must cost
//! nothing, so the length is checked before a byte is kept.

use std::io::{self, BufRead, Read, Write};

/// The largest message body kept: a 10 MB paste, escaped as JSON, fits
/// (and is answered with "too large to check"); with the few frames read
/// ahead, the server holds at most about 100 MB of messages at once.
pub const MAX_MESSAGE: u64 = 16 << 20;

/// The largest body read past: a client that claims more is lying or
/// broken, and reading on would swallow every later message into it.
pub const MAX_SKIP: u64 = 1 << 30;

/// Longest header line, and most header lines, before the stream is
/// called broken (real clients send one or two short ones).
const MAX_HEADER_LINE: u64 = 1024;
const MAX_HEADERS: usize = 32;

/// What one read of the stream found.
#[derive(Debug)]
pub enum Frame {
    /// A body of at most [`MAX_MESSAGE`] bytes.
    Body(Vec<u8>),
    /// A body longer than [`MAX_MESSAGE`], skipped unread.
    TooLarge(u64),
    /// The stream ended between messages.
    End,
}

fn broken(why: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.into())
}

/// Reads one header line, without its line break; `None` at the end of
/// the stream before any byte.
fn header_line(input: &mut dyn BufRead) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    (&mut *input)
        .take(MAX_HEADER_LINE)
        .read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(broken("a header line is too long or cut off"));
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| broken("a header is not UTF-8"))
}

/// Reads the next message. An error means the stream cannot be read on
/// (a header without a usable length leaves no way to find the next one).
pub fn read_frame(input: &mut dyn BufRead) -> io::Result<Frame> {
    let mut length: Option<u64> = None;
    let mut headers = 0;
    loop {
        let Some(line) = header_line(input)? else {
            return if headers == 0 {
                Ok(Frame::End)
            } else {
                Err(broken("the stream ended inside the headers"))
            };
        };
        if line.is_empty() {
            break;
        }
        headers += 1;
        if headers > MAX_HEADERS {
            return Err(broken("too many header lines"));
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(broken(format!("not a header: {line:?}")));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n = value
                .trim()
                .parse::<u64>()
                .map_err(|_| broken(format!("bad Content-Length {:?}", value.trim())))?;
            length = Some(n);
        }
    }
    let length = length.ok_or_else(|| broken("a message without Content-Length"))?;
    if length > MAX_SKIP {
        return Err(broken(format!(
            "a Content-Length of {length} bytes: no message is that long"
        )));
    }
    if length > MAX_MESSAGE {
        let skipped = io::copy(&mut (&mut *input).take(length), &mut io::sink())?;
        if skipped < length {
            return Err(broken("the stream ended inside a message"));
        }
        return Ok(Frame::TooLarge(length));
    }
    // Grown as the bytes arrive, never sized from the header up front.
    let mut body = Vec::with_capacity(length.min(64 << 10) as usize);
    (&mut *input).take(length).read_to_end(&mut body)?;
    if (body.len() as u64) < length {
        return Err(broken("the stream ended inside a message"));
    }
    Ok(Frame::Body(body))
}

/// The most JSON values (array elements, object members) a message may
/// hold: a tree of values costs 30 to 80 bytes each, so a 16 MiB message
/// of `[0,0,...]` took 600 MB as a `serde_json::Value`. A client's messages
/// carry a few dozen; a document's text is one string, however long.
pub const MAX_VALUES: usize = 100_000;

/// Whether `body` holds more than [`MAX_VALUES`] JSON values, counted by
/// the separators and openings outside strings, without parsing it.
pub fn too_many_values(body: &[u8]) -> bool {
    let (mut in_string, mut escaped, mut n) = (false, false, 0usize);
    for &b in body {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                n += 1;
                if n > MAX_VALUES {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Writes one message with its header, and flushes: the client waits for it.
pub fn write_frame(output: &mut dyn Write, body: &[u8]) -> io::Result<()> {
    write!(output, "Content-Length: {}\r\n\r\n", body.len())?;
    output.write_all(body)?;
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> io::Result<Frame> {
        read_frame(&mut io::Cursor::new(bytes))
    }

    #[test]
    fn a_message_is_read_whole() {
        let f = read(b"Content-Length: 2\r\n\r\n{}");
        assert!(matches!(f, Ok(Frame::Body(b)) if b == b"{}"));
    }

    #[test]
    fn lying_lengths_cost_nothing() {
        assert!(read(b"Content-Length: 1000000000000\r\n\r\n{}").is_err());
        // Refused before a byte of the body is read: the stream is not
        // swallowed however long the client keeps it open.
        let mut rest = io::Cursor::new(&b"Content-Length: 1073741825\r\n\r\n{}"[..]);
        assert!(read_frame(&mut rest).is_err());
        assert_eq!(rest.position(), 30);
        assert!(read(b"Content-Length: -5\r\n\r\n{}").is_err());
        assert!(read(b"Content-Length: 10\r\n\r\n{}").is_err());
        assert!(matches!(read(b""), Ok(Frame::End)));
    }

    #[test]
    fn values_are_counted_outside_strings_only() {
        let many = format!("[{}0]", "0,".repeat(MAX_VALUES));
        assert!(too_many_values(many.as_bytes()));
        let text = format!(r#"{{"text":"{}\"[,"}}"#, ",[{".repeat(MAX_VALUES));
        assert!(!too_many_values(text.as_bytes()));
    }
}
