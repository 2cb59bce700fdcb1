//! Portable binding names (`docs/CONTRACTS.md`, "The runtime seam"): the rules every backend
//! shares, so a namespace that works on one backend works on all of them.

use std::collections::HashSet;

use crate::runtime::{BindingNamespace, CodeRuntimeError};

/// The standard globals a program sees (`Object.getOwnPropertyNames(globalThis)` before the
/// host adds `console`, the binding namespaces and the error classes), in QuickJS's order.
pub const GLOBAL_ALLOW_LIST: &[&str] = &[
    "Object",
    "Error",
    "EvalError",
    "RangeError",
    "ReferenceError",
    "SyntaxError",
    "TypeError",
    "URIError",
    "AggregateError",
    "Iterator",
    "Array",
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "unescape",
    "Infinity",
    "NaN",
    "undefined",
    "Number",
    "Boolean",
    "String",
    "Math",
    "Reflect",
    "Symbol",
    "globalThis",
    "BigInt",
    "Date",
    "RegExp",
    "JSON",
    "Proxy",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "ArrayBuffer",
    "SharedArrayBuffer",
    "Uint8ClampedArray",
    "Int8Array",
    "Uint8Array",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "BigInt64Array",
    "BigUint64Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "DataView",
    "Atomics",
    "Promise",
    "WeakRef",
    "FinalizationRegistry",
];

/// ECMAScript reserved words (keywords, strict-mode and future reserved words, literals,
/// `arguments`, `eval`) unioned with Python's keywords and soft keywords.
pub const PORTABLE_RESERVED_WORDS: &[&str] = &[
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "let",
    "static",
    "implements",
    "interface",
    "package",
    "private",
    "protected",
    "public",
    "arguments",
    "eval",
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "def",
    "del",
    "elif",
    "except",
    "from",
    "global",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "match",
    "type",
    "_",
];

/// Globals some backend owns in the program's namespace.
pub const RESERVED_BINDING_GLOBALS: &[&str] = &[
    "console",
    "__dsh_main__",
    "__builtins__",
    "__name__",
    "__debug__",
];

/// Error and exception protocol members an error class's member property may not use.
pub const RESERVED_ERROR_MEMBERS: &[&str] = &[
    "name",
    "message",
    "stack",
    "args",
    "with_traceback",
    "add_note",
];

fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

/// The error of engine `engine` (`quickjs`, `monty`) refusing a binding.
fn invalid(engine: &str, message: String) -> CodeRuntimeError {
    CodeRuntimeError::InvalidBinding(format!("dsh-tools-runtime({engine}): {message}"))
}

/// Validates the namespaces of a request to engine `engine` (`quickjs`, `monty`: named in the
/// errors) (`docs/CONTRACTS.md`, "The runtime seam": portable names, and no global shadows a
/// standard global of the sandbox, e.g. `JSON`).
pub(crate) fn validate_bindings(
    engine: &str,
    namespaces: &[BindingNamespace],
) -> Result<(), CodeRuntimeError> {
    let invalid = |message| invalid(engine, message);
    let mut injected: HashSet<&str> = HashSet::new();
    for namespace in namespaces {
        let global = namespace.global.as_str();
        if !is_identifier(global) || PORTABLE_RESERVED_WORDS.contains(&global) {
            return Err(invalid(format!(
                "binding global \"{global}\" is not a usable identifier"
            )));
        }
        if RESERVED_BINDING_GLOBALS.contains(&global) {
            return Err(invalid(format!("reserved binding global \"{global}\"")));
        }
        if GLOBAL_ALLOW_LIST.contains(&global) {
            return Err(invalid(format!(
                "binding global \"{global}\" would shadow a standard global"
            )));
        }
        if !injected.insert(global) {
            return Err(invalid(format!("duplicate binding global \"{global}\"")));
        }
        let mut names = HashSet::new();
        for (name, _) in &namespace.functions {
            if !names.insert(name.as_str()) {
                return Err(invalid(format!("duplicate binding \"{global}.{name}\"")));
            }
        }
    }
    for namespace in namespaces {
        let Some(class) = &namespace.error_class else {
            continue;
        };
        let name = class.name.as_str();
        if !is_identifier(name) || PORTABLE_RESERVED_WORDS.contains(&name) {
            return Err(invalid(format!(
                "binding error class \"{name}\" is not a usable identifier"
            )));
        }
        if RESERVED_BINDING_GLOBALS.contains(&name) {
            return Err(invalid(format!("reserved binding global \"{name}\"")));
        }
        if GLOBAL_ALLOW_LIST.contains(&name) {
            return Err(invalid(format!(
                "binding error class \"{name}\" would shadow a standard global"
            )));
        }
        if !injected.insert(name) {
            return Err(invalid(format!("duplicate injected global \"{name}\"")));
        }
        let member = class.member_name_property.as_str();
        if member.is_empty() || RESERVED_ERROR_MEMBERS.contains(&member) || is_dunder(member) {
            return Err(invalid(format!(
                "binding error member property \"{member}\" is not usable"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::ErrorClass;

    fn ns(global: &str, class: Option<(&str, &str)>) -> BindingNamespace {
        BindingNamespace {
            global: global.to_owned(),
            functions: Vec::new(),
            error_class: class.map(|(name, member)| ErrorClass {
                name: name.to_owned(),
                member_name_property: member.to_owned(),
            }),
        }
    }

    fn message(namespaces: &[BindingNamespace]) -> String {
        validate_bindings("quickjs", namespaces)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn portable_rules() {
        let tools = [ns("tools", Some(("ToolCallError", "toolName")))];
        assert!(validate_bindings("quickjs", &tools).is_ok());
        assert_eq!(
            message(&[ns("lambda", None)]),
            "dsh-tools-runtime(quickjs): binding global \"lambda\" is not a usable identifier"
        );
        let monty = validate_bindings("monty", &[ns("lambda", None)]).unwrap_err();
        assert_eq!(
            monty.to_string(),
            "dsh-tools-runtime(monty): binding global \"lambda\" is not a usable identifier"
        );
        assert!(message(&[ns("$tools", None)]).contains("not a usable identifier"));
        assert!(message(&[ns("console", None)]).contains("reserved binding global \"console\""));
        assert!(message(&[ns("JSON", None)]).contains("would shadow a standard global"));
        assert!(
            message(&[ns("a", None), ns("a", None)]).contains("duplicate binding global \"a\"")
        );
        assert!(
            message(&[ns("a", Some(("b", "m"))), ns("b", None)])
                .contains("duplicate injected global \"b\"")
        );
        assert!(message(&[ns("a", Some(("match", "m")))]).contains("error class \"match\""));
        assert!(message(&[ns("a", Some(("E", "__x__")))]).contains("member property \"__x__\""));
        assert!(message(&[ns("a", Some(("E", "stack")))]).contains("member property \"stack\""));
        assert!(message(&[ns("a", Some(("E", "")))]).contains("member property \"\""));
    }
}
