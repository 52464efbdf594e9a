//! Graphs over the kept intervals: online CPUs and the CMM pool (the
//! pictures the white paper draws), CPU busy/idle and page scans, with the
//! actions marked and a time axis. They follow time travel: the interval
//! shown is in the picture and marked, and its values are the ones listed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::plot::{Window, bars, bounds, range, time_axis};
use super::theme::Theme;
use super::top_rule::TopRule;
use crate::engine::CpuAction;
use crate::report::trace::number;
use crate::tui::app::{App, Interval};
use crate::tui::graph_series::Metric;

/// Columns before the bars: the name, then the value of the interval shown.
const LABEL: usize = 26;

/// What one graph row needs besides its values.
struct Graph<'a> {
    name: &'a str,
    /// What the quantity can reach, when it has a bound.
    natural: Option<(f64, f64)>,
    style: Style,
}

/// Draws the graphs view.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let width = (area.width as usize).saturating_sub(LABEL).max(8);
    let timeline = app.timeline();
    let kept = timeline.history().series(Metric::OnlineCpus).len();
    // While time-travelling, the interval shown is this many back.
    let back = timeline.cursor().unwrap_or(0);
    let window = Window::showing(kept, width, back);
    let scale = app.graph_scale().name();
    let title = if back > 0 {
        format!(" Graphs: ▲ the interval shown ({back} back) · scale {scale} (z) ")
    } else {
        format!(
            " Graphs: {} intervals, newest at the right · scale {scale} (z) ",
            window.drawn
        )
    };
    let block = TopRule::new(Span::styled(title, theme.title()));
    let inner = TopRule::inner(area);
    frame.render_widget(block, area);
    let present = timeline
        .history()
        .latest()
        .map_or(0.0, |s| f64::from(s.present.count.max(0)));
    let cmm_max = app.rules().settings.cmm_max;
    let share = Some((0.0, 1.0));
    let graphs = [
        ("online CPUs", Metric::OnlineCpus, Some((0.0, present))),
        (
            "CMM pool (pages)",
            Metric::CmmPages,
            (cmm_max > 0).then_some((0.0, cmm_max as f64)),
        ),
        ("busy fraction", Metric::Busy, share),
        ("idle fraction", Metric::Idle, share),
        ("direct scans/tick", Metric::ScanDirect, None),
        ("kswapd scans/tick", Metric::ScanKswapd, None),
    ];
    let mut lines = Vec::new();
    for (name, metric, natural) in graphs {
        let values: Vec<f64> = timeline.history().series(metric).values().collect();
        let graph = Graph {
            name,
            natural,
            style: theme.bar(true),
        };
        lines.extend(graph_lines(
            &graph, &values, window, width, back, app, theme,
        ));
    }
    lines.push(actions(app.timeline().frames(), window, width, theme));
    if back > 0
        && let Some(column) = window.column(width, back)
    {
        lines.push(Line::styled(
            format!("{:<LABEL$}{}▲", "interval shown", " ".repeat(column)),
            theme.title(),
        ));
    }
    let frames = app.timeline().frames();
    lines.push(Line::from(vec![
        Span::styled(
            format!(
                "{:<LABEL$}",
                // The simulator's clock starts at the scenario's start, not
                // at a time of day.
                match app.source() {
                    crate::tui::app::SourceLabel::Sim { .. } => "time (sim)",
                    _ => "time (UTC)",
                }
            ),
            theme.dim(),
        ),
        Span::styled(
            time_axis(window, width, |k| frames.get(k).map(|f| f.sample.stamp)),
            theme.dim(),
        ),
    ]));
    for (name, series) in app.timeline().history().pinned() {
        let values: Vec<f64> = series.values().collect();
        let graph = Graph {
            name,
            natural: crate::tui::app::cpu_of_pin(name).map(|_| (0.0, 100.0)),
            style: theme.bar(false),
        };
        // One row each (no scale row), so that several fit at 80×24.
        lines.extend(
            graph_lines(&graph, &values, window, width, back, app, theme)
                .into_iter()
                .take(1),
        );
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// A graph's row (name, the value of the interval shown, the bars with
/// that interval's column picked out) and the row under it that says the
/// scale and the range of what is drawn.
fn graph_lines<'a>(
    graph: &Graph<'_>,
    values: &[f64],
    window: Window,
    width: usize,
    back: usize,
    app: &App,
    theme: &Theme,
) -> Vec<Line<'a>> {
    let drawn = window.of(values);
    let shown = values
        .len()
        .checked_sub(1 + back)
        .and_then(|i| values.get(i))
        .copied()
        .filter(|v| v.is_finite());
    let scale = bounds(app.graph_scale(), drawn, values, graph.natural);
    let plotted = bars(drawn, width, scale.unwrap_or((0.0, 0.0)));
    let mut row = vec![
        Span::styled(format!("{:<18}", graph.name), theme.text()),
        Span::styled(
            format!("{:>7} ", shown.map_or("-".into(), number)),
            theme.outcome(crate::rules::eval::Outcome::Number(0.0)),
        ),
    ];
    // The interval shown stands out in each graph while travelling.
    match window.column(width, back).filter(|_| back > 0) {
        Some(c) => {
            let chars: Vec<char> = plotted.chars().collect();
            let part = |r: std::ops::Range<usize>| chars[r].iter().collect::<String>();
            row.push(Span::styled(part(0..c), graph.style));
            row.push(Span::styled(part(c..c + 1), theme.selected()));
            row.push(Span::styled(part(c + 1..chars.len()), graph.style));
        }
        None => row.push(Span::styled(plotted, graph.style)),
    }
    let mut lines = vec![Line::from(row)];
    if let (Some((lo, hi)), Some((dlo, dhi))) = (scale, range(drawn)) {
        // A flat series has no range to speak of ("scale 0 .. 0, drawn 0 .. 0").
        let said = if dlo == dhi {
            format!("{:<LABEL$}every value drawn is {}", "", number(dlo))
        } else {
            format!(
                "{:<LABEL$}scale {} .. {}, drawn {} .. {}",
                "",
                number(lo),
                number(hi),
                number(dlo),
                number(dhi)
            )
        };
        lines.push(Line::styled(said, theme.dim()));
    }
    lines
}

/// The actions on the time axis, in the graphs' columns.
fn actions<'a>(
    frames: &std::collections::VecDeque<Interval>,
    window: Window,
    width: usize,
    theme: &Theme,
) -> Line<'a> {
    let marks: String = (0..width)
        .map(|c| {
            let Some(frame) = window.back_at(width, c).and_then(|k| frames.get(k)) else {
                return ' ';
            };
            let decision = frame.decision.as_ref();
            match decision.and_then(|d| d.cpu).map(|c| c.action) {
                Some(CpuAction::Plug) => '▲',
                Some(CpuAction::Unplug) => '▼',
                _ => match decision.and_then(|d| d.mem) {
                    Some(m) if m.cmm_pages_new > m.cmm_pages => '+',
                    Some(m) if m.cmm_pages_new < m.cmm_pages => '-',
                    _ => '·',
                },
            }
        })
        .collect();
    Line::from(vec![
        Span::styled(format!("{:<LABEL$}", "▲plug ▼unplug +- pool"), theme.dim()),
        Span::raw(marks),
    ])
}
