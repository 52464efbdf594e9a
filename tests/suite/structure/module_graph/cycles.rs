//! Dependencies between modules, lifted to the level where they matter, and
//! the cycles among them. A use of `rules::ruleset` by `kernel::fields`
//! is, one level up, a use of `rules` by `kernel`: each edge is counted
//! between the two siblings where its ends part (here the top-level
//! `kernel` and `rules`), so a cycle through any depth shows at the level
//! of the modules a reader would have to understand together.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::resolve;
use super::tree::Crate;

/// One use of one module by another, where it is written.
#[derive(Debug, Clone)]
pub struct Edge {
    pub from: Vec<String>,
    pub to: Vec<String>,
    pub file: String,
    pub line: usize,
}

/// Every use of another module in the crate, each with its place.
pub fn edges(krate: &Crate, shown_from: &std::path::Path) -> Vec<Edge> {
    let mut out = Vec::new();
    for (from, module) in &krate.modules {
        let file = module.file.strip_prefix(shown_from).unwrap_or(&module.file);
        for named in &module.facts.named {
            let Some(to) = resolve::module_of(krate, from, &named.path) else {
                continue;
            };
            let again = out
                .last()
                .is_some_and(|e: &Edge| e.from == *from && e.to == to && e.line == named.line);
            if &to != from && !again {
                out.push(Edge {
                    from: from.clone(),
                    to,
                    file: file.display().to_string(),
                    line: named.line,
                });
            }
        }
    }
    out
}

/// Two siblings (children of `parent`) and the edges that make one use the
/// other.
type Lifted = BTreeMap<Vec<String>, BTreeMap<(String, String), Vec<Edge>>>;

/// Each edge as a use between the two siblings where its ends part; an
/// edge between a module and its own ancestor or descendant has none.
pub fn lift(edges: &[Edge]) -> Lifted {
    let mut out: Lifted = BTreeMap::new();
    for e in edges {
        let common = e.from.iter().zip(&e.to).take_while(|(a, b)| a == b).count();
        if common < e.from.len() && common < e.to.len() {
            let pair = (e.from[common].clone(), e.to[common].clone());
            out.entry(e.from[..common].to_vec())
                .or_default()
                .entry(pair)
                .or_default()
                .push(e.clone());
        }
    }
    out
}

/// Siblings that use each other, directly or around a longer loop: each
/// use between two of them that lies on a loop, with its edges.
#[derive(Debug)]
pub struct Cycle {
    pub krate: String,
    pub parent: Vec<String>,
    pub members: BTreeSet<String>,
    pub uses: Vec<((String, String), Vec<Edge>)>,
}

/// The cycles of a crate: one per group of siblings that reach each other.
pub fn cycles(krate: &Crate, lifted: &Lifted) -> Vec<Cycle> {
    let mut found = Vec::new();
    for (parent, uses) in lifted {
        let next = |m: &str| -> Vec<String> {
            uses.keys()
                .filter(|(a, _)| a == m)
                .map(|(_, b)| b.clone())
                .collect()
        };
        let mut placed = BTreeSet::new();
        for (a, _) in uses.keys() {
            if placed.contains(a) {
                continue;
            }
            let from_a = reachable(a, &next);
            let members: BTreeSet<String> = from_a
                .iter()
                .filter(|b| reachable(b, &next).contains(a))
                .cloned()
                .collect();
            if members.len() < 2 {
                continue;
            }
            placed.extend(members.iter().cloned());
            let inside = uses
                .iter()
                .filter(|((x, y), _)| members.contains(x) && members.contains(y))
                .map(|(pair, edges)| (pair.clone(), edges.clone()))
                .collect();
            found.push(Cycle {
                krate: krate.name.clone(),
                parent: parent.clone(),
                members,
                uses: inside,
            });
        }
    }
    found
}

/// The modules `start` reaches (itself only through a loop).
fn reachable(start: &str, next: &dyn Fn(&str) -> Vec<String>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![start.to_string()];
    while let Some(m) = todo.pop() {
        for n in next(&m) {
            if seen.insert(n.clone()) {
                todo.push(n);
            }
        }
    }
    seen
}

/// A module as reports name it, with its crate: `lib: kernel::root`.
fn shown(krate: &str, parent: &[String], child: &str) -> String {
    let mut parts: Vec<&str> = parent.iter().map(String::as_str).collect();
    parts.push(child);
    format!("{krate}: {}", parts.join("::"))
}

/// How many places of one use a cycle's report lists: the direction with
/// few places is the one to cut, and it is listed whole.
const SHOWN_PLACES: usize = 8;

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .members
            .iter()
            .map(|m| shown(&self.krate, &self.parent, m))
            .collect();
        writeln!(f, "cycle among {}:", names.join(", "))?;
        for ((a, b), edges) in &self.uses {
            writeln!(f, "  {a} -> {b} ({}):", super::places(edges.len()))?;
            for e in edges.iter().take(SHOWN_PLACES) {
                writeln!(
                    f,
                    "    {}:{} {} -> {}",
                    e.file,
                    e.line,
                    e.from.join("::"),
                    e.to.join("::")
                )?;
            }
            if edges.len() > SHOWN_PLACES {
                writeln!(f, "    ... and {} more", edges.len() - SHOWN_PLACES)?;
            }
        }
        Ok(())
    }
}
