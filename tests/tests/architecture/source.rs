//! The module tree of one crate, read from its sources with `syn`: modules, their files and
//! visibility, what their `use` items introduce, and the `crate::` paths their code names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

pub(crate) type ModPath = Vec<String>;

/// One module: where it is written and what it holds.
pub(crate) struct Module {
    /// The file holding it (an inline module: its parent's file).
    pub(crate) file: PathBuf,
    /// Declared `pub mod` (not `pub(crate)`).
    public: bool,
    /// Whether it is written inline (`mod tests { … }`) in its parent's file.
    pub(crate) inline: bool,
    pub(crate) children: BTreeSet<String>,
    pub(crate) items: Vec<syn::Item>,
}

/// One crate's module tree, from `src/lib.rs` down.
pub(crate) struct Crate {
    pub(crate) name: &'static str,
    src: PathBuf,
    pub(crate) modules: BTreeMap<ModPath, Module>,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package lives in the workspace")
        .to_path_buf()
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", file.display()))
}

/// The value of a `#[path = "…"]` attribute.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

impl Crate {
    pub(crate) fn load(name: &'static str, dir: &str) -> Self {
        let src = workspace().join(dir).join("src");
        let root = src.join("lib.rs");
        let mut krate = Crate {
            name,
            src: src.clone(),
            modules: BTreeMap::new(),
        };
        let items = parse(&root).items;
        krate.add(Vec::new(), root, src, true, false, items);
        krate
    }

    /// Adds module `path` (its items `items`, written in `file`; its children's files under
    /// `dir`) and, recursively, its child modules.
    fn add(
        &mut self,
        path: ModPath,
        file: PathBuf,
        dir: PathBuf,
        public: bool,
        inline: bool,
        items: Vec<syn::Item>,
    ) {
        let mut children = BTreeSet::new();
        for item in &items {
            let syn::Item::Mod(module) = item else {
                continue;
            };
            let name = module.ident.to_string();
            children.insert(name.clone());
            let mut child = path.clone();
            child.push(name.clone());
            let public = matches!(module.vis, syn::Visibility::Public(_));
            match &module.content {
                Some((_, inner)) => {
                    let dir = dir.join(&name);
                    self.add(child, file.clone(), dir, public, true, inner.clone());
                }
                None => {
                    let (child_file, child_dir) = match path_attribute(&module.attrs) {
                        Some(relative) => {
                            let f = file
                                .parent()
                                .expect("a file has a directory")
                                .join(relative);
                            let d = f.with_extension("");
                            (f, d)
                        }
                        None if dir.join(format!("{name}.rs")).exists() => {
                            (dir.join(format!("{name}.rs")), dir.join(&name))
                        }
                        None => (dir.join(&name).join("mod.rs"), dir.join(&name)),
                    };
                    let inner = parse(&child_file).items;
                    self.add(child, child_file, child_dir, public, false, inner);
                }
            }
        }
        self.modules.insert(
            path,
            Module {
                file,
                public,
                inline,
                children,
                items,
            },
        );
    }

    pub(crate) fn module(&self, path: &[String]) -> &Module {
        &self.modules[path]
    }

    /// Whether every module from the root down to `path` is public.
    pub(crate) fn reachable(&self, path: &[String]) -> bool {
        (1..=path.len()).all(|n| self.module(&path[..n]).public)
    }

    /// `segments`, as written in module `from`, as a path from the crate root; `None` for a
    /// path into another crate.
    fn absolute(&self, from: &[String], segments: &[String]) -> Option<ModPath> {
        let (first, rest) = segments.split_first()?;
        match first.as_str() {
            "crate" | "$crate" => Some(rest.to_vec()),
            "self" => Some([from, rest].concat()),
            "super" => {
                let mut base = from.to_vec();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                self.absolute(&base, &[&["self".to_owned()], rest].concat())
            }
            _ if self.module(from).children.contains(first) => Some([from, segments].concat()),
            _ => None,
        }
    }

    /// Every `use` of module `path` (any visibility): the name it introduces → its target.
    pub(crate) fn uses(&self, path: &[String]) -> Vec<(String, ModPath, bool)> {
        let mut out = Vec::new();
        for item in &self.module(path).items {
            if let syn::Item::Use(item) = item {
                let public = matches!(item.vis, syn::Visibility::Public(_));
                for (name, segments) in use_leaves(&item.tree) {
                    if let Some(target) = self.absolute(path, &segments) {
                        out.push((name, target, public));
                    }
                }
            }
        }
        out
    }

    /// The top-level module an absolute path lands in (`None`: an item of the crate root).
    fn top_of(&self, path: &[String], depth: usize) -> Option<String> {
        let first = path.first()?;
        if self.module(&[]).children.contains(first) {
            return Some(first.clone());
        }
        if depth > 8 {
            return None;
        }
        let (_, target, _) = self.uses(&[]).into_iter().find(|(n, ..)| n == first)?;
        self.top_of(&[&target[..], &path[1..]].concat(), depth + 1)
    }

    /// Where the item an absolute path names is defined: its module and its name there.
    pub(crate) fn definition(&self, path: &[String], depth: usize) -> Option<(ModPath, String)> {
        let mut module: ModPath = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            let last = i + 1 == path.len();
            if self.module(&module).children.contains(segment) {
                if last {
                    return Some((module, segment.clone()));
                }
                module.push(segment.clone());
                continue;
            }
            if depth < 8
                && let Some((_, target, _)) =
                    self.uses(&module).into_iter().find(|(n, ..)| n == segment)
            {
                return self.definition(&[&target[..], &path[i + 1..]].concat(), depth + 1);
            }
            return Some((module, segment.clone()));
        }
        None
    }

    /// The top-level modules each top-level module names, with one file that names it.
    pub(crate) fn dependencies(&self) -> BTreeMap<String, BTreeMap<String, PathBuf>> {
        let mut graph: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
        for (path, module) in &self.modules {
            let Some(top) = path.first() else {
                continue;
            };
            let edges = graph.entry(top.clone()).or_default();
            let mut names = Names::default();
            for item in &module.items {
                if let syn::Item::Mod(_) = item {
                    continue; // inline children are modules of their own
                }
                names.visit_item(item);
            }
            let mut targets: Vec<ModPath> = Vec::new();
            for segments in names.paths {
                targets.extend(self.absolute(path, &segments));
            }
            for (_, target, _) in self.uses(path) {
                targets.push(target);
            }
            for target in targets {
                if let Some(other) = self.top_of(&target, 0)
                    && other != *top
                {
                    edges.entry(other).or_insert_with(|| module.file.clone());
                }
            }
        }
        graph
    }

    /// What this crate names of the crate `other` (its identifier, e.g. `dsh_tools_core`): the
    /// first segment after `other::` of each path and `use` item, with one file naming it.
    pub(crate) fn names_of(&self, other: &str) -> BTreeMap<String, PathBuf> {
        let mut named: BTreeMap<String, PathBuf> = BTreeMap::new();
        for module in self.modules.values() {
            let mut names = Names {
                root: other.to_owned(),
                ..Names::default()
            };
            for item in &module.items {
                if let syn::Item::Mod(_) = item {
                    continue;
                }
                if let syn::Item::Use(item) = item {
                    names
                        .paths
                        .extend(use_leaves(&item.tree).into_iter().map(|(_, path)| path));
                }
                names.visit_item(item);
            }
            for path in names.paths {
                if path.first().is_some_and(|first| *first == other)
                    && let Some(name) = path.get(1)
                {
                    named
                        .entry(name.clone())
                        .or_insert_with(|| module.file.clone());
                }
            }
        }
        named
    }

    pub(crate) fn relative(&self, file: &Path) -> String {
        file.strip_prefix(self.src.parent().expect("src has a parent"))
            .unwrap_or(file)
            .display()
            .to_string()
    }
}

/// The paths a module's code names (outside `use` items, which [`Crate::uses`] reads): those
/// starting with `crate`/`super`, or with `root` when it is set (another crate's name).
#[derive(Default)]
struct Names {
    paths: Vec<Vec<String>>,
    root: String,
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {}

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let first = segments.first().map(String::as_str);
        if matches!(first, Some("crate" | "super")) || first == Some(self.root.as_str()) {
            self.paths.push(segments);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        crate_paths_in(mac.tokens.clone(), &mut self.paths);
        syn::visit::visit_macro(self, mac);
    }
}

/// `crate::a::b` and `$crate::a::b` inside macro tokens.
fn crate_paths_in(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(group) => crate_paths_in(group.stream(), out),
            TokenTree::Ident(ident) if ident == "crate" => {
                let mut segments = vec!["crate".to_owned()];
                let mut j = i + 1;
                while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)), Some(next)) =
                    (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
                {
                    let TokenTree::Ident(next) = next else {
                        break;
                    };
                    if a.as_char() != ':' || b.as_char() != ':' {
                        break;
                    }
                    segments.push(next.to_string());
                    j += 3;
                }
                if segments.len() > 1 {
                    out.push(segments);
                }
            }
            _ => {}
        }
    }
}

/// Every name a `use` tree introduces, with its full path (`_` imports excluded).
fn use_leaves(tree: &syn::UseTree) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack: Vec<(Vec<String>, &syn::UseTree)> = vec![(Vec::new(), tree)];
    while let Some((prefix, tree)) = stack.pop() {
        match tree {
            syn::UseTree::Path(p) => {
                let mut prefix = prefix;
                prefix.push(p.ident.to_string());
                stack.push((prefix, &p.tree));
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut path = prefix.clone();
                let shown = if name == "self" {
                    prefix.last().cloned().unwrap_or_default()
                } else {
                    path.push(name.clone());
                    name
                };
                out.push((shown, path));
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                if r.rename != "_" {
                    out.push((r.rename.to_string(), path));
                }
            }
            syn::UseTree::Glob(_) => {}
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    stack.push((prefix.clone(), tree));
                }
            }
        }
    }
    out
}
