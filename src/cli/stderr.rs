//! Messages on standard error from the subcommands, made safe for the
//! terminal and never a panic when the terminal is gone.

/// A message on stderr that may quote a file (an error, a warning, what
/// the daemon said before it detached): made safe for the terminal line by
/// line, as `main` shows errors.
pub(super) fn complain(text: &str) {
    say(&plugtop::report::terminal_safe_lines(text));
}

/// A line on stderr that never panics, for when the terminal may be gone.
pub(super) fn say(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Prose on stderr, as [`say`], wrapped between words at the terminal's
/// width (80 into a pipe): what the screen says once it is gone.
pub(super) fn say_wrapped(text: &str) {
    say(plugtop::report::prose(text, plugtop::report::stderr_width()).trim_end());
}
