//! Parsers for the /proc text cpuplugd reads, giving the same numbers it
//! gets from `fscanf`/`strtod`.

use super::fields::Malformed;
pub use super::integer::parse_long;
use super::sample::{CpuTicks, Stamp};
use crate::number::{digits_at, leading_value};

/// The aggregate `cpu` line and (when `per_cpu`) the `cpuN` lines of
/// /proc/stat, read in one pass that stops at the first line not starting
/// with `cpu` (the long `intr` line is never scanned). Only the aggregate
/// line can make the reading fail, as only it matters to cpuplugd: a
/// `cpuN` line with fewer than four counts is left out. Errors name the
/// 1-based line.
pub fn parse_stat(
    text: &[u8],
    per_cpu: bool,
) -> Result<(CpuTicks, Vec<(u32, CpuTicks)>), Malformed> {
    if !text.starts_with(b"cpu ") && !text.starts_with(b"cpu\t") {
        return Err(Malformed {
            line: 1,
            what: "the first line is not the aggregate `cpu` line",
        });
    }
    let (columns, end, found) = columns_at(text, 3);
    if found < 4 {
        return Err(Malformed {
            line: 1,
            what: "fewer than 4 tick counts on the aggregate cpu line",
        });
    }
    let total = CpuTicks::from_columns(columns);
    let mut lines = Vec::new();
    if !per_cpu {
        return Ok((total, lines));
    }
    let mut pos = next_line(text, end);
    while text.len() >= pos + 3 && &text[pos..pos + 3] == b"cpu" {
        let mut i = pos + 3;
        let mut id: Option<u32> = None;
        while i < text.len() && text[i].is_ascii_digit() {
            id = Some(
                id.unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(u32::from(text[i] - b'0')),
            );
            i += 1;
        }
        if i < text.len() && text[i] != b' ' && text[i] != b'\t' {
            break;
        }
        let (columns, end, found) = columns_at(text, i);
        if let Some(id) = id
            && found >= 4
        {
            lines.push((id, CpuTicks::from_columns(columns)));
        }
        pos = next_line(text, end);
    }
    Ok((total, lines))
}

/// Where the line after the one holding `at` starts (the end if none).
fn next_line(text: &[u8], at: usize) -> usize {
    match text[at..].iter().position(|b| *b == b'\n') {
        Some(nl) => at + nl + 1,
        None => text.len(),
    }
}

/// Up to ten blank-separated integers from `start` (missing ones are 0),
/// where they end, and how many there were.
fn columns_at(text: &[u8], start: usize) -> ([u64; 10], usize, usize) {
    let mut out = [0u64; 10];
    let mut i = start;
    let mut found = 0;
    for slot in &mut out {
        while i < text.len() && (text[i] == b' ' || text[i] == b'\t') {
            i += 1;
        }
        let digits = i;
        let (mut v, end) = digits_at(text, i);
        i = end;
        if i == digits {
            break;
        }
        // Nineteen digits always fit; longer counts saturate.
        if i - digits > 19 {
            v = text[digits..i].iter().fold(0u64, |acc, d| {
                acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
            });
        }
        *slot = v;
        found += 1;
    }
    (out, i, found)
}

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
    let mut words = text
        .split(u8::is_ascii_whitespace)
        .filter(|w| !w.is_empty());
    let first = words.next()?;
    let fourth = words.nth(2)?;
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
        loadavg_words(text)?;
        let mut bytes = [0; LOADAVG_KEPT];
        bytes[..text.len()].copy_from_slice(text);
        Some(LoadavgText {
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

/// A time stamp `SEC` or `SEC.FRACTION` (at most 6 fractional digits),
/// the first word of the text.
pub fn parse_time(text: &[u8]) -> Option<Stamp> {
    let mut i = 0;
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    let (secs, after) = digits(text, i);
    if after == i {
        return None;
    }
    let mut usec: i64 = 0;
    let mut end = after;
    if text.get(after) == Some(&b'.') {
        let (frac, frac_end) = digits(text, after + 1);
        let n = frac_end - (after + 1);
        if n > 6 {
            return None;
        }
        usec = frac.saturating_mul(10i64.pow(6 - n as u32));
        end = frac_end;
    }
    if text.get(end).is_some_and(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    Some(Stamp::new(secs, usec as u32))
}

/// The decimal digits from `at` (saturating) and where they end.
fn digits(text: &[u8], at: usize) -> (i64, usize) {
    let mut v: i64 = 0;
    let mut i = at;
    while let Some(d) = text
        .get(i)
        .map(|b| b.wrapping_sub(b'0'))
        .filter(|d| *d <= 9)
    {
        v = v.saturating_mul(10).saturating_add(i64::from(d));
        i += 1;
    }
    (v, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines() {
        let text =
            b"cpu  10 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8 9 10\ncpu1 1 2\ncpu2 4 3 2 1\nintr 5\n";
        let (t, per) = parse_stat(text, true).expect("valid");
        assert_eq!(t.user, 10);
        assert_eq!(t.guest, 0);
        assert_eq!(t.total(), 45);
        // cpu1 has too few counts: left out, the reading stands.
        assert_eq!(per.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(per[0].1.guest_nice, 10);
        assert_eq!(per[1].1.user, 4);
        assert_eq!(parse_stat(text, false), Ok((t, Vec::new())));
        assert!(parse_stat(b"cpu 1 2 3\ncpu0 1 2 3 4\n", true).is_err());
        // Twenty digits and more saturate; nineteen are exact.
        let (t, _) = parse_stat(b"cpu 9999999999999999999 99999999999999999999 1 2\n", false)
            .expect("valid");
        assert_eq!(t.user, 9_999_999_999_999_999_999);
        assert_eq!(t.nice, u64::MAX);
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
        assert_eq!(LoadavgText::keep(b"garbage"), None);
        assert_eq!(LoadavgText::keep(b"0.1 0.2 0.3 x/4 5\n"), None);
        let long = format!("0.{} 0 0 1/2 3\n", "1".repeat(LOADAVG_KEPT));
        assert_eq!(LoadavgText::keep(long.as_bytes()), None);
        assert!(parse_loadavg(long.as_bytes()).is_some());
    }

    #[test]
    fn loadavg_and_time() {
        assert_eq!(
            parse_loadavg(b"0.42 0.27 0.21 1/89 29247\n"),
            Some((0.42, 1.0))
        );
        assert_eq!(parse_loadavg(b"0.1234567 0 0 3/9 1"), Some((0.123457, 3.0)));
        assert_eq!(parse_loadavg(b"garbage"), None);
        // No `/` after the fourth number changes nothing for cpuplugd.
        assert_eq!(parse_loadavg(b"0.50 0.40 0.30 1 999\n"), Some((0.5, 1.0)));
        let t = parse_time(b"1336046403.465934\n").map(Stamp::seconds);
        assert_eq!(t, Some(1336046403.0 + 465934.0 / 1e6));
        assert_eq!(parse_time(b"17\n"), Some(Stamp::new(17, 0)));
        assert_eq!(parse_time(b"1.5\n").map(Stamp::seconds), Some(1.5));
        assert_eq!(parse_time(b"  \t3.000007 x"), Some(Stamp::new(3, 7)));
        assert_eq!(parse_time(b"3."), Some(Stamp::new(3, 0)));
        for bad in [
            &b""[..],
            b"x",
            b".5",
            b"1.1234567",
            b"1.5x",
            b"1x",
            b"-1",
            b"1.-5",
        ] {
            assert_eq!(parse_time(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
