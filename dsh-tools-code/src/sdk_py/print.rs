//! Printing [`Py`] types and `TypedDict` classes as Python source.
//!
//! Everything printed is a fixed token, a name checked by [`super::names`], or text passed
//! through [`super::text`]: untrusted text never becomes code.

use std::collections::BTreeSet;

use super::ir::{Class, Classes, Lit, Py};
use super::names::is_field_name;
use super::text::{comment, write_string};

/// The `typing` names the printed text uses (the import line lists exactly these, sorted).
#[derive(Debug, Default)]
pub(crate) struct Imports(BTreeSet<&'static str>);

impl Imports {
    pub(crate) fn add(&mut self, name: &'static str) {
        self.0.insert(name);
    }

    /// `from typing import A, B` (sorted by code point: `Any, … TypedDict, overload`).
    pub(crate) fn line(&self) -> String {
        let names: Vec<&str> = self.0.iter().copied().collect();
        format!("from typing import {}", names.join(", "))
    }
}

/// Appends the annotation of `ty`.
pub(crate) fn write_type(out: &mut String, ty: &Py, classes: &Classes, imports: &mut Imports) {
    match ty {
        Py::Any => {
            imports.add("Any");
            out.push_str("Any");
        }
        Py::Never => {
            imports.add("Never");
            out.push_str("Never");
        }
        Py::Str => out.push_str("str"),
        Py::Int => out.push_str("int"),
        Py::Float => out.push_str("float"),
        Py::Bool => out.push_str("bool"),
        Py::None => out.push_str("None"),
        Py::Literal(lits) => {
            imports.add("Literal");
            out.push_str("Literal[");
            for (i, lit) in lits.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match lit {
                    Lit::Str(s) => write_string(out, s),
                    Lit::Int(n) => out.push_str(&n.to_string()),
                    Lit::Bool(true) => out.push_str("True"),
                    Lit::Bool(false) => out.push_str("False"),
                }
            }
            out.push(']');
        }
        Py::List(item) => {
            out.push_str("list[");
            write_type(out, item, classes, imports);
            out.push(']');
        }
        Py::Dict(value) => {
            out.push_str("dict[str, ");
            write_type(out, value, classes, imports);
            out.push(']');
        }
        Py::Union(members) => {
            for (i, member) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                write_type(out, member, classes, imports);
            }
        }
        Py::Class(index) => match classes.get(*index) {
            Some(class) => out.push_str(&class.name),
            None => {
                imports.add("Any");
                out.push_str("Any");
            }
        },
    }
}

/// The annotation of `ty` as a string.
pub(crate) fn type_text(ty: &Py, classes: &Classes, imports: &mut Imports) -> String {
    let mut out = String::new();
    write_type(&mut out, ty, classes, imports);
    out
}

/// Appends one `TypedDict` class: class syntax when every key is a field name, else the
/// functional form (`Name = TypedDict("Name", {"my-key": int})`), which takes any key.
pub(crate) fn write_class(
    out: &mut String,
    class: &Class,
    classes: &Classes,
    imports: &mut Imports,
) {
    imports.add("TypedDict");
    let field_type = |field: &super::ir::Field, imports: &mut Imports| {
        let ty = type_text(&field.ty, classes, imports);
        if field.required {
            ty
        } else {
            imports.add("NotRequired");
            format!("NotRequired[{ty}]")
        }
    };
    if class.fields.iter().all(|f| is_field_name(&f.key)) {
        out.push_str("class ");
        out.push_str(&class.name);
        out.push_str("(TypedDict):\n");
        if class.fields.is_empty() {
            out.push_str("    pass\n");
        }
        for field in &class.fields {
            if let Some(doc) = &field.doc {
                out.push_str("    # ");
                out.push_str(&comment(doc));
                out.push('\n');
            }
            out.push_str("    ");
            out.push_str(&field.key);
            out.push_str(": ");
            out.push_str(&field_type(field, imports));
            out.push('\n');
        }
    } else {
        out.push_str(&class.name);
        out.push_str(" = TypedDict(\n    ");
        write_string(out, &class.name);
        out.push_str(",\n    {\n");
        for field in &class.fields {
            if let Some(doc) = &field.doc {
                out.push_str("        # ");
                out.push_str(&comment(doc));
                out.push('\n');
            }
            out.push_str("        ");
            write_string(out, &field.key);
            out.push_str(": ");
            out.push_str(&field_type(field, imports));
            out.push_str(",\n");
        }
        out.push_str("    },\n)\n");
    }
}
