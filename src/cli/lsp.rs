//! `plugtop lsp`: the language server on stdin and stdout.

use super::sources::require_root;
use crate::cli::LspArgs;
use plugtop::commands::Status;
use plugtop::lsp::{SessionEnd, serve};

/// `plugtop lsp`: serves until `exit`; status 0 after `shutdown`, 1
/// otherwise, as the protocol asks.
pub fn run(args: LspArgs) -> anyhow::Result<Status> {
    require_root(&args.root)?;
    let input = Box::new(std::io::BufReader::new(std::io::stdin()));
    let mut output = std::io::stdout();
    Ok(match serve(input, &mut output, &args.root)? {
        SessionEnd::Clean => Status::Ok,
        SessionEnd::Abrupt => Status::Failed,
    })
}
