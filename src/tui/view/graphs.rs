//! Graphs over the last intervals: online CPUs and the CMM pool (the
//! pictures the white paper draws), CPU busy/idle and page scans, with the
//! actions marked on a time axis.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::theme::Theme;
use super::values::sparkline;
use crate::engine::CpuAction;
use crate::history::Metric;
use crate::report::trace::number;
use crate::tui::app::App;

/// Draws the graphs view.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        format!(
            " Graphs: the last {} intervals, newest at the right ",
            area.width.saturating_sub(26)
        ),
        theme.title(),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = (inner.width as usize).saturating_sub(26).max(8);
    let graphs = [
        ("online CPUs", Metric::OnlineCpus),
        ("CMM pool (pages)", Metric::CmmPages),
        ("busy fraction", Metric::Busy),
        ("idle fraction", Metric::Idle),
        ("direct scans/tick", Metric::ScanDirect),
        ("kswapd scans/tick", Metric::ScanKswapd),
    ];
    let mut lines = Vec::new();
    for (name, metric) in graphs {
        let values: Vec<f64> = app.history.series(metric).values().collect();
        let last = values.iter().rev().find(|v| v.is_finite()).copied();
        let (lo, hi) = values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<18}"), theme.text()),
            Span::styled(
                format!("{:>7} ", last.map_or("-".into(), number)),
                theme.outcome(crate::rules::eval::Outcome::Number(0.0)),
            ),
            Span::styled(sparkline(&values, width), theme.bar(true)),
        ]));
        if hi >= lo {
            lines.push(Line::styled(
                format!("{:<26}range {} .. {}", "", number(lo), number(hi)),
                theme.dim(),
            ));
        }
    }
    // Actions on the time axis, aligned with the graphs' newest column.
    let actions: String = app
        .frames
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
    lines.push(Line::from(vec![
        Span::styled(
            format!("{:<26}", "actions ▲plug ▼unplug ±pool"),
            theme.dim(),
        ),
        Span::raw(actions),
    ]));
    for (name, series) in app.history.pinned() {
        let values: Vec<f64> = series.values().collect();
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<26}"), theme.text()),
            Span::styled(sparkline(&values, width), theme.bar(false)),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
