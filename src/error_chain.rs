//! How an error is shown: its own message, then each cause (`source()`)
//! after ": ". Every error type in `src/` says only its own part in its
//! message and leaves its cause to [`text`], so no cause is said twice and
//! none is lost: a message built from an error (a log line, the screen's
//! status line, a JSON field, `plugtop: ...` on stderr) is built by
//! [`text`], not by `{e}` or `to_string()`, which say the first part only.
//!
//! It is also the one place a system error becomes words: Rust writes
//! "No such file or directory (os error 2)", [`text`] says "no such file
//! or directory" after what went wrong ([`words`]).

use std::error::Error;

/// An error and its causes, outermost first, joined by ": ".
pub fn text(e: &(dyn Error + 'static)) -> String {
    let mut out = words(e, false);
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&words(c, true));
        cause = c.source();
    }
    out
}

/// The innermost cause of `e` in words, to follow a colon: what the system
/// said, without the layers that name the file (for a message that names
/// the file itself).
pub fn innermost(e: &(dyn Error + 'static)) -> String {
    let mut last = e;
    while let Some(c) = last.source() {
        last = c;
    }
    words(last, true)
}

/// One error's own message. A system error (an `io::Error` the OS gave)
/// loses Rust's " (os error N)" and, after a colon (`after`), its capital:
/// "cannot read x.conf: no such file or directory".
fn words(e: &(dyn Error + 'static), after: bool) -> String {
    let own = e.to_string();
    let Some(code) = e
        .downcast_ref::<std::io::Error>()
        .and_then(std::io::Error::raw_os_error)
    else {
        return own;
    };
    let plain = own
        .strip_suffix(&format!(" (os error {code})"))
        .unwrap_or(&own);
    let mut chars = plain.chars();
    match chars.next() {
        Some(first) if after => first.to_lowercase().chain(chars).collect(),
        _ => plain.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::text;

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        #[error("cannot read {path}")]
        Read {
            path: String,
            #[source]
            source: std::io::Error,
        },
        #[error(transparent)]
        Inner(#[from] Middle),
    }

    #[derive(Debug, thiserror::Error)]
    #[error("the rules")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn each_cause_is_said_once_in_order() {
        let e = Outer::Read {
            path: "/etc/cpuplugd.conf".into(),
            source: std::io::Error::other("permission denied"),
        };
        assert_eq!(
            text(&e),
            "cannot read /etc/cpuplugd.conf: permission denied"
        );
    }

    #[test]
    fn a_transparent_wrapper_adds_no_part_and_drops_none() {
        let e = Outer::from(Middle(std::io::Error::other("gone")));
        assert_eq!(text(&e), "the rules: gone");
    }

    #[test]
    fn a_cause_that_the_message_already_contains_is_still_said() {
        // The message names a file called "busy"; the cause is "busy" too.
        // Both are said: the cause is not guessed away from the text.
        let e = Outer::Read {
            path: "busy".into(),
            source: std::io::Error::other("busy"),
        };
        assert_eq!(text(&e), "cannot read busy: busy");
    }

    /// nu54 F5: the system's error is said in words, never as Rust's
    /// "(os error 2)", wherever in the chain it is.
    #[test]
    fn a_system_error_is_said_in_words_without_its_number() {
        let e = Outer::Read {
            path: "nonexist.conf".into(),
            source: std::io::Error::from_raw_os_error(2),
        };
        assert_eq!(
            text(&e),
            "cannot read nonexist.conf: no such file or directory"
        );
        let busy = std::io::Error::from_raw_os_error(98);
        assert_eq!(text(&busy), "Address already in use");
        assert_eq!(super::innermost(&e), "no such file or directory");
    }

    #[test]
    fn an_error_without_a_cause_is_its_message() {
        assert_eq!(text(&std::io::Error::other("no such file")), "no such file");
    }
}
