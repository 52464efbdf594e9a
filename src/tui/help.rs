//! What `?` lists: every key of every table ([`super::keys`] for the
//! screen, [`super::layer_keys`] for what is open on top, the terminal's
//! and the mouse), in sections, laid out in one or two columns as the
//! screen allows and in pages when even that does not hold them. Plain
//! text here; [`super::view`] draws it and the app turns its pages.

use super::keys::BINDINGS;
use super::layer_keys::{EDITOR_KEYS, LayerBinding, MOUSE, TERMINAL_KEYS, TEXT_KEYS, TUNE_KEYS};

/// Room for a description beside its keys before it wraps.
const TEXT_MAX: usize = 52;
/// The narrowest description column two columns are worth having for.
const TEXT_MIN: usize = 24;
/// Blanks between two columns.
pub const GAP: usize = 2;

/// One entry of the help: a section's heading, or keys and what they do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpEntry {
    Heading(&'static str),
    Keys {
        shown: &'static str,
        text: &'static str,
    },
}

/// Every key, by section, in the order the help lists them.
pub fn entries() -> Vec<HelpEntry> {
    let mut out = vec![HelpEntry::Heading("The screen")];
    out.extend(BINDINGS.iter().map(|b| HelpEntry::Keys {
        shown: b.shown,
        text: b.description,
    }));
    section(&mut out, "Anywhere", TERMINAL_KEYS);
    out.push(HelpEntry::Heading("Mouse"));
    out.extend(
        MOUSE
            .iter()
            .map(|(shown, text)| HelpEntry::Keys { shown, text }),
    );
    section(&mut out, "What-if editor (w)", EDITOR_KEYS);
    // The graphs' and timelines' marks, under a heading of their own:
    // they are no keys (nu53 M8).
    out.push(HelpEntry::Heading("Graphs' marks (not keys)"));
    out.push(HelpEntry::Keys {
        shown: "▲▼ +-",
        text: "CPU plug/unplug, pool +/-",
    });
    section(&mut out, TUNE_HEADING, TUNE_KEYS);
    section(&mut out, "Text inputs (w e / J Ctrl-S)", TEXT_KEYS);
    out
}

fn section<A>(out: &mut Vec<HelpEntry>, heading: &'static str, table: &[LayerBinding<A>]) {
    out.push(HelpEntry::Heading(heading));
    out.extend(table.iter().map(|b| HelpEntry::Keys {
        shown: b.shown,
        text: b.description,
    }));
}

/// One row of a column: keys (blank on a description's later rows), the
/// description's part on this row; a heading has only `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpRow {
    pub keys: String,
    pub text: String,
    pub heading: bool,
}

/// The help fitted to a box: its columns, each page's columns of rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpLayout {
    /// Characters of the keys, with the blank after them.
    pub key_width: usize,
    /// Characters of a description.
    pub text_width: usize,
    /// Rows a column holds.
    pub rows: usize,
    /// Pages; each a list of columns (one or two), each a list of rows.
    pub pages: Vec<Vec<Vec<HelpRow>>>,
}

impl HelpLayout {
    /// Columns side by side on a page.
    pub fn columns(&self) -> usize {
        self.pages.first().map_or(1, |p| p.len().max(1))
    }

    /// The inside width of the box that holds it.
    pub fn width(&self) -> usize {
        let columns = self.pages.iter().map(Vec::len).max().unwrap_or(1).max(1);
        columns * (self.key_width + self.text_width) + (columns - 1) * GAP
    }
}

/// The help for a box of at most `width`×`height` inside, its borders
/// taken off already: two columns when both get a readable width, as many
/// rows as fit, a page more when they do not (a row is then kept for
/// saying so).
pub fn layout(width: usize, height: usize) -> HelpLayout {
    let all = entries();
    let key_width = all
        .iter()
        .map(|e| match e {
            HelpEntry::Keys { shown, .. } => shown.chars().count(),
            HelpEntry::Heading(_) => 0,
        })
        .max()
        .unwrap_or(0)
        + 1;
    let two = width >= 2 * (key_width + TEXT_MIN) + GAP;
    let columns = if two { 2 } else { 1 };
    let text_width = ((width.saturating_sub(GAP * (columns - 1)) / columns)
        .saturating_sub(key_width))
    .clamp(8, TEXT_MAX);
    let rows = height.max(2);
    let blocks = blocks(&all, key_width, text_width);
    let mut pages = paginate(&blocks, rows, columns);
    if pages.len() > 1 {
        // A row of every page says there is more.
        pages = paginate(&blocks, rows - 1, columns);
    } else {
        // On one page, columns of about the same height.
        let total: usize = blocks.iter().map(Vec::len).sum();
        if let Some(even) = (total.div_ceil(columns)..rows)
            .map(|h| paginate(&blocks, h, columns))
            .find(|p| p.len() == 1)
        {
            pages = even;
        }
    }
    HelpLayout {
        key_width,
        text_width,
        rows,
        pages,
    }
}

/// Each entry as the rows it takes, a description wrapped at word
/// boundaries; a heading's block holds the first entry after it too, so a
/// heading never ends a column.
fn blocks(all: &[HelpEntry], key_width: usize, text_width: usize) -> Vec<Vec<HelpRow>> {
    let mut out: Vec<Vec<HelpRow>> = Vec::new();
    let mut heading: Option<Vec<HelpRow>> = None;
    for e in all {
        match e {
            HelpEntry::Heading(h) => {
                heading = Some(
                    wrap(h, key_width + text_width)
                        .into_iter()
                        .map(|text| HelpRow {
                            keys: String::new(),
                            text,
                            heading: true,
                        })
                        .collect(),
                )
            }
            HelpEntry::Keys { shown, text } => {
                let mut rows: Vec<HelpRow> = heading.take().unwrap_or_default();
                for (i, part) in wrap(text, text_width).into_iter().enumerate() {
                    rows.push(HelpRow {
                        keys: if i == 0 {
                            format!("{shown:<key_width$}")
                        } else {
                            " ".repeat(key_width)
                        },
                        text: part,
                        heading: false,
                    });
                }
                out.push(rows);
            }
        }
    }
    out
}

/// The blocks in columns of `rows` rows, `columns` to a page; a blank row
/// before a heading that does not start a column.
fn paginate(blocks: &[Vec<HelpRow>], rows: usize, columns: usize) -> Vec<Vec<Vec<HelpRow>>> {
    let blank = HelpRow {
        keys: String::new(),
        text: String::new(),
        heading: false,
    };
    let mut all_columns: Vec<Vec<HelpRow>> = vec![Vec::new()];
    for block in blocks {
        let spaced = block.first().is_some_and(|r| r.heading);
        let Some(column) = all_columns.last_mut() else {
            break;
        };
        let needed = block.len() + usize::from(spaced && !column.is_empty());
        if !column.is_empty() && column.len() + needed > rows {
            all_columns.push(Vec::new());
        }
        let Some(column) = all_columns.last_mut() else {
            break;
        };
        if spaced && !column.is_empty() {
            column.push(blank.clone());
        }
        // A block longer than a column (a screen too small for one entry)
        // goes on over the next columns.
        for row in block {
            if column_full(&all_columns, rows) {
                all_columns.push(Vec::new());
            }
            if let Some(c) = all_columns.last_mut() {
                c.push(row.clone());
            }
        }
    }
    all_columns
        .chunks(columns)
        .map(<[Vec<HelpRow>]>::to_vec)
        .collect()
}

fn column_full(columns: &[Vec<HelpRow>], rows: usize) -> bool {
    columns.last().is_some_and(|c| c.len() >= rows)
}

pub use crate::report::words::wrap;

/// The heading of the tune box's keys (`?` in the box opens the help at it).
pub const TUNE_HEADING: &str = "Tune box (T, on --sim)";

/// The page of the help in a box of `width`×`height` inside whose rows
/// hold the heading `heading` (the first page when none does).
pub fn page_of(width: usize, height: usize, heading: &str) -> usize {
    layout(width, height)
        .pages
        .iter()
        .position(|page| {
            // A heading wider than a column is wrapped: its first row.
            page.iter()
                .flatten()
                .any(|r| r.heading && !r.text.is_empty() && heading.starts_with(r.text.trim_end()))
        })
        .unwrap_or(0)
}

/// How many pages the help takes in a box of `width`×`height` inside.
pub fn pages(width: usize, height: usize) -> usize {
    layout(width, height).pages.len().max(1)
}

/// Rows at the bottom of the screen the help leaves alone: the status
/// line, which says what is going on (a write in progress) meanwhile.
pub const BELOW: u16 = 1;

/// The inside of the help's box on a screen of `width`×`height`: all of it
/// but the borders, the free column before the right border (see
/// `view::boxes`) and the status line.
pub fn inside(width: u16, height: u16) -> (usize, usize) {
    (
        usize::from(width.saturating_sub(3)),
        usize::from(height.saturating_sub(2 + BELOW)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(l: &HelpLayout) -> String {
        let mut out = String::new();
        for page in &l.pages {
            for column in page {
                for row in column {
                    out.push_str(&row.keys);
                    out.push_str(&row.text);
                    out.push('\n');
                }
            }
        }
        out
    }

    #[test]
    fn wrapping_breaks_at_blanks_and_inside_a_word_only_when_it_must() {
        assert_eq!(wrap("one two three", 7), vec!["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 5), vec![""]);
        for width in 1..30 {
            for line in wrap("the five views, in Tab order: Ctrl-Z suspends", width) {
                assert!(line.chars().count() <= width, "{line:?} at {width}");
            }
        }
    }

    #[test]
    fn every_entry_is_on_some_page_whole_at_every_size() {
        for (w, h) in [(78, 22), (158, 46), (108, 28), (40, 10), (20, 4)] {
            let l = layout(w, h);
            let text = text_of(&l);
            for e in entries() {
                let (HelpEntry::Keys { text: t, .. } | HelpEntry::Heading(t)) = e;
                let words: String = t.split(' ').collect();
                let flat: String = text.split_whitespace().collect();
                assert!(flat.contains(&words), "{t:?} missing at {w}x{h}");
            }
            for page in &l.pages {
                assert!(page.len() <= l.columns());
                for column in page {
                    assert!(column.len() <= l.rows, "{w}x{h}: a column overflows");
                    assert!(
                        column.last().is_none_or(|r| !r.heading),
                        "{w}x{h}: a heading ends a column"
                    );
                    for row in column {
                        let room = if row.heading {
                            l.key_width + l.text_width
                        } else {
                            l.text_width
                        };
                        assert!(row.text.chars().count() <= room, "{row:?}");
                    }
                }
            }
            assert!(
                l.width() <= w.max(l.key_width + 8),
                "{w}x{h}: {}",
                l.width()
            );
        }
    }

    use crate::tui::keys::action_for;
    use crate::tui::layer_keys::{Chord, action_in};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    /// How the help writes a key.
    fn name(code: KeyCode, ctrl: bool) -> String {
        let plain: String = match code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) if ctrl => format!("Ctrl-{}", c.to_ascii_uppercase()),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::BackTab => "S-Tab".into(),
            KeyCode::Backspace => "Bksp".into(),
            KeyCode::Delete => "Del".into(),
            other => format!("{other:?}"),
        };
        // Ctrl with an arrow or a function key is taken as the key.
        plain
    }

    /// The keys a `shown` text names: `1-5` is five, `Ctrl-A/E` two.
    fn named(shown: &str) -> Vec<String> {
        let mut out = Vec::new();
        for token in shown.split(' ') {
            let b = token.as_bytes();
            if b.len() == 3 && b[1] == b'-' && b[0].is_ascii_digit() && b[2].is_ascii_digit() {
                out.extend((b[0]..=b[2]).map(|d| char::from(d).to_string()));
            } else if let Some((first, more)) = token.split_once('/').filter(|(f, _)| !f.is_empty())
            {
                let stem: String = first.chars().take(first.chars().count() - 1).collect();
                out.push(first.to_string());
                out.extend(more.split('/').map(|m| format!("{stem}{m}")));
            } else {
                out.push(token.to_string());
            }
        }
        out
    }

    /// Every key a terminal sends plugtop, plain and with Ctrl.
    fn every_key() -> Vec<(KeyCode, bool)> {
        let mut codes: Vec<KeyCode> = (0x20u8..0x7f)
            .map(|b| KeyCode::Char(char::from(b)))
            .collect();
        codes.extend((1..=12).map(KeyCode::F));
        codes.extend([
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Enter,
            KeyCode::Esc,
            KeyCode::Backspace,
            KeyCode::Delete,
            KeyCode::Insert,
        ]);
        codes
            .into_iter()
            .flat_map(|c| [(c, false), (c, true)])
            .collect()
    }

    fn event(code: KeyCode, ctrl: bool) -> KeyEvent {
        let modifiers = if ctrl {
            KeyModifiers::CONTROL
        } else {
            KeyModifiers::NONE
        };
        KeyEvent::new(code, modifiers)
    }

    /// The keys named in the help's sections whose heading starts with
    /// one of `headings`.
    fn listed(headings: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        let mut inside = false;
        for e in entries() {
            match e {
                HelpEntry::Heading(h) => inside = headings.iter().any(|x| h.starts_with(x)),
                HelpEntry::Keys { shown, .. } if inside => out.extend(named(shown)),
                HelpEntry::Keys { .. } => {}
            }
        }
        out
    }

    #[test]
    fn every_key_the_screen_acts_on_is_in_the_help() {
        let screen = listed(&["The screen", "Anywhere"]);
        let mut acted = 0;
        for (code, ctrl) in every_key() {
            let k = event(code, ctrl);
            let handled = action_for(k).is_some() || action_in(TERMINAL_KEYS, k).is_some();
            if handled {
                acted += 1;
                let n = name(code, ctrl);
                assert!(screen.contains(&n), "{n} is acted on but not in the help");
            }
        }
        assert!(
            acted > 40,
            "only {acted} keys found: the check reads nothing"
        );
        // Ctrl and a letter is never the letter (Ctrl-S is no step-confirm).
        for c in ['s', 'o', 'r', 'e', 'q', 'a', 'w'] {
            assert_eq!(action_for(event(KeyCode::Char(c), true)), None, "Ctrl-{c}");
        }
    }

    #[test]
    fn every_key_of_every_layer_is_in_its_section() {
        fn check<A>(heading: &str, table: &[LayerBinding<A>]) {
            let shown = listed(&[heading]);
            for c in table.iter().flat_map(|b| b.keys) {
                let Chord { code, ctrl } = *c;
                let n = name(code, ctrl);
                // Ctrl-C closes every layer, said once under Anywhere.
                let said =
                    shown.contains(&n) || (n == "Ctrl-C" && listed(&["Anywhere"]).contains(&n));
                assert!(said, "{n} missing under {heading}");
            }
        }
        check("What-if", EDITOR_KEYS);
        check("Tune", TUNE_KEYS);
        check("Text inputs", TEXT_KEYS);
        check("Anywhere", TERMINAL_KEYS);
        // The text inputs' own editing keys (characters aside).
        let typing = listed(&["Text inputs"]);
        for (code, ctrl) in every_key() {
            let mut input = crate::tui::line_input::LineInput::new("ab");
            input.move_by(-1);
            let edits = input.key(event(code, ctrl)).is_some();
            if edits && (ctrl || !matches!(code, KeyCode::Char(_))) {
                let n = name(code, ctrl);
                assert!(typing.contains(&n), "{n} edits text but is not in the help");
            }
        }
        let mouse = listed(&["Mouse"]);
        assert!(mouse.contains(&"wheel".to_string()) && mouse.contains(&"click".to_string()));
    }

    #[test]
    fn two_columns_when_wide_and_one_page_at_160x48() {
        let (w, h) = inside(160, 48);
        let wide = layout(w, h);
        assert_eq!(wide.columns(), 2);
        assert_eq!(wide.pages.len(), 1, "everything on one page at 160x48");
        let (w, h) = inside(80, 24);
        let small = layout(w, h);
        assert!(small.pages.len() > 1, "80x24 pages");
        assert!(
            small.pages.len() <= 3,
            "{} pages at 80x24",
            small.pages.len()
        );
        let narrow = layout(50, 40);
        assert_eq!(narrow.columns(), 1);
    }
}
