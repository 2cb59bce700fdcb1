//! The cheap pre-swc nesting scanner.
//!
//! swc parses, visits and drops the AST recursively: about 2–3.4 KiB of host stack per bracket
//! or arrow level, 1.6 KiB per brace-less control statement, 0.4–0.75 KiB per unary, assignment
//! or conditional level, 0.1 KiB per left-deep chain element (measured, release and debug). This
//! scanner bounds the expensive kinds *before* swc sees the source, in one pass, without
//! recursion:
//!
//! - every open `(`, `[`, `{`, template `${` and type-argument `<` is one level;
//! - inside each open level, every right-recursive token since the last `,` / `;` / statement
//!   end is one more level: `=` (assignments), `=>`, `?`, `:`, `**`, prefix `! ~ + - ++ -- ...`,
//!   and the keywords `if else for while with do typeof void delete await new yield keyof infer`.
//!
//! Strings, comments, templates and regular expressions are skipped. The one lexical ambiguity
//! of JavaScript (does this `/` start a regular expression?) is resolved the way the grammar
//! does where the previous token decides it; where it does not (after `}`, `++`, `--` and a few
//! contextual keywords), the rest of the line is scanned *conservatively*: openers count,
//! closers do not, and anything that could open a multi-line construct switches to a degraded
//! mode that counts every opener to the end of the source. The estimate can therefore be too
//! high for odd programs, never (by construction) meaningfully too low; the sandbox thread's
//! stack keeps generous headroom for the uncounted cheap kinds.

/// Where the limit was crossed (1-based line and column in the scanned text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// What the previous significant token lets a `/` be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prev {
    /// Start, punctuator, operator keyword: a `/` starts a regular expression.
    Operator,
    /// A value (identifier, literal, `)`, `]`): a `/` divides.
    Value,
    /// The grammar decides (after `}`, `++`, `--`, contextual keywords).
    Ambiguous,
}

/// One open level.
#[derive(Debug, Clone, Copy)]
struct Level {
    /// `(`, `c` (a control paren: `if (`, `for (`...), `[`, `{`, `$` (template `${`), `<`.
    kind: u8,
    /// Right-recursive tokens counted inside this level since its last boundary.
    chain: usize,
}

/// How the next bytes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Ordinary tokens.
    Code,
    /// The rest of a line after an ambiguous `/` (or an HTML-like comment marker): openers and
    /// chain tokens count, closers and boundaries do not.
    Uncertain,
    /// Every opener and chain character counts, to the end of the source.
    Degraded,
}

pub(super) struct Scanner<'a> {
    pub(super) src: &'a [u8],
    pub(super) i: usize,
    /// Start of the token being read (for the error position).
    pub(super) tok: usize,
    pub(super) line: usize,
    pub(super) line_start: usize,
    pub(super) max: usize,
    pub(super) mode: Mode,
    /// Open levels; the program body itself is level 0 (never popped).
    stack: Vec<Level>,
    /// Sum of the chains plus the number of opened levels.
    pub(super) depth: usize,
    pub(super) prev: Prev,
    /// The previous significant token was `.` or `?.` (the next identifier is a property name).
    pub(super) after_dot: bool,
    /// The previous significant token was a control keyword (`if`, `for`, `while`, `with`).
    pub(super) after_control: bool,
}

/// Checks that `src` nests no deeper than `max` levels (see the module docs).
pub(crate) fn check_depth(src: &str, max: usize) -> Result<(), TooDeep> {
    let mut scanner = Scanner {
        src: src.as_bytes(),
        i: 0,
        tok: 0,
        line: 1,
        line_start: 0,
        max,
        mode: Mode::Code,
        stack: vec![Level {
            kind: b'{',
            chain: 0,
        }],
        depth: 0,
        prev: Prev::Operator,
        after_dot: false,
        after_control: false,
    };
    while scanner.i < scanner.src.len() {
        scanner.tok = scanner.i;
        match scanner.mode {
            Mode::Code => scanner.code_token()?,
            Mode::Uncertain => scanner.uncertain_byte()?,
            Mode::Degraded => scanner.degraded_byte()?,
        }
    }
    Ok(())
}

pub(super) fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'\\' || b >= 0x80
}

impl Scanner<'_> {
    pub(super) fn peek(&self, offset: usize) -> u8 {
        self.src.get(self.i + offset).copied().unwrap_or(0)
    }

    pub(super) fn error(&self) -> TooDeep {
        let start = self.line_start.min(self.tok);
        let column = self.src[start..self.tok.min(self.src.len())]
            .iter()
            .filter(|b| (**b & 0xC0) != 0x80)
            .count()
            + 1;
        TooDeep {
            line: self.line,
            column,
        }
    }

    pub(super) fn newline(&mut self) {
        self.line += 1;
        self.line_start = self.i + 1;
    }

    /// Whether a template substitution (`${`) is open.
    pub(super) fn in_template(&self) -> bool {
        self.stack.iter().any(|l| l.kind == b'$')
    }

    fn top(&mut self) -> &mut Level {
        self.stack.last_mut().expect("level 0 is never popped")
    }

    pub(super) fn deeper(&mut self) -> Result<(), TooDeep> {
        self.depth += 1;
        if self.depth > self.max {
            Err(self.error())
        } else {
            Ok(())
        }
    }

    /// One more right-recursive token in the current level.
    pub(super) fn chain(&mut self) -> Result<(), TooDeep> {
        self.top().chain += 1;
        self.deeper()
    }

    /// A sibling boundary (`,`, `;`, statement end): the current level's chain restarts.
    pub(super) fn boundary(&mut self) {
        let chain = std::mem::take(&mut self.top().chain);
        self.depth -= chain;
    }

    pub(super) fn push(&mut self, kind: u8) -> Result<(), TooDeep> {
        self.stack.push(Level { kind, chain: 0 });
        self.deeper()
    }

    /// Pops up to and including the innermost level opened by one of `kinds`; nothing when no
    /// such level is open. Returns the popped kind.
    pub(super) fn pop_to(&mut self, kinds: &[u8]) -> Option<u8> {
        let at = self
            .stack
            .iter()
            .skip(1)
            .rposition(|l| kinds.contains(&l.kind))?
            + 1;
        let mut kind = 0;
        while self.stack.len() > at {
            let level = self.stack.pop().expect("checked length");
            self.depth -= level.chain + 1;
            kind = level.kind;
        }
        Some(kind)
    }

    /// Reads one token in [`Mode::Code`].
    fn code_token(&mut self) -> Result<(), TooDeep> {
        let b = self.src[self.i];
        match b {
            b'\n' => {
                if self.prev == Prev::Value {
                    // A newline after a value may end the statement (ASI).
                    self.boundary();
                }
                self.newline();
                self.i += 1;
                return Ok(());
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                self.i += 1;
                return Ok(());
            }
            b'/' if self.peek(1) == b'/' => {
                self.skip_line_comment();
                return Ok(());
            }
            b'/' if self.peek(1) == b'*' => {
                self.skip_block_comment();
                return Ok(());
            }
            b'/' => match self.prev {
                Prev::Operator => {
                    self.skip_regex();
                    self.prev = Prev::Value;
                }
                Prev::Value => {
                    self.i += 1;
                    self.prev = Prev::Operator;
                }
                Prev::Ambiguous => {
                    self.i += 1;
                    self.uncertain();
                    return Ok(());
                }
            },
            b'\'' | b'"' => {
                self.skip_string(b);
                self.prev = Prev::Value;
            }
            b'`' => {
                self.i += 1;
                self.template_text()?;
            }
            b'(' => {
                let kind = if self.after_control { b'c' } else { b'(' };
                self.i += 1;
                self.push(kind)?;
                self.prev = Prev::Operator;
            }
            b'[' | b'{' => {
                self.i += 1;
                self.push(b)?;
                self.prev = Prev::Operator;
            }
            b')' => {
                self.i += 1;
                let popped = self.pop_to(b"(c");
                self.prev = if popped == Some(b'c') {
                    Prev::Operator
                } else {
                    Prev::Value
                };
            }
            b']' => {
                self.i += 1;
                self.pop_to(b"[");
                self.prev = Prev::Value;
            }
            b'}' => {
                self.i += 1;
                if self.pop_to(b"{$") == Some(b'$') {
                    // Back into the template's text.
                    self.template_text()?;
                } else {
                    self.boundary();
                    self.prev = Prev::Ambiguous;
                }
            }
            b'<' => {
                if self.src[self.i..].starts_with(b"<!--") {
                    // An HTML-like comment in a script, or `a < !--b`.
                    self.uncertain();
                    return Ok(());
                }
                self.i += 1;
                self.push(b'<')?;
                self.prev = Prev::Operator;
            }
            b'>' => {
                self.i += 1;
                if self.stack.len() > 1 && self.top().kind == b'<' {
                    self.pop_to(b"<");
                }
                self.prev = Prev::Operator;
            }
            b';' => {
                self.i += 1;
                while self.stack.len() > 1 && self.top().kind == b'<' {
                    self.pop_to(b"<");
                }
                self.boundary();
                self.prev = Prev::Operator;
            }
            b',' => {
                self.i += 1;
                self.boundary();
                self.prev = Prev::Operator;
            }
            b'=' => self.equals()?,
            b'?' => {
                if self.peek(1) == b'?' {
                    self.i += 2; // `??` is left-associative
                } else if self.peek(1) == b'.' && !self.peek(2).is_ascii_digit() {
                    self.i += 2; // `?.`
                    self.after_dot = true;
                    self.prev = Prev::Operator;
                    return Ok(());
                } else {
                    self.i += 1;
                    self.chain()?;
                }
                self.prev = Prev::Operator;
            }
            b':' => {
                self.i += 1;
                self.chain()?;
                self.prev = Prev::Operator;
            }
            b'+' | b'-' => {
                if self.peek(1) == b {
                    if b == b'-'
                        && self.peek(2) == b'>'
                        && self.src[self.line_start..self.i]
                            .iter()
                            .all(u8::is_ascii_whitespace)
                    {
                        // `-->` at the start of a line: an HTML-like comment.
                        self.uncertain();
                        return Ok(());
                    }
                    self.i += 2;
                    if self.prev != Prev::Value {
                        self.chain()?;
                    }
                    self.prev = Prev::Ambiguous;
                } else {
                    self.i += 1;
                    if self.prev != Prev::Value {
                        self.chain()?;
                    }
                    self.prev = Prev::Operator;
                }
            }
            b'!' | b'~' => {
                self.i += 1;
                if self.peek(0) != b'=' {
                    self.chain()?;
                }
                self.prev = Prev::Operator;
            }
            b'*' if self.peek(1) == b'*' => {
                self.i += 2;
                self.chain()?;
                self.prev = Prev::Operator;
            }
            b'.' if self.peek(1).is_ascii_digit() => self.skip_number(),
            b'.' => {
                if self.src[self.i..].starts_with(b"...") {
                    self.i += 3;
                    self.chain()?;
                    self.prev = Prev::Operator;
                } else {
                    self.i += 1;
                    self.after_dot = true;
                    self.prev = Prev::Operator;
                    return Ok(());
                }
            }
            b'0'..=b'9' => self.skip_number(),
            _ if is_ident_byte(b) || b == b'#' => return self.identifier(),
            _ => {
                self.i += 1;
                self.prev = Prev::Operator;
            }
        }
        self.after_dot = false;
        self.after_control = false;
        Ok(())
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
