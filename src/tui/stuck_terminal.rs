//! Ending the screen after a stop signal when its thread cannot: a
//! terminal nobody reads (a stalled SSH session, a paused `tmux` pane)
//! blocks every write to it, and the screen thread with it. The control
//! thread puts the guest back on its own; then the screen thread gets a
//! grace period to give the terminal back as usual, and after it the
//! process ends with the usual status, leaving the terminal only with
//! what can be done without waiting (raw mode off, and one non-blocking
//! write of the sequences that leave the alternate screen).

use std::time::Duration;

use super::stop::StopFlag;

/// How long the screen thread has, once the guest is given back, to tear
/// the terminal down itself.
pub const GRACE: Duration = Duration::from_secs(2);

/// Waits until the guest is given back, then `grace`, then ends the
/// process with the status the control thread gave. Does not return; the
/// process normally ends on the screen thread's way out first.
pub fn end_once_given_back(stop: &StopFlag, grace: Duration) {
    let status = stop.wait_given_back();
    std::thread::sleep(grace);
    leave_terminal_without_waiting(status);
    std::process::exit(status);
}

/// Gives the terminal back as far as that never waits for its reader:
/// termios is set at once (no drain), and the closing sequences and a
/// line saying why go in one write on a non-blocking descriptor of its
/// own, dropped when the terminal has no room.
fn leave_terminal_without_waiting(status: i32) {
    use rustix::fs::{Mode, OFlags, open};
    let _ = crossterm::terminal::disable_raw_mode();
    let Ok(tty) = open(
        "/dev/tty",
        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let _ = rustix::termios::tcflush(&tty, rustix::termios::QueueSelector::IFlush);
    let outcome = if status == 1 {
        "the guest was not fully put back and its journal is kept (run `plugtop restore`)"
    } else {
        "the guest was put back"
    };
    let text = format!(
        "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?2004l\x1b[?25h\x1b[?1049l\r\nplugtop: the terminal took no output; ended without it: {outcome} (exit status {status})\r\n"
    );
    let _ = rustix::io::write(&tty, text.as_bytes());
}
