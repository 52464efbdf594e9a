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
    Ok(match serve(input, &mut output, &args.root) {
        Ok(SessionEnd::Clean) => Status::Ok,
        Ok(SessionEnd::Abrupt) => Status::Failed,
        // The client went away without `shutdown` (it closed our stdout):
        // status 1 as for any abrupt end, not the 0 that `main` gives a
        // broken pipe (`plugtop eval | head`).
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Status::Failed,
        Err(e) => return Err(e.into()),
    })
}
