//! The screen's time in a pseudo-terminal at 80×24 (issue 45 item 1,
//! newuser51): a pause holds, reading ahead keeps the Log, a damaged
//! recording is said, far times are answered.

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
