//! Compile-time checks of `#[tool]` options that the builder would otherwise only report when
//! the definition is built.

use syn::Ident;
use syn::ext::IdentExt as _;

use super::sig::{ParamKind, ToolSig};
use crate::attr::ToolOptions;
use crate::errors::Errors;
use crate::types;

/// Whether `name` matches `^[A-Za-z_][A-Za-z0-9_.-]{0,63}$` (the runtime's
/// `definition::is_valid_tool_name`).
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let Some((first, rest)) = bytes.split_first() else {
        return false;
    };
    (first.is_ascii_alphabetic() || *first == b'_')
        && rest.len() <= 63
        && rest
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

const NAME_RULE: &str = "must match ^[A-Za-z_][A-Za-z0-9_.-]{0,63}$ (a letter or `_`, then up to 63 letters, digits, `_`, `.` or `-`)";

/// The tool's name: the `name` option, or the function's identifier without `r#`.
pub(crate) fn name(options: &ToolOptions, ident: &Ident, errors: &mut Errors) -> String {
    match &options.name {
        Some(literal) => {
            let name = literal.value();
            if !is_valid_tool_name(&name) {
                errors.spanned(literal, format!("tool name {name:?} {NAME_RULE}"));
            }
            name
        }
        None => {
            let name = ident.unraw().to_string();
            if !is_valid_tool_name(&name) {
                errors.spanned(
                    ident,
                    format!("tool name {name:?} {NAME_RULE}: rename the function or set `#[tool(name = \"...\")]`"),
                );
            }
            name
        }
    }
}

/// Checks `timeout_ms` is a positive integer that fits `u64`.
pub(crate) fn timeout(options: &ToolOptions, errors: &mut Errors) {
    let Some(literal) = &options.timeout_ms else {
        return;
    };
    match literal.base10_parse::<u64>() {
        Ok(0) => errors.spanned(literal, "`timeout_ms` must be positive"),
        Ok(_) => {}
        Err(error) => errors.spanned(
            literal,
            format!("`timeout_ms` must be a positive integer of milliseconds: {error}"),
        ),
    }
}

/// Checks `max_result_tokens` is a positive integer that fits `usize`.
pub(crate) fn max_result_tokens(options: &ToolOptions, errors: &mut Errors) {
    let Some(literal) = &options.max_result_tokens else {
        return;
    };
    match literal.base10_parse::<usize>() {
        Ok(0) => errors.spanned(literal, "`max_result_tokens` must be positive"),
        Ok(_) => {}
        Err(error) => errors.spanned(
            literal,
            format!("`max_result_tokens` must be a positive integer of tokens: {error}"),
        ),
    }
}

/// The values of `callers`, as `dsh_tools::Callers` names them.
pub(crate) const CALLERS: [&str; 3] = ["native", "code", "both"];

/// Checks `callers` is `"native"`, `"code"` or `"both"`, suggesting the closest one.
pub(crate) fn callers(options: &ToolOptions, errors: &mut Errors) {
    let Some(literal) = &options.callers else {
        return;
    };
    let value = literal.value();
    if CALLERS.contains(&value.as_str()) {
        return;
    }
    let closest = CALLERS
        .iter()
        .map(|c| (strsim::jaro_winkler(&value.to_lowercase(), c), *c))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c);
    let hint = match closest {
        Some(c) => format!("did you mean \"{c}\"?"),
        None => "expected \"native\", \"code\" or \"both\"".to_owned(),
    };
    errors.spanned(
        literal,
        format!("unknown `#[tool]` callers {value:?}; {hint}"),
    );
}

/// Checks `deferred` and `pinned` are not both set.
pub(crate) fn loading(options: &ToolOptions, errors: &mut Errors) {
    if options.deferred.is_present() && options.pinned.is_present() {
        errors.push(syn::Error::new(
            options.pinned.span(),
            "`#[tool]` options `deferred` and `pinned` contradict each other: a tool is either found on demand or always loaded",
        ));
    }
}

/// Reports types that the generated companion module would shadow: inside it, a relative path
/// `Args` (or `Tool`) names the generated item, not the user's type. `generated` pairs each
/// name with what it is; `all_types` also checks the non-model parameters and the output (all
/// of which a free tool's module names).
pub(crate) fn shadowing(
    sig: &ToolSig,
    generated: &[(String, &str)],
    all_types: bool,
    errors: &mut Errors,
) {
    let params = sig
        .params
        .iter()
        .filter(|p| all_types || matches!(p.kind, ParamKind::Model { .. }));
    let output = sig.output.value_type().filter(|_| all_types);
    for ty in params.map(|p| &p.ty).chain(output) {
        for (name, what) in generated {
            if let Some(path) = types::first_segment_named(ty, name) {
                errors.spanned(
                    path,
                    format!(
                        "`{name}` here would name {what} generated by `#[tool]`: write your type's absolute path (`crate::...::{name}`) or rename it"
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_runtime_rule() {
        assert!(is_valid_tool_name("read_file"));
        assert!(is_valid_tool_name("_x.y-z"));
        assert!(is_valid_tool_name(&"a".repeat(64)));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
        assert!(!is_valid_tool_name("9lives"));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("é"));
    }

    fn callers_error(value: &str) -> Option<String> {
        let options = ToolOptions {
            callers: Some(syn::LitStr::new(value, proc_macro2::Span::call_site())),
            ..ToolOptions::default()
        };
        let mut errors = Errors::new();
        callers(&options, &mut errors);
        errors.finish().err().map(|e| e.to_string())
    }

    #[test]
    fn callers_suggest_the_closest_value() {
        assert_eq!(callers_error("code"), None);
        assert_eq!(
            callers_error("nativ").as_deref(),
            Some("unknown `#[tool]` callers \"nativ\"; did you mean \"native\"?")
        );
        assert_eq!(
            callers_error("Both").as_deref(),
            Some("unknown `#[tool]` callers \"Both\"; did you mean \"both\"?")
        );
        assert_eq!(
            callers_error("zzz").as_deref(),
            Some("unknown `#[tool]` callers \"zzz\"; expected \"native\", \"code\" or \"both\"")
        );
    }
}
