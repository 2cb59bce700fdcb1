//! Differential tests against Node.js: JavaScript is the judge of the JSON boundary
//! (`docs/CONTRACTS.md`, "Numbers" and "JSON values").
//!
//! - numbers: ≥ 100,000 generated number texts (random doubles in many spellings, the 2^53
//!   neighbourhood, subnormals, exponents near 1e21 and 1e-7, integers beyond u64, hard rounding
//!   cases): our printing against `String(JSON.parse(t))`, our equality and order against `===`
//!   and `<`;
//! - JSON texts: what we accept (parsed and lossless) against what survives a JavaScript round
//!   trip, and `js_stringify` against `JSON.stringify(JSON.parse(t))`;
//! - string escaping: `json_quote` against `JSON.stringify` on generated strings.
//!
//! One `node` process per corpus (`tests/node/differential.mjs`). The named regressions at the
//! end are the disagreements these tests found, pinned without Node.

use dsh_tools::json::{
    cmp_numbers, is_lossless, js_stringify, json_quote, number_js_string, numbers_equal,
};
use dsh_tools_tests::node::run_differential;
use dsh_tools_tests::record_figure;
use serde_json::{Number, Value, json};

const SCRATCH: &str = env!("CARGO_TARGET_TMPDIR");

/// A small deterministic generator (SplitMix64): the corpora are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    fn digits(&mut self, count: usize) -> String {
        (0..count)
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect()
    }
}

/// A finite double from the interesting regions.
fn interesting_double(rng: &mut Rng) -> f64 {
    let x = match rng.below(10) {
        // Any finite double.
        0 | 1 => loop {
            let x = f64::from_bits(rng.next());
            if x.is_finite() {
                break x;
            }
        },
        // Subnormals.
        2 => f64::from_bits(rng.below(1 << 52)),
        // The 2^53 neighbourhood (integers written exactly below).
        3 => 9_007_199_254_740_992.0 + (rng.below(64) as f64 - 32.0) * 1.0,
        // Around 1e21 (where String switches to exponent form).
        4 => 1e21 * (1.0 + (rng.below(2001) as f64 - 1000.0) * 1e-16),
        // Around 1e-7 and 1e-6 (the other switch).
        5 => *rng.pick(&[1e-7, 1e-6]) * (1.0 + (rng.below(2001) as f64 - 1000.0) * 1e-16),
        // Short decimals, the everyday numbers.
        6 => (rng.below(2_000_000) as f64 - 1e6) / 10f64.powi(rng.below(8) as i32),
        // Powers of ten and their neighbours.
        7 => {
            let p = 10f64.powi(rng.below(617) as i32 - 308);
            [p, p.next_up(), p.next_down()][rng.below(3) as usize]
        }
        // Integers up to 1e30.
        8 => (rng.next() as f64) * 10f64.powi(rng.below(12) as i32),
        // Random exponent, random mantissa.
        _ => f64::from_bits((rng.below(2046) + 1) << 52 | rng.below(1 << 52)),
    };
    if rng.below(2) == 0 { -x } else { x }
}

/// Spellings of `x` (all denote `x` or a decimal that rounds near it).
fn spellings(x: f64, rng: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    let shortest = format!("{x:e}"); // 1.5e300, -2e-7
    let (mantissa, exponent) = shortest.split_once('e').expect("exponent form");
    let exponent: i32 = exponent.parse().expect("an exponent");
    out.push(shortest.clone());
    // Exponent styles: E, explicit +, leading zeros.
    let sign = if exponent < 0 { "-" } else { "+" };
    out.push(format!("{mantissa}E{sign}{:03}", exponent.unsigned_abs()));
    // Trailing zeros in the mantissa, and the point shifted into the exponent.
    let digits: String = mantissa
        .trim_start_matches('-')
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let minus = if x.is_sign_negative() { "-" } else { "" };
    let zeros = rng.below(4) as usize;
    out.push(format!(
        "{minus}{digits}{}e{}",
        "0".repeat(zeros),
        exponent - (digits.len() as i32 - 1) - zeros as i32
    ));
    out.push(format!(
        "{minus}0.{digits}e{}",
        exponent + 1 // 0.d1d2… × 10^(e+1)
    ));
    // Plain decimal (exact expansion for moderate magnitudes).
    if (1e-30..1e30).contains(&x.abs()) {
        out.push(format!("{x}"));
    }
    // 17 and 25 significant digits (the second is closer to the exact binary value).
    out.push(format!("{x:.16e}"));
    out.push(format!("{x:.24e}"));
    // A hard rounding case: the exact expansion, cut and perturbed in its last digits.
    let exact = format!("{x:.40e}");
    let (m, e) = exact.split_once('e').expect("exponent form");
    let cut = 18 + rng.below(20) as usize;
    let m = &m[..m.len().min(cut + usize::from(x.is_sign_negative()) + 2)];
    let extra = 1 + rng.below(3) as usize;
    out.push(format!("{m}{}e{e}", rng.digits(extra)));
    out
}

/// Integer texts: the 2^53 neighbourhood, u64/i64 edges, and integers far beyond u64.
fn integer_texts(rng: &mut Rng) -> Vec<String> {
    let base: i128 = 1 << 53;
    let mut out = vec![format!("{}", base + rng.below(200) as i128 - 100)];
    out.push(format!("-{}", base + rng.below(200) as i128 - 100));
    out.push(format!("{}", u64::MAX - rng.below(5000)));
    out.push(format!("{}", i64::MIN + rng.below(5000) as i64));
    out.push(format!("{}", rng.next()));
    let long = 20 + rng.below(30) as usize;
    out.push(format!("{}{}", 1 + rng.below(9), rng.digits(long)));
    out.push(format!("-{}{}", 1 + rng.below(9), rng.digits(long)));
    // Around 1e21 written out as an integer.
    out.push(format!(
        "{}{}",
        *rng.pick(&["99999999999999", "100000000000000"]),
        rng.digits(7)
    ));
    out
}

/// Texts JSON.parse refuses or gives a non-finite value for, and odd but valid spellings.
const EDGE_TEXTS: &[&str] = &[
    "0",
    "-0",
    "0.0",
    "-0.0",
    "0e0",
    "-0e-0",
    "0E+0",
    "1e400",
    "-1e400",
    "1e-400",
    "-1e-400",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "1.7976931348623159e308",
    "2.4703282292062327e-324",
    "2.4703282292062328e-324",
    "4.9406564584124654e-324",
    "01",
    "-01",
    "1.",
    ".5",
    "+1",
    "1e",
    "1e+",
    "-",
    "0x10",
    "Infinity",
    "-Infinity",
    "NaN",
    "1_000",
    " 1",
    "1 ",
    "00",
    "1.e5",
    "1e5.5",
    "--1",
    "0.000001",
    "0.0000001",
    "1e21",
    "999999999999999999999",
    "1000000000000000000000",
    "123456789012345678901234567890",
    "9007199254740993",
    "9007199254740995",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "1e-7",
    "1E-7",
    "1e-0007",
    "100e-9",
];

#[test]
fn numbers_print_and_compare_as_javascript() {
    let mut rng = Rng(0xd5_7001);
    let mut texts: Vec<String> = EDGE_TEXTS.iter().map(|t| (*t).to_owned()).collect();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    while texts.len() < 100_000 {
        let start = texts.len();
        if rng.below(4) == 0 {
            texts.extend(integer_texts(&mut rng));
        } else {
            let x = interesting_double(&mut rng);
            texts.extend(spellings(x, &mut rng));
            // A neighbour: equal to none of the spellings, ordered against them.
            let neighbour = if rng.below(2) == 0 {
                x.next_up()
            } else {
                x.next_down()
            };
            if neighbour.is_finite() {
                texts.push(format!("{neighbour:e}"));
            }
        }
        for i in start..texts.len() - 1 {
            pairs.push((i, i + 1));
            pairs.push((start, i + 1));
        }
    }
    let cases = json!({"texts": texts, "pairs": pairs});
    let node = run_differential(SCRATCH, "numbers", &cases);
    let strings = node["strings"].as_array().expect("strings");
    let node_pairs = node["pairs"].as_array().expect("pairs");
    assert_eq!(strings.len(), texts.len());

    let ours: Vec<Option<Number>> = texts
        .iter()
        .map(|t| match serde_json::from_str::<Value>(t) {
            Ok(Value::Number(n)) => Some(n),
            _ => None,
        })
        .collect();
    let mut disagreements = Vec::new();
    for ((text, mine), js) in texts.iter().zip(&ours).zip(strings) {
        let js = js.as_str();
        let expected = match js {
            // Not JSON, or a non-finite double: not a lossless JSON number; we refuse it.
            None | Some("Infinity" | "-Infinity") => None,
            Some(s) => Some(s.to_owned()),
        };
        let printed = mine.as_ref().map(number_js_string);
        if printed != expected {
            disagreements.push(format!("{text}: ours {printed:?}, JavaScript {js:?}"));
        }
    }
    let mut compared_pairs = 0;
    for ((i, j), js) in pairs.iter().zip(node_pairs) {
        let (Some(a), Some(b)) = (&ours[*i], &ours[*j]) else {
            continue;
        };
        compared_pairs += 1;
        let (js_eq, js_lt) = (js[0].as_bool(), js[1].as_bool());
        let (eq, lt) = (numbers_equal(a, b), cmp_numbers(a, b).is_lt());
        if (Some(eq), Some(lt)) != (js_eq, js_lt) {
            disagreements.push(format!(
                "{} vs {}: ours ==:{eq} <:{lt}, JavaScript ===:{js_eq:?} <:{js_lt:?}",
                texts[*i], texts[*j]
            ));
        }
    }
    record_figure(
        SCRATCH,
        "node-numbers",
        &format!(
            "numbers vs Node.js: {} texts printed, {compared_pairs} pairs compared (=== and <), {} disagreements",
            texts.len(),
            disagreements.len()
        ),
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements with JavaScript, first: {:#?}",
        disagreements.len(),
        &disagreements[..disagreements.len().min(20)]
    );
}

/// A random JSON text: nested containers, keys that JavaScript orders first (array indices),
/// duplicate keys, escapes of every kind (lone surrogates included) and numbers in many
/// spellings.
fn random_json(rng: &mut Rng, depth: usize, out: &mut String) {
    let kind = if depth > 4 {
        rng.below(4)
    } else {
        rng.below(7)
    };
    match kind {
        0 => out.push_str(rng.pick::<&str>(&["null", "true", "false"])),
        1 => {
            let x = interesting_double(rng);
            let spellings = spellings(x, rng);
            out.push_str(rng.pick::<String>(&spellings));
        }
        2 => out.push_str(rng.pick::<&str>(&[
            "-0",
            "-0.0",
            "0",
            "1e400",
            "-1e-400",
            "9007199254740993",
        ])),
        3 => random_string(rng, out),
        4 | 5 => {
            out.push('{');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                let key = *rng.pick(&[
                    "a",
                    "b",
                    "0",
                    "1",
                    "2",
                    "10",
                    "01",
                    "-1",
                    "1.0",
                    "4294967294",
                    "4294967295",
                    "9007199254740993",
                    "__proto__",
                    "constructor",
                    "",
                ]);
                if rng.below(3) == 0 {
                    random_string(rng, out);
                } else {
                    out.push_str(&json_quote(key));
                }
                out.push(':');
                random_json(rng, depth + 1, out);
            }
            out.push('}');
        }
        _ => {
            out.push('[');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push_str(rng.pick::<&str>(&[",", " , ", ",\n\t"]));
                }
                random_json(rng, depth + 1, out);
            }
            out.push(']');
        }
    }
}

/// A JSON string literal with raw characters and escapes, lone surrogates included.
fn random_string(rng: &mut Rng, out: &mut String) {
    out.push('"');
    for _ in 0..rng.below(6) {
        out.push_str(rng.pick::<&str>(&[
            "a",
            "é",
            "😀",
            "\u{2028}",
            "\u{2029}",
            "\u{7f}",
            "\u{85}",
            "\u{feff}",
            "\\n",
            "\\t",
            "\\u0000",
            "\\u001f",
            "\\u007f",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\r",
            "\\ud800",
            "\\udfff",
            "\\ud83d\\ude00",
            "\\ude00\\ud83d",
            "\\u2028",
            "\\uFEFF",
        ]));
    }
    out.push('"');
}

/// Hand-written texts: what JSON refuses, what it allows, and nesting around serde_json's limit.
fn edge_json_texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        "{}",
        "[]",
        "\"\"",
        " \t\n\r1 ",
        "\u{feff}1",
        "\u{a0}1",
        "[1,]",
        "{\"a\":1,}",
        "// c\n1",
        "/* c */1",
        "'a'",
        "{a:1}",
        "\"\t\"",
        "\"\u{1}\"",
        "\"\\x41\"",
        "\"\\u00\"",
        "\"\\U0041\"",
        "[1 2]",
        "{\"a\" 1}",
        "nul",
        "True",
        "{\"a\":1,\"a\":2}",
        "{\"b\":1,\"a\":2,\"b\":3}",
        "{\"b\":1,\"1\":2,\"0\":3}",
        "{\"__proto__\":{\"x\":1}}",
        "[-0]",
        "{\"a\":-0.0}",
        "[1e400]",
        "[-1e-400]",
        "\"\\ud800\"",
        "{\"\\ud800\":1}",
        "1 1",
        "",
        " ",
    ]
    .iter()
    .map(|t| (*t).to_owned())
    .collect();
    for depth in [64, 127, 128, 129, 200, 1000] {
        texts.push(format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
        texts.push(format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)));
    }
    texts
}

/// Whether the text holds, anywhere (even in a value a later duplicate key replaces, which
/// JavaScript never looks at again), a lone surrogate escape or a number literal that overflows
/// to infinity: we refuse such texts while parsing (docs/CONTRACTS.md, "JSON values").
fn refused_anywhere_in_text(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut pending_high = false;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            let escape = (b == b'\\' && bytes.get(i + 1) == Some(&b'u'))
                .then(|| text.get(i + 2..i + 6))
                .flatten()
                .and_then(|hex| u16::from_str_radix(hex, 16).ok());
            let unit = escape.unwrap_or(0);
            let (high, low) = (
                (0xd800..0xdc00).contains(&unit),
                (0xdc00..0xe000).contains(&unit),
            );
            if pending_high && !low || !pending_high && low {
                return true;
            }
            pending_high = high;
            i += match (escape, b) {
                (Some(_), _) => 6,
                (None, b'\\') => 2,
                (None, b'"') => {
                    in_string = false;
                    1
                }
                _ => 1,
            };
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if b == b'-' || b.is_ascii_digit() {
            let end = bytes[i..]
                .iter()
                .position(|c| !matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                .map_or(bytes.len(), |n| i + n);
            if text[i..end].parse::<f64>().is_ok_and(f64::is_infinite) {
                return true;
            }
            i = end;
            continue;
        }
        i += 1;
    }
    false
}

#[test]
fn json_texts_are_accepted_and_rendered_as_javascript_does() {
    let mut rng = Rng(0x0001_504a);
    let mut texts = edge_json_texts();
    while texts.len() < 20_000 {
        let mut text = String::new();
        random_json(&mut rng, 0, &mut text);
        texts.push(text);
    }
    let node = run_differential(SCRATCH, "json", &json!({"texts": texts}));
    let node = node.as_array().expect("answers");
    assert_eq!(node.len(), texts.len());
    let (mut accepted, mut disagreements) = (0, Vec::new());
    for (text, js) in texts.iter().zip(node) {
        let js_ok = js["ok"].as_bool() == Some(true);
        // The contract (docs/CONTRACTS.md, "JSON values"): we accept exactly the texts
        // JavaScript parses into a value that survives JSON.stringify, except strings that are
        // not well-formed UTF-16 and nesting 128 levels deep or more, which we refuse.
        let expected = js_ok
            && js["lossless"].as_bool() == Some(true)
            && js["wellFormed"].as_bool() == Some(true)
            && js["depth"].as_u64().is_some_and(|d| d < 128)
            && !refused_anywhere_in_text(text);
        let ours = serde_json::from_str::<Value>(text).ok().filter(is_lossless);
        if ours.is_some() != expected {
            disagreements.push(format!(
                "{text:.200}: ours {}, JavaScript {js}",
                if ours.is_some() { "accepts" } else { "refuses" }
            ));
            continue;
        }
        if let Some(value) = ours {
            accepted += 1;
            let rendered = js_stringify(&value);
            if Some(rendered.as_str()) != js["stringify"].as_str() {
                disagreements.push(format!(
                    "{text:.200}: js_stringify {rendered:.200}, JSON.stringify {:.200}",
                    js["stringify"]
                ));
            }
        }
    }
    record_figure(
        SCRATCH,
        "node-json",
        &format!(
            "JSON texts vs Node.js: {} texts ({accepted} accepted and rendered by js_stringify), {} disagreements",
            texts.len(),
            disagreements.len()
        ),
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements with JavaScript, first: {:#?}",
        disagreements.len(),
        &disagreements[..disagreements.len().min(20)]
    );
}

/// Characters whose escaping matters: every C0 control, quote, backslash, slash, DEL, C1, the
/// JavaScript line terminators, BOM, the last BMP characters and non-BMP ones.
const STRING_ALPHABET: &[char] = &[
    '\u{0}',
    '\u{1}',
    '\u{7}',
    '\u{8}',
    '\t',
    '\n',
    '\u{b}',
    '\u{c}',
    '\r',
    '\u{e}',
    '\u{1b}',
    '\u{1f}',
    ' ',
    '"',
    '\\',
    '/',
    'a',
    'Z',
    '~',
    '\u{7f}',
    '\u{80}',
    '\u{85}',
    '\u{a0}',
    'é',
    '\u{2028}',
    '\u{2029}',
    '\u{feff}',
    '\u{fffd}',
    '\u{ffff}',
    '😀',
    '\u{10000}',
    '\u{10ffff}',
];

#[test]
fn string_escaping_matches_json_stringify() {
    let mut rng = Rng(0x5_7a1c);
    let mut strings: Vec<String> = STRING_ALPHABET.iter().map(|c| c.to_string()).collect();
    strings.extend((0u32..0x80).filter_map(char::from_u32).map(String::from));
    while strings.len() < 20_000 {
        let len = rng.below(12) as usize;
        strings.push((0..len).map(|_| *rng.pick(STRING_ALPHABET)).collect());
    }
    let units: Vec<Vec<u16>> = strings.iter().map(|s| s.encode_utf16().collect()).collect();
    let node = run_differential(SCRATCH, "strings", &json!({"strings": units}));
    let node = node.as_array().expect("answers");
    assert_eq!(node.len(), strings.len());
    let disagreements: Vec<String> = strings
        .iter()
        .zip(node)
        .filter(|(s, js)| js.as_str() != Some(json_quote(s).as_str()))
        .map(|(s, js)| format!("{s:?}: ours {}, JavaScript {js}", json_quote(s)))
        .collect();
    record_figure(
        SCRATCH,
        "node-strings",
        &format!(
            "string escaping vs Node.js JSON.stringify: {} strings, {} disagreements",
            strings.len(),
            disagreements.len()
        ),
    );
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

// Named regressions: the disagreements the differential tests found, pinned without Node.js.

/// `-2085550647033629.25` lies exactly halfway between the shortest candidates `…629.2` and
/// `…629.3`; JavaScript prints the even one, Rust's shortest formatting printed the odd one.
#[test]
fn halfway_doubles_print_the_even_shortest_digits() {
    for (text, js) in [
        ("-2.0855506470336293e15", "-2085550647033629.2"),
        ("-2085550647033629.25", "-2085550647033629.2"),
        ("2085550647033629.75", "2085550647033629.8"),
    ] {
        let value: Value = serde_json::from_str(text).expect("a number");
        assert_eq!(
            number_js_string(value.as_number().expect("a number")),
            js,
            "{text}"
        );
    }
}

/// `JSON.stringify` enumerates array-index keys first, in ascending order; `js_stringify` kept
/// insertion order.
#[test]
fn array_index_keys_render_first_as_json_stringify_orders_them() {
    let value: Value = serde_json::from_str(
        r#"{"b":1,"1":2,"0":3,"01":4,"4294967294":5,"4294967295":6,"-1":7,"1.0":8,"a":{"10":1,"9":2}}"#,
    )
    .expect("JSON");
    assert_eq!(
        js_stringify(&value),
        r#"{"0":3,"1":2,"4294967294":5,"b":1,"01":4,"4294967295":6,"-1":7,"1.0":8,"a":{"9":2,"10":1}}"#
    );
}

/// JavaScript accepts these texts (the offending part is replaced by a later duplicate key, or
/// is a lone surrogate it can hold); we refuse them by contract, wherever the part stands.
#[test]
fn lone_surrogates_overflow_and_deep_nesting_are_refused_anywhere_in_the_text() {
    for text in [
        r#""\ud800""#,
        r#"{"a":"\udc00","a":1}"#,
        r#"{"\ud83d":1}"#,
        r#"{"a":1e400,"a":1}"#,
        &format!("{}{}", "[".repeat(128), "]".repeat(128)),
    ] {
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text:.60}");
        assert!(
            refused_anywhere_in_text(text) || text.starts_with("[["),
            "{text:.60}"
        );
    }
    let deepest = format!("{}{}", "[".repeat(127), "]".repeat(127));
    assert!(serde_json::from_str::<Value>(&deepest).is_ok());
    assert!(serde_json::from_str::<Value>(r#""\ud83d\ude00""#).is_ok());
}
