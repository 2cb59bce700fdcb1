//! ECMAScript number semantics for JSON numbers.
//!
//! JavaScript numbers are IEEE-754 doubles. Everywhere a number reaches a model (violation messages,
//! rendered values, generated TypeScript) it is printed the way `String(number)` prints it, and
//! everywhere numbers are compared (bounds, `enum`, `const`, `uniqueItems`) they are compared as
//! the doubles JavaScript would hold, whatever representation `serde_json` chose (`u64`, `i64` or
//! `f64`). See `docs/CONTRACTS.md` ("Numbers").
//!
//! The workspace builds `serde_json` with `float_roundtrip`, so a decimal text parses to the
//! nearest double exactly as `JSON.parse` does (without it, some texts land one double away).

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::Number;

/// 2^53: every integer of smaller magnitude is exactly representable as a double.
const EXACT_INT_LIMIT: f64 = 9_007_199_254_740_992.0;
/// 2^53 as an integer.
const EXACT_INT_LIMIT_U64: u64 = 9_007_199_254_740_992;

/// Formats a double exactly as ECMAScript `Number.prototype.toString()` does.
///
/// Shortest round-trip digits; exponent form `1e+21` from 1e21 up and `1e-7` below 1e-6; integral
/// values without `.0`; `-0` prints `0`; `NaN`, `Infinity` and `-Infinity` as JavaScript prints them.
///
/// ```
/// use dsh_tools::json::js_number_string;
/// assert_eq!(js_number_string(1e21), "1e+21");
/// assert_eq!(js_number_string(1e-7), "1e-7");
/// assert_eq!(js_number_string(100.0), "100");
/// assert_eq!(js_number_string(0.1), "0.1");
/// assert_eq!(js_number_string(-0.0), "0");
/// assert_eq!(js_number_string(123456789012345680000.0), "123456789012345680000");
/// assert_eq!(js_number_string(f64::NAN), "NaN");
/// ```
pub fn js_number_string(x: f64) -> String {
    let mut out = String::new();
    write_js_number(&mut out, x);
    out
}

/// Appends [`js_number_string`]`(x)` to `out` (no intermediate allocation for small integers).
///
/// ```
/// let mut out = String::from("x=");
/// dsh_tools::json::write_js_number(&mut out, 2.5e-7);
/// assert_eq!(out, "x=2.5e-7");
/// ```
pub fn write_js_number(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    let magnitude = x.abs();
    if magnitude < EXACT_INT_LIMIT && magnitude.fract() == 0.0 {
        // Exact: the magnitude is an integer below 2^53.
        let _ = write!(out, "{}", magnitude as u64);
        return;
    }
    // Rust's `{:e}` prints the shortest round-trip digits as `d[.ddd]e<exp>`.
    let scientific = format!("{magnitude:e}");
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        out.push_str(&scientific);
        return;
    };
    let Ok(exponent) = exponent.parse::<i64>() else {
        out.push_str(&scientific);
        return;
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = even_on_tie(magnitude, digits, exponent);
    write_ecmascript_digits(out, &digits, exponent + 1);
}

/// ECMAScript's tie-break on the shortest digits: when `magnitude` lies exactly halfway between
/// two shortest candidates, JavaScript prints the even one (`-2085550647033629.25` prints
/// `-2085550647033629.2`); Rust's shortest formatting may give the odd one.
///
/// `digits` (k digits) and `exponent` are Rust's shortest form `d.ddd × 10^exponent`.
fn even_on_tie(magnitude: f64, digits: String, exponent: i64) -> String {
    let k = digits.len();
    if digits.as_bytes().last().is_none_or(|d| d % 2 == 0) {
        return digits;
    }
    // A tie needs the exact value to have k + 1 significant digits, the last a 5. A cheap look
    // at 25 more digits first; then the whole exact expansion (at most 767 significant digits).
    let Some(below) = halfway_below(magnitude, k, exponent, k + 24)
        .and_then(|_| halfway_below(magnitude, k, exponent, 800))
    else {
        return digits;
    };
    // The candidates are `below` and `below + 1`; the even one of them.
    let even = if below.as_bytes().last().is_some_and(|d| d % 2 == 0) {
        below
    } else {
        match increment_decimal(&below) {
            Some(up) => up,
            None => return digits,
        }
    };
    // Only a candidate that reads back as the same double is a candidate at all.
    let reads_back = format!("{}.{}e{exponent}", &even[..1], &even[1..])
        .parse::<f64>()
        .is_ok_and(|x| x == magnitude);
    if reads_back {
        even.trim_end_matches('0').to_owned()
    } else {
        digits
    }
}

/// When the exact decimal value of `magnitude` (printed with `precision` digits after the
/// point, in exponent form with the same `exponent`) is `t5` followed by zeros, with `t` of `k`
/// digits: `t`.
fn halfway_below(magnitude: f64, k: usize, exponent: i64, precision: usize) -> Option<String> {
    let exact = format!("{magnitude:.precision$e}");
    let (mantissa, exact_exponent) = exact.split_once('e')?;
    if exact_exponent.parse::<i64>().ok()? != exponent {
        return None;
    }
    let significant: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let (t, rest) = significant.split_at_checked(k)?;
    let mut rest = rest.bytes();
    (rest.next() == Some(b'5') && rest.all(|d| d == b'0')).then(|| t.to_owned())
}

/// `digits + 1` as a decimal of the same length, or `None` when it would carry out (all nines).
fn increment_decimal(digits: &str) -> Option<String> {
    let mut bytes = digits.as_bytes().to_vec();
    for d in bytes.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

/// Lays out the decimal digits `s` (k digits, value `0.s × 10^n`) per ECMAScript Number::toString.
fn write_ecmascript_digits(out: &mut String, digits: &str, n: i64) {
    let k = digits.len() as i64;
    if k <= n && n <= 21 {
        out.push_str(digits);
        push_zeros(out, n - k);
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        push_zeros(out, -n);
        out.push_str(digits);
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let e = n - 1;
        out.push('e');
        out.push(if e >= 0 { '+' } else { '-' });
        let _ = write!(out, "{}", e.unsigned_abs());
    }
}

fn push_zeros(out: &mut String, count: i64) {
    for _ in 0..count {
        out.push('0');
    }
}

/// The number as a JavaScript double (integers beyond 2^53 round to the nearest double).
///
/// ```
/// use dsh_tools::json::number_to_f64;
/// let n = serde_json::Number::from(u64::MAX);
/// assert_eq!(number_to_f64(&n), 18446744073709551616.0);
/// ```
pub fn number_to_f64(n: &Number) -> f64 {
    if let Some(u) = n.as_u64() {
        u as f64
    } else if let Some(i) = n.as_i64() {
        i as f64
    } else {
        n.as_f64().unwrap_or(f64::NAN)
    }
}

/// Formats a JSON number the way JavaScript would print it after parsing it into a double.
///
/// ```
/// use dsh_tools::json::number_js_string;
/// let big: serde_json::Value = serde_json::from_str("123456789012345678901").unwrap();
/// assert_eq!(number_js_string(big.as_number().unwrap()), "123456789012345680000");
/// assert_eq!(number_js_string(&serde_json::Number::from(u64::MAX)), "18446744073709552000");
/// assert_eq!(number_js_string(&serde_json::Number::from_f64(1.0).unwrap()), "1");
/// ```
pub fn number_js_string(n: &Number) -> String {
    let mut out = String::new();
    write_js_number_of(&mut out, n);
    out
}

/// Appends [`number_js_string`]`(n)` to `out`.
///
/// ```
/// let mut out = String::new();
/// dsh_tools::json::write_js_number_of(&mut out, &serde_json::Number::from(-3));
/// assert_eq!(out, "-3");
/// ```
pub fn write_js_number_of(out: &mut String, n: &Number) {
    if let Some(u) = n.as_u64()
        && u <= EXACT_INT_LIMIT_U64
    {
        let _ = write!(out, "{u}");
        return;
    }
    if let Some(i) = n.as_i64()
        && i.unsigned_abs() <= EXACT_INT_LIMIT_U64
    {
        let _ = write!(out, "{i}");
        return;
    }
    write_js_number(out, number_to_f64(n));
}

/// Whether the number is an integer in the JSON-Schema / JavaScript sense: finite with a zero
/// fraction, whatever its representation (`1.0` and `1e300` are integers).
///
/// ```
/// use dsh_tools::json::is_integer;
/// use serde_json::Number;
/// assert!(is_integer(&Number::from(7)));
/// assert!(is_integer(&Number::from_f64(1.0).unwrap()));
/// assert!(is_integer(&Number::from_f64(1e300).unwrap()));
/// assert!(!is_integer(&Number::from_f64(1.5).unwrap()));
/// ```
pub fn is_integer(n: &Number) -> bool {
    if n.is_u64() || n.is_i64() {
        return true;
    }
    n.as_f64()
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// Compares two JSON numbers the way JavaScript compares them: each is the double nearest its
/// decimal value (what `JSON.parse` gives), so integers beyond 2^53 that round to the same double
/// are equal (`9007199254740993 == 9007199254740992`), whatever representation `serde_json` chose
/// (`u64`, `i64` or `f64`).
///
/// This is the one number contract of the crate: bounds, `enum`, `const` and equality all go
/// through here, and printing goes through [`write_js_number_of`], which prints the same double.
///
/// ```
/// use std::cmp::Ordering;
/// use dsh_tools::json::cmp_numbers;
/// use serde_json::Number;
/// let max = Number::from(u64::MAX);
/// let two_pow_64 = Number::from_f64(18446744073709551616.0).unwrap();
/// assert_eq!(cmp_numbers(&max, &two_pow_64), Ordering::Equal); // the same double, as in JS
/// assert_eq!(cmp_numbers(&Number::from(1), &Number::from_f64(1.0).unwrap()), Ordering::Equal);
/// assert_eq!(cmp_numbers(&Number::from(-1), &Number::from(0u64)), Ordering::Less);
/// ```
pub fn cmp_numbers(a: &Number, b: &Number) -> Ordering {
    let (x, y) = (number_to_f64(a), number_to_f64(b));
    // JSON numbers are finite; `total_cmp` only orders the impossible NaN (and would tell -0 from
    // 0, which `partial_cmp` treats as equal, as JavaScript does).
    x.partial_cmp(&y).unwrap_or_else(|| x.total_cmp(&y))
}

/// Whether two JSON numbers are the same JavaScript number (`1 == 1.0`, `0 == -0`, and
/// `9007199254740993 == 9007199254740992`: both texts parse to the double 2^53).
///
/// ```
/// use dsh_tools::json::numbers_equal;
/// use serde_json::Number;
/// assert!(numbers_equal(&Number::from(9007199254740992u64), &Number::from_f64(9007199254740992.0).unwrap()));
/// assert!(numbers_equal(&Number::from(9007199254740993u64), &Number::from_f64(9007199254740992.0).unwrap()));
/// assert!(!numbers_equal(&Number::from(9007199254740991u64), &Number::from_f64(9007199254740992.0).unwrap()));
/// ```
pub fn numbers_equal(a: &Number, b: &Number) -> bool {
    number_to_f64(a) == number_to_f64(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f64) -> Number {
        Number::from_f64(x).expect("finite")
    }

    #[test]
    fn ecmascript_layouts() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (123.456, "123.456"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e21, "1.5e+21"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.25e-7, "1.25e-7"),
            (0.000123, "0.000123"),
            (1.0 / 3.0, "0.3333333333333333"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (9007199254740993.0, "9007199254740992"),
            (18446744073709551616.0, "18446744073709552000"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1e-7, "-1e-7"),
            (123e18, "123000000000000000000"),
            // Exactly halfway between two shortest candidates: the even one (Node.js prints it).
            (-(2085550647033629.0 + 0.25), "-2085550647033629.2"),
            (2085550647033629.0 + 0.75, "2085550647033629.8"),
        ];
        for (x, want) in cases {
            assert_eq!(js_number_string(*x), *want, "{x:?}");
        }
    }

    #[test]
    fn number_strings_follow_js_doubles() {
        assert_eq!(
            number_js_string(&Number::from(i64::MIN)),
            "-9223372036854776000"
        );
        assert_eq!(
            number_js_string(&Number::from(9007199254740993u64)),
            "9007199254740992"
        );
        assert_eq!(
            number_js_string(&Number::from(-9007199254740992i64)),
            "-9007199254740992"
        );
        assert_eq!(number_js_string(&f(2.0)), "2");
    }

    #[test]
    fn exact_comparisons() {
        // u64::MAX rounds to the double 2^64, as `JSON.parse` rounds it.
        assert_eq!(
            cmp_numbers(&Number::from(u64::MAX), &f(18446744073709551616.0)),
            Ordering::Equal
        );
        assert_eq!(
            cmp_numbers(&Number::from(u64::MAX - 4096), &f(18446744073709551616.0)),
            Ordering::Less
        );
        assert_eq!(
            cmp_numbers(&Number::from(i64::MIN), &f(-9223372036854775808.0)),
            Ordering::Equal
        );
        assert_eq!(
            cmp_numbers(&Number::from(i64::MIN), &f(-9223372036854775807.0)),
            Ordering::Equal
        );
        assert_eq!(cmp_numbers(&Number::from(3), &f(2.5)), Ordering::Greater);
        assert_eq!(cmp_numbers(&Number::from(-3), &f(-2.5)), Ordering::Less);
        assert_eq!(cmp_numbers(&Number::from(-2), &f(-2.5)), Ordering::Greater);
        assert_eq!(cmp_numbers(&Number::from(0), &f(-0.0)), Ordering::Equal);
        assert_eq!(cmp_numbers(&Number::from(5), &f(1e300)), Ordering::Less);
        assert_eq!(cmp_numbers(&Number::from(5), &f(-1e300)), Ordering::Greater);
        assert_eq!(cmp_numbers(&f(0.1), &f(0.2)), Ordering::Less);
        assert!(!is_integer(&f(0.5)));
        assert!(is_integer(&Number::from(u64::MAX)));
    }
}
