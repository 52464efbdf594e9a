//! One guest in detail: its CPUs and pool over the window, each rule's
//! truth as a strip (█ held, · did not, blank not evaluated), when it
//! flapped, and the changes of decision with the comparisons that
//! flipped them. Pure render of [`FleetApp`].

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::app::FleetApp;
use super::fetch::GuestDetail;
use super::format::{age, fit, number, pages_to_mib, sparkline};
use crate::safe_text::terminal_safe;

/// Width of the labels left of the strips.
const LABEL: usize = 12;

/// `points` into `width` time buckets of `start..end` (the last value of
/// each bucket; `None` where there is none).
pub fn buckets(points: &[(f64, f64)], start: f64, end: f64, width: usize) -> Vec<Option<f64>> {
    let mut out = vec![None; width];
    let span = (end - start).max(1e-9);
    for &(t, v) in points {
        if t < start || t > end || width == 0 {
            continue;
        }
        let i = (((t - start) / span) * width as f64) as usize;
        out[i.min(width - 1)] = Some(v);
    }
    // Buckets between two points hold the one before (more columns than
    // points); before the first and after the last stay empty.
    let last = out.iter().rposition(Option::is_some).unwrap_or(0);
    let mut held = None;
    for cell in out.iter_mut().take(last) {
        match cell {
            Some(v) => held = Some(*v),
            None => *cell = held,
        }
    }
    out
}

fn strip(points: &[(f64, f64)], start: f64, end: f64, width: usize) -> String {
    buckets(points, start, end, width)
        .into_iter()
        .map(|v| match v {
            Some(v) if v != 0.0 => '█',
            Some(_) => '·',
            None => ' ',
        })
        .collect()
}

fn graph(points: &[(f64, f64)], start: f64, end: f64, width: usize) -> String {
    let cells = buckets(points, start, end, width);
    let filled: Vec<f64> = cells.iter().map(|v| v.unwrap_or(0.0)).collect();
    sparkline(&filled, width)
        .chars()
        .zip(&cells)
        .map(|(c, v)| if v.is_some() { c } else { ' ' })
        .collect()
}

/// The series' last value and range over the window; a stopped guest's
/// series that has no point left in the window shows the last value the
/// list shows (`last_seen`), marked so.
fn range_text(points: &[(f64, f64)], scale: fn(f64) -> f64, last_seen: Option<f64>) -> String {
    if points.is_empty() {
        return match last_seen {
            Some(v) => format!("stopped: last {}", number(Some(scale(v).round()))),
            None => "no data".into(),
        };
    }
    let lo = points
        .iter()
        .map(|p| scale(p.1))
        .fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| scale(p.1))
        .fold(f64::NEG_INFINITY, f64::max);
    let last = points.last().map(|p| scale(p.1));
    format!(
        "now {} ({}..{})",
        number(last.map(f64::round)),
        number(Some(lo.round())),
        number(Some(hi.round()))
    )
}

/// The detail view in `area`.
pub fn draw(frame: &mut Frame, app: &FleetApp, area: Rect) {
    let cols = area.width as usize;
    let Some(d) = &app.detail else {
        frame.render_widget(Paragraph::new("asking Prometheus for this guest…"), area);
        return;
    };
    let strip_w = cols.saturating_sub(LABEL + 1).min(120);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    // Ages from when the detail answered: the list's time stands still
    // while the detail is open.
    let ago = |t: f64| age(Some(app.now - t));
    let mut lines = vec![Line::styled(
        fit(
            &format!(
                // The keys are on the bottom line: a long instance
                // name cut them here (nu53 M14).
                "{} ({})  window {} ago … {} ago",
                terminal_safe(&d.instance),
                terminal_safe(&d.job),
                ago(d.start),
                ago(d.end),
            ),
            cols,
        ),
        bold,
    )];
    // A stopped guest's last values, as the list shows them.
    let stopped = app
        .fleet
        .guests
        .iter()
        .find(|g| g.job == d.job && g.instance == d.instance)
        .filter(|g| g.stopped(app.now, app.stale_after));
    let last = [
        stopped.and_then(|g| g.online),
        stopped.and_then(|g| g.present),
        stopped.and_then(|g| g.pool_pages),
    ];
    lines.extend(series_lines(d, last, strip_w, cols));
    lines.push(Line::styled(
        fit(
            "changes of decision: before → after; the comparisons that flipped, if any",
            cols,
        ),
        bold,
    ));
    if d.changes.is_empty() {
        lines.push(Line::raw("  none in this window"));
    }
    let room = (area.height as usize).saturating_sub(lines.len());
    let skip = d.changes.len().saturating_sub(room);
    for (t, why) in d.changes.iter().skip(skip) {
        lines.push(Line::raw(fit(
            &format!("{:>6} ago  {}", ago(*t), terminal_safe(why)),
            cols,
        )));
    }
    if !d.health.failed.is_empty() {
        lines.push(Line::styled(
            fit(
                &format!(
                    "{} of {} queries failed: {}",
                    d.health.failed.len(),
                    d.health.queries,
                    terminal_safe(&d.health.failed[0])
                ),
                cols,
            ),
            Style::default().fg(Color::Red),
        ));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// CPUs, pool, every rule and flapping over the window, one line each.
/// `last`: a stopped guest's last CPUs online, present and pool pages.
fn series_lines(
    d: &GuestDetail,
    last: [Option<f64>; 3],
    strip_w: usize,
    cols: usize,
) -> Vec<Line<'static>> {
    let label = |s: &str| fit(s, LABEL) + " ";
    // The graphs and the timelines end in the same column (now), so a
    // rule can be read against the CPUs (nu53 M14): the graphs leave room
    // for their value on the right, the timelines stop there too.
    let timeline_w = strip_w.saturating_sub(22);
    let mut lines = Vec::new();
    let graphed = |name: &str, points: &[(f64, f64)], value: fn(f64) -> f64, seen| {
        Line::raw(fit(
            &format!(
                "{}{}  {}",
                label(name),
                graph(points, d.start, d.end, timeline_w),
                range_text(points, value, seen)
            ),
            cols,
        ))
    };
    lines.push(graphed("CPUs online", &d.online, |x| x, last[0]));
    lines.push(graphed("present", &d.present, |x| x, last[1]));
    lines.push(graphed("pool MiB", &d.pool, pages_to_mib, last[2]));
    for (rule, points) in &d.rules {
        lines.push(Line::raw(fit(
            &format!(
                "{}{}",
                label(&terminal_safe(rule)),
                strip(points, d.start, d.end, timeline_w)
            ),
            cols,
        )));
    }
    lines.push(Line::styled(
        fit(
            &format!(
                "{}{}",
                label("flapping"),
                strip(&d.flapping, d.start, d.end, timeline_w)
            ),
            cols,
        ),
        Style::default().fg(Color::Yellow),
    ));
    lines
}
