//! Two guests' rule files side by side as a line diff, when both are
//! readable on this machine: what makes the odd ones out odd.

use std::path::{Path, PathBuf};

/// The largest rule file read for a diff (cpuplugd's files are a few
/// hundred bytes; anything larger is not one).
pub const MAX_FILE: u64 = 256 * 1024;

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RulesDiffLine {
    Same(String),
    Removed(String),
    Added(String),
}

/// The directory of `instance` below `--rules-root`: `:` and every other
/// character but ASCII letters, digits, `.` and `-` written `_`, and a
/// name of dots only (`.`, `..`: the root itself or above it) all `_`.
fn instance_dir(instance: &str) -> String {
    let dir: String = instance
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if dir.chars().all(|c| c == '.') {
        "_".repeat(dir.len().max(1))
    } else {
        dir
    }
}

/// Where a guest's rule file is on this machine: `root/INSTANCE/PATH`
/// under the directory the user gathered them in, else the path as the
/// guest exported it. For saying where; [`read_guest_file`] is what reads
/// it (under a root only).
pub fn local_path(root: Option<&Path>, instance: &str, path: &str) -> PathBuf {
    match root {
        Some(root) => root
            .join(instance_dir(instance))
            .join(path.trim_start_matches('/')),
        None => PathBuf::from(path),
    }
}

/// A guest's rule file, bounded, from the path its label gives (untrusted:
/// any guest, or whoever writes to Prometheus, sets it), read only under
/// `root`, the directory the user gathered the guests' files in: there the
/// path is resolved as a process chrooted there would, so no `..` (in the
/// path or the instance) and no link planted in the root leads outside it.
/// Without a root nothing is read: a label naming `/etc/shadow` must not
/// show this machine's file on the screen. Only a regular file is read,
/// opened without blocking: a FIFO, a terminal or a device is refused at
/// once, not waited on (this runs on the screen's thread).
pub fn read_guest_file(root: Option<&Path>, instance: &str, path: &str) -> Result<String, String> {
    let Some(root) = root else {
        return Err(format!(
            "give --rules-root DIR (the guests' files as DIR/INSTANCE/PATH) to compare them; \
             {instance}'s {path}, a path from the metrics, is not read on this machine"
        ));
    };
    let shown = local_path(Some(root), instance, path);
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", shown.display());
    let dir =
        crate::kernel::fs::Root::open(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let rel = format!(
        "{}/{}",
        instance_dir(instance),
        path.trim_start_matches('/')
    );
    let resolve = crate::kernel::fs::Resolve::InRoot;
    let bytes = dir
        .open_regular(Path::new(&rel), resolve)
        .map_err(std::io::Error::from)
        .and_then(|f| {
            crate::kernel::fs::read_bounded(&f, MAX_FILE, crate::kernel::fs::PastLimit::Fail)
        })
        .map_err(|e| fail(&e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The lines of `a` and `b` as a diff: the common lines of
/// [`crate::report::line_diff::steps`], each change's removed lines before
/// its added ones.
pub fn diff(a: &str, b: &str) -> Vec<RulesDiffLine> {
    use crate::report::line_diff::{LineStep, steps};
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let mut out = Vec::new();
    let mut added = Vec::new();
    for step in steps(&a, &b) {
        match step {
            LineStep::Same(i, _) => {
                out.append(&mut added);
                out.push(RulesDiffLine::Same(a[i].to_string()));
            }
            LineStep::Taken(i) => out.push(RulesDiffLine::Removed(a[i].to_string())),
            LineStep::Put(j) => added.push(RulesDiffLine::Added(b[j].to_string())),
        }
    }
    out.append(&mut added);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_removed_and_added() {
        let d = diff("A=1\nB=2\nC=3\n", "A=1\nB=5\nC=3\n");
        assert_eq!(
            d,
            [
                RulesDiffLine::Same("A=1".into()),
                RulesDiffLine::Removed("B=2".into()),
                RulesDiffLine::Added("B=5".into()),
                RulesDiffLine::Same("C=3".into()),
            ]
        );
    }

    #[test]
    fn an_instance_becomes_one_directory() {
        let p = local_path(Some(Path::new("/r")), "10.0.0.1:9866", "/etc/cpuplugd.conf");
        assert_eq!(p, Path::new("/r/10.0.0.1_9866/etc/cpuplugd.conf"));
        let p = local_path(Some(Path::new("/r")), "..", "/etc/cpuplugd.conf");
        assert_eq!(p, Path::new("/r/__/etc/cpuplugd.conf"));
    }
}
