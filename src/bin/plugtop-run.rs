//! `plugtop-run`: `plugtop run` alone, for the daemon that stays. Built
//! from the same files as `plugtop run` (src/cli/run.rs) and taking the
//! same command line, `run` included; `plugtop run` replaces itself with
//! it when it is installed beside `plugtop` (src/cli/run_exe.rs). Without
//! the rest of plugtop linked in, its run keeps about half the pages
//! resident (scripts/README.md, `plugtop run` RSS).

// Errors are reported, never unwrapped: input, files and the terminal are
// not trusted to be as expected.
#![deny(clippy::unwrap_used, clippy::expect_used)]

#[path = "../cli/ending.rs"]
mod ending;
#[path = "../cli/flap.rs"]
mod flap;
#[path = "../cli/run.rs"]
mod run;
#[path = "../cli/run_exe.rs"]
#[allow(dead_code)]
mod run_exe;
#[path = "../cli/stderr.rs"]
#[allow(dead_code)]
mod stderr;
#[path = "../cli/wide.rs"]
mod wide;

use std::io::BufWriter;
use std::process::ExitCode;

use clap::Parser;

/// `plugtop run`'s command line, as `plugtop` has it.
#[derive(Parser)]
#[command(
    name = "plugtop",
    bin_name = "plugtop",
    version,
    disable_version_flag = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Act on the guest headless: a drop-in for `cpuplugd -c FILE -f -V`.
    #[command(
        version,
        display_name = "plugtop run",
        disable_version_flag = true,
        after_help = run::EXIT_STATUS
    )]
    Run(run::RunArgs),
}

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
    let Command::Run(args) = match Cli::try_parse() {
        Ok(cli) => cli.command,
        Err(e) => return ending::bad_options(&e, true),
    };
    let mut out = BufWriter::new(std::io::stdout());
    // Nothing is written to `out` after the run's own flush.
    ending::exit_code(run::run(args, &mut out), 1)
}
