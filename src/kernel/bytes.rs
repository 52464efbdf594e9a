//! Byte scans over short /proc lines, a word at a time. The kernel's names
//! and numbers are a few bytes long, where a library `memchr`/`memcmp` call
//! costs more in setting up than in scanning; reading every interval's
//! files is most of what one interval costs, so this is worth its lines.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Eight bytes from `at` as one word (the caller checked they exist).
#[inline(always)]
fn word(bytes: &[u8], at: usize) -> u64 {
    let Ok(w) = <[u8; 8]>::try_from(&bytes[at..at + 8]) else {
        return 0;
    };
    u64::from_le_bytes(w)
}

/// Four bytes from `at` as one word (the caller checked they exist).
#[inline(always)]
fn half_word(bytes: &[u8], at: usize) -> u32 {
    let Ok(w) = <[u8; 4]>::try_from(&bytes[at..at + 4]) else {
        return 0;
    };
    u32::from_le_bytes(w)
}

/// The low seven bits of every byte.
const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// Eight bytes as one word (0 if there are not eight).
#[inline(always)]
fn word_of(chunk: &[u8]) -> u64 {
    <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes)
}

/// The bytes of one word that break a shape: those under `fixed` that
/// differ from `template`, and the newlines under `free` (each marked by
/// its high bit, exactly: no borrow runs from one byte into the next).
#[inline(always)]
fn off_shape(w: u64, template: u64, fixed: u64, free: u64) -> u64 {
    let y = w ^ ONES.wrapping_mul(u64::from(b'\n'));
    let newlines = !(((y & LOWS).wrapping_add(LOWS)) | y | LOWS);
    ((w ^ template) & fixed) | (newlines & free)
}

/// Whether the first `len` bytes of `text` have the shape of `template`:
/// the same bytes wherever `fixed` is 0xff, and no newline wherever
/// `free` is. `template`, `fixed` and `free` are `len` rounded up to
/// whole words long (zeros past `len`). A word at a time and without a
/// branch, so the compiler takes several words at once.
pub fn same_shape(text: &[u8], len: usize, template: &[u8], fixed: &[u8], free: &[u8]) -> bool {
    let Some(text) = text.get(..len) else {
        return false;
    };
    let whole = len / 8 * 8;
    let mut bad = 0u64;
    let masks = template.chunks_exact(8).zip(fixed.chunks_exact(8));
    for ((w, (t, f)), v) in text[..whole]
        .chunks_exact(8)
        .zip(masks)
        .zip(free.chunks_exact(8))
    {
        bad |= off_shape(word_of(w), word_of(t), word_of(f), word_of(v));
    }
    if whole < len {
        let mut last = [0u8; 8];
        last[..len - whole].copy_from_slice(&text[whole..]);
        let at = |m: &[u8]| m.get(whole..whole + 8).map_or(0, word_of);
        bad |= off_shape(u64::from_le_bytes(last), at(template), at(fixed), at(free));
    }
    bad == 0
}

/// Where the first `byte` at or after `from` is.
#[inline]
pub fn find_from(text: &[u8], from: usize, byte: u8) -> Option<usize> {
    let pattern = ONES.wrapping_mul(u64::from(byte));
    let mut i = from;
    while i + 8 <= text.len() {
        let x = word(text, i) ^ pattern;
        // The lowest byte of x that is zero sets its high bit here (bits
        // above it may be set falsely, never bits below).
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    text.get(i..)?
        .iter()
        .position(|b| *b == byte)
        .map(|p| i + p)
}

/// Whether `text` holds `name` at `at`.
#[inline]
pub fn holds_at(text: &[u8], at: usize, name: &[u8]) -> bool {
    let n = name.len();
    if text.len() < at + n {
        return false;
    }
    if n >= 8 {
        let mut i = 0;
        while i + 8 <= n {
            if word(text, at + i) != word(name, i) {
                return false;
            }
            i += 8;
        }
        // The last eight bytes, overlapping what was compared.
        return i == n || word(text, at + n - 8) == word(name, n - 8);
    }
    if n >= 4 {
        return half_word(text, at) == half_word(name, 0)
            && half_word(text, at + n - 4) == half_word(name, n - 4);
    }
    text[at..at + n] == *name
}

/// A short key (a /proc name and its separator) held as words, so that
/// finding it at a place in a text is one to three word compares with no
/// load of the key.
#[derive(Debug, Clone)]
pub struct Probe {
    key: Box<[u8]>,
    /// The first eight bytes (zero-padded), the next eight, and the last
    /// eight (overlapping the others).
    words: [u64; 3],
    /// Which bytes of the first word a key shorter than eight holds.
    mask: u64,
}

impl Probe {
    /// A probe for `key`.
    pub fn new(key: &[u8]) -> Self {
        let n = key.len();
        let mut first = [0u8; 8];
        first[..n.min(8)].copy_from_slice(&key[..n.min(8)]);
        let mut words = [u64::from_le_bytes(first), 0, 0];
        if n >= 16 {
            words[1] = word(key, 8);
        }
        if n >= 8 {
            words[2] = word(key, n - 8);
        }
        let mask = if n >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        };
        Probe {
            key: Box::from(key),
            words,
            mask,
        }
    }

    /// How long the key is.
    pub fn len(&self) -> usize {
        self.key.len()
    }

    /// Whether `text` holds the key at `at`.
    #[inline]
    pub fn holds_at(&self, text: &[u8], at: usize) -> bool {
        let n = self.key.len();
        if text.len() < at + n.max(8) || n > 24 {
            return text.get(at..at + n) == Some(&self.key[..]);
        }
        if word(text, at) & self.mask != self.words[0] {
            return false;
        }
        n <= 8
            || ((n < 16 || word(text, at + 8) == self.words[1])
                && word(text, at + n - 8) == self.words[2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_find(text: &[u8], from: usize, byte: u8) -> Option<usize> {
        text.get(from..)?
            .iter()
            .position(|b| *b == byte)
            .map(|p| from + p)
    }

    proptest! {
        /// The shape compared a word at a time is the shape compared byte
        /// by byte: bytes near the newline (0x09, 0x0b, 0x8a) in any lane,
        /// texts shorter than the shape, tails of any length.
        #[test]
        fn same_shape_is_the_byte_by_byte_comparison(
            bytes in proptest::collection::vec((
                prop_oneof![Just(b'\n'), Just(b'\x0b'), Just(b'\x09'), Just(0x8a_u8), Just(b'7'), Just(b':')],
                prop_oneof![Just(b'\n'), Just(b'\x0b'), Just(0x8a_u8), Just(b'7'), Just(b':')],
                0u8..3,
            ), 0..40),
            cut in 0usize..4,
        ) {
            let len = bytes.len();
            let padded = len.div_ceil(8) * 8;
            let mut template: Vec<u8> = bytes.iter().map(|b| b.0).collect();
            let text: Vec<u8> = bytes.iter().map(|b| b.1).collect();
            let fixed: Vec<u8> = bytes.iter().map(|b| if b.2 == 0 { 0xff } else { 0 }).collect();
            let free: Vec<u8> = bytes.iter().map(|b| if b.2 == 1 { 0xff } else { 0 }).collect();
            let naive = text.len() >= len
                && (0..len).all(|i| (fixed[i] == 0 || text[i] == template[i]) && (free[i] == 0 || text[i] != b'\n'));
            let pad = |mut m: Vec<u8>| { m.resize(padded, 0); m };
            template = pad(template);
            let short = &text[..len.saturating_sub(cut)];
            prop_assert_eq!(same_shape(&text, len, &template, &pad(fixed.clone()), &pad(free.clone())), naive);
            prop_assert_eq!(same_shape(short, len, &template, &pad(fixed), &pad(free)), naive && short.len() == len);
        }
    }

    #[test]
    fn finds_the_first_byte_in_any_lane_and_the_tail() {
        let text = b"MemTotal:       16318496 kB\nMemFree: 1 kB\n";
        assert_eq!(find_from(text, 0, b'\n'), Some(27));
        assert_eq!(find_from(text, 9, b':'), Some(35));
        assert_eq!(find_from(text, 28, b'\n'), Some(text.len() - 1));
        assert_eq!(find_from(text, text.len(), b'\n'), None);
        assert_eq!(find_from(text, text.len() + 3, b'\n'), None);
        // 0x80 bytes and the byte after a match must not confuse the lanes.
        assert_eq!(
            find_from(b"\x80\x0b\x0a\x80\x80\x80\x80\x80\x0a", 0, b'\n'),
            Some(2)
        );
        assert_eq!(
            find_from(b"\x0b\x0b\x0b\x0b\x0b\x0b\x0b\x0b\x0b", 0, b'\n'),
            None
        );
    }

    #[test]
    fn compares_names_of_every_length() {
        let text = b"pgscan_direct_movable 0\nnr_free_pages 5\n";
        assert!(holds_at(text, 0, b"pgscan_direct_movable"));
        assert!(!holds_at(text, 0, b"pgscan_direct_movablf"));
        assert!(!holds_at(text, 0, b"qgscan_direct_movable"));
        assert!(holds_at(text, 24, b"nr_free_pages"));
        assert!(holds_at(text, 24, b"nr_f"));
        assert!(holds_at(text, 24, b"nr"));
        assert!(!holds_at(text, 24, b"nr_free_pages 5\nx"));
        assert!(holds_at(text, 0, b""));
    }

    proptest! {
        #[test]
        fn agrees_with_a_plain_scan(text in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b' '), Just(0x80u8), any::<u8>()], 0..80),
                                    from in 0usize..90, byte in prop_oneof![Just(b'\n'), Just(b' '), any::<u8>()]) {
            prop_assert_eq!(find_from(&text, from, byte), naive_find(&text, from, byte));
        }

        #[test]
        fn probes_compare_like_slices(text in proptest::collection::vec(0u8..4, 0..60), at in 0usize..60,
                                      key in proptest::collection::vec(0u8..4, 0..30)) {
            let expected = text.get(at..at + key.len()) == Some(&key[..]);
            prop_assert_eq!(Probe::new(&key).holds_at(&text, at), expected);
        }

        #[test]
        fn probes_find_keys_taken_from_the_text(text in proptest::collection::vec(any::<u8>(), 0..60),
                                                at in 0usize..60, len in 0usize..30,
                                                flip in proptest::option::of(0usize..30)) {
            let from = at.min(text.len());
            let mut key = text[from..(from + len).min(text.len())].to_vec();
            if let Some(i) = flip.filter(|i| *i < key.len()) {
                key[i] ^= 1;
            }
            let expected = text.get(from..from + key.len()) == Some(&key[..]);
            prop_assert_eq!(Probe::new(&key).holds_at(&text, from), expected);
        }

        #[test]
        fn compares_like_slices(text in proptest::collection::vec(0u8..4, 0..40), at in 0usize..40,
                                name in proptest::collection::vec(0u8..4, 0..24)) {
            let expected = text.get(at..at + name.len()) == Some(&name[..]);
            prop_assert_eq!(holds_at(&text, at, &name), expected);
        }
    }
}
