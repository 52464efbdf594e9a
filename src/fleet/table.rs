//! The fleet screen's frame: header (what Prometheus said, drift), the
//! fleet table, the key line; and the dispatch to the drift and detail
//! views. A pure function of [`FleetApp`]: it reads no clock and no file.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{FleetApp, FleetView, KEYS, Link};
use super::format::{age, cell, fit, sparkline, without_limit};
use super::model::{DriftGroup, FleetColumn, drift_line};
use crate::safe_text::terminal_safe;

/// A refresh this long (milliseconds) is called slow in the header.
const SLOW_MS: u64 = 1000;

/// Characters of the CPU sparkline in the table.
const SPARK: usize = 8;

/// Each column's width on the screen.
fn width(c: FleetColumn) -> usize {
    match c {
        FleetColumn::Trouble => 9,
        FleetColumn::Instance => 15,
        FleetColumn::FleetGuest => 8,
        FleetColumn::System => 8,
        FleetColumn::Cpus => 6 + SPARK,
        FleetColumn::Pool => 9,
        FleetColumn::Mode => 7,
        FleetColumn::Flap => 5,
        FleetColumn::Faults => 7,
        FleetColumn::Actions => 5,
        FleetColumn::Age => 5,
        FleetColumn::Rules => 30,
    }
}

/// The columns that fit in `cols`, the most telling first, shown in the
/// table's order.
pub fn columns(cols: usize) -> Vec<FleetColumn> {
    columns_fitting(cols, width)
}

/// As [`columns`], each column `width_of` wide plus one between them
/// (`--batch`'s narrow table measures its cells).
pub(super) fn columns_fitting(
    cols: usize,
    width_of: impl Fn(FleetColumn) -> usize,
) -> Vec<FleetColumn> {
    const PRIORITY: [FleetColumn; 12] = [
        FleetColumn::Trouble,
        FleetColumn::Instance,
        FleetColumn::Cpus,
        FleetColumn::Age,
        FleetColumn::Flap,
        FleetColumn::Faults,
        FleetColumn::FleetGuest,
        FleetColumn::Pool,
        FleetColumn::Actions,
        FleetColumn::Mode,
        FleetColumn::System,
        FleetColumn::Rules,
    ];
    let mut left = cols;
    let mut chosen = Vec::new();
    for c in PRIORITY {
        let w = width_of(c) + 1;
        if w <= left {
            left -= w;
            chosen.push(c);
        }
    }
    FleetColumn::ALL
        .iter()
        .copied()
        .filter(|c| chosen.contains(c))
        .collect()
}

/// The whole screen.
pub fn draw(frame: &mut Frame, app: &FleetApp) {
    let area = frame.area();
    if area.height < 4 || area.width < 20 {
        frame.render_widget(Paragraph::new("plugtop fleet: too small"), area);
        return;
    }
    let head = header(app, area.width as usize);
    let head_h = head.len() as u16;
    frame.render_widget(
        Paragraph::new(head),
        Rect {
            height: head_h,
            ..area
        },
    );
    let body = Rect {
        y: area.y + head_h,
        height: area.height.saturating_sub(head_h + 1),
        ..area
    };
    match app.view {
        FleetView::Table => frame.render_widget(Paragraph::new(table(app, body)), body),
        FleetView::Drift => frame.render_widget(Paragraph::new(drift_lines(app, body)), body),
        FleetView::Diff => frame.render_widget(Paragraph::new(diff_lines(app, body)), body),
        FleetView::GuestDetail => super::detail::draw(frame, app, body),
    }
    let foot = Rect {
        y: area.y + area.height - 1,
        height: 1,
        ..area
    };
    frame.render_widget(Paragraph::new(footer(app, area.width as usize)), foot);
    if app.help {
        super::help::draw(frame, app, area);
    }
}

/// Rows of the diff view that are not the diff: the two groups compared
/// above it, the line under it that says where it is scrolled to.
const DIFF_CHROME: u16 = 3;

/// How many lines of the diff the diff view shows on a terminal
/// `height` rows high (under the header, over the key line).
pub fn diff_room(app: &FleetApp, height: u16) -> usize {
    let head = header(app, 1).len() as u16;
    usize::from(height.saturating_sub(head + 1 + DIFF_CHROME)).max(1)
}

/// The header: the title and counts, how Prometheus answered, the drift.
fn header(app: &FleetApp, cols: usize) -> Vec<Line<'static>> {
    let now = app.fleet.at;
    let troubled = app
        .fleet
        .guests
        .iter()
        .filter(|g| !g.troubles(now, app.stale_after).is_empty())
        .count();
    let stopped = app
        .fleet
        .guests
        .iter()
        .filter(|g| g.stopped(now, app.stale_after))
        .count();
    let mut title = format!(
        "fleet {}  {}: {} in trouble, {} stopped  sort {}{}",
        terminal_safe(&app.prometheus),
        crate::report::words::count(app.fleet.guests.len() as f64, "guest", "guests"),
        troubled,
        stopped,
        app.sort.title(),
        if app.reverse { " ↑" } else { "" }
    );
    if !app.filter.text().is_empty() {
        title.push_str(&format!(
            "  filter \"{}\"",
            terminal_safe(app.filter.text())
        ));
    }
    if app.busy {
        title.push_str("  …");
    }
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = vec![Line::styled(fit(&title, cols), bold)];
    let (text, style) = match &app.link {
        Link::Waiting => (
            "waiting for Prometheus's first answer".to_string(),
            Style::default(),
        ),
        Link::Up {
            partial: 0,
            of,
            took_ms,
        } => {
            let w = app.fleet.health.warnings.first();
            match w {
                Some(w) => (
                    format!("Prometheus answered with a warning: {}", terminal_safe(w)),
                    Style::default().fg(Color::Yellow),
                ),
                // Slow: a refresh that takes a second or more.
                None if *took_ms >= SLOW_MS => (
                    format!(
                        "Prometheus is slow: {of} queries took {took_ms} ms (refresh {})",
                        app.refreshes
                    ),
                    Style::default().fg(Color::Yellow),
                ),
                None => (
                    format!(
                        "Prometheus answered {of} queries in {took_ms} ms (refresh {})",
                        app.refreshes
                    ),
                    Style::default(),
                ),
            }
        }
        Link::Up { partial, of, .. } => (
            format!(
                "Prometheus answered partly: {partial} of {of} queries failed: {}",
                terminal_safe(app.fleet.health.failed.first().map_or("", String::as_str))
            ),
            Style::default().fg(Color::Yellow),
        ),
        Link::Down(why) => (
            format!(
                "Prometheus DOWN (shown: its answer of {} ago): {}",
                age(Some(app.now - app.fleet.at)).trim(),
                terminal_safe(why)
            ),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
    };
    lines.push(Line::styled(fit(&text, cols), style));
    if app.drift.len() > 1 {
        let odd: Vec<String> = app.drift.iter().skip(1).map(drift_line).collect();
        lines.push(Line::styled(
            fit(
                // The key first: a long note is cut, the key never.
                &format!("drift (d: groups): {}", terminal_safe(&odd.join("; "))),
                cols,
            ),
            Style::default().fg(Color::Yellow),
        ));
    }
    lines
}

/// The fleet table's lines: headings and the visible rows.
fn table(app: &FleetApp, area: Rect) -> Vec<Line<'static>> {
    let cols = columns(area.width as usize);
    let heading: String = cols
        .iter()
        .map(|&c| {
            let mark = if c == app.sort { "▼" } else { "" };
            fit(&format!("{}{mark}", c.title()), width(c)) + " "
        })
        .collect();
    let mut lines = vec![Line::styled(
        fit(&heading, area.width as usize),
        Style::default().add_modifier(Modifier::REVERSED),
    )];
    if app.rows.is_empty() {
        let text = match app.link {
            Link::Waiting => "",
            _ if app.filter.text().is_empty() => {
                "no plugtop series in this Prometheus (check --match)"
            }
            _ => "no guest matches the filter",
        };
        lines.push(Line::raw(text));
        return lines;
    }
    let now = app.fleet.at;
    let page = (area.height as usize).saturating_sub(1);
    for (pos, &i) in app.rows.iter().enumerate().skip(app.offset).take(page) {
        let g = &app.fleet.guests[i];
        let troubles = g.troubles(now, app.stale_after);
        let text: String = cols
            .iter()
            .map(|&c| {
                let mut t = cell(g, c, now, app.stale_after);
                if c == FleetColumn::Cpus {
                    t = format!("{:<5} {}", t, sparkline(&g.online_history, SPARK));
                }
                if c == FleetColumn::Pool {
                    t = without_limit(&t, width(c)).into_owned();
                }
                fit(&t, width(c)) + " "
            })
            .collect();
        let mut style = match troubles.first() {
            Some(super::model::Trouble::Stopped) => Style::default().fg(Color::Red),
            Some(super::model::Trouble::Faulting) => Style::default().fg(Color::Magenta),
            Some(_) => Style::default().fg(Color::Yellow),
            None => Style::default(),
        };
        if pos == app.selected {
            style = style.add_modifier(Modifier::REVERSED);
        }
        lines.push(Line::styled(fit(&text, area.width as usize), style));
    }
    lines
}

/// What drift group `i` (0: the most common) runs and how many guests.
fn group_line(i: usize, g: &DriftGroup) -> String {
    if i == 0 {
        format!(
            "{} {} (crc {}): the most common",
            crate::report::words::count(g.members.len() as f64, "guest runs", "guests run"),
            g.files.join(", "),
            if g.crc32.is_empty() { "none" } else { &g.crc32 }
        )
    } else {
        drift_line(g)
    }
}

/// The drift view: every group, its files and guests; the diff when asked.
fn drift_lines(app: &FleetApp, area: Rect) -> Vec<Line<'static>> {
    let cols = area.width as usize;
    let mut lines = Vec::new();
    for (i, g) in app.drift.iter().enumerate() {
        let head = group_line(i, g);
        let mut style = if i == 0 {
            Style::default()
        } else {
            Style::default().fg(Color::Yellow)
        };
        if i == app.drift_selected {
            style = style.add_modifier(Modifier::REVERSED);
        }
        lines.push(Line::styled(fit(&terminal_safe(&head), cols), style));
        lines.push(Line::raw(fit(
            &format!("    {}", terminal_safe(&g.instances.join(" "))),
            cols,
        )));
    }
    match &app.diff {
        // Wrapped, never cut: what to do is in it (--rules-root).
        Some(Err(why)) => lines.extend(
            crate::report::words::wrap(
                &format!("no diff: {}", terminal_safe(why)),
                cols.saturating_sub(1),
            )
            .into_iter()
            .map(|l| Line::styled(l, Style::default().fg(Color::Red))),
        ),
        _ if app.drift.len() > 1 => lines.push(Line::raw(
            "D: diff the selected group's file against the most common",
        )),
        _ => lines.push(Line::raw("every guest runs the same rule file")),
    }
    lines
}

/// The diff view: the two groups compared (`-` the most common, `+` the
/// selected), the lines of the diff scrolled to, and where that is.
fn diff_lines(app: &FleetApp, area: Rect) -> Vec<Line<'static>> {
    use super::diff::RulesDiffLine as D;
    let cols = area.width as usize;
    let red = Style::default().fg(Color::Red);
    let green = Style::default().fg(Color::Green);
    let Some(Ok(diff)) = &app.diff else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let other = app.drift_selected.max(1);
    let compared = [(0, "- ", red), (other, "+ ", green)];
    for (i, sign, style) in compared {
        if let Some(g) = app.drift.get(i) {
            let text = format!("{sign}{}", group_line(i, g));
            lines.push(Line::styled(fit(&terminal_safe(&text), cols), style));
        }
    }
    let room = usize::from(area.height.saturating_sub(DIFF_CHROME)).max(1);
    let top = app.diff_scroll.min(diff.len());
    for l in diff.iter().skip(top).take(room) {
        let (text, style) = match l {
            D::Same(t) => (format!("  {t}"), Style::default()),
            D::Removed(t) => (format!("- {t}"), red),
            D::Added(t) => (format!("+ {t}"), green),
        };
        lines.push(Line::styled(fit(&terminal_safe(&text), cols), style));
    }
    let end = (top + room).min(diff.len());
    let (above, below) = (top, diff.len() - end);
    let place = if above + below == 0 {
        format!("all {} lines of the diff shown", diff.len())
    } else {
        format!(
            "lines {}–{end} of {}: {above} above ↑, {below} below ↓ (PgUp PgDn Home End)",
            top + 1,
            diff.len()
        )
    };
    lines.push(Line::styled(
        fit(&place, cols),
        Style::default().add_modifier(Modifier::DIM),
    ));
    lines
}

/// The key line, or the filter being typed. Keys are said whole, as many
/// as fit in `cols` (`?` among the first: the help says the rest), never
/// cut in the middle of a word.
fn footer(app: &FleetApp, cols: usize) -> Line<'static> {
    if app.filtering {
        // The cursor a block between characters.
        let (text, cursor) = (app.filter.text(), app.filter.cursor());
        let head: String = text.chars().take(cursor).collect();
        let typed = format!("{head}█{}", &text[head.len()..]);
        return Line::from(vec![
            Span::styled("/", Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(terminal_safe(&typed).into_owned()),
            Span::raw("  Enter keeps, Esc clears"),
        ]);
    }
    let kept = (app.view == FleetView::Table && !app.filter.text().is_empty()).then(|| {
        Span::styled(
            format!("/{}  ", terminal_safe(app.filter.text())),
            Style::default().fg(Color::Cyan),
        )
    });
    let mut left = cols;
    let mut spans: Vec<Span<'static>> = Vec::new();
    if let Some(kept) = kept {
        left = left.saturating_sub(kept.content.chars().count());
        spans.push(kept);
    }
    for (k, _, what) in KEYS
        .iter()
        .filter(|(_, views, _)| views.contains(&app.view))
    {
        let what = format!(" {what}  ");
        // The two spaces after the last key may fall off the edge.
        let need = k.chars().count() + what.trim_end().chars().count();
        if need > left {
            break;
        }
        left = left.saturating_sub(need + 2);
        spans.push(Span::styled(
            *k,
            Style::default().add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::raw(what));
    }
    Line::from(spans)
}
