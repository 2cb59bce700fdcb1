//! The TypeScript type strip for Code Mode programs (`docs/CONTRACTS.md`, "Code Mode programs").
//!
//! A program is the *body* of an async function. [`strip_program`] checks it against the
//! [`SourceLimits`] with a cheap non-recursive scanner (swc parses, visits and drops the AST
//! recursively, about 2–3.4 KiB of host stack per nesting level), wraps it as
//! [`WRAPPER_PREFIX`]` + program + `[`WRAPPER_SUFFIX`] so `return` and `await` parse, and erases
//! the types with `swc_ts_fast_strip` in strip-only mode: types become whitespace, so every line
//! and column of the output is the line and column of the input (offset by the wrapper's one
//! line), and runtime errors point into the model's own code.
//!
//! Only erasable TypeScript is accepted. `enum`, `namespace`, parameter properties and the other
//! constructs that need code generation fail like a syntax error. Two constructs strip-only
//! mode refuses although they are erasable — `<T>expr` type assertions and a unary expression on
//! the left of `**` — are retried once with swc's transform mode, whose output is reprinted
//! (line numbers of runtime errors are then those of the reprinted program).

mod lex;
mod scan;

use std::sync::{Arc, Mutex};

use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::sync::Lrc;
use swc_common::{GLOBALS, Globals, SourceMap, Span};
use swc_ts_fast_strip::{Mode, Options};

/// Text put before the program: an async function expression whose body is the program.
pub const WRAPPER_PREFIX: &str = "(async function __dsh_main__() {\n";
/// Text put after the program.
pub const WRAPPER_SUFFIX: &str = "\n})";
/// Lines the wrapper adds before the program's first line.
pub const WRAPPER_LINES: usize = 1;

/// Default [`SourceLimits::max_source_bytes`]: 64 KiB.
pub const DEFAULT_MAX_SOURCE_BYTES: usize = 64 * 1024;
/// Default [`SourceLimits::max_depth`]: 256 levels.
pub const DEFAULT_MAX_DEPTH: usize = 256;

/// Limits checked before swc sees a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceLimits {
    /// Largest accepted program, in UTF-8 bytes (default 64 KiB).
    pub max_source_bytes: usize,
    /// Deepest accepted nesting (default 256): open `(`, `[`, `{`, `${`, type-argument `<`, plus
    /// right-recursive tokens (`=`, `=>`, `?`, `:`, `**`, prefix operators, `if`/`for`/`while`/…
    /// without braces) inside each open level since its last `,` or `;`.
    pub max_depth: usize,
}

impl Default for SourceLimits {
    fn default() -> Self {
        Self {
            max_source_bytes: DEFAULT_MAX_SOURCE_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// Why a program could not be stripped. Positions are 1-based line:column in the model's own
/// program (the wrapper's line is subtracted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StripError {
    /// The program is larger than [`SourceLimits::max_source_bytes`].
    #[error("program source is {bytes} bytes, over the {max}-byte limit")]
    SourceTooLarge {
        /// The program's size in UTF-8 bytes.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The program nests deeper than [`SourceLimits::max_depth`].
    #[error("program nests deeper than {max} levels at {line}:{column}")]
    TooDeep {
        /// The limit.
        max: usize,
        /// Line where the limit was crossed.
        line: usize,
        /// Column where the limit was crossed.
        column: usize,
    },
    /// The program does not parse.
    #[error("SyntaxError: {message} at {line}:{column}")]
    Syntax {
        /// swc's message, e.g. `Expected ';', got 'x'`.
        message: String,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
    },
    /// The program uses TypeScript that is not erasable (`enum`, `namespace`, …).
    #[error("SyntaxError: {message} at {line}:{column}")]
    Unsupported {
        /// swc's message, e.g. `TypeScript enum is not supported in strip-only mode`.
        message: String,
        /// Line of the construct.
        line: usize,
        /// Column of the construct.
        column: usize,
    },
}

impl StripError {
    /// Whether a source limit (size or depth) refused the program, as opposed to its syntax.
    pub fn is_source_limit(&self) -> bool {
        matches!(self, Self::SourceTooLarge { .. } | Self::TooDeep { .. })
    }
}

/// Whether `program` is within `limits` (size and nesting): what swc may safely see.
pub(crate) fn within_limits(program: &str, limits: &SourceLimits) -> bool {
    program.len() <= limits.max_source_bytes && scan::check_depth(program, limits.max_depth).is_ok()
}

/// Strips the types from a Code Mode program and wraps it (see the module docs).
///
/// Returns a script whose completion value is the `async function __dsh_main__` whose body is
/// the program.
///
/// ```
/// use dsh_tools_runtime::code::strip::{strip_program, SourceLimits};
/// let js = strip_program("const n: number = 1;\nreturn n;", &SourceLimits::default()).unwrap();
/// assert_eq!(js, "(async function __dsh_main__() {\nconst n         = 1;\nreturn n;\n})");
/// let err = strip_program("let a = 1\nlet b = 2 x", &SourceLimits::default()).unwrap_err();
/// assert_eq!(err.to_string(), "SyntaxError: Expected a semicolon at 2:11");
/// ```
pub fn strip_program(program: &str, limits: &SourceLimits) -> Result<String, StripError> {
    if program.len() > limits.max_source_bytes {
        return Err(StripError::SourceTooLarge {
            bytes: program.len(),
            max: limits.max_source_bytes,
        });
    }
    scan::check_depth(program, limits.max_depth).map_err(|at| StripError::TooDeep {
        max: limits.max_depth,
        line: at.line,
        column: at.column,
    })?;
    let wrapped = format!("{WRAPPER_PREFIX}{program}{WRAPPER_SUFFIX}");
    GLOBALS.set(&Globals::new(), || {
        match run_swc(wrapped.clone(), Mode::StripOnly) {
            Ok(code) => Ok(code),
            Err(failure) if failure.fallback => {
                run_swc(wrapped, Mode::Transform).map_err(|failure| failure.error)
            }
            Err(failure) => Err(failure.error),
        }
    })
}

/// A failed swc pass.
struct Failure {
    error: StripError,
    /// Every diagnostic is one transform mode can handle while staying erasable.
    fallback: bool,
}

/// One collected diagnostic: message, primary span, code.
type Diagnostic = (String, Option<Span>, Option<String>);

/// Collects swc's diagnostics instead of printing them.
struct Collect(Arc<Mutex<Vec<Diagnostic>>>);

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let code = match &db.code {
            Some(swc_common::errors::DiagnosticId::Error(code)) => Some(code.clone()),
            _ => None,
        };
        let entry = (db.message(), db.span.primary_span(), code);
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(entry);
    }
}

/// Messages of strip-only refusals whose construct is erasable (transform mode handles them).
const FALLBACK_MESSAGES: &[&str] = &[
    "The angle-bracket syntax for type assertions",
    "A unary or await expression on the left-hand side of `**`",
];

fn run_swc(wrapped: String, mode: Mode) -> Result<String, Failure> {
    let cm: Lrc<SourceMap> = Lrc::default();
    let diagnostics = Arc::new(Mutex::new(Vec::new()));
    let handler = Handler::with_emitter(true, false, Box::new(Collect(diagnostics.clone())));
    let options = Options {
        module: Some(false),
        mode,
        ..Options::default()
    };
    // swc's parser has internal assertions a malformed program can trip (in builds with debug
    // assertions, e.g. `enum E { A, [B }`): a panic there is the program's syntax error, never
    // the host's crash.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        swc_ts_fast_strip::operate(&cm, &handler, wrapped, options)
    }));
    let error = match outcome {
        Ok(Ok(output)) => return Ok(output.code),
        Ok(Err(error)) => error,
        Err(_) => {
            return Err(Failure {
                error: StripError::Syntax {
                    message: "the TypeScript parser could not read this program".to_owned(),
                    line: 1,
                    column: 1,
                },
                fallback: false,
            });
        }
    };
    let mut diagnostics = std::mem::take(
        &mut *diagnostics
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    );
    diagnostics.sort_by_key(|(_, span, _)| span.map_or(u32::MAX, |s| s.lo.0));
    let fallback = !diagnostics.is_empty()
        && diagnostics.iter().all(|(message, _, code)| {
            code.as_deref() == Some("UnsupportedSyntax")
                && FALLBACK_MESSAGES.iter().any(|m| message.starts_with(m))
        });
    let Some((message, span, code)) = diagnostics.into_iter().next() else {
        return Err(Failure {
            error: StripError::Syntax {
                message: error.message,
                line: 1,
                column: 1,
            },
            fallback: false,
        });
    };
    let (line, column) = span.map_or((1, 1), |span| {
        let loc = cm.lookup_char_pos(span.lo);
        (loc.line.saturating_sub(WRAPPER_LINES).max(1), loc.col.0 + 1)
    });
    let error = if code.as_deref() == Some("UnsupportedSyntax") {
        StripError::Unsupported {
            message,
            line,
            column,
        }
    } else {
        StripError::Syntax {
            message,
            line,
            column,
        }
    };
    Err(Failure { error, fallback })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(program: &str) -> Result<String, StripError> {
        strip_program(program, &SourceLimits::default())
    }

    #[test]
    fn keeps_lines_and_columns() {
        let js = strip("interface A { x: number }\nconst a: A = { x: 1 };\nreturn a.x as number;")
            .unwrap();
        let lines: Vec<&str> = js.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[2].trim_end(), "const a    = { x: 1 };");
        assert_eq!(lines[3], "return a.x          ;");
    }

    #[test]
    fn syntax_errors_point_into_the_program() {
        let err = strip("const a = 1;\nconst b = 2;\nconst c = ) ;").unwrap_err();
        assert!(
            matches!(
                err,
                StripError::Syntax {
                    line: 3,
                    column: 11,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn non_erasable_typescript_is_refused() {
        let err = strip("enum E { A }\nreturn E.A;").unwrap_err();
        assert!(
            matches!(
                err,
                StripError::Unsupported {
                    line: 1,
                    column: 1,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("enum"), "{err}");
        let err = strip("\nnamespace N { export const a = 1; }").unwrap_err();
        assert!(
            matches!(err, StripError::Unsupported { line: 2, .. }),
            "{err:?}"
        );
        let err = strip("class A { constructor(private x: number) {} }").unwrap_err();
        assert!(matches!(err, StripError::Unsupported { .. }), "{err:?}");
    }

    #[test]
    fn angle_bracket_assertions_fall_back_to_transform_mode() {
        let js = strip("const a = <number>(1 + 1);\nreturn a;").unwrap();
        assert!(
            js.contains("__dsh_main__") && !js.contains("number"),
            "{js}"
        );
    }

    #[test]
    fn limits_come_first() {
        let limits = SourceLimits {
            max_source_bytes: 10,
            max_depth: 4,
        };
        let err = strip_program("return 12345678;", &limits).unwrap_err();
        assert_eq!(err, StripError::SourceTooLarge { bytes: 16, max: 10 });
        assert!(err.is_source_limit());
        let err = strip_program("[[[[[", &limits).unwrap_err();
        assert_eq!(
            err,
            StripError::TooDeep {
                max: 4,
                line: 1,
                column: 5
            }
        );
    }
}
