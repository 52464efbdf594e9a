//! The `plugtop` command line: parse arguments, call the library, report.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};

use plugtop::commands::{self, Status};
use plugtop::kernel::root::RootReader;
use plugtop::kernel::snapshots::SnapshotSource;

#[derive(Parser)]
#[command(
    name = "plugtop",
    version,
    about = "Monitor and control cpuplugd rule files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Report every error and warning in a rule file, with line and column.
    Check {
        /// The rule file.
        file: PathBuf,
        /// The machine to check names against (its proc/ and sys/).
        #[arg(long, default_value = "/")]
        root: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        format: CheckFormat,
    },
    /// Decide every interval of recorded readings as cpuplugd would; writes nothing.
    Eval {
        /// The rule file.
        #[arg(short = 'c', long = "config")]
        config: PathBuf,
        /// A directory of numbered snapshot directories (the conformance format).
        #[arg(long)]
        snapshots: PathBuf,
        /// Print the conformance JSON lines instead of a table.
        #[arg(long, conflicts_with = "trace")]
        jsonl: bool,
        /// Show the truth trace of every rule evaluated, down to each sub-expression.
        #[arg(long)]
        trace: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormat {
    Text,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(Status::Ok) => ExitCode::SUCCESS,
        Ok(Status::Failed) => ExitCode::from(1),
        // `plugtop eval ... | head` is fine: stop quietly.
        Err(e)
            if e
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("plugtop: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<Status> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let status = match cli.command {
        Command::Check { file, root, format } => {
            let source = commands::eval::read_rule_file(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let facts = RootReader::new().facts(&root);
            let format = match format {
                CheckFormat::Text => commands::check::Format::Text,
                CheckFormat::Json => commands::check::Format::Json,
            };
            commands::check::run(&source, &facts, format, &mut out)?
        }
        Command::Eval {
            config,
            snapshots,
            jsonl,
            trace,
        } => {
            let source = commands::eval::read_rule_file(&config)
                .with_context(|| format!("cannot read {}", config.display()))?;
            let mut snaps = SnapshotSource::open(&snapshots)
                .with_context(|| format!("cannot read snapshots in {}", snapshots.display()))?;
            let format = if jsonl {
                commands::eval::Format::Jsonl
            } else if trace {
                commands::eval::Format::Trace
            } else {
                commands::eval::Format::Table
            };
            commands::eval::run(&source, &mut snaps, format, &mut out)?
        }
    };
    out.flush()?;
    Ok(status)
}
