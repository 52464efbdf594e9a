//! The `plugtop` command line: parse arguments, call the library, report.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};

use plugtop::commands::{self, Status};
use plugtop::commands::{Pace, Wait};
use plugtop::kernel::Source;
use plugtop::kernel::live::{LiveSource, wall_clock};
use plugtop::kernel::machine::describe;
use plugtop::kernel::recording::{Header, RecordingSource};
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
    /// Decide every interval as cpuplugd would, from a recording, snapshots or a live root; writes nothing.
    Eval {
        /// The rule file.
        #[arg(short = 'c', long = "config")]
        config: PathBuf,
        #[command(flatten)]
        from: From,
        /// Seconds between live readings (default: the rule file's UPDATE).
        #[arg(long)]
        interval: Option<f64>,
        /// Stop after this many readings.
        #[arg(long)]
        count: Option<usize>,
        /// Print the conformance JSON lines instead of a table.
        #[arg(long, conflicts_with = "trace")]
        jsonl: bool,
        /// Show the truth trace of every rule evaluated, down to each sub-expression.
        #[arg(long)]
        trace: bool,
    },
    /// Keep samples: as a recording file (-o) or as snapshot directories (--export-snapshots).
    Record {
        /// The recording to create (an existing file is never overwritten).
        #[arg(
            short = 'o',
            long = "output",
            required_unless_present = "export_snapshots"
        )]
        output: Option<PathBuf>,
        /// Write conformance-format snapshot directories here instead.
        #[arg(long, conflicts_with = "output")]
        export_snapshots: Option<PathBuf>,
        #[command(flatten)]
        from: From,
        /// Seconds between live readings.
        #[arg(long, default_value_t = 1.0)]
        interval: f64,
        /// Stop after this many samples (default: until interrupted).
        #[arg(long)]
        count: Option<usize>,
    },
}

#[derive(clap::Args)]
#[group(required = false, multiple = false)]
struct From {
    /// A directory of numbered snapshot directories (the conformance format).
    #[arg(long)]
    snapshots: Option<PathBuf>,
    /// A recording made with `plugtop record`.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// A live root laid out like / (read every interval).
    #[arg(long)]
    root: Option<PathBuf>,
}

/// Opens the source named on the command line (a live root when none is).
fn open_source(
    from: &From,
    default_root: Option<&Path>,
) -> anyhow::Result<(Box<dyn Source>, bool)> {
    if let Some(dir) = &from.snapshots {
        let s = SnapshotSource::open(dir)
            .with_context(|| format!("cannot read snapshots in {}", dir.display()))?;
        return Ok((Box::new(s), false));
    }
    if let Some(file) = &from.replay {
        return Ok((Box::new(RecordingSource::open(file)?), false));
    }
    match from.root.as_deref().or(default_root) {
        Some(root) => Ok((Box::new(LiveSource::new(root)), true)),
        None => {
            anyhow::bail!("say where to read from: --snapshots DIR, --replay FILE or --root DIR")
        }
    }
}

fn seconds(s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| anyhow::anyhow!("--interval must be a number of seconds >= 0"))
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
            from,
            interval,
            count,
            jsonl,
            trace,
        } => {
            let rules = commands::eval::read_rule_file(&config)
                .with_context(|| format!("cannot read {}", config.display()))?;
            let (mut source, live) = open_source(&from, None)?;
            let format = if jsonl {
                commands::eval::Format::Jsonl
            } else if trace {
                commands::eval::Format::Trace
            } else {
                commands::eval::Format::Table
            };
            let wait = match (live, interval) {
                (false, _) => Wait::None,
                (true, Some(s)) => Wait::Every(seconds(s)?),
                (true, None) => Wait::Update,
            };
            let pace = Pace { count, wait };
            let status = commands::eval::run(
                &rules,
                source.as_mut(),
                format,
                pace,
                &mut out,
                &mut std::thread::sleep,
            )?;
            if let Some(w) = source.warning() {
                eprintln!("plugtop: warning: {w}");
            }
            status
        }
        Command::Record {
            output,
            export_snapshots,
            from,
            interval,
            count,
        } => {
            let (mut source, live) = open_source(&from, Some(Path::new("/")))?;
            let wait = if live {
                Wait::Every(seconds(interval)?)
            } else {
                Wait::None
            };
            let machine = match (&from.replay, &from.snapshots) {
                (Some(file), _) => RecordingSource::open(file).map(|r| r.header().clone()).ok(),
                (None, Some(dir)) => SnapshotSource::open(dir)
                    .ok()
                    .and_then(|s| s.first_dir())
                    .map(|d| header_for(&d, interval)),
                (None, None) => Some(header_for(
                    from.root.as_deref().unwrap_or(Path::new("/")),
                    interval,
                )),
            };
            let header = machine.unwrap_or_else(|| header_for(Path::new("/nonexistent"), interval));
            let target = match (&output, &export_snapshots) {
                (_, Some(dir)) => commands::record::Target::Snapshots(dir),
                (Some(path), None) => commands::record::Target::Recording { path, header },
                (None, None) => {
                    anyhow::bail!("say where to write: -o FILE or --export-snapshots DIR")
                }
            };
            commands::record::run(
                source.as_mut(),
                target,
                Pace { count, wait },
                &mut out,
                &mut std::thread::sleep,
            )?
        }
    };
    out.flush()?;
    Ok(status)
}

/// A recording header for the machine under `root`.
fn header_for(root: &Path, interval: f64) -> Header {
    let m = describe(root);
    let present_cpus = std::fs::read(root.join("sys/devices/system/cpu/present"))
        .ok()
        .and_then(|t| plugtop::kernel::cpulist::CpuList::parse(&t))
        .map_or(0, |l| l.count);
    Header {
        host: m.host,
        kernel: m.kernel,
        cpu_model: m.cpu_model,
        root: root.display().to_string(),
        page_size: m.page_size,
        present_cpus,
        interval_us: (interval.max(0.0) * 1e6) as u64,
        started: wall_clock(),
    }
}
