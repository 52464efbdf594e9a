//! `plugtop-run`: `plugtop run` alone, for the daemon that stays. Built
//! from the same files as `plugtop run` (src/cli/run.rs); `plugtop run`
//! replaces itself with it when it is installed beside `plugtop`
//! (src/cli/run_exe.rs), handing over the command line it parsed
//! (src/cli/handover.rs): the command line is shown unchanged, but never
//! parsed again here. Without the rest of plugtop linked in, clap
//! included, its run keeps about half the pages resident
//! (scripts/README.md, `plugtop run` RSS).

// Errors are reported, never unwrapped: input, files and the terminal are
// not trusted to be as expected.
#![deny(clippy::unwrap_used, clippy::expect_used)]

#[path = "../cli/ending.rs"]
mod ending;
#[path = "../cli/handover.rs"]
mod handover;
#[path = "../cli/run.rs"]
mod run;
#[path = "../cli/run_exe.rs"]
#[allow(dead_code)]
mod run_exe;
#[path = "../cli/stderr.rs"]
#[allow(dead_code)]
mod stderr;

use std::io::BufWriter;
use std::process::ExitCode;

fn main() -> ExitCode {
    // The kernel names a process after the file it runs: `plugtop` again,
    // as before the exec, for ps, pidof and the lock's "locked by pid N
    // (plugtop)".
    let _ = rustix::thread::set_name(c"plugtop");
    if run_exe::hand_back_if_built_apart() {
        eprintln!(
            "plugtop: {} beside plugtop was built from other sources, and plugtop could not be run in its place: install both from one build",
            run_exe::NAME
        );
        return ExitCode::from(1);
    }
    // `plugtop` parsed and checked the command line; this program has no
    // parser (handover.rs). Started otherwise, it says how to start it and
    // exits 1, as `plugtop run` does on bad options.
    let request = match run_exe::handed_over() {
        Some(Ok(request)) => request,
        Some(Err(e)) => {
            eprintln!(
                "plugtop: {} cannot read what it was handed ({e:#}): start it with `plugtop run`, from the same build",
                run_exe::NAME
            );
            return ExitCode::from(1);
        }
        None => {
            eprintln!(
                "plugtop: {} is started by `plugtop run`, which reads the command line: run `plugtop run -c FILE [OPTIONS]` (see `plugtop run --help`)",
                run_exe::NAME
            );
            return ExitCode::from(1);
        }
    };
    let mut out = BufWriter::new(std::io::stdout());
    // Nothing is written to `out` after the run's own flush.
    ending::exit_code(run::run(request, &mut out), 1)
}
