//! /proc/loadavg: the two loads cpuplugd reads, converted as it converts
//! them, or its text checked and kept for later.

use crate::number::leading_value;

/// `(loadavg, runnable)` from /proc/loadavg, rounded the way cpuplugd's
/// `%f` round trip rounds them (to 6 decimals). `None` if unreadable.
pub fn parse_loadavg(text: &[u8]) -> Option<(f64, f64)> {
    let (first, runnable) = loadavg_words(text)?;
    Some((six_decimals(first), six_decimals(runnable)))
}

/// The two words of /proc/loadavg that [`parse_loadavg`] converts (the
/// first load, the runnable count), `None` when it would give `None`:
/// the file checked as a reading checks it, nothing converted.
fn loadavg_words(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut at = 0;
    let first = next_word(text, &mut at)?;
    next_word(text, &mut at)?;
    next_word(text, &mut at)?;
    let fourth = next_word(text, &mut at)?;
    if !first.first()?.is_ascii_digit() && first[0] != b'-' && first[0] != b'.' {
        return None;
    }
    // cpuplugd scans `%lf %lf %lf %lf/`: the `/` is matched after the
    // fourth number is converted, so a missing `/` changes nothing (edge
    // case G); a fourth field that is no number stops it.
    let slash = fourth
        .iter()
        .position(|b| *b == b'/')
        .unwrap_or(fourth.len());
    let runnable = &fourth[..slash];
    if !runnable.first()?.is_ascii_digit() && !matches!(runnable[0], b'-' | b'+' | b'.') {
        return None;
    }
    Some((first, runnable))
}

/// The next blank-separated word from `*at` on, moving `*at` past it.
fn next_word<'a>(text: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let mut i = *at;
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    while i < text.len() && !text[i].is_ascii_whitespace() {
        i += 1;
    }
    *at = i;
    (i > start).then(|| &text[start..i])
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
        let valid = match words_checked(&bytes, text.len()) {
            Some(valid) => valid,
            None => loadavg_words(text).is_some(),
        };
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
        parse_loadavg(self.text())
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

/// Whether [`loadavg_words`] reads the first `len` bytes of `bytes`
/// (blanks after them), eight bytes at a time: the kernel's file is
/// checked every interval, and byte by byte that was most of its cost.
/// `None` where a byte up to the fourth word is a control character other
/// than a newline (a tab, a carriage return, ...): the byte loop decides.
fn words_checked(bytes: &[u8; LOADAVG_KEPT], len: usize) -> Option<bool> {
    let mut words = 0;
    // The high bit of the last byte before this word of eight: whether it
    // was blank (the text's start counts as after a blank).
    let mut after_blank = 0x80;
    for (at, word) in bytes.chunks_exact(8).enumerate() {
        if at * 8 >= len {
            break;
        }
        let x = u64::from_le_bytes(word.try_into().ok()?);
        // Bytes up to b' ' (the high bit of each such byte), and those
        // of them that are blanks the kernel writes.
        let low = !(((x & LOWS) + ONES * 0x5F) | x) & HIGHS;
        let blank = bytes_equal(x, b' ') | bytes_equal(x, b'\n');
        if low != blank {
            return None;
        }
        let mut starts = !blank & HIGHS & ((blank << 8) | after_blank);
        after_blank = blank >> 56;
        while starts != 0 {
            words += 1;
            let b = word[(starts.trailing_zeros() / 8) as usize];
            if words == 1 && !(b.is_ascii_digit() || b == b'-' || b == b'.') {
                return Some(false);
            }
            if words == 4 {
                return Some(b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.'));
            }
            starts &= starts - 1;
        }
    }
    Some(false)
}

/// A number as `sprintf("%f")` followed by `strtod` leaves it.
fn six_decimals(token: &[u8]) -> f64 {
    let v = leading_value(token);
    let simple = match token.iter().position(|b| *b == b'.') {
        Some(dot) => {
            token[dot + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
                <= 6
        }
        None => true,
    } && !token.iter().any(|b| *b == b'e' || *b == b'E');
    if simple || !v.is_finite() {
        v
    } else {
        format!("{v:.6}").parse().unwrap_or(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads() {
        assert_eq!(
            parse_loadavg(b"0.42 0.27 0.21 1/89 29247\n"),
            Some((0.42, 1.0))
        );
        assert_eq!(parse_loadavg(b"0.1234567 0 0 3/9 1"), Some((0.123457, 3.0)));
        assert_eq!(parse_loadavg(b"garbage"), None);
        // No `/` after the fourth number changes nothing for cpuplugd.
        assert_eq!(parse_loadavg(b"0.50 0.40 0.30 1 999\n"), Some((0.5, 1.0)));
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
        ] {
            let kept = LoadavgText::keep(text).expect("valid and short");
            assert_eq!(kept.parse(), parse_loadavg(text), "{text:?}");
        }
        // The words as blanks split them, however many blanks.
        for text in [
            &b"  0.1\t0.2\n0.3 \r 4/5"[..],
            b"0.1 0.2 0.3 4",
            b"0.1 0.2 0.3",
            b"0.1 0.2 0.3 \x0b4/5 6",
            b" ",
            b"",
            b"0.1 0.2 0.3 /5 6",
        ] {
            let mut words = text
                .split(u8::is_ascii_whitespace)
                .filter(|w| !w.is_empty());
            let split = words.next().zip(words.nth(2));
            assert_eq!(
                loadavg_words(text).map(|(a, _)| a),
                split
                    .filter(|_| parse_loadavg(text).is_some())
                    .map(|(a, _)| a),
                "{text:?}"
            );
        }
        assert_eq!(LoadavgText::keep(b"garbage"), None);
        assert_eq!(LoadavgText::keep(b"0.1 0.2 0.3 x/4 5\n"), None);
        let long = format!("0.{} 0 0 1/2 3\n", "1".repeat(LOADAVG_KEPT));
        assert_eq!(LoadavgText::keep(long.as_bytes()), None);
        assert!(parse_loadavg(long.as_bytes()).is_some());
    }

    proptest::proptest! {
        /// The check eight bytes at a time reads as the byte loop does,
        /// whatever the bytes and wherever the words fall between words
        /// of eight (or it leaves the text to the byte loop).
        #[test]
        fn words_checked_reads_as_the_byte_loop(
            text in proptest::prop_oneof![
                // Any byte class, or mostly the kernel's.
                proptest::collection::vec(proptest::sample::select(
                    b"0123456789.-+/ \n\t\r\x0b\x0c\x00\x1fax\x7f\x80\xff".to_vec()
                ), 0..=LOADAVG_KEPT),
                proptest::collection::vec(proptest::sample::select(
                    b"01.-+/    \n\x80".to_vec()
                ), 0..=LOADAVG_KEPT),
            ],
        ) {
            let mut bytes = [b' '; LOADAVG_KEPT];
            bytes[..text.len()].copy_from_slice(&text);
            let eager = loadavg_words(&text).is_some();
            if let Some(checked) = words_checked(&bytes, text.len()) {
                proptest::prop_assert_eq!(checked, eager, "{:?}", text);
            }
            proptest::prop_assert_eq!(LoadavgText::keep(&text).is_some(), eager);
        }

        /// The kernel's own shape (blanks and a newline only) is always
        /// decided eight bytes at a time.
        #[test]
        fn the_kernels_shape_is_decided_without_the_byte_loop(
            loads in proptest::collection::vec(0u32..100_000, 3),
            running in 0u32..10_000,
            total in 0u32..100_000,
            pid in 0u32..10_000_000,
            sign in proptest::sample::select(vec!["", "-", "+", "/", "x"]),
        ) {
            let text = format!(
                "{}.{:02} {}.{:02} {}.{:02} {sign}{running}/{total} {pid}\n",
                loads[0] / 100, loads[0] % 100, loads[1] / 100, loads[1] % 100,
                loads[2] / 100, loads[2] % 100,
            );
            let mut bytes = [b' '; LOADAVG_KEPT];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            proptest::prop_assert_eq!(
                words_checked(&bytes, text.len()),
                Some(loadavg_words(text.as_bytes()).is_some())
            );
        }
    }
}
