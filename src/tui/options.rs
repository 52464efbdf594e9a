//! What the screen was started with, shared by its threads: the command
//! line's options and how a rule file is loaded for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::control::controller::Mode;
use crate::rules::{SourceFile, SystemFacts};

/// What `plugtop` (without a subcommand) was asked to show.
#[derive(Debug, Clone)]
pub struct Options {
    pub rules: Option<PathBuf>,
    pub root: PathBuf,
    pub replay: Option<PathBuf>,
    pub mode: Mode,
    /// One line per interval instead of the screen.
    pub batch: bool,
    pub mono: bool,
    /// Seconds between readings (default UPDATE).
    pub interval: Option<f64>,
    /// Stop after this many readings (line mode).
    pub count: Option<usize>,
    /// A scenario to simulate instead of reading a machine.
    pub sim: Option<PathBuf>,
    /// With `sim`: zone-suffixed /proc/vmstat names.
    pub old_kernel: bool,
    /// With `sim`: candidates the screen's tune evaluates (default: as
    /// `plugtop tune`).
    pub tune_budget: Option<usize>,
    /// Allow step and autonomous mode on this machine's own `/` although it
    /// is not an s390 z/VM guest.
    pub allow_non_zvm: bool,
}

impl Options {
    /// The screen observing `root` with the built-in rules, no colours,
    /// every other option as the command line leaves it.
    pub fn observing(root: &Path) -> Options {
        Options {
            rules: None,
            root: root.to_path_buf(),
            replay: None,
            mode: Mode::Observe,
            batch: false,
            mono: true,
            interval: None,
            count: None,
            sim: None,
            old_kernel: false,
            tune_budget: None,
            allow_non_zvm: false,
        }
    }

    /// The screen over `scenario` on the simulator under `rules` (the
    /// built-in ones when `None`), autonomous, in colour, without a
    /// terminal: what the screenshots, benchmarks and tests draw.
    pub fn simulating(scenario: impl Into<PathBuf>, rules: Option<PathBuf>) -> Options {
        Options {
            rules,
            mode: Mode::Auto,
            batch: true,
            mono: false,
            sim: Some(scenario.into()),
            ..Options::observing(Path::new("/"))
        }
    }
}

/// A rule file, loaded for the screen (shared between threads).
pub fn read_rules(
    path: &Path,
    facts: &SystemFacts,
) -> Result<(Arc<crate::rules::RuleSet>, SourceFile), crate::rules::LoadError> {
    crate::rules::load_path(path, facts).map(|(rules, file)| (Arc::new(rules), file))
}
