//! The CPU panel: every CPU's share of the interval, offline CPUs as such.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::theme::Theme;
use crate::kernel::CpuTicks;
use crate::kernel::deltas::{CpuLoad, tick_delta};
use crate::tui::app::App;

/// A column: its heading and how to get it from the ticks.
type Column = (&'static str, fn(&CpuTicks) -> u64);

/// The columns shown, widest layout first.
const WIDE: [Column; 8] = [
    ("us", |t| t.user),
    ("ni", |t| t.nice),
    ("sy", |t| t.system),
    ("id", |t| t.idle),
    ("wa", |t| t.iowait),
    ("hi", |t| t.irq),
    ("si", |t| t.softirq),
    ("st", |t| t.steal),
];

fn row(
    name: &str,
    delta: &CpuTicks,
    total: u64,
    columns: usize,
    bar: usize,
    theme: &Theme,
) -> Line<'static> {
    let mut spans = vec![Span::raw(format!("{name:<6}"))];
    let pct = |v: u64| (v * 100 + total / 2).checked_div(total).unwrap_or(0);
    for (i, (_, get)) in WIDE.iter().enumerate() {
        if columns == 6 && (i == 5 || i == 6) {
            continue;
        }
        spans.push(Span::raw(format!("{:>4}", pct(get(delta)))));
    }
    let busy = pct(delta.user + delta.nice + delta.system + delta.irq + delta.softirq) as usize;
    let filled = (busy * bar).div_ceil(100).min(bar);
    spans.push(Span::raw(" "));
    spans.push(Span::styled("█".repeat(filled), theme.bar(true)));
    spans.push(Span::styled("·".repeat(bar - filled), theme.dim()));
    Line::from(spans)
}

/// CPU rows (the "… more" line included) in a CPU panel whose inner
/// height is `inner_height`: below the column heads and the `all` row.
pub fn rows_for_cpus(inner_height: u16) -> usize {
    (inner_height as usize).saturating_sub(2)
}

/// Draws the CPU panel.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let Some(f) = app.frame() else {
        frame.render_widget(Block::default().borders(Borders::TOP).title("CPUs"), area);
        return;
    };
    let s = &f.sample;
    let title = format!(
        " CPUs {}/{} · load {} · run {} ",
        s.online.count,
        s.present.count,
        crate::report::trace::number(s.loadavg),
        crate::report::trace::number(s.runnable)
    );
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let columns = if inner.width >= 60 { 8 } else { 6 };
    let bar = (inner.width as usize)
        .saturating_sub(6 + 4 * columns + 3)
        .max(1);
    let mut head = vec![Span::styled(format!("{:<6}", "%"), theme.dim())];
    for (i, (name, _)) in WIDE.iter().enumerate() {
        if columns == 6 && (i == 5 || i == 6) {
            continue;
        }
        head.push(Span::styled(format!("{name:>4}"), theme.dim()));
    }
    head.push(Span::styled(" busy", theme.dim()));
    let mut lines = vec![Line::from(head)];
    match app
        .previous_frame()
        .and_then(|p| tick_delta(&s.ticks, &p.sample.ticks))
    {
        Some(d) => lines.push(row("all", &d, d.total(), columns, bar, theme)),
        None => lines.push(Line::styled("all   (first reading)", theme.dim())),
    }
    let room = rows_for_cpus(inner.height);
    let total = f.loads.len();
    // Pages start where PgDn puts them (never pulled back to fill the
    // screen), so each CPU is on exactly one page.
    let scroll = app.cpu_scroll.min(total.saturating_sub(1));
    let overflow = total - scroll > room;
    let shown = if overflow {
        room.saturating_sub(1)
    } else {
        room
    };
    for load in f.loads.iter().skip(scroll).take(shown) {
        let name = format!("cpu{}", load.id());
        lines.push(match load {
            CpuLoad::Active { delta, total, .. } => row(&name, delta, *total, columns, bar, theme),
            CpuLoad::Fresh { .. } => Line::from(vec![
                Span::raw(format!("{name:<6}")),
                Span::styled("just came online: no delta yet", theme.dim()),
            ]),
            CpuLoad::Offline { .. } => Line::from(vec![
                Span::raw(format!("{name:<6}")),
                Span::styled("offline", theme.dim()),
            ]),
        });
    }
    let below = total.saturating_sub(scroll + shown);
    if overflow || scroll > 0 {
        let text = match (scroll, below) {
            (0, _) => format!("… {below} more below (PgDn)"),
            (above, 0) => format!("… {above} above (PgUp)"),
            (above, _) => format!("… {below} more below, {above} above (PgDn/PgUp)"),
        };
        if lines.len() < room + 2 {
            lines.push(Line::styled(text, theme.dim()));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
