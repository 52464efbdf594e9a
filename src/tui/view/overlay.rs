//! What lies over the screen, in the order the layers are open: the
//! what-if editor, the tune, the help ([`super::help`]), the prompts, the
//! questions (keeping an edit's in [`super::keep`]), and the step-confirm
//! proposal.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::boxes::{box_height, box_inner, boxed, sized_box};
use super::fit::wrap_line;
use super::theme::Theme;
use super::whatif_editor;
use crate::control::controller::Mode;
use crate::control::flap::Moves;
use crate::report::trace;
use crate::rules::RuleKind;
use crate::tui::app::{App, Dialog};
use crate::tui::modal::Modal;
use crate::tui::whatif::WhatIfEditor;

/// What the what-if timelines' characters mean (`?` says it too).
const TIMELINE_LEGEND: &str = "▲ plug a CPU  ▼ unplug one  + grow the pool  - shrink it  ^ differ";

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
    let inner_width = usize::from(box_inner(area.width));
    // A long (pasted) text is shown near the cursor, in at most a third of
    // the rows, so the verdict under it stays in sight.
    let rows = usize::from(area.height / 3).max(1);
    let edited = editor.edited_fields(app.rules(), app.file());
    let mut lines = whatif_editor::lines(
        editor,
        &edited,
        "runs it over the history on screen",
        inner_width,
        rows,
        theme,
    );
    lines.extend(verdict(app, editor, theme));
    if let Some(r) = editor.result() {
        let replay = matches!(app.source(), crate::tui::app::SourceLabel::Replay { .. });
        timelines(&mut lines, r, replay, inner_width, theme);
    }
    let title = editor_title(
        editor,
        edited.len(),
        usize::from(area.width).saturating_sub(4),
    );
    let height = box_height(&lines, area.width).min(area.height);
    let rect = Rect::new(area.x, area.y + area.height - height, area.width, height);
    boxed(frame, rect, &title, lines, theme);
}

/// What Enter does now, until it has run (what cpuplugd would say of the
/// edit is drawn with its text, [`whatif_editor::lines`]).
fn verdict(app: &App, editor: &WhatIfEditor, theme: &Theme) -> Vec<Line<'static>> {
    let waiting = editor.file_mode() && editor.input().text().trim().is_empty();
    let mut lines = Vec::new();
    match editor.result() {
        Some(_) => {}
        // A file that cannot be read is not cpuplugd refusing anything
        // (nu54 F5).
        None if editor.error().is_some() => lines.push(Line::styled(
            if editor.file_mode() {
                "Enter runs nothing until the file reads and cpuplugd would load it (error above)"
            } else {
                "Enter runs nothing while cpuplugd would refuse the edit (error above)"
            },
            theme.warning(),
        )),
        None if waiting => {}
        None => lines.push(Line::styled(
            format!(
                "Enter runs the edited rules over all {} intervals on screen",
                app.timeline().frames().len()
            ),
            theme.dim(),
        )),
    }
    lines
}

/// The editor's title: what is edited and the keys, as many of them as
/// `room` holds; a name too long for even the shortest is cut with `…`.
fn editor_title(editor: &WhatIfEditor, edited: usize, room: usize) -> String {
    let keys = if editor.file_mode() {
        [
            " · ^O back to the rules · Enter run · ^R apply · ^S write · Esc",
            " · ^O back · Enter run · ^R apply · ^S write",
            " · Enter run · ^R apply · ^S write · Esc",
            " · Esc closes",
        ]
    } else {
        [
            " · Tab ⇧Tab move · ^O file · Enter run · ^R apply · ^S write · Esc",
            " · Tab ⇧Tab ^O · Enter run · ^R apply · ^S write",
            " · Enter run · ^R apply · ^S write · Esc",
            " · Esc closes",
        ]
    };
    let what = if editor.file_mode() {
        "a rule file".to_string()
    } else {
        match edited {
            0 => editor.field().name().to_string(),
            n => format!("{} ({n} edited)", editor.field().name()),
        }
    };
    let shown = |what: &str, keys: &str| format!("What-if: {what}{keys}");
    if let Some(title) = keys
        .iter()
        .map(|k| shown(&what, k))
        .find(|t| t.chars().count() <= room)
    {
        return title;
    }
    let last = keys[keys.len() - 1];
    let fixed = shown("", last).chars().count() + 1;
    let cut: String = what.chars().take(room.saturating_sub(fixed)).collect();
    shown(&format!("{cut}…"), last)
}

/// The loaded and the what-if action timelines over the whole history
/// (several intervals a column when it is longer than the box is wide),
/// where they part, and what they add up to.
fn timelines(
    lines: &mut Vec<Line<'_>>,
    r: &crate::tui::whatif::Counterfactual,
    replay: bool,
    inner_width: usize,
    theme: &Theme,
) {
    let width = inner_width.saturating_sub(10).max(1);
    // The window it ran over at Enter: the history on screen moves on (a
    // simulator runs on, paused or not, and old intervals leave), the box
    // keeps drawing and counting the intervals its figures are of.
    let shown = &r.loaded;
    let decided: Vec<Moves> = shown.iter().map(|f| f.1).collect();
    let edited: Vec<Moves> = shown
        .iter()
        .map(|f| {
            r.actions
                .binary_search_by_key(&f.0, |a| a.0)
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
    lines.push(Line::styled(TIMELINE_LEGEND, theme.dim()));
    let span = match (shown.first(), shown.last()) {
        (Some(a), Some(b)) if per == 1 => {
            format!("#{}–#{} as at Enter, one column an interval", a.0, b.0)
        }
        (Some(a), Some(b)) => format!(
            "#{}–#{} as at Enter, {per} intervals a column (* several kinds)",
            a.0, b.0
        ),
        _ => "no intervals yet".to_string(),
    };
    lines.push(Line::from(Span::styled(span, theme.dim())));
    // A replay applies nothing: what the recorded guest did is said, as
    // `plugtop whatif`'s "recorded" column counts it.
    let done = if replay {
        format!(
            " · recorded guest: {} plug, {} unplug",
            r.applied_cpus.0, r.applied_cpus.1
        )
    } else {
        format!(", {} applied", r.applied)
    };
    lines.push(Line::from(format!(
        "differ in {differ} of {} · loaded: {} decided{done} · edited: {} decided · reversals {} → {}",
        shown.len(),
        r.changes.0,
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
    for stop in &r.stops {
        lines.push(Line::styled(
            format!("✗ {}", crate::report::terminal_safe(stop)),
            theme.warning(),
        ));
    }
    match r.reports.as_deref() {
        // A run cpuplugd left early has no figures worth comparing, as
        // `plugtop sim --compare` says.
        Some(_) if !r.stops.is_empty() => lines.push(Line::styled(
            "so no figures are compared: a stopped run's mean nothing",
            theme.dim(),
        )),
        Some((before, after)) => lines.extend(figures(before, after, theme)),
        None => lines.push(Line::styled(
            "so unmet CPU-s, CPUs, throughput and swap are compared only on --sim",
            theme.dim(),
        )),
    }
}

/// What the rules in force and the edited ones cost the simulated guest
/// over the same time, as `plugtop sim --compare` reports it.
fn figures(
    before: &crate::sim::report::SimReport,
    after: &crate::sim::report::SimReport,
    theme: &Theme,
) -> Vec<Line<'static>> {
    use crate::sim::report::key_rows;
    let mut lines = vec![Line::styled(
        format!(
            "{:<21}{:>18}{:>18}  0:00 to {}",
            "as sim --compare",
            "in force",
            "edited",
            crate::sim::report::clock(after.seconds)
        ),
        theme.dim(),
    )];
    for ((label, x), (_, y)) in key_rows(before).into_iter().zip(key_rows(after)) {
        lines.push(Line::from(format!("{label:<21}{x:>18}{y:>18}")));
    }
    lines
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
            Modal::Help => super::help::draw(frame, area, app, theme),
            Modal::SaveRules(prompt) => super::keep::save_prompt(frame, area, prompt, theme),
            Modal::Export(input) => export_prompt(frame, area, app, input, theme),
            Modal::Dialog(d) => dialog(frame, area, app, d, theme),
            // The search is typed into the Log view's title.
            Modal::GoTo(input) => goto_prompt(frame, area, app, input, theme),
            Modal::Search => {}
        }
    }
    if app.modals().is_empty() {
        proposal(frame, area, app, theme);
    }
}

/// The picked point of the tune's front: its form, and why it is not the
/// recommendation.
fn picked_lines(
    job: &crate::tui::tuning::TuneJob,
    rows: &[crate::tui::tuning::FrontRow],
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(r) = rows.get(job.cursor()) {
        let form = r.form.as_deref().map_or_else(
            || "form: the loaded rules' own, numbers moved".to_string(),
            |f| format!("form: {}", crate::report::terminal_safe(f)),
        );
        lines.push(Line::styled(form, theme.dim()));
        if let Some(why) = job.not_recommended_because(r.index) {
            lines.push(Line::styled(
                format!("not recommended: {}", crate::report::terminal_safe(&why)),
                theme.dim(),
            ));
        }
    }
    lines
}

/// The tune box's width.
const TUNE_WIDTH: u16 = 76;

/// The tune box's key line.
const TUNE_KEYS: &str = "↑↓ pick · Enter what-if editor · ^R apply · ^S write · Esc close · ? help";

/// Rows of the front kept over the explanations, when the front has them.
const TUNE_FRONT_LEAST: usize = 5;

/// The first `keep` of `rows` (at least one when there are any), the last
/// kept ending in `…` when some are left off.
fn cut_rows(mut rows: Vec<Line<'static>>, keep: usize) -> Vec<Line<'static>> {
    if rows.len() > keep {
        rows.truncate(keep.max(1));
        if let Some(last) = rows.last_mut() {
            last.spans.push(Span::raw("…"));
        }
    }
    rows
}

/// One row of the tune's front as the box lists it.
fn front_row(r: &crate::tui::tuning::FrontRow) -> String {
    let s = &r.score;
    format!(
        "{} {:>11.1} {:>9.2} {:>9.2} {:>7} {:>8} {:>4}{}",
        if r.index == 0 { "C" } else { " " },
        s.unmet_cpu_seconds,
        s.avg_online_cpus,
        s.guest_to_working_set,
        s.direct_scan_stalls,
        s.changes(),
        s.reversals,
        if r.recommended {
            "  ★ recommended"
        } else {
            ""
        }
    )
}

/// `T`: the tune's progress, then its front to pick from.
fn tune_box(frame: &mut Frame<'_>, area: Rect, job: &crate::tui::tuning::TuneJob, theme: &Theme) {
    let mut lines = Vec::new();
    if !job.finished() {
        let n = job.progress();
        let filled = n * 40 / job.budget().max(1);
        lines.push(Line::from(format!(
            "[{}{}] {n} of at most {} candidates",
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
    // Wrapped here, a column short, so the rows are counted as drawn and
    // a cut one has room for its `…`.
    let width = TUNE_WIDTH.min(area.width);
    let wrap = |l: Line<'static>| wrap_line(&l, usize::from(box_inner(width)) - 1, 0);
    let head = wrap(match job.nothing_recommended() {
        Some(why) => Line::styled(
            format!("recommended: {}", crate::report::terminal_safe(&why)),
            theme.warning(),
        ),
        None => Line::from("★ marks the point `plugtop tune` recommends; C is the current rules"),
    });
    let picked: Vec<Line<'static>> = picked_lines(job, &rows, theme)
        .into_iter()
        .flat_map(wrap)
        .collect();
    let keys = wrap_line(
        &Line::styled(TUNE_KEYS, theme.title()),
        usize::from(box_inner(width)),
        0,
    );
    // The key line always shows (nu53 F9): the borders, the heading, the
    // keys and the current rules' row plus one more are kept; the
    // explanations take what they need of the rest but a few rows of the
    // front, and are cut (ending in `…`) when even that is too little.
    let spare = usize::from(area.height).saturating_sub(2 + 1 + keys.len() + 2);
    let text_room = spare.saturating_sub(rows.len().saturating_sub(2).min(TUNE_FRONT_LEAST));
    let head_room = text_room.saturating_sub(picked.len().min(2)).max(1);
    let head = cut_rows(head, head_room);
    let picked = cut_rows(picked, text_room.saturating_sub(head.len()));
    let room = (spare + 1).saturating_sub(head.len() + picked.len()).max(1);
    // The current rules first, always; then as many rows as fit, scrolled
    // to keep the cursor in view.
    let first = job
        .cursor()
        .max(1)
        .saturating_sub(room.saturating_sub(1))
        .max(1);
    let (above, below) = (
        first - 1,
        rows.len().saturating_sub((first + room).min(rows.len())),
    );
    lines.extend(head);
    lines.push(Line::styled(
        format!(
            "   unmet CPU-s  CPUs avg  guest/WS  stalls  changes  rev{}",
            if above + below > 0 {
                format!("  ↑{above} ↓{below} more")
            } else {
                String::new()
            }
        ),
        theme.dim(),
    ));
    let shown = rows
        .iter()
        .enumerate()
        .take(1)
        .chain(rows.iter().enumerate().skip(first).take(room));
    for (i, r) in shown {
        let text = front_row(r);
        let style = if i == job.cursor() {
            theme.selected()
        } else {
            theme.text()
        };
        lines.push(Line::styled(text, style));
    }
    lines.extend(picked);
    lines.extend(keys);
    sized_box(
        frame,
        area,
        TUNE_WIDTH,
        &format!("Tune: the front of {}", job.candidates_words()),
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
    let lines = vec![
        Line::from(format!(
            "Write the log ({}) to this new file:",
            crate::report::words::count(app.log().lines().len() as f64, "line", "lines")
        )),
        super::typed_line(input, usize::from(area.width) * 4, theme),
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
        super::typed_line(input, usize::from(area.width) * 2, theme),
        Line::from(""),
        Line::styled(format!("{kept}; {ahead}"), theme.dim()),
        Line::styled("Enter go   Esc cancel   ^U clear", theme.title()),
    ];
    sized_box(frame, area, 76, "Jump to a time", lines, theme);
}

/// What acting does with the rules in force: only what their groups that
/// run change (a file with no memory group never resizes the pool).
fn acts_on(app: &App) -> &'static str {
    match (app.rules().cpu_enabled, app.rules().mem_off.is_none()) {
        (true, true) => "plug and unplug CPUs and resize the CMM pool",
        (true, false) => "plug and unplug CPUs (memory group off: the pool stays)",
        (false, true) => "resize the CMM pool (CPU group off: the CPUs stay)",
        (false, false) => "change nothing (both groups are off)",
    }
}

/// A question or a message on top of the screen.
fn dialog(frame: &mut Frame<'_>, area: Rect, app: &App, dialog: &Dialog, theme: &Theme) {
    let (title, lines) = match dialog {
        Dialog::Apply(rules) => return super::keep::apply(frame, area, rules, theme),
        Dialog::Replace(r) => return super::keep::replace(frame, area, r, theme),
        Dialog::Written(path) => return super::keep::written(frame, area, path, theme),
        Dialog::Exported(path) => ("Log exported", to_read(path, theme)),
        Dialog::ConfirmAuto => (
            "Autonomous mode",
            vec![
                Line::from(format!("plugtop will {}", acts_on(app))),
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
        Dialog::Message(text) => ("Not possible", to_read(text, theme)),
        Dialog::ReloadFailed(report) => {
            return reload_failed(frame, area, report, theme);
        }
    };
    sized_box(frame, area, 76, title, lines, theme);
}

/// The lines of a box that only says `text`: any key closes it.
fn to_read<'a>(text: &str, theme: &Theme) -> Vec<Line<'a>> {
    vec![
        Line::from(text.to_string()),
        Line::from(""),
        Line::styled("any key closes", theme.dim()),
    ]
}

/// `r` found the file refused: the report as `plugtop check` prints it,
/// line for line with its carets, as much as the screen holds (and how
/// much more there is).
fn reload_failed(frame: &mut Frame<'_>, area: Rect, report: &str, theme: &Theme) {
    let width = area.width.min(120);
    let inner = usize::from(box_inner(width));
    // The summary (the report's last line: how many errors and warnings)
    // stays whatever is cut before it.
    let (body, summary) = report
        .trim_end()
        .rsplit_once('\n')
        .unwrap_or(("", report.trim_end()));
    let mut text = super::report_box::lines(body, inner);
    let summary = super::report_box::lines(summary, inner);
    let room = usize::from(area.height.saturating_sub(2 + 3)).saturating_sub(summary.len());
    if text.len() > room {
        let more = text.len() - room.saturating_sub(1);
        text.truncate(room.saturating_sub(1));
        text.push(format!("… {more} more lines: plugtop check shows them all"));
    }
    text.extend(summary);
    let mut lines: Vec<Line<'_>> = text
        .into_iter()
        .map(|l| {
            if l.contains(": error: ") {
                Line::styled(l, theme.warning())
            } else {
                Line::raw(l)
            }
        })
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::styled(
        "fix the file and press r again · any key closes",
        theme.dim(),
    ));
    sized_box(
        frame,
        area,
        width,
        "Reload failed: the old rules stay active",
        lines,
        theme,
    );
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
                if let Some(e) = trace::explain(&f.rules, &f.file, &f.trace, kind)
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
