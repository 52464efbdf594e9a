//! The subcommands' work, separated from argument parsing so tests and
//! benchmarks can run them on in-memory writers.

pub mod check;
pub mod eval;
pub mod observe;

/// How a command ended, for `main` to turn into an exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Everything ran.
    Ok,
    /// The input has errors (check), or cpuplugd would refuse or stop (eval).
    Failed,
}
