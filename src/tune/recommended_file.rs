//! The recommended file as `plugtop tune --write` creates it: the place
//! checked before the search, and the file created only where nothing
//! stands, only if cpuplugd would load it.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use crate::error_chain::text;
use crate::kernel::fs::{FsError, Placing, Replace, Root};
use crate::rules::{SourceFile, SystemFacts};

/// Where `--write` will put the recommendation, checked before the search:
/// the directory held open, and a name at which nothing stands yet (a
/// file, a link or anything else there is refused, never overwritten) in a
/// directory a file can be created in.
pub fn target(path: &Path) -> anyhow::Result<(Root, OsString)> {
    let shown = path.display();
    let refused = |e: FsError| match e {
        FsError::NotReplaceable { kind, .. } => anyhow::anyhow!(
            "--write {shown}: that is {kind}; --write creates a new file only, nothing tuned"
        ),
        FsError::Exists { .. } => anyhow::anyhow!(
            "--write {shown}: that file exists already and is never overwritten, nothing tuned"
        ),
        e => anyhow::anyhow!("--write {shown}: {}; nothing tuned", text(&e)),
    };
    let (dir, name) = Root::of_file(path).map_err(refused)?;
    dir.check(Path::new(&name), Replace::Nothing)
        .map_err(refused)?;
    dir.check_writable().map_err(refused)?;
    Ok((dir, name))
}

/// Writes the recommended file as `name` in `dir`, after checking
/// cpuplugd would load it: created whole under a temporary name, never
/// through a link, and moved to `name` only where nothing stands.
pub fn write_new(
    dir: &Root,
    name: &OsStr,
    bytes: &[u8],
    facts: &SystemFacts,
) -> anyhow::Result<()> {
    let shown = Path::new(name).display().to_string();
    let outcome = crate::rules::load(&SourceFile::new(shown, bytes.to_vec()), facts);
    if let Some(r) = outcome.refusal {
        anyhow::bail!(
            "the recommended file would be refused ({}); nothing written",
            r.message
        );
    }
    dir.write_file(Path::new(name), bytes, Placing::new(Replace::Nothing))
        .map_err(|e| {
            anyhow::anyhow!(
                "{} (an existing file is never overwritten); nothing written",
                text(&e)
            )
        })
}
