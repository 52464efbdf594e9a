//! Where in a TOML file (a scenario, a course) a message points, and the
//! TOML reader's own errors as one bounded line with its place, in the
//! form of the checks of the values that follow (a scenario's
//! `FILE:LINE:COL: error: MESSAGE`). The reader's own
//! rendering quotes the whole source line under a caret row, so a 5 MB
//! line made a 10 MB message; here the message is cut ([`cut_to`]) and
//! made safe for a terminal, and the place is given as numbers.

use crate::safe_text::{cut_to, terminal_safe};

/// The most of a TOML reader's message kept (it may quote a key or value
/// of the file): every message about a file a person wrote fits whole.
pub const MESSAGE_MAX: usize = 400;

/// 1-based line and column (characters) of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// `FILE:LINE:COL` of byte `offset` in `text`, the file shown as `name`.
pub fn place(name: &str, text: &str, offset: usize) -> String {
    let (line, column) = line_column(text, offset);
    format!("{name}:{line}:{column}")
}

/// Where a TOML reader's error is (the byte offset in the file, when it
/// says) and what it says, on one line of at most [`MESSAGE_MAX`] bytes of
/// its own text: each kind of file puts the place in the form of its other
/// messages.
pub fn syntax_error(e: &toml::de::Error) -> (Option<usize>, String) {
    let message = briefer_floats(e.message().trim());
    let message = terminal_safe(&cut_to(&message, MESSAGE_MAX)).into_owned();
    (e.span().map(|span| span.start), message)
}

/// The kinds of plugtop's own input files, to say which one a text that
/// did not read as the expected kind looks like (a scenario given where a
/// course is expected, a rule file given as the scenario).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A simulated guest (`[[phases]]`): `plugtop sim`, `tune`, `--sim`.
    Scenario,
    /// A training course (`[[exercise]]`): `plugtop train`.
    Course,
    /// cpuplugd's rules (`HOTPLUG="…"`): every command's `-c`.
    Rules,
}

impl FileKind {
    /// The kind in words, with its article.
    pub fn words(self) -> &'static str {
        match self {
            FileKind::Scenario => "a scenario",
            FileKind::Course => "a course",
            FileKind::Rules => "a cpuplugd rule file",
        }
    }

    /// Where a file of this kind goes instead, for a person who gave it to
    /// the wrong command.
    fn advice(self) -> &'static str {
        match self {
            FileKind::Scenario => {
                "a scenario is run by `plugtop sim SCENARIO -c RULES` or `plugtop tune SCENARIO -c RULES`"
            }
            FileKind::Course => "a course is taken with `plugtop train COURSE`",
            FileKind::Rules => {
                "rules are given with -c, after a scenario (examples/scenarios/*.toml)"
            }
        }
    }

    /// Which kind `text` looks like, by the lines only that kind has: a
    /// table `[[phases]]` or `[[exercise]]` at the start of a line, or a
    /// line setting one of cpuplugd's rules or settings (`HOTPLUG="…"`,
    /// `UPDATE = "1"`). `None` when it looks like none of them.
    pub fn of(text: &str) -> Option<FileKind> {
        let mut rules = 0;
        for line in text.lines().map(str::trim) {
            match line {
                _ if line.starts_with("[[phases]]") => return Some(FileKind::Scenario),
                _ if line.starts_with("[[exercise]]") => return Some(FileKind::Course),
                _ => {
                    let name = line.split_once('=').map_or("", |(name, _)| name.trim());
                    if crate::rules::Assigned::by_file_name(name).is_some() {
                        rules += 1;
                    }
                }
            }
        }
        (rules > 0).then_some(FileKind::Rules)
    }

    /// `message` (the reader's error on a file expected to be `expected`)
    /// with, when `text` looks like another kind, which and where it goes;
    /// the reader's list of expected fields is then left out (it lists the
    /// wrong kind's).
    pub fn explained(expected: FileKind, text: &str, message: String) -> String {
        match FileKind::of(text) {
            Some(kind) if kind != expected => {
                let brief = message.split(", expected one of").next().unwrap_or("");
                format!(
                    "{brief}: this looks like {}, not {}; {}",
                    kind.words(),
                    expected.words(),
                    kind.advice()
                )
            }
            _ => message,
        }
    }
}

/// The reader's `floating point `1000…0`` (every digit of the value)
/// quoted briefly: `floating point `1e308``.
fn briefer_floats(message: &str) -> String {
    const QUOTE: &str = "floating point `";
    let mut out = String::with_capacity(message.len().min(MESSAGE_MAX));
    let mut rest = message;
    while let Some(at) = rest.find(QUOTE) {
        let (before, after) = rest.split_at(at + QUOTE.len());
        out.push_str(before);
        let end = after.find('`').unwrap_or(after.len());
        match after[..end].parse::<f64>() {
            Ok(v) => out.push_str(&crate::number::brief(v)),
            Err(_) => out.push_str(&after[..end]),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_file_is_recognised_by_its_own_lines() {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        assert_eq!(
            FileKind::of(&read("examples/scenarios/daytrader.toml")),
            Some(FileKind::Scenario)
        );
        assert_eq!(
            FileKind::of(&read("examples/courses/cpuplugd-basics.toml")),
            Some(FileKind::Course)
        );
        assert_eq!(
            FileKind::of(&read("examples/rules/oscillating-tight.conf")),
            Some(FileKind::Rules)
        );
        assert_eq!(FileKind::of("a = 1\nHOTPLUGS = 2\n"), None);
        let said = FileKind::explained(
            FileKind::Course,
            "[[phases]]\n",
            "unknown field `contention`, expected one of `title`".into(),
        );
        assert_eq!(
            said,
            "unknown field `contention`: this looks like a scenario, not a course; a scenario is run by `plugtop sim SCENARIO -c RULES` or `plugtop tune SCENARIO -c RULES`"
        );
        assert_eq!(
            FileKind::explained(FileKind::Course, "[[exercise]]\n", "x".into()),
            "x"
        );
    }

    #[test]
    fn a_huge_line_gives_a_short_one_line_error_with_its_place() {
        let text = format!("a = 1\nb = \"{}\" x\n", "B".repeat(5_000_000));
        let e = match toml::from_str::<toml::Table>(&text) {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        };
        let (offset, message) = syntax_error(&e);
        let place = offset.map(|at| place("f.toml", &text, at));
        assert!(
            place.as_deref().is_some_and(|p| p.starts_with("f.toml:2:")),
            "{place:?}"
        );
        assert!(message.len() < 2 * MESSAGE_MAX, "{}", message.len());
        assert!(!message.contains('\n'), "{message}");
        let key = format!("{} = 1\n", "K".repeat(100_000));
        let e = match toml::from_str::<std::collections::BTreeMap<String, String>>(&key) {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        };
        let (_, message) = syntax_error(&e);
        assert!(message.len() < 2 * MESSAGE_MAX, "{}", message.len());
        assert_eq!(line_column("ab\ncé\nx", 6), (2, 3));
    }

    /// adv52 #6e: a float where an integer belongs is quoted briefly.
    #[test]
    fn a_huge_float_is_quoted_briefly() {
        let e = match toml::from_str::<std::collections::BTreeMap<String, u32>>("cpus = 1e308\n") {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        };
        let (_, message) = syntax_error(&e);
        assert!(message.contains("floating point `1e308`"), "{message}");
        assert!(message.len() < 80, "{message}");
    }
}
