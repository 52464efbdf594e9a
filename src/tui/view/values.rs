//! The values the rules read: averages, scan rates, memory, the CMM pool,
//! and every user variable (pin one with `p` for a sparkline).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::fit;
use super::theme::Theme;
use super::top_rule::TopRule;
use crate::report::trace::number;
use crate::tui::app::App;
use crate::tui::graph_scale::GraphScale;
use crate::tui::graph_series::Metric;

/// A small sparkline of the `width` values up to the interval shown,
/// `back` intervals before the newest (0: the newest), so that it follows
/// time travel as the graphs do; scaled from zero so that steady values
/// look steady (as the graphs are by default).
pub fn sparkline(values: &[f64], back: usize, width: usize) -> String {
    let shown = &values[..values.len().saturating_sub(back)];
    let tail = &shown[shown.len().saturating_sub(width)..];
    let scale = super::plot::bounds(GraphScale::FromZero, tail, tail, None);
    super::plot::bars(tail, width, scale.unwrap_or((0.0, 0.0)))
}

/// A size in KiB as MiB, or as GiB from 10 GiB on, so a big guest's
/// "MemFree/MemTotal" still fits the panel at 80 columns.
fn mib(kb: f64) -> String {
    let mib = kb / 1024.0;
    if mib >= 10.0 * 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

/// The CMM pool: its size, how full against CMM_MAX, what the guest keeps.
fn pool_rows(rows: &mut Vec<(String, String)>, s: &crate::kernel::Sample, max: i64) {
    let kb = |name: &str| s.meminfo.get(name);
    match s.cmm_pages {
        Some(pages) => {
            let gauge_width = 10usize;
            let filled = if max > 0 {
                (pages.clamp(0, max) as usize * gauge_width) / max as usize
            } else {
                0
            };
            let guest = kb("MemTotal").map(|t| t - pages as f64 * 4.0);
            rows.push((
                "CMM pool (pages)".into(),
                format!("{pages} = {}", mib(pages as f64 * 4.0)),
            ));
            // An unset CMM_MAX reads as -1: no gauge against it.
            rows.push((
                "  of CMM_MAX".into(),
                if max < 0 {
                    "not set".to_string()
                } else {
                    format!(
                        "{}{} {max}",
                        "█".repeat(filled),
                        "·".repeat(gauge_width - filled)
                    )
                },
            ));
            rows.push(("  guest keeps".into(), guest.map_or("-".into(), mib)));
        }
        None => rows.push(("CMM pool".into(), "no cmm_pages file".into())),
    }
}

/// The rows that fit `room` lines of `width` columns, scrolled to the
/// selected variable, pinned ones with their sparkline. A row too long for
/// the panel wraps (a name or a value is never cut), and a line says how
/// many rows are above or below the view.
fn visible(
    rows: &[(String, String)],
    fixed: usize,
    variables: usize,
    (width, room): (usize, usize),
    app: &App,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let label_width = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(10)
        .min(19);
    // The cursor moves over the pinnable values (App::pinnable), which
    // include the two averages that lead the panel.
    let pinnable = app.pinnable();
    let cursor = app
        .selection()
        .value_cursor()
        .min(variables.saturating_sub(1));
    let selected = pinnable
        .get(cursor)
        .and_then(|name| rows.iter().position(|(n, _)| n == name))
        .unwrap_or(fixed);
    // Until the user moves the cursor, the panel shows its top.
    let focus = if app.selection().value_cursor() == 0 {
        0
    } else {
        selected
    };
    let items: Vec<Vec<Line<'static>>> = rows
        .iter()
        .enumerate()
        .map(|(i, (name, value))| {
            let pinned = app.timeline().pinned().iter().any(|p| p == name);
            // `format!("{name:<label_width$} ")`, without the formatter.
            let mut label = String::with_capacity(name.len() + label_width + 1);
            label.push_str(name);
            let pad = label_width.saturating_sub(name.chars().count()) + 1;
            label.extend(std::iter::repeat_n(' ', pad));
            let mut spans = vec![
                Span::styled(
                    label,
                    if i >= fixed {
                        theme.text()
                    } else {
                        theme.dim()
                    },
                ),
                Span::raw(value.clone()),
            ];
            if pinned {
                let series: Vec<f64> = app
                    .timeline()
                    .history()
                    .pinned()
                    .find(|(n, _)| n == name)
                    .map(|(_, s)| s.values().collect())
                    .unwrap_or_default();
                let back = app.timeline().cursor().unwrap_or(0);
                spans.push(Span::raw(format!(" {}", sparkline(&series, back, 16))));
            }
            let style = if i == selected
                && !pinnable.is_empty()
                && app.selection().selected_cpu().is_none()
            {
                theme.selected()
            } else {
                Style::default()
            };
            row_lines(spans, style, width)
        })
        .collect();
    fit::window(items, room, focus, theme.dim())
}

/// A row of the panel (its name's span first, then the value's) in rows of
/// `width` columns: one when it fits, else the name, then the value whole
/// on the rows after it, so a number is never parted from its unit ("per"
/// at the end of one row, "tick" on the next).
fn row_lines(mut spans: Vec<Span<'static>>, style: Style, width: usize) -> Vec<Line<'static>> {
    if spans.iter().map(Span::width).sum::<usize>() <= width {
        // What `fit::wrap_line` gives a line that fits, without a copy.
        return vec![Line::from(spans).style(style)];
    }
    if spans.len() < 2 {
        return fit::wrap_line(&Line::from(spans).style(style), width, 2);
    }
    let name = spans.remove(0);
    let mut value = vec![Span::raw("  ")];
    value.extend(spans);
    let mut rows = fit::wrap_line(&Line::from(vec![name]).style(style), width, 2);
    rows.extend(fit::wrap_line(&Line::from(value).style(style), width, 4));
    rows
}

/// Draws the values panel.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let block = TopRule::new(Span::styled(" Values ", theme.title()));
    let inner = TopRule::inner(area);
    frame.render_widget(block, area);
    let Some(f) = app.frame() else { return };
    let s = &f.sample;
    let var = |name: &str| {
        f.variables
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| *v)
    };
    // The interval under the cursor, not the newest: time travel shows it all.
    let before = app.previous_frame().map(|p| p.sample.as_ref());
    let metric =
        |m: Metric| crate::tui::graph_series::metric(m, before, s).filter(|v| v.is_finite());
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0));
    let mut rows: Vec<(String, String)> = Vec::new();
    match var("CP_ActiveAVG") {
        Some(v) => rows.push(("CP_ActiveAVG".into(), number(v))),
        None => rows.push(("busy (interval)".into(), pct(metric(Metric::Busy)))),
    }
    match var("CP_idleAVG") {
        Some(v) => rows.push(("CP_idleAVG".into(), number(v))),
        None => rows.push(("idle (interval)".into(), pct(metric(Metric::Idle)))),
    }
    rows.push(("steal".into(), pct(metric(Metric::Steal))));
    let rate = |m| metric(m).map_or("-".into(), |v| format!("{v:.1}"));
    rows.push((
        "scans kswapd/direct".into(),
        format!(
            "{}/{} per tick",
            rate(Metric::ScanKswapd),
            rate(Metric::ScanDirect)
        ),
    ));
    rows.push((
        "page steal".into(),
        format!("{} per tick", rate(Metric::PageSteal)),
    ));
    let kb = |name: &str| s.meminfo.get(name);
    rows.push((
        "MemFree/MemTotal".into(),
        format!(
            "{} / {}",
            kb("MemFree").map_or("-".into(), mib),
            kb("MemTotal").map_or("-".into(), mib)
        ),
    ));
    // A rule file's own avail_cache (in its own unit) is listed with the
    // variables; plugtop's is shown only when the file has none, so one
    // name never shows two values.
    if var("avail_cache").is_none() && !f.variables.iter().any(|(n, _)| n == "avail_cache") {
        rows.push((
            "avail_cache".into(),
            metric(Metric::AvailCache).map_or("-".into(), mib),
        ));
    }
    pool_rows(&mut rows, s, app.rules().settings.cmm_max);
    let fixed = rows.len();
    // Each variable in its unit, as its expression reads (kB for a sum of
    // meminfo lines, pages/tick for a scan rate).
    let units = app.variable_units();
    let unit_of = |name: &str| {
        app.rules()
            .variables
            .iter()
            .position(|v| v.name == name)
            .and_then(|i| units.get(i).copied())
            .unwrap_or(crate::report::units::ValueUnit::Unknown)
    };
    for (name, value) in &f.variables {
        if name == "CP_ActiveAVG" || name == "CP_idleAVG" {
            continue;
        }
        rows.push((
            name.clone(),
            value.map_or("-".into(), |v| unit_of(name).after(v, &number(v))),
        ));
    }
    let lines = visible(
        &rows,
        fixed,
        f.variables.len(),
        (fit::room(inner.width), inner.height as usize),
        app,
        theme,
    );
    super::put_lines(frame, inner, &lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// New-user finding 15: a 40-column cell showed
    /// "scans kswapd/direct 1223.7/844.0 per" / "  tick".
    #[test]
    fn a_value_too_long_for_its_row_goes_whole_to_the_next() {
        let text = |lines: Vec<Line<'static>>| -> Vec<String> {
            lines.iter().map(|l| l.to_string()).collect()
        };
        let spans = || {
            vec![
                Span::raw(format!("{:<19} ", "scans kswapd/direct")),
                Span::raw("1223.7/844.0 per tick"),
            ]
        };
        assert_eq!(
            text(row_lines(spans(), Style::default(), 39)),
            vec!["scans kswapd/direct ", "  1223.7/844.0 per tick"]
        );
        // Room enough: one row.
        assert_eq!(
            text(row_lines(spans(), Style::default(), 60)),
            vec!["scans kswapd/direct 1223.7/844.0 per tick"]
        );
    }
}
