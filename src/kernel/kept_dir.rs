//! The CPU directory of a kernel root, kept open between readings and
//! listed again from its start each time. The screen lists the `cpuN`
//! directories every interval; opening the directory walked its path each
//! time (an `openat` and a `close` a second, a few percent of what the
//! screen cost when nothing changed). sysfs lists a directory as it is at
//! each read from offset 0, so a kept, rewound directory lists what a new
//! open would. Only a directory on sysfs or /proc is kept: a plain one (a
//! test root, a simulated guest) may be replaced by a rename, and is opened
//! anew each time, as before.

use std::os::fd::OwnedFd;

use rustix::fs::Dir;

use super::regular::is_kernel_file;

/// One kept directory (none until the first open of a kernel one).
#[derive(Debug, Default)]
pub struct KeptDir {
    dir: Option<Dir>,
}

impl KeptDir {
    /// The directory to list from its start: the kept one rewound, or what
    /// `open` gives (`None` when it fails).
    pub fn take(&mut self, open: impl FnOnce() -> Option<OwnedFd>) -> Option<Listing> {
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
    pub fn is_kept(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{Mode, OFlags};

    fn open(path: &std::path::Path) -> Option<OwnedFd> {
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

    /// A plain directory is opened again at every reading (never kept), so
    /// one replaced by a rename is listed where it now is.
    #[test]
    fn plain_directories_are_opened_anew_each_reading() {
        let root = tempfile::tempdir().expect("root");
        let cpus = root.path().join("cpu");
        std::fs::create_dir_all(cpus.join("cpu0")).expect("cpu0");
        let mut kept = KeptDir::default();
        let mut listing = kept.take(|| open(&cpus)).expect("listing");
        assert_eq!(names(&mut listing), [".", "..", "cpu0"]);
        kept.give_back(listing, true);
        assert!(!kept.is_kept());
        let new = root.path().join("new");
        std::fs::create_dir_all(new.join("cpu1")).expect("cpu1");
        std::fs::remove_dir_all(&cpus).expect("remove");
        std::fs::rename(&new, &cpus).expect("rename");
        let mut listing = kept.take(|| open(&cpus)).expect("listing");
        assert_eq!(names(&mut listing), [".", "..", "cpu1"]);
    }

    /// A kernel directory (here /proc/sys/vm, which stays as it is) is
    /// opened once, and the kept one is listed again from its start: all
    /// of it, at every reading.
    #[test]
    fn a_kernel_directory_is_kept_and_listed_again_from_its_start() {
        let vm = std::path::Path::new("/proc/sys/vm");
        let mut kept = KeptDir::default();
        let mut listing = kept.take(|| open(vm)).expect("listing");
        let first = names(&mut listing);
        assert!(first.len() > 2, "{first:?}");
        kept.give_back(listing, true);
        assert!(kept.is_kept());
        for _ in 0..2 {
            let mut listing = kept
                .take(|| panic!("the kept directory is opened again"))
                .expect("kept");
            assert_eq!(names(&mut listing), first);
            kept.give_back(listing, true);
        }
        // Listed only partly (an error on the way): opened anew next time.
        let listing = kept.take(|| None).expect("kept");
        kept.give_back(listing, false);
        assert!(!kept.is_kept());
        let opens = std::cell::Cell::new(0);
        let listing = kept.take(|| {
            opens.set(opens.get() + 1);
            open(vm)
        });
        assert!(listing.is_some());
        assert_eq!(opens.get(), 1);
    }

    /// A directory that will not open lists nothing.
    #[test]
    fn a_directory_that_will_not_open_lists_nothing() {
        let mut kept = KeptDir::default();
        assert!(kept.take(|| None).is_none());
        assert!(!kept.is_kept());
    }
}
