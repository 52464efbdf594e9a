//! The `plugtop` command line: parse arguments, call the library, report.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};

use plugtop::commands::{self, Status};
use plugtop::kernel::live::LiveSource;
use plugtop::kernel::root::RootReader;
use plugtop::kernel::snapshots::SnapshotSource;

#[derive(Parser)]
#[command(
    name = "plugtop",
    version,
    about = "Monitor and control cpuplugd rule files",
    long_about = "Monitor and control cpuplugd rule files.\n\nWithout a subcommand, plugtop observes this machine with the built-in recommended rules (or -c FILE) and prints what cpuplugd would decide every interval. It never writes to the system."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Rule file to observe with (default: the built-in recommended rules).
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// The machine to observe (its proc/ and sys/).
    #[arg(long, default_value = "/")]
    root: PathBuf,
    /// Stop after this many readings.
    #[arg(long)]
    count: Option<usize>,
    /// Seconds between readings (default: the rule file's UPDATE).
    #[arg(long)]
    interval: Option<f64>,
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
            if e.downcast_ref::<std::io::Error>()
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
    let Some(command) = cli.command else {
        let rules = match &cli.config {
            Some(path) => Some(
                commands::eval::read_rule_file(path)
                    .with_context(|| format!("cannot read {}", path.display()))?,
            ),
            None => None,
        };
        let mut source = LiveSource::new(&cli.root);
        let options = commands::observe::Options {
            count: cli.count,
            interval: cli.interval,
        };
        let status = commands::observe::run(
            rules,
            &mut source,
            options,
            &mut out,
            &mut std::thread::sleep,
        )?;
        out.flush()?;
        return Ok(status);
    };
    let status = match command {
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
