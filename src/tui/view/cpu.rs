//! The CPU panel: every CPU's share of the interval, offline CPUs as such;
//! the per-CPU table while every CPU fits in it, compact meters
//! ([`super::cpu_meters`]) when not, `c` for the other, `b` to sort.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::cpu_page::{Page, more_line};
use super::fit::pad_right;
use super::theme::Theme;
use super::top_rule::TopRule;
use crate::kernel::CpuTicks;
use crate::kernel::deltas::{CpuLoad, tick_delta};
use crate::tui::app::App;
use crate::tui::cpu_panel::{CpuShape, MARGIN, PanelSize, arrange, busy_ticks};

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

/// One row of the table: the tick columns and the busy bar.
fn row(
    name: &str,
    delta: &CpuTicks,
    total: u64,
    columns: usize,
    bar: usize,
    theme: &Theme,
) -> Line<'static> {
    let mut spans = vec![Span::raw(pad_right(name, 6))];
    let pct = |v: u64| {
        let (v, t) = (u128::from(v), u128::from(total));
        u64::try_from((v * 100 + t / 2).checked_div(t).unwrap_or(0)).unwrap_or(u64::MAX)
    };
    // The columns, each `{share:>4}`, and the blank before the bar: one
    // span (the same cells as a span each), without the formatter.
    let shares = shares(delta, total);
    let mut text = String::with_capacity(4 * columns + 1);
    let mut digits = itoa::Buffer::new();
    for (i, share) in shares.iter().enumerate() {
        if columns == 6 && (i == 5 || i == 6) {
            continue;
        }
        let share = digits.format(*share);
        text.extend(std::iter::repeat_n(' ', 4usize.saturating_sub(share.len())));
        text.push_str(share);
    }
    text.push(' ');
    spans.push(Span::raw(text));
    let busy = pct(busy_ticks(delta)) as usize;
    let filled = (busy * bar).div_ceil(100).min(bar);
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
    let values: [u128; 8] = WIDE.map(|(_, get)| u128::from(get(delta)));
    let total = u128::from(total);
    let sum: u128 = values.iter().sum();
    let target = (sum * 100 + total / 2) / total;
    let mut floors: [(usize, u128, u128); 8] = [(0, 0, 0); 8];
    for (i, (floor, v)) in floors.iter_mut().zip(values).enumerate() {
        *floor = (i, v * 100 / total, v * 100 % total);
    }
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

/// The inside of a CPU panel drawn in `area`: below its top border.
fn inner_of(area: Rect) -> Rect {
    TopRule::inner(area)
}

/// Where the meters go in the panel's inside: a margin kept at the right.
fn meters_area(inner: Rect) -> Rect {
    Rect {
        width: inner.width.saturating_sub(MARGIN),
        ..inner
    }
}

fn panel_size(inner: Rect) -> PanelSize {
    PanelSize {
        width: inner.width,
        height: inner.height,
    }
}

/// The CPU whose row or meter is at `column`, `row` of a CPU panel drawn
/// in `area`, found with the same layout and paging as the drawing.
pub fn id_at(app: &App, area: Rect, column: u16, row: u16) -> Option<u32> {
    let f = app.frame()?;
    let inner = inner_of(area);
    if column < inner.x || column >= inner.right() || row < inner.y || row >= inner.bottom() {
        return None;
    }
    let panel = app.selection().cpus();
    let shape = CpuShape::of(panel.layout(), panel_size(inner), f.loads.get());
    let order = arrange(panel.order(), f.loads.get());
    let page = Page::of(app, &order, &shape);
    match shape {
        CpuShape::Table { .. } => {
            // The column heads and the `all` row come first.
            let i = usize::from(row - inner.y).checked_sub(2)?;
            page.cpus.get(i).map(|l| l.id())
        }
        CpuShape::Meters(grid) => {
            super::cpu_meters::id_at(&grid, meters_area(inner), column, row, &page)
        }
    }
}

/// Draws the CPU panel: the table, or meters when the CPUs do not all fit
/// in it (or `c` asked for them).
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let Some(f) = app.frame() else {
        frame.render_widget(TopRule::new("CPUs"), area);
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
    let block = TopRule::new(Span::styled(title, theme.title()));
    let inner = TopRule::inner(area);
    frame.render_widget(block, area);
    let panel = app.selection().cpus();
    let shape = CpuShape::of(panel.layout(), panel_size(inner), f.loads.get());
    let order = arrange(panel.order(), f.loads.get());
    let page = Page::of(app, &order, &shape);
    let all = app
        .previous_frame()
        .and_then(|p| tick_delta(&s.ticks, &p.sample.ticks));
    match shape {
        CpuShape::Table { rows } => table(frame, inner, app, theme, &page, rows, all),
        CpuShape::Meters(grid) => {
            let area = meters_area(inner);
            super::cpu_meters::draw(frame, area, app, theme, &grid, &page, all);
        }
    }
}

/// The per-CPU table: a row a CPU with every tick column, paged.
fn table(
    frame: &mut Frame<'_>,
    inner: Rect,
    app: &App,
    theme: &Theme,
    page: &Page<'_>,
    rows: usize,
    all: Option<CpuTicks>,
) {
    let columns = if inner.width >= 60 { 8 } else { 6 };
    let bar = (inner.width as usize)
        .saturating_sub(6 + 4 * columns + 3)
        .max(1);
    // Shares of this interval only (the rules' averages span several).
    // "then" while time-travelling: the header names the interval.
    let when = if app.timeline().travelling() {
        "% then"
    } else {
        "% now"
    };
    let mut head = vec![Span::styled(format!("{when:<6}"), theme.dim())];
    for (i, (name, _)) in WIDE.iter().enumerate() {
        if columns == 6 && (i == 5 || i == 6) {
            continue;
        }
        head.push(Span::styled(format!("{name:>4}"), theme.dim()));
    }
    head.push(Span::styled(" busy", theme.dim()));
    let mut lines = vec![Line::from(head)];
    match all {
        Some(d) => lines.push(row("all", &d, d.total(), columns, bar, theme)),
        None => lines.push(Line::styled("all   (first reading)", theme.dim())),
    }
    for load in page.cpus {
        let name = format!("cpu{}", load.id());
        let selected = app.selection().selected_cpu() == Some(load.id());
        let mut line = match load {
            CpuLoad::Active { delta, total, .. } => row(&name, delta, *total, columns, bar, theme),
            CpuLoad::Fresh { .. } => Line::from(vec![
                Span::raw(pad_right(&name, 6)),
                Span::styled("just came online: no delta yet", theme.dim()),
            ]),
            CpuLoad::Offline { .. } => Line::from(vec![
                Span::raw(pad_right(&name, 6)),
                Span::styled("offline", theme.dim()),
            ]),
        };
        if selected && let Some(first) = line.spans.first_mut() {
            first.style = theme.selected();
        }
        lines.push(line);
    }
    if let Some(text) = more_line(page, "; c meters", usize::from(inner.width))
        && lines.len() < rows + 2
    {
        lines.push(Line::styled(text, theme.dim()));
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
