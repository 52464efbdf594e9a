//! Graphs over the last intervals: online CPUs and the CMM pool (the
//! pictures the white paper draws), CPU busy/idle and page scans, with the
//! actions marked on a time axis.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::theme::Theme;
use super::values::{sparkline, window_range};
use crate::engine::CpuAction;
use crate::history::Metric;
use crate::report::trace::number;
use crate::tui::app::App;

/// Draws the graphs view.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let width = (area.width as usize).saturating_sub(26).max(8);
    let kept = app.timeline().history().series(Metric::OnlineCpus).len();
    let drawn = kept.min(width);
    // While time-travelling, the interval shown is this many columns left
    // of the newest one.
    let back = app.timeline().cursor().unwrap_or(0);
    let title = if back > 0 {
        format!(" Graphs: last {drawn} intervals, newest right, ▲ the one shown ({back} back) ")
    } else {
        format!(" Graphs: the last {drawn} intervals, newest at the right ")
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let graphs = [
        ("online CPUs", Metric::OnlineCpus),
        ("CMM pool (pages)", Metric::CmmPages),
        ("busy fraction", Metric::Busy),
        ("idle fraction", Metric::Idle),
        ("direct scans/tick", Metric::ScanDirect),
        ("kswapd scans/tick", Metric::ScanKswapd),
    ];
    let value_at = |values: &[f64]| {
        values
            .len()
            .checked_sub(1 + back)
            .and_then(|i| values.get(i))
            .copied()
            .filter(|v| v.is_finite())
    };
    let mut lines = Vec::new();
    for (name, metric) in graphs {
        let values: Vec<f64> = app.timeline().history().series(metric).values().collect();
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<18}"), theme.text()),
            Span::styled(
                format!("{:>7} ", value_at(&values).map_or("-".into(), number)),
                theme.outcome(crate::rules::eval::Outcome::Number(0.0)),
            ),
            Span::styled(sparkline(&values, width), theme.bar(true)),
        ]));
        // The range of what is drawn, not of all time.
        let window = &values[values.len().saturating_sub(width)..];
        if let Some((lo, hi)) = window_range(window) {
            lines.push(Line::styled(
                format!("{:<26}range {} .. {}", "", number(lo), number(hi)),
                theme.dim(),
            ));
        }
    }
    // Actions on the time axis, right-aligned like the graphs.
    let actions: String = app
        .timeline()
        .frames()
        .iter()
        .take(width)
        .rev()
        .map(
            |f| match f.decision.as_ref().and_then(|d| d.cpu).map(|c| c.action) {
                Some(CpuAction::Plug) => '▲',
                Some(CpuAction::Unplug) => '▼',
                _ => match f.decision.as_ref().and_then(|d| d.mem) {
                    Some(m) if m.cmm_pages_new > m.cmm_pages => '+',
                    Some(m) if m.cmm_pages_new < m.cmm_pages => '-',
                    _ => '·',
                },
            },
        )
        .collect();
    let pad = width.saturating_sub(actions.chars().count());
    lines.push(Line::from(vec![
        Span::styled(format!("{:<26}", "actions ▲▼ CPU, +- pool"), theme.dim()),
        Span::raw(" ".repeat(pad)),
        Span::raw(actions),
    ]));
    if back > 0 && back < width {
        lines.push(Line::styled(
            format!("{:<26}{}▲", "interval shown", " ".repeat(width - 1 - back)),
            theme.title(),
        ));
    }
    for (name, series) in app.timeline().history().pinned() {
        let values: Vec<f64> = series.values().collect();
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<18}"), theme.text()),
            Span::styled(
                format!("{:>7} ", value_at(&values).map_or("-".into(), number)),
                theme.outcome(crate::rules::eval::Outcome::Number(0.0)),
            ),
            Span::styled(sparkline(&values, width), theme.bar(false)),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
