//! What the subcommands `check`, `eval`, `record` and `whatif` compute and
//! print, separated from the command line so tests and benchmarks can run
//! them on in-memory writers; the built-in rules the screen observes with;
//! and the [`Status`] every subcommand ends with. The binary's
//! `cli/<name>.rs` turns a subcommand's arguments into a call here (or into
//! `daemon`, `sim`, `tune`, `tui`) and its errors into messages.

pub mod check;
pub mod eval;
pub mod observe;
pub mod record;
pub mod whatif;

/// How a command ended, for `main` to turn into an exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Everything ran.
    Ok,
    /// The input has errors (check), or cpuplugd would refuse or stop (eval).
    Failed,
    /// Ended some other way, with this exit code (128 + a signal).
    Code(u8),
}

impl Status {
    /// [`Status::Ok`] when everything held, else [`Status::Failed`].
    pub fn of(ok: bool) -> Status {
        if ok { Status::Ok } else { Status::Failed }
    }

    /// Ended by `signal`: 128 + it, as the shell shows a process it ended.
    pub fn ended_by(signal: i32) -> Status {
        Status::Code(crate::stop_signals::exit_status(signal).clamp(0, 255) as u8)
    }
}

/// How often a command reads its source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wait {
    /// As fast as the source gives samples (recordings, snapshots).
    None,
    /// A fixed interval between readings.
    Every(std::time::Duration),
    /// The rule file's UPDATE.
    Update,
}

/// How long and how often to read a source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Stop after this many readings.
    pub count: Option<usize>,
    pub wait: Wait,
}

impl Pace {
    /// Read a finite source to its end.
    pub const ALL: Pace = Pace {
        count: None,
        wait: Wait::None,
    };
}
