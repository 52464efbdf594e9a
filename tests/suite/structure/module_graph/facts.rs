//! What one file says about its module and the inline modules in it: the
//! modules it declares, the names it defines and imports, and every path
//! its code names (in `use` trees, grouped or not, and fully qualified in
//! code such as `crate::kernel::regular::open(..)` without any `use`).

use std::collections::{BTreeMap, BTreeSet};

use super::lex::Token;

/// A path as written, with the line it is on.
#[derive(Debug, Clone)]
pub struct Named {
    pub path: Vec<String>,
    pub line: usize,
}

/// The facts of one module (a file's, or an inline `mod x { }` in it).
#[derive(Debug, Default, Clone)]
pub struct Facts {
    /// `mod x;` declarations: modules in files of their own.
    pub file_children: Vec<String>,
    /// `mod x { }`: modules in this same file.
    pub inline_children: Vec<String>,
    /// Items defined at module level (types, functions, constants...).
    pub defines: BTreeSet<String>,
    /// Names a module-level `use` brings in, and the path each stands for.
    pub binds: BTreeMap<String, Vec<String>>,
    /// Paths of module-level `use x::*`.
    pub globs: Vec<Vec<String>>,
    /// Every path named: each `use` leaf, and each `a::b` path in code.
    pub named: Vec<Named>,
}

/// Facts for the file's own module (key `[]`) and each inline module in
/// it (key: the path below the file's module).
pub fn of_file(tokens: &[Token]) -> BTreeMap<Vec<String>, Facts> {
    let mut walk = Walk {
        tokens,
        at: 0,
        depth: 0,
        scopes: vec![(Vec::new(), 0)],
        facts: BTreeMap::from([(Vec::new(), Facts::default())]),
    };
    while walk.at < tokens.len() {
        walk.step();
    }
    walk.facts
}

struct Walk<'a> {
    tokens: &'a [Token],
    at: usize,
    depth: usize,
    /// Inline modules open here, with the brace depth inside each.
    scopes: Vec<(Vec<String>, usize)>,
    facts: BTreeMap<Vec<String>, Facts>,
}

const DEFINING: [&str; 8] = [
    "struct", "enum", "fn", "trait", "type", "const", "static", "union",
];

fn is_ident(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

impl Walk<'_> {
    fn text(&self, at: usize) -> &str {
        self.tokens.get(at).map_or("", |t| t.text.as_str())
    }

    fn scope(&mut self) -> &mut Facts {
        let key = self.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
        self.facts.entry(key).or_default()
    }

    fn at_module_level(&self) -> bool {
        self.scopes.last().is_some_and(|s| s.1 == self.depth)
    }

    fn step(&mut self) {
        let here = self.text(self.at).to_string();
        match here.as_str() {
            "{" => self.depth += 1,
            "}" => {
                if self.at_module_level() && self.scopes.len() > 1 {
                    self.scopes.pop();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            "mod" if is_ident(self.text(self.at + 1)) => return self.module(),
            "use" => return self.use_statement(),
            "macro_rules" if self.text(self.at + 1) == "!" => {
                let name = self.text(self.at + 2).to_string();
                self.define(name);
            }
            word if DEFINING.contains(&word) && is_ident(self.text(self.at + 1)) => {
                let name = self.text(self.at + 1).to_string();
                self.define(name);
            }
            word if is_ident(word) && self.text(self.at.wrapping_sub(1)) != "::" => {
                return self.path_in_code();
            }
            _ => {}
        }
        self.at += 1;
    }

    fn define(&mut self, name: String) {
        if self.at_module_level() {
            self.scope().defines.insert(name);
        }
    }

    /// `mod x;` or `mod x {`, which opens a scope.
    fn module(&mut self) {
        let name = self.text(self.at + 1).to_string();
        if self.text(self.at + 2) == "{" {
            self.scope().inline_children.push(name.clone());
            let mut path = self.scopes.last().map(|s| s.0.clone()).unwrap_or_default();
            path.push(name);
            self.facts.entry(path.clone()).or_default();
            self.depth += 1;
            self.scopes.push((path, self.depth));
            self.at += 3;
        } else {
            self.scope().file_children.push(name);
            self.at += 2;
        }
    }

    /// `a::b::c` in code, recorded when it has at least two segments.
    fn path_in_code(&mut self) {
        let line = self.tokens[self.at].line;
        let mut path = vec![self.text(self.at).to_string()];
        self.at += 1;
        while self.text(self.at) == "::" && is_ident(self.text(self.at + 1)) {
            path.push(self.text(self.at + 1).to_string());
            self.at += 2;
        }
        if path.len() >= 2 {
            self.scope().named.push(Named { path, line });
        }
    }

    fn use_statement(&mut self) {
        let line = self.tokens[self.at].line;
        let module_level = self.at_module_level();
        self.at += 1;
        let mut leaves = Vec::new();
        self.use_tree(Vec::new(), &mut leaves);
        while self.at < self.tokens.len() && self.text(self.at) != ";" {
            self.at += 1;
        }
        let facts = self.scope();
        for leaf in leaves {
            match leaf {
                Leaf::Glob(path) => {
                    if module_level {
                        facts.globs.push(path.clone());
                    }
                    facts.named.push(Named { path, line });
                }
                Leaf::Name(path, bound) => {
                    if let (true, Some(name)) = (module_level, bound) {
                        facts.binds.insert(name, path.clone());
                    }
                    facts.named.push(Named { path, line });
                }
            }
        }
    }

    /// One tree of a `use`: `a::b`, `a::b as c`, `a::*`, `a::{tree, ...}`.
    /// A leading `::` stays as a first segment `::` (a crate outside).
    fn use_tree(&mut self, mut prefix: Vec<String>, out: &mut Vec<Leaf>) {
        if self.text(self.at) == "::" {
            prefix.push("::".into());
            self.at += 1;
        }
        loop {
            match self.text(self.at) {
                "{" => {
                    self.at += 1;
                    while !matches!(self.text(self.at), "}" | ";" | "") {
                        self.use_tree(prefix.clone(), out);
                        if self.text(self.at) == "," {
                            self.at += 1;
                        }
                    }
                    self.at += 1;
                    return;
                }
                "*" => {
                    self.at += 1;
                    return out.push(Leaf::Glob(prefix));
                }
                word if is_ident(word) => {
                    let segment = word.to_string();
                    self.at += 1;
                    if self.text(self.at) == "::" {
                        prefix.push(segment);
                        self.at += 1;
                        continue;
                    }
                    return out.push(self.leaf(prefix, segment));
                }
                _ => return,
            }
        }
    }

    /// The leaf `segment` after `prefix`, with its `as` name if any.
    fn leaf(&mut self, mut prefix: Vec<String>, segment: String) -> Leaf {
        let mut bound = if segment == "self" {
            prefix.last().cloned()
        } else {
            Some(segment.clone())
        };
        if segment != "self" {
            prefix.push(segment);
        }
        if self.text(self.at) == "as" {
            let alias = self.text(self.at + 1).to_string();
            bound = (alias != "_").then_some(alias);
            self.at += 2;
        }
        Leaf::Name(prefix, bound)
    }
}

enum Leaf {
    /// A path and the name it is bound to (None for `as _`).
    Name(Vec<String>, Option<String>),
    Glob(Vec<String>),
}
