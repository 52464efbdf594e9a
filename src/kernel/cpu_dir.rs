//! The `cpuN` directories of /sys/devices/system/cpu below a root, their
//! flags read afresh every time they are asked about (the listing kept
//! while the reading's online and present CPUs stay, when the caller gives
//! them: [`CpuDir::lists_read`]) and never written: what choosing
//! a CPU reads, for the actuator that acts and for observe mode, which only
//! names the CPU. Flags are read as cpuplugd reads them: the number at the
//! start of the first line.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rustix::fs::{FileType, Mode, OFlags};

use super::fs::{KeptFiles, Resolve, Root, check_regular, read_attribute};

use super::cpu_choice::{self, CpuChange, CpuFlags, Online, cpu_of_name, walk_order};
use super::cpulist::CpuList;
use super::integer::parse_long;
use super::root::paths;

/// cpuplugd reads a flag with `fgets` into 512 bytes: at most 511 of them.
const FLAG_BYTES: u64 = 511;

/// How a flag file is opened: for reading, without blocking.
const FLAG_READ: OFlags = OFlags::RDONLY.union(OFlags::NONBLOCK);

/// The most entries of the CPU directory looked at (a kernel has a few
/// hundred; a damaged root may have millions).
const MOST_ENTRIES: usize = 1 << 16;

/// One of a CPU's two flag files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlagFile {
    Online,
    Configure,
}

impl FlagFile {
    /// Its name in the `cpuN` directory.
    pub fn name(self) -> &'static str {
        match self {
            FlagFile::Online => "online",
            FlagFile::Configure => "configure",
        }
    }
}

/// A read-only view of the CPU directories below one root, for the
/// actuator that acts on them: every read is resolved as the writes are
/// ([`Resolve::Beneath`]), so a link climbing out of the root makes a flag
/// unreadable (and the CPU written, so the failure is seen, never taken
/// for a CPU without an `online` file); the screen reads the flags by the
/// same rule, so it shows what the actuator sees.
#[derive(Debug, Clone)]
pub struct CpuDir {
    /// `None` when the root cannot be opened: no CPUs are seen.
    root: Option<Arc<Root>>,
    dir: PathBuf,
    /// The CPU directory and the flag files read so far, kept open when
    /// they are the kernel's (observe mode reads them each interval a rule
    /// asks for a change).
    kept: Arc<Mutex<KeptFiles<(u32, FlagFile)>>>,
    /// The CPUs listed, kept while the online and present lists stay.
    listed: Arc<Mutex<Listed>>,
}

impl Listed {
    /// Forgets the listing and what was found absent: the next change
    /// lists and looks again.
    fn forget(&mut self) {
        self.ids = None;
        self.absent.clear();
    }

    /// Whether `key` was found absent while this listing holds.
    fn absent(&self, key: (u32, FlagFile)) -> bool {
        self.ids.is_some() && self.absent.contains(&key)
    }
}

/// The CPU directory's listing, kept between changes (see
/// [`CpuDir::lists_read`]): the directories of a kernel's CPU directory
/// come and go with the present CPUs, so while the online and present
/// lists read as they did the listing is the one made before.
#[derive(Debug, Default)]
struct Listed {
    /// The online and present lists the listing holds for (`None`: no
    /// lists were given, and the directory is listed every time).
    lists: Option<(Vec<u32>, Arc<[u32]>)>,
    /// The CPU ids in walk order, once listed.
    ids: Option<Vec<u32>>,
    /// The flag files found absent since (`cpu0/online` on most
    /// machines): not looked for again while the listing is kept.
    absent: Vec<(u32, FlagFile)>,
    /// Whether the CPU directory lies on sysfs (its flag files are kept
    /// open only then: a plain root's are neither kept nor asked about).
    kernel: bool,
}

/// What reading one flag file gave.
enum Flag {
    Absent,
    Unreadable,
    Reads(Option<i64>),
}

/// What a flag file's bytes say: the number at the start of its first line.
fn flag_of(bytes: &[u8]) -> Flag {
    let line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    Flag::Reads(if line.is_empty() {
        None
    } else {
        parse_long(line)
    })
}

impl CpuDir {
    /// The CPUs below `root`.
    pub fn new(root: &Path) -> Self {
        CpuDir {
            root: Root::open(root).ok().map(Arc::new),
            dir: PathBuf::from(paths::CPU_DIR),
            kept: Arc::default(),
            listed: Arc::default(),
        }
    }

    fn kept(&self) -> MutexGuard<'_, KeptFiles<(u32, FlagFile)>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn listed(&self) -> MutexGuard<'_, Listed> {
        self.listed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The online and present CPUs of the reading an interval decides on:
    /// from now on the directory is listed again only when they move (or a
    /// write fails), not at every change. Without them it is listed at
    /// every change.
    pub fn lists_read(&self, online: &CpuList, present: &CpuList) {
        let mut listed = self.listed();
        let same = listed.lists.as_ref().is_some_and(|(on, pr)| {
            on[..] == online.ids[..] && (Arc::ptr_eq(pr, &present.ids) || pr[..] == present.ids[..])
        });
        if !same {
            listed.forget();
            listed.lists = Some((online.ids.to_vec(), Arc::clone(&present.ids)));
        }
    }

    /// Notes a write to CPU `id`'s `online`: written, the online list reads
    /// the CPU in or out at the next reading, which moves nothing else; a
    /// failed write may have left anything, and the directory is listed
    /// again.
    pub fn wrote(&self, id: u32, online: bool, written: bool) {
        let mut listed = self.listed();
        match (listed.lists.as_mut(), written) {
            (Some((on, _)), true) => match (on.binary_search(&id), online) {
                (Err(at), true) => on.insert(at, id),
                (Ok(at), false) => {
                    on.remove(at);
                }
                _ => {}
            },
            _ => listed.forget(),
        }
    }

    /// The ids of the CPU directories now, in the order cpuplugd visits
    /// them. Entries that are not directories are no CPUs; only those the
    /// listing does not show as directories (links, or a file system that
    /// does not say) cost a lookup each.
    pub fn ids(&self) -> Vec<u32> {
        if let Some(ids) = self.listed().ids.as_ref() {
            return ids.clone();
        }
        let Some(root) = self.root.as_deref() else {
            return Vec::new();
        };
        let Some(entries) = self.entries(root) else {
            return Vec::new();
        };
        let mut ids: Vec<u32> = entries
            .iter()
            .filter_map(|(name, kind)| {
                let id = cpu_of_name(name)?;
                let dir = match *kind {
                    FileType::Directory => true,
                    FileType::Symlink | FileType::Unknown => {
                        root.is_dir(&self.dir.join(format!("cpu{id}")), Resolve::Beneath)
                    }
                    _ => false,
                };
                dir.then_some(id)
            })
            .collect();
        walk_order(&mut ids);
        let mut listed = self.listed();
        if listed.lists.is_some() {
            listed.ids = Some(ids.clone());
        }
        ids
    }

    /// The CPU directory's entries now, from the kept directory when the
    /// root's is the kernel's (`None`: it cannot be listed).
    fn entries(&self, root: &Root) -> Option<Vec<(Vec<u8>, FileType)>> {
        let mut kept = self.kept();
        let mut listing = kept.take_dir(|| root.open_dir(&self.dir, Resolve::Beneath).ok())?;
        let entries = super::fs::entries_of(&mut listing.dir, MOST_ENTRIES).ok();
        let whole = entries.as_ref().is_some_and(|e| e.len() < MOST_ENTRIES);
        self.listed().kernel = listing.is_kernel();
        kept.give_back(listing, whole);
        entries
    }

    /// What CPU `id`'s `flag` file says now: from the kept file when the
    /// kernel's is kept, else read afresh (and kept when it is the
    /// kernel's). More than cpuplugd reads is unreadable, and so is
    /// anything but a regular file (asked only when the read gives nothing
    /// or fails: a FIFO, a device, a directory).
    fn read_flag(&self, id: u32, flag: FlagFile) -> Flag {
        let Some(root) = self.root.as_deref() else {
            return Flag::Unreadable;
        };
        let key = (id, flag);
        let kernel = {
            let listed = self.listed();
            if listed.absent(key) {
                return Flag::Absent;
            }
            listed.kernel
        };
        let mut kept = self.kept();
        let mut buf = [0u8; FLAG_BYTES as usize + 1];
        if let Some(file) = kept.open_file(&key) {
            match read_attribute(file, &mut buf) {
                Ok(bytes) => return flag_of(bytes),
                // Read afresh, with what that says.
                Err(_) => kept.forget(&key),
            }
        }
        let path = self.dir.join(format!("cpu{id}/{}", flag.name()));
        let file = match root.open_at(&path, FLAG_READ, Mode::empty(), Resolve::Beneath) {
            Ok(fd) => File::from(fd),
            Err(e) if e.is_not_found() => {
                drop(kept);
                let mut listed = self.listed();
                if listed.ids.is_some() {
                    listed.absent.push(key);
                }
                return Flag::Absent;
            }
            Err(_) => return Flag::Unreadable,
        };
        match read_attribute(&file, &mut buf) {
            Ok(bytes) if !bytes.is_empty() || check_regular(&file, "").is_ok() => {
                let read = flag_of(bytes);
                // Only a kernel CPU directory's files are asked whether
                // they are the kernel's (a plain root's never are kept).
                if kernel {
                    kept.keep(key, file);
                }
                read
            }
            _ => Flag::Unreadable,
        }
    }

    /// What CPU `id`'s `online` file says now.
    pub fn online(&self, id: u32) -> Online {
        match self.read_flag(id, FlagFile::Online) {
            Flag::Absent => Online::Fixed,
            Flag::Unreadable => Online::Unreadable,
            Flag::Reads(v) => Online::Reads(v),
        }
    }

    /// What CPU `id`'s `configure` file says now (`None`: nothing usable).
    pub fn configure(&self, id: u32) -> Option<i64> {
        match self.read_flag(id, FlagFile::Configure) {
            Flag::Reads(v) => v,
            Flag::Absent | Flag::Unreadable => None,
        }
    }

    /// CPU `id` as it is now; `configure` is read only when `with_configure`
    /// (an unplug does not look at it).
    pub fn flags(&self, id: u32, with_configure: bool) -> CpuFlags {
        CpuFlags {
            id,
            online: self.online(id),
            configure: if with_configure {
                self.configure(id)
            } else {
                None
            },
        }
    }

    /// Every CPU as it is now, in walk order.
    pub fn all(&self, with_configure: bool) -> Vec<CpuFlags> {
        self.ids()
            .into_iter()
            .map(|id| self.flags(id, with_configure))
            .collect()
    }

    /// The CPUs the next `count` changes would take now, as
    /// [`cpu_choice::choose`] picks them from [`CpuDir::all`], with fewer
    /// reads: a plug can take only a CPU whose `configure` reads 1, so
    /// another CPU's `online` is not read (off s390 no CPU has that file,
    /// and a plug asked for, as observe mode asks each interval the rule
    /// holds, then costs one lookup a CPU instead of two reads); an unplug
    /// reads CPUs only until it knows which it takes.
    pub fn would_take(&self, change: CpuChange, count: usize) -> Vec<u32> {
        let cpus: Vec<CpuFlags> = match change {
            CpuChange::Unplug => self.until_unplugs(count),
            CpuChange::Plug => self
                .ids()
                .into_iter()
                .filter_map(|id| {
                    let configure = self.configure(id);
                    (configure == Some(1)).then(|| CpuFlags {
                        id,
                        online: self.online(id),
                        configure,
                    })
                })
                .collect(),
        };
        cpu_choice::choose(change, &cpus, count)
    }

    /// The CPUs in walk order, read until `count` of them could be
    /// unplugged and one more is online: the ones after them change
    /// neither which CPUs an unplug takes nor that it may (it never takes
    /// the last online CPU).
    fn until_unplugs(&self, count: usize) -> Vec<CpuFlags> {
        let mut cpus = Vec::new();
        let (mut wanted, mut online) = (0usize, 0usize);
        for id in self.ids() {
            let cpu = self.flags(id, false);
            wanted += usize::from(cpu.wanted(CpuChange::Unplug));
            online += usize::from(cpu.online());
            cpus.push(cpu);
            if wanted >= count && online > count {
                break;
            }
        }
        cpus
    }

    /// Whether one of `ids` other than `id` is online now: read file by
    /// file until one is, so the guard costs a read or two. The CPUs in
    /// `read` were read during this change already and are not read again.
    pub fn another_online(&self, ids: &[u32], id: u32, read: &[CpuFlags]) -> bool {
        ids.iter().filter(|other| **other != id).any(|other| {
            match read.iter().find(|c| c.id == *other) {
                Some(cpu) => cpu.online(),
                None => self.flags(*other, false).online(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a flag file is in a test root: absent, a directory (unreadable
    /// as a flag), or a file with this text.
    fn flag() -> impl proptest::strategy::Strategy<Value = Option<&'static str>> {
        proptest::prop_oneof![
            proptest::strategy::Just(None),
            proptest::strategy::Just(Some("/")),
            proptest::strategy::Just(Some("0\n")),
            proptest::strategy::Just(Some("1\n")),
            proptest::strategy::Just(Some("1")),
            proptest::strategy::Just(Some("2\n")),
            proptest::strategy::Just(Some("")),
            proptest::strategy::Just(Some("junk\n")),
            proptest::strategy::Just(Some("\n1\n")),
        ]
    }

    proptest::proptest! {
        /// Reading fewer files names the CPUs that reading them all would.
        #[test]
        fn would_take_names_what_choosing_from_every_flag_names(
            cpus in proptest::collection::btree_map(0u32..13, (flag(), flag()), 0..7),
            count in 0usize..4,
        ) {
            let root = tempfile::tempdir().expect("root");
            let dir = root.path().join(paths::CPU_DIR);
            std::fs::create_dir_all(&dir).expect("cpu dir");
            for (id, (online, configure)) in &cpus {
                let cpu = dir.join(format!("cpu{id}"));
                std::fs::create_dir_all(&cpu).expect("cpuN");
                for (name, what) in [("online", online), ("configure", configure)] {
                    match what {
                        None => {}
                        Some("/") => std::fs::create_dir_all(cpu.join(name)).expect("dir"),
                        Some(text) => std::fs::write(cpu.join(name), text).expect("flag"),
                    }
                }
            }
            let cpus = CpuDir::new(root.path());
            for change in [CpuChange::Plug, CpuChange::Unplug] {
                let every = cpu_choice::choose(change, &cpus.all(change == CpuChange::Plug), count);
                proptest::prop_assert_eq!(cpus.would_take(change, count), every);
            }
        }
    }
    use std::os::unix::fs::symlink;

    /// On the kernel's own root the CPU directory is kept open, and listed
    /// again it gives what a new listing gives; a plain root's is not kept.
    #[test]
    fn the_kernels_cpu_directory_is_kept_and_listed_again_whole() {
        let plain = tempfile::tempdir().expect("root");
        std::fs::create_dir_all(plain.path().join(paths::CPU_DIR).join("cpu3")).expect("cpu3");
        let cpus = CpuDir::new(plain.path());
        assert_eq!(cpus.ids(), [3]);
        std::fs::write(plain.path().join(paths::CPU_DIR).join("cpu3/online"), "1\n")
            .expect("online");
        assert_eq!(cpus.online(3), Online::Reads(Some(1)));
        assert!(!cpus.kept().dir_is_kept());
        assert_eq!(cpus.kept().open_count(), 0, "plain files are never kept");
        let root = Path::new("/");
        if !root.join(paths::CPU_DIR).is_dir() {
            return;
        }
        let cpus = CpuDir::new(root);
        let first = cpus.ids();
        assert!(!first.is_empty(), "this machine has CPUs");
        assert!(cpus.kept().dir_is_kept());
        assert_eq!(cpus.ids(), first);
        assert_eq!(cpus.clone().ids(), CpuDir::new(root).ids());
        // Flags read again from kept files read what new opens read.
        let flags = cpus.all(true);
        assert_eq!(cpus.all(true), flags);
        assert_eq!(flags, CpuDir::new(root).all(true));
        if flags.iter().any(|c| matches!(c.online, Online::Reads(_))) {
            assert!(
                cpus.kept().open_count() > 0,
                "the kernel's flag files are kept"
            );
        }
    }

    #[test]
    fn only_directories_are_cpus_links_followed_inside_the_root() {
        let root = tempfile::tempdir().expect("root");
        let outside = tempfile::tempdir().expect("outside");
        let cpus = root.path().join(paths::CPU_DIR);
        std::fs::create_dir_all(cpus.join("cpu0")).expect("cpu0");
        std::fs::create_dir_all(cpus.join("cpu10")).expect("cpu10");
        std::fs::write(cpus.join("cpu1"), "a file\n").expect("cpu1");
        symlink("cpu0", cpus.join("cpu2")).expect("link");
        symlink("nowhere", cpus.join("cpu3")).expect("dangling");
        // Outside the root it is a directory; inside, nothing.
        symlink(outside.path(), cpus.join("cpu4")).expect("absolute link");
        let mut ids = CpuDir::new(root.path()).ids();
        assert_eq!(ids, [0, 10, 2]);
        std::fs::create_dir_all(
            root.path()
                .join(outside.path().strip_prefix("/").expect("abs")),
        )
        .expect("the same name inside");
        ids = CpuDir::new(root.path()).ids();
        assert_eq!(ids, [0, 10, 2, 4]);
    }

    /// Given the reading's lists, the directory is listed once and again
    /// only when they move other than by the CPU written, or a write
    /// failed; a flag found absent is not looked for again meanwhile.
    /// Without lists every call lists and looks afresh.
    #[test]
    fn the_listing_is_kept_while_the_lists_stay() {
        let root = tempfile::tempdir().expect("root");
        let dir = root.path().join(paths::CPU_DIR);
        for id in 0..2 {
            std::fs::create_dir_all(dir.join(format!("cpu{id}"))).expect("cpuN");
        }
        std::fs::write(dir.join("cpu1/online"), "1\n").expect("online");
        let list = |text: &str| CpuList::parse(text.as_bytes()).expect("list");
        let add = |id: u32| std::fs::create_dir_all(dir.join(format!("cpu{id}"))).expect("cpuN");
        let blind = CpuDir::new(root.path());
        assert_eq!(blind.ids(), [0, 1]);
        add(2);
        assert_eq!(blind.ids(), [0, 1, 2], "no lists: listed every time");

        let cpus = CpuDir::new(root.path());
        cpus.lists_read(&list("0-1\n"), &list("0-2\n"));
        assert_eq!(cpus.ids(), [0, 1, 2]);
        assert_eq!(cpus.online(0), Online::Fixed);
        add(3);
        std::fs::write(dir.join("cpu0/online"), "1\n").expect("cpu0 online");
        cpus.lists_read(&list("0-1\n"), &list("0-2\n"));
        assert_eq!(cpus.ids(), [0, 1, 2], "the same lists: the same listing");
        assert_eq!(
            cpus.online(0),
            Online::Fixed,
            "absent, not looked for again"
        );
        // cpu1 written offline: the next reading's online list says so.
        cpus.wrote(1, false, true);
        cpus.lists_read(&list("0\n"), &list("0-2\n"));
        assert_eq!(cpus.ids(), [0, 1, 2], "moved only by the write");
        cpus.wrote(2, true, false);
        assert_eq!(cpus.ids(), [0, 1, 2, 3], "a failed write: listed again");
        assert_eq!(cpus.online(0), Online::Reads(Some(1)));
        add(4);
        cpus.lists_read(&list("0\n"), &list("0-4\n"));
        assert_eq!(cpus.ids(), [0, 1, 2, 3, 4], "the present CPUs moved");
    }
}
