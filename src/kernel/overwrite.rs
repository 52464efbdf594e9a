//! Replacing the value in a file plugtop writes to (`cpuN/online`,
//! `cmm_pages`) without truncating it to nothing first.
//!
//! On a real kernel these are sysfs and procfs attributes: a write is the
//! value, and `O_TRUNC` does nothing. Below a test or simulated root they
//! are plain files, and there `O_TRUNC` costs more than all the rest of an
//! interval: a truncation to length 0 makes ext4 (`auto_da_alloc`) write the
//! file's new blocks out when it is closed. So the value is written at the
//! start of the file in one write, and a plain file that held more than the
//! new value is then cut to the value's length, never to zero: what a reader
//! finds afterwards is exactly the value, as before.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// How a plain file is made to hold exactly the value just written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The file already ends where the value does (or is a kernel
    /// attribute, whose length means nothing).
    AsIs,
    /// The file held more: it is cut to this length.
    CutTo(u64),
}

/// What to do after writing `written` bytes over a file that was
/// `old_len` long. `on_kernel_fs` is asked only when the file held more
/// (sysfs attributes say 4096): an attribute is never truncated.
pub fn fit(old_len: u64, written: u64, on_kernel_fs: impl FnOnce() -> bool) -> Fit {
    if old_len <= written || on_kernel_fs() {
        Fit::AsIs
    } else {
        Fit::CutTo(written)
    }
}

/// Writes `text` over the start of `file` (opened for writing, `old_len`
/// bytes long; at offset 0 whatever its position, so a file just read can
/// be written) and cuts off whatever of the old contents lies beyond it.
/// Returns what it did to the length.
pub fn overwrite(file: &File, old_len: u64, text: &[u8]) -> std::io::Result<Fit> {
    file.write_all_at(text, 0)?;
    let written = u64::try_from(text.len()).unwrap_or(u64::MAX);
    let fit = fit(old_len, written, || super::regular::is_kernel_file(file));
    if let Fit::CutTo(len) = fit {
        rustix::fs::ftruncate(file, len)?;
    }
    Ok(fit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_plain_file_is_cut_only_when_it_held_more_and_never_to_zero_for_a_value() {
        for (old, new, want) in [
            (0, 2, Fit::AsIs),
            (2, 2, Fit::AsIs),
            (1, 7, Fit::AsIs),
            (5, 2, Fit::CutTo(2)),
            (4096, 2, Fit::CutTo(2)),
            (u64::MAX, 1, Fit::CutTo(1)),
        ] {
            assert_eq!(fit(old, new, || false), want, "{old} -> {new}");
        }
    }

    #[test]
    fn the_file_system_is_asked_only_when_the_file_held_more() {
        let asked = Cell::new(0);
        let ask = || {
            asked.set(asked.get() + 1);
            true
        };
        assert_eq!(fit(2, 2, ask), Fit::AsIs);
        assert_eq!(asked.get(), 0, "same length: no fstatfs");
        // A sysfs attribute reports 4096 bytes and is never cut.
        assert_eq!(fit(4096, 2, ask), Fit::AsIs);
        assert_eq!(asked.get(), 1);
    }

    /// A real procfs file (opened for reading only: tests never write to
    /// /proc or /sys) is known for a kernel file and would never be cut.
    #[test]
    fn a_kernel_attribute_is_never_cut() {
        let proc_file = File::open("/proc/self/stat").expect("/proc");
        assert_eq!(
            fit(4096, 2, || crate::kernel::regular::is_kernel_file(
                &proc_file
            )),
            Fit::AsIs
        );
        let dir = tempfile::tempdir().expect("dir");
        let plain = File::create(dir.path().join("plain")).expect("file");
        assert_eq!(
            fit(4096, 2, || crate::kernel::regular::is_kernel_file(&plain)),
            Fit::CutTo(2)
        );
    }

    fn opened(path: &std::path::Path) -> (File, u64) {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .expect("open");
        let len = file.metadata().expect("stat").len();
        (file, len)
    }

    #[test]
    fn growing_shrinking_and_equal_values_leave_exactly_the_value() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("cmm_pages");
        std::fs::write(&path, "0\n").expect("seed");
        for (value, cut) in [
            ("1000\n", Fit::AsIs),
            ("12\n", Fit::CutTo(3)),
            ("34\n", Fit::AsIs),
            ("123456789012345\n", Fit::AsIs),
            ("7\n", Fit::CutTo(2)),
        ] {
            let (file, len) = opened(&path);
            assert_eq!(overwrite(&file, len, value.as_bytes()).expect("write"), cut);
            drop(file);
            assert_eq!(
                std::fs::read_to_string(&path).expect("read"),
                value,
                "after writing {value:?}"
            );
        }
    }

    /// The file is written through the descriptor it was opened as, at its
    /// start: another name for the same file (a hard link) sees the value,
    /// and nothing before the write empties it.
    #[test]
    fn a_hard_link_sees_the_value_written_over_its_start() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("online");
        std::fs::write(&path, "1\n").expect("seed");
        std::fs::hard_link(&path, dir.path().join("other")).expect("link");
        let (file, len) = opened(&path);
        // Before the write nothing has touched the contents (no O_TRUNC).
        assert_eq!(
            std::fs::read_to_string(dir.path().join("other")).expect("read"),
            "1\n"
        );
        assert_eq!(overwrite(&file, len, b"0\n").expect("write"), Fit::AsIs);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("other")).expect("read"),
            "0\n"
        );
    }
}
