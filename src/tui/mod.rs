//! The full-screen UI. Two threads share nothing but channels: the control
//! thread owns the session and the actuator ([`core`], run by [`control`])
//! and sends what changed as [`update`]s; the screen thread ([`screen`])
//! owns the terminal and the screen's state ([`app`], made of the
//! [`timeline`], the [`log_book`], the [`selection`] and the [`modal`]
//! layers), turns keys into actions through the one table of [`keys`]
//! (and the open layers' own, [`layer_keys`]; [`help`] lists them all)
//! ([`dispatch`]), and draws with [`view`] only when something arrives.
//! [`local`] joins the two halves on one thread for line mode and tests.
//! An edit worth keeping ([`edited`]) is applied through the same reload
//! as `r`, or written by [`rules_file`].

pub mod app;
pub mod arming;
pub mod command;
pub mod control;
pub mod core;
pub mod cpu_panel;
pub mod dispatch;
pub mod draw_memo;
pub mod edited;
pub mod export;
pub mod flip_rows;
pub mod flips;
pub mod frame_diff;
pub mod graph_scale;
pub mod graph_series;
pub mod help;
pub mod input;
pub mod keys;
pub mod layer_keys;
pub mod line;
pub mod line_input;
pub mod list_rows;
pub mod local;
pub mod log_book;
pub mod log_export;
pub mod modal;
pub mod options;
pub mod rules_file;
pub mod run;
pub mod screen;
pub mod seek;
pub mod selection;
pub mod sized_backend;
pub mod state_dir;
pub mod stop;
pub mod term_caps;
pub mod terminal_shell;
pub mod timeline;
pub mod tuning;
pub mod update;
pub mod update_backlog;
pub mod view;
pub mod whatif;
