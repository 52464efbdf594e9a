//! `plugtop lsp`: a language server for cpuplugd rule files, so an editor
//! shows what `plugtop check` would say while the file is being written.
//!
//! It speaks the Language Server Protocol over any byte stream (stdio in
//! the binary, pipes in tests). Every answer comes from the same library
//! calls the other commands use: `rules::load` for diagnostics (as `check`),
//! the kernel's bounded readers for names and live values (as the screen),
//! the engine for each variable's value and each rule's verdict.
//! A reader thread takes the client's frames; the server handles every
//! frame waiting before it checks a changed file, so a burst of keystrokes
//! is checked once, for its last text.
//!
//! - `transport`: the Content-Length framing, with a size cap.
//! - `server`: the protocol's life cycle and dispatch.
//! - `documents`: the open files.
//! - `position`: byte offsets to and from the protocol's UTF-16 positions.
//! - `names`: where user variables are defined and used.
//! - `live`: the readings, taken every UPDATE seconds while a file that
//!   loads is open, and each file's verdicts on them.
//! - `diagnostics`, `hover`, `completion`, `navigate`, `actions`, `hints`:
//!   one feature each.

mod actions;
mod completion;
mod diagnostics;
mod documents;
mod fixes;
mod hints;
mod hover;
mod live;
mod names;
mod navigate;
mod position;
mod server;
mod transport;

pub use server::{SessionEnd, serve};
pub use transport::MAX_MESSAGE;
