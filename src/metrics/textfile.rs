//! `plugtop run --metrics-textfile FILE`: the exposition written for
//! node_exporter's textfile collector atomically (a new file beside it
//! under an unpredictable name, created exclusively, then a rename), so the
//! collector never reads half. plugtop runs as root, so it never replaces
//! or removes a file it did not write: at start-up FILE must be absent or
//! an earlier run's textfile (it starts with [`HEADER`] and every line
//! after is one of plugtop's families, [`is_plugtop_textfile`]) — a rule
//! file, `/etc/passwd` or any other file named by mistake is refused with
//! nothing written, as is a link, a FIFO, a device (`/dev/null`) or a
//! directory. After that, FILE is replaced only while it is still the file
//! plugtop last placed there (its device and inode, [`Replace::Own`]) or
//! absent, and a clean stop removes it only then.
//!
//! Two plugtops never share the file (two guests' metrics would alternate
//! in it, and one's clean stop would remove it under the other): the file
//! at the name is locked (`flock`) for as long as the plugtop that placed
//! it runs — each new file before it is renamed into place — so a second
//! plugtop given the same path is refused at its start, naming the pid
//! that holds it. The kernel drops the lock with its holder however that
//! ends (`kill -9` included), so the file of a plugtop that is gone is
//! taken over, and a reused pid holds nothing.
//!
//! It is rewritten only when something in it changed: the lines that move
//! at every reading (the reading count, its time, how long it took) alone
//! rewrite it at most every [`HEARTBEAT`] seconds, so a guest that stays
//! put costs a write a minute, and a reader still sees a stopped plugtop
//! by its time stamp. A clean stop removes it: stale values are never
//! left behind to look like a live guest.

use std::ffi::OsString;
use std::fs::{File, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::kernel::fs::{FileStamp, FsError, PastLimit, Placing, Replace, Resolve, Root};

/// Seconds (of the readings' clock) after which the textfile is written
/// although only the per-reading lines changed.
pub const HEARTBEAT: f64 = 60.0;

/// The first line of every textfile plugtop writes (a comment, which the
/// text format's readers skip): how an earlier run's textfile is told
/// from a file plugtop must not replace.
pub const HEADER: &str =
    "# plugtop run --metrics-textfile: written by plugtop, removed at a clean stop";

/// An earlier textfile longer than this is not plugtop's (its own are a
/// few KiB: a rule file's rules and variables, bounded label values).
const MAX_EARLIER: u64 = 4 << 20;

/// The lines that change at every reading.
const MOVING: [&str; 3] = [
    "plugtop_readings_total ",
    "plugtop_last_interval_timestamp_seconds ",
    "plugtop_interval_duration_seconds ",
];

/// The textfile: its directory held open from start-up on, its name, what
/// was last written there and when, and which file plugtop may replace.
#[derive(Debug)]
pub struct Textfile {
    dir: Root,
    name: OsString,
    path: PathBuf,
    last: String,
    written_at: Option<f64>,
    /// The file plugtop placed last (or an earlier run's textfile found at
    /// the start): the only file at the name it replaces or removes.
    own: Option<FileStamp>,
    /// That file, open and locked, so a second plugtop is refused it.
    lock: Option<File>,
}

/// Whether `a` and `b` differ in more than the lines that move at every
/// reading (compared line by line, allocating nothing).
fn differs(a: &str, b: &str) -> bool {
    let steady = |l: &&str| !MOVING.iter().any(|m| l.starts_with(m));
    !a.lines().filter(steady).eq(b.lines().filter(steady))
}

/// Whether `bytes` is a textfile plugtop wrote: [`HEADER`] first, then
/// only lines of plugtop's own families ([`is_plugtop_line`]), each line
/// ended.
pub fn is_plugtop_textfile(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let Some(body) = text
        .strip_prefix(HEADER)
        .and_then(|rest| rest.strip_prefix('\n'))
    else {
        return false;
    };
    body.is_empty() || (body.ends_with('\n') && body.lines().all(is_plugtop_line))
}

/// Whether `line` is one plugtop writes for one of its families
/// ([`crate::metrics::FAMILIES`], not any name that starts with
/// `plugtop_`): `# HELP NAME …`, `# TYPE NAME …`, or a sample `NAME VALUE`
/// or `NAME{LABELS} VALUE` (no time stamp, nothing after the value).
fn is_plugtop_line(line: &str) -> bool {
    use crate::metrics::is_plugtop_family;
    if let Some(comment) = line
        .strip_prefix("# HELP ")
        .or_else(|| line.strip_prefix("# TYPE "))
    {
        return comment
            .split_once(' ')
            .is_some_and(|(name, _)| is_plugtop_family(name));
    }
    let Some((series, value)) = line.rsplit_once(' ') else {
        return false;
    };
    let name = match series.split_once('{') {
        Some((name, labels)) if labels.ends_with('}') => name,
        Some(_) => return false,
        None => series,
    };
    is_plugtop_family(name) && value.parse::<f64>().is_ok()
}

impl Textfile {
    /// Opens FILE's directory and checks that FILE is absent or an earlier
    /// run's textfile, so a bad path refuses the start instead of failing
    /// every interval. Nothing is written.
    pub fn open(path: &Path) -> Result<Textfile, FsError> {
        let (dir, name) = Root::of_file(path)?;
        let rel = Path::new(&name);
        dir.check(rel, Replace::RegularFile)?;
        let (own, lock) = match dir.regular_id(rel) {
            None => (None, None),
            Some(_) => {
                let (own, lock) = earlier_textfile(&dir, rel)?;
                (Some(own), Some(lock))
            }
        };
        Ok(Textfile {
            dir,
            name,
            path: path.to_path_buf(),
            last: String::new(),
            written_at: None,
            own,
            lock,
        })
    }

    /// The path as given, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the textfile with [`HEADER`] and `text`, whole or not at
    /// all: over nothing, or over the file plugtop placed last. The new
    /// file is locked before it is placed, and its lock kept.
    pub fn write(&mut self, text: &str) -> Result<(), FsError> {
        let how = Placing {
            // Readable by node_exporter's own user whatever the umask
            // (0077 under a unit).
            mode: Some(0o644),
            ..Placing::new(self.own.map_or(Replace::Nothing, Replace::Own))
        };
        let placed = self
            .dir
            .write_streamed(Path::new(&self.name), how, |file, tmp| {
                file.try_lock()
                    .map_err(std::io::Error::from)
                    .and_then(|()| writeln!(file, "{HEADER}"))
                    .and_then(|()| file.write_all(text.as_bytes()))
                    .and_then(|()| Ok((FileStamp::of(file)?, file.try_clone()?)))
                    .map_err(|e| FsError::io(tmp, e))
            })?;
        let (own, lock) = placed;
        self.own = Some(own);
        // The file placed before is no longer at the name: its lock goes.
        self.lock = Some(lock);
        Ok(())
    }

    /// Writes `text` at a reading taken at `now` (seconds) when it differs
    /// from what was last written in more than the per-reading lines, or
    /// when the last write is [`HEARTBEAT`] old; whether it wrote. A
    /// failed write is tried again at the next reading.
    pub fn update(&mut self, text: &str, now: f64) -> Result<bool, FsError> {
        let due = self
            .written_at
            .is_none_or(|at| now - at >= HEARTBEAT || now < at);
        if !due && !differs(&self.last, text) {
            return Ok(false);
        }
        self.write(text)?;
        self.last.clear();
        self.last.push_str(text);
        self.written_at = Some(now);
        Ok(true)
    }

    /// Removes the textfile (a clean stop) when it is still the file
    /// plugtop placed last; anything else there is left alone.
    pub fn remove(&self) -> Result<(), FsError> {
        match self.own {
            Some(own) => self.dir.remove_own(Path::new(&self.name), own),
            None => Ok(()),
        }
    }
}

/// The file at `rel` when it is an earlier run's textfile whose plugtop is
/// gone (its device and inode, read from the file opened, never through a
/// link, and the file locked); anything else is refused, as is the file of
/// a plugtop that still runs (it holds the lock).
fn earlier_textfile(dir: &Root, rel: &Path) -> Result<(FileStamp, File), FsError> {
    let file = dir.open_regular(rel, Resolve::Own)?;
    let io = |e| FsError::io(&dir.path().join(rel), e);
    let id = FileStamp::of(&file).map_err(io)?;
    // Why it is not one, when it is not: said as it is, so the refusal
    // names what to look at.
    let why = match crate::kernel::fs::read_bounded(&file, MAX_EARLIER, PastLimit::Fail) {
        Err(_) => Some(
            "exists and is not a metrics textfile plugtop wrote (it is larger than 4 MiB or cannot be read)",
        ),
        Ok(bytes) if is_plugtop_textfile(&bytes) => None,
        Ok(bytes) if bytes.starts_with(format!("{HEADER}\n").as_bytes()) => Some(
            "exists and is not a metrics textfile plugtop wrote (a line after plugtop's header is not one of its metrics)",
        ),
        Ok(_) => Some(
            "exists and is not a metrics textfile plugtop wrote (its first line is not plugtop's header)",
        ),
    };
    if let Some(why) = why {
        return Err(FsError::NotOurs {
            path: dir.path().join(rel).display().to_string(),
            why,
        });
    }
    // A running plugtop places a new file (locked first) every interval
    // and the one looked up may be gone, its lock with it, by the time the
    // lock table is read: the file at the name is looked up again a few
    // times before the refusal goes without a pid.
    let in_use = || {
        let holder = (0..8).find_map(|_| crate::kernel::processes::flock_holder_of(dir, rel, None));
        let plugtop = holder.as_ref().is_none_or(|(_, name)| {
            name.as_deref()
                .is_none_or(|n| matches!(n, "plugtop" | "plugtop-run"))
        });
        FsError::InUse {
            path: dir.path().join(rel).display().to_string(),
            who: if plugtop {
                "written by another plugtop now"
            } else {
                "locked by another program"
            },
            holder: crate::kernel::processes::holder_words(holder),
        }
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Err(in_use()),
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    // Locked, but replaced since it was opened: a plugtop that runs placed
    // a new file (and holds its lock).
    if dir.regular_stamp(rel) != Some(id) {
        return Err(in_use());
    }
    Ok((id, file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_whole_and_no_temp_file_stays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        let mut textfile = Textfile::open(&path).expect("open");
        assert!(textfile.write("a 1\n").is_ok());
        assert!(textfile.write("a 2\n").is_ok());
        assert_eq!(
            std::fs::read_to_string(&path).ok(),
            Some(format!("{HEADER}\na 2\n"))
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(Textfile::open(&dir.path().join("missing/x.prom")).is_err());
        // Readable by node_exporter's user whatever the umask (the unit's
        // is 0077): the temporary file is made 0644 before it is placed.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| {
            std::fs::metadata(p)
                .map(|m| m.permissions().mode() & 0o777)
                .ok()
        };
        assert_eq!(mode(&path), Some(0o644));
        // The mode is set, not left to the umask (0022 here would give 0644
        // too): another mode shows it.
        let (dir_handle, name) = Root::of_file(&path).expect("dir");
        assert!(
            dir_handle
                .write_file(
                    Path::new(&name),
                    b"b 1\n",
                    Placing {
                        mode: Some(0o640),
                        ..Placing::REPLACE
                    },
                )
                .is_ok()
        );
        assert_eq!(mode(&path), Some(0o640));
    }

    #[test]
    fn only_a_change_or_the_heartbeat_rewrites_and_a_clean_stop_removes_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        let mut textfile = Textfile::open(&path).expect("open");
        let text = |readings: u32, pool: u32| {
            format!("plugtop_readings_total {readings}\nplugtop_cmm_pages {pool}\n")
        };
        let written =
            |readings: u32, pool: u32| Some(format!("{HEADER}\n{}", text(readings, pool)));
        assert_eq!(textfile.update(&text(1, 0), 100.0).ok(), Some(true));
        // Only the reading count moved: not written again.
        assert_eq!(textfile.update(&text(2, 0), 101.0).ok(), Some(false));
        assert_eq!(
            std::fs::read_to_string(&path).ok(),
            written(1, 0),
            "the first text stays"
        );
        // A value changed: written at once.
        assert_eq!(textfile.update(&text(3, 5), 102.0).ok(), Some(true));
        assert_eq!(textfile.update(&text(40, 5), 161.0).ok(), Some(false));
        // A minute after the last write: written although nothing else moved.
        assert_eq!(textfile.update(&text(41, 5), 162.0).ok(), Some(true));
        assert_eq!(std::fs::read_to_string(&path).ok(), written(41, 5));
        // A clock that went back never holds the file back.
        assert_eq!(textfile.update(&text(42, 5), 10.0).ok(), Some(true));
        assert!(textfile.remove().is_ok());
        assert!(!path.exists());
        assert!(textfile.remove().is_ok(), "nothing there is no error");
        // A link planted at the name is left alone, never followed.
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep\n").expect("victim");
        std::os::unix::fs::symlink(&victim, &path).expect("link");
        assert!(textfile.remove().is_ok());
        assert!(path.symlink_metadata().is_ok() && victim.exists());
    }

    #[test]
    fn a_textfile_that_became_a_link_after_the_start_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        let mut textfile = Textfile::open(&path).expect("open");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep\n").expect("victim");
        std::os::unix::fs::symlink(&victim, &path).expect("link");
        assert!(matches!(
            textfile.write("a 1\n"),
            Err(FsError::NotReplaceable { .. })
        ));
        assert_eq!(std::fs::read(&victim).expect("read"), b"keep\n");
        assert!(Textfile::open(&path).is_err());
    }

    #[test]
    fn only_an_earlier_textfile_is_replaced_and_only_its_own_file_is_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        // Anything but plugtop's own textfile at the path refuses the
        // start and stays as it was: a rule file, a password file, an
        // empty file, plugtop's families without its header, the header
        // followed by something else.
        let family = "# HELP plugtop_cpus_online CPUs.\nplugtop_cpus_online 2\n";
        for foreign in [
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\n".to_string(),
            "root:x:0:0:root:/root:/bin/bash\n".into(),
            String::new(),
            family.into(),
            format!("{HEADER}\n{family}root:x:0:0\n"),
            format!("{HEADER}x\n{family}"),
            format!("{HEADER}\n{}", "plugtop_x 1".repeat(1_000_000)),
        ] {
            std::fs::write(&path, &foreign).expect("a foreign file");
            match Textfile::open(&path) {
                Err(e @ FsError::NotOurs { .. }) => {
                    assert!(e.to_string().contains("plugtop.prom"), "{e}");
                }
                other => panic!("{:?}: {other:?}", &foreign[..foreign.len().min(40)]),
            }
            assert_eq!(std::fs::read_to_string(&path).ok(), Some(foreign));
        }
        // The refusal says which part is foreign (adv51: every refusal said
        // the header was missing).
        let reason = |text: &str| {
            std::fs::write(&path, text).expect("a foreign file");
            Textfile::open(&path)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(reason("root:x:0:0\n").contains("its first line is not plugtop's header"));
        assert!(
            reason(&format!("{HEADER}\nroot:x:0:0\n"))
                .contains("a line after plugtop's header is not one of its metrics")
        );
        // An earlier run's textfile (killed with SIGKILL) is taken over.
        std::fs::write(&path, format!("{HEADER}\n{family}")).expect("earlier");
        let mut textfile = Textfile::open(&path).expect("an earlier textfile");
        assert!(textfile.write("plugtop_cpus_online 3\n").is_ok());
        assert_eq!(
            std::fs::read_to_string(&path).ok(),
            Some(format!("{HEADER}\nplugtop_cpus_online 3\n"))
        );
        // A file put at the name since is neither replaced nor removed.
        std::fs::remove_file(&path).expect("remove");
        std::fs::write(&path, "mine\n").expect("a person's file");
        assert!(matches!(
            textfile.write("plugtop_cpus_online 4\n"),
            Err(FsError::NotOurs { .. })
        ));
        assert!(textfile.remove().is_ok());
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("mine\n")
        );
        // Nothing written yet: nothing is removed at the stop.
        let untouched = Textfile::open(&dir.path().join("other.prom")).expect("open");
        std::fs::write(dir.path().join("other.prom"), "x\n").expect("file");
        assert!(untouched.remove().is_ok());
        assert!(dir.path().join("other.prom").exists());
    }

    #[test]
    fn a_second_plugtop_is_refused_a_live_ones_file_and_takes_over_a_gone_ones() {
        // adv51: a second daemon given the same --metrics-textfile took
        // the first's live file for an earlier run's, and its clean stop
        // removed it under the first.
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        let me = format!("pid {}", std::process::id());
        let mut first = Textfile::open(&path).expect("first");
        assert!(first.write("plugtop_cpus_online 2\n").is_ok());
        let written = std::fs::read_to_string(&path).ok();
        // The lock is per open file: a second open in this process is a
        // second plugtop as far as the lock is concerned.
        match Textfile::open(&path) {
            Err(e @ FsError::InUse { .. }) => {
                let said = e.to_string();
                assert!(said.contains(&me), "{said}");
                // The holder here is this test program, not a plugtop: said
                // so (adv52: a program's flock was "another plugtop"). Two
                // plugtops: `metrics_failures` in the suite.
                assert!(said.contains("is locked by another program"), "{said}");
            }
            other => panic!("{other:?}"),
        }
        // The first's later files are locked too, and nothing was touched.
        assert!(first.write("plugtop_cpus_online 3\n").is_ok());
        assert!(matches!(Textfile::open(&path), Err(FsError::InUse { .. })));
        assert_ne!(std::fs::read_to_string(&path).ok(), written);
        // The first gone without a clean stop (kill -9: the kernel drops its
        // lock, its file stays): the next start takes the file over, and
        // holds it in turn from its start on, before it writes.
        drop(first);
        let mut second = Textfile::open(&path).expect("the writer is gone");
        assert!(matches!(Textfile::open(&path), Err(FsError::InUse { .. })));
        assert!(second.write("plugtop_cpus_online 4\n").is_ok());
        assert!(second.remove().is_ok());
        assert!(!path.exists());
    }

    #[test]
    fn only_lines_of_plugtops_own_families_make_an_earlier_textfile() {
        let with = |body: &str| is_plugtop_textfile(format!("{HEADER}\n{body}").as_bytes());
        for ours in [
            "# HELP plugtop_cpus_online CPUs online at the last reading.\n",
            "# TYPE plugtop_reloads_total counter\n",
            "plugtop_reloads_total{result=\"failure\"} 0\n",
            "plugtop_cmm_pool_bytes 0.0\n",
            "plugtop_rules_info{path=\"/etc/my rules.conf\",crc32=\"1a2b\"} 1\n",
            "plugtop_flap_period_seconds NaN\n",
        ] {
            assert!(with(ours), "{ours}");
        }
        // adv51: any line that merely started with `plugtop_` passed.
        for foreign in [
            "plugtop_evil{a=\"b\"} 1\n",
            "plugtop_x 1 # root:x:0:0\n",
            "plugtop_cpus_online 1 # root:x:0:0\n",
            "plugtop_cpus_online 1 2\n",
            "plugtop_cpus_online\n",
            "plugtop_cpus_online{a=\"b\" 1\n",
            "plugtop_cpus_onlinex 1\n",
            "# HELP plugtop_evil anything\n",
            "# TYPE plugtop_x gauge\n",
            "# HELP plugtop_cpus_online\n",
            "process_open_fds 9\n",
        ] {
            assert!(!with(foreign), "{foreign}");
        }
    }
}
