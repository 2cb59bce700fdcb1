//! The number contract (docs/CONTRACTS.md, "Numbers"): a JSON number is the double JavaScript's
//! `JSON.parse` gives for its text; it is compared as that double and printed as `String(x)`
//! prints it. Each test here is a disagreement with Node.js found by the differential run, kept
//! as a named regression.

use dsh_tools::json::{js_number_of, js_stringify, numbers_equal};
use dsh_tools::subset::validate_value;
use serde_json::{Value, json};

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

fn printed(text: &str) -> String {
    js_number_of(parse(text).as_number().expect("a number"))
}

#[test]
fn integers_beyond_u64_parse_to_the_nearest_double() {
    // Without serde_json's `float_roundtrip` this text landed one double below.
    assert_eq!(printed("123456789012345680000"), "123456789012345680000");
    assert_eq!(printed("123456789012345683968"), "123456789012345680000");
}

#[test]
fn long_mantissas_parse_to_the_nearest_double() {
    assert_eq!(
        printed("-1.214784686387851e+242"),
        "-1.214784686387851e+242"
    );
    assert_eq!(printed("2.2250738585072011e-308"), "2.225073858507201e-308");
    assert_eq!(printed("0.1e1"), "1");
}

#[test]
fn const_and_enum_compare_the_doubles_javascript_holds() {
    let schema = json!({"type": "number", "const": parse("123456789012345680000")});
    assert!(validate_value(&schema, &parse("123456789012345683968"), "value").is_empty());
    let schema = json!({"type": "integer", "enum": [parse("9007199254740992")]});
    assert!(validate_value(&schema, &parse("9007199254740993"), "value").is_empty());
    assert_eq!(
        validate_value(&schema, &parse("9007199254740994"), "value"),
        vec!["\"value\" must be one of [9007199254740992]"]
    );
}

#[test]
fn integers_that_share_a_double_are_one_number() {
    let a = parse("9007199254740993");
    let b = parse("9007199254740992");
    assert!(numbers_equal(
        a.as_number().expect("number"),
        b.as_number().expect("number")
    ));
    assert_eq!(
        js_stringify(&json!([a, b])),
        "[9007199254740992,9007199254740992]"
    );
}
