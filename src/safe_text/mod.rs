//! Text from files made safe to show: escaped for a terminal or a log
//! ([`terminal_safe`]) and for JSON a terminal may print
//! ([`terminal_safe_json`]). Every part of plugtop that shows a file's
//! text uses it, the rule language's diagnostics and the reports alike, so
//! it depends on neither.

mod json;
mod terminal;

pub use json::terminal_safe_json;
pub(crate) use terminal::acts_on_terminal;
pub use terminal::{TerminalText, terminal_safe, terminal_safe_lines};
