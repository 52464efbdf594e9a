//! Two header lines: where the data comes from and when, then the mode (in
//! a colour nobody misses), the views, and warnings.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use crate::engine::GroupStatus;
use crate::report::file_name;
use crate::tui::app::{App, SourceLabel, View};

/// Draws the header into `area` (two lines).
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let source = match app.source() {
        SourceLabel::Live(root) if root == "/" => "live".to_string(),
        SourceLabel::Live(root) => format!("root {root}"),
        SourceLabel::Replay { file, speed } => format!("replay {} ×{speed}", file_name(file)),
        // The host field already names the scenario.
        SourceLabel::Sim { speed, .. } if *speed == 1.0 => "sim".to_string(),
        SourceLabel::Sim { speed, .. } => format!("sim ×{speed}"),
    };
    let (interval, time) = match app.frame() {
        Some(f) => (format!("#{}", f.number), super::clock(f.sample.stamp)),
        None => ("-".into(), "--:--:--".into()),
    };
    let position = match app.timeline().cursor() {
        Some(k) if k > 0 => format!(" ({k} back)"),
        _ => String::new(),
    };
    let source = match app.source_status() {
        Some(status) => format!("{source} · {status}"),
        None => source,
    };
    let clock = format!("{interval}{position} {time}");
    let host = match &app.machine().guest {
        Some(guest) => format!("{} ({guest})", app.machine().host),
        None => app.machine().host.clone(),
    };
    let middle = header_middle(
        usize::from(area.width),
        &clock,
        [
            host.as_str(),
            app.machine().host.as_str(),
            app.machine().kernel.as_str(),
            file_name(app.file().name()),
            source.as_str(),
        ],
    );
    let first = Line::from(vec![
        Span::styled("plugtop ", theme.title()),
        Span::raw(middle),
        Span::styled(clock, theme.text()),
    ]);
    let second = second_line(app, theme);
    frame.render_widget(Paragraph::new(vec![first, Line::from(second)]), area);
}

/// The header's second line (mode, badges, view tabs), and which of its
/// spans is which view's tab: drawing and mouse clicks use the same spans.
fn second_line_spans(app: &App, theme: &Theme) -> (Vec<Span<'static>>, Vec<(usize, View)>) {
    let mut tabs = Vec::new();
    let mode = app.board().mode();
    let mut second = vec![
        Span::styled(
            format!(" {} ", mode.to_string().to_uppercase()),
            theme.mode(mode),
        ),
        Span::raw(format!(" every {}s ", app.rules().settings.update)),
    ];
    if app.timeline().paused() {
        second.push(Span::styled(" PAUSED ", theme.warning()));
        second.push(Span::raw(" "));
    }
    for f in app.board().flips().flapping() {
        second.push(Span::styled(
            format!(
                " {} FLAPPING ~{:.0} ",
                match f.what {
                    crate::control::flap::Quantity::Cpus => "CPUS",
                    crate::control::flap::Quantity::Pool => "POOL",
                },
                f.period
            ),
            theme.warning(),
        ));
        second.push(Span::raw(" "));
    }
    if app.board().pending().is_some() {
        let text = if app.proposal_hidden() {
            " PROPOSAL WAITING (Esc'd): y/n "
        } else {
            " PROPOSAL WAITING: y/n "
        };
        second.push(Span::styled(text, theme.mode(mode)));
        second.push(Span::raw(" "));
    }
    for v in View::ALL {
        let style = if v == app.selection().view() {
            theme.selected()
        } else {
            theme.dim()
        };
        second.push(Span::styled(format!(" {} ", v.title()), style));
        tabs.push((second.len() - 1, v));
    }
    for warning in warnings(app) {
        second.push(Span::raw(" "));
        second.push(Span::styled(format!(" {warning} "), theme.warning()));
    }
    (second, tabs)
}

fn second_line(app: &App, theme: &Theme) -> Vec<Span<'static>> {
    second_line_spans(app, theme).0
}

/// The view whose tab is at `column` of the header's second line.
pub fn tab_at(app: &App, column: u16) -> Option<View> {
    let theme = Theme { color: false };
    let (spans, tabs) = second_line_spans(app, &theme);
    let mut x = 0usize;
    for (i, span) in spans.iter().enumerate() {
        let w = span.content.chars().count();
        if usize::from(column) >= x && usize::from(column) < x + w {
            return tabs.iter().find(|(t, _)| *t == i).map(|(_, v)| *v);
        }
        x += w;
    }
    None
}

/// The header's middle (host and guest · kernel · rule file · source),
/// fitted so the interval number and the clock after it are never cut: the
/// kernel goes first, then the guest, then the host, then the rest is
/// shortened.
fn header_middle(
    width: usize,
    clock: &str,
    [with_guest, host, kernel, file, source]: [&str; 5],
) -> String {
    let room = width.saturating_sub("plugtop ".len() + clock.chars().count());
    let tries: [&[&str]; 6] = [
        &[with_guest, kernel, file, source],
        &[with_guest, file, source],
        &[host, kernel, file, source],
        &[host, file, source],
        &[file, source],
        &[source],
    ];
    for parts in tries {
        let text = format!("{} · ", parts.join(" · "));
        if text.chars().count() <= room {
            return text;
        }
    }
    let text = format!("{source} · ");
    if room < 2 {
        return String::new();
    }
    let mut cut: String = text.chars().take(room - 2).collect();
    cut.push_str("… ");
    cut
}

/// Badges: a disabled group (and why), a fault in the interval shown.
pub fn warnings(app: &App) -> Vec<String> {
    let mut out = Vec::new();
    if !app.rules().cpu_enabled {
        out.push("CPU OFF".to_string());
    }
    if !app.rules().mem_enabled {
        out.push(
            if app
                .timeline()
                .frames()
                .front()
                .is_some_and(|f| f.sample.cmm_pages.is_none())
            {
                "MEM OFF: no cmm_pages".to_string()
            } else {
                "MEM OFF".to_string()
            },
        );
    }
    if !app.kernel_lint().is_empty() {
        out.push(format!(
            "RULES NAME {} FIELD{} THIS KERNEL LACKS (log)",
            app.kernel_lint().len(),
            if app.kernel_lint().len() == 1 {
                ""
            } else {
                "S"
            }
        ));
    }
    if !app.hints().is_empty() {
        out.push(format!(
            "{} HINT{} (Flips)",
            app.hints().len(),
            if app.hints().len() == 1 { "" } else { "S" }
        ));
    }
    if !app.board().flips().loops().is_empty() {
        out.push("FEEDBACK LOOP".to_string());
    }
    if let Some(d) = app.frame().and_then(|f| f.decision.as_ref()) {
        if let Some(GroupStatus::Fault(f)) = d.cpu.map(|c| c.status) {
            out.push(format!("CPU FAULT: {f}"));
        }
        if let Some(GroupStatus::Fault(f)) = d.mem.map(|m| m.status) {
            out.push(format!("MEM FAULT: {f}"));
        }
    }
    out
}
