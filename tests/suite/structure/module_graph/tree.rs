//! A crate's modules, found the way rustc finds them: from the crate root
//! through each `mod` declaration not under `#[cfg(test)]`,
//! so a file no build includes is no module, and a binary's own modules
//! (`main.rs` and what it declares) form a crate of their own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::facts::{self, Facts};

/// One module: where its code is, and what that code says.
#[derive(Debug)]
pub struct Module {
    pub file: PathBuf,
    pub facts: Facts,
}

/// A crate: its name for reports, and its modules by path (`[]` is the root).
#[derive(Debug)]
pub struct Crate {
    pub name: String,
    pub modules: BTreeMap<Vec<String>, Module>,
}

impl Crate {
    /// Whether `path` is a module of this crate.
    pub fn has(&self, path: &[String]) -> bool {
        self.modules.contains_key(path)
    }
}

/// The crate rooted at `root` (a `lib.rs` or `main.rs`), or an error
/// naming a file that could not be read or a module that could not be
/// found.
pub fn load(name: &str, root: &Path) -> std::io::Result<Crate> {
    let mut krate = Crate {
        name: name.to_string(),
        modules: BTreeMap::new(),
    };
    let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut todo = vec![(root.to_path_buf(), Vec::new(), dir)];
    while let Some((file, path, dir)) = todo.pop() {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", file.display())))?;
        let read = facts::of_file(&text).map_err(|e| {
            let at = e.span().start();
            let place = format!("{}:{}:{}", file.display(), at.line, at.column + 1);
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{place}: {e}"))
        })?;
        for (below, facts) in read {
            let module_dir = below.iter().fold(dir.clone(), |d, s| d.join(s));
            for child in &facts.file_children {
                // A module the check cannot find would hide its uses: one
                // under `#[path = ".."]` (not followed) fails the check
                // rather than passing it.
                let child_file = child_file(&module_dir, child).ok_or_else(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!(
                            "{}: `mod {child};` has neither {child}.rs nor {child}/mod.rs in {} \
                             (a #[path] module is not followed by this check)",
                            file.display(),
                            module_dir.display()
                        ),
                    )
                })?;
                let child_path = [path.clone(), below.clone(), vec![child.clone()]].concat();
                todo.push((child_file, child_path, module_dir.join(child)));
            }
            let module = Module {
                file: file.clone(),
                facts,
            };
            krate.modules.insert([path.clone(), below].concat(), module);
        }
    }
    Ok(krate)
}

/// `dir/name.rs`, else `dir/name/mod.rs`, else None (a declaration of a
/// file that is not there does not build, unless `#[path]` says where).
fn child_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let flat = dir.join(format!("{name}.rs"));
    let nested = dir.join(name).join("mod.rs");
    [flat, nested].into_iter().find(|p| p.is_file())
}
