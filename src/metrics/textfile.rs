//! `plugtop run --metrics-textfile FILE`: the exposition written for
//! node_exporter's textfile collector atomically (a new file beside it
//! under an unpredictable name, then a rename), so the collector never
//! reads half. plugtop runs as root: FILE is replaced only when it is a
//! regular file or absent — a link, a FIFO, a device (`/dev/null`) or a
//! directory there is refused, at start-up and at every interval, never
//! written through or replaced.
//!
//! It is rewritten only when something in it changed: the lines that move
//! at every reading (the reading count, its time, how long it took) alone
//! rewrite it at most every [`HEARTBEAT`] seconds, so a guest that stays
//! put costs a write a minute, and a reader still sees a stopped plugtop
//! by its time stamp. A clean stop removes it: stale values are never
//! left behind to look like a live guest.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::kernel::fs::{FsError, Placing, Replace, Root};

/// Seconds (of the readings' clock) after which the textfile is written
/// although only the per-reading lines changed.
pub const HEARTBEAT: f64 = 60.0;

/// The lines that change at every reading.
const MOVING: [&str; 3] = [
    "plugtop_readings_total ",
    "plugtop_last_interval_timestamp_seconds ",
    "plugtop_interval_duration_seconds ",
];

/// How the textfile is placed: readable by node_exporter's own user
/// whatever the umask (0077 under a unit).
const READABLE: Placing = Placing {
    mode: Some(0o644),
    ..Placing::REPLACE
};

/// The textfile: its directory held open from start-up on, its name, and
/// what was last written there and when.
#[derive(Debug)]
pub struct Textfile {
    dir: Root,
    name: OsString,
    path: PathBuf,
    last: String,
    written_at: Option<f64>,
}

/// Whether `a` and `b` differ in more than the lines that move at every
/// reading (compared line by line, allocating nothing).
fn differs(a: &str, b: &str) -> bool {
    let steady = |l: &&str| !MOVING.iter().any(|m| l.starts_with(m));
    !a.lines().filter(steady).eq(b.lines().filter(steady))
}

impl Textfile {
    /// Opens FILE's directory and checks that FILE is absent or a regular
    /// file, so a bad path refuses the start instead of failing every
    /// interval. Nothing is written.
    pub fn open(path: &Path) -> Result<Textfile, FsError> {
        let (dir, name) = Root::of_file(path)?;
        dir.check(Path::new(&name), Replace::RegularFile)?;
        Ok(Textfile {
            dir,
            name,
            path: path.to_path_buf(),
            last: String::new(),
            written_at: None,
        })
    }

    /// The path as given, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the textfile with `text`, whole or not at all.
    pub fn write(&self, text: &str) -> Result<(), FsError> {
        self.dir
            .write_file(Path::new(&self.name), text.as_bytes(), READABLE)
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

    /// Removes the textfile (a clean stop), when it is still a regular file.
    pub fn remove(&self) -> Result<(), FsError> {
        self.dir.remove_regular(Path::new(&self.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_whole_and_no_temp_file_stays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plugtop.prom");
        let textfile = Textfile::open(&path).expect("open");
        assert!(textfile.write("a 1\n").is_ok());
        assert!(textfile.write("a 2\n").is_ok());
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("a 2\n")
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
        assert_eq!(textfile.update(&text(1, 0), 100.0).ok(), Some(true));
        // Only the reading count moved: not written again.
        assert_eq!(textfile.update(&text(2, 0), 101.0).ok(), Some(false));
        assert_eq!(
            std::fs::read_to_string(&path).ok(),
            Some(text(1, 0)),
            "the first text stays"
        );
        // A value changed: written at once.
        assert_eq!(textfile.update(&text(3, 5), 102.0).ok(), Some(true));
        assert_eq!(textfile.update(&text(40, 5), 161.0).ok(), Some(false));
        // A minute after the last write: written although nothing else moved.
        assert_eq!(textfile.update(&text(41, 5), 162.0).ok(), Some(true));
        assert_eq!(std::fs::read_to_string(&path).ok(), Some(text(41, 5)));
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
        let textfile = Textfile::open(&path).expect("open");
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
}
