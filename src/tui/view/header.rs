//! Two header lines: where the data comes from and when, then the mode (in
//! a colour nobody misses), the alarms and the views.
//!
//! Each line has forms, tried longest first, so a narrow screen (80
//! columns) keeps what matters most: the source's kind (sim, replay, root,
//! live) always, then the mode, the alarms with their facts, the position
//! in time, and last the view tabs. What a form leaves out is not lost: the
//! header ends in `+N in ?` when alarms are left out, and `?` lists all
//! the header left out ([`hidden`]). The forms are chosen by widths that do
//! not move with counters (an interval number is measured as if it had six
//! digits, any number as if it had two), so the header does not change its
//! form from one second to the next as a counter gains a digit.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::fit::middle_cut;
use super::theme::Theme;
use crate::engine::GroupStatus;
use crate::report::shown_file_name;
use crate::tui::app::{App, SourceLabel, View};

/// Digits an interval number is measured with when a form is chosen.
const NUMBER_DIGITS: usize = 6;
/// Digits of "(N back)" measured: the timeline keeps at most 600.
const BACK_DIGITS: usize = 3;
/// The fewest columns a rule file's name is cut to before the source's
/// status gives way.
const FILE_MIN: usize = 16;

/// Draws the header into `area` (two lines).
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let fitted = fit(app, theme, super::fit::room(area.width));
    let first = Line::from(vec![
        Span::styled("plugtop ", theme.title()),
        Span::raw(fitted.middle),
        Span::styled(fitted.clock, theme.text()),
    ]);
    super::plain_lines::put(
        frame.buffer_mut(),
        area,
        &[first, Line::from(fitted.second)],
    );
}

/// The header fitted to a width: its first line's middle and clock, its
/// second line's spans with which is which view's tab, and what it left
/// out (each in full).
struct Fitted {
    middle: String,
    clock: String,
    second: Vec<Span<'static>>,
    hidden: Vec<LeftOut>,
}

/// A part the header left out for want of room, in full.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    pub text: String,
    /// Said elsewhere on the screen or of little weight at a glance (the
    /// host, the kernel, the interval's length): listed by `?` only beside
    /// a part that is not.
    pub minor: bool,
}

impl LeftOut {
    fn new(text: String, minor: bool) -> Self {
        LeftOut { text, minor }
    }
}

fn fit(app: &App, theme: &Theme, width: usize) -> Fitted {
    let (clock, middle, mut hidden, moved) = first_line(app, width);
    let (second, _, more) = second_line_spans(app, theme, width, moved);
    hidden.extend(more);
    Fitted {
        middle,
        clock,
        second,
        hidden,
    }
}

/// The first line's clock and middle at `width`, what it left out, and the
/// source's status when it gave way there: the second line takes it, after
/// the alarms.
fn first_line(app: &App, width: usize) -> (String, String, Vec<LeftOut>, Option<String>) {
    let (clock, reserved) = clock_of(app);
    let m = Middle::of(app);
    let (middle, mut hidden) = header_middle(width, reserved, &m);
    let moved = m
        .status
        .filter(|status| hidden.iter().any(|h| h.text == *status));
    hidden.retain(|h| Some(&h.text) != moved.as_ref());
    (clock, middle, hidden, moved)
}

/// What the header left out on a screen `width` columns wide, each in
/// full: `?` lists it above the keys.
pub fn hidden(app: &App, width: u16) -> Vec<LeftOut> {
    fit(app, &Theme { color: false }, super::fit::room(width)).hidden
}

/// The clock of the first line ("#123 (4 back) 12:00:05") and the columns
/// it is measured with: its numbers as wide as they grow to.
fn clock_of(app: &App) -> (String, usize) {
    let back = app.timeline().cursor().filter(|k| *k > 0);
    let slid = app.timeline().slid();
    match app.frame() {
        Some(f) => clock_text(Some(f.number), back, slid, &super::clock(f.sample.stamp)),
        None => clock_text(None, back, slid, "--:--:--"),
    }
}

/// The clock for interval `number`, `back` intervals before the newest, at
/// `time`, and the columns it is measured with. `slid`: the interval held
/// fell out of the kept window (a live guest's readings go on), so the one
/// shown is the oldest kept and moves on: it says so.
fn clock_text(
    number: Option<usize>,
    back: Option<usize>,
    slid: bool,
    time: &str,
) -> (String, usize) {
    let digits = |n: usize| n.checked_ilog10().unwrap_or(0) as usize + 1;
    let (interval, grow) = match number {
        Some(n) => (format!("#{n}"), NUMBER_DIGITS.saturating_sub(digits(n))),
        None => ("-".to_string(), NUMBER_DIGITS),
    };
    let (position, back_grow) = match back {
        Some(_) if slid => (" (oldest kept, moving)".to_string(), 0),
        Some(k) => (
            format!(" ({k} back)"),
            BACK_DIGITS.saturating_sub(digits(k)),
        ),
        None => (String::new(), 0),
    };
    let clock = format!("{interval}{position} {time}");
    let reserved = super::fit::cols(&clock) + grow + back_grow;
    (clock, reserved)
}

/// Columns `text` is measured with when a form is chosen: every number as
/// if it had at least two digits ("0:09 of 12:30" as wide as "10:09 of
/// 12:30"), so a counter gaining a digit does not change the form.
fn stable_cols(text: &str) -> usize {
    let mut extra = 0;
    let mut run = 0;
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            run += 1;
        } else {
            if run == 1 {
                extra += 1;
            }
            run = 0;
        }
    }
    super::fit::cols(text) + extra
}

/// What the header's first line names between "plugtop" and the clock.
struct Middle {
    /// The host with its z/VM guest name, the host alone, the kernel.
    with_guest: String,
    host: String,
    kernel: String,
    /// The rule file's name, and without "built-in " for the built-in ones.
    file: String,
    short_file: String,
    /// Where the readings come from: in full ("replay o.rec ×1"), in
    /// short ("replay ×1"), and what the source says of itself (the
    /// simulator's phase and time).
    source: String,
    short_source: String,
    /// The source's kind alone ("sim", "replay", "root", "live"): named at
    /// any width, so a simulated guest is never taken for a real one.
    kind: &'static str,
    status: Option<String>,
}

impl Middle {
    fn of(app: &App) -> Middle {
        let (source, short_source) = match app.source() {
            SourceLabel::Live(root) if root == "/" => ("live".to_string(), "live".to_string()),
            SourceLabel::Live(root) => (format!("root {root}"), "root".to_string()),
            SourceLabel::Replay { file, speed } => (
                format!("replay {} ×{speed}", shown_file_name(file)),
                format!("replay ×{speed}"),
            ),
            // The host field already names the scenario.
            SourceLabel::Sim { speed, .. } if *speed == 1.0 => ("sim".into(), "sim".into()),
            SourceLabel::Sim { speed, .. } => (format!("sim ×{speed}"), format!("sim ×{speed}")),
        };
        let kind = match app.source() {
            SourceLabel::Live(root) if root == "/" => "live",
            SourceLabel::Live(_) => "root",
            SourceLabel::Replay { .. } => "replay",
            SourceLabel::Sim { .. } => "sim",
        };
        let machine = app.machine();
        let file = shown_file_name(app.file().name());
        Middle {
            with_guest: match &machine.guest {
                Some(guest) => format!("{} ({guest})", machine.host),
                None => machine.host.clone(),
            },
            host: machine.host.clone(),
            kernel: machine.kernel.clone(),
            short_file: file.strip_prefix("built-in ").unwrap_or(&file).to_string(),
            file,
            source,
            short_source,
            kind,
            // The source's status is of its newest reading: said so when
            // an earlier interval is shown.
            status: app.source_status().map(|status| {
                match app.timeline().cursor().filter(|k| *k > 0) {
                    Some(_) => format!("now {status}"),
                    None => status.to_string(),
                }
            }),
        }
    }
}

/// A badge of the header's second line in the forms it can take, longest
/// first: on a narrow screen it gives way to a shorter one rather than
/// being cut.
struct Badge {
    forms: Vec<String>,
    style: Style,
}

impl Badge {
    fn new(forms: Vec<String>, style: Style) -> Self {
        Badge { forms, style }
    }
}

/// How far the second line gave way to fit.
#[derive(Clone, Copy)]
struct Squeeze {
    /// "every Ns" (the rules' UPDATE) left out.
    no_every: bool,
    /// The view tabs: 0 all by name, 1 the view shown alone ("Flips 4/5"),
    /// 2 none.
    tabs: u8,
    /// The source's status, moved here from the first line, left out.
    no_status: bool,
    /// Forms given up, summed over the badges from the last one back.
    shortened: usize,
    /// Badges left out from the end (counted in a `+N in ?` badge).
    dropped: usize,
}

/// The header's second line (mode, badges, view tabs, warnings) fitted to
/// `width`, which of its spans is which view's tab (drawing and mouse
/// clicks use the same spans), and what it left out in full. What gives
/// way, in order: "every Ns", the tabs (to the view shown alone, then
/// none), the badges (to shorter forms, from the last), and only then are
/// badges left out, with a count of how many and where to read them.
fn second_line_spans(
    app: &App,
    theme: &Theme,
    width: usize,
    moved: Option<String>,
) -> (Vec<Span<'static>>, Vec<(usize, View)>, Vec<LeftOut>) {
    let mode = app.board().mode();
    let every = format!("every {}s", app.rules().settings.update);
    let before = before_badges(app, theme);
    let after: Vec<Badge> = warnings(app)
        .into_iter()
        .map(|forms| Badge::new(forms, theme.warning()))
        .collect();
    let total_forms: usize = before.iter().chain(&after).map(|b| b.forms.len() - 1).sum();
    let badges = before.len() + after.len();
    let parts = Parts {
        mode: Span::styled(
            format!(" {} ", mode.to_string().to_uppercase()),
            theme.mode(mode),
        ),
        every: every.clone(),
        paused: app.timeline().paused(),
        status: moved.clone(),
        before: &before,
        after: &after,
    };
    let build = |sq: Squeeze| line_with(app, theme, &parts, sq);
    // The badges measured as their numbers grow (a period or a pid gaining
    // a digit); the tabs as they are.
    let fits = |(spans, tabs): &(Vec<Span<'_>>, Vec<(usize, View)>)| {
        spans
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if tabs.iter().any(|(t, _)| *t == i) {
                    s.width()
                } else {
                    stable_cols(&s.content)
                }
            })
            .sum::<usize>()
            <= width
    };
    let mut sq = Squeeze {
        no_every: false,
        tabs: 0,
        no_status: moved.is_none(),
        shortened: 0,
        dropped: 0,
    };
    let (spans, tabs) = loop {
        let built = build(sq);
        if fits(&built) {
            break built;
        }
        if !sq.no_every {
            sq.no_every = true;
        } else if sq.tabs < 2 {
            sq.tabs += 1;
        } else if !sq.no_status {
            sq.no_status = true;
        } else if sq.shortened < total_forms {
            sq.shortened += 1;
        } else if sq.dropped < badges {
            sq.dropped += 1;
        } else {
            break built;
        }
    };
    // What was left out or shortened, in full.
    let mut hidden = Vec::new();
    if sq.no_every {
        hidden.push(LeftOut::new(every, true));
    }
    if let Some(status) = moved.filter(|_| sq.no_status) {
        hidden.push(LeftOut::new(status, false));
    }
    let forms = badge_forms(before.len() + after.len(), &parts, sq.shortened);
    let kept = badges - sq.dropped.min(badges);
    for (i, b) in before.iter().chain(&after).enumerate() {
        if i >= kept || forms[i] > 0 {
            hidden.push(LeftOut::new(b.forms[0].clone(), false));
        }
    }
    (spans, tabs, hidden)
}

/// The badges before the tabs, in their forms longest first: flapping
/// (with its period), who else acts on the guest, a proposal waiting.
fn before_badges(app: &App, theme: &Theme) -> Vec<Badge> {
    let mode = app.board().mode();
    let mut before = Vec::new();
    for f in app.flips_shown().flapping() {
        let what = match f.what {
            crate::control::flap::Quantity::Cpus => "CPUS",
            crate::control::flap::Quantity::Pool => "POOL",
        };
        let period = crate::report::words::intervals(f.period.round());
        before.push(Badge::new(
            vec![
                format!("{what} FLAPPING ~{period}"),
                format!("{what} FLAP ~{period}"),
                format!("{what} FLAPPING"),
            ],
            theme.warning(),
        ));
    }
    if let Some(dead) = app.left_changed() {
        // A dead plugtop's changes are still on the guest (the Log says
        // what and how to put them back).
        let pid = dead.pid;
        before.push(Badge::new(
            vec![
                format!("UNRESTORED: plugtop pid {pid} died"),
                format!("UNRESTORED pid {pid}"),
                "UNRESTORED".to_string(),
            ],
            theme.warning(),
        ));
    }
    if let Some(other) = app.acting_elsewhere()
        && other.stale.is_some()
    {
        // Nobody acts: cpuplugd's pid file is stale (the Log says why).
        before.push(Badge::new(
            vec![
                "STALE cpuplugd.pid: nobody acts".to_string(),
                "STALE cpuplugd.pid".to_string(),
                "STALE PID".to_string(),
            ],
            theme.warning(),
        ));
    } else if let Some(other) = app.acting_elsewhere()
        && other.stopped
    {
        // It holds the lock but is stopped (Ctrl-Z, SIGSTOP): nothing
        // acts until it is continued.
        let name = other.name.to_uppercase();
        let pid = other.pid;
        before.push(Badge::new(
            vec![
                format!("{name} pid {pid} STOPPED: nothing acts"),
                format!("{name} pid {pid} STOPPED"),
                format!("PID {pid} STOPPED"),
                "STOPPED".to_string(),
            ],
            theme.warning(),
        ));
    } else if let Some(other) = app.acting_elsewhere() {
        let name = other.name.to_uppercase();
        let pid = other.pid;
        // Who and the pid first: they fit 80 columns; the start time
        // where there is room.
        let mut forms = Vec::new();
        if let Some(since) = other.since {
            let since = crate::report::time_of_day(crate::kernel::Stamp::new(since, 0));
            forms.push(format!("{name} pid {pid} ACTS HERE since {since}"));
            forms.push(format!("{name} pid {pid} ACTS since {}", &since[..5]));
        }
        forms.push(format!("{name} pid {pid} ACTS"));
        forms.push(format!("PID {pid} ACTS HERE"));
        forms.push(format!("{name} ACTS"));
        before.push(Badge::new(forms, theme.warning()));
    }
    if app.board().pending().is_some() {
        let first = if app.proposal_hidden() {
            "PROPOSAL WAITING (Esc'd): y/n"
        } else {
            "PROPOSAL WAITING: y/n"
        };
        before.push(Badge::new(
            vec![first.to_string(), "PROPOSAL y/n".to_string()],
            theme.mode(mode),
        ));
    }
    before
}

/// What the second line is made of.
struct Parts<'a> {
    mode: Span<'static>,
    every: String,
    paused: bool,
    /// The source's status (the simulator's phase and progress) when the
    /// first line had no room for it: after the alarms, before the tabs in
    /// weight (they give way first).
    status: Option<String>,
    /// Badges before the tabs (flapping, who else acts, a proposal) and
    /// after them (warnings).
    before: &'a [Badge],
    after: &'a [Badge],
}

/// Which form each of the `n` badges takes when `shortened` forms are given
/// up: from the last badge back, each to its shortest before the one before
/// it gives way.
fn badge_forms(n: usize, parts: &Parts<'_>, shortened: usize) -> Vec<usize> {
    let all: Vec<&Badge> = parts.before.iter().chain(parts.after).collect();
    let mut form = vec![0usize; n];
    let mut left = shortened;
    for (i, b) in all.iter().enumerate().rev() {
        let step = left.min(b.forms.len() - 1);
        form[i] = step;
        left -= step;
    }
    form
}

/// The second line squeezed as `sq` says.
fn line_with(
    app: &App,
    theme: &Theme,
    parts: &Parts<'_>,
    sq: Squeeze,
) -> (Vec<Span<'static>>, Vec<(usize, View)>) {
    let all: Vec<&Badge> = parts.before.iter().chain(parts.after).collect();
    let form = badge_forms(all.len(), parts, sq.shortened);
    let kept = all.len() - sq.dropped.min(all.len());
    let badge = |i: usize| {
        let b = all[i];
        Span::styled(format!(" {} ", b.forms[form[i]]), b.style)
    };
    let mut spans = vec![parts.mode.clone(), Span::raw(" ")];
    if !sq.no_every {
        spans.push(Span::raw(format!("{} ", parts.every)));
    }
    if parts.paused {
        spans.push(Span::styled(" PAUSED ", theme.warning()));
        spans.push(Span::raw(" "));
    }
    for i in 0..parts.before.len().min(kept) {
        spans.push(badge(i));
        spans.push(Span::raw(" "));
    }
    let mut tabs = Vec::new();
    for (n, v) in View::ALL.iter().copied().enumerate() {
        let shown = v == app.selection().view();
        let style = if shown { theme.selected() } else { theme.dim() };
        let text = match sq.tabs {
            0 => format!(" {} ", v.title()),
            1 if shown => format!(" {} {}/{} ", v.title(), n + 1, View::ALL.len()),
            _ => continue,
        };
        spans.push(Span::styled(text, style));
        tabs.push((spans.len() - 1, v));
    }
    for i in parts.before.len()..kept {
        if i > parts.before.len() || !tabs.is_empty() {
            spans.push(Span::raw(" "));
        }
        spans.push(badge(i));
    }
    let status = parts.status.as_ref().filter(|_| !sq.no_status);
    if let Some(status) = status {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(format!(" {status} "), theme.text()));
    }
    let left_out = sq.dropped.min(all.len()) + usize::from(parts.status.is_some() && sq.no_status);
    if left_out > 0 {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(format!(" +{left_out} in ? "), theme.warning()));
    }
    (spans, tabs)
}

/// The width the header's lines may fill (all but the last column).
fn header_width(app: &App) -> usize {
    super::fit::room(app.screen_size().0)
}

/// The view whose tab is at `column` of the header's second line.
pub fn tab_at(app: &App, column: u16) -> Option<View> {
    let theme = Theme { color: false };
    let width = header_width(app);
    let (_, _, _, moved) = first_line(app, width);
    let (spans, tabs, _) = second_line_spans(app, &theme, width, moved);
    let mut x = 0usize;
    for (i, span) in spans.iter().enumerate() {
        let w = span.width();
        if usize::from(column) >= x && usize::from(column) < x + w {
            return tabs.iter().find(|(t, _)| *t == i).map(|(_, v)| *v);
        }
        x += w;
    }
    None
}

/// The first line's middle in one of its forms: which parts it names.
#[derive(Clone, Copy)]
struct Form {
    /// The host, with its z/VM guest name.
    host: bool,
    guest: bool,
    kernel: bool,
    /// The rule file's name: 0 in full, 1 without "built-in ", 2 cut to
    /// the room left (no fewer than [`FILE_MIN`] columns).
    file: u8,
    /// The source: 0 in full ("replay o.rec ×1", "root /srv/g"), 1 short
    /// ("replay ×1", "root"), 2 its kind alone.
    source: u8,
    status: bool,
}

/// The first line's forms, longest first: the kernel goes first, then the
/// guest, the host, the file's "built-in", the source's file or root, then
/// the file's name is cut in its middle, and only then the source's status
/// (the simulator's phase and progress) and speed.
const FORMS: [Form; 11] = {
    const fn f(host: bool, guest: bool, kernel: bool, file: u8, source: u8, status: bool) -> Form {
        Form {
            host,
            guest,
            kernel,
            file,
            source,
            status,
        }
    }
    [
        f(true, true, true, 0, 0, true),
        f(true, true, false, 0, 0, true),
        f(true, false, true, 0, 0, true),
        f(true, false, false, 0, 0, true),
        f(false, false, false, 0, 0, true),
        f(false, false, false, 1, 0, true),
        f(false, false, false, 1, 1, true),
        f(false, false, false, 2, 1, true),
        f(false, false, false, 1, 1, false),
        f(false, false, false, 1, 2, false),
        f(false, false, false, 2, 2, false),
    ]
};

/// The header's middle (host and guest · kernel · rule file · source ·
/// status), fitted so the interval number and the clock after it
/// (`clock` columns, measured as they grow) are never cut and the rule
/// file's name and the source's kind stay; a file name longer than all the
/// room is shortened in its middle. With it, what it left out, in full.
fn header_middle(width: usize, clock: usize, m: &Middle) -> (String, Vec<LeftOut>) {
    let room = width.saturating_sub("plugtop ".len() + clock);
    let cols = super::fit::cols;
    for form in FORMS {
        let mut parts: Vec<String> = Vec::new();
        if form.host {
            parts.push(if form.guest { &m.with_guest } else { &m.host }.clone());
        }
        if form.kernel {
            parts.push(m.kernel.clone());
        }
        let file_at = parts.len();
        parts.push(match form.file {
            0 => m.file.clone(),
            _ => m.short_file.clone(),
        });
        parts.push(match form.source {
            0 => m.source.clone(),
            1 => m.short_source.clone(),
            _ => m.kind.to_string(),
        });
        if form.status
            && let Some(status) = &m.status
        {
            parts.push(status.clone());
        }
        if form.file == 2 {
            // The file's name takes what the rest leaves, if enough.
            let rest: usize = parts
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != file_at)
                .map(|(_, p)| stable_cols(p) + 3)
                .sum::<usize>()
                + 3;
            let left = room.saturating_sub(rest);
            if left < FILE_MIN.min(cols(&m.short_file)) {
                continue;
            }
            parts[file_at] = middle_cut(&m.short_file, left);
        }
        let text = format!("{} · ", parts.join(" · "));
        if stable_cols(&text) <= room {
            return (text, left_out(m, form, &parts[file_at]));
        }
    }
    // The file's name gives way in its middle; the kind stays.
    let form = FORMS[FORMS.len() - 1];
    let kind = format!(" · {} · ", m.kind);
    let left = room.saturating_sub(cols(&kind));
    if left < 4 {
        let text = if room >= cols(m.kind) + 3 {
            format!("{} · ", m.kind)
        } else {
            String::new()
        };
        return (text, left_out(m, form, ""));
    }
    let file = middle_cut(&m.short_file, left);
    let hidden = left_out(m, form, &file);
    (format!("{file}{kind}"), hidden)
}

/// What the first line's `form` leaves out of `m`, each in full (`file` is
/// the rule file's name as shown).
fn left_out(m: &Middle, form: Form, file: &str) -> Vec<LeftOut> {
    let mut out = Vec::new();
    if !form.host || (!form.guest && m.with_guest != m.host) {
        out.push(LeftOut::new(format!("host {}", m.with_guest), true));
    }
    if !form.kernel {
        out.push(LeftOut::new(format!("kernel {}", m.kernel), true));
    }
    if file != m.file && file != m.short_file {
        out.push(LeftOut::new(format!("rules {}", m.file), false));
    }
    let source = match form.source {
        0 => m.source.as_str(),
        1 => m.short_source.as_str(),
        _ => m.kind,
    };
    if source != m.source {
        out.push(LeftOut::new(m.source.clone(), false));
    }
    if let Some(status) = m.status.as_ref().filter(|_| !form.status) {
        out.push(LeftOut::new(status.clone(), false));
    }
    out
}

/// Badges after the tabs, each in its forms longest first: a disabled
/// group (and why), rule names the kernel lacks, hints, a feedback loop, a
/// fault in the interval shown (in plain words).
fn warnings(app: &App) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    if let Some(damage) = app.damage() {
        // The replay ends early: the recording is damaged or torn at a
        // byte (the Log and stderr after the screen say it whole).
        let at = damage
            .rsplit_once(" at byte ")
            .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
            .filter(|n| !n.is_empty());
        let mut forms = Vec::new();
        if let Some(at) = at {
            forms.push(format!("RECORDING DAMAGED AT BYTE {at}: ENDS THERE (log)"));
            forms.push(format!("DAMAGED AT BYTE {at} (log)"));
        }
        forms.push("RECORDING DAMAGED (log)".to_string());
        forms.push("DAMAGED".to_string());
        out.push(forms);
    }
    if !app.rules().cpu_enabled {
        out.push(vec!["CPU OFF".to_string()]);
    }
    if let Some(off) = &app.rules().mem_off {
        // Why, as every front end decides it (rules::ruleset::memory_verdict).
        out.push(off.badges());
    }
    let lacking = app.kernel_lint().len();
    if lacking > 0 {
        let fields = if lacking == 1 { "FIELD" } else { "FIELDS" };
        out.push(vec![
            format!("RULES NAME {lacking} {fields} THIS KERNEL LACKS (log)"),
            format!("{lacking} {fields} MISSING (log)"),
            format!("{fields} MISSING"),
        ]);
    }
    let hints = app.hints().len();
    if hints > 0 {
        let word = if hints == 1 { "HINT" } else { "HINTS" };
        out.push(vec![
            format!("{hints} {word} (Flips)"),
            format!("{hints} {word}"),
        ]);
    }
    if !app.flips_shown().loops().is_empty() {
        out.push(vec!["FEEDBACK LOOP".to_string()]);
    }
    if let Some(frame) = app.frame()
        && let Some(d) = frame.decision.as_ref()
    {
        use crate::report::fault_words::{CPU_RULES, MEMORY_RULES, group_fault};
        let mut fault = |name: &str, group: &[crate::rules::RuleKind], f| {
            let words = group_fault(&frame.rules, &frame.file, &frame.trace, group, f);
            let mut forms = vec![format!("{name} FAULT: {words}")];
            // "division by zero: no ticks elapsed" → "division by zero".
            if let Some((kind, _)) = words.split_once(": ") {
                forms.push(format!("{name} FAULT: {kind}"));
            }
            forms.push(format!("{name} FAULT"));
            out.push(forms);
        };
        if let Some(GroupStatus::Fault(f)) = d.cpu.map(|c| c.status) {
            fault("CPU", &CPU_RULES, f);
        }
        if let Some(GroupStatus::Fault(f)) = d.mem.map(|m| m.status) {
            fault("MEM", &MEMORY_RULES, f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn middle(file: &str, status: Option<&str>) -> Middle {
        Middle {
            with_guest: "a-rather-long-host-name.example.com (LINUX01)".into(),
            host: "a-rather-long-host-name.example.com".into(),
            kernel: "6.12.0-55.9.1.el10_0.s390x".into(),
            file: file.into(),
            short_file: file.strip_prefix("built-in ").unwrap_or(file).into(),
            source: "replay incident-of-the-night.rec ×1".into(),
            short_source: "replay ×1".into(),
            kind: "replay",
            status: status.map(str::to_string),
        }
    }

    /// Issue 45: at 80 columns a simulated guest's header dropped "sim"
    /// once its speed and phase grew; the source's kind stays at every
    /// width, beside the rule file's name.
    #[test]
    fn the_source_s_kind_is_named_at_every_width() {
        let clock = "#1234 (599 back) 12:00:05";
        let mut m = middle(
            "oscillating-tight.conf",
            Some("phase pulses · 3:10 of 6:00"),
        );
        m.source = "sim ×16".into();
        m.short_source = "sim ×16".into();
        m.kind = "sim";
        for width in 50..=200 {
            let line = format!(
                "plugtop {}{clock}",
                header_middle(width, super::super::fit::cols(clock), &m).0
            );
            assert!(super::super::fit::cols(&line) <= width, "{width}: {line}");
            assert!(line.contains(" sim"), "{width}: {line}");
        }
        // A name longer than the room is cut in its middle; the source
        // and its status stay.
        let m = middle(&format!("{}.conf", "x".repeat(200)), Some("phase 2"));
        let text = header_middle(80, super::super::fit::cols("#1 12:00:00"), &m).0;
        assert!(
            text.contains('…') && text.ends_with(".conf · replay ×1 · phase 2 · "),
            "{text}"
        );
    }

    #[test]
    fn the_rule_file_stays_at_every_width_and_the_clock_is_never_cut() {
        let clock = "#1234 (599 back) 12:00:05";
        for file in ["built-in recommended-modern.conf", "memory-config-10.conf"] {
            let m = middle(file, Some("phase 2 · 3:10 of 12:30"));
            for width in 60..=200 {
                let (text, hidden) = header_middle(width, super::super::fit::cols(clock), &m);
                let line = format!("plugtop {text}{clock}");
                assert!(super::super::fit::cols(&line) <= width, "{width}: {line}");
                // Whole from 80 columns (the screen's least), or cut in
                // its middle for the status and named whole where `?`
                // shows what the header left out; below, cut so the
                // source's kind stays too.
                let name = file.strip_prefix("built-in ").unwrap_or(file);
                if width >= 80 {
                    assert!(
                        line.contains(name)
                            || (line.contains("3:10 of 12:30")
                                && hidden.iter().any(|h| h.text == format!("rules {file}"))),
                        "{width}: {line}"
                    );
                } else {
                    assert!(
                        line.contains(&name[..4]) && line.contains(".conf"),
                        "{width}: {line}"
                    );
                }
            }
        }
        // Wide enough, everything is said.
        let m = middle("r.conf", None);
        let wide = header_middle(200, super::super::fit::cols(clock), &m).0;
        assert!(
            wide.contains("6.12.0") && wide.contains("LINUX01"),
            "{wide}"
        );
    }

    /// New-user finding 12: the host came and went as the interval
    /// counter gained a digit, and the simulator's phase and progress went
    /// once its speed showed. The form is chosen by widths that do not move
    /// with counters, and the status outlasts the host, the kernel and the
    /// whole of the file's name.
    #[test]
    fn the_form_does_not_move_with_counters_and_the_status_outlasts_the_host() {
        let mut m = middle(
            "built-in recommended-modern.conf",
            Some("ramp · 0:09 of 12:30"),
        );
        m.with_guest = "daytrader".into();
        m.host = "daytrader".into();
        m.source = "sim ×16".into();
        m.short_source = "sim ×16".into();
        m.kind = "sim";
        let form = |number: usize, status: &str| {
            let mut m = Middle {
                status: Some(status.into()),
                ..middle("built-in recommended-modern.conf", None)
            };
            m.with_guest = "daytrader".into();
            m.host = "daytrader".into();
            m.source = "sim ×16".into();
            m.short_source = "sim ×16".into();
            m.kind = "sim";
            let (_, clock) = clock_text(Some(number), None, false, "00:00:09");
            let (mut text, hidden) = header_middle(79, clock, &m);
            // The parts named, whatever their numbers.
            text.retain(|c| !c.is_ascii_digit());
            (text, hidden.len())
        };
        let first = form(9, "ramp · 0:09 of 12:30");
        for (number, status) in [
            (10, "ramp · 0:10 of 12:30"),
            (99_999, "ramp · 10:10 of 12:30"),
        ] {
            assert_eq!(form(number, status), first, "#{number}");
        }
        let (text, hidden) = header_middle(79, 16, &m);
        assert!(text.contains("sim ×16 · ramp · 0:09 of 12:30"), "{text}");
        // What gave way is said in full where `?` shows it.
        assert!(
            hidden.iter().any(|h| h.text == "host daytrader"),
            "{hidden:?}"
        );
        assert!(
            hidden
                .iter()
                .any(|h| h.text == "rules built-in recommended-modern.conf")
                || text.contains("recommended-modern.conf"),
            "{text} {hidden:?}"
        );
    }

    #[test]
    fn a_name_longer_than_the_room_keeps_its_start_and_end() {
        assert_eq!(middle_cut("memory-config-10.conf", 13), "memory…0.conf");
        assert_eq!(middle_cut("short.conf", 20), "short.conf");
        // Wide characters take two columns each: still within the room.
        let wide = middle_cut("規則ファイルの名前がとても長い.conf", 16);
        assert!(super::super::fit::cols(&wide) <= 16, "{wide}");
        assert!(wide.starts_with('規') && wide.ends_with(".conf"), "{wide}");
        let m = middle(&format!("{}.conf", "x".repeat(200)), None);
        let text = header_middle(80, super::super::fit::cols("#1 12:00:00"), &m).0;
        assert!(
            text.contains('…') && text.ends_with(".conf · replay ×1 · "),
            "{text}"
        );
    }

    /// newuser51 #5: on a live guest a paused interval that fell out of
    /// the 600 kept was dragged forward silently; the clock says it.
    #[test]
    fn a_held_interval_that_fell_out_of_the_kept_window_is_said_to_move() {
        let (held, _) = clock_text(Some(7), Some(599), false, "00:00:07");
        assert_eq!(held, "#7 (599 back) 00:00:07");
        let (slid, _) = clock_text(Some(8), Some(599), true, "00:00:08");
        assert_eq!(slid, "#8 (oldest kept, moving) 00:00:08");
    }
}
