//! The screen's time in a pseudo-terminal at 80×24 (issue 45 item 1,
//! newuser51): a pause holds, reading ahead keeps the Log, a damaged
//! recording is said, far times are answered.

use crate::common;
use crate::ui_pty::Session;

/// The interval number in the header's first line ("#123").
fn shown_number(screen: &str) -> Option<usize> {
    let first = screen.lines().next()?;
    let at = first.find(" #")? + 2;
    first[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// Opens and closes the help `times` times, each waited for: keys the
/// screen answers while the source goes on (or does not).
fn round_trips(s: &mut Session, times: usize) {
    for _ in 0..times {
        s.press("?");
        s.wait_for("Keys (any key closes");
        s.press("?");
        s.wait_gone("Keys (any key closes");
    }
}

/// newuser51 #5: Space on `--sim` paused the screen but not the
/// simulator, so each new interval pushed the one shown back ("(51
/// back)", then "(599 back)") and, past the 600 kept, dragged it forward
/// under the reader. Paused, the simulator now waits: no interval is
/// added, the one shown stays the newest, and Space goes on from it.
#[test]
fn space_on_the_simulator_pauses_the_simulated_guest() {
    let mut s = Session::start(
        &[
            "--sim",
            "examples/scenarios/oscillating.toml",
            "-c",
            "examples/rules/oscillating-tight.conf",
            "--interval",
            "0.01",
        ],
        24,
        80,
    );
    s.wait_until("no interval #20 yet", |s| {
        shown_number(&s.screen()).is_some_and(|n| n >= 20)
    });
    s.press(" ");
    s.wait_for("PAUSED");
    // A reading under way when Space was pressed may still land (one).
    round_trips(&mut s, 2);
    let first_line = |s: &Session| s.screen().lines().next().unwrap_or_default().to_string();
    let held = first_line(&s);
    let paused = shown_number(&held).unwrap_or_else(|| panic!("{}", s.screen()));
    // A reading every 10 ms would have pushed the shown one back by many
    // while the help opens and closes twenty times.
    round_trips(&mut s, 20);
    assert_eq!(
        first_line(&s),
        held,
        "the simulator ran on while paused at #{paused}:\n{}",
        s.screen()
    );
    s.press(" ");
    s.wait_gone("PAUSED");
    s.wait_until("the simulator did not go on", |s| {
        shown_number(&s.screen()).is_some_and(|n| n > paused)
    });
    assert!(s.quit());
}

/// Each key pressed in turn, and what it shows waited for.
fn keys_then(s: &mut Session, steps: &[(&str, &str)]) {
    for (keys, shows) in steps {
        s.press(keys);
        s.wait_for(shows);
    }
}

/// The recording `rec` on the screen at 80×24 under the tight rules.
fn replayed_under_tight_rules(rec: &str) -> Session {
    Session::start(
        &[
            "--replay",
            rec,
            "-c",
            "examples/rules/oscillating-tight.conf",
        ],
        24,
        80,
    )
}

/// The oscillating guest under damped rules for `seconds`, a reading a
/// second, recorded; replayed on the screen at 80×24 under the tight
/// rules (which flap in its first minutes, then sit at CPU_MIN).
fn oscillating_replay(seconds: f64) -> (tempfile::TempDir, String, Session) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("osc.rec");
    common::record_simulated("oscillating", "oscillating-damped", seconds, 1.0, &rec);
    let rec = rec.to_string_lossy().into_owned();
    let s = replayed_under_tight_rules(&rec);
    (dir, rec, s)
}

/// newuser51 #2b: `J` more than ~30 minutes ahead kept the newest 1000
/// raw lines of the readings passed, all of them "minimum cpu limit is
/// reached", so the Log lost the flapping that led there and counted the
/// limit from the first second (×1601). The read-ahead's lines are now
/// kept as the Log keeps them (repeats counted): the flapping is there,
/// from its first `would plug`.
#[test]
fn jumping_far_ahead_in_a_replay_keeps_the_log_of_the_way_there() {
    let (_dir, _rec, mut s) = oscillating_replay(3600.0);
    s.wait_for("OBSERVE");
    keys_then(
        &mut s,
        &[
            ("J", "Jump to a time"),
            ("+50m\r", "read ahead to 00:50:00"),
            ("5", "Log up to the interval shown"),
        ],
    );
    s.press("\x1b[H");
    s.wait_until("the Log never showed its oldest", |s| {
        s.screen().contains("00:00:01 minimum cpu limit is reached")
    });
    let screen = s.screen();
    let log: Vec<&str> = screen.lines().skip(3).collect();
    let first = log
        .iter()
        .find(|l| l.contains("minimum cpu limit is reached"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        !first.contains('×') || !first.contains("(last 00:50:00)"),
        "the limit counted from the first second to the end:\n{screen}"
    );
    assert!(
        log.iter().any(|l| l.contains("would plug")),
        "the flapping that led there is gone:\n{screen}"
    );
    assert!(s.quit());
}

/// A recording of the oscillating guest (six minutes, a reading a
/// second) in `dir`, and a copy with one byte flipped at `flip`.
fn damaged_recording(dir: &std::path::Path, flip: usize) -> String {
    let rec = dir.join("whole.rec");
    common::record_simulated("oscillating", "oscillating-tight", 360.0, 1.0, &rec);
    let mut bytes = std::fs::read(&rec).expect("the recording");
    assert!(bytes.len() > flip, "a recording of {} bytes", bytes.len());
    bytes[flip] ^= 0xff;
    let damaged = dir.join("flip.rec");
    std::fs::write(&damaged, bytes).expect("the damaged copy");
    damaged.to_string_lossy().into_owned()
}

/// The byte `eval`'s warning names as where a recording is damaged.
fn damage_offset(eval: &std::process::Output) -> String {
    let said = crate::common::said(eval);
    said.split("fails its checksum at byte ")
        .nth(1)
        .and_then(|t| t.split(';').next())
        .unwrap_or_else(|| panic!("eval said: {said}"))
        .to_string()
}

/// nu51a's leftover of newuser51 #3: on the screen the damage was only a
/// Log line. It is an alarm in the header (the source still named at 80
/// columns), whether the replay plays into it or `G` reads ahead into
/// it, and said on stderr once the screen is gone.
#[test]
fn a_damaged_recording_raises_a_header_alarm_and_is_said_after_the_screen() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = damaged_recording(dir.path(), 5000);
    let at = damage_offset(&common::plugtop(&[
        "eval",
        "--replay",
        &rec,
        "-c",
        "examples/rules/oscillating-tight.conf",
    ]));
    for keys in ["G", "++++++"] {
        let mut s = replayed_under_tight_rules(&rec);
        s.wait_for("OBSERVE");
        s.press(keys);
        s.wait_until("a DAMAGED alarm in the header", |s| {
            s.screen()
                .lines()
                .nth(1)
                .is_some_and(|l| l.contains(" DAMAGED"))
        });
        let screen = s.screen();
        let top = screen.lines().next().unwrap_or_default();
        assert!(top.contains("replay"), "{keys}: {screen}");
        // At 80 columns beside the flapping alarm it is short; `?` says
        // it whole, with the byte.
        s.press("?");
        s.wait_for(&format!("RECORDING DAMAGED AT BYTE {at}"));
        s.press("\x1b");
        s.wait_gone(&format!("RECORDING DAMAGED AT BYTE {at}"));
        s.press("q");
        let (code, raw) = s.wait_exit();
        assert_eq!(code, Some(0), "{keys}");
        let after = crate::ui_pty::said_after_the_screen(&raw);
        assert!(
            after.contains("plugtop: warning: ")
                && after.contains(&format!("fails its checksum at byte {at}; replaying the")),
            "{keys}: after the screen: {after:?}"
        );
    }
}

/// newuser51 #3: the screen replayed a recording damaged after 77 of its
/// 360 samples and ended it at 1:16 without a word, where `eval` and
/// `whatif` name the damage and its byte offset. The screen's Log says
/// it, with the offset, and so does `--batch`.
#[test]
fn a_damaged_recording_is_said_on_the_screen_and_in_batch() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = damaged_recording(dir.path(), 5000);
    let eval = common::plugtop(&[
        "eval",
        "--replay",
        &rec,
        "-c",
        "examples/rules/oscillating-tight.conf",
    ]);
    let at = damage_offset(&eval);
    let batch = common::plugtop(&[
        "--replay",
        &rec,
        "-c",
        "examples/rules/oscillating-tight.conf",
        "--batch",
    ]);
    let out = String::from_utf8_lossy(&batch.stdout).into_owned() + &crate::common::said(&batch);
    assert!(
        out.contains(&format!("fails its checksum at byte {at}")),
        "--batch said nothing of the damage at byte {at}:\n{out}"
    );
    let mut s = replayed_under_tight_rules(&rec);
    s.wait_for("OBSERVE");
    s.press("G");
    s.wait_for("read to the end of the recording");
    s.press("5");
    s.wait_for(&format!("at byte {at}"));
    assert!(s.quit());
}

/// The "recorded" column of `plugtop whatif`'s row `row` on `rec`.
fn recorded_count(rec: &str, row: &str) -> usize {
    let o = common::plugtop(&[
        "whatif",
        "--replay",
        rec,
        "-c",
        "examples/rules/oscillating-tight.conf",
    ]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.lines()
        .find(|l| l.trim_start().starts_with(row))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {row:?} row in:\n{text}"))
}

/// newuser51 #9: the what-if box on a replay said "loaded: 300 decided,
/// 0 applied" (this session's writes, always none on a replay) where
/// `plugtop whatif` on the same file says what the recorded guest did.
/// The box now says the recorded guest's plugs and unplugs, the CLI's
/// figures.
#[test]
fn the_whatif_box_on_a_replay_counts_what_the_recorded_guest_did() {
    let (_dir, rec, mut s) = oscillating_replay(360.0);
    let plugs = recorded_count(&rec, "plug a CPU");
    let unplugs = recorded_count(&rec, "unplug a CPU");
    assert!(plugs > 0, "the recorded guest plugged");
    s.wait_for("OBSERVE");
    s.press("G");
    s.wait_for("read to the end of the recording");
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    s.press("\r");
    s.wait_for("differ in ");
    let screen = s.screen().replace(['\n', '│'], " ");
    let said = format!("recorded guest: {plugs} plug, {unplugs} unplug");
    let compact = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        compact(&screen).contains(&said),
        "the box does not say {said:?}:\n{}",
        s.screen()
    );
    s.press("\x1b");
    s.wait_gone("What-if: HOTPLUG");
    assert!(s.quit());
}

/// newuser51 #17: Flips on a replay keeps the newest 50 changes, and at
/// its oldest said nothing of the ones before (#31 and on, in the report):
/// it now says how many were not kept and how to reach them.
#[test]
fn flips_at_its_oldest_says_how_many_older_changes_were_not_kept() {
    let (_dir, _rec, mut s) = oscillating_replay(360.0);
    s.wait_for("OBSERVE");
    keys_then(
        &mut s,
        &[
            ("G", "read to the end of the recording"),
            ("4", "Flips: why the decisions changed"),
        ],
    );
    s.press("\x1b[H");
    s.wait_until("Flips never said what it dropped", |s| {
        s.screen().contains("older not kept (50 are)")
    });
    assert!(s.quit());
}

/// newuser51 #21: a wrapped line in Flips and in the Log went on at the
/// left edge, where the next entry starts ("rules that look at one
/// interval …" read as an entry of its own). A continuation is indented
/// deeper than its line.
#[test]
fn wrapped_lines_in_flips_and_the_log_continue_indented() {
    let (_dir, _rec, mut s) = oscillating_replay(120.0);
    s.wait_for("OBSERVE");
    keys_then(
        &mut s,
        &[
            ("G", "read to the end of the recording"),
            ("4", "Flips: why the decisions changed"),
        ],
    );
    s.wait_for("likely cause:");
    let screen = s.screen();
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .position(|l| l.starts_with("  likely cause:"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        rows[at + 1].starts_with("    ") && !rows[at + 1].starts_with("     "),
        "the cause goes on indented:\n{screen}"
    );
    // The Log from its oldest entry: the flapping warning wraps there.
    s.press("5");
    s.press("\x1b[H");
    s.wait_until("a Log of entries and indented continuations", |s| {
        let screen = s.screen();
        let body: Vec<&str> = screen
            .lines()
            .skip_while(|l| !l.starts_with(" Log "))
            .skip(1)
            .take_while(|l| !l.starts_with("? help"))
            .filter(|l| !l.trim().is_empty())
            .collect();
        let entry = |row: &&str| {
            let b = row.as_bytes();
            b.len() > 8 && b[2] == b':' && b[5] == b':'
        };
        !body.is_empty()
            && body.iter().all(|row| entry(row) || row.starts_with("  "))
            && body.iter().any(|row| !entry(row))
    });
    assert!(s.quit());
}

/// newuser51 #20: `J +99999999h` on `--sim` said only "is not a time"
/// (the form is right, the time too far), and a far read-ahead's progress
/// showed times of day that wrap ("to 08:00:00: at 09:27:52", then "at
/// 16:59:08", "at 13:13:42"). The refusal says the limit, and the
/// progress says how much is left, days included, falling as it reads;
/// Esc stops the read-ahead where it stands.
#[test]
fn a_far_jump_on_the_simulator_says_its_limit_and_what_is_left() {
    let mut s = Session::start(
        &[
            "--sim",
            "examples/scenarios/daytrader.toml",
            "-c",
            "examples/rules/cpu-real-load.conf",
        ],
        24,
        80,
    );
    s.wait_for("OBSERVE");
    s.press("J");
    s.wait_for("Jump to a time");
    s.press("+99999999h\r");
    s.wait_for("366 days");
    s.press("\x1b");
    s.wait_gone("366 days");
    s.press("J");
    s.wait_for("Jump to a time");
    s.press("+2000h\r");
    s.wait_until("no days left said", |s| {
        s.screen().contains("reading ahead to ")
            && s.screen().contains("d ")
            && s.screen().contains(" to go")
    });
    let left = |screen: &str| -> Option<String> {
        let at = screen.find(", ")?;
        let rest = &screen[at + 2..];
        Some(rest[..rest.find(" to go")?].to_string())
    };
    let first = left(&s.screen()).unwrap_or_else(|| panic!("{}", s.screen()));
    assert!(first.contains("d "), "{first:?}");
    // Esc stops it where it stands (q was the only way out).
    s.press("\x1b");
    s.wait_for("reading ahead stopped (Esc)");
    s.wait_for("PAUSED");
    assert!(s.quit());
}

/// The time at the end of the header's first line ("#4 (3 back) 00:00:04").
fn header_time(screen: &str) -> String {
    let first = screen.lines().next().unwrap_or_default();
    first
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .to_string()
}

/// nu53 F1: paused, the Log's collapsed line ("minimum cpu limit is
/// reached ×N (last HH:MM:SS)") went on counting readings newer than the
/// interval shown, and kept the newest count and time when `←` went back.
/// It is counted as of the interval shown, as the rest of the Log is: at
/// #4 of a line said at every interval from #1, ×4 (last #4's time).
#[test]
fn a_repeated_log_line_is_counted_as_of_the_interval_shown() {
    let (_dir, _rec, mut s) = oscillating_replay(120.0);
    s.wait_until("no interval #8 yet", |s| {
        shown_number(&s.screen()).is_some_and(|n| n >= 8)
    });
    s.press(" ");
    s.wait_for("PAUSED");
    for _ in 0..3 {
        let before = shown_number(&s.screen());
        s.press("\x1b[D");
        s.wait_until("← did not go back", |s| {
            shown_number(&s.screen()) != before
        });
    }
    let screen = s.screen();
    let n = shown_number(&screen).unwrap_or_else(|| panic!("{screen}"));
    let line = screen
        .lines()
        .find(|l| l.contains("minimum cpu limit is reached"))
        .unwrap_or_else(|| panic!("no repeated line:\n{screen}"));
    assert_eq!(
        line.split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" "),
        format!(
            "minimum cpu limit is reached ×{n} (last {})",
            header_time(&screen)
        ),
        "counted past the interval shown (#{n}):\n{screen}"
    );
    assert!(s.quit());
}

/// The screen's words in one line: box borders and line breaks as blanks,
/// each run of blanks one (a message wraps in its box).
pub(crate) fn flat(screen: &str) -> String {
    screen
        .replace(['│', '\n'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// nu53 F3: `e` while paused — the natural thing in an incident — closed
/// its box and said nothing (the result went to the Log, which paused
/// lists nothing newer than the interval shown); failures were raw ("File
/// exists (os error 17)" for a FIFO), and a mistyped path made the
/// directories it named. The result is a box where the user looks,
/// paused or not, in the words of the what-if editor's Ctrl-S; a missing
/// directory is said, not made, unless it is plugtop's own.
#[test]
fn exporting_the_log_while_paused_says_where_it_went_or_why_not() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("osc.rec");
    common::record_simulated("oscillating", "oscillating-damped", 60.0, 1.0, &rec);
    let fifo = dir.path().join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("a FIFO");
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut s = Session::start_with(
        &[
            "--replay",
            &rec.display().to_string(),
            "-c",
            "examples/rules/oscillating-tight.conf",
        ],
        24,
        80,
        &[("XDG_STATE_HOME", &state_env)],
    );
    s.wait_until("no interval #3 yet", |s| {
        shown_number(&s.screen()).is_some_and(|n| n >= 3)
    });
    s.press(" ");
    s.wait_for("PAUSED");
    s.press("5");
    s.wait_for("Log up to the interval shown");
    let missing = dir.path().join("typo; plugtop --sim examples");
    let export = |s: &mut Session, to: Option<&std::path::Path>, shows: &str, says: &str| {
        s.press("e");
        s.wait_for("Export the log");
        if let Some(to) = to {
            s.press("\x15");
            s.press(&to.display().to_string());
        }
        s.press("\r");
        s.wait_for(shows);
        let screen = s.screen();
        assert!(
            flat(&screen).contains(says),
            "{says:?} not shown:\n{screen}"
        );
        assert!(!screen.contains("os error"), "{screen}");
        s.press("x");
        s.wait_gone(shows);
    };
    export(
        &mut s,
        Some(&fifo),
        "Not possible",
        &format!(
            "{} is a FIFO; plugtop replaces only a regular file (or creates a new one)",
            fifo.display()
        ),
    );
    export(
        &mut s,
        Some(&missing.join("log.txt")),
        "Not possible",
        &format!(
            "the directory {} does not exist; plugtop creates no directory there",
            missing.display()
        ),
    );
    assert!(!missing.exists(), "a mistyped path made its directories");
    // The path offered, in plugtop's own state directory, made for it.
    export(&mut s, None, "Log exported", "plugtop-log-");
    assert!(s.screen().contains("PAUSED"), "{}", s.screen());
    assert!(s.quit());
    let kept: Vec<_> = std::fs::read_dir(state.join("plugtop"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(kept.len(), 1, "{kept:?}");
}
