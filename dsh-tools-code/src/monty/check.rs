//! The static check of a Python program, before it runs (docs/CONTRACTS.md, "Code Mode:
//! Python"): every syntax error, every construct the interpreter does not support, every import
//! of a module it does not have, and every `tools.x` / `tools["x"]` naming no tool — each with
//! line:column and a hint, all at once (the interpreter itself stops at the first). Given the
//! tools' definitions (a `run_code` run), also every call whose constant arguments the tool's
//! schema refuses ([`super::args`]), and every tool call whose result is used without `await`.
//!
//! The check is conservative: it reports only what the interpreter certainly rejects (or, for
//! unknown tools and modules, what certainly fails when reached), so a program it passes may
//! still fail at the interpreter's own parse, never the other way round.

use dsh_tools::ToolDefinition;
use ruff_python_ast::token::TokenKind;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_python_parser::{Mode, ParseOptions, parse_unchecked};
use ruff_text_size::{Ranged, TextRange, TextSize};

/// The modules a program can import.
pub const AVAILABLE_MODULES: &[&str] = &[
    "asyncio",
    "base64",
    "binascii",
    "collections",
    "dataclasses",
    "datetime",
    "functools",
    "itertools",
    "json",
    "math",
    "os",
    "pathlib",
    "re",
    "sys",
    "typing",
    "unicodedata",
    "__future__",
];

/// How deep the check descends; deeper code is left to the interpreter's own nesting limit.
pub(super) const MAX_VISIT_DEPTH: usize = 512;

/// One problem found before running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line in the program.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// What to write instead (empty when there is nothing to add).
    pub hint: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)?;
        if !self.hint.is_empty() {
            write!(f, " (hint: {})", self.hint)?;
        }
        Ok(())
    }
}

/// Line starts of a source, for line:column positions.
pub(crate) struct Lines<'s> {
    source: &'s str,
    starts: Vec<usize>,
}

impl<'s> Lines<'s> {
    pub(crate) fn new(source: &'s str) -> Self {
        let mut starts = vec![0];
        let bytes = source.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        Self { source, starts }
    }

    /// 1-based line and character column of byte `offset`.
    pub(crate) fn position(&self, offset: TextSize) -> (usize, usize) {
        let offset = usize::from(offset).min(self.source.len());
        let line = self.starts.partition_point(|start| *start <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self
            .source
            .get(start..offset)
            .map_or(offset - start, |text| text.chars().count());
        (line, column + 1)
    }
}

/// Checks `source` against the interpreter's subset and the tool names; returns every finding,
/// in source order.
///
/// ```
/// use dsh_tools_runtime::code::monty::check_program;
/// let findings = check_program(
///     "match x:\n    case 1: pass\nawait tools.reed_file({})\n",
///     &["read_file".to_owned()],
/// );
/// let text: Vec<String> = findings.iter().map(ToString::to_string).collect();
/// assert_eq!(text, [
///     "1:1: `match` statements are not supported (hint: use `if`/`elif`)",
///     "3:13: no tool named `reed_file` (hint: did you mean `read_file`?)",
/// ]);
/// ```
pub fn check_program(source: &str, tools: &[String]) -> Vec<Finding> {
    analyse(source, &[("tools", tools)]).findings
}

/// What one parse of a program tells.
pub(crate) struct Analysis {
    /// Every finding, in source order.
    pub(crate) findings: Vec<Finding>,
    /// The byte offsets of the `[` and `]` of every `tools[...]` subscript (of every binding
    /// global the program does not bind itself).
    pub(crate) subscripts: Vec<(usize, usize)>,
}

/// A binding global and its function names.
pub(crate) type Namespace<'a> = (&'a str, &'a [String]);

/// Parses `source` once: the findings of [`check_program`] (for every namespace) and the
/// `<global>[...]` subscripts.
pub(crate) fn analyse(source: &str, namespaces: &[Namespace<'_>]) -> Analysis {
    analyse_calls(source, namespaces, &[])
}

/// [`analyse`], and the calls of `definitions`' tools (through `tools`) checked against their
/// schemas.
pub(crate) fn analyse_calls(
    source: &str,
    namespaces: &[Namespace<'_>],
    definitions: &[ToolDefinition],
) -> Analysis {
    let parsed = parse_unchecked(source, ParseOptions::from(Mode::Module));
    let lines = Lines::new(source);
    let module = parsed.syntax().as_module();
    let namespaces = namespaces
        .iter()
        .filter(|(global, _)| !module.is_some_and(|m| super::binds::binds_name(&m.body, global)))
        .copied()
        .collect();
    let mut checker = Checker {
        lines: &lines,
        namespaces,
        definitions,
        findings: Vec::new(),
        depth: 0,
        in_try: 0,
        subscripts: Vec::new(),
    };
    for error in parsed.errors() {
        checker.report(
            error.location,
            format!("syntax error: {}", error.error),
            String::new(),
        );
    }
    if let Some(module) = module {
        checker.visit_body(&module.body);
    }
    let tokens = parsed.tokens();
    let subscripts = checker
        .subscripts
        .iter()
        .filter_map(|&(value_end, end)| {
            let open = tokens
                .after(value_end)
                .iter()
                .find(|t| t.kind() == TokenKind::Lsqb)?;
            let close = usize::from(end).checked_sub(1)?;
            (source.as_bytes().get(close) == Some(&b']'))
                .then_some((usize::from(open.start()), close))
        })
        .collect();
    let mut findings = checker.findings;
    findings.sort_by_key(|f| (f.line, f.column));
    findings.dedup();
    Analysis {
        findings,
        subscripts,
    }
}

struct Checker<'c> {
    lines: &'c Lines<'c>,
    /// The namespaces whose global the program does not rebind.
    namespaces: Vec<Namespace<'c>>,
    /// The tools whose calls are checked against their schemas (empty: none).
    definitions: &'c [ToolDefinition],
    findings: Vec<Finding>,
    depth: usize,
    /// Inside the body of a `try` (an import there may be guarded by `except ImportError`).
    in_try: usize,
    /// `(end of the global, end of the subscript)` of every `<global>[...]` read.
    subscripts: Vec<(TextSize, TextSize)>,
}

impl Checker<'_> {
    fn report(&mut self, range: TextRange, message: String, hint: String) {
        let (line, column) = self.lines.position(range.start());
        self.findings.push(Finding {
            line,
            column,
            message,
            hint,
        });
    }

    fn unsupported(&mut self, range: TextRange, what: &str, hint: &str) {
        self.report(range, format!("{what} not supported"), hint.to_owned());
    }

    fn import(&mut self, range: TextRange, module: &str) {
        let top = module.split('.').next().unwrap_or(module);
        if self.in_try > 0 || AVAILABLE_MODULES.contains(&top) {
            return;
        }
        let hint = format!(
            "available modules: {}",
            AVAILABLE_MODULES[..AVAILABLE_MODULES.len() - 1].join(", ")
        );
        self.report(range, format!("module `{module}` is not available"), hint);
    }

    fn tool_name(&mut self, range: TextRange, global: &str, name: &str) {
        let Some((_, tools)) = self.namespaces.iter().find(|(g, _)| *g == global) else {
            return;
        };
        let tools = *tools;
        if tools.iter().any(|t| t == name) {
            return;
        }
        let closest = tools
            .iter()
            .map(|t| (strsim::jaro_winkler(t, name), t))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let hint = match closest {
            Some((_, t)) => format!("did you mean `{t}`?"),
            None if tools.is_empty() => format!("`{global}` is empty"),
            None => format!("the names are: {}", tools.join(", ")),
        };
        let what = if global == "tools" { "tool" } else { "binding" };
        let message = if global == "tools" {
            format!("no {what} named `{name}`")
        } else {
            format!("no {what} named `{name}` in `{global}`")
        };
        self.report(range, message, hint);
    }

    fn statement(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Delete(s) => self.unsupported(
                s.range,
                "the `del` statement is",
                "rebind the name, or use `dict.pop(key)`",
            ),
            Stmt::TypeAlias(s) => {
                self.unsupported(s.range, "`type` aliases are", "assign the type to a name")
            }
            Stmt::For(s) if s.is_async => self.unsupported(
                s.range,
                "`async for` is",
                "use a plain `for` and `await` inside the loop",
            ),
            Stmt::With(s) if s.is_async => self.unsupported(
                s.range,
                "`async with` is",
                "call the setup and cleanup explicitly",
            ),
            Stmt::Match(s) => {
                self.unsupported(s.range, "`match` statements are", "use `if`/`elif`")
            }
            Stmt::Try(s) if s.is_star => {
                self.unsupported(s.range, "`except*` is", "use a plain `except`")
            }
            Stmt::ClassDef(class) => self.class(class),
            Stmt::Expr(s) => self.not_awaited(&s.value, "await {call}"),
            Stmt::For(s) => self.not_awaited(&s.iter, "for … in await {call}"),
            Stmt::Import(s) => {
                for alias in &s.names {
                    self.import(alias.range, alias.name.as_str());
                }
            }
            Stmt::ImportFrom(s) => {
                if s.level > 0 {
                    self.report(
                        s.range,
                        "relative imports are not supported".to_owned(),
                        "import a module by its name".to_owned(),
                    );
                } else if let Some(module) = &s.module {
                    self.import(s.range, module.as_str());
                }
                if s.names.iter().any(|a| a.name.as_str() == "*") {
                    self.unsupported(s.range, "`from … import *` is", "import the names you use");
                }
            }
            _ => {}
        }
    }

    fn class(&mut self, class: &ast::StmtClassDef) {
        if class
            .arguments
            .as_ref()
            .is_some_and(|a| !a.args.is_empty() || !a.keywords.is_empty())
        {
            self.unsupported(
                class.range,
                "class inheritance is",
                "use a plain class, a `@dataclass` or a dict",
            );
        }
        for stmt in &class.body {
            match stmt {
                Stmt::FunctionDef(f) if !f.decorator_list.is_empty() => {
                    self.unsupported(
                        f.range,
                        "method decorators (`@property`, `@staticmethod`, `@classmethod`) are",
                        "use plain methods",
                    );
                }
                Stmt::FunctionDef(_) | Stmt::Pass(_) => {}
                Stmt::Assign(a) if matches!(a.targets.as_slice(), [Expr::Name(_)]) => {}
                Stmt::AnnAssign(_) => {}
                Stmt::Expr(e)
                    if matches!(*e.value, Expr::StringLiteral(_) | Expr::EllipsisLiteral(_)) => {}
                other => self.unsupported(
                    other.range(),
                    "class bodies holding anything but methods and `name = value` are",
                    "move the logic into a method or a function",
                ),
            }
        }
    }

    fn expression(&mut self, expr: &Expr) {
        match expr {
            Expr::Yield(e) => self.unsupported(
                e.range,
                "generators (`yield`) are",
                "build and return a list",
            ),
            Expr::YieldFrom(e) => self.unsupported(
                e.range,
                "generators (`yield from`) are",
                "build and return a list",
            ),
            Expr::TString(e) => self.unsupported(
                e.range,
                "template strings (t-strings) are",
                "use an f-string",
            ),
            Expr::NumberLiteral(n) if matches!(n.value, ast::Number::Complex { .. }) => {
                self.unsupported(n.range, "complex numbers are", "");
            }
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. })
            | Expr::Generator(ast::ExprGenerator { generators, .. }) => {
                for generator in generators.iter().filter(|g| g.is_async) {
                    self.unsupported(
                        generator.range,
                        "`async for` in comprehensions is",
                        "await the calls with `asyncio.gather`",
                    );
                }
            }
            Expr::Call(call) => {
                let unpacked = call.arguments.keywords.iter().filter(|k| k.arg.is_none());
                for keyword in unpacked.skip(1) {
                    self.unsupported(
                        keyword.range,
                        "a second `**` unpacking in one call is",
                        "merge the dicts first",
                    );
                }
                self.tool_call(call);
            }
            Expr::Attribute(a) if a.ctx == ExprContext::Load => {
                self.not_awaited(&a.value, "(await {call}).…");
                if let Some(global) = self.global(&a.value) {
                    self.tool_name(a.attr.range, global, a.attr.as_str());
                }
            }
            Expr::Subscript(s) if s.ctx == ExprContext::Load => {
                self.not_awaited(&s.value, "(await {call})[…]");
                let Some(global) = self.global(&s.value) else {
                    return;
                };
                if let Expr::StringLiteral(name) = &*s.slice {
                    self.tool_name(name.range, global, name.value.to_str());
                }
                if !matches!(*s.slice, Expr::Slice(_)) {
                    self.subscripts.push((s.value.end(), s.range.end()));
                }
            }
            _ => {}
        }
    }
}

impl<'c> Checker<'c> {
    /// The tool `call` calls through `tools` (its name, as written), if it calls one.
    fn called_tool<'e>(&self, call: &'e ast::ExprCall) -> Option<&'e str> {
        let (global, name) = match &*call.func {
            Expr::Attribute(a) => (self.global(&a.value)?, a.attr.as_str()),
            Expr::Subscript(s) => match &*s.slice {
                Expr::StringLiteral(name) => (self.global(&s.value)?, name.value.to_str()),
                _ => return None,
            },
            _ => return None,
        };
        (global == "tools").then_some(name)
    }

    /// The findings of one call of a tool with a definition: its arguments.
    fn tool_call(&mut self, call: &ast::ExprCall) {
        let Some(name) = self.called_tool(call) else {
            return;
        };
        let Some(def) = self.definitions.iter().find(|def| def.name() == name) else {
            return;
        };
        for (range, message, hint) in super::args::findings(call, def, &format!("tools.{name}")) {
            self.report(range, message, hint);
        }
    }

    /// A finding when `expr` is a tool call whose result is used without `await`; `fix` is
    /// how to write it (`{call}` is the call).
    fn not_awaited(&mut self, expr: &Expr, fix: &str) {
        let Expr::Call(call) = expr else {
            return;
        };
        let Some(name) = self.called_tool(call) else {
            return;
        };
        let shown = format!("tools.{name}(...)");
        self.report(
            call.range(),
            format!("`{shown}` is not awaited: without `await` it is a pending call, not the tool's result"),
            format!("write `{}`", fix.replace("{call}", &shown)),
        );
    }

    /// The binding global `expr` names, if it is one.
    fn global(&self, expr: &Expr) -> Option<&'c str> {
        let Expr::Name(name) = expr else {
            return None;
        };
        self.namespaces
            .iter()
            .map(|(global, _)| *global)
            .find(|global| *global == name.id.as_str())
    }
}

impl<'a> Visitor<'a> for Checker<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.depth > MAX_VISIT_DEPTH {
            return;
        }
        self.depth += 1;
        self.statement(stmt);
        if let Stmt::Try(t) = stmt {
            self.in_try += 1;
            self.visit_body(&t.body);
            self.in_try -= 1;
            for handler in &t.handlers {
                self.visit_except_handler(handler);
            }
            self.visit_body(&t.orelse);
            self.visit_body(&t.finalbody);
        } else {
            visitor::walk_stmt(self, stmt);
        }
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.depth > MAX_VISIT_DEPTH {
            return;
        }
        self.depth += 1;
        self.expression(expr);
        visitor::walk_expr(self, expr);
        self.depth -= 1;
    }
}
