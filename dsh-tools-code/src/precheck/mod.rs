//! The static check of a program before it runs: one walk of its swc AST finds
//! `tools.x(...)` / `tools["x"](...)` calls naming a tool that is not in the run's SDK, and
//! object-literal arguments whose constant parts already violate the tool's parameter schema.
//! Every finding is reported at once (line and column in the model's program, a "did you mean"
//! where a name is close), and the run fails before any tool runs or any sandbox starts.
//!
//! Only what is certain is reported: dynamic access (`tools[name]`, a `tools` the program
//! binds itself, computed arguments) is left to run time, and a program that does not parse or
//! exceeds the source limits is left to the runtime, which reports those itself.

mod args;
pub(crate) mod literal;
mod pending;

use std::fmt;

use dsh_tools::ToolDefinition;
use swc_common::sync::Lrc;
use swc_common::{FileName, SourceMap, Span};
use swc_ecma_ast::{
    BindingIdent, CallExpr, Callee, ClassDecl, ClassExpr, Expr, FnDecl, FnExpr, Lit, MemberProp,
    SimpleAssignTarget,
};
use swc_ecma_parser::{Parser, StringInput, Syntax, TsSyntax};
use swc_ecma_visit::{Visit, VisitWith};

use super::strip::{SourceLimits, WRAPPER_LINES, WRAPPER_PREFIX, WRAPPER_SUFFIX};
use super::texts::{DESCRIBE, SEARCH};

/// The namespace the checked calls go through.
const NAMESPACE: &str = "tools";

/// One problem found before the program ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// 1-based line in the model's program.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) column: usize,
    /// What is wrong.
    pub(crate) message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} {}", self.line, self.column, self.message)
    }
}

/// The findings of `program` against `tools` (the run's bindings), in source order.
pub(crate) fn check(program: &str, tools: &[ToolDefinition]) -> Vec<Finding> {
    if !super::strip::within_limits(program, &SourceLimits::default()) {
        return Vec::new();
    }
    // swc's parser has tripped debug assertions on hostile input before: a panic is no finding.
    let walked = std::panic::AssertUnwindSafe(|| walk(program, tools));
    std::panic::catch_unwind(walked).unwrap_or_default()
}

fn walk(program: &str, tools: &[ToolDefinition]) -> Vec<Finding> {
    let cm: Lrc<SourceMap> = Lrc::default();
    let wrapped = format!("{WRAPPER_PREFIX}{program}{WRAPPER_SUFFIX}");
    let file = cm.new_source_file(Lrc::new(FileName::Anon), wrapped);
    let syntax = Syntax::Typescript(TsSyntax::default());
    let mut parser = Parser::new(syntax, StringInput::from(&*file), None);
    let Ok(script) = parser.parse_script() else {
        return Vec::new();
    };
    if !parser.take_errors().is_empty() {
        return Vec::new();
    }
    let mut bound = Bound(false);
    script.visit_with(&mut bound);
    if bound.0 {
        return Vec::new();
    }
    let mut calls = Calls {
        tools,
        found: Vec::new(),
    };
    script.visit_with(&mut calls);
    calls.found.extend(pending::not_awaited(&script));
    calls.found.sort_by_key(|(span, _)| span.lo);
    calls
        .found
        .into_iter()
        .map(|(span, message)| {
            let at = cm.lookup_char_pos(span.lo);
            Finding {
                line: at.line.saturating_sub(WRAPPER_LINES).max(1),
                column: at.col.0 + 1,
                message,
            }
        })
        .collect()
}

/// The finding of a call of a tool only the model may call, written `shown` (`tools.name`).
pub(crate) fn native_only(shown: &str) -> String {
    format!("{shown} is callable by the model directly, not from code (callers = \"native\")")
}

/// Finds whether the program binds `tools` itself (a variable, parameter, function or class
/// name, or an assignment): its calls are then not the namespace's.
struct Bound(bool);

impl Visit for Bound {
    fn visit_binding_ident(&mut self, node: &BindingIdent) {
        self.0 |= node.id.sym == NAMESPACE;
    }

    fn visit_fn_decl(&mut self, node: &FnDecl) {
        self.0 |= node.ident.sym == NAMESPACE;
        node.visit_children_with(self);
    }

    fn visit_fn_expr(&mut self, node: &FnExpr) {
        self.0 |= node.ident.as_ref().is_some_and(|i| i.sym == NAMESPACE);
        node.visit_children_with(self);
    }

    fn visit_class_decl(&mut self, node: &ClassDecl) {
        self.0 |= node.ident.sym == NAMESPACE;
        node.visit_children_with(self);
    }

    fn visit_class_expr(&mut self, node: &ClassExpr) {
        self.0 |= node.ident.as_ref().is_some_and(|i| i.sym == NAMESPACE);
        node.visit_children_with(self);
    }

    fn visit_simple_assign_target(&mut self, node: &SimpleAssignTarget) {
        if let SimpleAssignTarget::Ident(ident) = node {
            self.0 |= ident.id.sym == NAMESPACE;
        }
        node.visit_children_with(self);
    }
}

/// Collects the findings of every `tools.<name>(...)` call.
struct Calls<'a> {
    tools: &'a [ToolDefinition],
    found: Vec<(Span, String)>,
}

/// The callee of a `tools.<name>(...)` / `tools["name"](...)` call: its member expression, and
/// the name (`None` when computed at run time).
fn tool_callee(call: &CallExpr) -> Option<(&swc_ecma_ast::MemberExpr, Option<String>)> {
    let Callee::Expr(callee) = &call.callee else {
        return None;
    };
    let Expr::Member(member) = &**callee else {
        return None;
    };
    let Expr::Ident(object) = &*member.obj else {
        return None;
    };
    if object.sym != NAMESPACE {
        return None;
    }
    let name = match &member.prop {
        MemberProp::Ident(ident) => Some(ident.sym.to_string()),
        MemberProp::Computed(computed) => match &*computed.expr {
            Expr::Lit(Lit::Str(s)) => Some(s.value.as_str()?.to_owned()),
            _ => None, // dynamic access: run time
        },
        MemberProp::PrivateName(_) => return None,
    };
    Some((member, name))
}

impl Visit for Calls<'_> {
    fn visit_call_expr(&mut self, call: &CallExpr) {
        call.visit_children_with(self);
        let Some((member, Some(name))) = tool_callee(call) else {
            return;
        };
        // Tool search's helpers (`tools.$search`, `tools.$describe`) are no tools.
        if [SEARCH, DESCRIBE].contains(&name.as_str()) {
            return;
        }
        let Some(def) = self.tools.iter().find(|def| def.name() == name) else {
            let mut message = format!("{NAMESPACE}.{name} is not a tool of this run");
            let meant = super::suggest::meant(&name, self.tools);
            message.push_str(&super::suggest::hint(&meant, "tools."));
            self.found.push((member.span, message));
            return;
        };
        if !def.callers().code() {
            self.found
                .push((member.span, native_only(&format!("{NAMESPACE}.{name}"))));
            return;
        }
        let Some(argument) = call.args.first().filter(|arg| arg.spread.is_none()) else {
            return;
        };
        for (at, violation) in literal::check(def, &args::arg(&argument.expr)) {
            self.found
                .push((at, format!("{NAMESPACE}.{name}: {violation}")));
        }
    }
}

#[cfg(test)]
mod tests;
