//! Small source trees written into temporary directories, shaped like the
//! real one (`kernel`, `rules`, `engine`), with uses planted where a test
//! wants them: the check must find what is planted and nothing else.

/// A source tree written into a temporary directory, for the check to read.
pub struct Tree(tempfile::TempDir);

impl Tree {
    pub fn new(files: &[(&str, &str)]) -> Tree {
        let dir = tempfile::tempdir().expect("temporary directory");
        for (path, text) in files {
            let path = dir.path().join("src").join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        Tree(dir)
    }

    /// The graph, or why the tree could not be read.
    pub fn read(&self) -> std::io::Result<super::Graph> {
        super::of_tree(&self.0.path().join("src"))
    }

    pub fn graph(&self) -> super::Graph {
        let graph = super::of_tree(&self.0.path().join("src")).expect("readable");
        println!("{}", graph.describe());
        graph
    }
}

pub const LIB: &str = "pub mod kernel;\npub mod rules;\npub mod engine;\n";
pub const KERNEL: &str = "pub mod regular;\npub mod fields;\n";
pub const REGULAR: &str = "pub fn open() {}\npub struct Reader;\n";
pub const RULES: &str =
    "pub mod ruleset;\npub mod number;\npub use ruleset::{Settings, SystemFacts};\n";
pub const RULESET: &str = "pub struct SystemFacts;\npub struct Settings;\n";
pub const NUMBER: &str = "pub fn value_at() {}\n";
pub const ENGINE: &str = "use crate::{kernel::regular, rules::SystemFacts};\n";

/// The synthetic tree with `fields` and `ruleset` replaced.
pub fn planted(fields: &str, ruleset: &str) -> Tree {
    planted_with(fields, ruleset, &[])
}

/// The same, with `extra` files added or put in place of those of the
/// same path.
pub fn planted_with(fields: &str, ruleset: &str, extra: &[(&str, &str)]) -> Tree {
    let base = [
        ("lib.rs", LIB),
        ("kernel/mod.rs", KERNEL),
        ("kernel/regular.rs", REGULAR),
        ("kernel/fields.rs", fields),
        ("rules/mod.rs", RULES),
        ("rules/ruleset.rs", ruleset),
        ("rules/number.rs", NUMBER),
        ("engine.rs", ENGINE),
    ];
    let mut files: Vec<(&str, &str)> = base
        .into_iter()
        .filter(|(path, _)| !extra.iter().any(|(p, _)| p == path))
        .collect();
    files.extend_from_slice(extra);
    Tree::new(&files)
}
