//! The full-screen UI: [`app`] holds the state, [`keys`] the one table of
//! keybindings, [`view`] draws, and [`run`] is the event loop that feeds
//! samples and keys in and redraws only when one arrives.

pub mod app;
pub mod arming;
pub mod control;
pub mod dispatch;
pub mod export;
pub mod input;
pub mod keys;
pub mod line;
pub mod line_input;
pub mod log_export;
pub mod run;
pub mod screen;
pub mod sized_backend;
pub mod state_dir;
pub mod stop;
pub mod stuck_terminal;
pub mod tuning;
pub mod view;
pub mod whatif;
