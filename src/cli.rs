//! The command line: its shape (the clap structs here: what each
//! subcommand takes) and, in `cli/<name>.rs`, what each subcommand does
//! with its arguments. `main` parses and dispatches on [`Subcommand`].
//!
//! Every subcommand's module has one entry point of one shape,
//!
//! ```text
//! pub fn run(args: NameArgs, out: &mut dyn Write) -> anyhow::Result<Status>
//! ```
//!
//! (the screen, which has no subcommand, takes the whole [`Cli`]; `run`
//! takes its [`run::Request`], which `plugtop-run` is handed without a
//! parser of its own, src/cli/handover.rs): it
//! checks the arguments, calls the library, writes what the user reads on
//! `out`, and turns library errors into messages (anyhow, the binary's
//! side only) and the ending into a [`plugtop::commands::Status`] for
//! `main` to exit with. What a subcommand computes stays in the library's
//! own modules (`plugtop::commands` for what `check`, `eval`, `record` and
//! `whatif` print, `plugtop::daemon` for the run, `plugtop::sim`,
//! `plugtop::tune`), where tests reach it without a process.

pub mod check;
pub mod ending;
pub mod eval;
mod flap;
pub mod fleet;
pub mod generate;
mod handover;
pub mod import;
mod interval;
pub mod lsp;
pub mod record;
pub mod restore;
pub mod run;
pub mod run_exe;
pub mod screen;
pub mod sim;
mod sources;
mod stderr;
pub mod train;
pub mod tune;
pub mod whatif;
mod wide;

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
pub use flap::FlapArgs;
pub use wide::WideArg;

#[derive(Parser)]
#[command(
    name = "plugtop",
    version,
    disable_version_flag = true,
    about = "Monitor and control cpuplugd rule files",
    long_about = "Monitor and control cpuplugd rule files.\n\nWithout a subcommand, plugtop opens the full-screen monitor on this machine with the built-in recommended rules (or -c FILE), in observe mode, which never writes. `s` (step-confirm) and `A` (autonomous) act on the guest only after asking; on a machine that is not a z/VM guest they are refused unless --allow-non-zvm is given."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Subcommand>,
    /// Rule file to observe with (default: the built-in recommended rules).
    #[arg(short = 'c', long = "config")]
    pub config: Option<PathBuf>,
    /// The machine to observe (its proc/ and sys/).
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// In line mode (--batch), stop after printing this many intervals (readings that only fill the history do not count).
    #[arg(long)]
    pub count: Option<usize>,
    /// Seconds between readings, 0.001 to 86400 (default: the rule file's UPDATE).
    #[arg(long)]
    pub interval: Option<f64>,
    /// Replay a recording instead of reading the machine.
    #[arg(long, conflicts_with = "root")]
    pub replay: Option<PathBuf>,
    /// Start in this mode (step and auto change the guest; they take the lock).
    #[arg(long, value_enum, default_value_t = UiMode::Observe)]
    pub mode: UiMode,
    /// One line per interval instead of the screen (also when TERM=dumb or not on a terminal).
    #[arg(long)]
    pub batch: bool,
    /// No colours (NO_COLOR is respected too).
    #[arg(long)]
    pub mono: bool,
    /// Watch and drive a simulated guest playing this scenario (see examples/scenarios).
    #[arg(long, conflicts_with_all = ["root", "replay"])]
    pub sim: Option<PathBuf>,
    /// With --sim: /proc/vmstat carries the old zone-suffixed names.
    #[arg(long, requires = "sim")]
    pub old_kernel: bool,
    /// With --sim: candidates the screen's tune (T) evaluates at most, as
    /// `plugtop tune --budget` (default: as `plugtop tune` on the scenario,
    /// so both recommend the same point).
    #[arg(long, requires = "sim", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub tune_budget: Option<u64>,
    /// Let step and autonomous mode change this machine although it is not
    /// an s390 z/VM guest (by default plugtop refuses on such a `/`).
    #[arg(long)]
    pub allow_non_zvm: bool,
    /// Print the version (`-v` as cpuplugd takes it, `-V` as most tools do).
    #[arg(short = 'v', visible_short_alias = 'V', long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub enum UiMode {
    Observe,
    Step,
    Auto,
}

/// The subcommands.
#[derive(clap::Subcommand)]
pub enum Subcommand {
    /// Report every error and warning in a rule file, with line and column.
    #[command(
        after_help = "Exit status: 0 every file would load (warnings allowed); 1 a file has an error, or cannot be read (cpuplugd exits 1 on both), each file said and the others still checked; 2 bad options or a --root that is no machine's root."
    )]
    Check(CheckArgs),
    /// Decide every interval as cpuplugd would, from a recording, snapshots or a live root; writes nothing.
    Eval(EvalArgs),
    /// Act on the guest headless: a drop-in for `cpuplugd -c FILE -f -V`.
    #[command(
        version,
        display_name = "plugtop run",
        disable_version_flag = true,
        after_help = RUN_EXIT_STATUS,
    )]
    Run(RunArgs),
    /// Put CPUs and the pool back after a plugtop that was killed or crashed.
    Restore(RestoreArgs),
    /// Re-decide a recording with another rule file, side by side with a second file or with what the guest did.
    Whatif(WhatifArgs),
    /// Play a scenario on a simulated guest under a rule file and report how the rules did.
    Sim(SimArgs),
    /// Keep samples: as a recording file (-o) or as snapshot directories (--export-snapshots).
    Record(RecordArgs),
    /// Make a recording from the history the guest already keeps: sysstat's sa files or node_exporter's series in Prometheus.
    #[command(
        after_help = "The recording replays everywhere a recording does (--replay, eval, whatif, tune --replay). A reading the history lacks is absent, never zero: a rule naming it is refused on this history. See docs/incidents.md."
    )]
    Import(ImportArgs),
    /// Search a rule file's form and thresholds against a scenario on the simulated guest and show the trade-off.
    #[command(after_long_help = TUNE_JUDGE)]
    Tune(TuneArgs),
    /// Graded exercises on the simulated guest: a course's screen, or a class's grades (train grade).
    #[command(
        args_conflicts_with_subcommands = true,
        subcommand_negates_reqs = true,
        after_help = "Courses are TOML files (docs/training.md); the built-in one is examples/courses/cpuplugd-basics.toml. Progress is kept in $XDG_STATE_HOME/plugtop/train/."
    )]
    Train(TrainArgs),
    /// A language server for rule files over stdio: check's diagnostics, hover with live values, completion, rename, fixes.
    Lsp(LspArgs),
    /// Every guest's plugtop as the site's Prometheus holds it: trouble first, rule-file drift, one guest in detail.
    #[command(
        after_help = "Exit status with --batch: 0 no guest in trouble; 1 a guest is stopped, faulting, flapping, held at CPU_MAX under load or its pool at CMM_MAX; 2 bad options or Prometheus answered nothing. On the screen, ? lists every key. See docs/fleet.md."
    )]
    Fleet(FleetArgs),
    /// Write the man pages, shell completions (docs/run.md) or an editor's set-up for plugtop lsp (docs/lsp.md).
    Generate(GenerateArgs),
}

/// The arguments of `plugtop import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub from: ImportFrom,
}

/// Where `plugtop import` reads a history.
#[derive(clap::Subcommand)]
pub enum ImportFrom {
    /// sysstat's sa files (/var/log/sa/saDD, /var/log/sysstat/saDD), read through the distribution's `sadf -j`.
    Sysstat(ImportSysstatArgs),
    /// node_exporter's series of one instance in the site's Prometheus.
    // Its usage is too long for 80 columns, and clap does not wrap it.
    #[command(
        override_usage = "plugtop import prometheus [OPTIONS] --prometheus <URL> --instance <NAME>\n       \
                          --from <T> --to <T> --output <REC>"
    )]
    Prometheus(ImportPrometheusArgs),
}

/// The arguments of `plugtop import sysstat`.
#[derive(clap::Args)]
pub struct ImportSysstatArgs {
    /// The sa files, oldest first.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The recording to write (a new file; never over an existing one).
    #[arg(short = 'o', long = "output", value_name = "REC")]
    pub output: PathBuf,
    /// cpuplugd's log (syslog or `journalctl -u cpuplugd -o short-iso`): its actions laid on the readings.
    #[arg(long, value_name = "LOG")]
    pub actions: Option<PathBuf>,
    /// Seconds one run of sadf may take.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub timeout: f64,
}

/// The arguments of `plugtop import prometheus`.
#[derive(clap::Args)]
pub struct ImportPrometheusArgs {
    /// The site's Prometheus, http://HOST:PORT[/PREFIX].
    #[arg(long, value_name = "URL")]
    pub prometheus: String,
    /// The node_exporter instance (its `instance` label, e.g. guest1:9100).
    #[arg(long, value_name = "NAME")]
    pub instance: String,
    /// The start: seconds since the epoch or a UTC time (2024-05-01T03:00:00Z).
    #[arg(long, value_name = "T")]
    pub from: String,
    /// The end, as --from.
    #[arg(long, value_name = "T")]
    pub to: String,
    /// Seconds between readings (default: the series' scrape interval).
    #[arg(long, value_name = "SECONDS")]
    pub step: Option<f64>,
    /// The recording to write (a new file; never over an existing one).
    #[arg(short = 'o', long = "output", value_name = "REC")]
    pub output: PathBuf,
    /// cpuplugd's log (syslog or `journalctl -u cpuplugd -o short-iso`): its actions laid on the readings.
    #[arg(long, value_name = "LOG")]
    pub actions: Option<PathBuf>,
    /// The `instance` label of this guest's `plugtop run --metrics-listen`, when it had one: the actions plugtop applied come along.
    #[arg(long, value_name = "NAME")]
    pub plugtop_instance: Option<String>,
    /// Seconds one request to Prometheus may take, connecting to the last byte.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub timeout: f64,
}

/// The arguments of `plugtop generate`.
#[derive(clap::Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub what: Generate,
}

/// What `plugtop generate` writes.
#[derive(clap::Subcommand)]
pub enum Generate {
    /// A man page for plugtop and one per subcommand (plugtop-run.1, ...)
    /// into DIR/man1, and plugtop-rules.5 into DIR/man5: `MANPATH=DIR man
    /// plugtop` reads them, and DIR /usr/local/share/man installs them.
    Man {
        /// The directory to write the pages into (made if missing). A page
        /// that exists already is refused, and so is anything but a
        /// regular file at a page's name, unless --force.
        dir: PathBuf,
        /// Replace pages that exist already (regular files only: a link,
        /// a FIFO or a directory at a page's name is refused all the same).
        #[arg(long)]
        force: bool,
    },
    /// The completion script for SHELL, on standard output.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The set-up of plugtop's language server for EDITOR, on standard
    /// output: the file kept in examples/editors/ (see docs/lsp.md).
    Editor {
        #[arg(value_enum)]
        editor: Editor,
    },
}

/// The editors `plugtop generate editor` has a set-up for: one name per
/// file in examples/editors/, so that each can be printed on a guest
/// where the source tree is not at hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Editor {
    /// Neovim's built-in client (Lua; neovim 0.7 and later).
    Neovim,
    /// Vim with the vim-lsp plugin.
    Vim,
    /// Emacs with eglot.
    Emacs,
    /// Helix (languages.toml).
    Helix,
    /// VS Code: the extension's manifest, package.json.
    Vscode,
    /// VS Code: the extension's code, extension.js, beside package.json.
    VscodeJs,
}

/// The arguments of `plugtop check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// The rule files, each checked on its own (JSON: one array of every
    /// file's findings, each naming its file).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The machine to check names against (its proc/ and sys/).
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    #[command(flatten)]
    pub wide: WideArg,
}

/// The arguments of `plugtop fleet`.
#[derive(clap::Args)]
pub struct FleetArgs {
    /// The site's Prometheus, http://HOST:PORT[/PREFIX] (plugtop never scrapes the guests itself).
    #[arg(long, value_name = "URL")]
    pub prometheus: String,
    /// Only the series these label matchers select, e.g. '{job="plugtop"}'.
    #[arg(long = "match", value_name = "SELECTOR", default_value = "")]
    pub matcher: String,
    /// Seconds between refreshes of the screen.
    #[arg(long, default_value_t = 15.0, value_name = "SECONDS")]
    pub refresh: f64,
    /// Seconds one request to Prometheus may take, connecting to the last byte.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// The window of sparklines, faults and changes, in seconds (at least 60).
    #[arg(long, default_value_t = 3600.0, value_name = "SECONDS")]
    pub window: f64,
    /// Seconds without a reading after which a guest counts as stopped (or three of its intervals, if longer).
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub stale_after: f64,
    /// How long a stopped guest stays listed, in seconds (its identity and last reading are looked for this far back; a longer lookback costs Prometheus more per refresh).
    #[arg(long, default_value_t = 86_400.0, value_name = "SECONDS")]
    pub lookback: f64,
    /// Print the table once instead of the screen; the exit status says whether a guest is in trouble.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: text lines or one JSON document.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Where the guests' rule files are gathered on this machine, as DIR/INSTANCE/PATH, for the drift diff (read inside DIR as in a chroot; without it, no diff).
    #[arg(long, value_name = "DIR")]
    pub rules_root: Option<PathBuf>,
    #[command(flatten)]
    pub wide: WideArg,
}

/// The arguments of `plugtop lsp`.
#[derive(clap::Args)]
pub struct LspArgs {
    /// The machine to check names against and read live values from (its proc/ and sys/).
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
}

/// The arguments of `plugtop eval`.
#[derive(clap::Args)]
pub struct EvalArgs {
    /// The rule file.
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
    #[command(flatten)]
    pub from: From,
    /// Seconds between live readings, 0.001 to 86400 (default: the rule file's UPDATE).
    #[arg(long)]
    pub interval: Option<f64>,
    /// Stop after this many readings.
    #[arg(long)]
    pub count: Option<usize>,
    /// Print the conformance JSON lines instead of a table.
    #[arg(long, conflicts_with = "trace")]
    pub jsonl: bool,
    /// Show the truth trace of every rule evaluated, down to each sub-expression.
    #[arg(long)]
    pub trace: bool,
    /// Also print this variable's value each interval (repeat for more).
    #[arg(long = "var", value_name = "NAME")]
    pub vars: Vec<String>,
    #[command(flatten)]
    pub wide: WideArg,
}

/// What `plugtop run --help` says of its exit status.
const RUN_EXIT_STATUS: &str = "Exit status, as cpuplugd's: 0 stopped by SIGTERM or SIGINT (the guest put back); \
1 refused to start (nothing changed: bad options, a rule file with errors, another controller, ...) \
or a fatal error while running (the guest put back). plugtop's own: 78 refused a start cpuplugd \
would make (a start state it could not put back after a crash, a dead run's journal, not s390); \
101 a panic, the guest put back; 128+N ended by signal N. See plugtop-run(1).";

/// The arguments of `plugtop run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The rule file (cpuplugd's -c).
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
    /// Stay in the foreground and log to the terminal (cpuplugd's -f).
    #[arg(short = 'f', long)]
    pub foreground: bool,
    /// Log the values behind every interval's decision and every change of
    /// the CMM pool (cpuplugd's -V).
    #[arg(short = 'V', long)]
    pub verbose: bool,
    /// Print the version (cpuplugd's -v).
    #[arg(short = 'v', long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,
    /// The guest's root directory.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// auto acts like cpuplugd; observe only logs what it would do.
    #[arg(long, value_enum, default_value_t = RunMode::Auto)]
    pub mode: RunMode,
    /// The restore journal (default ROOT/run/plugtop/state).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Start although a dead plugtop left a journal (its start state is kept).
    #[arg(long)]
    pub force: bool,
    /// Act on this machine's own `/` although it is not s390 (by default
    /// `--mode auto` refuses there, as it would take a laptop's CPUs offline).
    #[arg(long)]
    pub allow_non_zvm: bool,
    /// Replay a recording instead of reading the guest (observe mode only).
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Test-only: milliseconds between intervals instead of UPDATE.
    #[arg(long, hide = true)]
    pub interval_ms: Option<u64>,
    #[command(flatten)]
    pub flap: FlapArgs,
    /// Serve metrics for Prometheus at http://ADDR:PORT/metrics (e.g. 127.0.0.1:9866; see docs/metrics.md).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,
    /// Write the metrics to FILE every interval, atomically, for node_exporter's textfile collector (name it *.prom).
    #[arg(long, value_name = "FILE")]
    pub metrics_textfile: Option<PathBuf>,
    #[command(flatten)]
    pub wide: WideArg,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub enum RunMode {
    Auto,
    Observe,
}

impl RunArgs {
    /// What the run takes (cli/run.rs), in this process or in
    /// `plugtop-run`, which has no parser.
    pub fn request(self) -> run::Request {
        run::Request {
            config: self.config,
            foreground: self.foreground,
            verbose: self.verbose,
            root: self.root,
            mode: match self.mode {
                RunMode::Auto => plugtop::control::controller::Mode::Auto,
                RunMode::Observe => plugtop::control::controller::Mode::Observe,
            },
            state: self.state,
            force: self.force,
            allow_non_zvm: self.allow_non_zvm,
            replay: self.replay,
            interval_ms: self.interval_ms,
            flap: self.flap.config(),
            metrics_listen: self.metrics_listen,
            metrics_textfile: self.metrics_textfile,
            wide: self.wide.wide,
        }
    }
}

/// The arguments of `plugtop restore`.
#[derive(clap::Args)]
pub struct RestoreArgs {
    /// The journal (default ROOT/run/plugtop/state).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// The guest's root directory.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
}

/// The arguments of `plugtop whatif`.
#[derive(clap::Args)]
pub struct WhatifArgs {
    /// The rule file to try.
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
    /// Compare with this rule file (default: what the recorded guest did).
    #[arg(long)]
    pub against: Option<PathBuf>,
    #[command(flatten)]
    pub from: From,
    #[command(flatten)]
    pub flap: FlapArgs,
    #[command(flatten)]
    pub wide: WideArg,
}

/// The arguments of `plugtop sim`.
#[derive(clap::Args)]
pub struct SimArgs {
    /// The scenario file (TOML; see examples/scenarios/README.md).
    pub scenario: PathBuf,
    /// The rule file that controls the guest (default: the built-in recommended rules, as `plugtop --sim`).
    #[arg(short = 'c', long = "config")]
    pub config: Option<PathBuf>,
    /// How long to run: 1h, 15m, 90s, 12:00 or seconds, more than 0 and at most 366 days (default: the scenario's duration; with --serve, until stopped, idle after the scenario).
    #[arg(long)]
    pub duration: Option<String>,
    /// Simulated seconds per real second, 0.001 to 1000000 (default 1: real time; with --report or --compare, as fast as --fast).
    #[arg(long, conflicts_with = "fast")]
    pub speed: Option<f64>,
    /// As fast as the machine can.
    #[arg(long)]
    pub fast: bool,
    /// Print only the report at the end (not every action as it happens); runs as fast as --fast unless --speed is given.
    #[arg(long)]
    pub report: bool,
    /// Format of the report.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub report_format: CheckFormat,
    /// /proc/vmstat carries the old zone-suffixed names (for the seed paper's files).
    #[arg(long)]
    pub old_kernel: bool,
    /// Run this rule file too, on the same scenario and seed, and report side by side (as fast as --fast unless --speed is given).
    #[arg(long, conflicts_with = "serve")]
    pub compare: Option<PathBuf>,
    /// Record every reading in the recording format.
    #[arg(long, conflicts_with = "serve")]
    pub record: Option<PathBuf>,
    /// Seconds between intervals, 0.001 to 86400 (default: the rule file's UPDATE).
    #[arg(long)]
    pub interval: Option<f64>,
    /// Publish the guest as a root directory here instead (for `plugtop run --root DIR` or other tools): a new or empty directory, or one an earlier --serve filled; never /. After the scenario's end the guest goes on idle (idle ticks on its online CPUs, memory as at the end, at real time under --fast) until a signal stops it; with --duration it stops at that time instead. It says which at the start.
    #[arg(long, conflicts_with = "config")]
    pub serve: Option<PathBuf>,
    #[command(flatten)]
    pub flap: FlapArgs,
    #[command(flatten)]
    pub wide: WideArg,
}

/// What `plugtop tune` recommends, shown under `--help`.
const TUNE_JUDGE: &str = "\
What the judge accepts (the same on the screen's T):
  Candidates are your file with its numbers moved, and every shipped form
  (and --forms DIR) put into your file with its numbers moved; your file as
  written is always a candidate, so nothing worse than doing nothing is
  recommended. A candidate is recommended only if, on the workload:
    - it does not flap, its plug and unplug thresholds lie at least a CPU
      apart, it flaps at none of the steady loads tried, cpuplugd would
      not stop on it;
    - it holds what the objective holds fixed to the reference (--against,
      else your file):
        cpu:    average CPUs at most 5% more (or any, where it leaves at
                least 20% less demand unmet), no more stalls, guest size
                within 1%;
        memory: no more CPUs or stalls, unmet demand within 1%, throughput
                within 0.2 points;
        steady: no more CPUs at all, no more stalls, guest size within 1%,
                unmet demand within 5%;
    - and it is better: 1% less of what the objective improves (unmet
      demand; guest size), or as much with fewer stalls, fewer changes, no
      flapping, fewer CPUs or (cpu) a smaller guest; for steady, fewer
      changes or no flapping where the reference flaps.
  Then, by default, on every built-in scenario as written and at 60% and
  140% of its threads, and at 40 steady loads, it may lose to the
  reference by at most 5% (unmet CPU-s; CPUs unless it leaves 20% less
  unmet; CPUs count nowhere the reference flaps), hold the guest's size
  within 5% and the stalls within 5% (and 2), and flap nowhere the
  reference does not; a memory tune also gives at most half a point of
  throughput and 5% (and 5) more pool changes, and is judged at three
  steady loads under memory pressure too. At most 64 candidates (--judge;
  on a guest of more than 16 CPUs, 16/CPUs of it) are judged, one of each
  outcome, the best on the workload first; when the reference flaps, a CPU
  tune judges first those that stop it at no more CPUs. The held-out rows
  of the report (each scenario at 75% and 125%) are judged by nobody.
  Every recommendation states its cost against your file: average and
  peak CPUs, memory and swap.";

/// The arguments of `plugtop tune`.
#[derive(clap::Args)]
pub struct TuneArgs {
    /// The workload: a scenario file (see examples/scenarios).
    #[arg(required_unless_present = "replay", conflicts_with = "replay")]
    pub workload: Option<PathBuf>,
    /// The workload: a recording of your own guest (`plugtop record`), played
    /// closed loop on the simulated guest (see docs/tune.md).
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// The rule file to tune.
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
    /// The rule file to beat (default: the one being tuned): the
    /// recommendation holds to it what the objective holds fixed (below).
    #[arg(long)]
    pub against: Option<PathBuf>,
    /// Candidates to evaluate at most, every form's share included (1 to
    /// 100000; default 2000, fewer for a workload longer than an hour: 200
    /// for a day); a budget too small for every form reaches fewer forms.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub budget: Option<u64>,
    /// Candidates judged on the portfolio, best on the workload first, one
    /// of each outcome, before the tune gives up on recommending one
    /// (1 to 100000; default 64, fewer for a guest of more than 16 CPUs).
    /// Raise it to see whether any candidate at all holds up.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000), conflicts_with = "only_workload")]
    pub judge: Option<u64>,
    /// Seed of the search (the scenario keeps its own).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Narrow, widen or pin a knob: NAME=LO..HI or NAME=VALUE; NAME is a
    /// limit (CPU_MAX), a rule or variable (all its numbers), or LINE:COL.
    #[arg(long, value_name = "NAME=LO..HI")]
    pub knob: Vec<String>,
    /// Save the recommended file here (a new file; it keeps your comments and layout).
    #[arg(long, value_name = "OUT.conf")]
    pub write: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// /proc/vmstat carries the old zone-suffixed names (for the seed paper's files).
    #[arg(long)]
    pub old_kernel: bool,
    /// How long each run lasts: 1h, 15m, 90s, 12:00 (default: the scenario's duration).
    #[arg(long)]
    pub duration: Option<String>,
    /// Threads evaluating candidates (default: the cores; 1 to 256).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<u64>,
    /// With --replay: tune on the whole recording instead of its first half
    /// (nothing is held out to check the recommendation on).
    #[arg(long, requires = "replay")]
    pub whole: bool,
    /// What to improve: cpu (less unmet demand), memory (a smaller guest)
    /// or steady (stop flapping at no more CPUs); what each holds fixed is
    /// said below.
    #[arg(long, value_enum, default_value_t = TuneObjective::Cpu)]
    pub objective: TuneObjective,
    /// Also search the rule forms in this directory (*.conf, see
    /// examples/forms/README.md) beside the shipped ones.
    #[arg(long, value_name = "DIR", conflicts_with = "only_thresholds")]
    pub forms: Option<PathBuf>,
    /// Move only the numbers of the file, never its form (no rule form is
    /// searched).
    #[arg(long)]
    pub only_thresholds: bool,
    /// Judge candidates on the workload alone. By default the
    /// recommendation must also hold up on the built-in scenarios (lose to
    /// the reference on none by more than 5%) and at 40 steady loads (flap
    /// at none), and candidates that flap at a steady load are kept out of
    /// the search; this skips both (faster, and the file may then lose or
    /// flap elsewhere).
    #[arg(long)]
    pub only_workload: bool,
    #[command(flatten)]
    pub wide: WideArg,
}

/// The arguments of `plugtop train`.
#[derive(clap::Args)]
pub struct TrainArgs {
    #[command(subcommand)]
    pub command: Option<TrainCommand>,
    /// The course file (TOML; see docs/training.md).
    #[arg(required = true)]
    pub course: Option<PathBuf>,
    /// Start at this exercise (its id; default: the first not yet solved).
    #[arg(long)]
    pub exercise: Option<String>,
    /// No colours (NO_COLOR is respected too).
    #[arg(long)]
    pub mono: bool,
}

/// What `plugtop train` does besides the screen.
#[derive(clap::Subcommand)]
pub enum TrainCommand {
    /// Grade every trainee's submissions (DIR/<trainee>/<exercise>.conf or .answer) on the held-out seeds.
    Grade(TrainGradeArgs),
    /// Check a course: every start file fails, every reference passes, every diagnosis's answer is what flipped.
    Check(TrainCheckArgs),
}

/// The arguments of `plugtop train grade`.
#[derive(clap::Args)]
pub struct TrainGradeArgs {
    /// The course file.
    pub course: PathBuf,
    /// The class directory: one subdirectory per trainee.
    pub dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GradeFormat::Text)]
    pub format: GradeFormat,
    /// Threads grading at once (default: the cores; 1 to 64).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub threads: Option<u64>,
}

/// The arguments of `plugtop train check`.
#[derive(clap::Args)]
pub struct TrainCheckArgs {
    /// The course file.
    pub course: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    #[command(flatten)]
    pub wide: WideArg,
}

/// `plugtop train grade --format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GradeFormat {
    Text,
    Csv,
    Json,
}

/// `plugtop tune --objective`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TuneObjective {
    Cpu,
    Memory,
    Steady,
}

/// The arguments of `plugtop record`.
#[derive(clap::Args)]
pub struct RecordArgs {
    /// The recording to create (an existing file is never overwritten).
    #[arg(
        short = 'o',
        long = "output",
        required_unless_present = "export_snapshots"
    )]
    pub output: Option<PathBuf>,
    /// Write conformance-format snapshot directories here instead (a new or empty directory, or one an earlier export filled).
    #[arg(long, conflicts_with = "output")]
    pub export_snapshots: Option<PathBuf>,
    #[command(flatten)]
    pub from: From,
    /// Seconds between live readings, 0.001 to 86400.
    #[arg(long, default_value_t = 1.0)]
    pub interval: f64,
    /// Stop after this many samples (default: until interrupted).
    #[arg(long)]
    pub count: Option<usize>,
}

#[derive(clap::Args)]
#[group(required = false, multiple = false)]
pub struct From {
    /// A directory of numbered snapshot directories (the conformance format).
    #[arg(long)]
    pub snapshots: Option<PathBuf>,
    /// A recording made with `plugtop record`.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// A live root laid out like / (read every interval).
    #[arg(long)]
    pub root: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Text,
    Json,
}
