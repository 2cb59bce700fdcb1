//! Whether a program binds a name itself: then `tools[...]` is its own value, not the binding
//! namespace.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};

use super::check::MAX_VISIT_DEPTH;

/// Whether the program binds `name` itself (assignment, parameter, import, `def`…): then
/// `name[...]` may be its own value, not the binding namespace.
pub(crate) fn binds_name(module: &[Stmt], name: &str) -> bool {
    struct Finder<'n> {
        name: &'n str,
        found: bool,
        depth: usize,
    }
    impl<'a> Visitor<'a> for Finder<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if self.found || self.depth > MAX_VISIT_DEPTH {
                return;
            }
            let name = self.name;
            let binds = |id: &ast::Identifier| id.as_str() == name;
            self.found |= match stmt {
                Stmt::FunctionDef(f) => binds(&f.name),
                Stmt::ClassDef(c) => binds(&c.name),
                Stmt::Import(i) => i
                    .names
                    .iter()
                    .any(|a| a.asname.as_ref().map_or(a.name.as_str() == name, binds)),
                Stmt::ImportFrom(i) => i
                    .names
                    .iter()
                    .any(|a| a.asname.as_ref().map_or(a.name.as_str() == name, binds)),
                Stmt::Global(g) => g.names.iter().any(binds),
                Stmt::Nonlocal(n) => n.names.iter().any(binds),
                _ => false,
            };
            self.depth += 1;
            visitor::walk_stmt(self, stmt);
            self.depth -= 1;
        }

        fn visit_expr(&mut self, expr: &'a Expr) {
            if self.found || self.depth > MAX_VISIT_DEPTH {
                return;
            }
            if let Expr::Name(name) = expr
                && name.id.as_str() == self.name
                && name.ctx != ExprContext::Load
            {
                self.found = true;
            }
            self.depth += 1;
            visitor::walk_expr(self, expr);
            self.depth -= 1;
        }

        fn visit_parameter(&mut self, parameter: &'a ast::Parameter) {
            self.found |= parameter.name.as_str() == self.name;
            visitor::walk_parameter(self, parameter);
        }

        fn visit_except_handler(&mut self, handler: &'a ast::ExceptHandler) {
            let ast::ExceptHandler::ExceptHandler(h) = handler;
            self.found |= h.name.as_ref().is_some_and(|n| n.as_str() == self.name);
            visitor::walk_except_handler(self, handler);
        }
    }
    let mut finder = Finder {
        name,
        found: false,
        depth: 0,
    };
    finder.visit_body(module);
    finder.found
}
