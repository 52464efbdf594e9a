//! Draws the training screen from [`TrainApp`] alone (no clock, no file):
//! a header, the exercise panel (brief, goal, attempts, time, hints, the
//! explanation once solved), the score panel (the practice run's goal
//! clauses live, or the diagnosis's choices), the rules (or the what-if
//! editor, or the Flips view of a recording) and the keys. Fits 80×24.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use super::app::{Fit, Rows, TrainApp, Verdict, keys_for};
use crate::report::terminal_safe as safe;
use crate::sim::report::clock;
use crate::train::course::Kind;
use crate::train::course::WorkloadPath;
use crate::train::goal::short_number;
use crate::tui::layer_keys::{EDITOR_KEYS, EditorAction};
use crate::tui::view::boxes::{box_inner, panel};
use crate::tui::view::fit::{ellipsize, room, wrap_line};
use crate::tui::view::theme::Theme;
use crate::tui::view::whatif_editor;
use crate::tui::whatif::Field;

/// A line of `title`, styled as a title, then `text`.
fn titled(
    title: impl Into<Cow<'static, str>>,
    text: impl Into<Cow<'static, str>>,
    theme: Theme,
) -> Line<'static> {
    Line::from(vec![Span::styled(title, theme.title()), Span::raw(text)])
}

/// `lines` in a [`panel`] over `area` titled `title`, wrapped at its width.
fn wrapped_panel(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line>, theme: Theme) {
    let block = panel().title(Span::styled(title, theme.title()));
    let text = Paragraph::new(lines).wrap(Wrap { trim: false });
    frame.render_widget(text.block(block), area);
}

/// The columns a line inside a [`panel`] of `area` may fill.
fn inside(area: Rect) -> usize {
    usize::from(box_inner(area.width))
}

/// Where each part of the screen goes in `area`.
struct Areas {
    head: Rect,
    /// The exercise panel (left) and the score or choices (right).
    left: Rect,
    right: Rect,
    rules: Rect,
    status: Rect,
    keys: Rect,
}

fn areas(area: Rect) -> Areas {
    // The header, the status line and the keys keep their rows at any
    // height; the panels share the rest (a `Min(10)` here took the header
    // and the status line from a 40×10 terminal).
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
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
    Areas {
        head,
        left,
        right,
        rules,
        status,
        keys,
    }
}

/// How much text the help and the exercise panel hold, wrapped as drawn
/// on a terminal of `columns`×`rows`, and how much each shows at once: how
/// far they scroll ([`super::app::TrainAction::Fit`]).
pub fn fit(app: &TrainApp, columns: u16, rows: u16) -> Fit {
    let screen = Rect::new(0, 0, columns, rows);
    let theme = Theme { color: false };
    let shown = |area: Rect| usize::from(area.height.saturating_sub(2));
    let help = help_area(screen);
    let exercise = areas(screen).left;
    Fit {
        exercise: Rows {
            total: exercise_text(app, exercise, theme).len(),
            shown: shown(exercise),
        },
        help: Rows {
            total: if app.help {
                help_text(app, help, theme).len()
            } else {
                0
            },
            shown: shown(help),
        },
    }
}

/// Draws the whole screen.
pub fn draw(app: &TrainApp, frame: &mut Frame) {
    let theme = Theme { color: !app.mono };
    // The main screen's minimum, said as it says it (nu54: at 60 columns
    // the panels cut values).
    if crate::tui::view::too_small(frame, &theme, "") {
        return;
    }
    let area = frame.area();
    let at = areas(area);
    let (head, left, right, rules, status, keys) =
        (at.head, at.left, at.right, at.rules, at.status, at.keys);
    header(app, frame, head, theme);
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
    // The verdict in full, each clause missed with its value, is at the
    // top of the exercise panel; this line is its headline, unless news
    // came since (an edit applied, a save reloaded, an error).
    let fit = |t: String| ellipsize(&t, room(status.width));
    let missed = |v: &Verdict| match v.missed.len() {
        0 => String::new(),
        1 => " — 1 clause missed, in the panel above".to_string(),
        n => format!(" — {n} clauses missed, in the panel above"),
    };
    let message = if let Some(j) = &app.judging {
        Line::styled(
            fit(format!(
                " judging… {} of {} runs (q still quits)",
                j.done, j.of
            )),
            theme.dim(),
        )
    } else if !app.status.is_empty() {
        Line::styled(fit(format!(" {}", safe(&app.status))), theme.dim())
    } else {
        match &app.current.verdict {
            Some(v) if v.passed => Line::styled(
                fit(format!(" PASSED: {}", safe(&v.headline))),
                theme.title(),
            ),
            Some(v) => Line::styled(
                fit(format!(" not yet: {}{}", safe(&v.headline), missed(v))),
                theme.warning(),
            ),
            // A diagnosis's recording on a row of its own, the screen's
            // width, so its path can be copied whole (the panel breaks it).
            None => recording_path(app).map_or_else(Line::default, |path| {
                Line::styled(fit(format!(" recording: {path}")), theme.dim())
            }),
        }
    };
    frame.render_widget(Paragraph::new(message), status);
    let help = if app.help {
        " ? or Esc closes the help  q quit"
    } else if app.editing() {
        " Tab ⇧Tab field  ^O a rule file  Enter apply and run  Esc close"
    } else if app.exercise().kind == Kind::Diagnosis {
        " ? help  ↑↓ choose  Enter answer  PgUp/PgDn scroll  n/p exercise  q quit"
    } else {
        // `?` first, so a narrow terminal still shows where the rest is;
        // `r restart` and the scrolling keys are in the help: the footer
        // keeps to 80 columns.
        " ? help  e edit  s submit  space pause  +/- speed  n/p exercise  q quit"
    };
    frame.render_widget(Paragraph::new(Line::styled(help, theme.dim())), keys);
    if app.help {
        help_overlay(app, frame, area, theme);
    }
}

/// Where the help goes in `area`: all of it but the footer, which stays
/// in sight below it.
fn help_area(area: Rect) -> Rect {
    Rect {
        height: area.height.saturating_sub(1).max(1).min(area.height),
        ..area
    }
}

/// The `?` help's text, wrapped to `area`'s inner width: the keys (from
/// the one table that dispatches them, and the what-if editor's from the
/// main screen's table), where the working copy and the progress are
/// kept, and what the goal's clauses mean.
fn help_text(app: &TrainApp, area: Rect, theme: Theme) -> Vec<Line<'static>> {
    let ex = app.exercise();
    let key = |shown: &str, description: &str| {
        titled(format!("  {shown:<10}"), description.to_string(), theme)
    };
    let mut lines = vec![Line::styled("Keys", theme.title())];
    for b in keys_for(ex.kind) {
        lines.push(key(b.shown, b.description));
    }
    if ex.kind == Kind::Rules {
        lines.push(Line::styled(
            "The what-if editor (e): the main screen's, checked at every key",
            theme.title(),
        ));
        for b in EDITOR_KEYS {
            match b.action {
                EditorAction::Run => {
                    lines.push(key(b.shown, "apply: save the working copy, run again"));
                }
                EditorAction::NextField | EditorAction::PreviousField | EditorAction::FileMode => {
                    lines.push(key(b.shown, b.description));
                }
                EditorAction::Close => lines.push(key(b.shown, "close without applying")),
                // Applying and writing are Enter here: the working copy
                // is the file.
                EditorAction::Apply | EditorAction::Write => {}
            }
        }
    }
    // Where the files are comes before the goal's clauses, which a long
    // goal may carry past the bottom (they are on the screen too).
    lines.push(Line::styled("Files", theme.title()));
    let copy = match (&app.current.copy, &app.work_dir) {
        (Some(c), _) => format!(
            "{} (a save in your editor is reloaded)",
            safe(&c.path.display().to_string())
        ),
        (None, Some(dir)) if ex.kind == Kind::Diagnosis => format!(
            "none; Enter keeps the answer in {}",
            safe(&dir.join(format!("{}.answer", ex.id)).display().to_string())
        ),
        (None, _) => "none: the start file, in memory".to_string(),
    };
    let progress = app.progress_path.as_ref().map_or_else(
        || "not kept this session".to_string(),
        |p| safe(&p.display().to_string()).into_owned(),
    );
    lines.push(Line::raw(format!("  working copy  {copy}")));
    lines.push(Line::raw(format!("  progress      {progress}")));
    if let Some(dir) = &app.work_dir {
        lines.push(Line::raw(format!(
            "  hand in       {}: copy this folder's files (ID.conf for work done, \
             ID.answer) to your trainer, for plugtop train grade",
            safe(&dir.display().to_string())
        )));
    }
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
    wrapped(&lines, area, 2)
}

/// `lines` wrapped into the rows of a [`panel`] over `area`, rows after a
/// line's first indented by `indent`.
fn wrapped(lines: &[Line<'_>], area: Rect, indent: usize) -> Vec<Line<'static>> {
    lines
        .iter()
        .flat_map(|line| wrap_line(line, inside(area), indent))
        .collect()
}

/// The `?` help over the screen, scrolled to [`TrainApp::help_scroll`].
/// `?` or Esc closes it.
fn help_overlay(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let rect = help_area(area);
    frame.render_widget(Clear, rect);
    let rows = help_text(app, rect, theme);
    scrolled(
        frame,
        rect,
        " Help · ? or Esc closes ",
        rows,
        app.help_scroll,
        ("↑ PgUp", "↓ PgDn"),
        theme,
    );
}

/// `rows` in a [`panel`] over `area` titled `title`, from row `scroll`
/// (kept within the text): when they do not fit, the borders say how many
/// rows are above and below and which `keys` (up, down) bring them, so
/// nothing is cut silently.
fn scrolled(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    rows: Vec<Line<'static>>,
    scroll: usize,
    keys: (&str, &str),
    theme: Theme,
) {
    let room = usize::from(area.height.saturating_sub(2));
    let top = scroll.min(rows.len().saturating_sub(room));
    let below = rows.len().saturating_sub(top + room);
    let above = format!(" {top} more {} ", keys.0);
    let title_room = if top > 0 {
        inside(area).saturating_sub(above.chars().count() + 1)
    } else {
        inside(area)
    };
    let mut block = panel().title(Span::styled(
        format!(" {} ", ellipsize(title.trim(), title_room)),
        theme.title(),
    ));
    if top > 0 {
        block = block.title(Line::styled(above, theme.warning()).right_aligned());
    }
    if below > 0 {
        block = block.title_bottom(
            Line::styled(format!(" {below} more {} ", keys.1), theme.warning()).right_aligned(),
        );
    }
    let shown: Vec<Line> = rows.into_iter().skip(top).take(room).collect();
    frame.render_widget(Paragraph::new(shown).block(block), area);
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

/// A verdict at the top of the exercise panel: its headline, then each
/// clause missed on its own line (rows after a line's first indented).
fn verdict_lines(v: &Verdict, theme: Theme) -> Vec<(Line<'static>, usize)> {
    let (word, style) = if v.passed {
        ("PASSED: ", theme.title())
    } else {
        ("Not yet: ", theme.warning())
    };
    let mut lines = vec![(
        Line::from(vec![
            Span::styled(word, style.add_modifier(Modifier::BOLD)),
            Span::raw(safe(&v.headline).into_owned()),
        ]),
        2,
    )];
    for m in &v.missed {
        lines.push((
            Line::styled(format!("✗ missed {}", safe(m)), theme.warning()),
            2,
        ));
    }
    lines.push((Line::raw(""), 0));
    lines
}

/// A diagnosis's recording, by the path the trainee can use from where
/// they started the course (made safe to show). None for a rules exercise.
fn recording_path(app: &TrainApp) -> Option<String> {
    let ex = app.exercise();
    let (Kind::Diagnosis, WorkloadPath::Recording(path)) = (ex.kind, &ex.workload) else {
        return None;
    };
    Some(safe(&app.course.as_named(path).display().to_string()).into_owned())
}

/// What a diagnosis is about: its recording ([`recording_path`]) and the
/// command that replays it under the exercise's rules. None for a rules
/// exercise.
fn recording_lines(app: &TrainApp, theme: Theme) -> Vec<(Line<'static>, usize)> {
    let Some(recording) = recording_path(app) else {
        return Vec::new();
    };
    let rules = safe(
        &app.course
            .as_named(&app.exercise().start)
            .display()
            .to_string(),
    )
    .into_owned();
    vec![
        (titled("Recording ", recording.clone(), theme), 2),
        (
            titled(
                "Replay it ",
                format!("plugtop --replay {recording} -c {rules}"),
                theme,
            ),
            2,
        ),
    ]
}

/// The exercise panel's text, wrapped to `area`'s inner width, one row a
/// line: the verdict first (each clause missed on its own line), then the
/// explanation once solved or the hints and the brief, the goal or the
/// question, the recording a diagnosis is about, the attempts and time.
fn exercise_text(app: &TrainApp, area: Rect, theme: Theme) -> Vec<Line<'static>> {
    let ex = app.exercise();
    let p = app
        .progress
        .exercises
        .get(&ex.id)
        .cloned()
        .unwrap_or_default();
    let solved = p.solved && !ex.explanation.is_empty();
    // (line, indent of its wrapped rows)
    let mut lines: Vec<(Line<'static>, usize)> = Vec::new();
    if let Some(v) = &app.current.verdict {
        lines.extend(verdict_lines(v, theme));
    }
    if solved {
        lines.push((Line::styled("Why", theme.title()), 0));
        lines.push((Line::raw(safe(&ex.explanation).into_owned()), 0));
        lines.push((Line::raw(""), 0));
    } else {
        // Hints unlocked come before the brief: they are what is new.
        for (i, h) in app.hints().iter().enumerate() {
            let hint = titled(format!("Hint {} ", i + 1), safe(h).into_owned(), theme);
            lines.push((hint, 0));
        }
        if !app.hints().is_empty() {
            lines.push((Line::raw(""), 0));
        }
        lines.push((Line::raw(safe(&ex.brief).into_owned()), 0));
        lines.push((Line::raw(""), 0));
    }
    match (&ex.goal, &ex.question) {
        (Some(g), _) => lines.push((titled("Goal ", safe(g.text()).into_owned(), theme), 0)),
        (None, Some(q)) => lines.push((titled("Question ", safe(q).into_owned(), theme), 0)),
        _ => {}
    }
    lines.extend(recording_lines(app, theme));
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
    lines.push((
        Line::styled(
            format!("{state} · attempts {} · {time}", p.attempts),
            theme.dim(),
        ),
        0,
    ));
    if !solved {
        let locked = ex.hints.len() - app.hints().len();
        if locked > 0 {
            lines.push((
                Line::styled(
                    format!(
                        "({locked} more hint{} after failed attempts or time)",
                        if locked == 1 { "" } else { "s" }
                    ),
                    theme.dim(),
                ),
                0,
            ));
        }
    }
    lines
        .iter()
        .flat_map(|(line, indent)| wrapped(std::slice::from_ref(line), area, *indent))
        .collect()
}

/// The exercise panel, scrolled to [`super::app::Current::scroll`].
fn exercise_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let ex = app.exercise();
    let keys = match ex.kind {
        Kind::Rules => ("↑ PgUp", "↓ PgDn"),
        Kind::Diagnosis => ("PgUp", "PgDn"),
    };
    let rows = exercise_text(app, area, theme);
    scrolled(
        frame,
        area,
        &safe(&ex.title),
        rows,
        app.current.scroll,
        keys,
        theme,
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
                    .filter(|_| started && !c.is_flag())
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
    wrapped_panel(frame, area, " Practice run ", lines, theme);
}

fn choices_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let mut lines = Vec::new();
    for (i, c) in app.current.choices.iter().enumerate() {
        let (mark, style) = if app.current.selected == Some(i) {
            ("▶ ", theme.selected())
        } else {
            ("  ", Style::default())
        };
        lines.push(Line::styled(format!("{mark}{}", safe(&c.line())), style));
    }
    if lines.is_empty() {
        lines.push(Line::styled("no comparison to point at", theme.warning()));
    } else if app.current.selected.is_none() {
        // Nothing is pointed at until ↓ (so that Enter alone never
        // answers): say how, first (nu53 M10).
        lines.insert(
            0,
            Line::styled("↓ to point at one, Enter answers", theme.title()),
        );
    }
    wrapped_panel(frame, area, " Point at the culprit ", lines, theme);
}

fn rules_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let mut lines = Vec::new();
    // Rules past the panel's rows: said on its bottom border.
    let mut more = 0;
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
                        let text = ellipsize(&safe(&text), room);
                        lines.push(titled(format!("{:<10}", f.name()), text, theme));
                    }
                    Field::Limit(_) if !text.trim().is_empty() => {
                        limits.push(format!("{}={}", f.name(), text.trim()));
                    }
                    _ => {}
                }
            }
            // The limits wrapped between them, never cut (nu54 F4: at 60
            // columns `CMM_MAX=1245184` lost its last digit).
            let limits = crate::report::words::wrap(&safe(&limits.join("  ")), inside(area));
            // Room for the rules but the limits' rows: those past it are
            // counted, never dropped unsaid.
            let rows = usize::from(area.height)
                .saturating_sub(2 + limits.len())
                .max(1);
            more = lines.len().saturating_sub(rows);
            lines.truncate(rows);
            for row in limits {
                lines.push(Line::styled(row, theme.dim()));
            }
        }
        Err(e) => {
            let text = format!("cpuplugd refuses it: {}; e opens the editor there", safe(e));
            for row in crate::report::words::wrap(&text, inside(area)) {
                lines.push(Line::styled(row, theme.warning()));
            }
        }
    }
    let title = format!(
        " Rules: {} ",
        ellipsize(
            &safe(app.current.file.name()),
            inside(area).saturating_sub(9)
        )
    );
    let rules = if more == 1 { "rule" } else { "rules" };
    let said = (more > 0).then(|| format!(" {more} more {rules}: e shows every one "));
    let block = counted(
        panel().title(Span::styled(title, theme.title())),
        said,
        theme,
    );
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// `block` with what it leaves out said on its bottom border, if anything.
fn counted(block: Block<'static>, left_out: Option<String>, theme: Theme) -> Block<'static> {
    match left_out {
        Some(text) => block.title_bottom(Line::styled(text, theme.dim()).right_aligned()),
        None => block,
    }
}

/// The main screen's what-if editor ([`whatif_editor`]): the field's name
/// as a label apart from the text, the text with its cursor, and at every
/// keystroke what cpuplugd would say of it, a caret under the error.
fn editor_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let Some(editor) = &app.current.editor else {
        return;
    };
    let width = inside(area);
    let edited = editor.edited_fields(&app.current.parsed, &app.current.file);
    // The text in the rows the panel has beside its two lines of verdict.
    let rows = usize::from(area.height.saturating_sub(4)).max(1);
    let mut lines = whatif_editor::lines(
        editor,
        &edited,
        "makes it the working copy and runs it",
        width,
        rows,
        &theme,
    );
    lines.push(Line::styled(
        if editor.error().is_some() {
            "Enter applies nothing while cpuplugd would refuse the edit (error above)"
        } else {
            "Enter saves the working copy and runs the practice run again"
        },
        theme.dim(),
    ));
    let what = if editor.file_mode() {
        "a rule file".to_string()
    } else {
        editor.field().name().to_string()
    };
    let title = format!(
        " What-if editor: {} ",
        ellipsize(&safe(&what), width.saturating_sub(18))
    );
    wrapped_panel(frame, area, &title, lines, theme);
}

/// The recording's changes of decision, each line wrapped between words
/// (nu54 F4: cut with `…`, numbers were lost); rows past the panel are
/// counted on its bottom border, never dropped unsaid.
fn flips_panel(app: &TrainApp, frame: &mut Frame, area: Rect, theme: Theme) {
    let mut rows: Vec<Line> = Vec::new();
    for l in &app.current.flips {
        let text = safe(l).into_owned();
        let lead = text.len() - text.trim_start().len();
        let line = if l.starts_with('#') {
            Line::styled(text, theme.title())
        } else {
            Line::raw(text)
        };
        rows.extend(wrapped(std::slice::from_ref(&line), area, lead + 2));
    }
    let room = usize::from(area.height.saturating_sub(2));
    let more = rows.len().saturating_sub(room);
    rows.truncate(room);
    let title = Span::styled(
        " Flips: the recording's changes of decision ",
        theme.title(),
    );
    let said =
        (more > 0).then(|| format!(" {more} more rows: the replay's Flips view has them all "));
    let block = counted(panel().title(title), said, theme);
    frame.render_widget(Paragraph::new(rows).block(block), area);
}
