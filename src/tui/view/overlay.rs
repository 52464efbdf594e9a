//! What lies over the screen: the help (generated from the key table), the
//! step-confirm proposal, and questions.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::theme::Theme;
use crate::control::controller::Mode;
use crate::control::flap::Moves;
use crate::report::trace;
use crate::rules::RuleKind;
use crate::tui::app::{App, Dialog};
use crate::tui::keys::BINDINGS;
use crate::tui::modal::Modal;
use crate::tui::whatif::WhatIfEditor;

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// The rows `lines` take inside a box `width` wide, wrapped as drawn, with
/// the borders: dialogs grow to their text instead of cutting it.
fn box_height(lines: &[Line<'_>], width: u16) -> u16 {
    let inner = width.saturating_sub(2).max(1);
    let rows = Paragraph::new(lines.to_vec())
        .wrap(Wrap { trim: false })
        .line_count(inner);
    u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2)
}

/// A dialog centred in `area`, as wide as `width` allows and as tall as
/// its wrapped text.
fn sized_box(
    frame: &mut Frame<'_>,
    area: Rect,
    width: u16,
    title: &str,
    lines: Vec<Line<'_>>,
    theme: &Theme,
) {
    let w = width.min(area.width);
    let h = box_height(&lines, w);
    boxed(frame, centered(area, w, h), title, lines, theme);
}

fn boxed(frame: &mut Frame<'_>, area: Rect, title: &str, lines: Vec<Line<'_>>, theme: &Theme) {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!(" {title} "), theme.title()));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

/// One character per interval, for the what-if timelines.
fn glyph(moves: Moves) -> char {
    match (moves.cpu, moves.pool) {
        (-1, _) => '▼',
        (1, _) => '▲',
        (_, 1) => '+',
        (_, -1) => '-',
        _ => '·',
    }
}

/// One character for a run of intervals: its one kind of move, or `*`
/// when it holds several, so a compressed timeline hides no action.
fn bucket_glyph(moves: &[Moves]) -> char {
    let mut seen = moves.iter().map(|m| glyph(*m)).filter(|g| *g != '·');
    match seen.next() {
        None => '·',
        Some(g) if seen.all(|o| o == g) => g,
        Some(_) => '*',
    }
}

/// The what-if editor over the lower part of the screen, as tall as it
/// needs.
fn whatif(frame: &mut Frame<'_>, area: Rect, app: &App, editor: &WhatIfEditor, theme: &Theme) {
    let inner_width = area.width.saturating_sub(2) as usize;
    let mut lines = Vec::new();
    // A long (pasted) text is shown near the cursor, in at most a third of
    // the rows, so the verdict under it stays in sight.
    let rows = usize::from(area.height / 3).max(1);
    let (before, at, after) = editor.input().split_near(inner_width * rows / 2);
    let label = if editor.file_mode() {
        "rule file: ".to_string()
    } else {
        format!("{}=", editor.field().name())
    };
    let indent = label.chars().count();
    lines.push(Line::from(vec![
        Span::styled(label, theme.title()),
        Span::raw(before),
        Span::styled(at, theme.selected()),
        Span::raw(after),
    ]));
    let edited = editor.edited_fields(app.rules(), app.file());
    let edited_names = if edited.is_empty() || editor.file_mode() {
        String::new()
    } else {
        let names: Vec<&str> = edited.iter().map(|f| f.name()).collect();
        format!(" (edited: {})", names.join(", "))
    };
    match editor.error() {
        Some((message, Some(column))) => lines.push(Line::from(Span::styled(
            format!("{}^ {message}", " ".repeat(indent + column)),
            theme.warning(),
        ))),
        Some((message, None)) => lines.push(Line::from(Span::styled(
            format!("✗ {message}"),
            theme.warning(),
        ))),
        None => lines.push(Line::from(Span::styled(
            if editor.file_mode() {
                "✓ cpuplugd would load this file".to_string()
            } else {
                format!("✓ cpuplugd would load the edited file{edited_names}")
            },
            theme.dim(),
        ))),
    }
    match editor.result() {
        None if editor.error().is_some() => lines.push(Line::from(Span::styled(
            "Enter runs nothing while cpuplugd would refuse the edit (error above)",
            theme.warning(),
        ))),
        None => lines.push(Line::from(Span::styled(
            format!(
                "Enter runs the edited rules over all {} intervals on screen",
                app.timeline().frames().len()
            ),
            theme.dim(),
        ))),
        Some(r) => timelines(&mut lines, app, r, inner_width, theme),
    }
    let title = if editor.file_mode() {
        "What-if: another rule file · ^O back to the rules · Enter run · Esc close".to_string()
    } else {
        let count = match edited.len() {
            0 => String::new(),
            n => format!(" ({n} edited)"),
        };
        let full = format!(
            "What-if: {}{count} · Tab ⇧Tab move · ^O file · Enter run · Esc close",
            editor.field().name()
        );
        if full.chars().count() + 4 <= area.width as usize {
            full
        } else {
            format!(
                "What-if: {}{count} · Tab ⇧Tab ^O Enter Esc",
                editor.field().name()
            )
        }
    };
    let height = box_height(&lines, area.width).min(area.height);
    let rect = Rect::new(area.x, area.y + area.height - height, area.width, height);
    boxed(frame, rect, &title, lines, theme);
}

/// The loaded and the what-if action timelines over the whole history
/// (several intervals a column when it is longer than the box is wide),
/// where they part, and what they add up to.
fn timelines(
    lines: &mut Vec<Line<'_>>,
    app: &App,
    r: &crate::tui::whatif::Counterfactual,
    inner_width: usize,
    theme: &Theme,
) {
    let width = inner_width.saturating_sub(10).max(1);
    let shown: Vec<_> = app
        .timeline()
        .frames()
        .iter()
        .rev()
        .filter(|f| f.number <= r.upto)
        .collect();
    let decided: Vec<Moves> = shown
        .iter()
        .map(|f| f.decision.as_ref().map(Moves::of).unwrap_or_default())
        .collect();
    let edited: Vec<Moves> = shown
        .iter()
        .map(|f| {
            r.actions
                .binary_search_by_key(&f.number, |a| a.0)
                .map_or_else(|_| Moves::default(), |i| r.actions[i].1)
        })
        .collect();
    let per = shown.len().div_ceil(width).max(1);
    let real: String = decided.chunks(per).map(bucket_glyph).collect();
    let what: String = edited.chunks(per).map(bucket_glyph).collect();
    let marks: String = decided
        .chunks(per)
        .zip(edited.chunks(per))
        .map(|(a, b)| if a == b { ' ' } else { '^' })
        .collect();
    let differ = decided.iter().zip(&edited).filter(|(a, b)| a != b).count();
    lines.push(Line::from(vec![
        Span::styled("loaded    ", theme.dim()),
        Span::raw(real),
    ]));
    lines.push(Line::from(vec![
        Span::styled("what-if   ", theme.title()),
        Span::raw(what),
    ]));
    lines.push(Line::from(vec![
        Span::styled("differ    ", theme.dim()),
        Span::styled(marks, theme.warning()),
    ]));
    let span = match (shown.first(), shown.last()) {
        (Some(a), Some(b)) if per == 1 => {
            format!("#{}–#{}, one column an interval", a.number, b.number)
        }
        (Some(a), Some(b)) => format!(
            "#{}–#{}, {per} intervals a column (* several kinds)",
            a.number, b.number
        ),
        _ => "no intervals yet".to_string(),
    };
    lines.push(Line::from(Span::styled(span, theme.dim())));
    lines.push(Line::from(format!(
        "differ in {differ} of {} · loaded: {} decided, {} applied · edited: {} decided · reversals {} → {}",
        shown.len(),
        r.changes.0,
        r.applied,
        r.changes.1,
        r.reversals.0,
        r.reversals.1
    )));
    if let Some(pace) = &r.pace {
        lines.push(Line::from(Span::styled(pace.clone(), theme.dim())));
    }
    lines.push(Line::from(Span::styled(
        if r.closed_loop {
            "closed loop: the scenario played again, same seed, under the edited rules"
        } else {
            "open loop: the readings replayed as they were cannot react to other actions"
        },
        theme.dim(),
    )));
}

/// Draws the layers open over the screen, bottom first, so the one on top
/// (the one keys go to, [`crate::tui::dispatch`]) is drawn last; with none
/// open, the proposal waiting for an answer.
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    for layer in app.modals().layers() {
        match layer {
            Modal::WhatIf(editor) => whatif(frame, area, app, editor, theme),
            Modal::Tune => {
                if let Some(job) = app.tune() {
                    tune_box(frame, area, job, theme);
                }
            }
            Modal::Help => help(frame, area, theme),
            Modal::Export(input) => export_prompt(frame, area, app, input, theme),
            Modal::Dialog(d) => dialog(frame, area, d, theme),
            // The search is typed into the Log view's title.
            Modal::GoTo(input) => goto_prompt(frame, area, app, input, theme),
            Modal::Search => {}
        }
    }
    if app.modals().is_empty() {
        proposal(frame, area, app, theme);
    }
}

/// `T`: the tune's progress, then its front to pick from.
fn tune_box(frame: &mut Frame<'_>, area: Rect, job: &crate::tui::tuning::TuneJob, theme: &Theme) {
    let mut lines = Vec::new();
    if !job.finished() {
        let n = job.progress();
        let filled = n * 40 / job.budget().max(1);
        lines.push(Line::from(format!(
            "[{}{}] {n}/{} candidates",
            "#".repeat(filled),
            "·".repeat(40 - filled),
            job.budget()
        )));
        lines.push(Line::styled(
            "the screen stays live; Esc hides this box, T shows it again",
            theme.dim(),
        ));
        sized_box(
            frame,
            area,
            76,
            "Tuning the loaded rules on the scenario",
            lines,
            theme,
        );
        return;
    }
    let rows = job.front();
    lines.push(Line::styled(
        "   unmet CPU-s  CPUs avg  guest/WS  stalls  changes  rev",
        theme.dim(),
    ));
    // As many rows as fit, scrolled to keep the cursor in view.
    let room = usize::from(area.height.saturating_sub(6)).max(1);
    let first = job.cursor().saturating_sub(room.saturating_sub(1));
    for (i, r) in rows.iter().enumerate().skip(first).take(room) {
        let s = &r.score;
        let text = format!(
            "{} {:>11.1} {:>9.2} {:>9.2} {:>7} {:>8} {:>4}{}",
            if r.index == 0 { "S" } else { " " },
            s.unmet_cpu_seconds,
            s.avg_online_cpus,
            s.guest_to_working_set,
            s.direct_scan_stalls,
            s.cpu_changes + s.pool_changes,
            s.reversals,
            if r.recommended {
                "  ★ recommended"
            } else {
                ""
            }
        );
        let style = if i == job.cursor() {
            theme.selected()
        } else {
            theme.text()
        };
        lines.push(Line::styled(text, style));
    }
    lines.push(Line::styled(
        "↑↓ pick · Enter: open in the what-if editor · Esc close",
        theme.title(),
    ));
    sized_box(
        frame,
        area,
        76,
        &format!("Tune: the front of {} candidates", job.budget()),
        lines,
        theme,
    );
}

/// `e`: where to write the log, the default already typed.
fn export_prompt(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    input: &crate::tui::line_input::LineInput,
    theme: &Theme,
) {
    let (before, at, after) = input.split_near(usize::from(area.width) * 4);
    let lines = vec![
        Line::from(format!(
            "Write the log ({} lines) to this new file:",
            app.log().lines().len()
        )),
        Line::from(vec![
            Span::raw(before),
            Span::styled(at, theme.selected()),
            Span::raw(after),
        ]),
        Line::from(""),
        Line::styled("Enter write   Esc cancel   ^U clear", theme.title()),
        Line::styled("an existing file is never overwritten", theme.dim()),
    ];
    sized_box(frame, area, 100, "Export the log", lines, theme);
}

/// `J`: the time to go to, with what can be typed and how far it goes.
fn goto_prompt(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    input: &crate::tui::line_input::LineInput,
    theme: &Theme,
) {
    let (before, at, after) = input.split_near(usize::from(area.width) * 2);
    let kept = match (
        app.timeline().frames().back(),
        app.timeline().frames().front(),
    ) {
        (Some(oldest), Some(newest)) => format!(
            "kept here: {} to {}",
            super::clock(oldest.sample.stamp),
            super::clock(newest.sample.stamp)
        ),
        _ => "no reading yet".to_string(),
    };
    let ahead = match app.source() {
        crate::tui::app::SourceLabel::Live(_) => "a live guest goes no further than now",
        _ => "a later time is read ahead to at once",
    };
    let lines = vec![
        Line::from("Go to a time of day, as the header shows it (18:00, 18:30:15, UTC),"),
        Line::from("or a time from the first reading (+18h, +1h30m, +90m):"),
        Line::from(vec![
            Span::raw(before),
            Span::styled(at, theme.selected()),
            Span::raw(after),
        ]),
        Line::from(""),
        Line::styled(format!("{kept}; {ahead}"), theme.dim()),
        Line::styled("Enter go   Esc cancel   ^U clear", theme.title()),
    ];
    sized_box(frame, area, 76, "Jump to a time", lines, theme);
}

/// The key table, in one or two columns as the screen allows.
fn help(frame: &mut Frame<'_>, area: Rect, theme: &Theme) {
    let entry = |b: &crate::tui::keys::Binding, width: usize| {
        let text: String = b.description.chars().take(width).collect();
        vec![
            Span::styled(format!("{:<7}", b.shown), theme.title()),
            Span::raw(format!("{text:<width$}")),
        ]
    };
    let fits = BINDINGS.len() as u16 + 2 <= area.height;
    let lines: Vec<Line<'_>> = if fits {
        BINDINGS.iter().map(|b| Line::from(entry(b, 62))).collect()
    } else {
        let half = BINDINGS.len().div_ceil(2);
        let width = (area.width as usize).saturating_sub(2 + 2 * 7 + 2) / 2;
        (0..half)
            .map(|i| {
                let mut spans = entry(&BINDINGS[i], width);
                spans.push(Span::raw("  "));
                if let Some(b) = BINDINGS.get(i + half) {
                    spans.extend(entry(b, width));
                }
                Line::from(spans)
            })
            .collect()
    };
    let h = lines.len() as u16 + 2;
    let w = if fits { 72 } else { area.width };
    boxed(
        frame,
        centered(area, w, h),
        "Keys (any key closes)",
        lines,
        theme,
    );
}

/// A question or a message on top of the screen.
fn dialog(frame: &mut Frame<'_>, area: Rect, dialog: &Dialog, theme: &Theme) {
    let (title, lines) = match dialog {
        Dialog::ConfirmAuto => (
            "Autonomous mode",
            vec![
                Line::from("plugtop will plug and unplug CPUs and resize the CMM pool"),
                Line::from("by itself, every interval, exactly as cpuplugd would."),
                Line::from("Quitting puts the guest back as it was found."),
                Line::from(""),
                Line::styled("y  switch to autonomous     n / Esc  stay", theme.title()),
            ],
        ),
        Dialog::Arm(info) => (
            "Act on this guest?",
            vec![
                Line::from(format!(
                    "{} mode changes {} below {}.",
                    info.mode, info.host, info.root
                )),
                Line::from(format!("machine: {}; {}", info.architecture, info.guest)),
                Line::from(format!("takes the lock {}", info.lock)),
                Line::from(format!("journals the start state in {}", info.journal)),
                Line::from(format!("quitting puts back: {}", info.restore_to)),
                Line::from(""),
                Line::styled(
                    format!("y  act in {} mode     n / Esc  stay in observe", info.mode),
                    theme.title(),
                ),
            ],
        ),
        Dialog::Message(text) => (
            "Not possible",
            vec![
                Line::from(text.clone()),
                Line::from(""),
                Line::styled("any key closes", theme.dim()),
            ],
        ),
    };
    sized_box(frame, area, 76, title, lines, theme);
}

/// Since when a proposal stands and how often it was revised.
fn standing(p: &crate::control::controller::Proposal) -> String {
    let revised = match p.revisions {
        0 => String::new(),
        n => format!(", revised ×{n}"),
    };
    match p.standing() {
        0 => format!("proposed at interval #{}{revised}", p.since),
        1 => format!("proposed since interval #{} (1 interval){revised}", p.since),
        n => format!(
            "proposed since interval #{} ({n} intervals){revised}",
            p.since
        ),
    }
}

/// The step-confirm proposal, unless hidden, at the bottom of the screen.
fn proposal(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    if app.board().mode() == Mode::Step
        && !app.proposal_hidden()
        && let Some(p) = app.board().pending()
    {
        // Exactly the values `y` applies, with the latest interval's
        // reasons; what the latest revision changed is marked, so a moving
        // target is never approved unseen.
        let mut spans = vec![Span::styled("Proposed: ", theme.title())];
        for (i, a) in p.actions.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw(", "));
            }
            spans.push(Span::styled(a.naming(p.cpu), theme.mode(Mode::Step)));
            if p.changed.get(i).copied().unwrap_or(false) {
                spans.push(Span::styled(" (changed)", theme.title()));
            }
        }
        let mut lines = vec![Line::from(spans)];
        lines.push(Line::from(format!("interval #{}: {}", p.reading, p.why)));
        lines.push(Line::styled(standing(p), theme.dim()));
        let mut reasons: Vec<Line<'_>> = Vec::new();
        if let Some(f) = app
            .timeline()
            .frames()
            .iter()
            .find(|f| f.number == p.reading)
        {
            for kind in RuleKind::ALL {
                if let Some(e) = trace::explain(app.rules(), app.file(), &f.trace, kind)
                    && e.contains(" true because")
                {
                    reasons.push(Line::styled(
                        e,
                        theme.outcome(crate::rules::eval::Outcome::Truth(true)),
                    ));
                }
            }
        }
        let keys = [
            Line::from(""),
            Line::styled(
                "y apply   n reject   Esc later (Tab: Rules view shows the whole trace)",
                theme.title(),
            ),
        ];
        // The proposal and the keys always show; reasons that would not
        // fit give way, and a line says how many.
        let room = area.height.saturating_sub(1);
        let total = reasons.len();
        loop {
            let mut all = lines.clone();
            all.extend(reasons.iter().cloned());
            if reasons.len() < total {
                all.push(Line::styled(
                    format!("… {} more true rules (Rules view)", total - reasons.len()),
                    theme.dim(),
                ));
            }
            all.extend(keys.iter().cloned());
            if box_height(&all, area.width) <= room || reasons.is_empty() {
                lines = all;
                break;
            }
            reasons.pop();
        }
        let h = box_height(&lines, area.width).min(room);
        let r = Rect::new(
            area.x,
            area.y + area.height.saturating_sub(h + 1),
            area.width,
            h,
        );
        boxed(frame, r, "Step-confirm", lines, theme);
    }
}
