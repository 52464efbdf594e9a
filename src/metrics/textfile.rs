//! `plugtop run --metrics-textfile FILE`: the exposition written for
//! node_exporter's textfile collector each interval, atomically (a temp
//! file beside it, then a rename), so the collector never reads half.

use std::io::Write as _;
use std::path::Path;

/// Replaces `path` with `text`: written to `path.tmp.PID` in the same
/// directory, synced, then renamed over it.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the textfile path names no file"))?;
    let mut tmp_name = name.to_os_string();
    tmp_name.push(format!(".tmp.{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_whole_and_no_temp_file_stays() {
        let dir = std::env::temp_dir().join(format!("plugtop-textfile-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("plugtop.prom");
        assert!(write_atomic(&path, "a 1\n").is_ok());
        assert!(write_atomic(&path, "a 2\n").is_ok());
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("a 2\n")
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(write_atomic(&dir.join("missing/x.prom"), "a 1\n").is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
