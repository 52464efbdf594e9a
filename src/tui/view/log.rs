//! The log: decisions, actions, proposals, mode switches, faults, errors.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::theme::Theme;
use super::top_rule::TopRule;
use crate::rules::eval::Outcome;
use crate::tui::app::{App, LogKind, LogLine};
use crate::tui::list_rows;
use crate::tui::modal::Modal;

/// The end of a long (pasted) search text, where the typing goes on: no
/// more than `room` characters, a cut marked `…`.
fn tail(text: &str, room: usize) -> String {
    match text.char_indices().rev().nth(room) {
        Some((b, c)) => format!("…{}", &text[b + c.len_utf8()..]),
        None => text.to_string(),
    }
}

/// Draws the newest log lines (or, in the log view, the scrolled ones).
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme, full: bool) {
    let travelling = app.timeline().cursor().is_some();
    // The search applies to the Log view, not the overview's panel.
    let matches = |l: &Cow<'_, LogLine>| !full || app.log().matches(l);
    let clock = app.source().clock();
    let title = match (full, travelling) {
        (true, false) => format!(" Log · {clock} (↑↓ PgUp PgDn Home End; e exports) "),
        (true, true) => format!(" Log up to the interval shown · {clock} (↑↓ PgUp PgDn Home End) "),
        (false, false) => " Log ".to_string(),
        (false, true) => " Log up to the interval shown ".to_string(),
    };
    let title = match (app.log().filter(), full) {
        (Some(f), true) if app.modals().is_open(&Modal::Search) => {
            let f = tail(f, usize::from(area.width));
            format!(" Search the log: {f}▏ (Enter keeps, Esc drops) ")
        }
        (Some(f), true) => format!(
            " Log lines with \"{}\": {} (/ searches again, Esc in the search drops it) ",
            tail(f, usize::from(area.width)),
            app.log_shown().filter(matches).count()
        ),
        _ => title,
    };
    let block = TopRule::new(Span::styled(title, theme.title()));
    let inner = super::fit::text_area(TopRule::inner(area));
    frame.render_widget(block, area);
    if full {
        lines(frame.buffer_mut(), inner, app, theme, true);
        // A search that matches nothing says so, not an empty Log (nu53
        // M7).
        if let Some(f) = app.log().filter()
            && !app.modals().is_open(&Modal::Search)
            && app.log_shown().find(matches).is_none()
        {
            let said = format!(
                "no line matches \"{}\" (/ searches again, Esc in the search drops it)",
                tail(f, usize::from(inner.width) / 2)
            );
            super::plain_lines::put(
                frame.buffer_mut(),
                Rect { height: 1, ..inner },
                &[Line::styled(said, theme.warning())],
            );
        }
        return;
    }
    // The overview's panel shows the newest lines that fit, each drawn
    // once for this width and these colours and kept while it is shown.
    app.log_panel().put(
        frame.buffer_mut(),
        inner,
        (inner.width, theme.color),
        app.log_shown().rev(),
        |l| entry_cells(l, inner.width.max(1), theme),
    );
}

/// One log line as the panel shows it at `width`: the rows it takes and
/// its cells, wrapped as [`lines`] wraps. Its text is its `row_text`, so
/// the rows are those [`lines`] counts for it (`list_rows::rows`).
fn entry_cells(l: &LogLine, width: u16, theme: &Theme) -> (usize, Buffer) {
    let lines = entry_lines(l, width, theme);
    let rows = lines.len().max(1);
    let area = Rect::new(0, 0, width, u16::try_from(rows).unwrap_or(u16::MAX));
    let mut cells = Buffer::empty(area);
    super::plain_lines::put(&mut cells, area, &lines);
    (rows, cells)
}

/// A log line in rows of `width`, as [`list_rows::hanging`] wraps its
/// `row_text` (a continuation indented): its time dimmed, its text in its
/// kind's colour.
fn entry_lines<'a>(l: &LogLine, width: u16, theme: &Theme) -> Vec<Line<'a>> {
    let style = match l.kind {
        LogKind::Problem => theme.outcome(Outcome::Fault(crate::rules::fpu::Fault::Invalid)),
        LogKind::Action => theme.outcome(Outcome::Truth(true)),
        LogKind::Decision => theme.text(),
        LogKind::Note => theme.dim(),
    };
    let time = format!("{} ", super::clock(l.stamp));
    let text = format!("{time}{}", l.shown());
    list_rows::hanging(&text, width)
        .into_iter()
        .enumerate()
        .map(|(i, row)| match row.strip_prefix(&time) {
            Some(rest) if i == 0 => Line::from(vec![
                Span::styled(time.clone(), theme.dim()),
                Span::styled(rest.to_string(), style),
            ]),
            _ => Line::styled(row, style),
        })
        .collect()
}

/// The log's lines that fit `inner`, wrapped: the newest, or in the Log
/// view (`full`) those its scroll and search show.
fn lines(buf: &mut Buffer, inner: Rect, app: &App, theme: &Theme, full: bool) {
    let matches = |l: &Cow<'_, LogLine>| !full || app.log().matches(l);
    let room = inner.height as usize;
    let width = inner.width.max(1);
    // Lines wrap (a reason or a fault is never cut), so the entries that
    // fit are taken by their wrapped height; scrolled back at most until
    // the oldest is at the top of a full screen.
    let scroll = if full {
        let shown = app.log_shown().filter(matches).count();
        let oldest = app
            .log_shown()
            .filter(matches)
            .map(|l| list_rows::rows(&l.row_text(), width));
        app.log()
            .scroll()
            .min(shown.saturating_sub(list_rows::fitting(oldest, room)))
    } else {
        0
    };
    let mut used = 0;
    let newest: Vec<Cow<'_, LogLine>> = app
        .log_shown()
        .filter(matches)
        .rev()
        .skip(scroll)
        .take_while(|l| {
            used += list_rows::rows(&l.row_text(), width);
            used <= room
        })
        .collect();
    let lines: Vec<Line<'_>> = newest
        .into_iter()
        .rev()
        .flat_map(|l| entry_lines(&l, width, theme))
        .collect();
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}
