//! The intermediate type representation between a JSON Schema and its TypeScript text.
//!
//! Both lowerings ([`super::reference`] and [`super::wide`]) build an arena of [`Ty`] nodes in
//! post-order (children before parents), so every node can compute at creation time whether its
//! printed text contains a `|` or an `&` — the array-parenthesisation rule (`docs/CONTRACTS.md`,
//! "TypeScript types", rule 4) is textual. Two printers read the arena: [`super::text`] (the
//! `json_schema_to_ts` text) and [`super::ast`] (swc AST for the SDK). The arena is flat (`Vec`),
//! so dropping it never recurses, whatever the schema depth.

/// The index of a node in a [`Types`] arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TyId(u32);

impl TyId {
    /// `string`.
    pub(crate) const STRING: TyId = TyId(0);
    /// `number` (JSON Schema `number` and `integer`).
    pub(crate) const NUMBER: TyId = TyId(1);
    /// `boolean`.
    pub(crate) const BOOLEAN: TyId = TyId(2);
    /// `null`.
    pub(crate) const NULL: TyId = TyId(3);
    /// `unknown`: what an unsupported node degrades to.
    pub(crate) const UNKNOWN: TyId = TyId(4);
    /// `never`.
    pub(crate) const NEVER: TyId = TyId(5);
    /// `JsonValue`: any lossless JSON value.
    pub(crate) const JSON: TyId = TyId(6);
    /// `JsonValue[]`.
    pub(crate) const JSON_ARRAY: TyId = TyId(7);
    /// `Record<string, JsonValue>`.
    pub(crate) const RECORD_JSON: TyId = TyId(8);
    /// `Record<string, never>`.
    pub(crate) const RECORD_NEVER: TyId = TyId(9);

    fn index(self) -> usize {
        self.0 as usize
    }
}

/// A TypeScript keyword type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kw {
    String,
    Number,
    Boolean,
    Null,
    Unknown,
    Never,
}

impl Kw {
    /// The keyword's text.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Kw::String => "string",
            Kw::Number => "number",
            Kw::Boolean => "boolean",
            Kw::Null => "null",
            Kw::Unknown => "unknown",
            Kw::Never => "never",
        }
    }
}

/// A literal type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit<'s> {
    /// A string literal; printed with `JSON.stringify` quoting.
    Str(&'s str),
    /// A number literal: its JavaScript text (`1e+21`, `-0.5`) and value.
    Num(String, f64),
    /// `true` / `false`.
    Bool(bool),
}

/// How a tuple element is declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ElemKind {
    /// `T`
    Required,
    /// `T?`
    Optional,
    /// `...T` (the element type is an array type).
    Rest,
}

/// One tuple element.
#[derive(Debug, Clone)]
pub(crate) struct Elem {
    pub(crate) ty: TyId,
    pub(crate) kind: ElemKind,
}

/// One member of an object type literal.
#[derive(Debug, Clone)]
pub(crate) struct Member<'s> {
    /// The property name, unquoted (see [`is_bare_key`]).
    pub(crate) key: &'s str,
    /// Declared with `?`.
    pub(crate) optional: bool,
    /// The doc text (already collapsed to one line), without comment delimiters; the text
    /// printer escapes `*/` in it.
    pub(crate) doc: Option<String>,
    pub(crate) ty: TyId,
}

/// One node.
#[derive(Debug, Clone)]
pub(crate) enum Ty<'s> {
    Kw(Kw),
    /// A reference to the `JsonValue` alias.
    JsonValue,
    Lit(Lit<'s>),
    /// `A | B | …` (at least two members).
    Union(Vec<TyId>),
    /// `A & B & …` (at least two members).
    Inter(Vec<TyId>),
    /// `T[]`.
    Array(TyId),
    /// `[A, B?, ...C[]]`.
    Tuple(Vec<Elem>),
    /// `Record<string, T>`.
    Record(TyId),
    /// `{ … }`: members in declared order.
    Object(Vec<Member<'s>>),
    /// A recursive `$ref` target (index into [`Types::alias`]). The SDK declares it as a named
    /// alias; `json_schema_to_ts` text inlines it once and prints `unknown` where it recurs.
    Alias(u32),
}

/// A recursive schema: its name hint (from the target's `title` or pointer) and its body.
#[derive(Debug, Clone)]
pub(crate) struct Alias {
    pub(crate) hint: String,
    pub(crate) body: TyId,
    /// The body reaches itself without passing through an object, array or tuple
    /// (`X = string | X`): TypeScript rejects such an alias, so it is inlined once instead and
    /// recurs as `unknown`, as in text.
    pub(crate) inline: bool,
}

/// An arena of type nodes; see the module documentation.
#[derive(Debug)]
pub(crate) struct Types<'s> {
    nodes: Vec<Ty<'s>>,
    /// Whether the printed text of each node contains `|` or `&` (all `false` when not
    /// tracked).
    bar_amp: Vec<bool>,
    /// Whether `bar_amp` is computed: the text printer reads it, the SDK's AST does not.
    track_bar_amp: bool,
    aliases: Vec<Alias>,
}

impl Default for Types<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'s> Types<'s> {
    /// A new arena holding the fixed nodes (`TyId::STRING` … `TyId::RECORD_NEVER`).
    pub(crate) fn new() -> Self {
        Self::with_tracking(true)
    }

    /// [`Types::new`] for the SDK's AST, which parenthesises by node kind: [`Types::bar_amp`]
    /// is not computed (always `false`).
    pub(crate) fn for_ast() -> Self {
        Self::with_tracking(false)
    }

    fn with_tracking(track_bar_amp: bool) -> Self {
        let mut types = Types {
            nodes: Vec::with_capacity(64),
            bar_amp: Vec::with_capacity(64),
            track_bar_amp,
            aliases: Vec::new(),
        };
        for kw in [
            Kw::String,
            Kw::Number,
            Kw::Boolean,
            Kw::Null,
            Kw::Unknown,
            Kw::Never,
        ] {
            types.add(Ty::Kw(kw));
        }
        types.add(Ty::JsonValue);
        types.add(Ty::Array(TyId::JSON));
        types.add(Ty::Record(TyId::JSON));
        types.add(Ty::Record(TyId::NEVER));
        types
    }

    /// Empties the arena back to its fixed nodes, keeping its buffers (an arena reused for
    /// schemas of the same lifetime).
    pub(crate) fn reset(&mut self) {
        let fixed = TyId::RECORD_NEVER.index() + 1;
        self.nodes.truncate(fixed);
        self.bar_amp.truncate(fixed);
        self.aliases.clear();
    }

    /// Adds a node whose children are already in the arena.
    pub(crate) fn add(&mut self, ty: Ty<'s>) -> TyId {
        let flag = self.track_bar_amp && self.computed_bar_amp(&ty);
        let id = TyId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(ty);
        self.bar_amp.push(flag);
        id
    }

    /// Whether the printed text of `ty` contains `|` or `&`.
    fn computed_bar_amp(&self, ty: &Ty<'s>) -> bool {
        match ty {
            Ty::Kw(_) | Ty::JsonValue | Ty::Lit(Lit::Num(..) | Lit::Bool(_)) => false,
            Ty::Lit(Lit::Str(s)) => has_bar_amp(s),
            Ty::Union(members) | Ty::Inter(members) => {
                members.len() > 1 || members.iter().any(|m| self.bar_amp(*m))
            }
            Ty::Array(item) | Ty::Record(item) => self.bar_amp(*item),
            Ty::Tuple(elems) => elems.iter().any(|e| self.bar_amp(e.ty)),
            // A reference made before the body exists prints `unknown` (in text).
            Ty::Alias(index) => self.alias(*index).is_some_and(|a| self.bar_amp(a.body)),
            Ty::Object(members) => members.iter().any(|m| {
                has_bar_amp(m.key)
                    || m.doc.as_deref().is_some_and(has_bar_amp)
                    || self.bar_amp(m.ty)
            }),
        }
    }

    /// The node `id`.
    pub(crate) fn get(&self, id: TyId) -> &Ty<'s> {
        self.nodes.get(id.index()).unwrap_or(&Ty::Kw(Kw::Unknown))
    }

    /// Whether the printed text of `id` contains `|` or `&` (anywhere, even in a literal or a doc).
    pub(crate) fn bar_amp(&self, id: TyId) -> bool {
        self.bar_amp.get(id.index()).copied().unwrap_or(false)
    }

    /// A new recursive alias whose body is set later with [`Types::set_alias_body`].
    pub(crate) fn new_alias(&mut self, hint: String) -> u32 {
        self.aliases.push(Alias {
            hint,
            body: TyId::UNKNOWN,
            inline: false,
        });
        u32::try_from(self.aliases.len() - 1).unwrap_or(u32::MAX)
    }

    /// Sets the body of alias `index`.
    pub(crate) fn set_alias_body(&mut self, index: u32, body: TyId) {
        let inline = self.reaches_unguarded(body, index);
        if let Some(alias) = self.aliases.get_mut(index as usize) {
            alias.body = body;
            alias.inline = inline;
        }
    }

    /// Whether `body` reaches alias `index` through unions, intersections, `Record` values and
    /// other aliases' bodies only (a circular alias for TypeScript).
    fn reaches_unguarded(&self, body: TyId, index: u32) -> bool {
        let mut stack = vec![body];
        let mut seen: Vec<u32> = Vec::new();
        while let Some(id) = stack.pop() {
            match self.get(id) {
                Ty::Union(members) | Ty::Inter(members) => stack.extend(members.iter().copied()),
                Ty::Record(value) => stack.push(*value),
                Ty::Alias(i) if *i == index => return true,
                Ty::Alias(i) if !seen.contains(i) => {
                    seen.push(*i);
                    if let Some(alias) = self.alias(*i) {
                        stack.push(alias.body);
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// Alias `index`.
    pub(crate) fn alias(&self, index: u32) -> Option<&Alias> {
        self.aliases.get(index as usize)
    }

    /// A literal node.
    pub(crate) fn lit(&mut self, lit: Lit<'s>) -> TyId {
        self.add(Ty::Lit(lit))
    }

    /// `members` joined by ` | `, exactly as given (the reference keeps duplicates and never
    /// simplifies). Empty → `never`; one member → that member.
    pub(crate) fn union_exact(&mut self, members: Vec<TyId>) -> TyId {
        match members.len() {
            0 => TyId::NEVER,
            1 => members[0],
            _ => self.add(Ty::Union(members)),
        }
    }
}

/// Whether `s` contains `|` or `&`.
pub(crate) fn has_bar_amp(s: &str) -> bool {
    s.bytes().any(|b| b == b'|' || b == b'&')
}

/// Whether a property or tool name is printed bare: `^[A-Za-z_$][A-Za-z0-9_$]*$`
/// (`docs/CONTRACTS.md`, "The SDK"). Reserved words stay bare; anything else (including
/// non-ASCII) is JSON-quoted.
pub(crate) fn is_bare_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_' | b'$'))
        && bytes.all(|b| matches!(b, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'$'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_keys_follow_the_reference_pattern() {
        for key in ["a", "_x", "$y", "class", "A1_$"] {
            assert!(is_bare_key(key), "{key}");
        }
        for key in ["", "1a", "my-tool", "a.b", "ünï", "new\nline", "a b"] {
            assert!(!is_bare_key(key), "{key}");
        }
    }

    #[test]
    fn flags_follow_the_printed_text() {
        let mut types = Types::new();
        let bar = types.lit(Lit::Str("a|b"));
        let plain = types.lit(Lit::Str("ab"));
        assert!(types.bar_amp(bar));
        assert!(!types.bar_amp(plain));
        let union = types.union_exact(vec![TyId::STRING, TyId::NULL]);
        assert!(types.bar_amp(union));
        let array = types.add(Ty::Array(union));
        assert!(types.bar_amp(array));
        assert!(!types.bar_amp(TyId::JSON_ARRAY));
        assert!(!types.bar_amp(TyId::RECORD_JSON));
    }
}
