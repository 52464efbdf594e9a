//! Formatting what the engine decided: JSON lines for machines (the
//! conformance format), a readable table and truth traces for people, and
//! the comparisons that flipped between two intervals; and the one rule
//! every output that quotes a file passes through to be safe on a
//! terminal ([`terminal_safe`], [`terminal_safe_json`]).

pub mod fault_words;
pub mod flips;
pub mod jsonl;
pub mod line_diff;
pub mod node_text;
pub mod side_by_side;
pub mod table;
pub mod trace;
pub mod units;
pub mod words;

// Reports show text from files; how it is made safe is shared with the
// rule language's diagnostics, below both.
pub(crate) use crate::safe_text::acts_on_terminal;
pub use crate::safe_text::{TerminalText, terminal_safe, terminal_safe_json, terminal_safe_lines};

/// The columns a text report's prose is wrapped to: the terminal's when
/// standard output is one, else 80 (a file or a pipe is read in a terminal
/// of the README's 80×24 at least). JSON is never wrapped; nor are the
/// lines of a file a report quotes (a diff, a rule), which must copy back
/// whole.
pub fn text_width() -> usize {
    terminal_columns().unwrap_or(80)
}

/// The columns prose on standard error is wrapped to: the terminal's when
/// standard error is one, 80 into a pipe (read in a terminal later, as
/// [`text_width`] for standard output); a file or a socket (the journal's
/// stream under the unit) gets its lines whole, one entry one line, for
/// grep and `journalctl` alike.
pub fn stderr_width() -> usize {
    use std::io::IsTerminal;
    use std::os::fd::AsFd as _;
    let stderr = std::io::stderr();
    if stderr.is_terminal() {
        return terminal_size_columns().unwrap_or(80);
    }
    let pipe = rustix::fs::fstat(stderr.as_fd()).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo
    });
    if pipe { 80 } else { usize::MAX }
}

/// The terminal's columns when standard output is one: a table wider than
/// that is laid out narrower (into a file or a pipe, it stays whole).
fn terminal_columns() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_size_columns()
}

/// The controlling terminal's columns, if it says (at least 20).
fn terminal_size_columns() -> Option<usize> {
    match crossterm::terminal::size() {
        Ok((cols, _)) if cols >= 20 => Some(usize::from(cols)),
        _ => None,
    }
}

/// How a text report is laid out. Narrow is the default, in a terminal
/// and into a file or a pipe alike: its tables fit 80 columns (shorter
/// headings, values written compactly) and its prose wraps at `width`
/// ([`text_width`]); `--wide` gives every column and value in full, each
/// line as long as it gets. Lines that mirror cpuplugd's own messages are
/// the same in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Narrow { width: usize },
    Wide,
}

impl Layout {
    /// The layout `--wide` asks for: narrow, wrapped to [`text_width`],
    /// unless `wide`.
    pub fn from_flag(wide: bool) -> Layout {
        if wide {
            Layout::Wide
        } else {
            Layout::Narrow {
                width: text_width(),
            }
        }
    }

    /// The width prose and tables are fitted to; `None` when wide.
    pub fn width(self) -> Option<usize> {
        match self {
            Layout::Narrow { width } => Some(width),
            Layout::Wide => None,
        }
    }

    /// `text` as this layout shows prose: wrapped ([`prose`]) when narrow,
    /// its lines as they are when wide; every line ends in a newline
    /// either way.
    pub fn prose(self, text: &str) -> String {
        match self {
            Layout::Narrow { width } => prose(text, width),
            Layout::Wide => prose(text, usize::MAX),
        }
    }

    /// This layout for standard error: narrow at [`stderr_width`], or
    /// wide.
    pub fn on_stderr(self) -> Layout {
        match self {
            Layout::Narrow { .. } => Layout::Narrow {
                width: stderr_width(),
            },
            Layout::Wide => Layout::Wide,
        }
    }

    /// A rule file's diagnostics as this layout shows them: narrow, each
    /// message wraps ([`prose`]) while the lines quoting the file and the
    /// caret under them stay whole, so the caret stays under its column
    /// and the line copies back.
    pub fn diagnostics(self, text: &str) -> String {
        let Some(width) = self.width() else {
            return text.to_string();
        };
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            let rest = line
                .trim_start()
                .trim_start_matches(|c: char| c.is_ascii_digit());
            if line.is_empty() || rest.starts_with(" |") || rest.starts_with('|') {
                out.push_str(line);
                out.push('\n');
            } else {
                out.push_str(&prose(line, width));
            }
        }
        out
    }
}

/// The characters a line's lead is made of: its indent and a trace's tree.
const LEAD: [char; 5] = [' ', '│', '├', '└', '─'];

/// The lead of the rows a long line wraps onto: a tree's branch goes on
/// down (`├─` becomes `│ `, `└─` blank), then two more columns.
fn continued(lead: &str) -> String {
    let mut out: String = lead
        .chars()
        .map(|c| match c {
            '├' => '│',
            '│' => '│',
            _ => ' ',
        })
        .collect();
    out.push_str("  ");
    out
}

/// `text`, each of its lines wrapped between words to `width` columns, the
/// rows after the first of each indented two past the line's own lead (its
/// indent, or a trace's tree, which goes on down beside them).
pub fn prose(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width.max(1) * 3);
    for line in text.lines() {
        if crate::safe_text::cols(line) <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let body = line.trim_start_matches(LEAD);
        let lead = &line[..line.len() - body.len()];
        let under = continued(lead);
        // A lead that leaves no room for words is not kept.
        let (lead, under) = if under.chars().count() + 20 > width {
            ("", "  ".to_string())
        } else {
            (lead, under)
        };
        let first_width = width.saturating_sub(lead.chars().count());
        let rest_width = width.saturating_sub(under.chars().count());
        for (i, row) in words::wrap_hanging(body, first_width, rest_width)
            .iter()
            .enumerate()
        {
            out.push_str(if i == 0 { lead } else { &under });
            // A row broken at a run of blanks ends at its last word.
            out.push_str(row.trim_end());
            out.push('\n');
        }
    }
    out
}

/// The last part of a path, so long paths fit headers and columns.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Characters that read as the separator of the screen's header (`·`
/// and its look-alikes): in a file's name they could make it pass for the
/// header's own parts.
const SEPARATOR_LIKE: [char; 7] = ['·', '∙', '⋅', '•', '・', '･', '‧'];

/// The last part of `path` as a header or a report names the file: as it
/// is when it is a plain name; in double quotes, its controls written as
/// escapes (`\n`, `\u{1b}`) and its quotes escaped, when it holds
/// anything that could act on a terminal, a quote, or a separator the
/// header uses — so a name like `x · live · #999.conf` reads as one
/// name, never as the source and the interval the header names.
pub fn shown_file_name(path: &str) -> String {
    let name = file_name(path);
    let plain = !name
        .chars()
        .any(|c| acts_on_terminal(c) || c == '"' || SEPARATOR_LIKE.contains(&c));
    if plain {
        return name.to_string();
    }
    format!("\"{}\"", terminal_safe(name).replace('"', "\\\""))
}

/// A length of time as `h:mm:ss`.
pub fn hms(seconds: i64) -> String {
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A time stamp as the time of day, HH:MM:SS (UTC): the screen, the log
/// export and `plugtop run -V` all print it so.
pub fn time_of_day(stamp: crate::kernel::Stamp) -> String {
    let s = stamp.secs().rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}
