//! The restore journal: the guest's state before plugtop's first write,
//! fsynced to disk, so `plugtop restore` can put the guest back after a
//! `kill -9` or a crash. Removed after a clean restore.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::kernel::actuator::{ActError, Actuator};
use crate::kernel::beneath::Beneath;
use crate::kernel::cpulist::CpuList;
use crate::kernel::recording::export::ranges;

/// What the guest looked like when plugtop started acting on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartState {
    /// The plugtop process that wrote the journal.
    pub pid: u32,
    /// The root it acted on.
    pub root: String,
    /// CPUs online at start.
    pub online: Vec<u32>,
    /// `cmm_pages` at start, if the guest has it.
    pub cmm_pages: Option<i64>,
}

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Beneath(#[from] crate::kernel::beneath::BeneathError),
    #[error("{path} line {line}: {what}")]
    Malformed {
        path: String,
        line: usize,
        what: String,
    },
}

/// The journal's default place below a root: `ROOT/run/plugtop/state`.
pub fn default_path(root: &Path) -> PathBuf {
    root.join("run/plugtop/state")
}

impl StartState {
    fn text(&self) -> String {
        let list = CpuList {
            count: i32::try_from(self.online.len()).unwrap_or(i32::MAX),
            ids: self.online.clone(),
        };
        let pool = self.cmm_pages.map_or("none".to_string(), |p| p.to_string());
        format!(
            "plugtop-state 1\npid {}\nroot {}\nonline {}\ncmm_pages {pool}\n",
            self.pid,
            self.root,
            ranges(&list)
        )
    }
}

/// Writes the journal durably: a new temporary file (created exclusively,
/// never through a link), fsync, rename, fsync of the directory. A journal
/// below `root` is written beneath it, resolved as in a chroot.
pub fn write(root: &Path, path: &Path, state: &StartState) -> Result<(), JournalError> {
    let io = |source| JournalError::Io {
        path: path.display().to_string(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    // Confined beneath the root when the journal lies there, else beneath
    // its own directory (an explicit --state elsewhere).
    let (base, rel) = match path.strip_prefix(root) {
        Ok(rel) => (root, rel),
        Err(_) => {
            fs::create_dir_all(dir).map_err(io)?;
            (dir, Path::new(path.file_name().unwrap_or_default()))
        }
    };
    let beneath = Beneath::open(base).map_err(io)?;
    let rel_tmp = rel.with_extension("tmp");
    beneath.create_dirs(rel.parent().unwrap_or(Path::new("")))?;
    // A leftover (or planted) temporary file is removed, not followed.
    beneath.remove(&rel_tmp)?;
    let mut f = beneath.create_new(&rel_tmp)?;
    f.write_all(state.text().as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    beneath.rename(&rel_tmp, rel)?;
    beneath.sync_dir(rel.parent().unwrap_or(Path::new("")))?;
    Ok(())
}

/// The most a journal may hold; a longer file is not one plugtop wrote.
const JOURNAL_LIMIT: u64 = 1 << 20;

/// A journal's bytes, read where [`write`] puts it: beneath `root` (as in
/// a chroot) when it lies there by name, else by its path; never blocking
/// on a FIFO, never cut short. `None` when there is none.
fn read_bytes(root: &Path, path: &Path) -> Result<Option<Vec<u8>>, JournalError> {
    if let Ok(b) = Beneath::open(root)
        && let Some(rel) = b.relative(path)
    {
        return match b.read_small(rel, JOURNAL_LIMIT) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.into()),
        };
    }
    let too_long = |bytes: &Vec<u8>| bytes.len() as u64 > JOURNAL_LIMIT;
    match crate::kernel::regular::read_small(path, JOURNAL_LIMIT + 1) {
        Ok(bytes) if !too_long(&bytes) => Ok(Some(bytes)),
        Ok(_) => Err(JournalError::Io {
            path: path.display().to_string(),
            source: std::io::Error::other(format!(
                "more than {JOURNAL_LIMIT} bytes; not a journal plugtop wrote"
            )),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(JournalError::Io {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Reads the journal at `path` (of the guest below `root`); `None` when
/// there is none.
pub fn read(root: &Path, path: &Path) -> Result<Option<StartState>, JournalError> {
    let shown = path.display().to_string();
    let Some(bytes) = read_bytes(root, path)? else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|e| JournalError::Io {
        path: shown.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })?;
    let bad = |line: usize, what: &str| JournalError::Malformed {
        path: shown.clone(),
        line,
        what: what.to_string(),
    };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, "plugtop-state 1")) => {}
        _ => return Err(bad(1, "not a plugtop state journal (version 1)")),
    }
    let mut state = StartState {
        pid: 0,
        root: String::new(),
        online: Vec::new(),
        cmm_pages: None,
    };
    for (i, line) in lines {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "pid" => {
                state.pid = value
                    .parse()
                    .map_err(|_| bad(i + 1, "pid is not a number"))?
            }
            "root" => state.root = value.to_string(),
            "online" => {
                state.online = CpuList::parse(value.as_bytes())
                    .ok_or_else(|| bad(i + 1, "malformed CPU list"))?
                    .ids
            }
            "cmm_pages" => {
                state.cmm_pages = match value {
                    "none" => None,
                    v => Some(
                        v.parse()
                            .map_err(|_| bad(i + 1, "cmm_pages is not a number"))?,
                    ),
                }
            }
            _ => {}
        }
    }
    Ok(Some(state))
}

/// Why a start state cannot be journaled exactly (and so must not be acted
/// on): a damaged online list, or a pool at the end of the long range
/// (where the reading may have been cut).
pub fn inexact(online: &CpuList, cmm_pages: Option<i64>) -> Option<String> {
    if !online.exact() {
        return Some(format!(
            "the online CPU list cannot be read exactly (it counts {}, and lists {} CPUs); plugtop will not change a guest it could not put back",
            online.count,
            online.ids.len()
        ));
    }
    match cmm_pages {
        Some(p) if p == i64::MAX || p == i64::MIN => Some(format!(
            "cmm_pages reads {p}, the end of the range plugtop can store; it will not change a guest it could not put back exactly"
        )),
        _ => None,
    }
}

/// Removes the journal after a clean restore (beneath `root` when it lies
/// there, so a linked directory cannot make it remove a file elsewhere).
pub fn remove(root: &Path, path: &Path) -> Result<(), JournalError> {
    if let Ok(b) = Beneath::open(root)
        && let Some(rel) = b.relative(path)
    {
        return Ok(b.remove(rel)?);
    }
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(JournalError::Io {
            path: path.display().to_string(),
            source: e,
        }),
        _ => Ok(()),
    }
}

pub use crate::kernel::machine::pid_alive;

/// Puts the CPUs and the pool back as `state` says. Failures on single
/// CPUs are collected; the pool is restored even if some CPU was not.
pub fn restore(
    actuator: &mut dyn Actuator,
    state: &StartState,
    failures: &mut Vec<String>,
) -> Result<(), ActError> {
    // An empty list would take every CPU offline: never what a guest was.
    if state.online.is_empty() {
        return Err(ActError::NoCpu(
            "restored",
            "the journal lists no online CPU; refusing to take every CPU offline".into(),
        ));
    }
    actuator.set_online(&state.online, failures)?;
    if let Some(pages) = state.cmm_pages {
        actuator.set_pool(pages)?;
    }
    Ok(())
}
