//! Where user variables are defined and used, found in the text as the
//! user wrote it (so a file cpuplugd refuses can still be navigated). A
//! line is read as cpuplugd reads it: `#` in the first column is a
//! comment, the name is before the first `=`, the value between the first
//! and the last `"`; a name that starts like a setting or rule (any case)
//! is that setting, anything else defines a variable.

use std::collections::HashSet;

use crate::rules::expr::RESERVED_NAMES;

/// The longest user variable name cpuplugd takes.
const MAX_NAME: usize = 128;

/// The predefined name a line's name sets, if any (matched by prefix,
/// ignoring case, as cpuplugd does).
pub fn predefined(name: &str) -> Option<&'static str> {
    crate::rules::Assigned::by_prefix(name.as_bytes()).map(crate::rules::Assigned::file_name)
}

/// One place a variable's name stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub name: String,
    /// Byte range in the text.
    pub start: usize,
    pub end: usize,
    pub definition: bool,
}

/// One line's parts, as byte ranges in the text.
pub struct LineParts {
    /// The name's text, trimmed (`None` for comments and lines without `=`).
    pub name: Option<(usize, usize)>,
    /// Inside the quotes.
    pub value: Option<(usize, usize)>,
}

/// Splits `text` into lines and their parts.
pub fn lines(text: &str) -> impl Iterator<Item = LineParts> + '_ {
    let mut start = 0;
    text.split_inclusive('\n').map(move |raw| {
        let here = start;
        start += raw.len();
        let body = raw.trim_end_matches(['\n', '\r']);
        let mut line = LineParts {
            name: None,
            value: None,
        };
        if body.starts_with('#') {
            return line;
        }
        if let Some(eq) = body.find('=') {
            let name = &body[..eq];
            let lead = name.len() - name.trim_start().len();
            line.name = Some((here + lead, here + name.trim_end().len().max(lead)));
            let rest = &body[eq + 1..];
            if let (Some(open), Some(close)) = (rest.find('"'), rest.rfind('"'))
                && open < close
            {
                line.value = Some((here + eq + 2 + open, here + eq + 1 + close));
            }
        }
        line
    })
}

/// Words in a value that can name a variable: runs of letters, digits and
/// `_` that are not a number, not a field after `.`, not a keyword prefix
/// before `.`, and not followed by a history index.
fn value_words(text: &str, from: usize, to: usize) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = from;
    while i < to {
        if !word(bytes[i]) {
            i += 1;
            continue;
        }
        let s = i;
        while i < to && word(bytes[i]) {
            i += 1;
        }
        let after_dot = s > from && bytes[s - 1] == b'.';
        let before_dot = i < to && bytes[i] == b'.';
        if !after_dot && !before_dot && !bytes[s].is_ascii_digit() {
            out.push((s, i));
        }
    }
    out
}

/// Every definition and use of a user variable in `text`. A use counts
/// only when some line defines that name.
pub fn occurrences(text: &str) -> Vec<Occurrence> {
    let mut defs = Vec::new();
    let mut words = Vec::new();
    for line in lines(text) {
        if let Some((s, e)) = line.name {
            let name = &text[s..e];
            if !name.is_empty() && predefined(name).is_none() && !name.contains(char::is_whitespace)
            {
                defs.push(Occurrence {
                    name: name.to_string(),
                    start: s,
                    end: e,
                    definition: true,
                });
            }
        }
        if let Some((s, e)) = line.value {
            words.extend(value_words(text, s, e));
        }
    }
    let defined: HashSet<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    let uses: Vec<Occurrence> = words
        .into_iter()
        .filter(|(s, e)| defined.contains(&text[*s..*e]))
        .map(|(s, e)| Occurrence {
            name: text[s..e].to_string(),
            start: s,
            end: e,
            definition: false,
        })
        .collect();
    let mut all = defs;
    all.extend(uses);
    all.sort_by_key(|o| o.start);
    all
}

/// The occurrence at byte `offset` (touching either end counts).
pub fn at(occurrences: &[Occurrence], offset: usize) -> Option<&Occurrence> {
    occurrences
        .iter()
        .find(|o| o.start <= offset && offset <= o.end)
}

/// Why `new` cannot name a user variable in a file whose variables are
/// `taken`, or `None` when it can.
pub fn refuse_name(new: &str, taken: &HashSet<&str>) -> Option<String> {
    if new.is_empty() || new.len() > MAX_NAME {
        return Some(format!("a name has 1 to {MAX_NAME} characters"));
    }
    if !new.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Some("a name has only letters, digits and `_`".into());
    }
    if new.as_bytes()[0].is_ascii_digit() {
        return Some("cpuplugd reads a name that starts with a digit as a number".into());
    }
    if let Some(p) = predefined(new) {
        return Some(format!(
            "cpuplugd matches `{p}` by prefix, in any case: `{new}=` would set {p}"
        ));
    }
    let lower = new.to_string();
    if RESERVED_NAMES
        .iter()
        .any(|r| r.trim_end_matches('.') == lower)
    {
        return Some(format!(
            "`{new}` is a keyword of cpuplugd's (or hides `{new}.`)"
        ));
    }
    if taken.contains(new) {
        return Some(format!("a variable `{new}` is defined already"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_and_uses_are_found() {
        let text = "# c=\"x\"\nx = \"meminfo.x + 1x\"\nHOTPLUG=\"x > cpustat.idle[1]\"\ny=\"x\"\n";
        let found: Vec<(String, bool)> = occurrences(text)
            .into_iter()
            .map(|o| (text[o.start..o.end].to_string(), o.definition))
            .collect();
        assert_eq!(
            found,
            [
                ("x".to_string(), true),
                ("x".to_string(), false),
                ("y".to_string(), true),
                ("x".to_string(), false)
            ]
        );
    }

    #[test]
    fn names_cpuplugd_would_misread_are_refused() {
        let taken: HashSet<&str> = ["a"].into_iter().collect();
        for bad in [
            "",
            "a",
            "1x",
            "hotplug_rate",
            "Cpu_Max2",
            "meminfo",
            "idle",
            "a-b",
        ] {
            assert!(refuse_name(bad, &taken).is_some(), "{bad}");
        }
        assert!(refuse_name("idle_rate", &taken).is_none());
    }
}

/// Whether `offset` lies on a comment line: cpuplugd reads a `#` as a
/// comment only in the very first column (docs/semantics.md §1).
pub fn in_comment(text: &str, offset: usize) -> bool {
    let offset = (0..=offset.min(text.len()))
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..].starts_with('#')
}

#[cfg(test)]
mod comment_tests {
    #[test]
    fn only_a_hash_in_the_first_column_makes_a_comment() {
        let text = "# HOTPLUG idle\n  # x=\"1\"\nHOTPLUG=\"idle > 1\" # tail\n";
        assert!(super::in_comment(text, 3));
        assert!(!super::in_comment(text, 17), "indented: a definition");
        assert!(!super::in_comment(text, 30));
        assert!(!super::in_comment(text, 10_000));
    }
}
