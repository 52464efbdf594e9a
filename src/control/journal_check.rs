//! A journal checked against the guest it would be restored on, before
//! anything is written from it: a journal is data from a disk that may be
//! damaged, or from someone who may not be trusted, and `plugtop restore`
//! runs as root. A journal passes only when it names this root, lists CPUs
//! that exist here and can be put online (or are online anyway), and a
//! pool this guest has and could hold.

use std::path::Path;

use crate::kernel::beneath::Beneath;
use crate::kernel::cpu_choice::Online;
use crate::kernel::cpu_dir::CpuDir;
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
pub type LineRefusal = (usize, String);

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
    restorable(root, online, cmm_pages).map_err(|(part, what)| {
        let line = match part {
            Part::Root => lines.root,
            Part::Online => lines.online,
            Part::Pool => lines.cmm_pages,
        };
        (line, what)
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
) -> Result<(), (Part, String)> {
    let beneath = Beneath::open(root).map_err(|e| {
        (
            Part::Root,
            format!("cannot open the root {}: {e}", root.display()),
        )
    })?;
    cpus_exist(root, online).map_err(|what| (Part::Online, what))?;
    if let Some(pages) = cmm_pages {
        pool_fits(&beneath, pages).map_err(|what| (Part::Pool, what))?;
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
        (_, Err(e)) => Err((
            line,
            format!(
                "the journal is for the root {:?}, which cannot be resolved ({e}), not {}",
                journal_root,
                root.display()
            ),
        )),
        _ => Err((
            line,
            format!(
                "the journal is for the root {:?}, not {}",
                journal_root,
                root.display()
            ),
        )),
    }
}

/// Every listed CPU has a directory below the root, and an `online` file
/// that reads (a hotpluggable CPU) or none (a CPU that is always online).
/// The directory is listed once, so a list of 65,536 CPUs costs a sort and
/// as many look-ups, and the first missing CPU ends the check.
fn cpus_exist(root: &Path, online: &[u32]) -> Result<(), String> {
    let cpus = CpuDir::new(root);
    let mut present = cpus.ids();
    present.sort_unstable();
    for &id in online {
        if present.binary_search(&id).is_err() {
            return Err(format!(
                "cpu{id} does not exist below {}/{}",
                root.display(),
                paths::CPU_DIR
            ));
        }
        if cpus.online(id) == Online::Unreadable {
            return Err(format!(
                "cpu{id}'s online file cannot be read, so it cannot be put back"
            ));
        }
    }
    Ok(())
}

/// The guest has a pool, and `pages` is neither negative nor more than
/// its memory holds (`MemTotal` in 4 KiB pages): such a number is not a
/// pool this guest ever had.
fn pool_fits(beneath: &Beneath, pages: i64) -> Result<(), String> {
    if pages < 0 {
        return Err(format!(
            "cmm_pages {pages} is negative: no pool has fewer than 0 pages"
        ));
    }
    match beneath.read_small(Path::new(paths::CMM_PAGES), CMM_LIMIT) {
        Ok(_) => {}
        Err(e) if e.is_not_found() => {
            return Err(format!(
                "cmm_pages {pages} is given, but the guest has no {}",
                paths::CMM_PAGES
            ));
        }
        Err(e) => return Err(format!("cmm_pages cannot be put back: {e}")),
    }
    let meminfo = beneath
        .read_small(Path::new(paths::MEMINFO), MEMINFO_LIMIT)
        .map_err(|e| format!("cannot check cmm_pages {pages}: {e}"))?;
    let Some(total_kib) = mem_total_kib(&meminfo) else {
        return Err(format!(
            "cannot check cmm_pages {pages}: no MemTotal in {}",
            paths::MEMINFO
        ));
    };
    let most = total_kib / PAGE_KIB;
    if pages > most {
        return Err(format!(
            "cmm_pages {pages} is more than the guest's memory holds ({most} pages of 4 KiB in MemTotal {total_kib} kB)"
        ));
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
