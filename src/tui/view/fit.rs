//! Text fitted to the room a panel has, never cut silently: a line wraps
//! between words (so a number or a name is never split), or ends in `…`
//! where the full text is one key away. Fitted text keeps the panel's last
//! column free ([`room`]): a letter or digit in a screen's last column then
//! always means text was cut there, which the snapshot test checks.

use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::report::trace::Piece;
use ratatui::text::{Line, Span};

/// The columns text may fill in a panel `width` wide: all but the last.
pub fn room(width: u16) -> usize {
    usize::from(width).saturating_sub(1).max(1)
}

/// `area` less its last column: where flowing text wraps, one column short
/// of the edge ([`room`]).
pub fn text_area(area: Rect) -> Rect {
    Rect {
        width: area.width.saturating_sub(1).max(1),
        ..area
    }
}

// Columns as drawn, and text fitted to them, are the reports' as well as
// the screen's: one definition, below both.
use crate::report::words::split_point;
pub use crate::report::words::{cols, middle_cut, pad_left, pad_right};

/// `text` in at most `width` columns: whole, or cut after the last word
/// that fits and ended in `…` (a single word longer than the room is cut
/// inside, the only way it can show).
pub fn ellipsize(text: &str, width: usize) -> String {
    if cols(text) <= width {
        return text.to_string();
    }
    let budget = width.saturating_sub(1);
    let mut out = String::new();
    for word in text.split(' ') {
        let gap = usize::from(!out.is_empty());
        if cols(&out) + gap + cols(word) > budget {
            break;
        }
        if gap == 1 {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.is_empty() {
        out = hard_cut(text, budget);
    }
    // A cut after punctuation reads as a sentence's end: mark it plainly.
    let trimmed = out.trim_end_matches([' ', ',', ';', ':']);
    format!("{trimmed}…")
}

/// The first characters of `text` that fit `width` columns.
fn hard_cut(text: &str, width: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if cols(&out) + cols(c.encode_utf8(&mut [0; 4])) > width {
            break;
        }
        out.push(c);
    }
    out
}

/// One word of a styled line: the pieces of each span it spans, and how
/// many spaces came before it.
struct Word {
    pieces: Vec<(String, Style)>,
    spaces: usize,
}

impl Word {
    fn width(&self) -> usize {
        self.pieces.iter().map(|(t, _)| cols(t)).sum()
    }
}

/// The words of `line`, split at spaces only (a word that runs across
/// spans stays one word), and the spaces that lead the line.
fn words(line: &Line<'_>) -> (usize, Vec<Word>) {
    let mut out: Vec<Word> = Vec::new();
    let mut spaces = 0;
    let mut open = false;
    for span in &line.spans {
        let style = span.style;
        for (i, part) in span.content.split(' ').enumerate() {
            if i > 0 {
                spaces += 1;
                open = false;
            }
            if part.is_empty() {
                continue;
            }
            match out.last_mut() {
                Some(w) if open => w.pieces.push((part.to_string(), style)),
                _ => out.push(Word {
                    pieces: vec![(part.to_string(), style)],
                    spaces,
                }),
            }
            spaces = 0;
            open = true;
        }
    }
    let lead = out.first().map_or(spaces, |w| w.spaces);
    if let Some(w) = out.first_mut() {
        w.spaces = 0;
    }
    (lead, out)
}

/// `line` wrapped into rows of at most `width` columns, breaking only
/// between words; rows after the first start with `indent` spaces (less
/// when the room is small). The spaces leading the line are kept.
pub fn wrap_line(line: &Line<'_>, width: usize, indent: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    if line.width() <= width {
        return vec![owned(line)];
    }
    let (lead, words) = words(line);
    let lead = lead.min(width.saturating_sub(1));
    let indent = indent.min(width.saturating_sub(1) / 2);
    let mut rows: Vec<Vec<Span<'static>>> = vec![vec![Span::raw(" ".repeat(lead))]];
    let mut used = lead;
    let mut fresh = true;
    for word in words {
        let gap = if fresh { 0 } else { word.spaces };
        if !fresh && used + gap + word.width() > width {
            rows.push(vec![Span::raw(" ".repeat(indent))]);
            used = indent;
        } else if gap > 0 {
            if let Some(row) = rows.last_mut() {
                row.push(Span::raw(" ".repeat(gap)));
            }
            used += gap;
        }
        for (text, style) in word.pieces {
            push_cut(&mut rows, &mut used, text, style, width, indent);
        }
        fresh = false;
    }
    rows.into_iter()
        .map(|r| Line::from(r).style(line.style))
        .collect()
}

/// Adds `text` to the last row, going on in new rows when one word alone is
/// wider than the room.
fn push_cut(
    rows: &mut Vec<Vec<Span<'static>>>,
    used: &mut usize,
    text: String,
    style: Style,
    width: usize,
    indent: usize,
) {
    let mut rest = text;
    loop {
        let fits = width.saturating_sub(*used);
        if cols(&rest) <= fits {
            *used += cols(&rest);
            if let Some(row) = rows.last_mut() {
                row.push(Span::styled(rest, style));
            }
            return;
        }
        // Broken where a name reads on (after a `/`, `-`, `.` or `_`) when
        // there is one, as the reports break it (nu54 F4: a path went
        // `…/flappi` / `ng-incident.rec`).
        let head: String = rest.chars().take(split_point(&rest, fits.max(1))).collect();
        rest = rest[head.len()..].to_string();
        if let Some(row) = rows.last_mut() {
            row.push(Span::styled(head, style));
        }
        rows.push(vec![Span::raw(" ".repeat(indent))]);
        *used = indent;
    }
}

/// A copy of `line` that owns its text.
fn owned(line: &Line<'_>) -> Line<'static> {
    Line::from(
        line.spans
            .iter()
            .map(|s| Span::styled(s.content.to_string(), s.style))
            .collect::<Vec<_>>(),
    )
    .style(line.style)
}

/// Lines of items (each item's wrapped lines) that fit `room` lines with
/// item `focus` in view; when some do not fit, a line in `style` says how
/// many items are above and below ("… 3 more below (↓)").
pub fn window(
    items: Vec<Vec<Line<'static>>>,
    room: usize,
    focus: usize,
    style: Style,
) -> Vec<Line<'static>> {
    let total: usize = items.iter().map(Vec::len).sum();
    if total <= room || room < 3 {
        return items.into_iter().flatten().take(room).collect();
    }
    let starts: Vec<usize> = items
        .iter()
        .scan(0, |at, item| {
            let start = *at;
            *at += item.len();
            Some(start)
        })
        .collect();
    let focus = focus.min(items.len().saturating_sub(1));
    let (from, to) = (starts[focus], starts[focus] + items[focus].len());
    // The first line shown: as early as keeps the focus in view.
    let top_for = |avail: usize| to.saturating_sub(avail).min(from).min(total - avail);
    let mut avail = room - 1;
    let mut top = top_for(avail);
    if top > 0 {
        avail = room - 2;
        top = top_for(avail).max(1);
    }
    let end = top + avail;
    let above = starts.iter().filter(|s| **s < top).count();
    let below = items
        .iter()
        .zip(&starts)
        .filter(|(item, s)| **s + item.len() > end)
        .count();
    let mut out = Vec::with_capacity(room);
    if above > 0 {
        out.push(Line::styled(format!("… {above} more above (↑)"), style));
    }
    out.extend(items.into_iter().flatten().skip(top).take(avail));
    if below > 0 {
        out.push(Line::styled(format!("… {below} more below (↓)"), style));
    }
    out
}

/// Plain text wrapped as [`wrap_line`] does.
pub fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    wrap_line(&Line::raw(text.to_string()), width, indent)
        .into_iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// Explanation pieces joined into at most `width` columns: optional pieces
/// give way to their short form, the last first, until the text fits (so
/// the values stay and the sub-expressions' texts go); what still does not
/// fit ends in `…` after a whole word.
pub fn pieces(pieces: &[Piece], width: usize) -> String {
    pieces_cut(pieces, width).0
}

/// [`pieces`], and whether even the shortest form did not fit, so the
/// text was cut (a value may be lost: the caller may make room).
pub fn pieces_cut(pieces: &[Piece], width: usize) -> (String, bool) {
    let mut short = vec![false; pieces.len()];
    let joined = |short: &[bool]| -> String {
        pieces
            .iter()
            .zip(short)
            .map(|(p, s)| match (p.short, s) {
                (Some(text), true) => text,
                _ => p.text.as_str(),
            })
            .collect()
    };
    let mut order: Vec<usize> = (0..pieces.len())
        .filter(|i| pieces[*i].short.is_some())
        .collect();
    order.sort_by_key(|i| (pieces[*i].rank, std::cmp::Reverse(*i)));
    let mut text = joined(&short);
    for i in order {
        if cols(&text) <= width {
            return (text, false);
        }
        short[i] = true;
        text = joined(&short);
    }
    if cols(&text) <= width {
        return (text, false);
    }
    (ellipsize(&text, width), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether no row of `rows` ends inside a word of `text`: every row
    /// ends where `text` has a space or ends.
    fn breaks_only_between_words(text: &str, rows: &[String]) -> bool {
        let words: Vec<&str> = text.split_whitespace().collect();
        let again: Vec<&str> = rows.iter().flat_map(|r| r.split_whitespace()).collect();
        words == again
    }

    #[test]
    fn a_long_explanation_wraps_between_words_and_keeps_its_numbers() {
        let text = "MEMUNPLUG true because (meminfo.MemFree + avail_cache) = 1771301 kB is > (meminfo.MemTotal / 10) = 6570246 kB";
        for width in [20, 33, 40, 59, 79] {
            let rows = wrap(text, width, 2);
            assert!(rows.iter().all(|r| cols(r) <= width), "{width}: {rows:?}");
            assert!(breaks_only_between_words(text, &rows), "{width}: {rows:?}");
            assert!(rows[1..].iter().all(|r| r.starts_with("  ")), "{rows:?}");
        }
        assert_eq!(wrap("fits", 10, 2), ["fits"]);
    }

    #[test]
    fn a_word_longer_than_the_room_is_split_as_the_only_way_it_shows() {
        let rows = wrap("x 0123456789abcdef y", 8, 0);
        assert!(rows.iter().all(|r| cols(r) <= 8), "{rows:?}");
        assert_eq!(rows.concat().replace(' ', ""), "x0123456789abcdefy");
    }

    /// nu54 F4: a path longer than the room breaks after a `/` (or `-`,
    /// `.`, `_`), as the reports break it, never in the middle of a name.
    #[test]
    fn a_path_longer_than_the_room_breaks_after_a_separator() {
        let path = "examples/courses/cpuplugd-basics/flapping-incident.rec";
        let rows = wrap(&format!("Recording {path}"), 39, 2);
        assert_eq!(
            rows,
            [
                "Recording",
                "  examples/courses/cpuplugd-basics/",
                "  flapping-incident.rec"
            ]
        );
    }

    #[test]
    fn leading_spaces_and_styles_survive_the_wrap() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let line = Line::from(vec![
            Span::raw("    "),
            Span::styled("CP_idleAVG", bold),
            Span::raw(" = 0.0194 and a long tail of words"),
        ]);
        let rows = wrap_line(&line, 20, 6);
        assert!(rows[0].spans[0].content.starts_with("    "));
        assert!(
            rows[0]
                .spans
                .iter()
                .any(|s| s.content == "CP_idleAVG" && s.style == bold),
            "{rows:?}"
        );
        assert!(rows.iter().all(|r| r.width() <= 20), "{rows:?}");
        assert!(rows[1..].iter().all(|r| r.spans[0].content == "      "));
    }

    #[test]
    fn pieces_give_up_words_then_texts_and_keep_the_values() {
        let p = |text: &str, short: Option<&'static str>, rank: u8| Piece {
            text: text.into(),
            short,
            rank,
        };
        let parts = [
            p("true", None, 0),
            p(" because ", Some(": "), 0),
            p("(meminfo.MemFree + avail_cache)", Some("…"), 1),
            p(" = 883276 kB is > ", None, 0),
            p("(meminfo.MemTotal / 10)", Some("…"), 1),
            p(" = 6570246 kB", None, 0),
        ];
        let full: String = parts.iter().map(|x| x.text.as_str()).collect();
        assert_eq!(pieces(&parts, 200), full);
        assert_eq!(
            pieces(&parts, 91),
            "true: (meminfo.MemFree + avail_cache) = 883276 kB is > (meminfo.MemTotal / 10) = 6570246 kB",
            "the connecting word goes first"
        );
        assert_eq!(
            pieces(&parts, 70),
            "true: (meminfo.MemFree + avail_cache) = 883276 kB is > … = 6570246 kB",
            "then the last text"
        );
        assert_eq!(
            pieces(&parts, 45),
            "true: … = 883276 kB is > … = 6570246 kB"
        );
        let at_20 = pieces(&parts, 20);
        assert!(cols(&at_20) <= 20 && at_20.ends_with('…'), "{at_20}");
    }

    #[test]
    fn a_window_keeps_the_focus_in_view_and_says_what_is_hidden() {
        let items: Vec<Vec<Line<'static>>> = (0..10)
            .map(|i| {
                (0..1 + i % 2)
                    .map(|k| Line::raw(format!("item {i}.{k}")))
                    .collect()
            })
            .collect();
        let text = |lines: &[Line<'_>]| -> Vec<String> {
            lines
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        let top = text(&window(items.clone(), 5, 0, Style::default()));
        assert_eq!(top.len(), 5);
        assert_eq!(top[0], "item 0.0");
        assert_eq!(top[4], "… 7 more below (↓)");
        let mid = text(&window(items.clone(), 6, 5, Style::default()));
        assert!(
            mid[0].starts_with("… ") && mid[0].ends_with("more above (↑)"),
            "{mid:?}"
        );
        assert!(
            mid.contains(&"item 5.0".to_string()) && mid.contains(&"item 5.1".to_string()),
            "{mid:?}"
        );
        assert!(mid[5].ends_with("more below (↓)"), "{mid:?}");
        let end = text(&window(items.clone(), 6, 9, Style::default()));
        assert_eq!(end.last().map(String::as_str), Some("item 9.1"), "{end:?}");
        assert_eq!(text(&window(items, 100, 3, Style::default())).len(), 15);
    }

    #[test]
    fn ellipsize_ends_after_a_whole_word() {
        let text = "false because (meminfo.MemFree + avail_cache) = 100349 is not > (meminfo.MemTotal / 10) = 6570246";
        for width in [10, 30, 60, 67] {
            let short = ellipsize(text, width);
            assert!(cols(&short) <= width, "{short}");
            assert!(short.ends_with('…'), "{short}");
            let kept = short.trim_end_matches('…');
            assert!(
                text.starts_with(kept) && text[kept.len()..].starts_with(' '),
                "cut inside a word: {short}"
            );
        }
        assert_eq!(ellipsize("short", 10), "short");
        assert_eq!(ellipsize("abcdefghijkl", 5), "abcd…");
    }
}
