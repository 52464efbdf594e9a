//! Writing edited rules (the what-if editor's, or a tune's picked point) to
//! a file the user names. They are loaded first the way cpuplugd would
//! load them, so only a file cpuplugd takes is written; the file is placed
//! as every file plugtop creates ([`crate::placed_file`]): created
//! exclusively, never through a link, and an existing file is replaced
//! only after the user said yes, and only if it is a regular file. Run by
//! the control thread, so a slow disk never stops the screen.

use std::path::{Path, PathBuf};

use super::edited::EditedRules;
use super::log_book::LogKind;
use super::modal::{Dialog, ReplaceFile};
use super::update::Update;
use crate::kernel::fs::{FsError, Replace};
use crate::rules::SystemFacts;

/// Writes `rules` to `path` (its directory made only if it is plugtop's
/// state directory, [`super::state_dir::place`]); `replace`
/// once the user said yes to replacing what is there. What the screen
/// shows and logs of it: done, a question (the file exists), or why not.
pub fn write(path: &Path, rules: &EditedRules, replace: bool, facts: &SystemFacts) -> Vec<Update> {
    let shown = path.display().to_string();
    if let Err(e) = crate::rules::load_source(rules.source(), facts) {
        return vec![Update::Show(Dialog::Message(format!(
            "the edited rules were not written to {shown}: cpuplugd would refuse them\n{}",
            crate::error_chain::text(&e)
        )))];
    }
    let how = if replace {
        Replace::RegularFile
    } else {
        Replace::Nothing
    };
    match super::state_dir::place(path, &rules.bytes, how) {
        Ok(()) => vec![
            Update::Note(LogKind::Note, format!("{} written to {shown}", rules.name)),
            Update::Show(Dialog::Written(shown)),
        ],
        Err(FsError::Exists { .. }) if !replace => {
            vec![Update::Show(Dialog::Replace(Box::new(ReplaceFile {
                path: path.to_path_buf(),
                rules: rules.clone(),
            })))]
        }
        Err(e) => Update::failed(format!(
            "cannot write the edited rules to {shown}: {}",
            crate::error_chain::text(&e)
        )),
    }
}

/// The path the write prompt offers: a new file in the state directory,
/// named after the local time `stamp` (`2025-11-25_144701`) and the file the
/// rules came from, so it says what it holds; `-2`, `-3`, … when `taken`
/// says a name is in use.
pub fn default_path(stamp: &str, from: &str, taken: impl Fn(&Path) -> bool) -> PathBuf {
    let base = Path::new(from.trim_end_matches(" (edited)"))
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| {
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
        .unwrap_or_else(|| "rules".into());
    super::state_dir::free_name(&format!("{base}-{stamp}"), ".conf", taken)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::SourceFile;

    fn facts() -> SystemFacts {
        SystemFacts::any_machine(4, "test")
    }

    fn edited(text: &str) -> EditedRules {
        let loaded = SourceFile::new(
            "p.conf",
            b"CPU_MIN=\"1\"\nCPU_MAX=\"4\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n".to_vec(),
        );
        EditedRules::new(
            &loaded,
            &SourceFile::new("p.conf (edited)", text.as_bytes().to_vec()),
        )
    }

    const GOOD: &str =
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nHOTPLUG=\"idle < 5\"\nHOTUNPLUG=\"0\"\n";

    fn written(updates: &[Update]) -> Option<&str> {
        updates.iter().find_map(|u| match u {
            Update::Show(Dialog::Written(p)) => Some(p.as_str()),
            _ => None,
        })
    }

    #[test]
    fn a_new_file_is_written_and_a_missing_directory_is_said_not_made() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("new/dir/edited.conf");
        let updates = write(&missing, &edited(GOOD), false, &facts());
        assert!(
            updates.iter().any(|u| matches!(u,
                Update::Show(Dialog::Message(m)) if m.contains("does not exist"))),
            "{updates:?}"
        );
        assert!(!dir.path().join("new").exists());
        let path = dir.path().join("edited.conf");
        let updates = write(&path, &edited(GOOD), false, &facts());
        assert!(written(&updates).is_some(), "{updates:?}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), GOOD);
        let (rules, _) = crate::rules::load_path(&path, &facts()).expect("cpuplugd loads it");
        assert!(rules.cpu_enabled);
    }

    #[test]
    fn an_existing_file_is_replaced_only_after_a_yes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plug.conf");
        std::fs::write(&path, "keep me\n").expect("write");
        let updates = write(&path, &edited(GOOD), false, &facts());
        match updates.as_slice() {
            [Update::Show(Dialog::Replace(r))] => {
                assert_eq!(r.path, path);
                assert_eq!(r.rules.bytes, GOOD.as_bytes());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "keep me\n");
        let updates = write(&path, &edited(GOOD), true, &facts());
        assert!(written(&updates).is_some(), "{updates:?}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), GOOD);
    }

    #[test]
    fn a_link_a_directory_or_a_fifo_is_never_written_through_even_after_a_yes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target");
        std::fs::write(&target, "keep\n").expect("target");
        std::os::unix::fs::symlink(&target, dir.path().join("link.conf")).expect("link");
        std::fs::create_dir(dir.path().join("dir.conf")).expect("dir");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join("fifo.conf"),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .expect("fifo");
        for name in ["link.conf", "dir.conf", "fifo.conf"] {
            for replace in [false, true] {
                let updates = write(&dir.path().join(name), &edited(GOOD), replace, &facts());
                assert!(written(&updates).is_none(), "{name}: {updates:?}");
                assert!(
                    updates.iter().any(|u| matches!(u,
                        Update::Show(Dialog::Message(m)) if m.contains("cannot write"))),
                    "{name} {replace}: {updates:?}"
                );
            }
        }
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep\n");
    }

    #[test]
    fn rules_cpuplugd_would_refuse_are_never_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bad.conf");
        let updates = write(&path, &edited("HOTPLUG=\"(\"\n"), false, &facts());
        assert!(
            matches!(updates.as_slice(), [Update::Show(Dialog::Message(m))] if m.contains("cpuplugd would refuse")),
            "{updates:?}"
        );
        assert!(!path.exists());
    }

    #[test]
    fn the_offered_name_says_what_it_holds_and_is_free() {
        let taken = |p: &Path| p.to_string_lossy().ends_with("plug-2025-01-02_030405.conf");
        let path = default_path("2025-01-02_030405", "/etc/plug.conf (edited)", taken);
        assert!(
            path.to_string_lossy()
                .ends_with("plug-2025-01-02_030405-2.conf"),
            "{path:?}"
        );
        // A name that would need escaping is not used.
        let odd = default_path("s", "x\u{1b}[2J.conf", |_| false);
        assert!(odd.to_string_lossy().ends_with("rules-s.conf"), "{odd:?}");
        let built_in = default_path("s", "built-in recommended-modern.conf", |_| false);
        assert!(
            built_in.to_string_lossy().ends_with("rules-s.conf"),
            "{built_in:?}"
        );
    }
}
