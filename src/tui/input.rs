//! Keys from the terminal, decoded by plugtop itself. crossterm's own reader
//! waits for the end of any escape sequence it has begun: after the bytes
//! `ESC [ ?` (the start of a terminal's reply) it swallowed every later key,
//! `q` and Ctrl-C included. Here a sequence that does not finish within
//! [`ESCAPE_WAIT`], or grows past [`LONGEST_SEQUENCE`], is dropped, and
//! sequences plugtop does not know are skipped whole, so the keyboard always
//! comes back.

use std::io::{IsTerminal, Read};
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

/// Turns terminal bytes into key and mouse events, byte by byte, never
/// holding more than [`LONGEST_SEQUENCE`] bytes.
#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
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

/// What the bytes so far amount to.
enum Parsed {
    /// More bytes are needed.
    Incomplete,
    /// A whole sequence or character: its event, if it is one plugtop knows.
    Done(Option<Event>),
}

impl Decoder {
    /// A decoder with nothing pending.
    pub fn new() -> Self {
        Decoder::default()
    }

    /// True while part of a sequence waits for the rest.
    pub fn waiting(&self) -> bool {
        !self.pending.is_empty() || self.skipping != Skip::Nothing
    }

    /// Decodes `bytes`, appending every complete event to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        for &b in bytes {
            match self.skipping {
                Skip::Text => {
                    let ends = b == 0x07 || (self.skipped_escape && b == b'\\');
                    self.skipped_escape = b == 0x1b;
                    if ends {
                        self.skipping = Skip::Nothing;
                    }
                    continue;
                }
                Skip::Control if (0x20..=0x3f).contains(&b) => continue,
                Skip::Control => {
                    self.skipping = Skip::Nothing;
                    if (0x40..=0x7e).contains(&b) {
                        continue;
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
                    out.extend(event);
                }
            }
        }
    }

    /// No more bytes came in time: a lone ESC is the Esc key, anything else
    /// unfinished is dropped.
    pub fn flush(&mut self, out: &mut Vec<Event>) {
        if self.pending == [0x1b] {
            out.push(key(KeyCode::Esc, KeyModifiers::NONE));
        }
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
    let code = match last {
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
    };
    Some(key(code, KeyModifiers::NONE))
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
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'Z' => return Some(key(KeyCode::BackTab, KeyModifiers::SHIFT)),
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' if params.len() > 1 => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        b'~' => tilde(params.first().copied()?)?,
        _ => return None,
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
/// own threads and hands each event to `deliver` until it returns false or
/// the terminal closes.
pub fn spawn(deliver: impl Fn(Event) -> bool + Send + 'static) -> std::io::Result<()> {
    let mut tty: Box<dyn Read + Send> = if std::io::stdin().is_terminal() {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open("/dev/tty")?)
    };
    let (bytes_tx, bytes_rx) = channel::<Vec<u8>>();
    std::thread::Builder::new()
        .name("plugtop-tty".into())
        .spawn(move || {
            let mut buf = [0u8; 1024];
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
            let mut decoder = Decoder::new();
            let mut events = Vec::new();
            let mut inputs = 0usize;
            loop {
                let got = if decoder.waiting() {
                    bytes_rx.recv_timeout(ESCAPE_WAIT)
                } else {
                    bytes_rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
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
                for event in events.drain(..) {
                    if !deliver(event) {
                        return;
                    }
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<Event> {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out);
            d.flush(&mut out);
        }
        out
    }

    fn codes(events: &[Event]) -> Vec<KeyCode> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Key(k) => Some(k.code),
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
            decode(&[b"\x1b[?1;2c\x1b[?7uq\x1b[200~x\x1b]11;rgb:0/0/0\x07y\x1bP1$r0m\x1b\\z"]);
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
        let mut d = Decoder::new();
        let mut out = Vec::new();
        d.feed(&long, &mut out);
        assert_eq!(codes(&out), vec![KeyCode::Char('q')]);
    }

    #[test]
    fn a_sequence_that_never_ends_is_dropped_at_its_limit() {
        let mut bytes = b"\x1b[".to_vec();
        bytes.extend(std::iter::repeat_n(b'1', 10_000));
        bytes.push(b'q');
        let mut d = Decoder::new();
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
                Event::Mouse(m) => Some(m.kind),
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
                key(KeyCode::Char('c'), KeyModifiers::CONTROL),
                key(KeyCode::Char('é'), KeyModifiers::NONE)
            ]
        );
    }

    #[test]
    fn a_split_sequence_is_joined_while_it_waits() {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        d.feed(b"\x1b[", &mut out);
        assert!(d.waiting());
        d.feed(b"B", &mut out);
        assert_eq!(codes(&out), vec![KeyCode::Down]);
    }
}
