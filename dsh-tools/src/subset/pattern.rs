//! `pattern`: ECMA-262 regular expressions, as JSON Schema specifies them, compiled once.
//!
//! The engine is [`regress`], a backtracking engine for ECMAScript syntax, used with the `u` flag
//! (JavaScript's `new RegExp(p, "u")`): `\d` is `[0-9]`, `\w` is `[A-Za-z0-9_]`, `\b` is the
//! ASCII word boundary, lookahead and lookbehind work, and `.` matches any code point but the
//! line terminators. A pattern is not anchored: it must match somewhere in the string.
//!
//! Backtracking has no linear-time guarantee: regress documents none, and a pattern such as
//! `^(a+)+$` takes time exponential in the length of a non-matching string. Patterns are
//! therefore screened when a schema is checked, and refused when they repeat a sub-pattern that
//! itself repeats without bound (`(a+)+`, `(a*)*`, `(\w+\s?)*`, `(.*a){8}`) or repeat an
//! alternation whose branches overlap textually (`(a|a)*`, `(a|ab)+`). The screen is a syntactic
//! one: it refuses the known catastrophic shapes, not every slow pattern; what it lets through
//! runs in time polynomial in the string's length, of a degree bounded by the number of
//! unbounded quantifiers in a row (`docs/CONTRACTS.md`, "Schema vocabulary"). The common
//! shapes (a run of single-character atoms anchored at the start, like `^[\w.-]+/[\w.-]+$`)
//! skip the engine: [`super::linear`] decides them in one pass, with the same answers.

use std::fmt;

use super::linear::Linear;

/// A compiled `pattern`.
#[derive(Clone)]
pub(crate) struct Pattern {
    pub(crate) regex: regress::Regex,
    /// The one-pass matcher of the common shapes, when the pattern has one (see
    /// [`super::linear`]).
    linear: Option<Linear>,
    /// The pattern as written (for messages).
    pub(crate) source: Box<str>,
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}

impl Pattern {
    /// Compiles `source` with the `u` flag, after the screen; the error is the reason (for a
    /// `<path>.pattern …` violation).
    pub(crate) fn compile(source: &str) -> Result<Self, String> {
        let regex = regress::Regex::with_flags(source, "u")
            .map_err(|e| format!("is not a valid ECMAScript regular expression: {e}"))?;
        if let Some(shape) = catastrophic_shape(source) {
            return Err(format!(
                "can take exponential time on a non-matching string ({shape}); rewrite it without nested repetition"
            ));
        }
        Ok(Self {
            regex,
            linear: Linear::compile(source),
            source: source.into(),
        })
    }

    /// Whether the pattern matches somewhere in `text`.
    #[inline]
    pub(crate) fn is_match(&self, text: &str) -> bool {
        match &self.linear {
            Some(linear) => linear.is_match(text),
            None => self.regex.find(text).is_some(),
        }
    }
}

/// Whether `source` compiles and passes the screen (the verdict of [`Pattern::compile`]).
pub(crate) fn is_supported_pattern(source: &str) -> bool {
    regress::Regex::with_flags(source, "u").is_ok() && catastrophic_shape(source).is_none()
}

/// One open group of the screen.
#[derive(Default)]
struct Group {
    /// Some quantifier inside repeats without bound (or a nested group does).
    unbounded: bool,
    /// The top-level branches, as written.
    branches: Vec<String>,
    current: String,
}

/// What the last atom was, for the quantifier that may follow it.
enum Atom {
    None,
    Simple,
    Group { unbounded: bool, overlapping: bool },
}

/// Names the first catastrophic shape in `source`, if any (see the module documentation).
/// The pattern is known to be syntactically valid.
fn catastrophic_shape(source: &str) -> Option<&'static str> {
    let chars: Vec<char> = source.chars().collect();
    let mut stack: Vec<Group> = vec![Group::default()];
    let mut atom = Atom::None;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let start = i;
        i += 1;
        match c {
            '\\' => {
                i += 1;
                atom = Atom::Simple;
            }
            '[' => {
                while let Some(&d) = chars.get(i) {
                    i += 1;
                    match d {
                        '\\' => i += 1,
                        ']' => break,
                        _ => {}
                    }
                }
                atom = Atom::Simple;
            }
            '(' => {
                stack.push(Group::default());
                atom = Atom::None;
                // `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`: the group's text starts after.
                if chars.get(i) == Some(&'?') {
                    i += 1;
                    if chars.get(i) == Some(&'<')
                        && !matches!(chars.get(i + 1), Some('=') | Some('!'))
                    {
                        while chars.get(i).is_some_and(|&d| d != '>') {
                            i += 1;
                        }
                    }
                    i += 1;
                }
                continue;
            }
            ')' => {
                let mut group = stack.pop().unwrap_or_default();
                let done = std::mem::take(&mut group.current);
                group.branches.push(done);
                let overlapping = group.branches.len() > 1 && overlap(&group.branches);
                if let Some(parent) = stack.last_mut() {
                    parent.unbounded |= group.unbounded;
                }
                atom = Atom::Group {
                    unbounded: group.unbounded,
                    overlapping,
                };
                if let Some(parent) = stack.last_mut() {
                    parent.current.push('(');
                    parent.current.push_str(&group.branches.join("|"));
                    parent.current.push(')');
                }
                continue;
            }
            '|' => {
                if let Some(group) = stack.last_mut() {
                    let done = std::mem::take(&mut group.current);
                    group.branches.push(done);
                }
                atom = Atom::None;
                continue;
            }
            '*' | '+' | '?' | '{' => {
                let (min_max, end) = quantifier(&chars, start);
                if let Some((_, max)) = min_max {
                    i = end;
                    if chars.get(i) == Some(&'?') {
                        i += 1;
                    }
                    let unbounded = max.is_none();
                    let repeats = max.is_none_or(|m| m > 1);
                    match atom {
                        Atom::Group {
                            unbounded: inner, ..
                        } if inner && repeats => return Some("a repeated group repeats inside"),
                        Atom::Group { overlapping, .. } if overlapping && unbounded => {
                            return Some("a repeated alternation has overlapping branches");
                        }
                        _ => {}
                    }
                    if unbounded && let Some(group) = stack.last_mut() {
                        group.unbounded = true;
                    }
                    atom = Atom::None;
                } else {
                    atom = Atom::Simple;
                }
            }
            _ => atom = Atom::Simple,
        }
        let text: String = chars.get(start..i).unwrap_or_default().iter().collect();
        if let Some(group) = stack.last_mut() {
            group.current.push_str(&text);
        }
    }
    None
}

/// The quantifier at `start` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`): `((min, max), end)`, or
/// `None` for a `{` that is a literal brace.
fn quantifier(chars: &[char], start: usize) -> (Option<(u64, Option<u64>)>, usize) {
    match chars.get(start) {
        Some('*') => (Some((0, None)), start + 1),
        Some('+') => (Some((1, None)), start + 1),
        Some('?') => (Some((0, Some(1))), start + 1),
        Some('{') => {
            let close = chars
                .get(start..)
                .and_then(|rest| rest.iter().position(|&c| c == '}'));
            let Some(close) = close.map(|c| start + c) else {
                return (None, start + 1);
            };
            let body: String = chars
                .get(start + 1..close)
                .unwrap_or_default()
                .iter()
                .collect();
            let parsed = match body.split_once(',') {
                None => body.parse().ok().map(|n| (n, Some(n))),
                Some((min, "")) => min.parse().ok().map(|n| (n, None)),
                Some((min, max)) => min.parse().ok().zip(max.parse().ok().map(Some)),
            };
            match parsed {
                Some(bounds) => (Some(bounds), close + 1),
                None => (None, start + 1),
            }
        }
        _ => (None, start + 1),
    }
}

/// Whether two branches can match the same text at the start: equal, or one a prefix of the
/// other (a textual approximation).
fn overlap(branches: &[String]) -> bool {
    branches.iter().enumerate().any(|(i, a)| {
        branches
            .iter()
            .skip(i + 1)
            .any(|b| a.starts_with(b.as_str()) || b.starts_with(a.as_str()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecmascript_semantics_with_the_u_flag() {
        let digits = Pattern::compile(r"^\d+$").unwrap();
        assert!(digits.is_match("0123456789"));
        // Arabic-Indic digits are not `\d` in ECMAScript (they are in the `regex` crate).
        assert!(!digits.is_match("\u{0660}\u{0661}"));
        let word = Pattern::compile(r"^\w+$").unwrap();
        assert!(!word.is_match("é"));
        let lookahead = Pattern::compile(r"^(?=.*\d)(?=.*[a-z]).{8,}$").unwrap();
        assert!(lookahead.is_match("abcdefg1"));
        assert!(!lookahead.is_match("abcdefgh"));
        let lookbehind = Pattern::compile(r"(?<=\$)\d+").unwrap();
        assert!(lookbehind.is_match("cost $42") && !lookbehind.is_match("cost 42"));
        // Unanchored: a match anywhere counts.
        assert!(Pattern::compile("b").unwrap().is_match("abc"));
        // One code point per `.` under the `u` flag.
        assert!(Pattern::compile("^.$").unwrap().is_match("😀"));
    }

    #[test]
    fn invalid_patterns_name_the_engine_error() {
        let error = Pattern::compile("(unclosed").unwrap_err();
        assert!(
            error.starts_with("is not a valid ECMAScript regular expression: "),
            "{error}"
        );
        assert!(Pattern::compile(r"\p{Unknown_Property}").is_err());
        assert!(!is_supported_pattern("[z-a]"));
    }

    #[test]
    fn catastrophic_shapes_are_refused() {
        for hostile in [
            "^(a+)+$",
            "(a*)*",
            r"^(\w+\s?)*$",
            "(.*a){8}",
            "^(a|a)*$",
            "(a|ab)+c",
            "((ab)*c)+",
            "(?:x+y?)+",
        ] {
            let error = Pattern::compile(hostile).unwrap_err();
            assert!(error.contains("exponential time"), "{hostile}: {error}");
        }
        for fine in [
            r"^[\w.-]+/[\w.-]+$",
            "^(foo|bar)*$",
            "(ab)+",
            "(a+){1}",
            r"^\d{4}-\d{2}-\d{2}$",
            "a{2,}b*",
            r"^\(a+\)+$",
            "[(a+)]+",
            r"(?<year>\d{4})-(?<m>\d\d)",
        ] {
            assert!(Pattern::compile(fine).is_ok(), "{fine}");
        }
    }
}
