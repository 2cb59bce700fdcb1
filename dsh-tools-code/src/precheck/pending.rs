//! Tool calls used without `await` (`docs/CONTRACTS.md`, "Sub-calls"), in the Python check's
//! words: a call whose result is read at once (`tools.x(…).length`) or that is a statement of
//! its own, and a variable that holds a call never awaited (`const r = tools.x(…)`) whose
//! result the program reads (`r.length`, `r[0]`). A promise's own methods (`then`, `catch`,
//! `finally`), a variable awaited or assigned anywhere, and a call passed on (`Promise.all`)
//! are the program handling the pending call itself.

use std::collections::{HashMap, HashSet};

use swc_common::{Span, Spanned};
use swc_ecma_ast::{
    AssignExpr, AssignTarget, AwaitExpr, Expr, ExprStmt, MemberExpr, MemberProp, Pat, Script,
    SimpleAssignTarget, VarDecl, VarDeclKind,
};
use swc_ecma_visit::{Visit, VisitWith};

use super::{NAMESPACE, tool_callee};

/// The findings of `script`, unsorted.
pub(super) fn not_awaited(script: &Script) -> Vec<(Span, String)> {
    let mut walk = Pending::default();
    script.visit_with(&mut walk);
    let mut reported = HashSet::new();
    for (span, name) in walk.reads {
        let Some((shown, kind)) = walk.held.get(&name) else {
            continue;
        };
        if walk.settled.contains(&name) || !reported.insert(name.clone()) {
            continue;
        }
        walk.found.push((
            span,
            format!(
                "`{name}` holds `{shown}` not awaited: without `await` it is a pending call, not the tool's result (hint: write `{kind} {name} = await {shown}`)"
            ),
        ));
    }
    walk.found
}

#[derive(Default)]
struct Pending {
    found: Vec<(Span, String)>,
    /// Variables initialised with a tool call not awaited: the call as shown, and `const`/`let`/`var`.
    held: HashMap<String, (String, &'static str)>,
    /// Variables awaited or assigned somewhere.
    settled: HashSet<String>,
    /// Reads of a variable's member: where, and the variable.
    reads: Vec<(Span, String)>,
}

/// `expr` without parentheses.
fn bare(mut expr: &Expr) -> &Expr {
    while let Expr::Paren(inner) = expr {
        expr = &inner.expr;
    }
    expr
}

/// The call as shown (`tools.read_file(...)`) when `expr` is a tool call not awaited.
fn tool_call(expr: &Expr) -> Option<(Span, String)> {
    let Expr::Call(call) = bare(expr) else {
        return None;
    };
    let (_, name) = tool_callee(call)?;
    let shown = match name {
        Some(name) => format!("{NAMESPACE}.{name}(...)"),
        None => format!("{NAMESPACE}[…](...)"),
    };
    Some((call.span, shown))
}

/// The finding of `expr` when it is a tool call used as its result; `fix` is the hint's way to
/// write it, `{call}` standing for `await <the call>`.
fn used_at_once(expr: &Expr, fix: &str) -> Option<(Span, String)> {
    let (span, shown) = tool_call(expr)?;
    let fix = fix.replace("{call}", &format!("await {shown}"));
    Some((
        span,
        format!(
            "`{shown}` is not awaited: without `await` it is a pending call, not the tool's result (hint: write `{fix}`)"
        ),
    ))
}

impl Visit for Pending {
    fn visit_member_expr(&mut self, node: &MemberExpr) {
        node.visit_children_with(self);
        let fix = match &node.prop {
            MemberProp::Ident(ident) if ["then", "catch", "finally"].contains(&&*ident.sym) => {
                return;
            }
            MemberProp::Ident(ident) => format!("({{call}}).{}", ident.sym),
            _ => "({call})[…]".to_owned(),
        };
        if let Expr::Ident(variable) = bare(&node.obj) {
            self.reads.push((node.span(), variable.sym.to_string()));
            return;
        }
        self.found.extend(used_at_once(&node.obj, &fix));
    }

    fn visit_expr_stmt(&mut self, node: &ExprStmt) {
        node.visit_children_with(self);
        self.found.extend(used_at_once(&node.expr, "{call}"));
    }

    fn visit_var_decl(&mut self, node: &VarDecl) {
        node.visit_children_with(self);
        let kind = match node.kind {
            VarDeclKind::Const => "const",
            VarDeclKind::Let => "let",
            VarDeclKind::Var => "var",
        };
        for declarator in &node.decls {
            if let (Pat::Ident(binding), Some(init)) = (&declarator.name, &declarator.init)
                && let Some((_, shown)) = tool_call(init)
            {
                self.held.insert(binding.id.sym.to_string(), (shown, kind));
            }
        }
    }

    fn visit_await_expr(&mut self, node: &AwaitExpr) {
        node.visit_children_with(self);
        if let Expr::Ident(variable) = bare(&node.arg) {
            self.settled.insert(variable.sym.to_string());
        }
    }

    fn visit_assign_expr(&mut self, node: &AssignExpr) {
        node.visit_children_with(self);
        if let AssignTarget::Simple(SimpleAssignTarget::Ident(variable)) = &node.left {
            self.settled.insert(variable.id.sym.to_string());
        }
    }
}
