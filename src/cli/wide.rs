//! `--wide`: the full-width text of every command with a table, as
//! `plugtop run`, `eval`, `whatif`, `check`, `sim`, `fleet` and `train check` take it on
//! the command line.

/// `--wide`, the same for every command with a text table.
#[derive(clap::Args, Clone, Copy)]
pub struct WideArg {
    /// Print every column and value in full, lines as long as they get (by default the text fits 80 columns, in a terminal or a pipe).
    #[arg(long)]
    pub wide: bool,
}

impl WideArg {
    /// The report layout it asks for.
    pub fn layout(self) -> plugtop::report::Layout {
        plugtop::report::Layout::from_flag(self.wide)
    }
}
