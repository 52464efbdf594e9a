//! Recordings: a versioned, append-only file of samples that a user can take
//! home from a guest and replay anywhere. Each record is framed with its
//! length and a CRC32, and written with one `write` call, so a torn write
//! (a `kill -9`, a full disk) is detected and dropped on replay. The byte
//! layout is in docs/recording.md.

pub mod codec;
pub mod export;
pub mod varint;

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use codec::{Decoder, Encoder, frame};
use varint::{Cursor, put_i64, put_str, put_u64};

use super::{Sample, Source, SourceError, Stamp};
use crate::rules::SystemFacts;

/// The first bytes of every recording.
pub const MAGIC: &[u8; 18] = b"plugtop-recording\n";
/// The format version this build writes and reads.
pub const VERSION: u16 = 1;
/// Record kind of the header (the first record after magic and version).
pub const KIND_HEADER: u8 = 0;

/// What a recording says about where it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub host: String,
    pub kernel: String,
    pub cpu_model: String,
    /// The root directory that was read (`/` on a guest).
    pub root: String,
    pub page_size: u64,
    pub present_cpus: u32,
    /// The sampling interval asked for, in microseconds.
    pub interval_us: u64,
    pub started: Stamp,
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let mut p = Vec::new();
        put_str(&mut p, &self.host);
        put_str(&mut p, &self.kernel);
        put_str(&mut p, &self.cpu_model);
        put_str(&mut p, &self.root);
        put_u64(&mut p, self.page_size);
        put_u64(&mut p, u64::from(self.present_cpus));
        put_u64(&mut p, self.interval_us);
        put_i64(&mut p, self.started.micros);
        p
    }

    fn decode(payload: &[u8]) -> Option<Header> {
        let mut c = Cursor::new(payload);
        Some(Header {
            host: c.string().ok()?,
            kernel: c.string().ok()?,
            cpu_model: c.string().ok()?,
            root: c.string().ok()?,
            page_size: c.u64().ok()?,
            present_cpus: c.u32().ok()?,
            interval_us: c.u64().ok()?,
            started: Stamp {
                micros: c.i64().ok()?,
            },
        })
    }
}

/// Why a recording cannot be read (at all, or past some point).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {what} at byte {offset}")]
pub struct RecordingError {
    pub path: String,
    pub offset: u64,
    pub what: String,
}

/// Appends samples to a recording file.
#[derive(Debug)]
pub struct RecordingWriter<W: Write> {
    out: W,
    encoder: Encoder,
    buf: Vec<u8>,
    bytes: u64,
    samples: u64,
}

impl RecordingWriter<File> {
    /// Creates `path` (refusing to overwrite a file) and writes the header.
    pub fn create(path: &Path, header: &Header) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)?;
        RecordingWriter::new(file, header)
    }
}

impl<W: Write> RecordingWriter<W> {
    /// Writes the magic, the version and the header to `out`.
    pub fn new(mut out: W, header: &Header) -> std::io::Result<Self> {
        let mut buf = Vec::with_capacity(4096);
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(&VERSION.to_le_bytes());
        frame(&mut buf, KIND_HEADER, &header.encode());
        out.write_all(&buf)?;
        out.flush()?;
        Ok(RecordingWriter {
            out,
            encoder: Encoder::new(),
            bytes: buf.len() as u64,
            buf,
            samples: 0,
        })
    }

    /// Appends one sample with a single write, so a crash tears at most this record.
    pub fn append(&mut self, sample: &Sample) -> std::io::Result<usize> {
        self.buf.clear();
        self.encoder.encode(sample, &mut self.buf);
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        self.bytes += self.buf.len() as u64;
        self.samples += 1;
        Ok(self.buf.len())
    }

    /// Bytes written so far, header included.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Samples written so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The largest recording read: a month of 1-second readings of a large
/// guest is a few hundred megabytes.
pub const MOST_RECORDING_BYTES: u64 = 2 << 30;

/// Replays a recording as a [`Source`], with the recorded times.
#[derive(Debug)]
pub struct RecordingSource {
    path: String,
    data: Vec<u8>,
    pos: usize,
    decoder: Decoder,
    header: Header,
    peeked: Option<Sample>,
    replayed: u64,
    warning: Option<String>,
    stopped: bool,
}

impl RecordingSource {
    /// Opens and checks `path`; fails if it is not a recording this build reads.
    pub fn open(path: &Path) -> Result<Self, RecordingError> {
        let shown = path.display().to_string();
        let mut data = Vec::new();
        // Never blocks (a FIFO is refused at once) and never reads on
        // without end (/dev/zero is no regular file; a file larger than
        // any recording is refused by its size).
        crate::kernel::regular::open_for_reading(path)
            .and_then(|f| crate::kernel::regular::must_be_regular(f, path))
            .and_then(|f| {
                let size = f.metadata()?.len();
                if size > MOST_RECORDING_BYTES {
                    return Err(std::io::Error::other(format!(
                        "{size} bytes, more than any recording plugtop makes ({MOST_RECORDING_BYTES})"
                    )));
                }
                f.take(MOST_RECORDING_BYTES).read_to_end(&mut data)
            })
            .map_err(|e| RecordingError {
                path: shown.clone(),
                offset: 0,
                what: format!("cannot read ({e})"),
            })?;
        RecordingSource::from_bytes(shown, data)
    }

    /// Reads a recording held in memory; `name` is used in messages.
    pub fn from_bytes(name: impl Into<String>, data: Vec<u8>) -> Result<Self, RecordingError> {
        let path = name.into();
        let fail = |offset: usize, what: String| RecordingError {
            path: path.clone(),
            offset: offset as u64,
            what,
        };
        if data.len() < MAGIC.len() || &data[..MAGIC.len()] != MAGIC {
            return Err(fail(
                0,
                "not a plugtop recording (it does not start with \"plugtop-recording\")".into(),
            ));
        }
        let v = MAGIC.len();
        let version = data.get(v..v + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        match version {
            Some(VERSION) => {}
            Some(other) => {
                return Err(fail(
                    v,
                    format!("format version {other}, but this plugtop reads version {VERSION}"),
                ));
            }
            None => return Err(fail(v, "the file ends before the format version".into())),
        }
        let start = v + 2;
        let (kind, payload, next) =
            read_frame(&data, start).map_err(|what| fail(start, format!("header {what}")))?;
        if kind != KIND_HEADER {
            return Err(fail(
                start,
                format!("expected the header record, found kind {kind}"),
            ));
        }
        let header = Header::decode(payload)
            .ok_or_else(|| fail(start, "the header record is malformed".into()))?;
        let mut source = RecordingSource {
            path,
            data,
            pos: next,
            decoder: Decoder::new(),
            header,
            peeked: None,
            replayed: 0,
            warning: None,
            stopped: false,
        };
        source.peeked = source.decode_next();
        Ok(source)
    }

    /// Where the recording was made.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Why replay stopped early, once it has (the damage and its byte offset).
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    fn decode_next(&mut self) -> Option<Sample> {
        while !self.stopped && self.pos < self.data.len() {
            let at = self.pos;
            let (kind, payload, next) = match read_frame(&self.data, at) {
                Ok(f) => f,
                Err(what) => {
                    self.damaged(at, what);
                    return None;
                }
            };
            let decoded = self.decoder.decode(kind, payload);
            self.pos = next;
            match decoded {
                Ok(Some(sample)) => return Some(sample),
                Ok(None) => {}
                Err(e) => {
                    self.damaged(at, format!("record cannot be decoded ({e:?})"));
                    return None;
                }
            }
        }
        None
    }

    fn damaged(&mut self, offset: usize, what: String) {
        self.stopped = true;
        self.warning = Some(format!(
            "{}: {what} at byte {offset}; replaying the {} samples before it",
            self.path,
            self.replayed + u64::from(self.peeked.is_some())
        ));
    }
}

/// One frame at `at`: kind, payload and the offset after it.
fn read_frame(data: &[u8], at: usize) -> Result<(u8, &[u8], usize), String> {
    let rest = &data[at.min(data.len())..];
    let mut c = Cursor::new(rest);
    let kind = c.byte().map_err(|_| "is truncated".to_string())?;
    let len = c.u64().map_err(|_| "is truncated".to_string())?;
    let len = usize::try_from(len).map_err(|_| "has an impossible length".to_string())?;
    let payload = c
        .take(len)
        .map_err(|_| "is truncated (a torn last write)".to_string())?;
    let body_end = c.position();
    let crc = c
        .take(4)
        .map_err(|_| "is truncated (a torn last write)".to_string())?;
    let want = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32fast::hash(&rest[..body_end]) != want {
        return Err("fails its checksum".into());
    }
    Ok((kind, payload, at + c.position()))
}

impl Source for RecordingSource {
    fn facts(&mut self) -> SystemFacts {
        let first = self.peeked.as_ref();
        SystemFacts {
            present_cpus: first
                .map(|s| s.present.cpus())
                .ok_or_else(|| format!("{} holds no samples", self.path)),
            cmm_pages: first.is_some_and(|s| s.cmm_pages.is_some()),
            meminfo_names: first.and_then(|s| s.meminfo.kernel_names()),
            vmstat_names: first.and_then(|s| s.vmstat.kernel_names()),
            origin: format!(
                "the recording {} (host {}, kernel {})",
                self.path, self.header.host, self.header.kernel
            ),
        }
    }

    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
        let sample = self.peeked.take().or_else(|| self.decode_next())?;
        self.replayed += 1;
        if self.peeked.is_none() && !self.stopped {
            self.peeked = self.decode_next();
        }
        Some(Ok(sample))
    }

    fn warning(&mut self) -> Option<String> {
        if self.stopped && self.peeked.is_none() {
            self.warning.take()
        } else {
            None
        }
    }
}
