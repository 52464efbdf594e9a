//! A journal checked against the guest it would be restored on, before
//! anything is written from it: a journal is data from a disk that may be
//! damaged, or from someone who may not be trusted, and `plugtop restore`
//! runs as root. A journal passes only when it names this root, lists CPUs
//! that exist here and can be put online (or are online anyway), and a
//! pool this guest has and could hold.

use std::path::{Path, PathBuf};

use crate::kernel::cpu_choice::Online;
use crate::kernel::cpu_dir::CpuDir;
use crate::kernel::fs::{FsError, Resolve, Root};
use crate::kernel::root_file::paths;

/// The line each value of a journal was read from, for messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyLines {
    /// The `root` line.
    pub root: usize,
    /// The `online` line.
    pub online: usize,
    /// The `cmm_pages` line.
    pub cmm_pages: usize,
}

/// A journal line and what is wrong with it.
pub type LineRefusal = (usize, BadLine);

/// What is wrong with a line of a journal (a damaged value is quoted, at
/// most 40 characters of it).
#[derive(Debug, thiserror::Error)]
pub enum BadLine {
    #[error("not a plugtop state journal (version 1 or 2)")]
    NotAJournal,
    #[error("not text (bytes that are not UTF-8)")]
    NotText,
    #[error("unknown line {0:?}")]
    Unknown(String),
    #[error("{key} given again (first on line {first})")]
    Repeated { key: &'static str, first: usize },
    #[error("the {0} line is missing")]
    Missing(&'static str),
    #[error("pid {0:?} is not a process id")]
    NotAPid(String),
    #[error("started {0:?} is not a number")]
    NotAStartTime(String),
    #[error("the root is empty")]
    EmptyRoot,
    /// An empty list would take every CPU offline.
    #[error("the online list is empty; refusing to take every CPU offline")]
    EmptyOnline,
    #[error("online {0:?} is not a CPU list")]
    NotACpuList(String),
    #[error(
        "online {:?} is not a list of distinct CPUs below {} in order",
        .0,
        crate::kernel::cpulist::MAX_CPUS
    )]
    NotDistinctCpus(String),
    #[error("cmm_pages {0} is negative")]
    NegativePool(i64),
    #[error("cmm_pages {0:?} is neither a number nor none")]
    NotAPool(String),
    /// The journal's root (`named`) cannot be resolved to compare with
    /// the root restored on (`here`).
    #[error(
        "the journal is for the root {named:?}, which cannot be resolved ({reason}), not {}",
        here.display()
    )]
    UnresolvableRoot {
        named: String,
        reason: std::io::Error,
        here: PathBuf,
    },
    /// A journal copied from another guest.
    #[error("the journal is for the root {named:?}, not {}", here.display())]
    OtherRoot { named: String, here: PathBuf },
    /// What it says could not be put back on this guest.
    #[error(transparent)]
    NotRestorable(NotRestorable),
}

/// `/proc/meminfo` is a few KiB; a longer one is not the kernel's.
const MEMINFO_LIMIT: u64 = 1 << 20;
/// `cmm_pages` holds one number.
const CMM_LIMIT: u64 = 64;
/// The pool is counted in 4 KiB pages, the smallest page Linux uses: the
/// most pages any guest's memory can hold.
const PAGE_KIB: i64 = 4;

/// Which part of a start state a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The root itself (it cannot be opened).
    Root,
    /// The online CPUs.
    Online,
    /// The pool (`cmm_pages`).
    Pool,
}

/// Why a start state could not be put back on the guest below a root.
#[derive(Debug, thiserror::Error)]
pub enum NotRestorable {
    #[error("cannot open the root {}", root.display())]
    RootUnopenable {
        root: PathBuf,
        #[source]
        reason: std::io::Error,
    },
    #[error("cpu{id} does not exist below {}/{}", root.display(), paths::CPU_DIR)]
    NoSuchCpu { id: u32, root: PathBuf },
    #[error("cpu{0}'s online file cannot be read, so it cannot be put back")]
    OnlineUnreadable(u32),
    #[error("cmm_pages {0} is negative: no pool has fewer than 0 pages")]
    NegativePool(i64),
    #[error("cmm_pages {} is given, but the guest has no {}", .0, paths::CMM_PAGES)]
    NoPool(i64),
    #[error("cmm_pages cannot be put back")]
    PoolUnreadable(#[source] Box<FsError>),
    #[error("cannot check cmm_pages {pages}")]
    MeminfoUnreadable {
        pages: i64,
        #[source]
        reason: Box<FsError>,
    },
    #[error("cannot check cmm_pages {}: no MemTotal in {}", .0, paths::MEMINFO)]
    NoMemTotal(i64),
    /// More pages than the guest's memory holds: no pool it ever had.
    #[error(
        "cmm_pages {pages} is more than the guest's memory holds ({most} pages of 4 KiB in MemTotal {total_kib} kB)"
    )]
    PoolTooLarge {
        pages: i64,
        most: i64,
        total_kib: i64,
    },
}

impl NotRestorable {
    /// Which part of the start state this is about.
    pub fn part(&self) -> Part {
        match self {
            NotRestorable::RootUnopenable { .. } => Part::Root,
            NotRestorable::NoSuchCpu { .. } | NotRestorable::OnlineUnreadable(_) => Part::Online,
            NotRestorable::NegativePool(_)
            | NotRestorable::NoPool(_)
            | NotRestorable::PoolUnreadable(_)
            | NotRestorable::MeminfoUnreadable { .. }
            | NotRestorable::NoMemTotal(_)
            | NotRestorable::PoolTooLarge { .. } => Part::Pool,
        }
    }
}

/// Checks what a journal says (its root, its online CPUs and its pool,
/// read from `lines`) against the guest below `root`.
pub fn against_guest(
    root: &Path,
    journal_root: &str,
    online: &[u32],
    cmm_pages: Option<i64>,
    lines: &KeyLines,
) -> Result<(), LineRefusal> {
    same_root(root, journal_root, lines.root)?;
    restorable(root, online, cmm_pages).map_err(|why| {
        let line = match why.part() {
            Part::Root => lines.root,
            Part::Online => lines.online,
            Part::Pool => lines.cmm_pages,
        };
        (line, BadLine::NotRestorable(why))
    })
}

/// Whether a start state (its online CPUs and its pool) could be put back
/// on the guest below `root` by `plugtop restore`: the very check a
/// journal gets, so `plugtop run` and the armed screen refuse to act on a
/// state whose journal restore would refuse after a crash.
pub fn restorable(
    root: &Path,
    online: &[u32],
    cmm_pages: Option<i64>,
) -> Result<(), NotRestorable> {
    let beneath = Root::open(root).map_err(|reason| NotRestorable::RootUnopenable {
        root: root.to_path_buf(),
        reason,
    })?;
    cpus_exist(root, online)?;
    if let Some(pages) = cmm_pages {
        pool_fits(&beneath, pages)?;
    }
    Ok(())
}

/// The journal's root and `root` are the same directory, once links and
/// `..` are resolved: a journal copied from another guest is not this
/// guest's start state.
fn same_root(root: &Path, journal_root: &str, line: usize) -> Result<(), LineRefusal> {
    let here = std::fs::canonicalize(root);
    let there = std::fs::canonicalize(journal_root);
    match (here, there) {
        (Ok(here), Ok(there)) if here == there => Ok(()),
        (_, Err(reason)) => Err((
            line,
            BadLine::UnresolvableRoot {
                named: journal_root.to_string(),
                reason,
                here: root.to_path_buf(),
            },
        )),
        _ => Err((
            line,
            BadLine::OtherRoot {
                named: journal_root.to_string(),
                here: root.to_path_buf(),
            },
        )),
    }
}

/// Every listed CPU has a directory below the root, and an `online` file
/// that reads (a hotpluggable CPU) or none (a CPU that is always online).
/// The directory is listed once, so a list of 65,536 CPUs costs a sort and
/// as many look-ups, and the first missing CPU ends the check.
fn cpus_exist(root: &Path, online: &[u32]) -> Result<(), NotRestorable> {
    let cpus = CpuDir::new(root);
    let mut present = cpus.ids();
    present.sort_unstable();
    for &id in online {
        if present.binary_search(&id).is_err() {
            return Err(NotRestorable::NoSuchCpu {
                id,
                root: root.to_path_buf(),
            });
        }
        if cpus.online(id) == Online::Unreadable {
            return Err(NotRestorable::OnlineUnreadable(id));
        }
    }
    Ok(())
}

/// The guest has a pool, and `pages` is neither negative nor more than
/// its memory holds (`MemTotal` in 4 KiB pages): such a number is not a
/// pool this guest ever had.
fn pool_fits(beneath: &Root, pages: i64) -> Result<(), NotRestorable> {
    if pages < 0 {
        return Err(NotRestorable::NegativePool(pages));
    }
    match beneath.read(Path::new(paths::CMM_PAGES), CMM_LIMIT, Resolve::Beneath) {
        Ok(_) => {}
        Err(e) if e.is_not_found() => {
            return Err(NotRestorable::NoPool(pages));
        }
        Err(e) => return Err(NotRestorable::PoolUnreadable(Box::new(e))),
    }
    let meminfo = beneath
        .read(Path::new(paths::MEMINFO), MEMINFO_LIMIT, Resolve::Beneath)
        .map_err(|reason| NotRestorable::MeminfoUnreadable {
            pages,
            reason: Box::new(reason),
        })?;
    let Some(total_kib) = mem_total_kib(&meminfo) else {
        return Err(NotRestorable::NoMemTotal(pages));
    };
    let most = total_kib / PAGE_KIB;
    if pages > most {
        return Err(NotRestorable::PoolTooLarge {
            pages,
            most,
            total_kib,
        });
    }
    Ok(())
}

/// `MemTotal:  N kB` of /proc/meminfo, in KiB.
fn mem_total_kib(meminfo: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(meminfo).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_total_is_read_in_kib_and_garbage_is_none() {
        assert_eq!(
            mem_total_kib(b"MemFree: 1 kB\nMemTotal:    2097152 kB\n"),
            Some(2_097_152)
        );
        assert_eq!(mem_total_kib(b"MemTotal: lots kB\n"), None);
        assert_eq!(mem_total_kib(b"MemFree: 1 kB\n"), None);
        assert_eq!(mem_total_kib(&[0xff, 0xfe]), None);
    }
}
