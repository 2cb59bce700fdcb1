//! Regressions the fuzzers found in the type strip (FUZZING.md); each input is also in the
//! replayed corpus `fuzz/corpus/strip/`.
#![cfg(feature = "code-mode")]

use dsh_tools_runtime::code::strip::{SourceLimits, StripError, strip_program};

/// `fuzz/corpus/strip/swc_enum_computed_member_assertion`: an unclosed computed enum member
/// trips a debug assertion inside swc's parser (`expected ], got }`); the strip reports a
/// syntax error instead of panicking (test builds have debug assertions on, as the fuzzer's do).
#[test]
fn an_assertion_inside_swc_is_a_syntax_error_not_a_panic() {
    let program = "enum Color { Red, [Green }\nreturn Color.Red;";
    let error = strip_program(program, &SourceLimits::default()).expect_err("not a program");
    assert!(
        matches!(
            error,
            StripError::Syntax { .. } | StripError::Unsupported { .. }
        ),
        "{error:?}"
    );
    assert!(error.to_string().starts_with("SyntaxError: "), "{error}");
}
