//! `plugtop lsp`: a language server for cpuplugd rule files, so an editor
//! shows what `plugtop check` would say while the file is being written.
//!
//! It speaks the Language Server Protocol over any byte stream (stdio in
//! the binary, pipes in tests). Every answer comes from the same library
//! calls the other commands use: `rules::load` for diagnostics (as `check`),
//! the kernel's bounded readers for names and live values (as the screen).
//! One thread, one message at a time: rule files are a few KB, so a change
//! is checked at once instead of after a debounce.
//!
//! - `transport`: the Content-Length framing, with a size cap.
//! - `server`: the protocol's life cycle and dispatch.
//! - `documents`: the open files.
//! - `position`: byte offsets to and from the protocol's UTF-16 positions.
//! - `names`: where user variables are defined and used.
//! - `diagnostics`, `hover`, `completion`, `navigate`, `actions`: one
//!   feature each.

mod actions;
mod completion;
mod diagnostics;
mod documents;
mod hover;
mod names;
mod navigate;
mod position;
mod server;
mod transport;

pub use server::{SessionEnd, serve};
pub use transport::MAX_MESSAGE;
