//! The truth trace: each rule's result and why (the overview), and the
//! whole tree of one rule with every sub-expression's value (the rules view).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::fit;
use super::theme::Theme;
use super::top_rule::TopRule;
use crate::engine::{CpuAction, GroupStatus};
use crate::report::fault_words::{CPU_RULES, MEMORY_RULES, group_fault};
use crate::report::trace;
use crate::rules::RuleKind;
use crate::rules::eval::Outcome;
use crate::tui::app::{App, Interval};
use crate::tui::draw_memo::UnitMemo;

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
pub fn limit_note(f: &Interval) -> Option<String> {
    let cpu = f.decision.as_ref()?.cpu?;
    if !cpu.limited || cpu.action != CpuAction::None {
        return None;
    }
    let s = f.rules.settings;
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
    let block = TopRule::new(Span::styled(
        " Rules (t selects, Tab for the trace) ",
        theme.title(),
    ));
    let inner = TopRule::inner(area);
    frame.render_widget(block, area);
    let Some(f) = app.frame() else { return };
    let limit = limit_note(f).map(|note| {
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
        // Where the full note leaves the rule's values no room: the limit
        // and its value alone (the online count is the CPU panel's).
        let s = f.rules.settings;
        let brief = if kind == RuleKind::Hotplug {
            format!("CPU_MAX {} reached", s.cpu_max)
        } else {
            format!("CPU_MIN {} reached", s.cpu_min)
        };
        (kind, short, brief)
    });
    // One phrasing for every line: when one has room only for "false:",
    // none says "false because" (lines one above the other read alike).
    let mut because = true;
    let mut lines = summary_lines(app, f, inner, &limit, theme, &mut because);
    if !because {
        lines = summary_lines(app, f, inner, &limit, theme, &mut because);
    }
    super::plain_lines::put(frame.buffer_mut(), inner, &lines);
}

/// The summary's lines, one a rule; `because` says whether the lines may
/// say "because" (else ": "), and is cleared when a line had no room for
/// it.
fn summary_lines(
    app: &App,
    f: &Interval,
    inner: Rect,
    limit: &Option<(RuleKind, String, String)>,
    theme: &Theme,
    because: &mut bool,
) -> Vec<Line<'static>> {
    let allowed = *because;
    let mut lines = Vec::new();
    for kind in RuleKind::ALL {
        let Some(rule) = f.rules.rule(kind) else {
            lines.push(Line::from(vec![
                Span::raw(" "),
                Span::styled(format!("{:<10}", kind.file_name()), theme.dim()),
                Span::styled("not set", theme.dim()),
            ]));
            continue;
        };
        let outcome = f.trace.outcome(rule.root);
        // What is left after the marker, the name and a limit's note.
        let room_beside = |note: &Option<String>| {
            fit::room(inner.width)
                .saturating_sub(11 + note.as_deref().map_or(0, fit::cols))
                .max(1)
        };
        let mut note = limit
            .as_ref()
            .filter(|(k, _, _)| *k == kind)
            .map(|(_, n, _)| format!("{n}; "));
        let text = match outcome {
            Outcome::NotEvaluated => fit::ellipsize(
                &format!("not evaluated: {}", not_evaluated_reason(f, kind)),
                room_beside(&note),
            ),
            _ => {
                let units = app.node_units();
                let mut said = summary_text(f, kind, room_beside(&note), units, allowed);
                // A note that leaves a value cut gives way to its brief
                // form first (nu54 F4: the threshold was lost).
                if let (true, true, Some((_, _, brief))) = (said.2, note.is_some(), limit.as_ref())
                {
                    note = Some(format!("{brief}; "));
                    said = summary_text(f, kind, room_beside(&note), units, allowed);
                }
                *because &= said.1;
                said.0
            }
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
        if let Some(note) = note {
            spans.push(Span::styled(note, theme.warning()));
        }
        spans.push(Span::styled(text, theme.outcome(outcome)));
        lines.push(Line::from(spans));
    }
    lines
}

/// A rule's explanation without its name, in `room` columns: the
/// sub-expressions' texts give way before any value does, and the whole
/// explanation is in the Rules view (Tab). With `because` false it says
/// ": " where it would say " because "; with it, whether it kept the word
/// (false when the room made it give way), and whether it was cut.
fn summary_text(
    f: &Interval,
    kind: RuleKind,
    room: usize,
    units: &UnitMemo,
    because: bool,
) -> (String, bool, bool) {
    const BECAUSE: &str = " because ";
    let mut unit_of = |node| units.unit_of(&f.rules, node);
    let Some(mut pieces) =
        trace::explain_pieces_with(&f.rules, &f.file, &f.trace, kind, &mut unit_of)
    else {
        return (String::new(), true, false);
    };
    let has = pieces.iter().any(|p| p.text == BECAUSE);
    if !because {
        for p in pieces.iter_mut().filter(|p| p.text == BECAUSE) {
            p.text = p.short.unwrap_or(": ").to_string();
        }
    }
    if let Some(first) = pieces.first_mut() {
        first.text = first
            .text
            .trim_start_matches(kind.file_name())
            .trim_start()
            .to_string();
    }
    let (text, cut) = fit::pieces_cut(&pieces, room);
    let kept = !has || text.contains(BECAUSE);
    (text, kept, cut)
}

/// What "not evaluated" means for a row of a rule whose own result is
/// `root`: the rule as a whole did not run (the headline says why), a
/// short-circuit left the row out, or a fault stopped the evaluation first.
fn why_not_evaluated(root: Outcome, r: &trace::Row) -> &'static str {
    match root {
        Outcome::NotEvaluated => "not evaluated",
        _ if r.short_circuited => "not evaluated (short-circuit)",
        Outcome::Aborted | Outcome::Fault(_) | Outcome::Fatal => {
            "not evaluated (the evaluation stopped before it)"
        }
        _ => "not evaluated",
    }
}

/// One row of the truth trace: indentation, fold marker, text, value.
fn tree_line<'a>(
    app: &App,
    r: &'a trace::Row,
    root: Outcome,
    selected: bool,
    theme: &Theme,
) -> Line<'a> {
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
            Outcome::NotEvaluated => why_not_evaluated(root, r).to_string(),
            o => trace::measured(o, r.unit),
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
    let block = TopRule::new(Span::styled(title, theme.title()));
    let inner = TopRule::inner(area);
    frame.render_widget(block, area);
    let Some(f) = app.frame() else { return };
    let Some(rule) = f.rules.rule(kind) else {
        frame.render_widget(
            Paragraph::new(format!(
                "{} is not set in {}",
                kind.file_name(),
                f.file.name()
            )),
            inner,
        );
        return;
    };
    let width = fit::room(inner.width);
    let mut head = vec![Line::from(vec![
        Span::styled(format!("{} = ", kind.file_name()), theme.title()),
        Span::raw(f.file.snippet(rule.value_span)),
    ])];
    let root = f.trace.outcome(rule.root);
    let headline = match root {
        Outcome::NotEvaluated => format!(
            "{} not evaluated: {}",
            kind.file_name(),
            not_evaluated_reason(f, kind)
        ),
        _ => trace::explain(&f.rules, &f.file, &f.trace, kind).unwrap_or_default(),
    };
    head.push(Line::styled(headline, theme.outcome(root)));
    if let Some(note) = limit_note(f).filter(|_| kind.index() < 2) {
        head.push(Line::styled(note, theme.warning()));
    }
    if let Some(GroupStatus::Fault(fault)) = f.decision.as_ref().and_then(|d| {
        if kind.index() < 2 {
            d.cpu.map(|c| c.status)
        } else {
            d.mem.map(|m| m.status)
        }
    }) {
        let group: &[RuleKind] = if kind.index() < 2 {
            &CPU_RULES
        } else {
            &MEMORY_RULES
        };
        head.push(Line::styled(
            format!(
                "the group was skipped in this interval: {}",
                group_fault(&f.rules, &f.file, &f.trace, group, fault)
            ),
            theme.outcome(Outcome::Fault(fault)),
        ));
    }
    // Long explanations wrap, so no value is ever cut; the rule's own text
    // takes at most a third of the view.
    let mut lines: Vec<Line<'_>> = Vec::new();
    for (i, line) in head.iter().enumerate() {
        let mut wrapped = fit::wrap_line(line, width, 4);
        let most = usize::from(inner.height / 3).max(1);
        if i == 0 && wrapped.len() > most {
            wrapped.truncate(most);
            wrapped.push(Line::styled(
                "… the rest of the rule is in the file (the tree below has it all)",
                theme.dim(),
            ));
        }
        lines.extend(wrapped);
    }
    let rows = trace::rows(&f.rules, &f.file, &f.trace, kind, &|n| {
        app.selection().is_expanded(n)
    });
    let cursor = app
        .selection()
        .tree_scroll()
        .min(rows.len().saturating_sub(1));
    // Each row wraps under its own text; the cursor row (↑↓) stays on
    // screen, and what lies above or below the view is counted.
    let body: Vec<Vec<Line<'static>>> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let line = tree_line(app, r, root, i == cursor, theme);
            let lead = 2 * r.depth.min(trace::MAX_INDENT) + 4;
            fit::wrap_line(&line, width, lead)
        })
        .collect();
    let room = (inner.height as usize).saturating_sub(lines.len());
    lines.extend(fit::window(body, room, cursor, theme.dim()));
    frame.render_widget(Paragraph::new(lines), inner);
}
