//! Python names: which tool and property names may be printed as identifiers, and the
//! deterministic CamelCase names of the generated `TypedDict` classes
//! (docs/CONTRACTS.md, "Code Mode: Python").

use std::collections::HashSet;

use unicode_normalization::{IsNormalized, is_nfkc_quick};

/// Python's hard keywords: never identifiers. (The soft keywords `match`, `case`, `type` and
/// `_` are ordinary names outside their statements.)
pub const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Names the SDK itself defines or imports; generated class names avoid them.
pub(crate) const SDK_NAMES: &[&str] = &[
    "Any",
    "Awaitable",
    "Callable",
    "Exception",
    "Literal",
    "NotRequired",
    "Protocol",
    "ToolCallError",
    "Tools",
    "TypedDict",
    "overload",
    "tools",
];

/// Whether `name` is a Python identifier that means itself: `XID_Start XID_Continue*` (or a
/// leading `_`), unchanged by NFKC (Python normalises identifiers, so `ﬁle` *is* `file`), not a
/// keyword and not `__debug__` (which cannot be bound).
///
/// ```
/// use dsh_tools_runtime::code::sdk_py::is_python_identifier;
/// assert!(is_python_identifier("read_file") && is_python_identifier("données"));
/// assert!(!is_python_identifier("class") && !is_python_identifier("my-tool"));
/// assert!(!is_python_identifier("ﬁle") && !is_python_identifier("__debug__"));
/// ```
pub fn is_python_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || unicode_ident::is_xid_start(first))
        && chars.all(unicode_ident::is_xid_continue)
        && nfkc_stable(name)
        && !PYTHON_KEYWORDS.contains(&name)
        && name != "__debug__"
}

fn nfkc_stable(name: &str) -> bool {
    match is_nfkc_quick(name.chars()) {
        IsNormalized::Yes => true,
        IsNormalized::No => false,
        IsNormalized::Maybe => {
            unicode_normalization::UnicodeNormalization::nfkc(name).eq(name.chars())
        }
    }
}

/// Whether a property name can be a field of a class-syntax `TypedDict`: an identifier that
/// the class body does not mangle (`__x` becomes `_Class__x`; `__x__` is left alone).
pub(crate) fn is_field_name(name: &str) -> bool {
    let mangled = name.starts_with("__") && !name.ends_with("__");
    !mangled && is_python_identifier(name)
}

/// Whether a tool is declared as a method of `Tools` (`tools.name(...)`): an identifier that
/// does not start with `_` (private by convention, and not routed by attribute access). Every
/// other tool is reached by subscript, `tools["name"]`.
///
/// ```
/// use dsh_tools_runtime::code::sdk_py::is_method_name;
/// assert!(is_method_name("read_file"));
/// assert!(!is_method_name("_hidden") && !is_method_name("my-tool") && !is_method_name("import"));
/// ```
pub fn is_method_name(name: &str) -> bool {
    is_python_identifier(name) && !name.starts_with('_')
}

/// Longest generated class name; longer names are cut (and a counter keeps them unique).
const MAX_CLASS_NAME: usize = 64;

/// `read_file` → `ReadFile`, `my-mcp.tool` → `MyMcpTool`: ASCII letters and digits of each run
/// between other characters, each run capitalised. `None` when nothing ASCII is left.
pub(crate) fn camel(text: &str) -> Option<String> {
    let mut out = String::new();
    for run in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = run.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The class names handed out for one SDK: unique, never an SDK name, always identifiers.
#[derive(Debug, Default)]
pub(crate) struct ClassNames {
    taken: HashSet<String>,
}

impl ClassNames {
    /// A fresh name from `base` (ASCII CamelCase; a leading digit gets a `T` in front), cut to
    /// [`MAX_CLASS_NAME`], with `2`, `3`, … appended when already taken.
    pub(crate) fn claim(&mut self, base: &str) -> String {
        let mut base: String = base.chars().filter(char::is_ascii_alphanumeric).collect();
        if base.is_empty() {
            base.push_str("Type");
        }
        if base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert(0, 'T');
        }
        base.truncate(MAX_CLASS_NAME);
        let mut candidate = base.clone();
        let mut counter = 1usize;
        while self.taken.contains(&candidate)
            || SDK_NAMES.contains(&candidate.as_str())
            || !is_python_identifier(&candidate)
        {
            counter += 1;
            let suffix = counter.to_string();
            let mut cut = base.clone();
            cut.truncate(MAX_CLASS_NAME - suffix.len());
            candidate = cut + &suffix;
        }
        self.taken.insert(candidate.clone());
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        for ok in [
            "a",
            "_x",
            "match",
            "type",
            "_",
            "données",
            "x1",
            "__dunder__",
        ] {
            assert!(is_python_identifier(ok), "{ok}");
        }
        for bad in [
            "",
            "1a",
            "a-b",
            "a b",
            "yield",
            "None",
            "__debug__",
            "ﬁle",
            "x²",
        ] {
            assert!(!is_python_identifier(bad), "{bad}");
        }
        assert!(is_field_name("__dunder__") && !is_field_name("__private"));
        assert!(!is_method_name("_private") && is_method_name("match"));
    }

    #[test]
    fn class_names_are_unique_identifiers() {
        let mut names = ClassNames::default();
        assert_eq!(camel("read_file").as_deref(), Some("ReadFile"));
        assert_eq!(camel("my-mcp.tool").as_deref(), Some("MyMcpTool"));
        assert_eq!(camel("ünï"), Some("N".to_owned()));
        assert_eq!(camel("日本"), None);
        assert_eq!(names.claim("ReadFileArgs"), "ReadFileArgs");
        assert_eq!(names.claim("ReadFileArgs"), "ReadFileArgs2");
        assert_eq!(names.claim("Tools"), "Tools2");
        assert_eq!(names.claim("3d"), "T3d");
        assert_eq!(names.claim(""), "Type");
        let long = "A".repeat(100);
        let first = names.claim(&long);
        let second = names.claim(&long);
        assert_eq!((first.len(), second.len()), (64, 64));
        assert_ne!(first, second);
    }
}
