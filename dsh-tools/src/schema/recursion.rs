//! Finding the recursive types of a spec: the named types ([`TypeName`]) that contain
//! themselves. A depth-first walk over the spec graph (reading [`SpecKind::Lazy`] nodes) marks
//! the target of every back edge; every cycle has one, so emitting the marked types under
//! `$defs` and referring to them with `$ref` leaves no cycle in the emitted schema.

use std::collections::HashSet;

use super::spec::{Additional, SchemaSpec, SpecKind, TypeName};
use crate::error::JsonSchemaError;

/// How deep specs may nest without passing a named type (a `Lazy` cycle of anonymous specs).
const MAX_DEPTH: usize = 256;

/// The recursive types of `root`, as `(id, name)`, in the order they were found.
pub(super) fn recursive_types(
    root: &SchemaSpec,
) -> Result<Vec<(&'static str, &'static str)>, JsonSchemaError> {
    let mut walk = Walk {
        open: Vec::new(),
        done: HashSet::new(),
        found: Vec::new(),
    };
    walk.visit(root, 0)?;
    Ok(walk.found)
}

struct Walk {
    /// The named types on the current path.
    open: Vec<&'static str>,
    /// The named types fully explored.
    done: HashSet<&'static str>,
    found: Vec<(&'static str, &'static str)>,
}

impl Walk {
    fn visit(&mut self, spec: &SchemaSpec, depth: usize) -> Result<(), JsonSchemaError> {
        if depth > MAX_DEPTH {
            return Err(JsonSchemaError::new(vec![format!(
                "schema nests deeper than {MAX_DEPTH} levels without a named type: a recursive type needs `#[derive(ToolSchema)]` (or `SchemaSpec::named`)"
            )]));
        }
        let named = spec.meta.name.map(|TypeName { name, id }| (id(), name));
        if let Some((id, name)) = named {
            if self.open.contains(&id) {
                if !self.found.iter().any(|(found, _)| *found == id) {
                    self.found.push((id, name));
                }
                return Ok(());
            }
            if self.done.contains(id) {
                return Ok(());
            }
            self.open.push(id);
        }
        let depth = depth + 1;
        match spec.kind {
            SpecKind::Any
            | SpecKind::Null
            | SpecKind::Boolean
            | SpecKind::Integer(_)
            | SpecKind::Number(_)
            | SpecKind::String(_)
            | SpecKind::Enum(_)
            | SpecKind::Const(_) => {}
            SpecKind::Array { items, .. } => {
                if let Some(items) = items {
                    self.visit(items, depth)?;
                }
            }
            SpecKind::Object {
                properties,
                flatten,
                additional,
            } => {
                for property in properties {
                    self.visit(property.schema, depth)?;
                }
                for inner in flatten {
                    self.visit(inner, depth)?;
                }
                if let Additional::Schema(values) = additional {
                    self.visit(values, depth)?;
                }
            }
            SpecKind::OneOf(variants) | SpecKind::Tuple(variants) => {
                for variant in variants {
                    self.visit(variant, depth)?;
                }
            }
            SpecKind::Optional(inner) => self.visit(inner, depth)?,
            SpecKind::Lazy(f) => self.visit(f(), depth)?,
        }
        if let Some((id, _)) = named {
            self.open.pop();
            self.done.insert(id);
        }
        Ok(())
    }
}
