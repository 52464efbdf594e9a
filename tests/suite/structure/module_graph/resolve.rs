//! Which module a path leads to, as the compiler would see it: `crate`,
//! `self` and `super` from where it is written, a child module or an
//! imported name as the first segment, and an item's name followed
//! through `pub use` re-exports (and globs) to the module that defines it.
//! So `crate::rules::SystemFacts` leads to wherever `SystemFacts` is
//! defined, not to `rules`, which only re-exports it.

use super::tree::Crate;

/// How many re-exports a path is followed through at most (a loop of
/// re-exports does not build; this only bounds the walk).
const MOST_HOPS: usize = 16;

/// The module of this crate that `path`, written in module `from`, leads
/// to; None when it leads outside the crate (std, another crate, a
/// generic parameter).
pub fn module_of(krate: &Crate, from: &[String], path: &[String]) -> Option<Vec<String>> {
    resolve(krate, from, path, MOST_HOPS)
}

fn resolve(krate: &Crate, from: &[String], path: &[String], hops: usize) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut at = match first.as_str() {
        "crate" => Vec::new(),
        "self" => from.to_vec(),
        "super" => from[..from.len().checked_sub(1)?].to_vec(),
        name => return first_segment(krate, from, name, rest, hops),
    };
    // `super::super::x`, `self::super::x`: each further `super` one up.
    let mut rest = rest;
    while let Some(("super", after)) = rest.split_first().map(|(s, a)| (s.as_str(), a)) {
        at.pop()?;
        rest = after;
    }
    walk(krate, at, rest, hops)
}

/// A path that does not start with `crate`, `self` or `super`: a child
/// module, a name imported by `use`, an item of this module, or else
/// something from outside the crate.
fn first_segment(
    krate: &Crate,
    from: &[String],
    name: &str,
    rest: &[String],
    hops: usize,
) -> Option<Vec<String>> {
    let child = [from, &[name.to_string()]].concat();
    if krate.has(&child) {
        return walk(krate, child, rest, hops);
    }
    let facts = &krate.modules.get(from)?.facts;
    if let Some(target) = facts.binds.get(name) {
        let target = target.clone();
        return resolve(
            krate,
            from,
            &[target, rest.to_vec()].concat(),
            hops.checked_sub(1)?,
        );
    }
    facts.defines.contains(name).then(|| from.to_vec())
}

/// From module `at`, down through child modules; the first segment that
/// is no module is an item, followed to where it is defined.
fn walk(krate: &Crate, mut at: Vec<String>, rest: &[String], hops: usize) -> Option<Vec<String>> {
    for (i, segment) in rest.iter().enumerate() {
        at.push(segment.clone());
        if krate.has(&at) {
            continue;
        }
        at.pop();
        return Some(item_home(krate, at, segment, &rest[i..], hops));
    }
    Some(at)
}

/// The module that defines item `name` seen in module `at` (`path` is
/// `name` and what follows it): `at` itself, or where a re-export or a
/// glob import of `at` leads. A re-export of something outside the crate
/// counts as `at`'s own.
fn item_home(
    krate: &Crate,
    at: Vec<String>,
    name: &str,
    path: &[String],
    hops: usize,
) -> Vec<String> {
    let Some(module) = krate.modules.get(&at) else {
        return at;
    };
    let facts = &module.facts;
    if facts.defines.contains(name) {
        return at;
    }
    let Some(hops) = hops.checked_sub(1) else {
        return at;
    };
    if let Some(target) = facts.binds.get(name) {
        let full = [target.clone(), path[1..].to_vec()].concat();
        return resolve(krate, &at, &full, hops).unwrap_or(at);
    }
    for glob in &facts.globs {
        let Some(source) = resolve(krate, &at, glob, hops) else {
            continue;
        };
        let Some(inner) = krate.modules.get(&source) else {
            continue;
        };
        let found = &inner.facts;
        if found.defines.contains(name) || found.binds.contains_key(name) {
            return item_home(krate, source, name, path, hops);
        }
    }
    at
}
