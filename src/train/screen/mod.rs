//! The trainee's screen (`plugtop train COURSE`).

use super::course::Course;

/// How the screen starts.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The exercise to start at (default: the first not yet solved).
    pub start_at: Option<String>,
    /// No colours.
    pub mono: bool,
}

/// Why the screen could not run.
#[derive(Debug, thiserror::Error)]
pub enum ScreenError {
    #[error("the terminal: {0}")]
    Terminal(#[from] std::io::Error),
}

/// Runs the screen until the trainee quits.
pub fn run(_course: Course, _options: &Options) -> Result<(), ScreenError> {
    Ok(())
}
