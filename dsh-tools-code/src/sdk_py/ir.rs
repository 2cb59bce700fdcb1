//! The Python type representation between a JSON Schema and its annotation text.

/// A `Literal[...]` member.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Lit {
    Str(String),
    Int(i64),
    Bool(bool),
}

/// One Python type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Py {
    /// `Any`: what an untypeable node degrades to.
    Any,
    /// `Never`: the `false` schema (no value is valid).
    Never,
    Str,
    Int,
    Float,
    Bool,
    None,
    /// `Literal[a, b]` (never empty).
    Literal(Vec<Lit>),
    /// `list[T]`.
    List(Box<Py>),
    /// `dict[str, T]`.
    Dict(Box<Py>),
    /// `A | B` (at least two members, none a union, no duplicates, literals merged).
    Union(Vec<Py>),
    /// A generated `TypedDict` class (index into [`Classes`]).
    Class(usize),
}

impl Py {
    /// `list[Any]`, `dict[str, Any]` and `Any` itself: types that say nothing beyond "a list",
    /// "an object", "a value" — they drop out when a node has more precise parts.
    pub(crate) fn is_unconstrained(&self) -> bool {
        match self {
            Py::Any => true,
            Py::List(item) | Py::Dict(item) => **item == Py::Any,
            _ => false,
        }
    }

    /// The union of `members`: flattened, duplicates dropped, literals merged into one
    /// `Literal[...]` (in first-seen position), `None` last; `Any` absorbs everything.
    pub(crate) fn union(members: Vec<Py>) -> Py {
        let mut flat: Vec<Py> = Vec::with_capacity(members.len());
        let mut literals: Vec<Lit> = Vec::new();
        let mut literal_at: Option<usize> = None;
        let mut has_none = false;
        let mut has_never = false;
        let mut stack: Vec<Py> = members.into_iter().rev().collect();
        while let Some(member) = stack.pop() {
            match member {
                Py::Any => return Py::Any,
                Py::Never => has_never = true,
                Py::Union(inner) => stack.extend(inner.into_iter().rev()),
                Py::None => has_none = true,
                Py::Literal(lits) => {
                    if literal_at.is_none() {
                        literal_at = Some(flat.len());
                        flat.push(Py::Literal(Vec::new()));
                    }
                    for lit in lits {
                        if !literals.contains(&lit) {
                            literals.push(lit);
                        }
                    }
                }
                other => {
                    if !flat.contains(&other) {
                        flat.push(other);
                    }
                }
            }
        }
        if let Some(at) = literal_at {
            flat[at] = Py::Literal(literals);
        }
        // `bool` literals are covered by `bool`, `str` literals by `str`, `int` by `int`/`float`.
        let covers = |flat: &[Py], lit: &Lit| match lit {
            Lit::Str(_) => flat.contains(&Py::Str),
            Lit::Int(_) => flat.contains(&Py::Int) || flat.contains(&Py::Float),
            Lit::Bool(_) => flat.contains(&Py::Bool),
        };
        if let Some(at) = literal_at {
            let snapshot = flat.clone();
            if let Py::Literal(lits) = &mut flat[at] {
                lits.retain(|lit| !covers(&snapshot, lit));
                if lits.is_empty() {
                    flat.remove(at);
                }
            }
        }
        if flat.contains(&Py::Float) {
            flat.retain(|p| *p != Py::Int);
        }
        if has_none {
            flat.push(Py::None);
        }
        match flat.len() {
            0 if has_never => Py::Never,
            0 => Py::Any,
            1 => flat.pop().unwrap_or(Py::Any),
            _ => Py::Union(flat),
        }
    }
}

/// One field of a generated `TypedDict`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Field {
    /// The JSON property name.
    pub(crate) key: String,
    /// Declared in `required` (else `NotRequired[...]`).
    pub(crate) required: bool,
    pub(crate) ty: Py,
    /// The property's description, if any.
    pub(crate) doc: Option<String>,
}

/// A generated `TypedDict` class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    pub(crate) name: String,
    pub(crate) fields: Vec<Field>,
    /// Lowered from a `$ref` target: reused by every reference with the same fields.
    pub(crate) shared: bool,
}

/// Every class of one SDK, in definition order (a class only refers to earlier ones).
#[derive(Debug, Default)]
pub(crate) struct Classes {
    pub(crate) list: Vec<Class>,
}

impl Classes {
    /// Adds a class with `fields`. A `shared` class (a `$ref` target) reuses the earlier
    /// shared class with exactly these fields, so a definition referenced twice is one class.
    pub(crate) fn add(
        &mut self,
        name: impl FnOnce() -> String,
        fields: Vec<Field>,
        shared: bool,
    ) -> usize {
        if shared
            && let Some(found) = self
                .list
                .iter()
                .position(|c| c.shared && c.fields == fields)
        {
            return found;
        }
        self.list.push(Class {
            name: name(),
            fields,
            shared,
        });
        self.list.len() - 1
    }

    /// The class `index`.
    pub(crate) fn get(&self, index: usize) -> Option<&Class> {
        self.list.get(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_normalise() {
        let lit = |s: &str| Py::Literal(vec![Lit::Str(s.to_owned())]);
        assert_eq!(
            Py::union(vec![Py::None, lit("a"), Py::Int, lit("b"), Py::Int]),
            Py::Union(vec![
                Py::Literal(vec![Lit::Str("a".into()), Lit::Str("b".into())]),
                Py::Int,
                Py::None
            ])
        );
        assert_eq!(Py::union(vec![Py::Str, lit("a")]), Py::Str);
        assert_eq!(Py::union(vec![Py::Int, Py::Float]), Py::Float);
        assert_eq!(Py::union(vec![Py::Str, Py::Any]), Py::Any);
        assert_eq!(Py::union(vec![Py::Str]), Py::Str);
        assert_eq!(
            Py::union(vec![Py::Union(vec![Py::Str, Py::None]), Py::Bool]),
            Py::Union(vec![Py::Str, Py::Bool, Py::None])
        );
    }
}
