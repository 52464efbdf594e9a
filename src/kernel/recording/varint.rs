//! LEB128 varints and zigzag signed integers: small numbers (the usual
//! interval-to-interval deltas) take one byte.

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzag-encoded, so small negative numbers stay small.
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends a length-prefixed UTF-8 string.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Reads values from a byte slice; every read fails cleanly at the end.
#[derive(Debug)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

/// Ran out of bytes, or a varint longer than 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated;

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// True when every byte was read.
    pub fn is_done(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// One byte.
    pub fn byte(&mut self) -> Result<u8, Truncated> {
        let b = *self.bytes.get(self.pos).ok_or(Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    /// `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Truncated> {
        let end = self.pos.checked_add(n).ok_or(Truncated)?;
        let s = self.bytes.get(self.pos..end).ok_or(Truncated)?;
        self.pos = end;
        Ok(s)
    }

    /// An unsigned varint.
    pub fn u64(&mut self) -> Result<u64, Truncated> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(Truncated)
    }

    /// A zigzag varint.
    pub fn i64(&mut self) -> Result<i64, Truncated> {
        let v = self.u64()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A varint that must fit in `u32`.
    pub fn u32(&mut self) -> Result<u32, Truncated> {
        u32::try_from(self.u64()?).map_err(|_| Truncated)
    }

    /// A length-prefixed string (invalid UTF-8 is replaced).
    pub fn string(&mut self) -> Result<String, Truncated> {
        let n = usize::try_from(self.u64()?).map_err(|_| Truncated)?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_sizes() {
        let mut out = Vec::new();
        for v in [0i64, 1, -1, 63, -64, 64, i64::MAX, i64::MIN] {
            put_i64(&mut out, v);
        }
        put_str(&mut out, "zVM");
        let mut c = Cursor::new(&out);
        for v in [0i64, 1, -1, 63, -64, 64, i64::MAX, i64::MIN] {
            assert_eq!(c.i64(), Ok(v));
        }
        assert_eq!(c.string().as_deref(), Ok("zVM"));
        assert!(c.is_done());
        assert_eq!(c.byte(), Err(Truncated));
        let mut one = Vec::new();
        put_i64(&mut one, -64);
        assert_eq!(one.len(), 1);
    }
}
