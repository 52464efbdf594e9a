//! Kernel files and one kernel directory kept open between readings. The
//! screen reads the same /proc and /sys files every interval, and observe
//! mode reads each CPU's flags every interval a rule holds: opening each
//! cost a path walk, a `statx` and a `close` each time (on a 64-CPU guest,
//! 128 walks a second for the flags alone). A /proc or sysfs file read
//! again from offset 0, and a kernel directory listed again from its
//! start, are asked of the kernel afresh, so a kept one reads what a new
//! open would. Only files and directories on /proc or /sys are kept, and
//! only so many: a plain file (a test root, a simulated guest) may be
//! replaced by a rename, and is opened anew each time; a kept file that
//! fails to read is dropped, and opened afresh.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::os::fd::OwnedFd;

use rustix::fs::Dir;

use super::is_kernel_file;

/// The most files kept by one cache: two per CPU of a guest of half as
/// many CPUs; beyond it files are opened each time (descriptors stay few
/// on big guests).
const MOST_KEPT: usize = 512;

/// How often (in readings) a file found missing is looked for again.
const LOOK_AGAIN: u32 = 64;

/// What is known about one file.
#[derive(Debug)]
pub enum Slot {
    /// A kernel file, kept open: read it again from its start.
    Open(File),
    /// A plain file: opened again each time.
    Plain,
    /// Not there when last looked for (`dispatching` off s390,
    /// `cpu0/online` on most machines); looked for again now and then.
    Missing,
}

/// Kept files by a key the caller chooses, and one kept directory.
#[derive(Debug)]
pub struct KeptFiles<K> {
    files: HashMap<K, Slot, BuildHasherDefault<SmallKeys>>,
    dir: Option<Dir>,
}

/// Hashes the keys of [`KeptFiles`]: a file's name among a few, or a CPU
/// number and flag, looked up a few times for each file every interval.
/// Multiply and rotate, a few instructions a key where SipHash took about
/// 150: a map holds at most [`MOST_KEPT`] files, so keys a root chose to
/// collide (CPU numbers) cost at most a scan of those.
#[derive(Debug, Default, Clone, Copy)]
struct SmallKeys(u64);

impl Hasher for SmallKeys {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl<K> Default for KeptFiles<K> {
    fn default() -> Self {
        KeptFiles {
            files: HashMap::default(),
            dir: None,
        }
    }
}

impl<K: Eq + Hash> KeptFiles<K> {
    /// What is known about `key` (`None`: nothing yet).
    pub fn get(&self, key: &K) -> Option<&Slot> {
        self.files.get(key)
    }

    /// The kept open file at `key`, if any.
    pub fn open_file(&self, key: &K) -> Option<&File> {
        match self.files.get(key) {
            Some(Slot::Open(file)) => Some(file),
            _ => None,
        }
    }

    /// Notes `file`, opened afresh at `key` and read without fault: kept
    /// open when it lies on /proc or /sys and there is room, else known as
    /// a plain file.
    pub fn keep(&mut self, key: K, file: File) {
        let slot = if self.files.len() < MOST_KEPT && is_kernel_file(&file) {
            Slot::Open(file)
        } else {
            Slot::Plain
        };
        self.files.insert(key, slot);
    }

    /// Notes that `key` was not there.
    pub fn missing(&mut self, key: K) {
        self.files.insert(key, Slot::Missing);
    }

    /// Whether `key` is to be opened at reading number `reading`: anything
    /// but a missing file, which is looked for again every
    /// [`LOOK_AGAIN`]th reading.
    pub fn due(&self, key: &K, reading: u32) -> bool {
        !matches!(self.files.get(key), Some(Slot::Missing)) || reading.is_multiple_of(LOOK_AGAIN)
    }

    /// Forgets `key` (a kept file that failed to read: opened anew).
    pub fn forget(&mut self, key: &K) {
        self.files.remove(key);
    }

    /// Keeps only the keys `keep` says yes to (the CPUs a listing showed).
    pub fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) {
        self.files.retain(|k, _| keep(k));
    }

    /// How many files are kept open.
    #[cfg(test)]
    pub fn open_count(&self) -> usize {
        self.files
            .values()
            .filter(|s| matches!(s, Slot::Open(_)))
            .count()
    }

    /// The directory to list from its start: the kept one rewound, or what
    /// `open` gives (`None` when it fails).
    pub fn take_dir(&mut self, open: impl FnOnce() -> Option<OwnedFd>) -> Option<Listing> {
        if let Some(mut dir) = self.dir.take() {
            dir.rewind();
            return Some(Listing { dir, kernel: true });
        }
        let fd = open()?;
        let kernel = is_kernel_file(&fd);
        let dir = Dir::new(fd).ok()?;
        Some(Listing { dir, kernel })
    }

    /// Keeps `listing` for the next reading when it is a kernel directory
    /// read to its end without an error (one that failed is opened anew).
    pub fn give_back(&mut self, listing: Listing, whole: bool) {
        if listing.kernel && whole {
            self.dir = Some(listing.dir);
        }
    }

    /// Whether a directory is kept now.
    #[cfg(test)]
    pub fn dir_is_kept(&self) -> bool {
        self.dir.is_some()
    }
}

/// A directory being listed, and whether it lies on sysfs or /proc.
#[derive(Debug)]
pub struct Listing {
    /// The entries, read with [`Dir::read`].
    pub dir: Dir,
    kernel: bool,
}

impl Listing {
    /// Whether the directory lies on sysfs or /proc.
    pub fn is_kernel(&self) -> bool {
        self.kernel
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{Mode, OFlags};

    fn open_dir(path: &std::path::Path) -> Option<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::open(path, flags, Mode::empty()).ok()
    }

    fn names(listing: &mut Listing) -> Vec<String> {
        let mut names = Vec::new();
        while let Some(Ok(entry)) = listing.dir.read() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        names
    }

    /// A kernel file is kept, a plain one only known as plain; a missing
    /// one is due again only every 64 readings.
    #[test]
    fn kernel_files_are_kept_plain_ones_not_and_missing_ones_looked_for_seldom() {
        let mut kept = KeptFiles::default();
        kept.keep(1, File::open("/proc/self/stat").expect("/proc"));
        assert!(kept.open_file(&1).is_some());
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("online"), "1\n").expect("write");
        kept.keep(2, File::open(dir.path().join("online")).expect("plain"));
        assert!(matches!(kept.get(&2), Some(Slot::Plain)));
        assert_eq!(kept.open_count(), 1);
        kept.missing(3);
        let due: Vec<u32> = (1..=130).filter(|r| kept.due(&3, *r)).collect();
        assert_eq!(due, [64, 128]);
        assert!(kept.due(&2, 5) && kept.due(&4, 5));
        kept.retain(|k| *k != 1);
        assert_eq!(kept.open_count(), 0);
    }

    /// A plain directory is opened again at every reading (never kept), so
    /// one replaced by a rename is listed where it now is.
    #[test]
    fn plain_directories_are_opened_anew_each_reading() {
        let root = tempfile::tempdir().expect("root");
        let cpus = root.path().join("cpu");
        std::fs::create_dir_all(cpus.join("cpu0")).expect("cpu0");
        let mut kept = KeptFiles::<u32>::default();
        let mut listing = kept.take_dir(|| open_dir(&cpus)).expect("listing");
        assert_eq!(names(&mut listing), [".", "..", "cpu0"]);
        kept.give_back(listing, true);
        assert!(!kept.dir_is_kept());
        let new = root.path().join("new");
        std::fs::create_dir_all(new.join("cpu1")).expect("cpu1");
        std::fs::remove_dir_all(&cpus).expect("remove");
        std::fs::rename(&new, &cpus).expect("rename");
        let mut listing = kept.take_dir(|| open_dir(&cpus)).expect("listing");
        assert_eq!(names(&mut listing), [".", "..", "cpu1"]);
    }

    /// A kernel directory (here /proc/sys/vm, which stays as it is) is
    /// opened once, and the kept one is listed again from its start: all
    /// of it, at every reading.
    #[test]
    fn a_kernel_directory_is_kept_and_listed_again_from_its_start() {
        let vm = std::path::Path::new("/proc/sys/vm");
        let mut kept = KeptFiles::<u32>::default();
        let mut listing = kept.take_dir(|| open_dir(vm)).expect("listing");
        let first = names(&mut listing);
        assert!(first.len() > 2, "{first:?}");
        kept.give_back(listing, true);
        assert!(kept.dir_is_kept());
        for _ in 0..2 {
            let mut listing = kept
                .take_dir(|| panic!("the kept directory is opened again"))
                .expect("kept");
            assert_eq!(names(&mut listing), first);
            kept.give_back(listing, true);
        }
        // Listed only partly (an error on the way): opened anew next time.
        let listing = kept.take_dir(|| None).expect("kept");
        kept.give_back(listing, false);
        assert!(!kept.dir_is_kept());
        assert!(kept.take_dir(|| None).is_none(), "one that will not open");
    }
}
