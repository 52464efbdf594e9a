//! The `cpuN/online` and `cpuN/configure` files of a kernel root, kept
//! open between readings. The screen shows every CPU's flags each
//! interval; opening two sysfs files per CPU each time cost it more than
//! drawing (on a 64-CPU guest, 128 path walks a second). A sysfs
//! attribute read again from offset 0 is asked of the kernel afresh, so a
//! kept file reads what a new open would. Only files on sysfs are kept: a
//! plain file (a test root, a simulated guest) may be replaced by a rename,
//! and is opened anew each time, as before.

use std::collections::HashMap;
use std::fs::File;

use super::integer::parse_long;

/// One flag file of one CPU.
#[derive(Debug)]
enum KeptFile {
    /// Open on sysfs: read again at offset 0.
    Open(File),
    /// Not there when last looked for (cpu0/online on most machines,
    /// configure off s390); looked for again now and then.
    Missing,
}

/// A CPU's two flag files and the reading that last listed it.
#[derive(Debug)]
struct CpuFiles {
    online: Option<KeptFile>,
    configure: Option<KeptFile>,
    seen: u32,
}

/// The two flag files of a CPU, by their place in [`CpuFiles`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagFile {
    Online,
    Configure,
}

/// What the caller's open of a flag file gave.
pub enum Opened {
    File(File),
    NotFound,
    /// Any other failure: nothing is kept, the flag reads as unknown.
    Failed,
}

/// Kept flag files of one kernel root, by CPU number.
#[derive(Debug, Default)]
pub struct KeptFlags {
    cpus: HashMap<u32, CpuFiles>,
}

/// How often (in readings) a missing flag file is looked for again.
const LOOK_AGAIN: u32 = 64;

impl KeptFlags {
    /// CPU `id`'s `flag` as reading number `reading` finds it: from the kept
    /// file, or from `open` when none is kept (or a missing one is due to
    /// be looked for). `None` when missing or unreadable.
    pub fn read(
        &mut self,
        id: u32,
        flag: FlagFile,
        reading: u32,
        open: impl FnOnce() -> Opened,
    ) -> Option<bool> {
        let cpu = self.cpus.entry(id).or_insert(CpuFiles {
            online: None,
            configure: None,
            seen: reading,
        });
        cpu.seen = reading;
        let slot = match flag {
            FlagFile::Online => &mut cpu.online,
            FlagFile::Configure => &mut cpu.configure,
        };
        let due = reading.is_multiple_of(LOOK_AGAIN);
        if slot.is_none() || (due && matches!(slot, Some(KeptFile::Missing))) {
            *slot = match open() {
                Opened::File(f) if super::regular::is_kernel_file(&f) => Some(KeptFile::Open(f)),
                // A plain file: read once, never kept.
                Opened::File(f) => return read_at_start(&f),
                Opened::NotFound => Some(KeptFile::Missing),
                Opened::Failed => None,
            };
        }
        match slot {
            Some(KeptFile::Open(f)) => {
                let value = read_at_start(f);
                if value.is_none() {
                    // Gone with its CPU (ENODEV) or unreadable: opened anew
                    // next time, so a CPU that comes back is seen.
                    *slot = None;
                }
                value
            }
            Some(KeptFile::Missing) | None => None,
        }
    }

    /// Forgets the CPUs that reading number `reading` did not list: their
    /// directories are gone.
    pub fn keep_only_seen(&mut self, reading: u32) {
        self.cpus.retain(|_, cpu| cpu.seen == reading);
    }
}

/// The flag at the start of `file`: 1 reads as true, another number as
/// false, anything else as unknown.
fn read_at_start(file: &File) -> Option<bool> {
    let mut buf = [0u8; 512];
    let n = rustix::io::pread(file, &mut buf, 0).ok()?;
    parse_long(buf.get(..n)?).map(|v| v == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn open_plain(path: &std::path::Path) -> Opened {
        match File::open(path) {
            Ok(f) => Opened::File(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Opened::NotFound,
            Err(_) => Opened::Failed,
        }
    }

    /// A plain file is opened again at every reading (never kept), so a
    /// file replaced by a rename is read where it now is.
    #[test]
    fn plain_files_are_opened_anew_each_reading() {
        let dir = tempfile::tempdir().expect("dir");
        let online = dir.path().join("online");
        std::fs::write(&online, "1\n").expect("write");
        let mut kept = KeptFlags::default();
        let opens = Cell::new(0);
        let mut read = |reading| {
            kept.read(3, FlagFile::Online, reading, || {
                opens.set(opens.get() + 1);
                open_plain(&online)
            })
        };
        assert_eq!(read(1), Some(true));
        std::fs::write(dir.path().join("new"), "0\n").expect("write");
        std::fs::rename(dir.path().join("new"), &online).expect("rename");
        assert_eq!(read(2), Some(false));
        assert_eq!(opens.get(), 2);
    }

    /// A kernel file (here /proc's, read only) is opened once and read
    /// again from its start; a missing file is looked for again only every
    /// 64 readings; a failure keeps nothing.
    #[test]
    fn kernel_files_are_kept_and_missing_ones_looked_for_seldom() {
        let mut kept = KeptFlags::default();
        let opens = Cell::new(0);
        for reading in 1..=3 {
            // /proc/self/oom_score_adj reads "0": a flag that is not 1.
            let value = kept.read(0, FlagFile::Online, reading, || {
                opens.set(opens.get() + 1);
                open_plain(std::path::Path::new("/proc/self/oom_score_adj"))
            });
            assert_eq!(value, Some(false));
        }
        assert_eq!(opens.get(), 1, "kept open");
        let looks = Cell::new(0);
        for reading in 1..=130 {
            let value = kept.read(0, FlagFile::Configure, reading, || {
                looks.set(looks.get() + 1);
                Opened::NotFound
            });
            assert_eq!(value, None);
        }
        assert_eq!(looks.get(), 3, "at reading 1, 64 and 128");
        let tries = Cell::new(0);
        for reading in 1..=3 {
            kept.read(7, FlagFile::Online, reading, || {
                tries.set(tries.get() + 1);
                Opened::Failed
            });
        }
        assert_eq!(tries.get(), 3, "a failure is tried again");
    }

    #[test]
    fn cpus_not_listed_are_forgotten() {
        let mut kept = KeptFlags::default();
        kept.read(1, FlagFile::Online, 1, || Opened::NotFound);
        kept.read(2, FlagFile::Online, 1, || Opened::NotFound);
        kept.read(2, FlagFile::Online, 2, || Opened::NotFound);
        kept.keep_only_seen(2);
        assert_eq!(kept.cpus.len(), 1);
        assert!(kept.cpus.contains_key(&2));
    }
}
