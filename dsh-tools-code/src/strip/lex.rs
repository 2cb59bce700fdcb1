//! The scanner's lexical part: strings, comments, regular expressions, template text, and the
//! conservative modes used where the grammar alone decides what a `/` is.

use super::scan::{Mode, Prev, Scanner, TooDeep, is_ident_byte};

const REGEX_KEYWORDS: &[&[u8]] = &[
    b"return",
    b"typeof",
    b"instanceof",
    b"in",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"case",
    b"do",
    b"else",
    b"await",
];
const AMBIGUOUS_KEYWORDS: &[&[u8]] = &[b"yield", b"of", b"let", b"static", b"async"];
const CHAIN_KEYWORDS: &[&[u8]] = &[
    b"if", b"else", b"for", b"while", b"with", b"do", b"typeof", b"void", b"delete", b"await",
    b"new", b"yield", b"keyof", b"infer",
];
const CONTROL_KEYWORDS: &[&[u8]] = &[b"if", b"for", b"while", b"with"];

impl Scanner<'_> {
    pub(super) fn equals(&mut self) -> Result<(), TooDeep> {
        let before = if self.i > 0 { self.src[self.i - 1] } else { 0 };
        if self.peek(1) == b'>' {
            self.i += 2;
            self.chain()?;
        } else if self.peek(1) == b'=' {
            self.i += if self.peek(2) == b'=' { 3 } else { 2 };
        } else {
            self.i += 1;
            if before != b'!' {
                self.chain()?;
            }
        }
        self.prev = Prev::Operator;
        Ok(())
    }

    pub(super) fn identifier(&mut self) -> Result<(), TooDeep> {
        let start = self.i;
        self.i += 1;
        while self.i < self.src.len() && is_ident_byte(self.src[self.i]) {
            self.i += 1;
        }
        let word = &self.src[start..self.i];
        let property = std::mem::take(&mut self.after_dot);
        self.after_control = false;
        if property {
            self.prev = Prev::Value;
            return Ok(());
        }
        if CHAIN_KEYWORDS.contains(&word) {
            self.chain()?;
        }
        self.after_control = CONTROL_KEYWORDS.contains(&word);
        self.prev = if REGEX_KEYWORDS.contains(&word) || self.after_control {
            Prev::Operator
        } else if AMBIGUOUS_KEYWORDS.contains(&word) {
            Prev::Ambiguous
        } else {
            Prev::Value
        };
        Ok(())
    }

    /// Switches to the conservative reading of the rest of the line.
    pub(super) fn uncertain(&mut self) {
        // Inside a template substitution a `}` on this line might return to template text
        // (or not): nothing after it can be trusted.
        self.mode = if self.in_template() {
            Mode::Degraded
        } else {
            Mode::Uncertain
        };
    }

    pub(super) fn skip_number(&mut self) {
        self.i += 1;
        while self.i < self.src.len()
            && (is_ident_byte(self.src[self.i]) || self.src[self.i] == b'.')
        {
            self.i += 1;
        }
        self.prev = Prev::Value;
    }

    pub(super) fn skip_line_comment(&mut self) {
        while self.i < self.src.len() && self.src[self.i] != b'\n' {
            self.i += 1;
        }
    }

    pub(super) fn skip_block_comment(&mut self) {
        self.i += 2;
        while self.i < self.src.len() {
            if self.src[self.i] == b'*' && self.peek(1) == b'/' {
                self.i += 2;
                return;
            }
            if self.src[self.i] == b'\n' {
                self.newline();
            }
            self.i += 1;
        }
    }

    pub(super) fn skip_string(&mut self, quote: u8) {
        self.i += 1;
        while self.i < self.src.len() {
            match self.src[self.i] {
                b'\\' => {
                    if self.peek(1) == b'\n' {
                        self.i += 1;
                        self.newline();
                        self.i += 1;
                    } else {
                        self.i += 2;
                    }
                }
                b'\n' => return, // unterminated: swc reports it
                b if b == quote => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }

    /// A regular expression literal in a position where the grammar makes it one.
    pub(super) fn skip_regex(&mut self) {
        self.i += 1;
        let mut in_class = false;
        while self.i < self.src.len() {
            match self.src[self.i] {
                b'\\' => self.i += 1,
                b'\n' => return, // unterminated: swc reports it
                b'[' => in_class = true,
                b']' => in_class = false,
                b'/' if !in_class => {
                    self.i += 1;
                    while self.i < self.src.len() && is_ident_byte(self.src[self.i]) {
                        self.i += 1;
                    }
                    return;
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    /// Template text after `` ` `` or after the `}` closing a substitution, up to the closing
    /// `` ` `` or the next `${`.
    pub(super) fn template_text(&mut self) -> Result<(), TooDeep> {
        while self.i < self.src.len() {
            match self.src[self.i] {
                b'\\' => {
                    if self.peek(1) == b'\n' {
                        self.i += 1;
                        self.newline();
                        self.i += 1;
                    } else {
                        self.i += 2;
                    }
                }
                b'`' => {
                    self.i += 1;
                    self.prev = Prev::Value;
                    return Ok(());
                }
                b'$' if self.peek(1) == b'{' => {
                    self.tok = self.i;
                    self.i += 2;
                    self.push(b'$')?;
                    self.prev = Prev::Operator;
                    return Ok(());
                }
                b'\n' => {
                    self.newline();
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        Ok(())
    }

    /// Reads one byte in [`Mode::Uncertain`].
    pub(super) fn uncertain_byte(&mut self) -> Result<(), TooDeep> {
        let b = self.src[self.i];
        match b {
            b'\n' => {
                self.newline();
                self.mode = Mode::Code;
                self.prev = Prev::Ambiguous;
                self.after_dot = false;
                self.after_control = false;
            }
            b'`' => {
                self.mode = Mode::Degraded;
                return Ok(());
            }
            b'\\' if matches!(self.peek(1), b'\n' | b'\r') => {
                self.mode = Mode::Degraded;
                return Ok(());
            }
            b'/' if self.peek(1) == b'*' => {
                let rest = &self.src[self.i + 2..];
                let line_end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                if !rest[..line_end].windows(2).any(|w| w == b"*/") {
                    self.mode = Mode::Degraded;
                    return Ok(());
                }
            }
            b'(' | b'[' | b'{' | b'<' => {
                self.i += 1;
                return self.push(b);
            }
            b'=' | b'?' | b':' | b'!' | b'~' | b'+' | b'-' | b'*' => {
                self.i += 1;
                return self.chain();
            }
            _ => {}
        }
        self.i += 1;
        Ok(())
    }

    /// Reads one byte in [`Mode::Degraded`].
    pub(super) fn degraded_byte(&mut self) -> Result<(), TooDeep> {
        let b = self.src[self.i];
        if b == b'\n' {
            self.newline();
        }
        self.i += 1;
        if matches!(
            b,
            b'(' | b'[' | b'{' | b'<' | b'=' | b'?' | b':' | b'!' | b'~' | b'+' | b'-' | b'*'
        ) {
            self.deeper()?;
        }
        Ok(())
    }
}
