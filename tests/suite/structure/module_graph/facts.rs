//! What one file says about its module and the inline modules in it, read
//! by `syn`: the modules it declares, the names it defines and imports, and
//! every path its code names (in `use` trees, grouped or not, fully
//! qualified in code such as `crate::kernel::regular::open(..)` without any
//! `use`, and in the tokens of macro calls). Items under `#[cfg(test)]`
//! are left out: they exist only in a test build.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::ext::IdentExt as _;
use syn::visit::{self, Visit};

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
/// it (key: the path below the file's module); an error when the file is
/// no Rust.
pub fn of_file(text: &str) -> syn::Result<BTreeMap<Vec<String>, Facts>> {
    let file = syn::parse_file(text)?;
    let mut walk = Walk {
        scope: Vec::new(),
        blocks: 0,
        facts: BTreeMap::from([(Vec::new(), Facts::default())]),
    };
    for item in &file.items {
        walk.visit_item(item);
    }
    Ok(walk.facts)
}

struct Walk {
    /// The inline module being read, below the file's module.
    scope: Vec<String>,
    /// How many blocks (function bodies...) deep: 0 is module level.
    blocks: usize,
    facts: BTreeMap<Vec<String>, Facts>,
}

/// `#[cfg(test)]` exactly: other `cfg`s are in some build.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| match &a.meta {
        syn::Meta::List(list) => list.path.is_ident("cfg") && list.tokens.to_string() == "test",
        _ => false,
    })
}

fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

impl Walk {
    fn scope(&mut self) -> &mut Facts {
        self.facts.entry(self.scope.clone()).or_default()
    }

    fn define(&mut self, name: &syn::Ident) {
        if self.blocks == 0 {
            self.scope().defines.insert(name.unraw().to_string());
        }
    }

    fn name(&mut self, path: Vec<String>, line: usize) {
        if path.len() >= 2 {
            self.scope().named.push(Named { path, line });
        }
    }

    fn module(&mut self, m: &syn::ItemMod) {
        let name = m.ident.unraw().to_string();
        let Some((_, items)) = &m.content else {
            self.scope().file_children.push(name);
            return;
        };
        self.scope().inline_children.push(name.clone());
        self.scope.push(name);
        self.facts.entry(self.scope.clone()).or_default();
        let blocks = std::mem::take(&mut self.blocks);
        for item in items {
            self.visit_item(item);
        }
        self.blocks = blocks;
        self.scope.pop();
    }

    fn use_item(&mut self, u: &syn::ItemUse) {
        let line = line_of(u.use_token.span);
        let prefix = if u.leading_colon.is_some() {
            vec!["::".to_string()]
        } else {
            Vec::new()
        };
        let mut leaves = Vec::new();
        use_tree(&u.tree, prefix, &mut leaves);
        let module_level = self.blocks == 0;
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

    /// Every `a::b` path in tokens `syn` leaves unparsed (a macro call's,
    /// an attribute's arguments).
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let colons = |at: usize| {
            matches!(trees.get(at), Some(TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == Spacing::Joint)
                && matches!(trees.get(at + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':')
        };
        let mut at = 0;
        while at < trees.len() {
            match &trees[at] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(first) if at < 2 || !colons(at - 2) => {
                    let mut path = vec![first.unraw().to_string()];
                    while colons(at + 1) {
                        let Some(TokenTree::Ident(next)) = trees.get(at + 3) else {
                            break;
                        };
                        path.push(next.unraw().to_string());
                        at += 3;
                    }
                    self.name(path, line_of(first.span()));
                }
                _ => {}
            }
            at += 1;
        }
    }
}

impl Visit<'_> for Walk {
    fn visit_item(&mut self, item: &syn::Item) {
        use syn::Item;
        let (attrs, defined): (&[syn::Attribute], Option<&syn::Ident>) = match item {
            Item::Const(i) => (&i.attrs, Some(&i.ident)),
            Item::Enum(i) => (&i.attrs, Some(&i.ident)),
            Item::Fn(i) => (&i.attrs, Some(&i.sig.ident)),
            Item::Macro(i) => (&i.attrs, i.ident.as_ref()),
            Item::Static(i) => (&i.attrs, Some(&i.ident)),
            Item::Struct(i) => (&i.attrs, Some(&i.ident)),
            Item::Trait(i) => (&i.attrs, Some(&i.ident)),
            Item::Type(i) => (&i.attrs, Some(&i.ident)),
            Item::Union(i) => (&i.attrs, Some(&i.ident)),
            Item::Impl(i) => (&i.attrs, None),
            Item::Mod(i) if !is_test(&i.attrs) => return self.module(i),
            Item::Use(i) if !is_test(&i.attrs) => return self.use_item(i),
            Item::Mod(_) | Item::Use(_) => return,
            _ => (&[], None),
        };
        if is_test(attrs) {
            return;
        }
        if let Some(name) = defined {
            self.define(name);
        }
        visit::visit_item(self, item);
    }

    fn visit_block(&mut self, block: &syn::Block) {
        self.blocks += 1;
        visit::visit_block(self, block);
        self.blocks -= 1;
    }

    fn visit_impl_item(&mut self, item: &syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => return visit::visit_impl_item(self, item),
        };
        if !is_test(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_field(&mut self, field: &syn::Field) {
        if !is_test(&field.attrs) {
            visit::visit_field(self, field);
        }
    }

    fn visit_arm(&mut self, arm: &syn::Arm) {
        if !is_test(&arm.attrs) {
            visit::visit_arm(self, arm);
        }
    }

    fn visit_path(&mut self, path: &syn::Path) {
        let mut named = Vec::new();
        let mut line = None;
        if let Some(colon) = path.leading_colon {
            named.push("::".to_string());
            line = Some(line_of(colon.spans[0]));
        }
        for segment in &path.segments {
            named.push(segment.ident.unraw().to_string());
            line.get_or_insert_with(|| line_of(segment.ident.span()));
        }
        self.name(named, line.unwrap_or(0));
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &syn::Macro) {
        visit::visit_macro(self, mac);
        self.tokens(mac.tokens.clone());
    }

    fn visit_meta_list(&mut self, list: &syn::MetaList) {
        visit::visit_meta_list(self, list);
        self.tokens(list.tokens.clone());
    }
}

/// One tree of a `use`: `a::b`, `a::b as c`, `a::*`, `a::{tree, ...}`.
fn use_tree(tree: &syn::UseTree, mut prefix: Vec<String>, out: &mut Vec<Leaf>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.unraw().to_string());
            use_tree(&p.tree, prefix, out);
        }
        syn::UseTree::Name(n) => out.push(leaf(prefix, n.ident.unraw().to_string(), None)),
        syn::UseTree::Rename(r) => out.push(leaf(
            prefix,
            r.ident.unraw().to_string(),
            Some(r.rename.unraw().to_string()),
        )),
        syn::UseTree::Glob(_) => out.push(Leaf::Glob(prefix)),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_tree(tree, prefix.clone(), out);
            }
        }
    }
}

/// The leaf `segment` after `prefix`, with its `as` name if any.
fn leaf(mut prefix: Vec<String>, segment: String, alias: Option<String>) -> Leaf {
    let mut bound = if segment == "self" {
        prefix.last().cloned()
    } else {
        Some(segment.clone())
    };
    if segment != "self" {
        prefix.push(segment);
    }
    if let Some(alias) = alias {
        bound = (alias != "_").then_some(alias);
    }
    Leaf::Name(prefix, bound)
}

enum Leaf {
    /// A path and the name it is bound to (None for `as _`).
    Name(Vec<String>, Option<String>),
    Glob(Vec<String>),
}
