//! Draws the training screen from [`TrainApp`] alone (no clock, no file):
//! a header, the exercise panel (brief, goal, attempts, time, hints, the
//! explanation once solved), the score panel (the practice run's goal
//! clauses live, or the diagnosis's choices), the rules (or the what-if
//! editor, or the Flips view of a recording) and the keys. Fits 80×24.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding, Paragraph, Wrap};

use super::app::{TrainApp, keys_for};
use crate::report::terminal_safe as safe;
use crate::sim::report::clock;
use crate::train::course::Kind;
use crate::train::goal::short_number;
use crate::tui::view::fit::{ellipsize, room};
use crate::tui::view::theme::Theme;
use crate::tui::whatif::Field;

/// A bordered panel whose last inner column stays free, so text that fits
/// never touches the border (and text that touches it was cut).
fn panel() -> Block<'static> {
    Block::bordered().padding(Padding::right(1))
}

/// The columns a line inside a [`panel`] of `area` may fill.
fn inside(area: Rect) -> usize {
    usize::from(area.width).saturating_sub(3).max(1)
}

/// Draws the whole screen.
pub fn draw(app: &TrainApp, frame: &mut Frame) {
    let theme = Theme { color: !app.mono };
    let area = frame.area();
    // The header, the status line (where verdicts are) and the keys keep
    // their rows at any height; the panels share the rest (a `Min(10)`
    // here took the header and the status line from a 40×10 terminal).
    let rules_rows = if area.height >= 21 {
        8
    } else {
        area.height.saturating_sub(3) / 2
    };
    let [head, top, rules, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(rules_rows),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    header(app, frame, head, theme);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
    exercise_panel(app, frame, left, theme);
    match app.exercise().kind {
        Kind::Rules => score_panel(app, frame, right, theme),
        Kind::Diagnosis => choices_panel(app, frame, right, theme),
    }
    match (app.exercise().kind, &app.current.editor) {
        (Kind::Diagnosis, _) => flips_panel(app, frame, rules, theme),
        (Kind::Rules, Some(_)) => editor_panel(app, frame, rules, theme),
        (Kind::Rules, None) => rules_panel(app, frame, rules, theme),
    }
    let fit = |t: String| ellipsize(&t, room(status.width));
    let message = match &app.current.verdict {
        _ if app.judging.is_some() => {
            let (done, of) = app.judging.as_ref().map_or((0, 0), |j| (j.done, j.of));
            Line::styled(
                fit(format!(" judging… {done} of {of} runs (q still quits)")),
                theme.dim(),
            )
        }
        Some((true, s)) => Line::styled(fit(format!(" PASSED: {}", safe(s))), theme.title()),
        Some((false, s)) => Line::styled(fit(format!(" not yet: {}", safe(s))), theme.warning()),
        None => Line::styled(fit(format!(" {}", safe(&app.status))), theme.dim()),
    };
    frame.render_widget(Paragraph::new(message), status);
    let help = if app.help {
        " ? or Esc closes the help  q quit"
    } else if app.editing() {
        " Tab next field  Enter apply and run  Esc close"
    } else if app.exercise().kind == Kind::Diagnosis {
        " ? help  ↑↓ choose  Enter answer  n/p exercise  q quit"
    } else {
        // `?` first, so a narrow terminal still shows where the rest is;
        // `r restart` is in the help: the footer keeps to 80 columns.
        " ? help  e edit  s submit  space pause  +/- speed  n/p exercise  q quit"
    };
    frame.render_widget(Paragraph::new(Line::styled(help, theme.dim())), keys);
    if app.help {
        help_overlay(app, frame, area, theme);
    }
}

/// The `?` help over the screen: the keys (from the one table that
/// dispatches them), what the goal's clauses mean, and where the working
/// copy and the progress are kept. `?` or Esc closes it.
fn help_overlay(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    // The footer stays in sight below it.
    let rect = Rect {
        height: area.height.saturating_sub(1).max(1).min(area.height),
        ..area
    };
    let ex = app.exercise();
    let mut lines = vec![Line::styled("Keys", theme.title())];
    for b in keys_for(ex.kind) {
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<10}", b.shown), theme.title()),
            Span::raw(b.description),
        ]));
    }
    // Where the files are comes before the goal's clauses, which a long
    // goal may carry past the bottom (they are on the screen too).
    lines.push(Line::styled("Files", theme.title()));
    let copy = app.current.copy.as_ref().map_or_else(
        || "none: the start file, in memory".to_string(),
        |c| {
            format!(
                "{} (a save in your editor is reloaded)",
                safe(&c.path.display().to_string())
            )
        },
    );
    let progress = app.progress_path.as_ref().map_or_else(
        || "not kept this session".to_string(),
        |p| safe(&p.display().to_string()).into_owned(),
    );
    lines.push(Line::raw(format!("  working copy  {copy}")));
    lines.push(Line::raw(format!("  progress      {progress}")));
    match (&ex.goal, &ex.question) {
        (Some(goal), _) => {
            lines.push(Line::styled("The goal's clauses", theme.title()));
            lines.push(Line::raw(
                "  The parts joined by `and`, checked live on the practice run",
            ));
            lines.push(Line::raw(
                "  (✓ met, ✗ missed, · not yet) and on every held-out run by `s`:",
            ));
            for (clause, fields) in goal.clauses() {
                let meaning: Vec<&str> = fields.iter().map(|f| f.meaning).collect();
                lines.push(Line::from(vec![
                    Span::styled(format!("  {}", safe(clause)), theme.text()),
                    Span::styled(format!(": {}", meaning.join("; ")), theme.dim()),
                ]));
            }
        }
        (None, Some(question)) => {
            lines.push(Line::styled("The question", theme.title()));
            lines.push(Line::raw(format!(
                "  {} Point at the comparison that flipped the guest's decisions (the \
                 Flips panel lists them).",
                safe(question)
            )));
        }
        _ => {}
    }
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(panel().title(Span::styled(" Help · ? or Esc closes ", theme.title()))),
        rect,
    );
}

fn header(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let solved = app
        .course
        .exercises
        .iter()
        .filter(|e| app.progress.exercises.get(&e.id).is_some_and(|p| p.solved))
        .count();
    let right = format!(
        "{}/{} · solved {solved} ",
        app.current.index + 1,
        app.course.exercises.len()
    );
    let left = format!(" plugtop train · {}", safe(&app.course.title));
    let room = (area.width as usize).saturating_sub(right.chars().count());
    let left: String = left.chars().take(room).collect();
    let pad = room.saturating_sub(left.chars().count());
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(left, theme.title()),
            Span::raw(" ".repeat(pad)),
            Span::raw(right),
        ])),
        area,
    );
}

fn exercise_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let ex = app.exercise();
    let p = app
        .progress
        .exercises
        .get(&ex.id)
        .cloned()
        .unwrap_or_default();
    let solved = p.solved && !ex.explanation.is_empty();
    let mut lines = Vec::new();
    // Once solved, the explanation takes the brief's place.
    if !solved {
        lines.push(Line::raw(safe(&ex.brief).into_owned()));
        lines.push(Line::raw(""));
    }
    match (&ex.goal, &ex.question) {
        (Some(g), _) => lines.push(Line::from(vec![
            Span::styled("Goal ", theme.title()),
            Span::raw(safe(g.text()).into_owned()),
        ])),
        (None, Some(q)) => lines.push(Line::from(vec![
            Span::styled("Question ", theme.title()),
            Span::raw(safe(q).into_owned()),
        ])),
        _ => {}
    }
    let time = match ex.time_limit {
        Some(limit) if p.seconds >= limit => {
            format!("time {} — the limit has passed", clock(p.seconds))
        }
        Some(limit) => format!("time {} of {}", clock(p.seconds), clock(limit)),
        None => format!("time {}", clock(p.seconds)),
    };
    let state = match (p.solved, p.late) {
        (true, true) => "solved late",
        (true, false) => "solved",
        _ => "open",
    };
    lines.push(Line::styled(
        format!("{state} · attempts {} · {time}", p.attempts),
        theme.dim(),
    ));
    if solved {
        lines.push(Line::styled("Why", theme.title()));
        lines.push(Line::raw(safe(&ex.explanation).into_owned()));
    } else {
        for (i, h) in app.hints().iter().enumerate() {
            lines.push(Line::from(vec![
                Span::styled(format!("Hint {} ", i + 1), theme.title()),
                Span::raw(safe(h).into_owned()),
            ]));
        }
        let locked = ex.hints.len() - app.hints().len();
        if locked > 0 {
            lines.push(Line::styled(
                format!(
                    "({locked} more hint{} after failed attempts or time)",
                    if locked == 1 { "" } else { "s" }
                ),
                theme.dim(),
            ));
        }
    }
    let title = format!(" {} ", safe(&ex.title));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(panel().title(Span::styled(title, theme.title()))),
        area,
    );
}

fn score_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let mut lines = Vec::new();
    match &app.current.practice {
        None => lines.push(Line::styled(
            match &app.current.rules {
                Err(e) if !e.is_empty() => format!("cpuplugd refuses the rules: {}", safe(e)),
                _ => "no practice run".to_string(),
            },
            theme.warning(),
        )),
        Some(p) => {
            let state = if p.run.ended() {
                "ended".to_string()
            } else if app.current.paused {
                "paused".to_string()
            } else if app.speed() == 0.0 {
                "max speed".to_string()
            } else {
                format!("{}×", short_number(app.speed()))
            };
            lines.push(Line::styled(
                format!(
                    "{} of {} · {state}",
                    clock(p.run.seconds()),
                    clock(p.length)
                ),
                theme.dim(),
            ));
            let started = p.run.seconds() > 0.0;
            for c in &p.checks {
                let mark = match (started, c.met) {
                    (false, _) => "· ",
                    (true, true) => "✓ ",
                    (true, false) => "✗ ",
                };
                let style = if c.met || !started {
                    theme.text()
                } else {
                    theme.warning()
                };
                let value = c
                    .value
                    .filter(|_| started)
                    .map(|v| format!(" = {}", short_number(v)))
                    .unwrap_or_default();
                lines.push(Line::from(vec![
                    Span::styled(mark, style.add_modifier(Modifier::BOLD)),
                    Span::styled(format!("{}{value}", safe(&c.clause)), style),
                ]));
            }
            lines.push(Line::raw(""));
            for (label, value) in &p.figures {
                lines.push(Line::styled(format!("{label:<18}{value:>10}"), theme.dim()));
            }
        }
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(panel().title(Span::styled(" Practice run ", theme.title()))),
        area,
    );
}

fn choices_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let mut lines = Vec::new();
    for (i, c) in app.current.choices.iter().enumerate() {
        let style = if app.current.selected == Some(i) {
            theme.selected()
        } else {
            Style::default()
        };
        let mark = if app.current.selected == Some(i) {
            "▶ "
        } else {
            "  "
        };
        lines.push(Line::styled(format!("{mark}{}", safe(&c.line())), style));
    }
    if lines.is_empty() {
        lines.push(Line::styled("no comparison to point at", theme.warning()));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(panel().title(Span::styled(" Point at the culprit ", theme.title()))),
        area,
    );
}

fn rules_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let mut lines = Vec::new();
    match &app.current.rules {
        Ok(rules) => {
            // The rules the file sets (a rule of "0" is off), then the
            // limits on one line; variables are in the file and the editor.
            let mut limits = Vec::new();
            for f in Field::all(rules) {
                let text = f.text(rules, &app.current.file);
                match f {
                    Field::Rule(_) if !text.trim().is_empty() && text.trim() != "0" => {
                        let room = inside(area).saturating_sub(10);
                        lines.push(Line::from(vec![
                            Span::styled(format!("{:<10}", f.name()), theme.title()),
                            Span::raw(ellipsize(&safe(&text), room)),
                        ]));
                    }
                    Field::Limit(_) if !text.trim().is_empty() => {
                        limits.push(format!("{}={}", f.name(), text.trim()));
                    }
                    _ => {}
                }
            }
            lines.truncate(5);
            lines.push(Line::styled(
                safe(&limits.join("  ")).into_owned(),
                theme.dim(),
            ));
        }
        Err(e) => lines.push(Line::styled(
            ellipsize(&format!("cpuplugd refuses it: {}", safe(e)), inside(area)),
            theme.warning(),
        )),
    }
    let title = format!(
        " Rules: {} ",
        ellipsize(
            &safe(app.current.file.name()),
            inside(area).saturating_sub(9)
        )
    );
    frame.render_widget(
        Paragraph::new(lines).block(panel().title(Span::styled(title, theme.title()))),
        area,
    );
}

fn editor_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let Some(editor) = &app.current.editor else {
        return;
    };
    let name = editor.field().name().to_string();
    let room = (area.width as usize).saturating_sub(name.len() + 5).max(10);
    let (before, at, after) = editor.input().split_near(room);
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{name}="), theme.title()),
        Span::raw(safe(&before).into_owned()),
        Span::styled(
            if at.is_empty() {
                " ".to_string()
            } else {
                safe(&at).into_owned()
            },
            Style::default().add_modifier(Modifier::REVERSED),
        ),
        Span::raw(safe(&after).into_owned()),
    ])];
    if let Some((message, _)) = editor.error() {
        lines.push(Line::styled(
            format!("refused: {}", safe(message)),
            theme.warning(),
        ));
    }
    if let Ok(rules) = &app.current.rules {
        let edited = editor.edited_fields(rules, &app.current.file);
        if !edited.is_empty() {
            let names: Vec<&str> = edited.iter().map(Field::name).collect();
            lines.push(Line::styled(
                format!("edited: {}", names.join(", ")),
                theme.dim(),
            ));
        }
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(panel().title(Span::styled(" What-if editor ", theme.title()))),
        area,
    );
}

fn flips_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let lines: Vec<Line> = app
        .current
        .flips
        .iter()
        .map(|l| {
            let text = ellipsize(&safe(l), inside(area));
            if l.starts_with('#') {
                Line::styled(text, theme.title())
            } else {
                Line::raw(text)
            }
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(panel().title(Span::styled(
            " Flips: the recording's changes of decision ",
            theme.title(),
        ))),
        area,
    );
}
