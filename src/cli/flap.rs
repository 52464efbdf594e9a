//! When a guest counts as flapping, as `plugtop run`, `sim` and `whatif`
//! take it on the command line.

/// When to call a guest flapping (see src/control/flap.rs).
#[derive(clap::Args, Clone, Copy)]
pub struct FlapArgs {
    /// Intervals in the flap detector's sliding window.
    #[arg(long, default_value_t = 30)]
    pub flap_window: usize,
    /// Direction reversals within the window that count as flapping.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(2..))]
    pub flap_reversals: u64,
}

impl FlapArgs {
    /// The detector's settings.
    pub fn config(self) -> plugtop::control::flap::FlapConfig {
        plugtop::control::flap::FlapConfig {
            window: self.flap_window.max(1),
            reversals: self.flap_reversals as usize,
        }
    }
}
