//! Parsers for the /proc text cpuplugd reads, giving the same numbers it
//! gets from `fscanf`/`strtod`.

use super::fields::Malformed;
pub use super::integer::parse_long;
use super::sample::{CpuTicks, Stamp};
use crate::number::digits_at;

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

    #[test]
    fn time() {
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
