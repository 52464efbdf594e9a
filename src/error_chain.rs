//! How an error is shown: its own message, then each cause (`source()`)
//! after ": ". Every error type in `src/` says only its own part in its
//! message and leaves its cause to [`text`], so no cause is said twice and
//! none is lost: a message built from an error (a log line, the screen's
//! status line, a JSON field, `plugtop: ...` on stderr) is built by
//! [`text`], not by `{e}` or `to_string()`, which say the first part only.

use std::error::Error;

/// An error and its causes, outermost first, joined by ": ".
pub fn text(e: &(dyn Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
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

    #[test]
    fn an_error_without_a_cause_is_its_message() {
        assert_eq!(text(&std::io::Error::other("no such file")), "no such file");
    }
}
