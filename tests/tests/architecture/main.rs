//! The shape of the library crates, read from their sources (see `ARCHITECTURE.md`):
//!
//! - the top-level modules of `dsh-tools`, `dsh-tools-core` and `dsh-tools-code` form no cycle
//!   (a module's
//!   dependencies are the `crate::…` paths its files name: `use` items, paths in code, and
//!   `crate::`/`$crate::` paths inside macros; names re-exported at the crate root count for the
//!   module that defines them);
//! - the top-level modules of the core and of Code Mode name exactly the modules
//!   `ARCHITECTURE.md` lists for them (an undeclared edge fails, and so does a listed edge the
//!   code no longer has), and point one way along its order;
//! - no file of `dsh-tools` or `dsh-tools-core` names Code Mode's tool (`run_code`) or its
//!   feature (`feature = "code-mode"`) in code: Code Mode is `dsh-tools-code`;
//! - `dsh-tools-code` names only the core's extension API, its public modules and its root
//!   types (`dsh_tools_core::…`), never a private module;
//! - no item of a private module is re-exported out of it at two public paths (one public path
//!   per item; the crate root's shorthands for items of public modules are not counted).
//!
//! The files are parsed with `syn`, so comments never count.

mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;

use source::{Crate, ModPath};

/// One cycle of `graph`, as the list of its modules (the first repeated at the end).
fn find_cycle(graph: &BTreeMap<String, BTreeMap<String, PathBuf>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, PathBuf>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[start..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if let Some(cycle) = visit(next, graph, done, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

fn crates() -> [Crate; 3] {
    [
        Crate::load("dsh-tools", "dsh-tools"),
        Crate::load("dsh-tools-core", "dsh-tools-core"),
        Crate::load("dsh-tools-code", "dsh-tools-code"),
    ]
}

#[test]
fn top_level_modules_form_no_cycle() {
    let [tools, core, code] = crates();
    for krate in [tools, core, code] {
        let graph = krate.dependencies();
        if let Some(cycle) = find_cycle(&graph) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|pair| {
                    let file = &graph[&pair[0]][&pair[1]];
                    format!("{} -> {} ({})", pair[0], pair[1], krate.relative(file))
                })
                .collect();
            panic!(
                "the top-level modules of {} form a cycle:\n  {}",
                krate.name,
                steps.join("\n  ")
            );
        }
    }
}

/// `krate`'s edges that point against `order` (each module names only modules to its left);
/// panics when `order` misses one of its top-level modules.
fn against_order(krate: &Crate, order: &[&str]) -> Vec<String> {
    let known: BTreeSet<&str> = order.iter().copied().collect();
    let modules: BTreeSet<&str> = krate
        .module(&[])
        .children
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        modules, known,
        "ARCHITECTURE.md and this test list every top-level module of {}",
        krate.name
    );
    let mut against = Vec::new();
    for (from, edges) in &krate.dependencies() {
        let rank = order
            .iter()
            .position(|m| m == from)
            .expect("a known module");
        for (to, file) in edges {
            let target = order.iter().position(|m| m == to).expect("a known module");
            if target >= rank {
                against.push(format!(
                    "{from} names {to} ({}), against the direction of ARCHITECTURE.md",
                    krate.relative(file)
                ));
            }
        }
    }
    against
}

#[test]
fn the_core_modules_point_one_way() {
    // The order ARCHITECTURE.md draws: each module names only modules to its left.
    let order = documented_order(0);
    let order: Vec<&str> = order.iter().map(String::as_str).collect();
    let [_, core, _] = crates();
    let against = against_order(&core, &order);
    assert!(against.is_empty(), "{}", against.join("\n"));
}

/// The module order ARCHITECTURE.md draws for one crate: the `text` block before its
/// `paragraph`th "(exactly — …)" paragraph (0: the core's, 1: Code Mode's), left to right.
fn documented_order(paragraph: usize) -> Vec<String> {
    let text = architecture_md();
    let before: String = text
        .split("(exactly —")
        .take(paragraph + 1)
        .collect::<Vec<_>>()
        .join("(exactly —");
    let block = before
        .rsplit("```text\n")
        .next()
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("ARCHITECTURE.md draws no order before paragraph {paragraph}"));
    block.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn the_code_modules_point_one_way() {
    let [_, _, code] = crates();
    // `tests` is `lib.rs`'s unit tests, above everything.
    let mut order = documented_order(1);
    order.push("tests".to_owned());
    let order: Vec<&str> = order.iter().map(String::as_str).collect();
    let against = against_order(&code, &order);
    assert!(against.is_empty(), "{}", against.join("\n"));
}

/// The text of ARCHITECTURE.md, the one home of the orders and edges this test holds the code to.
fn architecture_md() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md");
    std::fs::read_to_string(&path).expect("ARCHITECTURE.md")
}

/// The exact module edges of one crate, read from ARCHITECTURE.md: its `paragraph`th
/// "(exactly — …)" paragraph (0: the core's, 1: Code Mode's), each `from → to, to` span. The
/// document is the one home of the list; this test holds the code to it.
fn documented_edges(paragraph: usize) -> Vec<(String, Vec<String>)> {
    let text = architecture_md();
    let body = text
        .split("(exactly —")
        .nth(paragraph + 1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no exact-edges paragraph {paragraph}"));
    let edges: Vec<(String, Vec<String>)> = body
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|span| {
            let (from, to) = span.split_once('→')?;
            let to = to
                .split(',')
                .map(|name| name.split_whitespace().collect::<String>())
                .collect();
            Some((from.trim().to_owned(), to))
        })
        .collect();
    assert!(
        !edges.is_empty(),
        "no `from → to` span in paragraph {paragraph}"
    );
    edges
}

/// The core's exact module edges ([`documented_edges`]).
fn core_edges() -> Vec<(String, Vec<String>)> {
    documented_edges(0)
}

/// Code Mode's exact module edges ([`documented_edges`]).
fn code_edges() -> Vec<(String, Vec<String>)> {
    documented_edges(1)
}

/// `graph`'s edges against `declared` (a module left out names nothing): what differs, if
/// anything.
fn undeclared_edges(
    graph: &BTreeMap<String, BTreeMap<String, PathBuf>>,
    declared: &[(String, Vec<String>)],
) -> Vec<String> {
    let mut differences = Vec::new();
    let modules: BTreeSet<&str> = graph
        .keys()
        .map(String::as_str)
        .chain(declared.iter().map(|(from, _)| from.as_str()))
        .collect();
    for from in modules {
        let found: BTreeSet<&str> = graph
            .get(from)
            .map(|edges| edges.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let listed: BTreeSet<&str> = declared
            .iter()
            .find(|(f, _)| f == from)
            .map(|(_, to)| to.iter().map(String::as_str).collect())
            .unwrap_or_default();
        for to in found.difference(&listed) {
            differences.push(format!("{from} -> {to} is not in ARCHITECTURE.md"));
        }
        for to in listed.difference(&found) {
            differences.push(format!(
                "{from} -> {to} is in ARCHITECTURE.md but not in the code"
            ));
        }
    }
    differences
}

#[test]
fn the_code_modules_have_exactly_the_documented_edges() {
    let [_, _, code] = crates();
    let differences = undeclared_edges(&code.dependencies(), &code_edges());
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn an_undeclared_code_edge_fails_both_checks() {
    // The test of the test: a backend naming another (the order allows it, ARCHITECTURE.md
    // does not list it), then the sandbox layer naming a backend (a cycle, and against the
    // order).
    let [_, _, code] = crates();
    let mut graph = code.dependencies();
    graph
        .entry("monty".to_owned())
        .or_default()
        .insert("quickjs".to_owned(), PathBuf::from("src/monty/mod.rs"));
    assert_eq!(
        undeclared_edges(&graph, &code_edges()),
        ["monty -> quickjs is not in ARCHITECTURE.md"]
    );
    assert_eq!(find_cycle(&graph), None);
    graph
        .entry("sandbox".to_owned())
        .or_default()
        .insert("monty".to_owned(), PathBuf::from("src/sandbox/mod.rs"));
    let cycle = find_cycle(&graph).expect("a cycle");
    let order = documented_order(1);
    let rank = |m: &str| order.iter().position(|n| n == m);
    assert!(
        rank("monty") > rank("sandbox"),
        "sandbox -> monty points right"
    );
    assert!(
        cycle.contains(&"sandbox".to_owned()) && cycle.contains(&"monty".to_owned()),
        "{cycle:?}"
    );
}

#[test]
fn the_core_modules_have_exactly_the_documented_edges() {
    let [_, core, _] = crates();
    let differences = undeclared_edges(&core.dependencies(), &core_edges());
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn an_undeclared_edge_fails_the_edge_check() {
    // The test of the test: the core's graph plus one edge ARCHITECTURE.md does not list.
    let [_, core, _] = crates();
    let mut graph = core.dependencies();
    graph
        .entry("dialect".to_owned())
        .or_default()
        .insert("mcp".to_owned(), PathBuf::from("src/dialect/mod.rs"));
    assert_eq!(
        undeclared_edges(&graph, &core_edges()),
        ["dialect -> mcp is not in ARCHITECTURE.md"]
    );
}

/// Whether `tokens` name Code Mode: a `run_code` identifier or string, or the `code-mode`
/// feature. Doc attributes (comments) do not count.
fn names_code_mode(tokens: TokenStream) -> Option<String> {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            // `#[doc = …]` / `#![doc = …]`: a comment.
            TokenTree::Punct(p) if p.as_char() == '#' => {
                let mut j = i + 1;
                if matches!(tokens.get(j), Some(TokenTree::Punct(p)) if p.as_char() == '!') {
                    j += 1;
                }
                if let Some(TokenTree::Group(g)) = tokens.get(j)
                    && g.delimiter() == Delimiter::Bracket
                {
                    let is_doc = matches!(
                        g.stream().into_iter().next(),
                        Some(TokenTree::Ident(ident)) if ident == "doc"
                    );
                    if !is_doc && let Some(found) = names_code_mode(g.stream()) {
                        return Some(found);
                    }
                    i = j + 1;
                    continue;
                }
            }
            TokenTree::Group(g) => {
                if let Some(found) = names_code_mode(g.stream()) {
                    return Some(found);
                }
            }
            TokenTree::Ident(ident) if ident.to_string().to_lowercase().contains("run_code") => {
                return Some(ident.to_string());
            }
            TokenTree::Literal(literal) => {
                let text = literal.to_string();
                if text.contains("run_code") || text == "\"code-mode\"" {
                    return Some(text);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[test]
fn only_code_names_code_mode() {
    for krate in crates() {
        if krate.name == "dsh-tools-code" {
            continue;
        }
        for module in krate.modules.values() {
            if module.inline {
                continue;
            }
            let mut tokens = TokenStream::new();
            for item in &module.items {
                item.to_tokens(&mut tokens);
            }
            if let Some(found) = names_code_mode(tokens) {
                panic!(
                    "{} names Code Mode ({found}) outside dsh-tools-code: plug in through the \
                     core's extension API (ScopeExtension, the lane, hook kinds) instead",
                    krate.relative(&module.file)
                );
            }
        }
    }
}

#[test]
fn code_mode_names_only_the_cores_public_api() {
    // The core's modules Code Mode may name (ARCHITECTURE.md, "The extension API"); anything
    // else it names of the core must be a root item (`ToolRegistry`, `PresentationMode`, …).
    let allowed = ["extension", "hooks", "approval", "search", "tokens"];
    let [_, core, code] = crates();
    let modules = &core.module(&[]).children;
    for (name, file) in code.names_of("dsh_tools_core") {
        assert!(
            !modules.contains(&name) || allowed.contains(&name.as_str()),
            "{} names dsh_tools_core::{name}: Code Mode uses the core through its extension \
             API and the modules {allowed:?} only",
            code.relative(&file)
        );
    }
}

#[test]
fn no_private_item_has_two_public_paths() {
    for krate in crates() {
        // (defining module, name) → the public paths re-exporting it.
        let mut paths: BTreeMap<(ModPath, String), Vec<String>> = BTreeMap::new();
        for path in krate.modules.keys() {
            if !krate.reachable(path) {
                continue;
            }
            for (name, target, public) in krate.uses(path) {
                if !public {
                    continue;
                }
                // Only a re-export straight out of a private module counts: re-exporting a
                // public path again (the crate root's shorthands) is a convenience, not a
                // second home.
                let parent = &target[..target.len().saturating_sub(1)];
                if !krate.modules.contains_key(parent) || krate.reachable(parent) {
                    continue;
                }
                let Some((home, item)) = krate.definition(&target, 0) else {
                    continue;
                };
                let shown = [&path[..], &[name]].concat().join("::");
                paths.entry((home, item)).or_default().push(shown);
            }
        }
        for ((home, item), public) in paths {
            assert!(
                public.len() == 1,
                "{}: `{}::{item}` (a private module's item) is public at {} paths: {}",
                krate.name,
                home.join("::"),
                public.len(),
                public.join(", ")
            );
        }
    }
}
