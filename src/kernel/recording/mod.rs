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

use super::facts::ImportedHistory;
use super::{PresentCpusError, SystemFacts};
use super::{Sample, Source, SourceError, Stamp};

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
    /// Where an imported history came from (`plugtop import`); `None` for
    /// what plugtop itself recorded.
    pub imported: Option<Box<Provenance>>,
}

/// What an imported recording says about the history it was made from:
/// written after the header's other fields, only by `plugtop import`, so
/// what `plugtop record` writes is byte for byte what it always was and a
/// reader that predates it reads past it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The tool the history came from, as messages name it (`sysstat`,
    /// `node_exporter`).
    pub source: String,
    /// The history's own interval, in microseconds (the `sa` file's or
    /// the series' resolution).
    pub resolution_us: u64,
    /// Readings the history does not have, as rules spell them
    /// (`cpustat.guest`, `loadavg`): their values in the samples are
    /// placeholders no rule may be decided on. /proc table names the
    /// history lacks are simply not in its layouts.
    pub absent: Vec<String>,
    /// What the guest's own cpuplugd did, from its log (`--actions`), in
    /// time order.
    pub actions: Vec<GuestAction>,
}

/// One thing cpuplugd logged that it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestAction {
    pub at: Stamp,
    /// In words ("cpu3 will be enabled"), as cpuplugd logged it.
    pub text: String,
}

impl Provenance {
    /// "sysstat, 60 s": the source and its resolution, for headers.
    pub fn label(&self) -> String {
        let secs = self.resolution_us as f64 / 1e6;
        format!("{}, {secs} s", self.source)
    }

    /// The history's interval in seconds.
    pub fn resolution_seconds(&self) -> f64 {
        self.resolution_us as f64 / 1e6
    }

    fn encode(&self, p: &mut Vec<u8>) {
        put_str(p, &self.source);
        put_u64(p, self.resolution_us);
        put_u64(p, self.absent.len() as u64);
        for a in &self.absent {
            put_str(p, a);
        }
        put_u64(p, self.actions.len() as u64);
        for a in &self.actions {
            put_i64(p, a.at.micros);
            put_str(p, &a.text);
        }
    }

    fn decode(c: &mut Cursor<'_>) -> Option<Provenance> {
        let source = c.string().ok()?;
        let resolution_us = c.u64().ok()?;
        let mut absent = Vec::new();
        for _ in 0..c.u64().ok()? {
            absent.push(c.string().ok()?);
        }
        let mut actions = Vec::new();
        for _ in 0..c.u64().ok()? {
            let at = Stamp {
                micros: c.i64().ok()?,
            };
            actions.push(GuestAction {
                at,
                text: c.string().ok()?,
            });
        }
        Some(Provenance {
            source,
            resolution_us,
            absent,
            actions,
        })
    }
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
        if let Some(imported) = &self.imported {
            imported.encode(&mut p);
        }
        p
    }

    fn decode(payload: &[u8]) -> Option<Header> {
        let mut c = Cursor::new(payload);
        let mut header = Header {
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
            imported: None,
        };
        if !c.is_done() {
            header.imported = Some(Box::new(Provenance::decode(&mut c)?));
        }
        Some(header)
    }
}

/// Why a recording cannot be read (at all, or past some point).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {what} at byte {offset}")]
pub struct RecordingError {
    pub path: String,
    pub offset: u64,
    pub what: Damage,
}

/// What is wrong with a recording at the offset a [`RecordingError`] names.
#[derive(Debug, thiserror::Error)]
pub enum Damage {
    /// The file cannot be opened or its first bytes read.
    #[error("cannot read ({0})")]
    Unreadable(std::io::Error),
    #[error("not a plugtop recording (it does not start with \"plugtop-recording\")")]
    NotARecording,
    #[error("format version {0}, but this plugtop reads version {VERSION}")]
    OtherVersion(u16),
    #[error("the file ends before the format version")]
    NoVersion,
    /// The header's frame cannot be read.
    #[error("header {0}")]
    HeaderFrame(FrameDamage),
    #[error("expected the header record, found kind {0}")]
    NotTheHeader(u8),
    #[error("the header record is malformed")]
    MalformedHeader,
}

/// Why a frame (a record with its length and checksum) cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameDamage {
    #[error("cannot be read ({0})")]
    Unreadable(std::io::Error),
    /// The file ends inside a frame whose length was read: a write that
    /// was cut short.
    #[error("is truncated (a torn last write)")]
    Torn,
    #[error("is truncated")]
    Truncated,
    #[error("has an impossible length")]
    ImpossibleLength,
    #[error("fails its checksum")]
    Checksum,
    /// The frame is whole but its record does not decode.
    #[error("record cannot be decoded ({0:?})")]
    Undecodable(codec::DecodeError),
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

/// How much of a recording file is read at a time.
const CHUNK: usize = 256 << 10;
/// The largest record read: a sample of a 65,536-CPU guest is a few
/// megabytes; a length beyond this is damage, not data.
const MOST_RECORD_BYTES: usize = 64 << 20;

/// The bytes of a recording, read as replay goes on rather than whole: a
/// recording of any length replays in the memory of its largest record,
/// and a file that is no recording is refused after its first bytes.
#[derive(Debug)]
struct RecordingBytes {
    buf: Vec<u8>,
    /// Where the unread bytes start in `buf`.
    pos: usize,
    /// The file offset of `buf[0]`, for messages.
    offset: u64,
    /// The rest of the file; `None` in memory or once it ended.
    file: Option<File>,
}

impl RecordingBytes {
    fn in_memory(data: Vec<u8>) -> RecordingBytes {
        RecordingBytes {
            buf: data,
            pos: 0,
            offset: 0,
            file: None,
        }
    }

    /// The bytes not yet consumed.
    fn unread(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// The file offset of the first unread byte.
    fn at(&self) -> u64 {
        self.offset + self.pos as u64
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }

    /// Reads on until `want` bytes are unread or the file ends; false when
    /// nothing more came.
    fn fill(&mut self, want: usize) -> std::io::Result<bool> {
        let Some(file) = &mut self.file else {
            return Ok(false);
        };
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.offset += self.pos as u64;
            self.pos = 0;
        }
        let before = self.buf.len();
        while self.buf.len() < want {
            let have = self.buf.len();
            let room = (want - have).max(CHUNK);
            self.buf.resize(have + room, 0);
            let n = match file.read(&mut self.buf[have..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
                Err(e) => {
                    self.buf.truncate(have);
                    return Err(e);
                }
            };
            self.buf.truncate(have + n);
            if n == 0 {
                self.file = None;
                break;
            }
        }
        Ok(self.buf.len() > before)
    }
}

/// Replays a recording as a [`Source`], with the recorded times.
#[derive(Debug)]
pub struct RecordingSource {
    path: String,
    input: RecordingBytes,
    decoder: Decoder,
    header: Header,
    peeked: Option<Sample>,
    replayed: u64,
    warning: Option<String>,
    /// The damage that stopped replay, and where (`fails its checksum at
    /// byte 84`).
    damage: Option<String>,
    stopped: bool,
    /// The stamp of the last sample given, and how many of the imported
    /// history's actions were handed out with the samples so far.
    last_stamp: Option<Stamp>,
    actions_given: usize,
    events: Vec<String>,
}

impl RecordingSource {
    /// Opens and checks `path`; fails if it is not a recording this build
    /// reads. The samples are read as replay asks for them.
    pub fn open(path: &Path) -> Result<Self, RecordingError> {
        let shown = path.display().to_string();
        // Never blocks (a FIFO is refused at once) and never reads on
        // without end (/dev/zero is no regular file).
        let file = crate::kernel::fs::open_named(path).map_err(|e| RecordingError {
            path: shown.clone(),
            offset: 0,
            what: Damage::Unreadable(e),
        })?;
        let input = RecordingBytes {
            buf: Vec::new(),
            pos: 0,
            offset: 0,
            file: Some(file),
        };
        RecordingSource::from_input(shown, input)
    }

    /// Reads a recording held in memory; `name` is used in messages.
    pub fn from_bytes(name: impl Into<String>, data: Vec<u8>) -> Result<Self, RecordingError> {
        RecordingSource::from_input(name.into(), RecordingBytes::in_memory(data))
    }

    fn from_input(path: String, mut input: RecordingBytes) -> Result<Self, RecordingError> {
        let fail = |offset: u64, what: Damage| RecordingError {
            path: path.clone(),
            offset,
            what,
        };
        let v = MAGIC.len();
        input
            .fill(v + 2)
            .map_err(|e| fail(0, Damage::Unreadable(e)))?;
        let data = input.unread();
        if data.len() < v || &data[..v] != MAGIC {
            return Err(fail(0, Damage::NotARecording));
        }
        match data.get(v..v + 2).map(|b| u16::from_le_bytes([b[0], b[1]])) {
            Some(VERSION) => {}
            Some(other) => {
                return Err(fail(v as u64, Damage::OtherVersion(other)));
            }
            None => {
                return Err(fail(v as u64, Damage::NoVersion));
            }
        }
        input.consume(v + 2);
        let start = input.at();
        let (kind, payload, used) =
            next_frame(&mut input).map_err(|what| fail(start, Damage::HeaderFrame(what)))?;
        if kind != KIND_HEADER {
            return Err(fail(start, Damage::NotTheHeader(kind)));
        }
        let header = Header::decode(&input.unread()[payload])
            .ok_or_else(|| fail(start, Damage::MalformedHeader))?;
        input.consume(used);
        let mut source = RecordingSource {
            path,
            input,
            decoder: Decoder::new(),
            header,
            peeked: None,
            replayed: 0,
            warning: None,
            damage: None,
            stopped: false,
            last_stamp: None,
            actions_given: 0,
            events: Vec::new(),
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
        while !self.stopped {
            let at = self.input.at();
            if self.input.unread().is_empty() {
                match self.input.fill(1) {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(e) => {
                        self.damaged(at, FrameDamage::Unreadable(e));
                        return None;
                    }
                }
            }
            let (kind, payload, used) = match next_frame(&mut self.input) {
                Ok(f) => f,
                Err(what) => {
                    self.damaged(at, what);
                    return None;
                }
            };
            let decoded = self.decoder.decode(kind, &self.input.unread()[payload]);
            self.input.consume(used);
            match decoded {
                Ok(Some(sample)) => return Some(sample),
                Ok(None) => {}
                Err(e) => {
                    self.damaged(at, FrameDamage::Undecodable(e));
                    return None;
                }
            }
        }
        None
    }

    fn damaged(&mut self, offset: u64, what: FrameDamage) {
        self.stopped = true;
        let damage = format!("{what} at byte {offset}");
        // (kernel names no report: the one noun here is said in place)
        self.warning = Some(match self.replayed + u64::from(self.peeked.is_some()) {
            0 => format!("{}: {damage}; no sample before it to replay", self.path),
            1 => format!("{}: {damage}; replaying the 1 sample before it", self.path),
            n => format!(
                "{}: {damage}; replaying the {n} samples before it",
                self.path
            ),
        });
        self.damage = Some(damage);
    }
}

/// Why a frame could not be read from the bytes at hand.
enum FrameFault {
    /// More bytes are needed (at least this many in all).
    Short(usize),
    /// The frame is damaged.
    Damaged(FrameDamage),
}

/// The frame at the start of `input`, reading on as far as it needs: its
/// kind, where its payload lies in the unread bytes, and its whole length.
fn next_frame(
    input: &mut RecordingBytes,
) -> Result<(u8, std::ops::Range<usize>, usize), FrameDamage> {
    loop {
        match read_frame(input.unread()) {
            Ok(frame) => return Ok(frame),
            Err(FrameFault::Damaged(what)) => return Err(what),
            Err(FrameFault::Short(want)) => {
                let torn = want > 16;
                let more = input.fill(want).map_err(FrameDamage::Unreadable)?;
                if !more {
                    return Err(if torn {
                        FrameDamage::Torn
                    } else {
                        FrameDamage::Truncated
                    });
                }
            }
        }
    }
}

/// One frame at the start of `data`: kind, payload range and the length
/// of the whole frame.
fn read_frame(data: &[u8]) -> Result<(u8, std::ops::Range<usize>, usize), FrameFault> {
    // Kind and length take at most 11 bytes; ask for 16 when they are cut.
    let mut c = Cursor::new(data);
    let kind = c.byte().map_err(|_| FrameFault::Short(16))?;
    let len = c.u64().map_err(|_| {
        if data.len() >= 11 {
            FrameFault::Damaged(FrameDamage::ImpossibleLength)
        } else {
            FrameFault::Short(16)
        }
    })?;
    let len = usize::try_from(len)
        .ok()
        .filter(|len| *len <= MOST_RECORD_BYTES)
        .ok_or(FrameFault::Damaged(FrameDamage::ImpossibleLength))?;
    let body = c.position();
    let whole = body + len + 4;
    if data.len() < whole {
        return Err(FrameFault::Short(whole.max(17)));
    }
    let crc = &data[body + len..whole];
    let want = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32fast::hash(&data[..body + len]) != want {
        return Err(FrameFault::Damaged(FrameDamage::Checksum));
    }
    Ok((kind, body..body + len, whole))
}

impl Source for RecordingSource {
    fn facts(&mut self) -> SystemFacts {
        let first = self.peeked.as_ref();
        SystemFacts {
            present_cpus: first.map(|s| s.present.cpus()).ok_or_else(|| {
                PresentCpusError::EmptyRecording {
                    path: self.path.clone(),
                    damage: self.damage.clone(),
                }
            }),
            cmm_pages: first.is_some_and(|s| s.cmm_pages.is_some()),
            zvm_guest: None,
            meminfo_names: first.and_then(|s| s.meminfo.kernel_names()),
            vmstat_names: first.and_then(|s| s.vmstat.kernel_names()),
            origin: match &self.header.imported {
                Some(p) => format!(
                    "the {} history {} (host {})",
                    p.source, self.path, self.header.host
                ),
                None => format!(
                    "the recording {} (host {}, kernel {})",
                    self.path, self.header.host, self.header.kernel
                ),
            },
            history: self.header.imported.as_ref().map(|p| ImportedHistory {
                source: p.source.clone(),
                resolution: p.resolution_seconds(),
                absent: p.absent.clone(),
            }),
        }
    }

    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
        let sample = self.peeked.take().or_else(|| self.decode_next())?;
        self.replayed += 1;
        self.events.clear();
        if let Some(p) = &self.header.imported {
            // The actions logged after the reading before and up to this
            // one: what cpuplugd did in this interval.
            let rest = &p.actions[self.actions_given..];
            let due = rest.partition_point(|a| a.at <= sample.stamp);
            for a in &rest[..due] {
                if self.last_stamp.is_none_or(|last| a.at > last) {
                    self.events.push(action_words(a));
                }
            }
            self.actions_given += due;
        }
        self.last_stamp = Some(sample.stamp);
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

    fn status(&self) -> Option<String> {
        self.header.imported.as_deref().map(Provenance::label)
    }

    fn events(&mut self) -> Vec<String> {
        std::mem::take(&mut self.events)
    }
}

/// An action of cpuplugd's log as the screen and `eval` show it.
fn action_words(a: &GuestAction) -> String {
    let t = a.at;
    let day = t.secs().rem_euclid(86_400);
    format!(
        "cpuplugd at {:02}:{:02}:{:02}: {}",
        day / 3600,
        day / 60 % 60,
        day % 60,
        a.text
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(data: Vec<u8>) -> String {
        match RecordingSource::from_bytes("r.rec", data) {
            Ok(_) => "opened".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_refused_recording_says_what_and_where_as_before() {
        assert_eq!(
            opened(b"not a recording at all".to_vec()),
            "r.rec: not a plugtop recording (it does not start with \"plugtop-recording\") at byte 0"
        );
        assert_eq!(
            opened(MAGIC.to_vec()),
            format!(
                "r.rec: the file ends before the format version at byte {}",
                MAGIC.len()
            )
        );
        let mut other = MAGIC.to_vec();
        other.extend_from_slice(&(VERSION + 1).to_le_bytes());
        assert_eq!(
            opened(other),
            format!(
                "r.rec: format version {}, but this plugtop reads version {VERSION} at byte {}",
                VERSION + 1,
                MAGIC.len()
            )
        );
        let mut no_header = MAGIC.to_vec();
        no_header.extend_from_slice(&VERSION.to_le_bytes());
        assert_eq!(
            opened(no_header),
            format!("r.rec: header is truncated at byte {}", MAGIC.len() + 2)
        );
    }

    fn machine(imported: Option<Box<Provenance>>) -> Header {
        Header {
            host: "g".into(),
            kernel: "6.4".into(),
            cpu_model: "z16".into(),
            root: "/".into(),
            page_size: 4096,
            present_cpus: 4,
            interval_us: 1_000_000,
            started: Stamp::new(1_700_000_000, 5),
            imported,
        }
    }

    /// What `plugtop record` writes is what version 1 always held: the
    /// header's fields and nothing after `started`.
    #[test]
    fn a_header_of_plugtop_s_own_recording_is_byte_for_byte_as_before() {
        let mut old = Vec::new();
        for s in ["g", "6.4", "z16", "/"] {
            put_str(&mut old, s);
        }
        put_u64(&mut old, 4096);
        put_u64(&mut old, 4);
        put_u64(&mut old, 1_000_000);
        put_i64(&mut old, 1_700_000_000_000_005);
        assert_eq!(machine(None).encode(), old);
        assert_eq!(Header::decode(&old), Some(machine(None)));
    }

    /// An imported recording's provenance comes back whole, and a header
    /// whose provenance is cut short is malformed, not silently partial.
    #[test]
    fn an_imported_header_keeps_its_provenance() {
        let p = Provenance {
            source: "sysstat".into(),
            resolution_us: 60_000_000,
            absent: vec!["loadavg".into()],
            actions: vec![GuestAction {
                at: Stamp::new(1_700_000_100, 0),
                text: "cpu3 will be enabled".into(),
            }],
        };
        assert_eq!(p.label(), "sysstat, 60 s");
        let h = machine(Some(Box::new(p)));
        let bytes = h.encode();
        assert_eq!(Header::decode(&bytes), Some(h));
        assert_eq!(Header::decode(&bytes[..bytes.len() - 3]), None);
    }

    #[test]
    fn every_frame_damage_reads_as_it_did_as_text() {
        let io = std::io::Error::other("gone");
        let said = [
            (
                FrameDamage::Unreadable(io).to_string(),
                "cannot be read (gone)",
            ),
            (
                FrameDamage::Torn.to_string(),
                "is truncated (a torn last write)",
            ),
            (FrameDamage::Truncated.to_string(), "is truncated"),
            (
                FrameDamage::ImpossibleLength.to_string(),
                "has an impossible length",
            ),
            (FrameDamage::Checksum.to_string(), "fails its checksum"),
            (
                FrameDamage::Undecodable(codec::DecodeError::NoLayout).to_string(),
                "record cannot be decoded (NoLayout)",
            ),
            (
                Damage::HeaderFrame(FrameDamage::Checksum).to_string(),
                "header fails its checksum",
            ),
            (
                Damage::NotTheHeader(7).to_string(),
                "expected the header record, found kind 7",
            ),
            (
                Damage::MalformedHeader.to_string(),
                "the header record is malformed",
            ),
        ];
        for (got, want) in said {
            assert_eq!(got, want);
        }
    }
}
