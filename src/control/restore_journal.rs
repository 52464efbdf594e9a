//! The restore journal: the guest's state before plugtop's first write,
//! fsynced to disk, so `plugtop restore` can put the guest back after a
//! `kill -9` or a crash. Removed after a clean restore.

use std::fs;
use std::path::{Path, PathBuf};

use super::journal_check::{BadLine, KeyLines, LineRefusal};
use crate::kernel::actuator::{ActError, Actuator};
use crate::kernel::cpulist::CpuList;
use crate::kernel::fs::{FsError, PastLimit, Placing, Resolve, Root, is_kernel_file, read_bounded};
use crate::kernel::recording::export::ranges;

/// What the guest looked like when plugtop started acting on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartState {
    /// The plugtop process that wrote the journal.
    pub pid: u32,
    /// When that process started (clock ticks after boot, field 22 of
    /// `/proc/PID/stat`), so a reused pid is not taken for it; `None` in a
    /// journal of version 1.
    pub started: Option<u64>,
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
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{path} line {line}")]
    Malformed {
        path: String,
        line: usize,
        #[source]
        what: BadLine,
    },
}

impl JournalError {
    /// The journal at `path` refused at a line.
    fn malformed(path: &Path, (line, what): LineRefusal) -> JournalError {
        JournalError::Malformed {
            path: path.display().to_string(),
            line,
            what,
        }
    }
}

/// The journal's default place below a root: `ROOT/run/plugtop/state`.
pub fn default_path(root: &Path) -> PathBuf {
    root.join("run/plugtop/state")
}

impl StartState {
    fn text(&self) -> String {
        let list = CpuList {
            count: i32::try_from(self.online.len()).unwrap_or(i32::MAX),
            ids: self.online.clone().into(),
        };
        let pool = self.cmm_pages.map_or("none".to_string(), |p| p.to_string());
        // Without a start time the journal is one of version 1.
        let (version, started) = match self.started {
            Some(t) => (2, format!("started {t}\n")),
            None => (1, String::new()),
        };
        format!(
            "plugtop-state {version}\npid {}\n{started}root {}\nonline {}\ncmm_pages {pool}\n",
            self.pid,
            self.root,
            ranges(&list)
        )
    }
}

/// Writes the journal durably, as every file plugtop creates
/// ([`Placing::durable`]): a new file under an unpredictable name,
/// created exclusively and never through a link, fsynced, renamed only
/// over a regular file or nothing (a link, a FIFO, a socket or a directory
/// at the journal's name is refused and kept), and the directory fsynced.
/// A journal below `root` is written beneath it, resolved as in a chroot.
pub fn write(root: &Path, path: &Path, state: &StartState) -> Result<(), JournalError> {
    let io = |source| FsError::io(path, source);
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
    let beneath = Root::open_for_own_files(base).map_err(io)?;
    beneath.write_file(rel, state.text().as_bytes(), Placing::durable())?;
    Ok(())
}

/// The most a journal may hold; a longer file is not one plugtop wrote.
const JOURNAL_LIMIT: u64 = 1 << 20;

/// A journal's bytes, read where [`write`] puts it: beneath `root` (as in
/// a chroot) when it lies there by name, else beneath its own directory;
/// a link at its name refused, never followed (plugtop writes it as a
/// regular file), never blocking on a FIFO, never a kernel file, never
/// cut short. `None` when there is none.
fn read_bytes(root: &Path, path: &Path) -> Result<Option<Vec<u8>>, JournalError> {
    let below = Root::open_for_own_files(root)
        .ok()
        .and_then(|b| Some((b.relative(path)?.to_path_buf(), b)));
    let (dir, rel) = match below {
        Some((rel, b)) => (b, rel),
        None => match Root::of_file(path) {
            Ok((dir, name)) => (dir, PathBuf::from(name)),
            Err(FsError::Dir { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        },
    };
    let read = dir.open_regular(&rel, Resolve::Own).and_then(|file| {
        if is_kernel_file(&file) {
            return Err(FsError::KernelFile {
                path: path.display().to_string(),
            });
        }
        read_bounded(&file, JOURNAL_LIMIT, PastLimit::Fail).map_err(|e| {
            let source = if e.kind() == std::io::ErrorKind::FileTooLarge {
                let why = format!("more than {JOURNAL_LIMIT} bytes; not a journal plugtop wrote");
                std::io::Error::new(e.kind(), why)
            } else {
                e
            };
            FsError::io(path, source)
        })
    });
    match read {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.is_not_found() => Ok(None),
        // Named by its whole path: the error names it inside the root.
        Err(e) => {
            Err(FsError::io(path, std::io::Error::other(crate::error_chain::text(&e))).into())
        }
    }
}

/// Reads the journal at `path` (of the guest below `root`) and checks its
/// form strictly: a known version, each key of that version exactly once
/// and nothing else, a non-empty exact CPU list, a pool that is `none` or
/// not negative. `None` when there is none. What is refused names the
/// line. Anything that writes from a journal uses [`read_checked`], which
/// also checks it against the guest.
pub fn read(root: &Path, path: &Path) -> Result<Option<StartState>, JournalError> {
    Ok(read_with_lines(root, path)?.map(|(state, _)| state))
}

/// Reads the journal as [`read`] does and checks it against the guest
/// below `root` ([`super::journal_check`]) before anything is written from
/// it: the root it names, its CPUs and its pool.
pub fn read_checked(root: &Path, path: &Path) -> Result<Option<StartState>, JournalError> {
    let Some((state, lines)) = read_with_lines(root, path)? else {
        return Ok(None);
    };
    let (online, pool) = (&state.online, state.cmm_pages);
    super::journal_check::against_guest(root, &state.root, online, pool, &lines)
        .map_err(|refusal| JournalError::malformed(path, refusal))?;
    Ok(Some(state))
}

fn read_with_lines(
    root: &Path,
    path: &Path,
) -> Result<Option<(StartState, KeyLines)>, JournalError> {
    let Some(bytes) = read_bytes(root, path)? else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + good.iter().filter(|b| **b == b'\n').count();
        JournalError::malformed(path, (line, BadLine::NotText))
    })?;
    parse(&text)
        .map(Some)
        .map_err(|refusal| JournalError::malformed(path, refusal))
}

/// The keys of each version, in the order plugtop writes them.
const KEYS_V1: [&str; 4] = ["pid", "root", "online", "cmm_pages"];
const KEYS_V2: [&str; 5] = ["pid", "started", "root", "online", "cmm_pages"];

fn parse(text: &str) -> Result<(StartState, KeyLines), LineRefusal> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let keys: &[&str] = match lines.next() {
        Some((_, "plugtop-state 1")) => &KEYS_V1,
        Some((_, "plugtop-state 2")) => &KEYS_V2,
        _ => {
            return Err((1, BadLine::NotAJournal));
        }
    };
    let mut values: Vec<Option<(usize, &str)>> = vec![None; keys.len()];
    for (n, line) in lines {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let Some(k) = keys.iter().position(|k| *k == key) else {
            return Err((n, BadLine::Unknown(shown(line))));
        };
        if let Some((first, _)) = values[k] {
            return Err((
                n,
                BadLine::Repeated {
                    key: keys[k],
                    first,
                },
            ));
        }
        values[k] = Some((n, value));
    }
    let last = text.lines().count();
    let get = |key: &'static str| -> Result<(usize, &str), LineRefusal> {
        keys.iter()
            .position(|k| *k == key)
            .and_then(|k| values[k])
            .ok_or((last + 1, BadLine::Missing(key)))
    };
    let (n, pid) = get("pid")?;
    let pid = match pid.parse::<u32>() {
        Ok(p) if p > 0 => p,
        _ => return Err((n, BadLine::NotAPid(shown(pid)))),
    };
    let started = match get("started") {
        Ok((n, v)) => Some(
            v.parse::<u64>()
                .map_err(|_| (n, BadLine::NotAStartTime(shown(v))))?,
        ),
        Err(e) if keys.contains(&"started") => return Err(e),
        Err(_) => None,
    };
    let (root_line, root) = get("root")?;
    if root.is_empty() {
        return Err((root_line, BadLine::EmptyRoot));
    }
    let (online_line, online) = get("online")?;
    let online = parse_online(online).map_err(|what| (online_line, what))?;
    let (pool_line, pool) = get("cmm_pages")?;
    let cmm_pages = match pool {
        "none" => None,
        v => match v.parse::<i64>() {
            Ok(p) if p >= 0 => Some(p),
            Ok(p) => return Err((pool_line, BadLine::NegativePool(p))),
            Err(_) => return Err((pool_line, BadLine::NotAPool(shown(v)))),
        },
    };
    let state = StartState {
        pid,
        started,
        root: root.to_string(),
        online,
        cmm_pages,
    };
    let lines = KeyLines {
        root: root_line,
        online: online_line,
        cmm_pages: pool_line,
    };
    Ok((state, lines))
}

/// At most 40 characters of a damaged value, for a message.
fn shown(value: &str) -> String {
    value.chars().take(40).collect()
}

/// The `online` list: non-empty (an empty one would take every CPU
/// offline), exact, ascending, below [`crate::kernel::cpulist::MAX_CPUS`].
/// Parsing is bounded whatever the ranges say.
fn parse_online(value: &str) -> Result<Vec<u32>, BadLine> {
    if value.trim().is_empty() {
        return Err(BadLine::EmptyOnline);
    }
    let list =
        CpuList::parse(value.as_bytes()).ok_or_else(|| BadLine::NotACpuList(shown(value)))?;
    if !list.exact() {
        return Err(BadLine::NotDistinctCpus(shown(value)));
    }
    Ok(list.ids.to_vec())
}

/// Why a start state cannot be journaled exactly (and so must not be acted
/// on): a damaged online list, or a pool at the end of the long range
/// (where the reading may have been cut).
pub fn inexact(online: &CpuList, cmm_pages: Option<i64>) -> Option<InexactStart> {
    if !online.exact() {
        return Some(InexactStart::OnlineList {
            count: online.count,
            listed: online.ids.len(),
        });
    }
    match cmm_pages {
        Some(p) if p == i64::MAX || p == i64::MIN => Some(InexactStart::PoolAtLimit(p)),
        _ => None,
    }
}

/// Why a start state cannot be read exactly enough to be put back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InexactStart {
    /// The online list's count and its CPUs disagree.
    #[error(
        "the online CPU list cannot be read exactly (it counts {count}, and lists {listed} CPUs); plugtop will not change a guest it could not put back"
    )]
    OnlineList { count: i32, listed: usize },
    /// `cmm_pages` reads an end of the range plugtop stores.
    #[error(
        "cmm_pages reads {0}, the end of the range plugtop can store; it will not change a guest it could not put back exactly"
    )]
    PoolAtLimit(i64),
}

/// Removes the journal after a clean restore (beneath `root` when it lies
/// there, so a linked directory cannot make it remove a file elsewhere).
pub fn remove(root: &Path, path: &Path) -> Result<(), JournalError> {
    if let Ok(b) = Root::open(root)
        && let Some(rel) = b.relative(path)
    {
        return Ok(b.remove(rel)?);
    }
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(FsError::io(path, e).into()),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The line and the text a journal is refused with.
    fn refusal(text: &str) -> (usize, String) {
        match parse(text) {
            Ok(_) => (0, "accepted".into()),
            Err((line, what)) => (line, what.to_string()),
        }
    }

    const GOOD: &str = "plugtop-state 2\npid 7\nstarted 9\nroot /r\nonline 0-1\ncmm_pages none\n";

    #[test]
    fn a_good_journal_parses() {
        let (state, lines) = parse(GOOD).expect("a good journal");
        assert_eq!(
            (state.pid, state.online, state.cmm_pages),
            (7, vec![0, 1], None)
        );
        assert_eq!((lines.root, lines.online, lines.cmm_pages), (4, 5, 6));
    }

    #[test]
    fn each_refusal_says_what_it_always_said_on_its_line() {
        let cases = [
            (
                "plugtop-state 3\n",
                1,
                "not a plugtop state journal (version 1 or 2)".to_string(),
            ),
            (
                "plugtop-state 2\nfoo bar\n",
                2,
                "unknown line \"foo bar\"".into(),
            ),
            (
                "plugtop-state 2\npid 1\npid 2\n",
                3,
                "pid given again (first on line 2)".into(),
            ),
            (
                "plugtop-state 2\nstarted 1\n",
                3,
                "the pid line is missing".into(),
            ),
            (
                "plugtop-state 2\npid x\n",
                2,
                "pid \"x\" is not a process id".into(),
            ),
            (
                "plugtop-state 2\npid 1\nstarted y\n",
                3,
                "started \"y\" is not a number".into(),
            ),
            (
                &GOOD.replace("root /r", "root "),
                4,
                "the root is empty".into(),
            ),
            (
                &GOOD.replace("online 0-1", "online "),
                5,
                "the online list is empty; refusing to take every CPU offline".into(),
            ),
            (
                &GOOD.replace("online 0-1", "online 1,0"),
                5,
                format!(
                    "online \"1,0\" is not a list of distinct CPUs below {} in order",
                    crate::kernel::cpulist::MAX_CPUS
                ),
            ),
            (
                &GOOD.replace("none", "-3"),
                6,
                "cmm_pages -3 is negative".into(),
            ),
            (
                &GOOD.replace("none", "lots"),
                6,
                "cmm_pages \"lots\" is neither a number nor none".into(),
            ),
        ];
        for (text, line, what) in cases {
            assert_eq!(refusal(text), (line, what), "{text:?}");
        }
    }

    #[test]
    fn a_damaged_value_is_quoted_at_most_40_characters_long() {
        let long = "x".repeat(100);
        let (_, what) = refusal(&format!("plugtop-state 2\npid {long}\n"));
        assert_eq!(
            what,
            format!("pid {:?} is not a process id", "x".repeat(40))
        );
    }
}
