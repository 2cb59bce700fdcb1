//! Tests of the nesting scanner.
use super::check_depth;

#[test]
fn counts_brackets_and_chains() {
    assert!(check_depth("return ((((1))));", 4).is_ok());
    assert!(check_depth("return (((((1)))));", 4).is_err());
    assert!(check_depth("let a; a = a = a = 1;", 3).is_ok());
    assert!(check_depth("let a; a = a = a = a = 1;", 3).is_err());
    assert!(check_depth(&"!".repeat(10), 9).is_err());
    assert!(check_depth(&"a=>".repeat(10), 9).is_err());
    assert!(check_depth(&"if(x) ".repeat(10), 9).is_err());
    assert!(check_depth(&"if(x) ".repeat(10), 11).is_ok());
}

#[test]
fn boundaries_reset_chains() {
    let many = "const a = 1;\n".repeat(1000);
    assert!(check_depth(&many, 4).is_ok());
    let asi = "const a = 1\n".repeat(1000);
    assert!(check_depth(&asi, 4).is_ok());
    let ifs = "if (a) { b = 1; }\n".repeat(1000);
    assert!(check_depth(&ifs, 4).is_ok());
    let obj = format!("x = {{{}}};", "a: 1, ".repeat(1000));
    assert!(check_depth(&obj, 4).is_ok());
}

#[test]
fn skips_strings_comments_templates_and_regexes() {
    assert!(check_depth("let s = '((((((((((';", 3).is_ok());
    assert!(check_depth("// ((((((((((\nlet a;", 3).is_ok());
    assert!(check_depth("/* (((((\n((((( */ let a;", 3).is_ok());
    assert!(check_depth("let r = /[(((((((]/g;", 3).is_ok());
    assert!(check_depth("let t = `((((((( ${1} ((((`;", 3).is_ok());
    assert!(check_depth("let t = `${`${`${1}`}`}`;", 4).is_ok());
    assert!(check_depth("let t = `${`${`${`${1}`}`}`}`;", 4).is_err());
    assert!(check_depth("let d = (a + b) / (c + d) / 2;", 4).is_ok());
}

#[test]
fn ambiguous_slashes_never_hide_nesting() {
    // After `}` a `/` may divide or start a regex: closers on the rest of the line are not
    // trusted, so the openers behind them still count.
    let hide = "x = [function(){}/]})/, ".repeat(50);
    assert!(check_depth(&hide, 20).is_err());
    // A backtick on such a line degrades to counting every opener.
    let tick = format!("{{}}/`/;\n{}", "((((\n".repeat(10));
    assert!(check_depth(&tick, 20).is_err());
}

#[test]
fn reports_the_position() {
    let err = check_depth("let a;\nlet b;\n  f((((1))));", 3).unwrap_err();
    assert_eq!((err.line, err.column), (3, 7));
}
