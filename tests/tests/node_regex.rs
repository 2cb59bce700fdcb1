//! Differential tests against Node.js: our `pattern` verdicts against
//! `new RegExp(p, "u").test(s)`, and our string lengths (`minLength`/`maxLength` count code
//! points) against `[...s].length`, on a generated corpus (`docs/CONTRACTS.md`, "Schema
//! vocabulary").
//!
//! Node runs as a child process with the corpus in a file. Without Node the test skips, except
//! under CI or `scripts/test` (`DSH_REQUIRE_NODE=1`), where it fails.

use std::path::PathBuf;
use std::process::Command;

use dsh_tools::subset::{Vocabulary, is_supported, validate_value};
use serde_json::{Value, json};

/// Patterns exercising the places where ECMAScript differs from other engines.
const PATTERNS: &[&str] = &[
    r"^\d+$",
    r"\d",
    r"^\w+$",
    r"\W",
    r"\bfoo\b",
    r"\B",
    r"^\s*$",
    r"\S",
    r"^.$",
    r"^..$",
    r"^[^a]$",
    r"(?=.*\d)(?=.*[a-z])",
    r"(?<=\$)\d+",
    r"(?<!\$)\b\d+",
    r"^(?:a|b)+$",
    r"(\w)\1",
    r"(?<x>[a-z])\k<x>",
    r"^[\u{1F600}-\u{1F64F}]$",
    r"^\p{L}+$",
    r"^\p{Script=Greek}+$",
    r"\P{Lu}",
    r"^[a-z]{2,4}$",
    r"a{2}",
    r"^\u0041$",
    r"^\x41$",
    r"[\s\S]",
    r"^$",
    r"\u{10FFFF}",
    r"^[^\d\s]+$",
    r"^(?:[\w.-]+)/(?:[\w.-]+)$",
    r"\cJ",
    r"^\/$",
    r"[\-]",
    r"^\0$",
    r"^[\b]$",
];

/// Strings mixing ASCII, Latin-1, other scripts, digits of other scripts, astral characters,
/// line terminators and the JavaScript-only whitespace.
const PIECES: &[&str] = &[
    "",
    "a",
    "z",
    "A",
    "foo",
    "bar",
    "0",
    "9",
    "42",
    "$",
    "$12",
    "_",
    "-",
    ".",
    "/",
    "é",
    "ß",
    "Ω",
    "αβγ",
    "ж",
    "\u{0660}",
    "\u{0969}",
    "\u{FF10}",
    "😀",
    "😎",
    "\u{10FFFF}",
    "\n",
    "\r",
    "\u{2028}",
    "\u{00A0}",
    "\u{FEFF}",
    "\u{0085}",
    " ",
    "\t",
    "\u{1680}",
    "\u{200B}",
    "ab",
    "aa",
    "abab",
    "rust-lang/rust",
    "a.b/c-d",
    "\0",
    "\u{8}",
    "A",
    "Éé",
];

/// A deterministic corpus of strings: the pieces, then pairs and triples of them.
fn strings() -> Vec<String> {
    let mut out: Vec<String> = PIECES.iter().map(|s| (*s).to_owned()).collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..400 {
        let parts = 2 + next(3);
        let s: String = (0..parts).map(|_| PIECES[next(PIECES.len())]).collect();
        out.push(s);
    }
    out
}

fn node() -> Option<PathBuf> {
    let node = std::env::var_os("DSH_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let ok = Command::new(&node)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(node);
    }
    let message = "Node.js is missing (set DSH_NODE or put `node` on PATH)";
    assert!(!dsh_tools_tests::node_required(), "{message}");
    eprintln!("skipped: {message}");
    None
}

/// Runs `script` on the corpus file and returns its JSON output.
fn run_node(node: &PathBuf, script: &str, corpus: &Value, label: &str) -> Value {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("node-differential");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let input = dir.join(format!("{label}.json"));
    std::fs::write(&input, corpus.to_string()).expect("corpus written");
    let output = Command::new(node)
        .arg("-e")
        .arg(script)
        .arg(&input)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("node printed JSON")
}

#[test]
fn patterns_agree_with_node_regexp_u() {
    let Some(node) = node() else { return };
    let strings = strings();
    let corpus = json!({"patterns": PATTERNS, "strings": strings});
    let script = r#"
        const fs = require("fs");
        const { patterns, strings } = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
        const out = patterns.map((p) => {
            let re;
            try { re = new RegExp(p, "u"); } catch (e) { return null; }
            return strings.map((s) => re.test(s));
        });
        process.stdout.write(JSON.stringify(out));
    "#;
    let verdicts = run_node(&node, script, &corpus, "patterns");
    let mut compared = 0;
    let mut disagreements = Vec::new();
    for (pattern, node_row) in PATTERNS.iter().zip(verdicts.as_array().expect("rows")) {
        let schema = json!({"type": "string", "pattern": pattern});
        let ours_ok = is_supported(&schema, Vocabulary::Parameters);
        let Some(node_row) = node_row.as_array() else {
            assert!(!ours_ok, "Node refuses /{pattern}/u, we accept it");
            continue;
        };
        assert!(ours_ok, "Node accepts /{pattern}/u, we refuse it");
        for (s, expected) in strings.iter().zip(node_row) {
            let ours = validate_value(&schema, &json!(s), "s").is_empty();
            compared += 1;
            if Some(ours) != expected.as_bool() {
                disagreements.push(format!(
                    "/{pattern}/u on {s:?}: node {expected}, ours {ours}"
                ));
            }
        }
    }
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "node-regex",
        &format!(
            "pattern vs Node RegExp(p, \"u\"): {compared} cases compared, {} disagreements",
            disagreements.len()
        ),
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(compared > 10_000, "{compared}");
}

#[test]
fn string_lengths_count_code_points_like_spread() {
    let Some(node) = node() else { return };
    let strings = strings();
    let script = r#"
        const fs = require("fs");
        const strings = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
        process.stdout.write(JSON.stringify(strings.map((s) => [[...s].length, s.length])));
    "#;
    let lengths = run_node(&node, script, &json!(strings), "lengths");
    let mut differs_from_utf16 = 0;
    for (s, pair) in strings.iter().zip(lengths.as_array().expect("lengths")) {
        let code_points = pair[0].as_u64().expect("spread length");
        let utf16 = pair[1].as_u64().expect(".length");
        let exact = json!({"type": "string", "minLength": code_points, "maxLength": code_points});
        assert!(
            validate_value(&exact, &json!(s), "s").is_empty(),
            "{s:?}: [...s].length = {code_points}"
        );
        if utf16 != code_points {
            differs_from_utf16 += 1;
            let by_units = json!({"type": "string", "maxLength": code_points - 1});
            assert!(!validate_value(&by_units, &json!(s), "s").is_empty());
        }
    }
    assert!(differs_from_utf16 > 0, "the corpus holds astral characters");
}
