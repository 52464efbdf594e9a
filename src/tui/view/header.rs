//! Two header lines: where the data comes from and when, then the mode (in
//! a colour nobody misses), the views, and warnings.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use crate::engine::GroupStatus;
use crate::report::file_name;
use crate::tui::app::{App, SourceLabel, View};

/// Draws the header into `area` (two lines).
pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let (interval, time) = match app.frame() {
        Some(f) => (format!("#{}", f.number), super::clock(f.sample.stamp)),
        None => ("-".into(), "--:--:--".into()),
    };
    let position = match app.timeline().cursor() {
        Some(k) if k > 0 => format!(" ({k} back)"),
        _ => String::new(),
    };
    let clock = format!("{interval}{position} {time}");
    let middle = header_middle(usize::from(area.width), &clock, &Middle::of(app));
    let first = Line::from(vec![
        Span::styled("plugtop ", theme.title()),
        Span::raw(middle),
        Span::styled(clock, theme.text()),
    ]);
    let (second, _) = second_line_spans(app, theme, super::fit::room(area.width));
    super::plain_lines::put(frame.buffer_mut(), area, &[first, Line::from(second)]);
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
                format!("replay {} ×{speed}", file_name(file)),
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
        let file = file_name(app.file().name()).to_string();
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
            status: app.source_status().map(str::to_string),
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
    /// Tabs other than the current view's show their number key only.
    compact_tabs: bool,
    /// Forms given up, summed over the badges from the last one back.
    shortened: usize,
    /// Badges left out from the end (counted in a `+N` badge).
    dropped: usize,
}

/// The header's second line (mode, badges, view tabs, warnings) fitted to
/// `width`, and which of its spans is which view's tab: drawing and mouse
/// clicks use the same spans. The tabs give way first (to their number
/// keys), then the badges (to shorter forms), and only then are badges
/// left out, with a count of how many.
fn second_line_spans(
    app: &App,
    theme: &Theme,
    width: usize,
) -> (Vec<Span<'static>>, Vec<(usize, View)>) {
    let mode = app.board().mode();
    let mut lead = vec![
        Span::styled(
            format!(" {} ", mode.to_string().to_uppercase()),
            theme.mode(mode),
        ),
        Span::raw(format!(" every {}s ", app.rules().settings.update)),
    ];
    if app.timeline().paused() {
        lead.push(Span::styled(" PAUSED ", theme.warning()));
        lead.push(Span::raw(" "));
    }
    let mut before = Vec::new();
    for f in app.flips_shown().flapping() {
        let what = match f.what {
            crate::control::flap::Quantity::Cpus => "CPUS",
            crate::control::flap::Quantity::Pool => "POOL",
        };
        before.push(Badge::new(
            vec![
                format!(
                    "{what} FLAPPING ~{}",
                    crate::report::words::intervals(f.period.round())
                ),
                format!("{what} FLAPPING"),
            ],
            theme.warning(),
        ));
    }
    if let Some(other) = app.acting_elsewhere() {
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
    let after: Vec<Badge> = warnings(app)
        .into_iter()
        .map(|forms| Badge::new(forms, theme.warning()))
        .collect();
    let total_forms: usize = before.iter().chain(&after).map(|b| b.forms.len() - 1).sum();
    let badges = before.len() + after.len();
    let build = |sq: Squeeze| line_with(app, theme, &lead, (&before, &after), sq);
    let fits = |spans: &[Span<'_>]| spans.iter().map(Span::width).sum::<usize>() <= width;
    let mut sq = Squeeze {
        compact_tabs: false,
        shortened: 0,
        dropped: 0,
    };
    loop {
        let built = build(sq);
        if fits(&built.0) {
            return built;
        }
        if !sq.compact_tabs {
            sq.compact_tabs = true;
        } else if sq.shortened < total_forms {
            sq.shortened += 1;
        } else if sq.dropped < badges {
            sq.dropped += 1;
        } else {
            return built;
        }
    }
}

/// The second line with the badges `before` the tabs and `after` them,
/// squeezed as `sq` says.
fn line_with(
    app: &App,
    theme: &Theme,
    lead: &[Span<'static>],
    (before, after): (&[Badge], &[Badge]),
    sq: Squeeze,
) -> (Vec<Span<'static>>, Vec<(usize, View)>) {
    // Which form each badge takes: the shortening goes from the last badge
    // back, each to its shortest before the one before it gives way.
    let all: Vec<&Badge> = before.iter().chain(after).collect();
    let mut form = vec![0usize; all.len()];
    let mut left = sq.shortened;
    for (i, b) in all.iter().enumerate().rev() {
        let step = left.min(b.forms.len() - 1);
        form[i] = step;
        left -= step;
    }
    let kept = all.len() - sq.dropped.min(all.len());
    let badge = |i: usize| {
        let b = all[i];
        Span::styled(format!(" {} ", b.forms[form[i]]), b.style)
    };
    let mut spans = lead.to_vec();
    for i in 0..before.len().min(kept) {
        spans.push(badge(i));
        spans.push(Span::raw(" "));
    }
    let mut tabs = Vec::new();
    for v in View::ALL {
        let shown = v == app.selection().view();
        let style = if shown { theme.selected() } else { theme.dim() };
        let text = if sq.compact_tabs && !shown {
            format!(
                " {} ",
                View::ALL.iter().position(|x| *x == v).unwrap_or(0) + 1
            )
        } else {
            format!(" {} ", v.title())
        };
        spans.push(Span::styled(text, style));
        tabs.push((spans.len() - 1, v));
    }
    for i in before.len()..kept {
        spans.push(Span::raw(" "));
        spans.push(badge(i));
    }
    if sq.dropped > 0 {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            format!(" +{} ", sq.dropped.min(all.len())),
            theme.warning(),
        ));
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
    let (spans, tabs) = second_line_spans(app, &theme, header_width(app));
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

/// The header's middle (host and guest · kernel · rule file · source),
/// fitted so the interval number and the clock after it are never cut and
/// the rule file's name and the source's kind stay: the kernel goes first,
/// then the guest, then the host, then the file's "built-in", then the
/// source's file, its status, its speed; a file name longer than all the
/// room is shortened in its middle.
fn header_middle(width: usize, clock: &str, m: &Middle) -> String {
    let room = width.saturating_sub("plugtop ".len() + super::fit::cols(clock));
    let with_status = |source: &str| match &m.status {
        Some(status) => format!("{source} · {status}"),
        None => source.to_string(),
    };
    let full = with_status(&m.source);
    let short = with_status(&m.short_source);
    let (file, short_file) = (m.file.as_str(), m.short_file.as_str());
    let mut tries: Vec<Vec<&str>> = vec![
        vec![&m.with_guest, &m.kernel, file, &full],
        vec![&m.with_guest, file, &full],
        vec![&m.host, &m.kernel, file, &full],
        vec![&m.host, file, &full],
        vec![file, &full],
        vec![short_file, &full],
        vec![short_file, &short],
    ];
    tries.push(vec![short_file, &m.short_source]);
    tries.push(vec![short_file, m.kind]);
    for parts in tries {
        let text = format!("{} · ", parts.join(" · "));
        if super::fit::cols(&text) <= room {
            return text;
        }
    }
    // The file's name gives way in its middle; the kind stays.
    let kind = format!(" · {} · ", m.kind);
    let left = room.saturating_sub(super::fit::cols(&kind));
    if left < 4 {
        return if room >= super::fit::cols(m.kind) + 3 {
            format!("{} · ", m.kind)
        } else {
            String::new()
        };
    }
    format!("{}{kind}", middle_cut(short_file, left))
}

/// `name` in at most `room` columns: its start and its end (where the
/// `.conf` is), with `…` between (columns counted as drawn, so wide
/// characters fit too).
fn middle_cut(name: &str, room: usize) -> String {
    use super::fit::cols;
    if cols(name) <= room {
        return name.to_string();
    }
    let keep = room.saturating_sub(1);
    let mut end: Vec<char> = Vec::new();
    for c in name.chars().rev() {
        let mut with: String = end.iter().rev().collect();
        with.insert(0, c);
        if cols(&with) > keep / 2 {
            break;
        }
        end.push(c);
    }
    let end: String = end.iter().rev().collect();
    let mut start = String::new();
    for c in name.chars() {
        start.push(c);
        if cols(&start) + cols(&end) > keep {
            start.pop();
            break;
        }
    }
    format!("{start}…{end}")
}

/// Badges after the tabs, each in its forms longest first: a disabled
/// group (and why), rule names the kernel lacks, hints, a feedback loop, a
/// fault in the interval shown (in plain words).
fn warnings(app: &App) -> Vec<Vec<String>> {
    let mut out = Vec::new();
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
        out.push(vec!["FEEDBACK LOOP".to_string(), "LOOP".to_string()]);
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
            let line = format!("plugtop {}{clock}", header_middle(width, clock, &m));
            assert!(super::super::fit::cols(&line) <= width, "{width}: {line}");
            assert!(line.contains(" sim"), "{width}: {line}");
        }
        let m = middle(&format!("{}.conf", "x".repeat(200)), Some("phase 2"));
        let text = header_middle(80, "#1 12:00:00", &m);
        assert!(
            text.contains('…') && text.ends_with(".conf · replay · "),
            "{text}"
        );
    }

    #[test]
    fn the_rule_file_stays_at_every_width_and_the_clock_is_never_cut() {
        let clock = "#1234 (599 back) 12:00:05";
        for file in ["built-in recommended-modern.conf", "memory-config-10.conf"] {
            let m = middle(file, Some("phase 2 · 3:10 of 12:30"));
            for width in 60..=200 {
                let text = header_middle(width, clock, &m);
                let line = format!("plugtop {text}{clock}");
                assert!(super::super::fit::cols(&line) <= width, "{width}: {line}");
                // Whole from 80 columns (the screen's least); below, cut
                // in its middle so the source's kind stays too.
                let name = file.strip_prefix("built-in ").unwrap_or(file);
                if width >= 80 {
                    assert!(line.contains(name), "{width}: {line}");
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
        let wide = header_middle(200, clock, &m);
        assert!(
            wide.contains("6.12.0") && wide.contains("LINUX01"),
            "{wide}"
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
        let text = header_middle(80, "#1 12:00:00", &m);
        assert!(
            text.contains('…') && text.ends_with(".conf · replay · "),
            "{text}"
        );
    }
}
