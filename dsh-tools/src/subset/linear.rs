//! A fast path for the most common `pattern`s: a sequence of one-character atoms (literals,
//! classes, class escapes, `.`), each with an optional greedy quantifier, anchored at the start
//! (or a plain literal), where greedy matching is exact: no repeated atom can take a character
//! that could start what follows it (`^[\w.-]+/[\w.-]+$`, `^[A-Z]{2}\d{4}$`). Such a pattern is
//! decided in one left-to-right pass over the string, without allocating; every other pattern
//! (groups, alternation, lookaround, backreferences, `\b`, Unicode properties, overlapping
//! repeats) runs in regress, the engine whose ECMAScript semantics this path reproduces for its
//! subset (a property test compares the two).

/// The highest code point.
const MAX: u32 = 0x10_FFFF;

/// A set of code points: a bitmask for ASCII and sorted, disjoint ranges above it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CharSet {
    ascii: u128,
    ranges: Box<[(u32, u32)]>,
}

impl CharSet {
    /// The set of the sorted, disjoint, inclusive ranges `ranges`.
    fn from_ranges(ranges: &[(u32, u32)]) -> Self {
        let mut ascii = 0u128;
        let mut above = Vec::new();
        for &(lo, hi) in ranges {
            for c in lo..=hi.min(127) {
                ascii |= 1 << c;
            }
            if hi >= 128 {
                above.push((lo.max(128), hi));
            }
        }
        Self {
            ascii,
            ranges: above.into(),
        }
    }

    #[inline(always)]
    fn contains(&self, c: char) -> bool {
        let c = u32::from(c);
        if c < 128 {
            return self.ascii & (1 << c) != 0;
        }
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
    }
}

/// Sorts and merges ranges.
fn normalize(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// The complement of normalized ranges over all code points.
fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(lo, hi) in ranges {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi.saturating_add(1);
    }
    if next <= MAX {
        out.push((next, MAX));
    }
    out
}

/// Whether two normalized range lists share a code point.
fn intersects(a: &[(u32, u32)], b: &[(u32, u32)]) -> bool {
    let (mut i, mut j) = (0, 0);
    while let (Some(&(alo, ahi)), Some(&(blo, bhi))) = (a.get(i), b.get(j)) {
        if alo <= bhi && blo <= ahi {
            return true;
        }
        if ahi < bhi {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

/// ECMAScript's `\d`.
const DIGITS: &[(u32, u32)] = &[(0x30, 0x39)];
/// ECMAScript's `\w` (without the `i` flag).
const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
/// ECMAScript's `\s`: WhiteSpace (TAB, VT, FF, ZWNBSP and the `Zs` category) and
/// LineTerminator (LF, CR, LS, PS).
const SPACE: &[(u32, u32)] = &[
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];
/// What `.` does not match without the `s` flag: the line terminators.
const LINE_TERMINATORS: &[(u32, u32)] = &[(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)];

/// One atom: a set of characters taken between `min` and `max` times (greedily).
#[derive(Debug, Clone)]
struct Atom {
    ranges: Vec<(u32, u32)>,
    set: CharSet,
    min: u32,
    max: u32,
}

/// A pattern the fast path decides.
#[derive(Debug, Clone)]
pub(crate) struct Linear {
    atoms: Box<[Atom]>,
    /// Anchored at the end (`$`).
    end: bool,
    /// Not anchored at the start: only plain literals are, and they are matched as substrings.
    literal: Option<Box<str>>,
}

/// Reads the pattern as a sequence of atoms, or `None` when it is not in the subset.
struct Parser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl Parser<'_> {
    /// A class escape's ranges, or a single character, after a `\`.
    fn escape(&mut self, in_class: bool) -> Option<Vec<(u32, u32)>> {
        let c = self.chars.next()?;
        let single = |c: char| Some(vec![(u32::from(c), u32::from(c))]);
        match c {
            'd' => Some(DIGITS.to_vec()),
            'D' => Some(complement(DIGITS)),
            'w' => Some(WORD.to_vec()),
            'W' => Some(complement(WORD)),
            's' => Some(SPACE.to_vec()),
            'S' => Some(complement(SPACE)),
            't' => single('\t'),
            'n' => single('\n'),
            'v' => single('\u{b}'),
            'f' => single('\u{c}'),
            'r' => single('\r'),
            'b' if in_class => single('\u{8}'),
            '-' if in_class => single('-'),
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => single(c),
            'x' => {
                let hex: String = [self.chars.next()?, self.chars.next()?].iter().collect();
                let code = u32::from_str_radix(&hex, 16).ok()?;
                Some(vec![(code, code)])
            }
            'u' if self.chars.peek() != Some(&'{') => {
                let mut hex = String::new();
                for _ in 0..4 {
                    hex.push(self.chars.next()?);
                }
                let code = u32::from_str_radix(&hex, 16).ok()?;
                // A surrogate may pair with the next escape: leave it to regress.
                char::from_u32(code)?;
                Some(vec![(code, code)])
            }
            _ => None,
        }
    }

    /// The characters of a class, after its `[`.
    fn class(&mut self) -> Option<Vec<(u32, u32)>> {
        let negated = self.chars.peek() == Some(&'^');
        if negated {
            self.chars.next();
        }
        let mut ranges = Vec::new();
        loop {
            let c = self.chars.next()?;
            let item = match c {
                ']' => break,
                '\\' => self.escape(true)?,
                '[' => return None,
                c => vec![(u32::from(c), u32::from(c))],
            };
            // A range `a-z` (a `-` first or last is a literal).
            if self.chars.peek() == Some(&'-') {
                let mut ahead = self.chars.clone();
                ahead.next();
                if ahead.peek().is_some_and(|&n| n != ']') {
                    self.chars.next();
                    let end = match self.chars.next()? {
                        '\\' => self.escape(true)?,
                        '[' => return None,
                        c => vec![(u32::from(c), u32::from(c))],
                    };
                    let ([(lo, lo_end)], [(hi, hi_end)]) = (item.as_slice(), end.as_slice()) else {
                        return None;
                    };
                    if lo != lo_end || hi != hi_end || lo > hi {
                        return None;
                    }
                    ranges.push((*lo, *hi));
                    continue;
                }
            }
            ranges.extend(item);
        }
        let ranges = normalize(ranges);
        Some(if negated { complement(&ranges) } else { ranges })
    }

    /// A greedy quantifier after an atom: `(min, max)`, `(1, 1)` when there is none.
    fn quantifier(&mut self) -> Option<(u32, u32)> {
        let bounds = match self.chars.peek() {
            Some('?') => (0, 1),
            Some('*') => (0, u32::MAX),
            Some('+') => (1, u32::MAX),
            Some('{') => {
                self.chars.next();
                let mut text = String::new();
                loop {
                    match self.chars.next()? {
                        '}' => break,
                        c => text.push(c),
                    }
                }
                let (min, max) = match text.split_once(',') {
                    None => {
                        let n = text.parse().ok()?;
                        (n, n)
                    }
                    Some((min, "")) => (min.parse().ok()?, u32::MAX),
                    Some((min, max)) => (min.parse().ok()?, max.parse().ok()?),
                };
                if min > max || text.starts_with(',') {
                    return None;
                }
                // A lazy quantifier: leave it to regress.
                if self.chars.peek() == Some(&'?') {
                    return None;
                }
                return Some((min, max));
            }
            _ => return Some((1, 1)),
        };
        self.chars.next();
        if self.chars.peek() == Some(&'?') {
            return None;
        }
        Some(bounds)
    }
}

impl Linear {
    /// The fast path for `source` (a pattern regress compiled with the `u` flag), or `None`.
    pub(crate) fn compile(source: &str) -> Option<Self> {
        let mut parser = Parser {
            chars: source.chars().peekable(),
        };
        let start = parser.chars.peek() == Some(&'^');
        if start {
            parser.chars.next();
        }
        let mut atoms = Vec::new();
        let mut end = false;
        while let Some(c) = parser.chars.next() {
            let ranges = match c {
                '$' if parser.chars.peek().is_none() => {
                    end = true;
                    break;
                }
                '\\' => parser.escape(false)?,
                '[' => parser.class()?,
                '.' => complement(LINE_TERMINATORS),
                '^' | '$' | '(' | ')' | '|' | '*' | '+' | '?' | '{' | '}' | ']' => return None,
                c => vec![(u32::from(c), u32::from(c))],
            };
            let (min, max) = parser.quantifier()?;
            atoms.push(Atom {
                set: CharSet::from_ranges(&ranges),
                ranges,
                min,
                max,
            });
        }
        // Greedy is exact when no repeated atom can take what may start its continuation.
        for (i, atom) in atoms.iter().enumerate() {
            if atom.min == atom.max {
                continue;
            }
            for next in atoms.get(i + 1..).unwrap_or_default() {
                if intersects(&atom.ranges, &next.ranges) {
                    return None;
                }
                if next.min > 0 {
                    break;
                }
            }
        }
        let literal = if start {
            None
        } else {
            // Unanchored: only a plain literal, found as a substring.
            let text: Option<String> = atoms
                .iter()
                .map(|a| match a.ranges.as_slice() {
                    [(lo, hi)] if lo == hi && a.min == 1 && a.max == 1 => char::from_u32(*lo),
                    _ => None,
                })
                .collect();
            Some(text?.into())
        };
        Some(Self {
            atoms: atoms.into(),
            end,
            literal,
        })
    }

    /// Whether the pattern matches somewhere in `text` (for an anchored pattern: at its start).
    #[inline]
    pub(crate) fn is_match(&self, text: &str) -> bool {
        if let Some(literal) = &self.literal {
            return if self.end {
                text.ends_with(&**literal)
            } else {
                text.contains(&**literal)
            };
        }
        let mut rest = text;
        for atom in self.atoms.iter() {
            let mut count = 0u32;
            while count < atom.max {
                let mut chars = rest.chars();
                match chars.next() {
                    Some(c) if atom.set.contains(c) => {
                        rest = chars.as_str();
                        count += 1;
                    }
                    _ => break,
                }
            }
            if count < atom.min {
                return false;
            }
        }
        !self.end || rest.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn regress_matches(pattern: &str, text: &str) -> bool {
        regress::Regex::with_flags(pattern, "u")
            .expect("compiles")
            .find(text)
            .is_some()
    }

    #[test]
    fn the_common_shapes_take_the_fast_path() {
        for pattern in [
            r"^[\w.-]+/[\w.-]+$",
            r"^[A-Za-z0-9._/-]{1,100}$",
            r"^\d{3}-\d{4}$",
            "^[^@]+@",
            "^$",
            "foo",
            "bar$",
            r"^\u0041\x42.?$",
        ] {
            assert!(Linear::compile(pattern).is_some(), "{pattern}");
        }
        for pattern in [
            "a+$",
            "^(ab)+$",
            "^a|b$",
            "^a*a$",
            r"^\w+\d$",
            r"\bfoo",
            "^a+?b",
            r"^\p{L}+$",
            "^(?=a)",
            "^a{2,}?",
        ] {
            assert!(Linear::compile(pattern).is_none(), "{pattern}");
        }
        let repo = Linear::compile(r"^[\w.-]+/[\w.-]+$").unwrap();
        assert!(repo.is_match("rust-lang/rust"));
        assert!(!repo.is_match("rust-lang/"));
        assert!(!repo.is_match("ржавчина/rust"));
    }

    /// Atoms of the subset (and a few outside it, which must make `compile` say no).
    fn atom() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "a", "b", "é", "😀", ".", r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", r"\.", r"\/",
            r"\u00e9", r"\x41", "[ab]", "[^a]", "[a-c]", "[^\\d]", "[\\w.-]", "[-a]", "[a-]",
            "[é-ü]", "[\\s\\d]", "[\\b]", "[]", "[^]", "(a)", "a|b", "\\b",
        ])
        .prop_map(str::to_owned)
    }

    fn quantifier() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "", "", "", "?", "*", "+", "{2}", "{0,1}", "{1,3}", "{2,}", "+?",
        ])
        .prop_map(str::to_owned)
    }

    fn pattern() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            prop::collection::vec((atom(), quantifier()), 0..5),
            any::<bool>(),
        )
            .prop_map(|(start, atoms, end)| {
                let mut p = String::from(if start { "^" } else { "" });
                for (a, q) in atoms {
                    p.push_str(&a);
                    p.push_str(&q);
                }
                if end {
                    p.push('$');
                }
                p
            })
    }

    fn text() -> impl Strategy<Value = String> {
        let alphabet = prop::sample::select(vec![
            'a', 'b', 'c', 'A', '0', '9', '.', '/', '-', '_', ' ', '\t', '\n', '\r', '\u{8}',
            '\u{a0}', '\u{feff}', '\u{2028}', '\u{3000}', 'é', 'ü', '٣', '😀',
        ]);
        prop::collection::vec(alphabet, 0..8).prop_map(|c| c.into_iter().collect())
    }

    /// Wherever the fast path applies, it decides exactly as regress does; the generator must
    /// reach the fast path often, with both answers.
    #[test]
    fn the_fast_path_agrees_with_regress() {
        use proptest::test_runner::{Config, TestCaseError, TestRunner};
        use std::cell::Cell;
        let (fast, matched, refused) = (Cell::new(0u32), Cell::new(0u32), Cell::new(0u32));
        let mut runner = TestRunner::new(Config::with_cases(20_000));
        let outcome = runner.run(&(pattern(), text()), |(pattern, text)| {
            if regress::Regex::with_flags(&pattern, "u").is_err() {
                return Ok(());
            }
            let Some(linear) = Linear::compile(&pattern) else {
                refused.set(refused.get() + 1);
                return Ok(());
            };
            fast.set(fast.get() + 1);
            let expected = regress_matches(&pattern, &text);
            matched.set(matched.get() + u32::from(expected));
            if linear.is_match(&text) == expected {
                Ok(())
            } else {
                Err(TestCaseError::fail(format!(
                    "pattern {pattern:?} on {text:?}: regress says {expected}"
                )))
            }
        });
        if let Err(failure) = outcome {
            panic!("{failure}");
        }
        let (fast, matched, refused) = (fast.get(), matched.get(), refused.get());
        assert!(
            fast > 5_000 && matched > 1_000 && fast - matched > 1_000 && refused > 1_000,
            "fast path {fast} (matched {matched}), left to regress {refused}"
        );
    }
}
