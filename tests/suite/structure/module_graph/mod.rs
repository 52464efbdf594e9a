//! The module graph of a source tree and the cycles in it, read from the
//! source as `syn` parses it: every `use` form and every fully qualified
//! path (in macro calls too), followed
//! through re-exports, test-only items left out, and each edge counted
//! between the siblings where its ends part (so `kernel::a -> rules::b`
//! counts as `kernel -> rules`). `tests/suite/structure.rs` keeps the real tree
//! free of cycles; `scripts/module-graph.sh` prints the graph for a person.

mod cycles;
mod facts;
mod hostile;
mod resolve;
pub mod synthetic;
mod tree;

use std::fmt::Write as _;
use std::path::Path;

pub use cycles::Cycle;

/// The modules of the crates under one `src/`, the uses among them and
/// the cycles those form.
pub struct Graph {
    /// Uses between top-level modules, each crate's.
    pub top_level: Vec<TopLevelUse>,
    /// Uses between sibling modules below the top level (`main: cli::run ->
    /// cli::sources` is `parent` "cli", `from` "run", `to` "sources").
    pub nested: Vec<NestedUse>,
    pub cycles: Vec<Cycle>,
}

/// One module using a sibling below the top level: the binary's modules all
/// live under `cli`, so this is where a check sees that it read them.
pub struct NestedUse {
    pub krate: String,
    pub parent: String,
    pub from: String,
    pub to: String,
}

/// One top-level module using another (`lib: kernel -> number`), in so many
/// places.
pub struct TopLevelUse {
    pub krate: String,
    pub from: String,
    pub to: String,
    pub places: usize,
}

/// Reads the library (`lib.rs`) and the binary (`main.rs`) under `src`,
/// whichever exist, each as its own crate.
pub fn of_tree(src: &Path) -> std::io::Result<Graph> {
    let mut graph = Graph {
        top_level: Vec::new(),
        nested: Vec::new(),
        cycles: Vec::new(),
    };
    let shown_from = src.parent().unwrap_or(src);
    for (name, root) in [("lib", "lib.rs"), ("main", "main.rs")] {
        let root = src.join(root);
        if !root.is_file() {
            continue;
        }
        let krate = tree::load(name, &root)?;
        let lifted = cycles::lift(&cycles::edges(&krate, shown_from));
        if let Some(top) = lifted.get(&Vec::new()) {
            for ((a, b), edges) in top {
                graph.top_level.push(TopLevelUse {
                    krate: name.to_string(),
                    from: a.clone(),
                    to: b.clone(),
                    places: edges.len(),
                });
            }
        }
        for (parent, pairs) in lifted.iter().filter(|(p, _)| !p.is_empty()) {
            for (a, b) in pairs.keys() {
                graph.nested.push(NestedUse {
                    krate: name.to_string(),
                    parent: parent.join("::"),
                    from: a.clone(),
                    to: b.clone(),
                });
            }
        }
        graph.cycles.extend(cycles::cycles(&krate, &lifted));
    }
    Ok(graph)
}

/// `1 place`, `3 places`.
fn places(n: usize) -> String {
    if n == 1 {
        "1 place".to_string()
    } else {
        format!("{n} places")
    }
}

impl Graph {
    /// The top-level uses, one a line (`lib: kernel -> rules (3 places)`),
    /// then every cycle with the lines that form it.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for u in &self.top_level {
            let _ = writeln!(
                out,
                "{}: {} -> {} ({})",
                u.krate,
                u.from,
                u.to,
                places(u.places)
            );
        }
        for cycle in &self.cycles {
            let _ = write!(out, "{cycle}");
        }
        out
    }

    /// Whether the two modules named by their paths from the crate root are
    /// in one cycle (at the level where they are siblings).
    pub fn in_one_cycle(&self, a: &str, b: &str) -> bool {
        self.cycles.iter().any(|c| {
            let parent = c.parent.join("::");
            let full = |m: &String| {
                if parent.is_empty() {
                    m.clone()
                } else {
                    format!("{parent}::{m}")
                }
            };
            let members: Vec<String> = c.members.iter().map(full).collect();
            members.iter().any(|m| m == a) && members.iter().any(|m| m == b)
        })
    }
}
