//! Keys from the terminal, decoded by plugtop itself. crossterm's own reader
//! waits for the end of any escape sequence it has begun: after the bytes
//! `ESC [ ?` (the start of a terminal's reply) it swallowed every later key,
//! `q` and Ctrl-C included. Here a sequence that does not finish within
//! [`ESCAPE_WAIT`], or grows past [`LONGEST_SEQUENCE`], is dropped, and
//! sequences plugtop does not know are skipped whole, so the keyboard always
//! comes back.
//!
//! A bracketed paste (`ESC [ 200 ~` text `ESC [ 201 ~`) is not a sequence
//! but text: it is collected whole, up to [`LONGEST_PASTE`], and delivered as
//! one `Event::Paste`, so pasted text is never taken for keys (`q`, `A`,
//! `y`). Its end may come late, over a slow link, but not never: after
//! [`PASTE_WAIT`] without a byte the paste ends with what came.

use std::io::{IsTerminal, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};

/// How long the rest of an escape sequence may take to arrive. Terminals
/// send a sequence in one write; over a slow SSH link it can be split, and
/// 50 ms still tells a lone Esc from the start of an arrow key.
pub const ESCAPE_WAIT: Duration = Duration::from_millis(50);

/// Longest escape sequence kept while waiting for its end; longer ones are
/// not keys and are dropped.
pub const LONGEST_SEQUENCE: usize = 64;

/// Most text one paste delivers; the rest of a longer paste is dropped
/// (and said so with [`TermInput::PasteCut`]) rather than held.
pub const LONGEST_PASTE: usize = 2 << 20;

/// How long a paste may pause before it is taken as ended without its end
/// marker. Terminals send a paste back to back; this only gives the
/// keyboard back when the end marker is lost.
pub const PASTE_WAIT: Duration = Duration::from_secs(2);

/// What starts a bracketed paste (after `ESC [ ? 2004 h`).
const PASTE_START: &[u8] = b"\x1b[200~";
/// What ends it; ESC is only its first byte.
const PASTE_END: &[u8] = b"\x1b[201~";

/// What the terminal sent, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermInput {
    /// A key, a click, or a whole paste (`Event::Paste`, its text as sent).
    Event(Event),
    /// The paste just before was longer than [`LONGEST_PASTE`]: these many
    /// bytes of its end were dropped.
    PasteCut(usize),
}

/// Turns terminal bytes into key and mouse events, byte by byte, never
/// holding more than [`LONGEST_SEQUENCE`] bytes of a sequence or
/// [`LONGEST_PASTE`] of a paste.
#[derive(Debug, Default)]
pub struct KeyDecoder {
    pending: Vec<u8>,
    /// Inside a bracketed paste: its text so far.
    paste: Option<Paste>,
    /// Inside a sequence too long to keep: its bytes are dropped up to its end.
    skipping: Skip,
    /// The last byte skipped was ESC (the first half of the terminator).
    skipped_escape: bool,
}

/// Which kind of over-long sequence is being skipped.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Skip {
    #[default]
    Nothing,
    /// A control sequence: up to its final byte.
    Control,
    /// A string sequence (OSC, DCS, APC, PM, SOS): up to BEL or ESC backslash.
    Text,
}

/// A bracketed paste being collected.
#[derive(Debug, Default)]
struct Paste {
    text: Vec<u8>,
    /// Bytes past [`LONGEST_PASTE`], dropped.
    dropped: usize,
    /// How many bytes of [`PASTE_END`] have come so far.
    matched: usize,
}

impl Paste {
    /// Keeps `bytes` as text, as far as the bound allows.
    fn keep(&mut self, bytes: &[u8]) {
        let room = LONGEST_PASTE.saturating_sub(self.text.len());
        let kept = room.min(bytes.len());
        self.text.extend_from_slice(&bytes[..kept]);
        self.dropped += bytes.len() - kept;
    }

    /// Takes `bytes` up to the end marker; the bytes after it, once the
    /// paste has ended.
    fn take<'a>(&mut self, bytes: &'a [u8]) -> Option<&'a [u8]> {
        let mut i = 0;
        while i < bytes.len() {
            if self.matched == 0 {
                // Text up to the next ESC, copied at once.
                let run = bytes[i..]
                    .iter()
                    .position(|b| *b == 0x1b)
                    .map_or(bytes.len(), |n| i + n);
                self.keep(&bytes[i..run]);
                i = run;
                if i == bytes.len() {
                    break;
                }
            }
            let b = bytes[i];
            i += 1;
            if b == PASTE_END[self.matched] {
                self.matched += 1;
                if self.matched == PASTE_END.len() {
                    return Some(&bytes[i..]);
                }
            } else {
                // Not the end marker after all: what looked like it is text,
                // and an ESC may begin the real one (ESC is only its first
                // byte, so nothing else can).
                self.keep(&PASTE_END[..self.matched]);
                self.matched = usize::from(b == 0x1b);
                if b != 0x1b {
                    self.keep(&[b]);
                }
            }
        }
        None
    }

    /// The paste as events: its text, and how much was dropped if any.
    fn finish(mut self, out: &mut Vec<TermInput>) {
        if self.dropped > 0 {
            self.dropped += drop_cut_character(&mut self.text);
        }
        let text = match String::from_utf8(self.text) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        out.push(TermInput::Event(Event::Paste(text)));
        if self.dropped > 0 {
            out.push(TermInput::PasteCut(self.dropped));
        }
    }
}

/// Removes a UTF-8 character cut in half at the end of `text` (a paste
/// stopped at its bound); how many bytes went.
fn drop_cut_character(text: &mut Vec<u8>) -> usize {
    let tail = text.len().saturating_sub(4);
    let Some(start) = (tail..text.len()).rev().find(|i| text[*i] & 0xc0 != 0x80) else {
        return 0;
    };
    match std::str::from_utf8(&text[start..]) {
        Err(e) if e.error_len().is_none() => {
            let cut = text.len() - start;
            text.truncate(start);
            cut
        }
        _ => 0,
    }
}

/// What the bytes so far amount to.
enum Parsed {
    /// More bytes are needed.
    Incomplete,
    /// A whole sequence or character: its event, if it is one plugtop knows.
    Done(Option<Event>),
    /// The start of a bracketed paste.
    PasteStart,
}

impl KeyDecoder {
    /// A decoder with nothing pending.
    pub fn new() -> Self {
        KeyDecoder::default()
    }

    /// True while part of a sequence, or a paste, waits for the rest.
    pub fn waiting(&self) -> bool {
        !self.pending.is_empty() || self.skipping != Skip::Nothing || self.paste.is_some()
    }

    /// How long to wait for more bytes before [`KeyDecoder::flush`]: `None`
    /// when nothing is unfinished.
    pub fn patience(&self) -> Option<Duration> {
        if self.paste.is_some() {
            Some(PASTE_WAIT)
        } else if self.waiting() {
            Some(ESCAPE_WAIT)
        } else {
            None
        }
    }

    /// Decodes `bytes`, appending every complete event to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<TermInput>) {
        let mut rest = bytes;
        while let Some((&b, after)) = rest.split_first() {
            if let Some(paste) = self.paste.as_mut() {
                match paste.take(rest) {
                    Some(after_paste) => {
                        rest = after_paste;
                        self.end_paste(out);
                    }
                    None => rest = &[],
                }
                continue;
            }
            rest = after;
            self.byte(b, out);
        }
    }

    /// One byte outside a paste.
    fn byte(&mut self, b: u8, out: &mut Vec<TermInput>) {
        match self.skipping {
            Skip::Text => {
                let ends = b == 0x07 || (self.skipped_escape && b == b'\\');
                self.skipped_escape = b == 0x1b;
                if ends {
                    self.skipping = Skip::Nothing;
                }
                return;
            }
            Skip::Control if (0x20..=0x3f).contains(&b) => return,
            Skip::Control => {
                self.skipping = Skip::Nothing;
                if (0x40..=0x7e).contains(&b) {
                    return;
                }
            }
            Skip::Nothing => {}
        }
        // A new ESC inside an unfinished sequence starts over (the
        // unfinished part was not a key), except in a string sequence,
        // which ends with ESC backslash.
        if b == 0x1b && !self.pending.is_empty() && !is_string(&self.pending) {
            self.flush(out);
        }
        self.pending.push(b);
        match parse(&self.pending) {
            Parsed::Incomplete if self.pending.len() < LONGEST_SEQUENCE => {}
            Parsed::Incomplete => {
                self.skipping = if is_string(&self.pending) {
                    Skip::Text
                } else if self.pending.starts_with(b"\x1b[") {
                    Skip::Control
                } else {
                    Skip::Nothing
                };
                self.skipped_escape = self.pending.last() == Some(&0x1b);
                self.pending.clear();
            }
            Parsed::Done(event) => {
                self.pending.clear();
                out.extend(event.map(TermInput::Event));
            }
            Parsed::PasteStart => {
                self.pending.clear();
                self.paste = Some(Paste::default());
            }
        }
    }

    fn end_paste(&mut self, out: &mut Vec<TermInput>) {
        if let Some(paste) = self.paste.take() {
            paste.finish(out);
        }
    }

    /// No more bytes came in time: a lone ESC is the Esc key, a paste ends
    /// with the text that came (a half-come end marker is dropped), anything
    /// else unfinished is dropped.
    pub fn flush(&mut self, out: &mut Vec<TermInput>) {
        if self.pending == [0x1b] {
            out.push(TermInput::Event(key(KeyCode::Esc, KeyModifiers::NONE)));
        }
        self.end_paste(out);
        self.pending.clear();
        self.skipping = Skip::Nothing;
        self.skipped_escape = false;
    }
}

/// True for the start of a string sequence: OSC, DCS, APC, PM or SOS.
fn is_string(pending: &[u8]) -> bool {
    matches!(pending, [0x1b, b']' | b'P' | b'_' | b'^' | b'X', ..])
}

/// A string sequence ends with BEL or ESC backslash; nothing in it is a key.
fn string_sequence(body: &[u8]) -> Parsed {
    match body {
        [.., 0x07] | [.., 0x1b, b'\\'] => Parsed::Done(None),
        _ => Parsed::Incomplete,
    }
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent {
        code,
        modifiers,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    })
}

fn parse(bytes: &[u8]) -> Parsed {
    match bytes {
        [] => Parsed::Incomplete,
        [0x1b] => Parsed::Incomplete,
        start if start == PASTE_START => Parsed::PasteStart,
        [0x1b, b'[', rest @ ..] => csi(rest),
        [0x1b, b']' | b'P' | b'_' | b'^' | b'X', body @ ..] => string_sequence(body),
        [0x1b, b'O'] => Parsed::Incomplete,
        [0x1b, b'O', last] => Parsed::Done(ss3(*last)),
        [0x1b, rest @ ..] => match plain(rest) {
            Parsed::Done(Some(Event::Key(mut k))) => {
                k.modifiers |= KeyModifiers::ALT;
                Parsed::Done(Some(Event::Key(k)))
            }
            other => other,
        },
        _ => plain(bytes),
    }
}

/// A byte or UTF-8 character that is not an escape sequence.
fn plain(bytes: &[u8]) -> Parsed {
    let Some(&first) = bytes.first() else {
        return Parsed::Incomplete;
    };
    let control = |c: u8| {
        key(
            KeyCode::Char(char::from(c - 1 + b'a')),
            KeyModifiers::CONTROL,
        )
    };
    let event = match first {
        b'\r' | b'\n' => key(KeyCode::Enter, KeyModifiers::NONE),
        b'\t' => key(KeyCode::Tab, KeyModifiers::NONE),
        0x7f | 0x08 => key(KeyCode::Backspace, KeyModifiers::NONE),
        0 => key(KeyCode::Char(' '), KeyModifiers::CONTROL),
        1..=26 => control(first),
        0x1b => key(KeyCode::Esc, KeyModifiers::NONE),
        0x1c..=0x1f => return Parsed::Done(None),
        0x20..=0x7e => {
            let c = char::from(first);
            let modifiers = if c.is_ascii_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            key(KeyCode::Char(c), modifiers)
        }
        _ => return utf8(bytes),
    };
    Parsed::Done(Some(event))
}

fn utf8(bytes: &[u8]) -> Parsed {
    match std::str::from_utf8(bytes) {
        Ok(s) => Parsed::Done(
            s.chars()
                .next()
                .map(|c| key(KeyCode::Char(c), KeyModifiers::NONE)),
        ),
        // Still a valid prefix of one character: wait for the rest.
        Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => Parsed::Incomplete,
        Err(_) => Parsed::Done(None),
    }
}

/// `ESC O x`: function keys and cursor keys in application mode.
fn ss3(last: u8) -> Option<Event> {
    letter_key(last).map(|code| key(code, KeyModifiers::NONE))
}

/// The key a final letter names, after `ESC O` and after `ESC [` alike.
fn letter_key(last: u8) -> Option<KeyCode> {
    Some(match last {
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        _ => return None,
    })
}

/// `ESC [` then parameter bytes, intermediate bytes and one final byte
/// (ECMA-48); the legacy mouse report `ESC [ M` takes three raw bytes more.
fn csi(rest: &[u8]) -> Parsed {
    if let [b'M', report @ ..] = rest {
        return match report {
            [b, x, y] => Parsed::Done(legacy_mouse(*b, *x, *y)),
            _ => Parsed::Incomplete,
        };
    }
    let Some((&last, body)) = rest.split_last() else {
        return Parsed::Incomplete;
    };
    match last {
        0x20..=0x3f => {
            // Parameter and intermediate bytes: the sequence goes on.
            Parsed::Incomplete
        }
        0x40..=0x7e => Parsed::Done(csi_event(body, last)),
        // Anything else cannot be part of a sequence: drop what came.
        _ => Parsed::Done(None),
    }
}

/// The numbers of a CSI sequence's parameters (`1;5` gives [1, 5]).
fn numbers(body: &[u8]) -> Vec<u16> {
    body.split(|b| *b == b';')
        .map(|part| {
            part.iter()
                .filter(|b| b.is_ascii_digit())
                .fold(0u16, |n, b| {
                    n.saturating_mul(10).saturating_add(u16::from(b - b'0'))
                })
        })
        .collect()
}

/// xterm's modifier parameter: 1 + Shift 1, Alt 2, Ctrl 4.
fn modifiers(param: Option<&u16>) -> KeyModifiers {
    let bits = param.map_or(0, |p| p.saturating_sub(1));
    let mut m = KeyModifiers::NONE;
    if bits & 1 != 0 {
        m |= KeyModifiers::SHIFT;
    }
    if bits & 2 != 0 {
        m |= KeyModifiers::ALT;
    }
    if bits & 4 != 0 {
        m |= KeyModifiers::CONTROL;
    }
    m
}

fn csi_event(body: &[u8], last: u8) -> Option<Event> {
    if let [b'<', sgr @ ..] = body {
        return sgr_mouse(sgr, last);
    }
    // Private sequences (`ESC [ ? …`, `ESC [ > …`) are terminal replies.
    if body
        .first()
        .is_some_and(|b| matches!(b, b'?' | b'>' | b'='))
    {
        return None;
    }
    let params = numbers(body);
    let code = match last {
        b'Z' => return Some(key(KeyCode::BackTab, KeyModifiers::SHIFT)),
        // `ESC [ R` without a modifier is the cursor's position, not F3.
        b'R' if params.len() <= 1 => return None,
        b'~' => tilde(params.first().copied()?)?,
        _ => letter_key(last)?,
    };
    Some(key(code, modifiers(params.get(1))))
}

/// `ESC [ n ~` keys.
fn tilde(n: u16) -> Option<KeyCode> {
    Some(match n {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F((n - 10) as u8),
        17..=21 => KeyCode::F((n - 11) as u8),
        23 | 24 => KeyCode::F((n - 12) as u8),
        _ => return None,
    })
}

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> Event {
    Event::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

/// The kind of a mouse report from its button code.
fn mouse_kind(code: u16, released: bool) -> MouseEventKind {
    let button = match code & 3 {
        0 => MouseButton::Left,
        1 => MouseButton::Middle,
        _ => MouseButton::Right,
    };
    if code & 64 != 0 {
        return if code & 1 == 0 {
            MouseEventKind::ScrollUp
        } else {
            MouseEventKind::ScrollDown
        };
    }
    if code & 32 != 0 {
        return MouseEventKind::Drag(button);
    }
    if released || code & 3 == 3 {
        MouseEventKind::Up(button)
    } else {
        MouseEventKind::Down(button)
    }
}

/// `ESC [ < b ; x ; y M` (pressed) or `m` (released).
fn sgr_mouse(body: &[u8], last: u8) -> Option<Event> {
    if !matches!(last, b'M' | b'm') {
        return None;
    }
    let n = numbers(body);
    let [code, x, y] = n.as_slice() else {
        return None;
    };
    Some(mouse(
        mouse_kind(*code, last == b'm'),
        x.saturating_sub(1),
        y.saturating_sub(1),
    ))
}

/// `ESC [ M b x y`, each byte offset by 32.
fn legacy_mouse(b: u8, x: u8, y: u8) -> Option<Event> {
    let code = u16::from(b.checked_sub(32)?);
    Some(mouse(
        mouse_kind(code, false),
        u16::from(x.saturating_sub(33)),
        u16::from(y.saturating_sub(33)),
    ))
}

/// Reads the terminal (stdin, or `/dev/tty` when stdin is not one) on its
/// own threads and hands what each read decoded to to `deliver`, in one
/// Set while the terminal is in the middle of a paste (its start marker
/// came, its end not yet).
static PASTING: AtomicBool = AtomicBool::new(false);

/// Whether a paste is still arriving.
pub fn paste_arriving() -> bool {
    PASTING.load(Ordering::SeqCst)
}

/// Lets a paste that is still arriving end, for at most `patience`: when
/// the screen closes in the middle of one (a signal), its rest would
/// otherwise reach the shell after plugtop, and a shell runs pasted lines.
pub fn let_paste_end(patience: Duration) {
    let deadline = std::time::Instant::now() + patience;
    while paste_arriving() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// batch, until it returns false or the terminal closes.
pub fn spawn(deliver: impl Fn(Vec<TermInput>) -> bool + Send + 'static) -> std::io::Result<()> {
    let mut tty: Box<dyn Read + Send> = if std::io::stdin().is_terminal() {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open("/dev/tty")?)
    };
    let (bytes_tx, bytes_rx) = channel::<Vec<u8>>();
    std::thread::Builder::new()
        .name("plugtop-tty".into())
        .spawn(move || {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match tty.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if bytes_tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        })?;
    std::thread::Builder::new()
        .name("plugtop-keys".into())
        .spawn(move || {
            let mut decoder = KeyDecoder::new();
            let mut inputs = 0usize;
            loop {
                let mut events = Vec::new();
                let got = match decoder.patience() {
                    Some(wait) => bytes_rx.recv_timeout(wait),
                    None => bytes_rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                };
                match got {
                    Ok(bytes) => {
                        inputs += 1;
                        crate::faults::panic_at(crate::faults::Site::Input, inputs);
                        decoder.feed(&bytes, &mut events)
                    }
                    Err(RecvTimeoutError::Timeout) => decoder.flush(&mut events),
                    Err(RecvTimeoutError::Disconnected) => break,
                }
                PASTING.store(decoder.paste.is_some(), Ordering::SeqCst);
                if !events.is_empty() && !deliver(events) {
                    return;
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<TermInput> {
        let mut d = KeyDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out);
            d.flush(&mut out);
        }
        out
    }

    fn codes(events: &[TermInput]) -> Vec<KeyCode> {
        events
            .iter()
            .filter_map(|e| match e {
                TermInput::Event(Event::Key(k)) => Some(k.code),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_unfinished_reply_never_eats_the_keys_after_it() {
        // `ESC [ ?` arrives alone; `q` comes later, as a key.
        let got = decode(&[b"\x1b[?", b"q"]);
        assert_eq!(codes(&got), vec![KeyCode::Char('q')]);
        let got = decode(&[b"\x1b[?1;2", b"\x03"]);
        assert_eq!(codes(&got), vec![KeyCode::Char('c')]);
        let got = decode(&[b"\x1b[", b"\x1b[21~"]);
        assert_eq!(codes(&got), vec![KeyCode::F(10)]);
    }

    #[test]
    fn sequences_it_does_not_know_are_skipped_whole() {
        let got =
            decode(&[b"\x1b[?1;2c\x1b[?7uq\x1b[202~x\x1b]11;rgb:0/0/0\x07y\x1bP1$r0m\x1b\\z"]);
        assert_eq!(
            codes(&got),
            vec![
                KeyCode::Char('q'),
                KeyCode::Char('x'),
                KeyCode::Char('y'),
                KeyCode::Char('z')
            ]
        );
        // A string sequence longer than any key is skipped to its end.
        let mut long = b"\x1b]52;c;".to_vec();
        long.extend(std::iter::repeat_n(b'A', 5_000));
        long.extend(b"\x1b\\q");
        let mut d = KeyDecoder::new();
        let mut out = Vec::new();
        d.feed(&long, &mut out);
        assert_eq!(codes(&out), vec![KeyCode::Char('q')]);
    }

    #[test]
    fn a_sequence_that_never_ends_is_dropped_at_its_limit() {
        let mut bytes = b"\x1b[".to_vec();
        bytes.extend(std::iter::repeat_n(b'1', 10_000));
        bytes.push(b'q');
        let mut d = KeyDecoder::new();
        let mut out = Vec::new();
        d.feed(&bytes, &mut out);
        assert!(d.pending.len() < LONGEST_SEQUENCE);
        assert!(out.is_empty(), "nothing of it is a key: {out:?}");
        d.feed(b"q", &mut out);
        assert_eq!(codes(&out), vec![KeyCode::Char('q')]);
    }

    #[test]
    fn keys_arrows_function_keys_and_mouse() {
        let got = decode(&[b"\x1b[A\x1bOP\x1b[1;5B\x1b[5~\x1b[21~\x1b[Z\x1b\r\x7f"]);
        assert_eq!(
            codes(&got),
            vec![
                KeyCode::Up,
                KeyCode::F(1),
                KeyCode::Down,
                KeyCode::PageUp,
                KeyCode::F(10),
                KeyCode::BackTab,
                KeyCode::Enter,
                KeyCode::Backspace
            ]
        );
        let got = decode(&[b"\x1b"]);
        assert_eq!(codes(&got), vec![KeyCode::Esc]);
        let got = decode(&[b"\x1b[<64;10;5M\x1b[<65;1;1M"]);
        let kinds: Vec<_> = got
            .iter()
            .filter_map(|e| match e {
                TermInput::Event(Event::Mouse(m)) => Some(m.kind),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            vec![MouseEventKind::ScrollUp, MouseEventKind::ScrollDown]
        );
        let got = decode(&[b"\x03", "é".as_bytes()]);
        assert_eq!(
            got,
            vec![
                TermInput::Event(key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
                TermInput::Event(key(KeyCode::Char('é'), KeyModifiers::NONE))
            ]
        );
    }

    #[test]
    fn a_split_sequence_is_joined_while_it_waits() {
        let mut d = KeyDecoder::new();
        let mut out = Vec::new();
        d.feed(b"\x1b[", &mut out);
        assert!(d.waiting());
        d.feed(b"B", &mut out);
        assert_eq!(codes(&out), vec![KeyCode::Down]);
    }

    /// Feeds each chunk as one read, never timing out in between.
    fn feed_reads(chunks: &[&[u8]]) -> (KeyDecoder, Vec<TermInput>) {
        let mut d = KeyDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out);
        }
        (d, out)
    }

    fn paste(text: &str) -> TermInput {
        TermInput::Event(Event::Paste(text.into()))
    }

    #[test]
    fn a_paste_split_across_reads_is_one_paste() {
        // The markers themselves split, and a read that is all paste text.
        let (d, out) = feed_reads(&[
            b"\x1b[20",
            b"0~first ",
            b"half, ",
            "and é".as_bytes(),
            b" second\x1b[2",
            b"01",
            b"~",
        ]);
        assert!(!d.waiting());
        assert_eq!(out, vec![paste("first half, and é second")]);
        // A character split between two reads is joined too.
        let e = "é".as_bytes();
        let (_, out) = feed_reads(&[b"\x1b[200~", &e[..1], &e[1..], b"\x1b[201~"]);
        assert_eq!(out, vec![paste("é")]);
    }

    #[test]
    fn a_paste_keeps_escapes_and_false_end_markers_as_text() {
        let (d, out) = feed_reads(&[b"\x1b[200~a\x1bb\x1b[201x\x1b[20\x1b[201\x1b[201~", b"q"]);
        assert_eq!(
            out,
            vec![
                paste("a\x1bb\x1b[201x\x1b[20\x1b[201"),
                TermInput::Event(key(KeyCode::Char('q'), KeyModifiers::NONE))
            ]
        );
        assert!(!d.waiting());
        // A start marker inside a paste is text, and nothing in a paste is
        // a key: not `q`, not Ctrl-C, not a mouse report.
        let (_, out) = feed_reads(&[b"\x1b[200~q\x03\x1b[200~\x1b[<0;1;1M\x1b[201~"]);
        assert_eq!(out, vec![paste("q\x03\x1b[200~\x1b[<0;1;1M")]);
        // Invalid UTF-8 is replaced, not a reason to lose the paste.
        let (_, out) = feed_reads(&[b"\x1b[200~a\xffb\x1b[201~"]);
        assert_eq!(out, vec![paste("a\u{fffd}b")]);
        // An empty paste is one (empty) paste.
        let (_, out) = feed_reads(&[b"\x1b[200~\x1b[201~"]);
        assert_eq!(out, vec![paste("")]);
    }

    #[test]
    fn a_paste_followed_by_keys_and_sequences() {
        let (mut d, mut all) = feed_reads(&[b"x\x1b[200~y\x1b[201~z\x1b[A\x1b[200~\x1b[201~\x1b"]);
        d.flush(&mut all);
        assert_eq!(
            all,
            vec![
                TermInput::Event(key(KeyCode::Char('x'), KeyModifiers::NONE)),
                paste("y"),
                TermInput::Event(key(KeyCode::Char('z'), KeyModifiers::NONE)),
                TermInput::Event(key(KeyCode::Up, KeyModifiers::NONE)),
                paste(""),
                TermInput::Event(key(KeyCode::Esc, KeyModifiers::NONE)),
            ]
        );
    }

    #[test]
    fn an_over_long_paste_is_bounded_and_says_what_it_dropped() {
        let mut d = KeyDecoder::new();
        let mut out = Vec::new();
        d.feed(b"\x1b[200~", &mut out);
        let chunk = vec![b'a'; 64 * 1024];
        let chunks = LONGEST_PASTE / chunk.len() + 8;
        for _ in 0..chunks {
            d.feed(&chunk, &mut out);
            let held = d.paste.as_ref().map_or(0, |p| p.text.capacity());
            assert!(held <= LONGEST_PASTE, "holds {held} bytes");
        }
        assert!(out.is_empty(), "nothing before the end marker");
        d.feed(b"\x1b[201~q", &mut out);
        let sent = chunks * chunk.len();
        match out.as_slice() {
            [
                TermInput::Event(Event::Paste(text)),
                TermInput::PasteCut(dropped),
                TermInput::Event(Event::Key(k)),
            ] => {
                assert_eq!(text.len(), LONGEST_PASTE);
                assert_eq!(*dropped, sent - LONGEST_PASTE);
                assert_eq!(k.code, KeyCode::Char('q'), "the keyboard comes back");
            }
            other => panic!("{:?}", other.iter().map(short).collect::<Vec<_>>()),
        }
    }

    #[test]
    fn a_paste_cut_at_its_bound_never_ends_in_half_a_character() {
        let mut d = KeyDecoder::new();
        let mut out = Vec::new();
        d.feed(b"\x1b[200~", &mut out);
        // One byte short of the bound, then a two-byte character.
        d.feed(&vec![b'a'; LONGEST_PASTE - 1], &mut out);
        d.feed("éz\x1b[201~".as_bytes(), &mut out);
        match out.as_slice() {
            [TermInput::Event(Event::Paste(text)), TermInput::PasteCut(3)] => {
                assert_eq!(text.len(), LONGEST_PASTE - 1);
                assert!(text.bytes().all(|b| b == b'a'));
            }
            other => panic!("{:?}", other.iter().map(short).collect::<Vec<_>>()),
        }
    }

    #[test]
    fn a_paste_whose_end_never_comes_ends_when_the_bytes_stop() {
        let (mut d, mut out) = feed_reads(&[b"\x1b[200~half of it\x1b[20"]);
        assert_eq!(d.patience(), Some(PASTE_WAIT));
        assert!(out.is_empty());
        // The keys thread waited PASTE_WAIT: what came is the paste.
        d.flush(&mut out);
        assert_eq!(out, vec![paste("half of it")]);
        assert_eq!(d.patience(), None);
        d.feed(b"q", &mut out);
        assert_eq!(codes(&out), vec![KeyCode::Char('q')]);
        // An escape sequence waits only ESCAPE_WAIT.
        let (d, _) = feed_reads(&[b"\x1b["]);
        assert_eq!(d.patience(), Some(ESCAPE_WAIT));
    }

    /// An input, its text cut short for a readable failure.
    fn short(input: &TermInput) -> String {
        let text = format!("{input:?}");
        text.chars().take(80).collect()
    }
}
