//! Text from files never drives the terminal: a scenario's name and a
//! recorded hostname full of escape sequences (clear screen, OSC window
//! title, BEL, C1 controls, a bidi override) reach `sim` reports, action
//! lines, comparisons and `--batch` line mode only as visible escapes.

use crate::common;

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

/// Bytes a file could hold that would retitle the window, clear the screen
/// and turn the text red, then a C1 CSI and a bidi override, if printed.
const HOSTILE_BYTES: &[u8] = b"\x1b]0;owned\x07\x1b[2J\x1b[31m\xc2\x9bX\xe2\x80\xae";

/// A rule file cpuplugd refuses at `HOTPLUG`, whose refusal quotes
/// [`HOSTILE_BYTES`], under a name that holds escapes too.
fn refused_rules(dir: &Path) -> String {
    let mut text = b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0 ".to_vec();
    text.extend_from_slice(HOSTILE_BYTES);
    text.extend_from_slice(b"\"\nHOTUNPLUG=\"1\"\n");
    let path = dir.join("esc\x1b[2J.conf");
    std::fs::write(&path, text).expect("rules");
    path.to_str().expect("utf-8 path").to_string()
}

#[test]
fn a_stale_pid_files_bytes_are_quoted_escaped_when_named_or_refused() {
    let root = FakeRoot::guest(2);
    let pid = String::from_utf8(HOSTILE_BYTES.to_vec()).expect("utf-8");
    let dir = tempdir();
    let rules = dir.path().join("plug.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let rules = rules.to_str().expect("utf-8 path");
    let r = root.path().to_str().expect("utf-8 path");
    // As cpuplugd's pid file, as is and after a line break (the file's
    // second line would start a line of its own in the message).
    for text in [
        pid.clone(),
        format!("\n{pid}"),
        format!("{pid}\nforged: ok"),
    ] {
        root.write("run/cpuplugd.pid", &text);
        // The screen's header and Log (newuser51 #8: named stale).
        let said = plugtop::control::lock::acting_on(root.path())
            .and_then(|a| a.stale)
            .unwrap_or_default();
        assert!(said.contains("not a pid"), "{said}");
        assert!(!said.contains('\u{1b}') && !said.contains('\n'), "{said}");
        assert!(said.contains(r"\u{1b}]0;owned\u{7}"), "{said}");
        // run refuses as cpuplugd does, in the foreground and detached:
        // the parent then relays what the refused child said.
        for foreground in [true, false] {
            let mut args = vec!["run", "--interval-ms", "20", "-c", rules, "--root", r];
            if foreground {
                args.push("-f");
            }
            let o = plugtop(&args);
            let said = inert(&o);
            assert_eq!(o.status.code(), Some(1), "{foreground}: {said}");
            assert!(said.contains("exists but holds"), "{said}");
            assert!(said.contains(r"\u{1b}]0;owned\u{7}"), "{said}");
        }
    }
}

/// newuser51 #14: a rule file's name with a line break is shown escaped in
/// every line `check` prints (its hints and its form too, as the summary),
/// so no line starts with the name's second half.
#[test]
fn check_escapes_a_file_names_line_break_in_hints_and_forms() {
    let dir = tempdir();
    let path = dir.path().join("odd\nname\x1b[31m.conf");
    std::fs::copy("examples/rules/cpu-loadavg.conf", &path).expect("rules");
    let o = plugtop(&["check", path.to_str().expect("utf-8 path")]);
    let text = inert(&o);
    assert!(text.contains("hint ["), "no hint to look at: {text}");
    assert!(text.contains(" form "), "no form to look at: {text}");
    for line in text.lines().filter(|l| !l.is_empty()) {
        assert!(
            !line.starts_with("name"),
            "a line forged by the name: {text}"
        );
        assert!(
            !line.ends_with("/odd"),
            "a name cut by its line break: {text}"
        );
    }
}

#[test]
fn eval_shows_a_refusals_position_and_the_file_name_escaped() {
    let dir = tempdir();
    let rules = refused_rules(dir.path());
    let rec = common::record_fixture_series(dir.path(), "s.rec");
    let root = FakeRoot::guest(2);
    let r = root.path().to_str().expect("utf-8 path");
    let runs: [&[&str]; 4] = [
        &["--root", r, "--count", "1"],
        &["--root", r, "--count", "1", "--trace"],
        &["--replay", &rec],
        &["--snapshots", "tests/fixtures/series/oldkernel"],
    ];
    for from in runs {
        let mut args = vec!["eval", "-c", &rules];
        args.extend_from_slice(from);
        let o = plugtop(&args);
        let said = inert(&o);
        assert_eq!(o.status.code(), Some(1), "{from:?}: {said}");
        assert!(
            said.contains("cpuplugd would refuse ")
                && said.contains(r"esc\u{1b}[2J.conf: parsing error at hotplug, position: \u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[31m\u{9b}X\u{202e}"),
            "{from:?}: {said}"
        );
    }
}

#[test]
fn check_shows_a_hostile_file_name_and_text_escaped() {
    let dir = tempdir();
    let rules = refused_rules(dir.path());
    let o = plugtop(&["check", &rules]);
    let said = inert(&o);
    assert!(said.contains(r"esc\u{1b}[2J.conf"), "{said}");
}

#[test]
fn tune_shows_why_a_reference_stops_cpuplugd_escaped() {
    let dir = tempdir();
    let rules = refused_rules(dir.path());
    let o = plugtop(&[
        "tune",
        "-c",
        MODERN,
        "--against",
        &rules,
        "examples/scenarios/appserver.toml",
        "--budget",
        "3",
        "--only-workload",
    ]);
    let said = inert(&o);
    assert!(said.contains("stops cpuplugd"), "{said}");
    assert!(
        said.contains(r"position: \u{1b}]0;owned\u{7}\u{1b}[2J"),
        "{said}"
    );
}

#[test]
fn whatif_against_a_refused_file_says_so_escaped() {
    let dir = tempdir();
    let rules = refused_rules(dir.path());
    let rec = common::record_fixture_series(dir.path(), "s.rec");
    let o = plugtop(&[
        "whatif",
        "-c",
        MODERN,
        "--against",
        &rules,
        "--replay",
        &rec,
    ]);
    let said = inert(&o);
    assert!(said.contains(r"\u{1b}]0;owned\u{7}"), "{said}");
}

/// JSON output checked byte for byte: no raw control (C0 but the line
/// breaks, DEL, C1) and no raw bidi mark, anywhere; every document (the
/// whole output, or each line for JSON lines) parses. The parsed values.
fn json_inert(stdout: &[u8], lines: bool) -> Vec<serde_json::Value> {
    let text = std::str::from_utf8(stdout).expect("JSON is UTF-8");
    for (i, c) in text.chars().enumerate() {
        let raw = (c.is_control() && c != '\n')
            || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(!raw, "{c:?} at char {i} left raw in the JSON:\n{text}");
    }
    let documents: Vec<&str> = if lines {
        text.lines().filter(|l| !l.is_empty()).collect()
    } else {
        vec![text]
    };
    documents
        .into_iter()
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect()
}

/// Whether any string in `v` is, or (with `part`) contains, `want`.
fn holds(v: &serde_json::Value, want: &str, part: bool) -> bool {
    match v {
        serde_json::Value::String(s) => {
            if part {
                s.contains(want)
            } else {
                s == want
            }
        }
        serde_json::Value::Array(a) => a.iter().any(|x| holds(x, want, part)),
        serde_json::Value::Object(o) => o.values().any(|x| holds(x, want, part)),
        _ => false,
    }
}

#[test]
fn sim_json_reports_escape_c1_and_bidi_and_parse_back_to_the_name() {
    let dir = tempdir();
    let scenario = hostile_scenario(dir.path());
    let runs: [&[&str]; 2] = [&[], &["--compare", MODERN]];
    for extra in runs {
        let mut args = vec![
            "sim",
            &scenario,
            "-c",
            MODERN,
            "--fast",
            "--duration",
            "1m",
            "--report",
            "--report-format",
            "json",
        ];
        args.extend_from_slice(extra);
        let o = plugtop(&args);
        assert!(o.status.success(), "{extra:?}: {}", inert(&o));
        let values = json_inert(&o.stdout, false);
        assert!(
            holds(&values[0], HOSTILE, false),
            "{extra:?}: the name parses back whole: {values:?}"
        );
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(r"\u009b31m\u009d8;;x\u009c\u202e"), "{text}");
    }
}

/// A rule file cpuplugd refuses, whose name and refused text hold C1
/// controls and bidi marks (C0 ones JSON escapes by itself).
fn c1_rules(dir: &Path) -> String {
    let path = dir.join("c1\u{9b}2J\u{202e}.conf");
    std::fs::write(
        &path,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0 \u{9b}31m\u{9d}0;t\u{9c}\u{2067}\u{200e}\"\nHOTUNPLUG=\"1\"\n",
    )
    .expect("rules");
    path.to_str().expect("utf-8 path").to_string()
}

#[test]
fn check_eval_and_tune_json_escape_c1_and_bidi_and_parse_back() {
    let dir = tempdir();
    let rules = c1_rules(dir.path());
    let quoted = "\u{9b}31m\u{9d}0;t\u{9c}\u{2067}\u{200e}";

    let o = plugtop(&["check", &rules, "--format", "json"]);
    let values = json_inert(&o.stdout, false);
    // check names the file, and says which character it stopped at.
    assert!(
        holds(&values[0], "c1\u{9b}2J\u{202e}.conf", true),
        "check: {values:?}"
    );

    let root = FakeRoot::guest(2);
    let r = root.path().to_str().expect("utf-8 path");
    let o = plugtop(&["eval", "-c", &rules, "--root", r, "--count", "1", "--jsonl"]);
    let values = json_inert(&o.stdout, true);
    assert!(holds(&values[0], quoted, true), "eval: {values:?}");

    let o = plugtop(&[
        "tune",
        "-c",
        MODERN,
        "--against",
        &rules,
        "examples/scenarios/appserver.toml",
        "--budget",
        "3",
        "--only-workload",
        "--format",
        "json",
    ]);
    let values = json_inert(&o.stdout, false);
    assert!(holds(&values[0], quoted, true), "tune: {values:?}");
}

/// A rule file named to pass for the header's own parts (adversary F11,
/// issue 45 #8): a newline, escapes and ` · live · #999`.
pub(crate) const SPOOFING_NAME: &str = "evil\n\x1b[2J\x1b[31m · live · #999.conf";

/// How that name is shown everywhere: quoted, its controls escaped.
pub(crate) const SPOOFING_SHOWN: &str = "\"evil\\n\\u{1b}[2J\\u{1b}[31m · live · #999.conf\"";

/// A copy of a plain rule file under [`SPOOFING_NAME`] in `dir`.
pub(crate) fn spoofing_rules(dir: &Path) -> String {
    let path = dir.join(SPOOFING_NAME);
    std::fs::copy("examples/rules/oscillating-damped.conf", &path).expect("copy");
    path.to_string_lossy().into_owned()
}

/// `whatif` names such a file quoted and escaped, on one line, in its
/// table and in every differing interval, never breaking a line with it.
#[test]
fn whatif_names_a_spoofing_rule_file_quoted_and_escaped() {
    let dir = tempdir();
    let rules = spoofing_rules(dir.path());
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let o = plugtop(&["whatif", "--replay", &rec, "-c", &rules, "--wide"]);
    assert!(o.status.success(), "{}", inert(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains('\x1b'), "{out}");
    assert!(out.contains(SPOOFING_SHOWN), "{out}");
    // The table's heading holds both names on one line.
    assert!(
        out.lines()
            .any(|l| l.contains(SPOOFING_SHOWN) && l.contains("recorded")),
        "{out}"
    );
    assert!(!out.lines().any(|l| l.starts_with(" · live")), "{out}");
}
