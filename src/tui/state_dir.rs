//! Where plugtop puts what a user asks it to keep (`e`'s log, edited
//! rules): the user's state directory, never wherever plugtop happened to
//! be started, under names a person can read.

use std::path::{Path, PathBuf};

use crate::kernel::fs::{FsError, Placing, Replace, Root};

/// The state directory (`$XDG_STATE_HOME/plugtop`, else
/// `~/.local/state/plugtop`); the current directory only when neither is
/// known.
pub fn state_dir() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        });
    match base {
        Some(b) => b.join("plugtop"),
        None => PathBuf::from("."),
    }
}

/// Now in local time, as a file name can hold it: `2025-11-25_144701`
/// (no colons, which some tools take for a host name).
pub fn local_stamp() -> String {
    chrono::Local::now().format("%Y-%m-%d_%H%M%S").to_string()
}

/// `stem` + `extension` in the state directory, or with `-2`, `-3`, … when
/// `taken` says the name is in use: two exports in one second get two
/// names. The file is still created exclusively, so a name taken between
/// the offer and the write is refused, never overwritten.
pub fn free_name(stem: &str, extension: &str, taken: impl Fn(&Path) -> bool) -> PathBuf {
    let dir = state_dir();
    let first = dir.join(format!("{stem}{extension}"));
    if !taken(&first) {
        return first;
    }
    (2..1000)
        .map(|n| dir.join(format!("{stem}-{n}{extension}")))
        .find(|p| !taken(p))
        .unwrap_or(first)
}

/// Places `bytes` at `path` as every file the user asks plugtop to keep is
/// placed (created exclusively, never through a link, replacing only a
/// regular file and only as `how` allows): in a directory that exists, or
/// in plugtop's own state directory, made when it is missing. A missing
/// directory anywhere else is said, never made: a mistyped path (a shell
/// line typed into the prompt) makes no directories.
pub fn place(path: &Path, bytes: &[u8], how: Replace) -> Result<(), FsError> {
    place_making(path, bytes, how, &state_dir())
}

/// [`place`], making the directory `own` only when it is missing.
fn place_making(path: &Path, bytes: &[u8], how: Replace, own: &Path) -> Result<(), FsError> {
    let name = path.file_name().ok_or_else(|| FsError::NoName {
        path: path.display().to_string(),
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.exists() {
        if dir != own {
            return Err(FsError::NoDir {
                path: dir.display().to_string(),
            });
        }
        std::fs::create_dir_all(&dir).map_err(|source| FsError::Dir {
            path: dir.display().to_string(),
            source,
        })?;
    }
    Root::dir(&dir)?.write_file(Path::new(name), bytes, Placing::new(how))
}

/// Whether something (a file, a directory, a link, even a dangling one)
/// already has the name `path`.
pub fn in_use(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The path `e` offers: a new file in the state directory named after the
/// local time `stamp` ([`local_stamp`]), `plugtop-log-2025-11-25_144701.txt`.
pub fn default_log_path(stamp: &str, taken: impl Fn(&Path) -> bool) -> PathBuf {
    free_name(&format!("plugtop-log-{stamp}"), ".txt", taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_is_made_only_when_it_is_plugtops_own() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let own = dir.path().join("state/plugtop");
        let mistyped = dir.path().join("log.txt; plugtop --sim examples/x.txt");
        match place_making(&mistyped, b"x", Replace::Nothing, &own) {
            Err(e @ FsError::NoDir { .. }) => assert_eq!(
                crate::error_chain::text(&e),
                format!(
                    "the directory {} does not exist; plugtop creates no directory there",
                    dir.path().join("log.txt; plugtop --sim examples").display()
                )
            ),
            other => panic!("{other:?}"),
        }
        assert!(!dir.path().join("log.txt; plugtop --sim examples").exists());
        let kept = own.join("log.txt");
        assert!(place_making(&kept, b"kept\n", Replace::Nothing, &own).is_ok());
        assert_eq!(std::fs::read(&kept).ok(), Some(b"kept\n".to_vec()));
    }

    #[test]
    fn the_log_is_named_after_the_local_time_and_a_taken_name_is_skipped() {
        let first = default_log_path("2025-11-25_144701", |_| false);
        assert!(
            first
                .to_string_lossy()
                .ends_with("/plugtop-log-2025-11-25_144701.txt"),
            "{first:?}"
        );
        let taken = |p: &Path| !p.to_string_lossy().ends_with("-3.txt");
        let third = default_log_path("2025-11-25_144701", taken);
        assert!(
            third
                .to_string_lossy()
                .ends_with("/plugtop-log-2025-11-25_144701-3.txt"),
            "{third:?}"
        );
    }

    #[test]
    fn the_local_stamp_is_a_readable_date_and_time() {
        let s = local_stamp();
        assert_eq!(s.len(), "2025-11-25_144701".len(), "{s}");
        assert!(
            s.chars().enumerate().all(|(i, c)| match i {
                4 | 7 => c == '-',
                10 => c == '_',
                _ => c.is_ascii_digit(),
            }),
            "{s}"
        );
    }

    #[test]
    fn a_dangling_link_is_a_name_in_use() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).expect("link");
        assert!(in_use(&link));
        assert!(!in_use(&dir.path().join("free")));
    }
}
