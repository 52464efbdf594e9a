//! Where plugtop puts what a user asks it to keep (`e`'s log): the user's
//! state directory, never wherever plugtop happened to be started.

use std::path::PathBuf;

/// The state directory (`$XDG_STATE_HOME/plugtop`, else
/// `~/.local/state/plugtop`); the current directory only when neither is
/// known.
pub fn state_dir() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        });
    match base {
        Some(b) => b.join("plugtop"),
        None => PathBuf::from("."),
    }
}

/// The path `e` offers: a file in the state directory named after the
/// interval on screen and this process, so two exports never collide.
pub fn default_log_path(stamp_seconds: i64) -> PathBuf {
    state_dir().join(format!(
        "plugtop-log-{stamp_seconds}-{}.txt",
        std::process::id()
    ))
}
