//! One buffer that every file of a reading is read into, in place: the
//! kernel's bytes land where they are parsed, with no copy from a chunk.

use std::fs::File;

/// How much a reading's buffer holds at first (grown for larger files).
const FIRST_SIZE: usize = 64 << 10;
/// More than this from one /proc or /sys file is refused: they are small.
pub const FILE_LIMIT: usize = 4 << 20;

/// A zeroed buffer that files are read into; only its filled part counts.
#[derive(Debug)]
pub struct ReadBuffer {
    bytes: Vec<u8>,
    len: usize,
}

impl Default for ReadBuffer {
    fn default() -> Self {
        ReadBuffer {
            bytes: vec![0; FIRST_SIZE],
            len: 0,
        }
    }
}

impl ReadBuffer {
    /// What the last read gave.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Replaces the contents by `file` from where it stands to its end,
    /// bounded. /proc and /sys hand out whole lines and stop short only
    /// where the next line would not fit, and a regular file stops short
    /// only at its end, so a read that leaves more than a page unused has
    /// reached the end: one system call instead of two per file and interval.
    pub fn read_whole(&mut self, file: &File) -> std::io::Result<()> {
        self.read_with(|buf, _| rustix::io::read(file, buf))
    }

    /// As [`read_whole`](Self::read_whole), from the start of `file`
    /// whatever its position (`pread`): a kept /proc file is read again
    /// with one system call instead of a seek and a read.
    pub fn read_whole_from_start(&mut self, file: &File) -> std::io::Result<()> {
        self.read_with(|buf, at| rustix::io::pread(file, buf, at))
    }

    /// Fills the buffer by `read(room, offset)` calls until the end.
    fn read_with(
        &mut self,
        mut read: impl FnMut(&mut [u8], u64) -> rustix::io::Result<usize>,
    ) -> std::io::Result<()> {
        self.len = 0;
        loop {
            if self.len == self.bytes.len() {
                if self.len > FILE_LIMIT {
                    return Err(too_large());
                }
                // Room for one read past the limit, to see a file end there.
                self.bytes.resize((self.len * 2).min(FILE_LIMIT + 8192), 0);
            }
            let room = &mut self.bytes[self.len..];
            let asked = room.len();
            let n = read(room, self.len as u64)?;
            self.len += n;
            if n == 0 || n + 4096 < asked {
                return if self.len > FILE_LIMIT {
                    Err(too_large())
                } else {
                    Ok(())
                };
            }
        }
    }
}

fn too_large() -> std::io::Error {
    std::io::Error::other(format!(
        "more than {} MiB; a kernel file this large is not what plugtop reads",
        FILE_LIMIT >> 20
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_small_and_large_files_whole_and_refuses_huge_ones() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut buf = ReadBuffer::default();
        for size in [
            0usize,
            5,
            FIRST_SIZE - 1,
            FIRST_SIZE,
            3 * FIRST_SIZE + 7,
            FILE_LIMIT,
        ] {
            let path = dir.path().join(format!("f{size}"));
            let text: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
            let mut f = File::create(&path).unwrap_or_else(|e| panic!("{e}"));
            f.write_all(&text).unwrap_or_else(|e| panic!("{e}"));
            let f = File::open(&path).unwrap_or_else(|e| panic!("{e}"));
            buf.read_whole(&f).unwrap_or_else(|e| panic!("{size}: {e}"));
            assert_eq!(buf.bytes(), &text[..], "{size} bytes");
        }
        let path = dir.path().join("huge");
        std::fs::write(&path, vec![b'x'; FILE_LIMIT + 1]).unwrap_or_else(|e| panic!("{e}"));
        let f = File::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(buf.read_whole(&f).is_err());
        // A small file after a refused one reads whole again.
        let f = File::open(dir.path().join("f5")).unwrap_or_else(|e| panic!("{e}"));
        buf.read_whole(&f).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(buf.bytes(), b"abcde");
    }

    /// Read from the start whatever the file's position, as often as
    /// asked, large files whole; a kept /proc file reads afresh.
    #[test]
    fn reading_from_the_start_ignores_the_position() {
        use std::io::{Seek, SeekFrom};
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut buf = ReadBuffer::default();
        let path = dir.path().join("big");
        let text: Vec<u8> = (0..3 * FIRST_SIZE + 7)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        let mut f = File::open(&path).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..2 {
            f.seek(SeekFrom::Start(1000))
                .unwrap_or_else(|e| panic!("{e}"));
            buf.read_whole_from_start(&f)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(buf.bytes(), &text[..]);
        }
        let stat = File::open("/proc/self/stat").unwrap_or_else(|e| panic!("{e}"));
        buf.read_whole_from_start(&stat)
            .unwrap_or_else(|e| panic!("{e}"));
        let first = buf.bytes().to_vec();
        buf.read_whole_from_start(&stat)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!first.is_empty() && !buf.bytes().is_empty());
        assert_eq!(
            first.split(|b| *b == b' ').next(),
            buf.bytes().split(|b| *b == b' ').next(),
            "the same pid, read again from the start"
        );
    }
}
