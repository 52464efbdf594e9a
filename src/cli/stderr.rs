//! Messages on standard error from the subcommands, made safe for the
//! terminal and never a panic when the terminal is gone.

/// A message on stderr that may quote a file (an error, a warning, what
/// the daemon said before it detached): made safe for the terminal line by
/// line and wrapped at the terminal's width (80 into a pipe), a rule's
/// quoted lines and carets whole, as `main` shows errors ([`wrapped`]).
pub(super) fn complain(text: &str) {
    say(wrapped(&plugtop::report::terminal_safe_lines(text)).trim_end());
}

/// `text` for standard error: each line wrapped between words at the
/// terminal's width (80 into a pipe), except the lines that quote a rule
/// file and the carets under them, which stay whole (nu54 M1: warnings
/// and errors of 100-200 columns in a pipe).
pub(super) fn wrapped(text: &str) -> String {
    let width = plugtop::report::stderr_width();
    plugtop::report::Layout::Narrow { width }.diagnostics(text)
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
