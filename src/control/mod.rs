//! Acting on the guest and watching how it goes, the same for the screen,
//! `plugtop run` and the simulator: the control loop they share
//! ([`session`]), what each mode does with a decision ([`controller`]),
//! taking a guest and giving it back ([`guard`], over the
//! one-controller-per-guest [`lock`], the restore [`journal`] and its
//! [`journal_check`], and the daemon's [`pid_file`]), the lines a step
//! logs ([`log_entries`]), and the incident watch ([`watch`]: [`flap`]ping,
//! [`feedback`] loops, known [`patterns`]). The writes themselves go
//! through [`crate::kernel::actuator`].

pub mod controller;
pub mod feedback;
pub mod flap;
pub mod guard;
pub mod journal_check;
pub mod lock;
pub mod log_entries;
pub mod patterns;
pub mod pid_file;
pub mod restore_journal;
pub mod session;
pub mod watch;
