//! The CPU panel: every CPU's share of the interval, offline CPUs as such.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

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
    let shares = shares(delta, total);
    for (i, share) in shares.iter().enumerate() {
        if columns == 6 && (i == 5 || i == 6) {
            continue;
        }
        spans.push(Span::raw(format!("{share:>4}")));
    }
    let busy = pct(delta.user + delta.nice + delta.system + delta.irq + delta.softirq) as usize;
    let filled = (busy * bar).div_ceil(100).min(bar);
    spans.push(Span::raw(" "));
    spans.push(Span::styled("█".repeat(filled), theme.bar(true)));
    spans.push(Span::styled("·".repeat(bar - filled), theme.dim()));
    Line::from(spans)
}

/// Each column's share of `total` in whole percent, rounded so that they
/// add up to the rounded share of all of them (largest remainders get the
/// spare points): a row never sums to 101.
fn shares(delta: &CpuTicks, total: u64) -> [u64; 8] {
    let mut out = [0u64; 8];
    if total == 0 {
        return out;
    }
    let values: Vec<u128> = WIDE.iter().map(|(_, get)| u128::from(get(delta))).collect();
    let total = u128::from(total);
    let sum: u128 = values.iter().sum();
    let target = (sum * 100 + total / 2) / total;
    let mut floors: Vec<(usize, u128, u128)> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (i, v * 100 / total, v * 100 % total))
        .collect();
    let mut left = target.saturating_sub(floors.iter().map(|f| f.1).sum());
    floors.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    for (_, floor, _) in floors.iter_mut() {
        if left == 0 {
            break;
        }
        *floor += 1;
        left -= 1;
    }
    for (i, floor, _) in floors {
        out[i] = u64::try_from(floor).unwrap_or(100);
    }
    out
}

/// CPU rows (the "… more" line included) in a CPU panel whose inner
/// height is `inner_height`: below the column heads and the `all` row.
pub fn rows_for_cpus(inner_height: u16) -> usize {
    (inner_height as usize).saturating_sub(2)
}

/// The first CPU shown and how many: pages start where PgDn puts them
/// (never pulled back to fill the screen), so each CPU is on exactly one
/// page; one row goes to "… more" when they do not all fit.
fn page(app: &App, total: usize, room: usize) -> (usize, usize) {
    let scroll = app.selection().cpu_scroll().min(total.saturating_sub(1));
    let shown = if total - scroll > room {
        room.saturating_sub(1)
    } else {
        room
    };
    (scroll, shown)
}

/// The CPU whose row is at `column`, `row` of a CPU panel drawn in
/// `area`, found with the same paging as the drawing.
pub fn id_at(app: &App, area: Rect, column: u16, row: u16) -> Option<u32> {
    let f = app.frame()?;
    // A top border, the column heads and the `all` row come first.
    let first = area.y + 3;
    if column < area.x
        || column >= area.x + area.width
        || row < first
        || row >= area.y + area.height
    {
        return None;
    }
    let room = rows_for_cpus(area.height.saturating_sub(1));
    let (scroll, shown) = page(app, f.loads.len(), room);
    let i = usize::from(row - first);
    (i < shown).then(|| f.loads.get(scroll + i).map(CpuLoad::id))?
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
    // Shares of this interval only (the rules' averages span several).
    let mut head = vec![Span::styled(format!("{:<6}", "% now"), theme.dim())];
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
    let (scroll, shown) = page(app, total, room);
    let overflow = total - scroll > room;
    for load in f.loads.iter().skip(scroll).take(shown) {
        let name = format!("cpu{}", load.id());
        let selected = app.selection().selected_cpu() == Some(load.id());
        let mut line = match load {
            CpuLoad::Active { delta, total, .. } => row(&name, delta, *total, columns, bar, theme),
            CpuLoad::Fresh { .. } => Line::from(vec![
                Span::raw(format!("{name:<6}")),
                Span::styled("just came online: no delta yet", theme.dim()),
            ]),
            CpuLoad::Offline { .. } => Line::from(vec![
                Span::raw(format!("{name:<6}")),
                Span::styled("offline", theme.dim()),
            ]),
        };
        if selected && let Some(first) = line.spans.first_mut() {
            first.style = theme.selected();
        }
        lines.push(line);
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
    super::put_lines(frame, inner, &lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_never_sum_past_a_hundred() {
        // Three equal thirds round to 33 each, 99 in all: one gets the spare.
        let d = CpuTicks {
            user: 1,
            system: 1,
            idle: 1,
            ..CpuTicks::default()
        };
        assert_eq!(shares(&d, 3).iter().sum::<u64>(), 100);
        // 0.5% shares everywhere would each round up to 1, 8 in all.
        let d = CpuTicks {
            user: 995,
            nice: 1,
            system: 1,
            idle: 1,
            iowait: 1,
            irq: 1,
            ..CpuTicks::default()
        };
        assert_eq!(shares(&d, 1000).iter().sum::<u64>(), 100);
        assert_eq!(shares(&CpuTicks::default(), 0), [0; 8]);
    }
}
