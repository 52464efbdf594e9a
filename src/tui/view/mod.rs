//! Drawing: a pure function of [`App`] into a ratatui frame. No clock, no
//! files: what is drawn depends only on the state, so every view can be
//! snapshot-tested.

pub mod boxes;
mod cpu;
mod cpu_meters;
mod cpu_page;
pub mod fit;
mod flips;
mod graphs;
mod header;
mod help;
pub use help::keys_inside as help_keys_inside;
#[cfg(test)]
mod hostile_text;
mod keep;
mod log;
mod overlay;
mod plain_lines;
mod plot;
mod report_box;
mod rules;
pub mod theme;
mod top_rule;
mod values;
pub mod whatif_editor;

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, View};
use super::cpu_panel::PanelSize;
use theme::Theme;

/// The smallest screen the full UI needs.
pub const MIN_WIDTH: u16 = 80;
/// The smallest screen the full UI needs.
pub const MIN_HEIGHT: u16 = 24;

/// The screen as text, as a 100×30 terminal would show it (for tests).
#[cfg(test)]
pub fn drawn_text(app: &App) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30))
        .unwrap_or_else(|e| panic!("{e}"));
    terminal
        .draw(|f| draw(f, app))
        .unwrap_or_else(|e| panic!("{e}"));
    let buffer = terminal.backend().buffer();
    let mut text = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let area = frame.area();
    let theme = Theme { color: app.color() };
    if too_small(frame, &theme, ", or use plugtop --batch") {
        return;
    }
    let rows = screen_rows(area);
    header::draw(frame, rows[0], app, &theme);
    match app.selection().view() {
        View::Overview => overview(frame, rows[1], app, &theme),
        View::Rules => rules::draw_tree(frame, rows[1], app, &theme),
        View::Graphs => graphs::draw(frame, rows[1], app, &theme),
        View::Flips => flips::draw(frame, rows[1], app, &theme),
        View::Log => log::draw(frame, rows[1], app, &theme, true),
    }
    status(frame, rows[2], app, &theme);
    overlay::draw(frame, area, app, &theme);
}

/// On a terminal smaller than [`MIN_WIDTH`]×[`MIN_HEIGHT`], says so in
/// place of the screen (`instead`: what else there is, after "make it
/// larger") and returns true. Every full screen plugtop draws (this one,
/// `plugtop train`) uses it.
pub fn too_small(frame: &mut Frame<'_>, theme: &Theme, instead: &str) -> bool {
    let area = frame.area();
    if area.width >= MIN_WIDTH && area.height >= MIN_HEIGHT {
        return false;
    }
    let msg = vec![
        Line::from(Span::styled(
            format!("plugtop needs at least {MIN_WIDTH}×{MIN_HEIGHT}"),
            theme.title(),
        )),
        Line::from(format!(
            "this terminal is {}×{}: make it larger{instead}",
            area.width, area.height
        )),
        Line::from("q quits"),
    ];
    frame.render_widget(
        Paragraph::new(msg).wrap(ratatui::widgets::Wrap { trim: true }),
        fit::text_area(area),
    );
    true
}

/// The screen's rows: header, the view, the status line.
fn screen_rows(area: Rect) -> std::rc::Rc<[Rect]> {
    Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(2),
            Constraint::Min(10),
            Constraint::Length(1),
        ])
        .split(area)
}

/// The overview's panels: CPUs, values, rules, log.
fn overview_areas(area: Rect) -> [Rect; 4] {
    let log_height = if area.height >= 30 { 8 } else { 4 };
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Min(6),
            Constraint::Length(7),
            Constraint::Length(log_height),
        ])
        .split(area);
    let left = if area.width >= 140 { 62 } else { 40 };
    let top = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Length(left), Constraint::Min(30)])
        .split(rows[0]);
    [top[0], top[1], rows[1], rows[2]]
}

/// What a mouse click lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A view's tab in the header.
    View(crate::tui::app::View),
    /// A rule's line in the overview's Rules panel.
    Rule(crate::rules::RuleKind),
    /// A CPU's row in the overview's CPU table, or its meter.
    Cpu(u32),
}

/// What a left click at `column`, `row` on a screen of `size` lands on,
/// found from the same layout the screen is drawn with.
pub fn click_target(app: &App, size: Rect, column: u16, row: u16) -> Option<Target> {
    let rows = screen_rows(size);
    if row == rows[0].y + 1 {
        return header::tab_at(app, column).map(Target::View);
    }
    if app.selection().view() == crate::tui::app::View::Overview {
        let [cpus, _, rules_area, _] = overview_areas(rows[1]);
        if let Some(id) = cpu::id_at(app, cpus, column, row) {
            return Some(Target::Cpu(id));
        }
        // The panel has a top border; then one line per rule, in order.
        if row > rules_area.y && row < rules_area.y + rules_area.height {
            let i = usize::from(row - rules_area.y - 1);
            return crate::rules::RuleKind::ALL.get(i).map(|k| Target::Rule(*k));
        }
    }
    None
}

/// A left click: a view's tab shows that view, a rule's line selects that
/// rule, a CPU's row selects that CPU (the app keeps the screen's size for
/// this).
pub fn click(app: &mut App, column: u16, row: u16) {
    let (w, h) = app.screen_size();
    match click_target(app, Rect::new(0, 0, w, h), column, row) {
        Some(Target::View(v)) => app.selection_mut().show(v),
        Some(Target::Rule(k)) => app.selection_mut().select_rule(k),
        Some(Target::Cpu(id)) => app.selection_mut().select_cpu(id),
        None => {}
    }
}

/// The inside of the CPU panel on a screen of `size`: what PgDn pages by
/// and `c` switches, as the panel is drawn.
pub fn cpu_panel_size(size: Rect) -> PanelSize {
    let view = screen_rows(size)[1];
    let cpus = overview_areas(view)[0];
    // The panel has a top border only.
    PanelSize {
        width: cpus.width,
        height: cpus.height.saturating_sub(1),
    }
}

/// The Log and Flips views' lists on a screen of `size`: their width and
/// rows (under the view's title), what one PgDn pages by. Their lines
/// wrap one column short of the edge, as they are drawn.
pub fn list_area(size: Rect) -> (u16, u16) {
    let view = screen_rows(size)[1];
    (fit::text_area(view).width, view.height.saturating_sub(1))
}

fn overview(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let [cpus, values_area, rules_area, log_area] = overview_areas(area);
    cpu::draw(frame, cpus, app, theme);
    values::draw(frame, values_area, app, theme);
    rules::draw_summary(frame, rules_area, app, theme);
    log::draw(frame, log_area, app, theme, false);
}

/// The status line: what is switched or selected first, then as many key
/// hints as still fit, so nothing is cut at 80 columns.
fn status(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let mut extras: Vec<Span<'_>> = Vec::new();
    // At the oldest interval kept `←` and `g` go no further: said, so that
    // a key that does nothing is never a silent one.
    let kept = app.timeline().frames().len();
    if kept > 1 && app.timeline().cursor() == Some(kept - 1) {
        extras.push(Span::styled(
            format!("  oldest of {kept} kept: none before"),
            theme.warning(),
        ));
    }
    // A write to the guest in progress (a CPU going offline can take
    // seconds): said here while keys go on working.
    if let Some(what) = app.working() {
        extras.push(Span::styled(format!("  … {what}"), theme.warning()));
    }
    if !app.mouse() {
        extras.push(Span::styled("  mouse off (m)", theme.warning()));
    }
    if let Some(id) = app.selection().selected_cpu() {
        extras.push(Span::styled(
            format!("  cpu{id}: p pins its busy %"),
            theme.title(),
        ));
    }
    if let Some(cpu) = app.own_cpu() {
        extras.push(Span::raw(format!("  plugtop {cpu:.2}% CPU")));
    }
    // The last column stays free (see `fit`); what is switched or selected
    // gives way from the end when even it does not fit.
    let width = fit::room(area.width);
    while extras.iter().map(Span::width).sum::<usize>() > width {
        extras.pop();
    }
    let taken: usize = extras.iter().map(Span::width).sum();
    let mut room = width.saturating_sub(taken);
    let mut hints = String::new();
    let paused = app.timeline().paused();
    for hint in STATUS_HINTS {
        // Paused, Space resumes (nu53 M9).
        let hint = if paused && hint == PAUSE_HINT {
            "Space resume"
        } else {
            hint
        };
        let gap = if hints.is_empty() { 0 } else { 2 };
        if hint.chars().count() + gap > room {
            break;
        }
        room -= hint.chars().count() + gap;
        if gap > 0 {
            hints.push_str("  ");
        }
        hints.push_str(hint);
    }
    let mut spans = vec![Span::styled(hints, theme.dim())];
    spans.extend(extras);
    plain_lines::put(frame.buffer_mut(), area, &[Line::from(spans)]);
}

/// Space's hint while the screen runs.
const PAUSE_HINT: &str = "Space pause";

/// The key hints of the status line, most needed first.
const STATUS_HINTS: [&str; 6] = [
    "? help",
    "q quit",
    "Tab view",
    PAUSE_HINT,
    "←→ time",
    "o s A mode",
];

/// Lines that are already fitted to `area` (one row each, no wrapping),
/// drawn straight into the buffer: cheaper than a Paragraph for the big
/// tables drawn every frame.
pub fn put_lines(frame: &mut Frame<'_>, area: Rect, lines: &[Line<'_>]) {
    let buffer = frame.buffer_mut();
    for (y, line) in (area.y..area.y + area.height).zip(lines) {
        plain_lines::set_line(buffer, area.x, y, line, area.width);
    }
}

/// A text input's text with its cursor, at most `room` characters each
/// side of it ([`crate::tui::line_input::LineInput::split_near`]).
pub fn typed_line(
    input: &crate::tui::line_input::LineInput,
    room: usize,
    theme: &Theme,
) -> Line<'static> {
    let (before, at, after) = input.split_near(room);
    Line::from(vec![
        Span::raw(before),
        Span::styled(at, theme.selected()),
        Span::raw(after),
    ])
}

/// A time stamp as HH:MM:SS (UTC).
pub fn clock(stamp: crate::kernel::Stamp) -> String {
    crate::report::time_of_day(stamp)
}
