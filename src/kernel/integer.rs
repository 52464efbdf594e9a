//! Integers in kernel files, read as cpuplugd's `%ld` reads them: shared
//! by the CPU-list and /proc readers, which otherwise know nothing of each
//! other.

/// A leading integer as `fscanf("%ld")` reads it.
pub fn parse_long(text: &[u8]) -> Option<i64> {
    let t = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |p| &text[p..]);
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 {
        return None;
    }
    let v = digits[..n].iter().fold(0i64, |a, b| {
        a.saturating_mul(10).saturating_add(i64::from(b - b'0'))
    });
    Some(if neg { -v } else { v })
}
