//! Numbers as cpuplugd reads them: `sscanf("%lf")` on glibc decides how much
//! text is the number (the grammar mirrors that), and `strtod` decides its
//! value from that text. So `1e` is 1, `0x10` is 16, `1e400` is infinity.
//! The rule language reads its constants so and the kernel readers read
//! /proc's fields so; both use this module, which uses neither.

/// The value of a number token matched by the grammar's `number` rule.
///
/// The token may end in an exponent marker without digits (`1e`, `0x1p+`),
/// which glibc's scanf consumes but strtod ignores.
pub fn value_of(token: &str) -> f64 {
    let (negative, body) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token),
    };
    let magnitude = if body.len() > 1 && (body.as_bytes()[1] | 0x20) == b'x' {
        hex_value(&body[2..])
    } else {
        decimal_value(body)
    };
    if negative { -magnitude } else { magnitude }
}

/// A number for a message, as short as its value: `1e308`, not 309
/// digits; `2048`, `0.5` as they are.
pub fn brief(v: f64) -> String {
    if v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// One `%lf` conversion of glibc's `scanf` from `text[at..]`: blanks
/// (`isspace`: space, `\t` to `\r`) skipped, then as much text as glibc
/// takes for a number (a sign; `nan`, `inf`, `infinity` in any case; `0x`
/// and hexadecimal digits with a `p` exponent; digits, one `.`, an `e`
/// exponent), valued as `strtod` values that text. Returns the value and
/// where the text ends; `Err(start)` where glibc's conversion fails (no
/// number, a sign, `0x` or a broken `inf`/`nan` alone, or the input ends),
/// `start` being where the number was to begin. /proc/loadavg is read so.
pub fn scan_lf(text: &[u8], at: usize) -> Result<(f64, usize), usize> {
    let mut i = at;
    while text
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t'..=b'\r'))
    {
        i += 1;
    }
    let start = i;
    if let Some((v, end, _)) = plain_decimal(text, i) {
        return Ok((v, end));
    }
    let lower = |i: usize| text.get(i).map(u8::to_ascii_lowercase);
    let negative = text.get(i) == Some(&b'-');
    let signed = matches!(text.get(i), Some(b'-' | b'+'));
    if signed {
        i += 1;
    }
    let sign = |v: f64| if negative { -v } else { v };
    match lower(i) {
        None => return Err(start),
        Some(b'n') => {
            return match text.get(i + 1..i + 3) {
                Some(w) if w.eq_ignore_ascii_case(b"an") => Ok((sign(f64::NAN), i + 3)),
                _ => Err(start),
            };
        }
        Some(b'i') => {
            if !text
                .get(i + 1..i + 3)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"nf"))
            {
                return Err(start);
            }
            if lower(i + 3) != Some(b'i') {
                return Ok((sign(f64::INFINITY), i + 3));
            }
            // Past `infi`, glibc wants the whole `infinity`.
            return match text.get(i + 4..i + 8) {
                Some(w) if w.eq_ignore_ascii_case(b"nity") => Ok((sign(f64::INFINITY), i + 8)),
                _ => Err(start),
            };
        }
        Some(_) => {}
    }
    let body = i;
    let mut hex = false;
    let mut got_digit = false;
    if text[i] == b'0' {
        i += 1;
        if lower(i) == Some(b'x') {
            hex = true;
            i += 1;
        } else {
            got_digit = true;
        }
    }
    let exp_char = if hex { b'p' } else { b'e' };
    let (mut got_dot, mut got_e, mut after_e) = (false, false, false);
    while let Some(&b) = text.get(i) {
        let marker = got_digit && !got_e && b.to_ascii_lowercase() == exp_char;
        if b.is_ascii_digit() || (hex && !got_e && b.is_ascii_hexdigit()) {
            got_digit = true;
        } else if after_e && matches!(b, b'-' | b'+') {
        } else if marker {
            got_e = true;
            got_dot = true;
        } else if !got_dot && b == b'.' {
            got_dot = true;
        } else {
            break;
        }
        after_e = marker;
        i += 1;
    }
    if i == body || (hex && i == body + 2) || !(hex || got_digit) {
        return Err(start);
    }
    let magnitude = if !hex && text[body].is_ascii_digit() {
        leading_value(&text[body..i])
    } else {
        let token = std::str::from_utf8(&text[body..i]).map_err(|_| start)?;
        if hex {
            hex_value(&token[2..])
        } else {
            decimal_value(token)
        }
    };
    Ok((sign(magnitude), i))
}

/// [`scan_lf`]'s common case, the kernel's, at `text[at..]` (no blanks
/// before): digits, maybe a dot and more digits, at most 15 digits and 8
/// after the dot, no exponent after. Its value, its end, and how many
/// digits follow the dot; `None` for everything else.
#[inline]
pub fn plain_decimal(text: &[u8], at: usize) -> Option<(f64, usize, usize)> {
    let digit = |i: usize| {
        text.get(i)
            .map(|b| b.wrapping_sub(b'0'))
            .filter(|d| *d <= 9)
    };
    let mut m = u64::from(digit(at)?);
    let mut end = at + 1;
    if m == 0 && matches!(text.get(end), Some(b'x' | b'X')) {
        return None;
    }
    while let Some(d) = digit(end) {
        m = m * 10 + u64::from(d);
        end += 1;
        if end - at > 15 {
            return None;
        }
    }
    let mut places = 0;
    if text.get(end) == Some(&b'.') {
        end += 1;
        while let Some(d) = digit(end) {
            m = m * 10 + u64::from(d);
            end += 1;
            places += 1;
            if end - at > 16 || places >= POWERS_OF_TEN.len() {
                return None;
            }
        }
    }
    if matches!(text.get(end), Some(b'e' | b'E')) {
        return None;
    }
    // Both exact in a double (under 10^15 and at most 10^8): the one
    // division rounds as strtod does.
    Some((m as f64 / POWERS_OF_TEN[places] as f64, end, places))
}

/// Reads the number starting at `text[start..]` (after blanks) the way
/// `strtod` does, returning it, where it ends, and whether there was a
/// number at all. Plain integers of up to 19 digits, which is all the kernel
/// prints, take a short path.
#[inline(always)]
pub fn value_at(text: &[u8], start: usize) -> (f64, usize, bool) {
    let mut i = start;
    // meminfo pads its numbers with spaces: skip them a word at a time.
    while let Some(w) = text.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        let other = u64::from_le_bytes(w) ^ u64::from_le_bytes([b' '; 8]);
        if other != 0 {
            i += (other.trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    while i < text.len() && (text[i] == b' ' || text[i] == b'\t') {
        i += 1;
    }
    let digits_start = i;
    let (acc, end) = digits_at(text, i);
    i = end;
    let n = i - digits_start;
    let plain = i >= text.len() || !matches!(text[i], b'.' | b'e' | b'E');
    if n > 0 && n <= 19 && plain {
        return (acc as f64, i, true);
    }
    value_at_slow(text, start, digits_start, i)
}

/// The decimal digits from `at` on as a number (wrapping past 19 digits;
/// callers that care count the digits) and where they end. Eight bytes at
/// a time: /proc's counters are long runs of digits, and reading them a
/// byte at a time was most of what reading /proc/stat cost.
#[inline]
pub fn digits_at(text: &[u8], at: usize) -> (u64, usize) {
    const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut acc: u64 = 0;
    let mut i = at;
    while let Some(w) = text.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        // Each byte's digit value; a byte that is no digit gets its high
        // bit set in `stops` (borrows and carries only run towards later
        // bytes, past the first non-digit, which is all that is read).
        let x = u64::from_le_bytes(w).wrapping_sub(ASCII_ZEROS);
        let stops = (x | x.wrapping_add(0x7676_7676_7676_7676)) & HIGHS;
        let n = if stops == 0 {
            8
        } else {
            (stops.trailing_zeros() / 8) as usize
        };
        if n == 0 {
            return (acc, i);
        }
        // The n digits as the last bytes of eight, after leading zeros,
        // then pairs, fours and eights combined by multiplication.
        let mut v = x << (8 * (8 - n));
        v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
        v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
        v = v.wrapping_mul(10_000) + (v >> 32);
        let chunk = v & 0xFFFF_FFFF;
        acc = acc.wrapping_mul(POWERS_OF_TEN[n]).wrapping_add(chunk);
        i += n;
        if n < 8 {
            return (acc, i);
        }
    }
    while let Some(d) = text
        .get(i)
        .map(|b| b.wrapping_sub(b'0'))
        .filter(|d| *d <= 9)
    {
        acc = acc.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    (acc, i)
}

const POWERS_OF_TEN: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Signs, fractions, exponents, more than 19 digits, or no number at all.
#[cold]
#[inline(never)]
fn value_at_slow(text: &[u8], start: usize, digits_start: usize, i: usize) -> (f64, usize, bool) {
    let n = i - digits_start;
    let v = leading_value(&text[start..]);
    let mut end = i.max(digits_start);
    while end < text.len() && !matches!(text[end], b'\n' | b' ' | b'\t') {
        end += 1;
    }
    let signed = digits_start < text.len() && matches!(text[digits_start], b'-' | b'+');
    (
        v,
        end,
        n > 0 || (signed && text.get(digits_start + 1).is_some_and(u8::is_ascii_digit)),
    )
}

/// Reads a leading number from /proc text the way `strtod` does for the plain
/// decimal forms the kernel prints; anything unreadable is 0 as in cpuplugd.
pub fn leading_value(text: &[u8]) -> f64 {
    let mut i = 0;
    while i < text.len() && matches!(text[i], b' ' | b'\t') {
        i += 1;
    }
    let start = i;
    if i < text.len() && (text[i] == b'-' || text[i] == b'+') {
        i += 1;
    }
    let digits_start = i;
    let mut acc: u64 = 0;
    let mut exact = true;
    while i < text.len() && text[i].is_ascii_digit() {
        match acc
            .checked_mul(10)
            .and_then(|a| a.checked_add(u64::from(text[i] - b'0')))
        {
            Some(a) => acc = a,
            None => exact = false,
        }
        i += 1;
    }
    if i == digits_start {
        return 0.0;
    }
    let plain = i >= text.len() || !matches!(text[i], b'.' | b'e' | b'E');
    if exact && plain {
        let v = acc as f64;
        return if text[start] == b'-' { -v } else { v };
    }
    if exact && text[i] == b'.' {
        // A short fraction (/proc/loadavg's `0.42`): the digits as one
        // integer over a power of ten, both exact in a double, so the one
        // division rounds as `strtod` does (Clinger's fast path).
        let mut end = i + 1;
        let mut m = acc;
        while end < text.len() && text[end].is_ascii_digit() && m < 1 << 53 {
            m = m * 10 + u64::from(text[end] - b'0');
            end += 1;
        }
        let places = end - i - 1;
        let plain = end >= text.len() || !matches!(text[end], b'e' | b'E' | b'0'..=b'9');
        if plain && m < 1 << 53 && places < POWERS_OF_TEN.len() {
            let v = m as f64 / POWERS_OF_TEN[places] as f64;
            return if text[start] == b'-' { -v } else { v };
        }
    }
    // Rare: long fractions, exponents or more than 19 digits.
    let mut end = i;
    if end < text.len() && text[end] == b'.' {
        end += 1;
        while end < text.len() && text[end].is_ascii_digit() {
            end += 1;
        }
    }
    if end < text.len() && (text[end] | 0x20) == b'e' {
        let mut e = end + 1;
        if e < text.len() && (text[e] == b'+' || text[e] == b'-') {
            e += 1;
        }
        if e < text.len() && text[e].is_ascii_digit() {
            while e < text.len() && text[e].is_ascii_digit() {
                e += 1;
            }
            end = e;
        }
    }
    std::str::from_utf8(&text[start..end])
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(0.0)
}

fn decimal_value(body: &str) -> f64 {
    // Drop an exponent marker (and sign) that has no digits after it.
    let trimmed = match body.find(['e', 'E']) {
        Some(pos) if !body[pos + 1..].bytes().any(|b| b.is_ascii_digit()) => &body[..pos],
        _ => body,
    };
    trimmed.parse::<f64>().unwrap_or(0.0)
}

fn hex_value(digits: &str) -> f64 {
    let (mantissa, exponent) = match digits.find(['p', 'P']) {
        Some(pos) => (&digits[..pos], &digits[pos + 1..]),
        None => (digits, ""),
    };
    let mut acc: u128 = 0;
    let mut sticky = false;
    let mut scale: i64 = 0;
    let mut after_dot = false;
    let mut any_digit = false;
    for b in mantissa.bytes() {
        if b == b'.' {
            after_dot = true;
            continue;
        }
        let Some(d) = (b as char).to_digit(16) else {
            break;
        };
        any_digit = true;
        if acc >> 120 == 0 {
            acc = (acc << 4) | u128::from(d);
            if after_dot {
                scale -= 4;
            }
        } else {
            sticky |= d != 0;
            if !after_dot {
                scale += 4;
            }
        }
    }
    if !any_digit {
        return 0.0;
    }
    let exp: i64 = if exponent.bytes().any(|b| b.is_ascii_digit()) {
        let (neg, num) = match exponent.as_bytes().first() {
            Some(b'-') => (true, &exponent[1..]),
            Some(b'+') => (false, &exponent[1..]),
            _ => (false, exponent),
        };
        let mut e: i64 = 0;
        for b in num.bytes().take_while(u8::is_ascii_digit) {
            e = (e * 10 + i64::from(b - b'0')).min(100_000);
        }
        if neg { -e } else { e }
    } else {
        0
    };
    if sticky {
        acc |= 1;
    }
    scale_by_power_of_two(acc as f64, exp + scale)
}

/// `x * 2^e` without overflowing intermediate powers.
fn scale_by_power_of_two(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_forms_read_like_strtod() {
        assert_eq!(value_of("1e3"), 1000.0);
        assert_eq!(value_of("3.75e+2"), 375.0);
        assert_eq!(value_of("2.5E2"), 250.0);
        assert_eq!(value_of("1."), 1.0);
        assert_eq!(value_of("1e"), 1.0);
        assert_eq!(value_of("1e+"), 1.0);
        assert_eq!(value_of("0.08"), 0.08);
        assert_eq!(value_of("-3"), -3.0);
        assert!(value_of("1e400").is_infinite());
        assert_eq!(value_of("1e-400"), 0.0);
    }

    #[test]
    fn hexadecimal_forms_read_like_strtod() {
        assert_eq!(value_of("0x10"), 16.0);
        assert_eq!(value_of("0X1.8p1"), 3.0);
        assert_eq!(value_of("0x."), 0.0);
        assert_eq!(value_of("0x.8"), 0.5);
        assert_eq!(value_of("0x1p"), 1.0);
        assert_eq!(value_of("-0x10"), -16.0);
    }

    #[test]
    fn proc_values_read_like_strtod() {
        assert_eq!(leading_value(b"   16384 kB"), 16384.0);
        assert_eq!(leading_value(b"-5"), -5.0);
        assert_eq!(leading_value(b"abc"), 0.0);
        assert_eq!(leading_value(b"99999999999999999999999"), 1e23);
        assert_eq!(leading_value(b"0.42 0.27"), 0.42);
        assert_eq!(value_at(b"x:   17 kB\n", 2), (17.0, 7, true));
        assert_eq!(value_at(b"a -5\n", 1).0, -5.0);
        assert_eq!(value_at(b"a 1.5\n", 1), (1.5, 5, true));
        assert!(!value_at(b"a \n", 1).2);
        assert_eq!(value_at(b"a 99999999999999999999999\n", 1).0, 1e23);
    }

    proptest::proptest! {
        /// Eight digits at a time reads what one at a time reads.
        #[test]
        fn digits_at_reads_as_a_byte_at_a_time(
            text in proptest::collection::vec(proptest::prop_oneof![
                8 => b'0'..=b'9',
                1 => proptest::num::u8::ANY,
            ], 0..48),
            at in 0usize..48,
        ) {
            let at = at.min(text.len());
            let mut acc = 0u64;
            let mut end = at;
            while end < text.len() && text[end].is_ascii_digit() {
                acc = acc.wrapping_mul(10).wrapping_add(u64::from(text[end] - b'0'));
                end += 1;
            }
            proptest::prop_assert_eq!(digits_at(&text, at), (acc, end));
        }

        /// A fraction read by the short path is the double `strtod`
        /// (Rust's own parser, correctly rounded too) makes of it.
        #[test]
        fn short_fractions_read_as_the_full_parser_reads_them(
            int in 0u64..100_000_000_000,
            frac in proptest::collection::vec(b'0'..=b'9', 0..12),
            minus in proptest::bool::ANY,
            after in proptest::prop_oneof![
                proptest::strategy::Just(&b""[..]),
                proptest::strategy::Just(&b" 0.27"[..]),
                proptest::strategy::Just(&b"e3"[..]),
                proptest::strategy::Just(&b"/120"[..]),
            ],
        ) {
            let sign = if minus { "-" } else { "" };
            let number = format!("{sign}{int}.{}", String::from_utf8_lossy(&frac));
            let text = [number.as_bytes(), after].concat();
            let exponent = if after == b"e3" { "e3" } else { "" };
            let want: f64 = format!("{number}{exponent}").parse().unwrap_or(f64::NAN);
            proptest::prop_assert_eq!(leading_value(&text).to_bits(), want.to_bits());
        }

        /// The short paths (blanks a word at a time, plain integers) read
        /// what the general reader reads, wherever the text starts.
        #[test]
        fn value_at_reads_as_leading_value(
            text in proptest::collection::vec(proptest::prop_oneof![
                6 => proptest::strategy::Just(b' '),
                1 => proptest::strategy::Just(b'\t'),
                1 => proptest::strategy::Just(b'\n'),
                1 => proptest::strategy::Just(b'.'),
                1 => proptest::strategy::Just(b'-'),
                1 => proptest::strategy::Just(b'e'),
                6 => b'0'..=b'9',
                1 => proptest::num::u8::ANY,
            ], 0..40),
            start in 0usize..40,
        ) {
            let start = start.min(text.len());
            let (v, _, _) = value_at(&text, start);
            proptest::prop_assert_eq!(v.to_bits(), leading_value(&text[start..]).to_bits());
        }
    }
}
