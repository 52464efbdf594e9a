//! The truth trace: each rule's result and why (the overview), and the
//! whole tree of one rule with every sub-expression's value (the rules view).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::theme::Theme;
use crate::engine::{CpuAction, GroupStatus};
use crate::report::trace;
use crate::rules::RuleKind;
use crate::rules::eval::Outcome;
use crate::tui::app::{App, Interval};

/// Why an unevaluated rule was not evaluated.
fn not_evaluated_reason(f: &Interval, kind: RuleKind) -> &'static str {
    let d = f.decision.as_ref();
    match kind {
        RuleKind::Hotunplug if d.and_then(|d| d.cpu).and_then(|c| c.hotplug) == Some(true) => {
            "HOTPLUG had priority"
        }
        RuleKind::Memunplug if d.and_then(|d| d.mem).and_then(|m| m.memplug) == Some(true) => {
            "MEMPLUG had priority"
        }
        _ if d.is_none() => "history still filling",
        _ => "its group did not run",
    }
}

/// The limit that blocked a CPU action, if one did.
pub fn limit_note(app: &App, f: &Interval) -> Option<String> {
    let cpu = f.decision.as_ref()?.cpu?;
    if !cpu.limited || cpu.action != CpuAction::None {
        return None;
    }
    let s = app.rules().settings;
    Some(if cpu.hotplug == Some(true) {
        format!(
            "HOTPLUG true, but CPU_MAX reached ({} of {} online)",
            cpu.onumcpus, s.cpu_max
        )
    } else {
        format!(
            "HOTUNPLUG true, but CPU_MIN reached ({} online, CPU_MIN {})",
            cpu.onumcpus, s.cpu_min
        )
    })
}

/// One line per rule: result and the reason, for the overview.
pub fn draw_summary(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        " Rules (t selects, Tab for the trace) ",
        theme.title(),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(f) = app.frame() else { return };
    let limit = limit_note(app, f).map(|note| {
        let blocked = f
            .decision
            .as_ref()
            .and_then(|d| d.cpu)
            .and_then(|c| c.hotplug);
        let kind = if blocked == Some(true) {
            RuleKind::Hotplug
        } else {
            RuleKind::Hotunplug
        };
        let short = note
            .split_once(", but ")
            .map_or(note.clone(), |(_, limit)| limit.to_string());
        (kind, short)
    });
    let mut lines = Vec::new();
    for kind in RuleKind::ALL {
        let Some(rule) = app.rules().rule(kind) else {
            lines.push(Line::from(vec![
                Span::raw(" "),
                Span::styled(format!("{:<10}", kind.file_name()), theme.dim()),
                Span::styled("not set", theme.dim()),
            ]));
            continue;
        };
        let outcome = f.trace.outcome(rule.root);
        let text = match outcome {
            Outcome::NotEvaluated => format!("not evaluated: {}", not_evaluated_reason(f, kind)),
            _ => trace::explain(app.rules(), app.file(), &f.trace, kind)
                .map(|e| {
                    e.trim_start_matches(kind.file_name())
                        .trim_start()
                        .to_string()
                })
                .unwrap_or_default(),
        };
        let marker = if kind == app.selection().rule() {
            "▸"
        } else {
            " "
        };
        let mut spans = vec![
            Span::raw(marker),
            Span::styled(format!("{:<10}", kind.file_name()), theme.text()),
        ];
        // A limit that blocked the action leads that rule's own line (every
        // rule keeps its line).
        if let Some(note) = limit.as_ref().filter(|(k, _)| *k == kind) {
            spans.push(Span::styled(format!("{}; ", note.1), theme.warning()));
        }
        spans.push(Span::styled(text, theme.outcome(outcome)));
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// One row of the truth trace: indentation, fold marker, text, value.
fn tree_line<'a>(app: &App, r: &'a trace::Row, selected: bool, theme: &Theme) -> Line<'a> {
    let indent = if r.depth > trace::MAX_INDENT {
        format!("{}[depth {}] ", "  ".repeat(trace::MAX_INDENT), r.depth)
    } else {
        "  ".repeat(r.depth)
    };
    let fold = if r.variable {
        if app.selection().is_expanded(r.node) {
            "▾ "
        } else {
            "▸ "
        }
    } else {
        "  "
    };
    let label_style = if r.deciding {
        theme.deciding()
    } else {
        theme.text()
    };
    let mut spans = vec![
        Span::raw(indent),
        Span::raw(fold),
        Span::styled(r.label.clone(), label_style),
    ];
    if !r.constant {
        let value = match r.outcome {
            Outcome::NotEvaluated => "not evaluated (short-circuit)".to_string(),
            o => trace::outcome(o),
        };
        spans.push(Span::raw(" = "));
        spans.push(Span::styled(value, theme.outcome(r.outcome)));
    }
    let line = Line::from(spans);
    if selected {
        line.style(theme.selected())
    } else {
        line
    }
}

/// The full tree of the selected rule.
pub fn draw_tree(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let kind = app.selection().rule();
    let title = format!(
        " Truth trace of {} (t next rule, ↑↓ move, Enter expands the variable) ",
        kind.file_name()
    );
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(f) = app.frame() else { return };
    let Some(rule) = app.rules().rule(kind) else {
        frame.render_widget(
            Paragraph::new(format!(
                "{} is not set in {}",
                kind.file_name(),
                app.file().name()
            )),
            inner,
        );
        return;
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{} = ", kind.file_name()), theme.title()),
        Span::raw(app.file().snippet(rule.value_span)),
    ])];
    let root = f.trace.outcome(rule.root);
    let headline = match root {
        Outcome::NotEvaluated => format!("not evaluated: {}", not_evaluated_reason(f, kind)),
        _ => trace::explain(app.rules(), app.file(), &f.trace, kind).unwrap_or_default(),
    };
    lines.push(Line::styled(headline, theme.outcome(root)));
    if let Some(note) = limit_note(app, f).filter(|_| kind.index() < 2) {
        lines.push(Line::styled(note, theme.warning()));
    }
    if let Some(GroupStatus::Fault(fault)) = f.decision.as_ref().and_then(|d| {
        if kind.index() < 2 {
            d.cpu.map(|c| c.status)
        } else {
            d.mem.map(|m| m.status)
        }
    }) {
        lines.push(Line::styled(
            format!("a {fault} fault skipped this group in this interval"),
            theme.outcome(Outcome::Fault(fault)),
        ));
    }
    let rows = trace::rows(app.rules(), app.file(), &f.trace, kind, &|n| {
        app.selection().is_expanded(n)
    });
    let cursor = app
        .selection()
        .tree_scroll()
        .min(rows.len().saturating_sub(1));
    let body: Vec<Line<'_>> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| tree_line(app, r, i == cursor, theme))
        .collect();
    let room = (inner.height as usize).saturating_sub(lines.len());
    // The cursor row (↑↓) stays on screen.
    let scroll = cursor
        .saturating_sub(room.saturating_sub(1))
        .min(body.len().saturating_sub(room));
    lines.extend(body.into_iter().skip(scroll).take(room));
    frame.render_widget(Paragraph::new(lines), inner);
}
