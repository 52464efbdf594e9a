//! Edited rules a user may keep: the what-if editor's edit (or a tune's
//! picked point) as the whole rule file it makes, with what changed
//! against the rules in force, so a confirmation can show exactly what
//! applying or writing it does.

use crate::report::line_diff::LineStep;
use crate::rules::SourceFile;

/// A rule file made by an edit, as plain data (the screen keeps it in a
/// question, the control thread loads or writes it).
#[derive(Debug, Clone, PartialEq)]
pub struct EditedRules {
    /// What it is called on screen and in the log ("plug.conf (edited)").
    pub name: String,
    /// The whole file, as cpuplugd would read it.
    pub bytes: Vec<u8>,
    /// What differs from the rules in force, line by line.
    pub diff: Vec<DiffLine>,
    /// Why a tune did not recommend it, for a point picked off its front
    /// that is not the recommendation: said before it is applied.
    pub caution: Option<String>,
}

/// One line of a diff: taken out, or put in, at a 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub added: bool,
    /// The line number in the file it comes from (the old file for a line
    /// taken out, the new one for a line put in).
    pub line: usize,
    pub text: String,
}

impl EditedRules {
    /// The edited file `edited`, with its differences from `loaded`.
    pub fn new(loaded: &SourceFile, edited: &SourceFile) -> Self {
        EditedRules {
            name: edited.name().to_string(),
            bytes: edited.bytes().to_vec(),
            diff: diff(loaded.bytes(), edited.bytes()),
            caution: None,
        }
    }

    /// The file, to load.
    pub fn source(&self) -> SourceFile {
        SourceFile::new(self.name.clone(), self.bytes.clone())
    }

    /// Whether it is the file in force, byte for byte.
    pub fn unchanged(&self) -> bool {
        self.diff.is_empty()
    }
}

/// The lines of `bytes`, without their line ends, lossily decoded.
fn lines(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == b'\n')
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect()
}

/// The lines that differ between `old` and `new`, matched by
/// [`crate::report::line_diff::steps`] (a change longer than its bound is
/// listed whole).
pub fn diff(old: &[u8], new: &[u8]) -> Vec<DiffLine> {
    if old == new {
        return Vec::new();
    }
    let (a, b) = (lines(old), lines(new));
    let mut out: Vec<DiffLine> = crate::report::line_diff::steps(&a, &b)
        .into_iter()
        .filter_map(|step| match step {
            LineStep::Same(..) => None,
            LineStep::Put(j) => Some(put(j, &b[j])),
            LineStep::Taken(i) => Some(taken(i, &a[i])),
        })
        .collect();
    // Within a run of changes, what went before what came.
    out.sort_by_key(|d| (d.line, d.added));
    out
}

fn taken(index: usize, text: &str) -> DiffLine {
    DiffLine {
        added: false,
        line: index + 1,
        text: text.to_string(),
    }
}

fn put(index: usize, text: &str) -> DiffLine {
    DiffLine {
        added: true,
        line: index + 1,
        text: text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(d: &[DiffLine]) -> Vec<String> {
        d.iter()
            .map(|l| format!("{}{} {}", if l.added { '+' } else { '-' }, l.line, l.text))
            .collect()
    }

    #[test]
    fn a_changed_line_is_taken_out_and_put_in_at_its_number() {
        let old = b"UPDATE=\"1\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\n";
        let new = b"UPDATE=\"1\"\nHOTPLUG=\"idle < 5\"\nHOTUNPLUG=\"idle > 50\"\n";
        assert_eq!(
            shown(&diff(old, new)),
            vec!["-2 HOTPLUG=\"idle < 10\"", "+2 HOTPLUG=\"idle < 5\""]
        );
        assert!(diff(old, old).is_empty());
    }

    #[test]
    fn appended_removed_and_moved_lines() {
        let old = b"A=\"1\"\nB=\"2\"\nC=\"3\"\n";
        let appended = b"A=\"1\"\nB=\"2\"\nC=\"3\"\nCMM_MAX=\"100\"\n";
        assert_eq!(shown(&diff(old, appended)), vec!["+4 CMM_MAX=\"100\""]);
        let removed = b"A=\"1\"\nC=\"3\"\n";
        assert_eq!(shown(&diff(old, removed)), vec!["-2 B=\"2\""]);
        // No end of line on the last line counts as a difference.
        let cut = b"A=\"1\"\nB=\"2\"\nC=\"3\"";
        assert_eq!(shown(&diff(old, cut)), vec!["-4 "]);
        let other = b"X=\"9\"\n";
        assert_eq!(
            shown(&diff(old, other)),
            vec!["-1 A=\"1\"", "+1 X=\"9\"", "-2 B=\"2\"", "-3 C=\"3\""]
        );
    }

    #[test]
    fn a_huge_change_is_listed_whole_without_matching() {
        let old: Vec<u8> = (0..3_000)
            .flat_map(|i| format!("a{i}\n").into_bytes())
            .collect();
        let new: Vec<u8> = (0..3_000)
            .flat_map(|i| format!("b{i}\n").into_bytes())
            .collect();
        let d = diff(&old, &new);
        assert_eq!(d.iter().filter(|l| l.added).count(), 3_000);
        assert_eq!(d.iter().filter(|l| !l.added).count(), 3_000);
    }

    #[test]
    fn edited_rules_know_whether_they_change_anything() {
        let loaded = SourceFile::new("p.conf", b"HOTPLUG=\"1\"\n".to_vec());
        let same = EditedRules::new(&loaded, &loaded);
        assert!(same.unchanged());
        let edited = SourceFile::new("p.conf (edited)", b"HOTPLUG=\"0\"\n".to_vec());
        let e = EditedRules::new(&loaded, &edited);
        assert!(!e.unchanged());
        assert_eq!(e.source().bytes(), edited.bytes());
        assert_eq!(e.name, "p.conf (edited)");
    }
}
