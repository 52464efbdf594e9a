//! plugtop: a monitor and controller for cpuplugd rule files.
//!
//! The library follows the data's way through the program: `kernel` turns
//! /proc and /sys (or a recording, snapshots, the simulated guest of `sim`)
//! into [`kernel::Sample`]s, `rules` reads a rule file exactly as cpuplugd
//! does, `engine` decides one interval the way cpuplugd would, `control`
//! runs the interval loop every front end shares and acts through
//! `kernel::actuator`, and `report` formats what was decided. The front ends
//! are `daemon` (`plugtop run`), `tui` (the screen and line mode), `sim`,
//! `tune` and `commands` (`check`, `eval`, `record`, `whatif`);
//! `docs/architecture.md` draws how data flows between them. Library code
//! returns typed errors and never exits; the binary (`main.rs` and
//! `cli/`) turns them into messages and exit statuses.

// Library code returns errors: it never trusts input, a file or the
// terminal to be as expected, and never prints (main reports). It may
// end the process only on the panic and stuck-terminal paths, by design.
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod commands;
pub mod control;
pub mod daemon;
pub mod engine;
pub mod error_chain;
pub mod faults;
pub mod fleet;
pub mod import;
pub mod kernel;
pub mod logging;
pub mod lsp;
pub mod metrics;
pub mod number;
pub mod pace;
pub mod report;
pub mod rules;
pub mod safe_text;
pub mod sim;
pub mod stop_signals;
pub mod toml_file;
pub mod train;
pub mod tui;
pub mod tune;
