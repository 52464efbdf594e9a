//! /proc/loadavg: the two loads cpuplugd reads, read as it reads them
//! (glibc's `fscanf(f, "%lf %lf %lf %lf/", ...)`, which must convert all
//! four numbers or cpuplugd exits) and rounded as it rounds them, or its
//! text checked and kept for later.

use crate::number::{plain_decimal, scan_lf};

/// Where cpuplugd's scan of /proc/loadavg fails: the number (1 to 4) it
/// could not convert and the byte where that number was to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadavgStop {
    pub number: u8,
    pub at: usize,
}

impl LoadavgStop {
    /// The failure in words, placed by line and column (1-based).
    pub fn describe(&self, text: &[u8]) -> String {
        // Where the text ends, the place is after its last word, not on
        // the empty line after its newline.
        let at = if self.at >= text.len() {
            text.trim_ascii_end().len()
        } else {
            self.at
        };
        let before = &text[..at];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = before.len()
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        let n = self.number;
        if self.at >= text.len() {
            format!(
                "line {line}, column {column}: the text ends before number {n} of the 4 \
                 cpuplugd reads (\"%lf %lf %lf %lf/\")"
            )
        } else {
            format!(
                "line {line}, column {column}: number {n} of the 4 cpuplugd reads \
                 (\"%lf %lf %lf %lf/\") is missing or malformed"
            )
        }
    }
}

/// `(loadavg, runnable)` from /proc/loadavg, rounded the way cpuplugd's
/// `%f` round trip rounds them (to 6 decimals), or where cpuplugd's scan
/// fails (it then exits).
pub fn parse_loadavg(text: &[u8]) -> Result<(f64, f64), LoadavgStop> {
    let mut at = 0;
    let mut values = [0.0; 4];
    for (i, value) in values.iter_mut().enumerate() {
        let number = i as u8 + 1;
        // The kernel's text first: one space, then a plain decimal.
        let start = at + usize::from(text.get(at) == Some(&b' '));
        let (v, end) = match plain_decimal(text, start) {
            Some((v, end, places)) if places <= 6 || (number != 1 && number != 4) => (v, end),
            _ => {
                let (v, end) = scan_lf(text, at).map_err(|at| LoadavgStop { number, at })?;
                // The number's text, blanks before it included (they
                // change nothing of its rounding).
                (six_decimals(v, &text[at..end]), end)
            }
        };
        *value = v;
        at = end;
    }
    Ok((values[0], values[3]))
}

/// The most of /proc/loadavg kept unconverted (the kernel's text is at
/// most about 60 bytes; a longer one is converted when read).
const LOADAVG_KEPT: usize = 64;

/// /proc/loadavg as read, checked but not converted: kept in a reading
/// when no rule names a load, so that rules loaded later (a reload) that
/// read an earlier interval's load get the one read then. Converting is
/// most of the file's cost, and most rule files never ask.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LoadavgText {
    bytes: [u8; LOADAVG_KEPT],
    len: u8,
}

impl std::fmt::Debug for LoadavgText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.text()))
    }
}

impl LoadavgText {
    /// `text` kept when [`parse_loadavg`] would read it and it is short
    /// enough to keep (`None`: convert it at once, or report it).
    pub fn keep(text: &[u8]) -> Option<LoadavgText> {
        if text.len() > LOADAVG_KEPT {
            return None;
        }
        // Blanks after the text: they start no word.
        let mut bytes = [b' '; LOADAVG_KEPT];
        bytes[..text.len()].copy_from_slice(text);
        let valid = words_checked(&bytes, text.len()) || parse_loadavg(text).is_ok();
        valid.then_some(LoadavgText {
            bytes,
            len: u8::try_from(text.len()).ok()?,
        })
    }

    fn text(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// `(loadavg, runnable)` as [`parse_loadavg`] gives them.
    pub fn parse(&self) -> Option<(f64, f64)> {
        parse_loadavg(self.text()).ok()
    }
}

const HIGHS: u64 = 0x8080_8080_8080_8080;
const LOWS: u64 = 0x7F7F_7F7F_7F7F_7F7F;
const ONES: u64 = 0x0101_0101_0101_0101;

/// The high bit of each byte of `x` that is `b`, exactly (no borrow
/// reaches another byte).
fn bytes_equal(x: u64, b: u8) -> u64 {
    let t = x ^ (ONES * u64::from(b));
    !(((t & LOWS) + LOWS) | t) & HIGHS
}

/// Whether cpuplugd's scan surely reads the first `len` bytes of `bytes`
/// (blanks after them), found eight bytes at a time: the kernel's file is
/// checked every interval, and byte by byte that was most of its cost.
/// True for the kernel's shape: before the fourth word only digits,
/// spaces, newlines and dots with a digit on each side, and a digit
/// starting the fourth word; every word is then one number or more, so
/// four convert. False for anything else, which [`parse_loadavg`] decides.
fn words_checked(bytes: &[u8; LOADAVG_KEPT], len: usize) -> bool {
    let mut words = 0;
    // From the word of eight before: whether its last byte was blank (the
    // text's start counts as after a blank), a digit, or a dot that wants a
    // digit next.
    let (mut after_blank, mut after_digit, mut dot_open) = (0x80, 0, false);
    for (at, word) in bytes.chunks_exact(8).enumerate() {
        if at * 8 >= len {
            break;
        }
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            return false;
        };
        let x = u64::from_le_bytes(word);
        let y = x & LOWS;
        // Bytes from b'0' on, bytes from b':' on, among those below 0x80.
        let digit = !x & (y + ONES * 0x50) & !(y + ONES * 0x46) & HIGHS;
        let dot = bytes_equal(x, b'.');
        let blank = bytes_equal(x, b' ') | bytes_equal(x, b'\n');
        let other = HIGHS & !(digit | dot | blank);
        let lone_dot =
            (dot & !((digit << 8) | after_digit)) | (dot & !(digit >> 8) & !(0x80 << 56));
        if dot_open && digit & 0x80 == 0 {
            return false;
        }
        let starts = !blank & HIGHS & ((blank << 8) | after_blank);
        let count = starts.count_ones();
        if words + count >= 4 {
            let mut s = starts;
            for _ in 0..3 - words {
                s &= s - 1;
            }
            let fourth = s & s.wrapping_neg();
            let before = (fourth - 1) & HIGHS;
            return (other | lone_dot) & before == 0 && fourth & digit != 0;
        }
        if other | lone_dot != 0 {
            return false;
        }
        words += count;
        after_blank = blank >> 56;
        after_digit = digit >> 56;
        dot_open = dot >> 63 != 0;
    }
    false
}

/// `v`, read from `token`, as `sprintf("%f")` followed by `strtod` leaves
/// it. A decimal of at most six places comes back as it was read.
fn six_decimals(v: f64, token: &[u8]) -> f64 {
    let simple = match token.iter().position(|b| *b == b'.') {
        Some(dot) => {
            token[dot + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
                <= 6
        }
        None => true,
    } && !token
        .iter()
        .any(|b| matches!(b.to_ascii_lowercase(), b'e' | b'x'));
    if simple || !v.is_finite() {
        v
    } else {
        format!("{v:.6}").parse().unwrap_or(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &[u8]) -> Option<(f64, f64)> {
        parse_loadavg(text).ok()
    }

    #[test]
    fn loads() {
        assert_eq!(read(b"0.42 0.27 0.21 1/89 29247\n"), Some((0.42, 1.0)));
        assert_eq!(read(b"0.1234567 0 0 3/9 1"), Some((0.123457, 3.0)));
        assert_eq!(read(b"garbage"), None);
        // No `/` after the fourth number changes nothing for cpuplugd.
        assert_eq!(read(b"0.50 0.40 0.30 1 999\n"), Some((0.5, 1.0)));
    }

    /// What glibc's `fscanf("%lf %lf %lf %lf/")` and cpuplugd's `%f` round
    /// trip make of hostile texts (checked against the C library by
    /// scripts/loadavg-vs-fscanf.sh, and by the suite's
    /// `loadavg_scan::plugtop_reads_loadavg_as_fscanf_does` where a C
    /// compiler is present).
    #[test]
    fn hostile_loads_read_as_fscanf_reads_them() {
        let inf = f64::INFINITY;
        for (text, want) in [
            (&b"+0.5 0 0 1/2"[..], Some((0.5, 1.0))),
            (b"inf 0 0 1/2", Some((inf, 1.0))),
            (b"-inf 0 0 1/2", Some((-inf, 1.0))),
            (b"0.5 0 0 INFINITY/2", Some((0.5, inf))),
            (b"0x1p3 0 0 1/2", Some((8.0, 1.0))),
            (b"0.5 0 0 0x10/2", Some((0.5, 16.0))),
            (b".5 0 0 .5/2", Some((0.5, 0.5))),
            (b"0.5 0 0 -.5/2", Some((0.5, -0.5))),
            (b"0.5-1 0 0 1/2", Some((0.5, 0.0))),
            (b"1.2.3 0 0 1/2", Some((1.2, 0.0))),
            (b"0.5\x0b0 0 1/2", Some((0.5, 1.0))),
            (b"0.5e 0 0 1e+/2", Some((0.5, 1.0))),
            (b"0x. 0 0 1/2", Some((0.0, 1.0))),
            (b"0.0078125 0 0 1/2", Some((0.007812, 1.0))),
            (b"0.5 x 0 1/2", None),
            (b"0.5 0 x 1/2", None),
            (b"0.5abc 0 0 1/2", None),
            (b"- 0 0 1/2", None),
            (b". 0 0 1/2", None),
            (b"-e 0 0 1/2", None),
            (b"0.5 0 0 +/2", None),
            (b"0.5 0 0 0x/2", None),
            (b"0.5 0 0 infi/2", None),
            (b"0.5 0 0 na/2", None),
            (b"\x000.5 0 0 1/2", None),
            (b"0.5 0 0", None),
        ] {
            let got = read(text);
            match (got, want) {
                (Some(g), Some(w)) => assert!(
                    g.0.to_bits() == w.0.to_bits() && g.1.to_bits() == w.1.to_bits(),
                    "{text:?}: {g:?} != {w:?}"
                ),
                _ => assert_eq!(got, want, "{text:?}"),
            }
        }
        assert!(read(b"nan 0 0 1/2").is_some_and(|(l, r)| l.is_nan() && r == 1.0));
        assert_eq!(
            parse_loadavg(b"0.5 0\nx 1/2"),
            Err(LoadavgStop { number: 3, at: 6 })
        );
        assert_eq!(
            LoadavgStop { number: 3, at: 6 }.describe(b"0.5 0\nx 1/2"),
            "line 2, column 1: number 3 of the 4 cpuplugd reads (\"%lf %lf %lf %lf/\") \
             is missing or malformed"
        );
    }

    /// Kept text converts to what converting at once gives; what would
    /// not convert is not kept (the reading reports it), nor is a text
    /// too long to keep (it is converted at once).
    #[test]
    fn kept_loadavg_text_converts_as_the_file_would() {
        for text in [
            &b"0.42 0.27 0.21 1/89 29247\n"[..],
            b"0.1234567 0 0 3/9 1",
            b"0.50 0.40 0.30 1 999\n",
            b"1e400 0 0 -2/3 1\n",
            b"+0.5 0 0 1/2",
            b"  0.1\t0.2\n0.3 \r 4/5",
            b"0.1 0.2 0.3 \x0b4/5 6",
        ] {
            let kept = LoadavgText::keep(text).expect("valid and short");
            assert_eq!(kept.parse(), read(text), "{text:?}");
        }
        assert_eq!(LoadavgText::keep(b"garbage"), None);
        assert_eq!(LoadavgText::keep(b"0.1 0.2 0.3 x/4 5\n"), None);
        assert_eq!(LoadavgText::keep(b"0.1 0.2 x 4/4 5\n"), None);
        let long = format!("0.{} 0 0 1/2 3\n", "1".repeat(LOADAVG_KEPT));
        assert_eq!(LoadavgText::keep(long.as_bytes()), None);
        assert!(read(long.as_bytes()).is_some());
    }

    proptest::proptest! {
        /// The check eight bytes at a time accepts only what the scan
        /// reads, whatever the bytes and wherever the words fall between
        /// words of eight; what it leaves, the scan decides.
        #[test]
        fn words_checked_accepts_only_what_the_scan_reads(
            text in proptest::prop_oneof![
                // Any byte class, or mostly the kernel's.
                proptest::collection::vec(proptest::sample::select(
                    b"0123456789.-+/ \n\t\r\x0b\x0c\x00\x1faex\x7f\x80\xff".to_vec()
                ), 0..=LOADAVG_KEPT),
                proptest::collection::vec(proptest::sample::select(
                    b"01..-+/    \n\x80".to_vec()
                ), 0..=LOADAVG_KEPT),
            ],
        ) {
            let mut bytes = [b' '; LOADAVG_KEPT];
            bytes[..text.len()].copy_from_slice(&text);
            let read = parse_loadavg(&text).is_ok();
            if words_checked(&bytes, text.len()) {
                proptest::prop_assert!(read, "{:?}", text);
            }
            proptest::prop_assert_eq!(LoadavgText::keep(&text).is_some(), read);
        }

        /// The kernel's own shape (blanks and a newline only) is always
        /// accepted eight bytes at a time, wherever the words fall.
        #[test]
        fn the_kernels_shape_is_decided_without_the_byte_loop(
            loads in proptest::collection::vec(0u32..100_000, 3),
            running in 0u32..10_000,
            total in 0u32..100_000,
            pid in 0u32..10_000_000,
        ) {
            let text = format!(
                "{}.{:02} {}.{:02} {}.{:02} {running}/{total} {pid}\n",
                loads[0] / 100, loads[0] % 100, loads[1] / 100, loads[1] % 100,
                loads[2] / 100, loads[2] % 100,
            );
            let mut bytes = [b' '; LOADAVG_KEPT];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            proptest::prop_assert!(words_checked(&bytes, text.len()));
        }
    }
}
