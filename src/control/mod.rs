//! Acting on the guest: the actuator that writes sysfs and `cmm_pages`
//! below a root, the restore journal, the one-controller-per-guest lock,
//! the daemon's pid file, and the controller that decides, per mode, what
//! gets written.

pub mod controller;
pub mod feedback;
pub mod flap;
pub mod guard;
pub mod journal;
pub mod journal_check;
pub mod lock;
pub mod log_entries;
pub mod patterns;
pub mod pid_file;
pub mod session;
pub mod watch;
