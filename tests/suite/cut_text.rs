//! Nothing on the screen is cut silently. Every view is snapshotted at
//! 80×24 and 160×48 with the longest explanation the example rule files
//! give on the recorded series, and every snapshot kept in
//! `tests/snapshots/` is scanned: a letter or digit in a screen's last
//! column, or just inside a box's right border, is text that ran into the
//! edge and was cut there (fitted text keeps that column free, so nothing
//! whole ends there; the header's clock is the one field set flush right).

use std::path::{Path, PathBuf};

use plugtop::control::controller::Mode;
use plugtop::rules::RuleKind;
use plugtop::tui::app::View;
use plugtop::tui::local::Local;
use plugtop::tui::run::app_from_snapshots;

use crate::tui_views::screen;

const SERIES: &str = "tests/fixtures/series/oldkernel";

/// The example rule files, in name order.
fn example_rules() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("examples/rules")
        .expect("examples/rules")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "conf"))
        .collect();
    files.sort();
    files
}

/// The example file, interval and rule with the longest explanation over
/// the recorded series (files cpuplugd would refuse are left out).
fn longest_explanation() -> (PathBuf, usize, RuleKind, String) {
    let mut best: Option<(PathBuf, usize, RuleKind, String)> = None;
    for file in example_rules() {
        let Ok(app) = app_from_snapshots(&file, Path::new(SERIES), usize::MAX, Mode::Observe)
        else {
            continue;
        };
        let a = app.app();
        for frame in a.timeline().frames() {
            for kind in RuleKind::ALL {
                let Some(text) =
                    plugtop::report::trace::explain(a.rules(), a.file(), &frame.trace, kind)
                else {
                    continue;
                };
                if best.as_ref().is_none_or(|b| text.len() > b.3.len()) {
                    best = Some((file.clone(), frame.number + 1, kind, text));
                }
            }
        }
    }
    best.expect("an example file loads")
}

fn both(name: &str, app: &Local) {
    assert_snapshot_of!("tui_views", format!("{name}_80x24"), screen(app, 80, 24));
    assert_snapshot_of!("tui_views", format!("{name}_160x48"), screen(app, 160, 48));
}

#[test]
fn every_view_with_the_longest_explanation_of_the_example_files() {
    let (file, readings, kind, text) = longest_explanation();
    assert!(text.len() > 80, "longer than a screen is wide: {text}");
    let mut app = app_from_snapshots(&file, Path::new(SERIES), readings, Mode::Observe)
        .unwrap_or_else(|e| panic!("{e}"));
    app.app_mut().selection_mut().select_rule(kind);
    for view in View::ALL {
        app.app_mut().selection_mut().show(view);
        both(&format!("longest_{}", view.title().to_lowercase()), &app);
    }
    // The Rules view wraps the explanation whole, at both sizes: every
    // word of it is on the screen, in order.
    app.app_mut().selection_mut().show(View::Rules);
    for (w, h) in [(80, 24), (160, 48)] {
        let shown = screen(&app, w, h);
        let words: Vec<&str> = shown.split_whitespace().collect();
        let wanted: Vec<&str> = text.split_whitespace().collect();
        assert!(
            words
                .windows(wanted.len())
                .any(|run| run == wanted.as_slice()),
            "{w}×{h} lost part of {text:?}:\n{shown}"
        );
    }
}

/// The screen's width a snapshot was taken at, from its name.
fn screen_width(name: &str) -> Option<usize> {
    if name.contains("too_small") {
        return Some(60);
    }
    let size = name.strip_suffix(".snap")?.rsplit('_').next()?;
    let (w, _) = size.split_once('x')?;
    w.parse().ok()
}

/// Whether `line` ends in the header's clock (HH:MM:SS, or the dashes
/// before the first reading): the one field set flush right.
fn ends_in_clock(line: &str) -> bool {
    let tail: Vec<char> = line.chars().rev().take(8).collect();
    let clock = |c: &char, i: usize| {
        if i == 2 || i == 5 {
            *c == ':'
        } else {
            c.is_ascii_digit() || *c == '-'
        }
    };
    tail.len() == 8 && tail.iter().rev().enumerate().all(|(i, c)| clock(c, i))
}

fn is_text(c: char) -> bool {
    c.is_alphanumeric()
}

/// Where text ran into an edge in a screen snapshot `body` taken `width`
/// columns wide (if known): the screen's last column, or the column just
/// inside a box's right border.
fn cuts(body: &str, width: Option<usize>) -> Vec<String> {
    let rows: Vec<Vec<char>> = body.lines().map(|l| l.chars().collect()).collect();
    let mut found = Vec::new();
    if let Some(w) = width {
        for (y, row) in rows.iter().enumerate() {
            let line: String = row.iter().collect();
            if row.len() >= w && is_text(row[w - 1]) && !(y == 0 && ends_in_clock(&line)) {
                found.push(format!("row {y} runs into the screen's edge: {line:?}"));
            }
        }
    }
    // Boxes: a top border `┌ … ┐`, its sides down to `└`.
    for (top, row) in rows.iter().enumerate() {
        for (left, c) in row.iter().enumerate() {
            if *c != '┌' {
                continue;
            }
            let Some(right) = row[left..].iter().position(|c| *c == '┐').map(|i| left + i) else {
                continue;
            };
            for (y, r) in rows.iter().enumerate().skip(top + 1) {
                if r.get(left) == Some(&'└') || r.get(right) != Some(&'│') {
                    break;
                }
                if right > left + 1 && is_text(r[right - 1]) {
                    let line: String = r.iter().collect();
                    found.push(format!("row {y} runs into a box's border: {line:?}"));
                }
            }
        }
    }
    found
}

#[test]
fn the_scan_finds_text_cut_at_an_edge_and_passes_text_that_ends_in_time() {
    let rows = [
        "plugtop abc.conf · #5 12:00:05",
        "MEMUNPLUG true because x = 657",
        "ends early.",
        "x┌ Box ──────┐",
        "x│fits       │",
        "x│cut in a nu│",
        "x└───────────┘",
    ];
    assert_eq!(rows[0].chars().count(), 30);
    assert_eq!(rows[1].chars().count(), 30);
    let found = cuts(&rows.join("\n"), Some(30));
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("row 1 runs into the screen's edge"));
    assert!(found[1].starts_with("row 5 runs into a box's border"));
    assert!(cuts("12:00:05\nfine …\n", Some(8)).is_empty());
    assert_eq!(screen_width("tui_views__log_80x24.snap"), Some(80));
    assert_eq!(screen_width("tui_views__too_small.snap"), Some(60));
    assert_eq!(screen_width("metrics__oscillating_textfile.snap"), None);
}

#[test]
fn no_snapshot_has_a_line_cut_inside_a_number_or_a_name() {
    let mut found = Vec::new();
    let mut scanned = 0;
    for entry in std::fs::read_dir("tests/snapshots")
        .expect("tests/snapshots")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".snap") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).expect("a snapshot");
        // insta's header, then the screen.
        let body = text.splitn(3, "---\n").nth(2).unwrap_or(&text);
        scanned += 1;
        for cut in cuts(body, screen_width(&name)) {
            found.push(format!("{name}: {cut}"));
        }
    }
    assert!(scanned > 50, "only {scanned} snapshots found");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// A simulated guest under `rules`, after `readings` simulated seconds, in
/// `mode`.
fn simulated(scenario: &str, rules: &str, readings: usize, mode: Mode) -> Local {
    let options = plugtop::tui::run::Options {
        mode,
        ..plugtop::tui::run::Options::simulating(scenario, Some(rules.into()))
    };
    let (mut app, mut source) =
        plugtop::tui::run::prepare(&options).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..readings {
        match source.next_sample() {
            Some(Ok(s)) => app.ingest(s),
            other => panic!("the simulator stopped: {:?}", other.map(|r| r.err())),
        }
    }
    app
}

#[test]
fn at_every_width_the_header_keeps_the_file_the_clock_and_the_tabs_give_way_first() {
    let fault = app_from_snapshots(
        Path::new("tests/fixtures/cases/fpe-div-zero-hotplug/cpuplugd.conf"),
        Path::new("tests/fixtures/cases/fpe-div-zero-hotplug/snapshots"),
        4,
        Mode::Observe,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Flapping, no memory group, a feedback loop: many badges at once.
    let flapping = simulated(
        "examples/scenarios/oscillating.toml",
        "examples/rules/oscillating-tight.conf",
        81,
        Mode::Auto,
    );
    let proposal = app_from_snapshots(
        Path::new("examples/rules/recommended-default.conf"),
        Path::new(SERIES),
        4,
        Mode::Step,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for (mut app, file) in [
        (fault, "cpuplugd.conf"),
        (flapping, "oscillating-tight.conf"),
        (proposal, "recommended-default.conf"),
    ] {
        for view in [View::Overview, View::Flips] {
            app.app_mut().selection_mut().show(view);
            for width in 80..=200u16 {
                let text = screen(&app, width, 24);
                let mut lines = text.lines();
                let first = lines.next().unwrap_or_default();
                let second = lines.next().unwrap_or_default();
                assert!(first.contains(file), "{width}: {first}");
                assert!(ends_in_clock(first), "{width}: {first}");
                assert!(
                    second.chars().count() < usize::from(width),
                    "{width}: the last column stays free: {second}"
                );
                // A tab is a word of its own (the screen's trailing
                // spaces are trimmed, so the last one ends the line).
                let has = |word: String| {
                    second.contains(&format!(" {word} ")) || second.ends_with(&format!(" {word}"))
                };
                // The tabs give way before any alarm: all by name, the
                // view shown alone ("Flips 4/5"), or none, never digits.
                let named = View::ALL
                    .iter()
                    .filter(|v| has(v.title().to_string()))
                    .count();
                let (n, shown) = View::ALL
                    .iter()
                    .enumerate()
                    .find(|(_, v)| **v == view)
                    .map(|(i, v)| (i + 1, v.title()))
                    .unwrap_or_default();
                let alone = second.contains(&format!(" {shown} {n}/5 "));
                assert!(
                    named == View::ALL.len() || alone || named == 0,
                    "{width}: tabs cut to digits or in part: {second}"
                );
                assert!(
                    !second.contains(" 2  3 "),
                    "{width}: tabs as digits: {second}"
                );
                if second.contains(" in ? ") {
                    assert!(
                        named == 0 && !alone,
                        "{width}: an alarm left out while a tab shows: {second}"
                    );
                }
                if width >= 120 {
                    assert_eq!(named, View::ALL.len(), "{width}: {second}");
                }
            }
        }
    }
}

#[test]
fn not_evaluated_says_why_priority_short_circuit_or_a_stop() {
    // HOTPLUG is true in the oscillating guest: HOTUNPLUG never ran.
    let mut app = simulated(
        "examples/scenarios/oscillating.toml",
        "examples/rules/oscillating-tight.conf",
        81,
        Mode::Auto,
    );
    app.app_mut().selection_mut().show(View::Rules);
    app.app_mut()
        .selection_mut()
        .select_rule(RuleKind::Hotunplug);
    let text = screen(&app, 160, 48);
    assert!(
        text.contains("HOTUNPLUG not evaluated: HOTPLUG had priority"),
        "{text}"
    );
    assert!(
        !text.contains("short-circuit"),
        "priority, not a short-circuit:\n{text}"
    );
    // A real short-circuit: the right side of a true `|`.
    let dir = tempfile::tempdir().expect("temporary directory");
    let rules = dir.path().join("r.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"onumcpus > 0 | loadavg > 100\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules written");
    let mut app = app_from_snapshots(&rules, Path::new(SERIES), 4, Mode::Observe)
        .unwrap_or_else(|e| panic!("{e}"));
    app.app_mut().selection_mut().show(View::Rules);
    let text = screen(&app, 160, 48);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("loadavg > 100"))
        .unwrap_or_else(|| panic!("no row for the right side:\n{text}"));
    assert!(row.ends_with("= not evaluated (short-circuit)"), "{row}");
    // A fault stops the evaluation: what comes after it was not skipped by
    // a short-circuit.
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1 / (onumcpus - onumcpus) > 0 & loadavg > 100\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules written");
    let mut app = app_from_snapshots(&rules, Path::new(SERIES), 4, Mode::Observe)
        .unwrap_or_else(|e| panic!("{e}"));
    app.app_mut().selection_mut().show(View::Rules);
    let text = screen(&app, 160, 48);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("loadavg > 100"))
        .unwrap_or_else(|| panic!("no row for the right side:\n{text}"));
    assert!(
        row.ends_with("= not evaluated (the evaluation stopped before it)"),
        "{row}"
    );
    assert!(
        text.contains("division by zero: (onumcpus - onumcpus) is 0"),
        "{text}"
    );
}

/// nu54 F4: a rule blocked by CPU_MIN leads its overview line with the
/// limit; at 80 columns the note gives way to its brief form before the
/// rule's threshold is lost (it was `… = 0.8533 CPUs is >…`).
#[test]
fn a_limit_note_gives_way_before_the_rules_threshold() {
    let mut seen = 0;
    for readings in (4..60).step_by(3) {
        let app = simulated(
            "examples/scenarios/oscillating.toml",
            "examples/rules/oscillating-tight.conf",
            readings,
            Mode::Auto,
        );
        let shown = screen(&app, 80, 24);
        let Some(line) = shown
            .lines()
            .find(|l| l.contains("HOTUNPLUG ") && l.contains("CPU_MIN"))
        else {
            continue;
        };
        seen += 1;
        assert!(
            line.trim_end().ends_with("is > 0.8"),
            "{readings}: {line}\n{shown}"
        );
        assert!(line.contains("reached"), "{line}");
    }
    assert!(seen > 0, "no interval had HOTUNPLUG blocked by CPU_MIN");
}
