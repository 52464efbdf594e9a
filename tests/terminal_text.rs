//! Text from files never drives the terminal: a scenario's name and a
//! recorded hostname full of escape sequences (clear screen, OSC window
//! title, BEL, C1 controls, a bidi override) reach `sim` reports, action
//! lines, comparisons and `--batch` line mode only as visible escapes.

mod common;

use std::path::Path;
use std::process::Output;

use common::{FakeRoot, plugtop, tempdir};

const MODERN: &str = "examples/rules/recommended-modern.conf";

/// A name that would clear the screen, retitle the window, ring the bell,
/// start a CSI and an OSC by their C1 forms, reverse the text and forge a
/// second line, if printed raw.
const HOSTILE_TOML: &str =
    r#""evil\u001b[2J\u001b]0;owned\u0007\u009b31m\u009d8;;x\u009c\u202e\r\nforged: ok""#;
const HOSTILE: &str = "evil\x1b[2J\x1b]0;owned\x07\u{9b}31m\u{9d}8;;x\u{9c}\u{202e}\r\nforged: ok";

/// Everything printed, checked for anything a terminal would act on; the
/// output as text.
fn inert(o: &Output) -> String {
    let mut all = o.stdout.clone();
    all.extend_from_slice(&o.stderr);
    let text = String::from_utf8_lossy(&all).into_owned();
    for (i, c) in text.chars().enumerate() {
        let acts = (c.is_control() && c != '\n') || c == '\u{202e}';
        assert!(!acts, "{c:?} at char {i} reached the terminal:\n{text}");
    }
    assert!(!text.contains("\nforged"), "a line was forged:\n{text}");
    text
}

/// The shipped DayTrader scenario renamed to [`HOSTILE`], two minutes long.
fn hostile_scenario(dir: &Path) -> String {
    let shipped = std::fs::read_to_string("examples/scenarios/daytrader.toml").expect("scenario");
    let renamed = shipped.replacen("name = \"daytrader\"", &format!("name = {HOSTILE_TOML}"), 1);
    assert_ne!(renamed, shipped, "the scenario's name line moved");
    let path = dir.join("evil.toml");
    std::fs::write(&path, renamed).expect("write scenario");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_scenario_name_with_escapes_is_shown_escaped_in_every_sim_output() {
    let dir = tempdir();
    let scenario = hostile_scenario(dir.path());
    let runs: [&[&str]; 3] = [
        &["--report"],
        &["--compare", "examples/rules/recommended-modern.conf"],
        &[],
    ];
    for extra in runs {
        let mut args = vec!["sim", &scenario, "-c", MODERN, "--fast", "--duration", "2m"];
        args.extend_from_slice(extra);
        let o = plugtop(&args);
        assert!(o.status.success(), "{extra:?}: {}", inert(&o));
        let text = inert(&o);
        if !extra.is_empty() {
            assert!(
                text.contains(r"evil\u{1b}[2J\u{1b}]0;owned\u{7}\u{9b}31m"),
                "{extra:?}: the name is shown, escaped:\n{text}"
            );
        }
    }
}

#[test]
fn a_recorded_hostname_with_escapes_is_shown_escaped_in_line_mode() {
    let dir = tempdir();
    // Recorded from a root whose hostname is hostile...
    let root = FakeRoot::guest(2);
    root.write("proc/sys/kernel/hostname", &format!("{HOSTILE}\n"));
    let from_root = dir.path().join("root.rec");
    let from_root = from_root.to_str().expect("utf-8 path");
    let o = plugtop(&[
        "record",
        "--root",
        root.path().to_str().expect("utf-8 path"),
        "--count",
        "3",
        "--interval",
        "0.001",
        "-o",
        from_root,
    ]);
    assert!(o.status.success(), "{}", inert(&o));
    // ...and by the simulator, whose recordings name the scenario.
    let scenario = hostile_scenario(dir.path());
    let from_sim = dir.path().join("sim.rec");
    let from_sim = from_sim.to_str().expect("utf-8 path");
    let o = plugtop(&[
        "sim",
        &scenario,
        "-c",
        MODERN,
        "--fast",
        "--duration",
        "1m",
        "--record",
        from_sim,
    ]);
    assert!(o.status.success(), "{}", inert(&o));
    for rec in [from_root, from_sim] {
        let o = plugtop(&["--batch", "--replay", rec, "-c", MODERN, "--count", "2"]);
        let text = inert(&o);
        assert!(o.status.success(), "{text}");
        assert!(
            text.contains(r"\u{1b}[2J\u{1b}]0;owned\u{7}"),
            "the header names the host, escaped:\n{text}"
        );
    }
}
