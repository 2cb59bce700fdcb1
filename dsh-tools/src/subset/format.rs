//! `format` as an assertion: the ten formats of the parameter vocabulary, each checked by a
//! small parser of its RFC. Other format names are refused when a schema is checked.
//!
//! Where an RFC and a Rust crate's parser disagree, the validator takes the narrower reading so
//! that a valid string always deserialises (`docs/CONTRACTS.md`, "Schema vocabulary"):
//! `uuid` is the hyphenated form only; `uri` also requires a port of at most 65535, a host for
//! the schemes that need one (`http`, `https`, `ws`, `wss`, `ftp`), a host of letters, digits
//! and `-._~` (no percent escapes or sub-delimiters) and no port or credentials in `file:`
//! URLs, as the `url` crate does;
//! `ipv4` and `ipv6` are exactly what `std::net` parses (no leading zeros, no zone ids).

use std::net::{Ipv4Addr, Ipv6Addr};

/// A supported `format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Format {
    DateTime,
    Date,
    Time,
    Duration,
    Email,
    Uri,
    Uuid,
    Ipv4,
    Ipv6,
    Hostname,
}

/// The supported names, in message order.
pub(crate) const FORMAT_NAMES: &str =
    "date-time, date, time, duration, email, uri, uuid, ipv4, ipv6, hostname";

impl Format {
    /// The format of a name, or `None` when it is not supported.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "date-time" => Self::DateTime,
            "date" => Self::Date,
            "time" => Self::Time,
            "duration" => Self::Duration,
            "email" => Self::Email,
            "uri" => Self::Uri,
            "uuid" => Self::Uuid,
            "ipv4" => Self::Ipv4,
            "ipv6" => Self::Ipv6,
            "hostname" => Self::Hostname,
            _ => return None,
        })
    }

    /// The violation text after `"<path>" `.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Self::DateTime => {
                "must be a date-time (RFC 3339, like \"2024-05-01T12:00:00Z\" or \"2024-05-01T14:00:00.5+02:00\")"
            }
            Self::Date => "must be a date (RFC 3339 full-date, like \"2024-05-01\")",
            Self::Time => "must be a time with an offset (RFC 3339, like \"12:00:00Z\")",
            Self::Duration => "must be an ISO 8601 duration (like \"P1DT12H\" or \"PT30M\")",
            Self::Email => "must be an email address (like \"name@example.com\")",
            Self::Uri => "must be an absolute URI (like \"https://example.com/path\")",
            Self::Uuid => "must be a UUID (like \"67e55044-10b1-426f-9247-bb680e5fe0c8\")",
            Self::Ipv4 => "must be an IPv4 address (like \"192.0.2.1\")",
            Self::Ipv6 => "must be an IPv6 address (like \"2001:db8::1\")",
            Self::Hostname => "must be a hostname (like \"example.com\")",
        }
    }

    /// Whether `s` is in the format.
    pub(crate) fn is_valid(self, s: &str) -> bool {
        match self {
            Self::DateTime => is_date_time(s),
            Self::Date => is_date(s.as_bytes()),
            Self::Time => is_time(s.as_bytes()),
            Self::Duration => is_duration(s.as_bytes()),
            Self::Email => is_email(s),
            Self::Uri => is_uri(s),
            Self::Uuid => is_uuid(s.as_bytes()),
            Self::Ipv4 => s.parse::<Ipv4Addr>().is_ok(),
            Self::Ipv6 => s.parse::<Ipv6Addr>().is_ok(),
            Self::Hostname => is_hostname(s),
        }
    }
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    b.iter().try_fold(0u32, |n, d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

/// Byte classes, one bit each, looked up in [`CLASSES`].
const HEX: u8 = 1;
/// Letters, digits and `-` (hostname labels).
const LABEL: u8 = 2;
/// RFC 5322 `atext`.
const ATEXT: u8 = 4;
/// RFC 3986 `pchar` without `%` (unreserved, sub-delims, `:`, `@`).
const PCHAR: u8 = 8;
/// RFC 3986 `unreserved` (the host characters of a registered name).
const UNRESERVED: u8 = 16;

/// The class bits of every byte.
const CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let alnum = b.is_ascii_alphanumeric();
        let mut bits = 0;
        if b.is_ascii_hexdigit() {
            bits |= HEX;
        }
        if alnum || b == b'-' {
            bits |= LABEL;
        }
        if alnum
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'/'
                    | b'='
                    | b'?'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'{'
                    | b'|'
                    | b'}'
                    | b'~'
            )
        {
            bits |= ATEXT;
        }
        let unreserved = alnum || matches!(b, b'-' | b'.' | b'_' | b'~');
        if unreserved {
            bits |= UNRESERVED;
        }
        if unreserved
            || matches!(
                b,
                b'!' | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
            )
        {
            bits |= PCHAR;
        }
        table[c] = bits;
        c += 1;
    }
    table
};

/// Whether byte `c` is in `class`.
#[inline(always)]
fn is(c: u8, class: u8) -> bool {
    CLASSES[usize::from(c)] & class != 0
}

/// `s` split at the first `byte` (an ASCII delimiter, so both halves are `str`s).
#[inline]
fn split_once_byte(s: &str, byte: u8) -> Option<(&str, &str)> {
    let i = s.bytes().position(|c| c == byte)?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

/// `s` split at the last `byte`.
#[inline]
fn rsplit_once_byte(s: &str, byte: u8) -> Option<(&str, &str)> {
    let i = s.bytes().rposition(|c| c == byte)?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// `full-date`: `YYYY-MM-DD`, a real calendar day.
fn is_date(b: &[u8]) -> bool {
    let [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = *b else {
        return false;
    };
    let (Some(year), Some(month), Some(day)) = (
        digits(&[y0, y1, y2, y3]),
        digits(&[m0, m1]),
        digits(&[d0, d1]),
    ) else {
        return false;
    };
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `full-time`: `HH:MM:SS[.frac](Z|±HH:MM)`; second 60 only at 23:59 UTC (a leap second).
fn is_time(b: &[u8]) -> bool {
    let Some((&[h0, h1, b':', m0, m1, b':', s0, s1], rest)) = b.split_first_chunk::<8>() else {
        return false;
    };
    let (Some(hour), Some(minute), Some(second)) =
        (digits(&[h0, h1]), digits(&[m0, m1]), digits(&[s0, s1]))
    else {
        return false;
    };
    let mut rest = rest;
    if let Some((b'.', fraction)) = rest.split_first() {
        let n = fraction.iter().take_while(|d| d.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = fraction.get(n..).unwrap_or_default();
    }
    let offset: i64 = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), oh0, oh1, b':', om0, om1] => {
            let (Some(oh), Some(om)) = (digits(&[*oh0, *oh1]), digits(&[*om0, *om1])) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let minutes = i64::from(oh * 60 + om);
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return false,
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    if second == 60 {
        let utc = (i64::from(hour * 60 + minute) - offset).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

/// `date-time`: `full-date "T" full-time` (`T`/`t`).
fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.get(..10), b.get(10), b.get(11..)) {
        (Some(date), Some(b'T' | b't'), Some(time)) => is_date(date) && is_time(time),
        _ => false,
    }
}

/// ISO 8601 duration as RFC 3339 appendix A writes it: `P` then date elements (`Y`, `M`, `D`,
/// in order) and/or `T` with time elements (`H`, `M`, `S`, in order), or `PnW` alone.
fn is_duration(b: &[u8]) -> bool {
    let Some(rest) = b.strip_prefix(b"P") else {
        return false;
    };
    if let Some(weeks) = rest.strip_suffix(b"W") {
        return digits(weeks).is_some();
    }
    let (date, time) = match rest.iter().position(|&c| c == b'T') {
        Some(t) => (&rest[..t], Some(&rest[t + 1..])),
        None => (rest, None),
    };
    let elements = |part: &[u8], units: &[u8]| -> Option<usize> {
        let mut count = 0;
        let mut next_unit = 0;
        let mut part = part;
        while !part.is_empty() {
            let n = part.iter().take_while(|d| d.is_ascii_digit()).count();
            let (&unit, after) = part.get(n..)?.split_first()?;
            if n == 0 {
                return None;
            }
            let position = units.get(next_unit..)?.iter().position(|&u| u == unit)?;
            next_unit += position + 1;
            count += 1;
            part = after;
        }
        Some(count)
    };
    let Some(date_count) = elements(date, b"YMD") else {
        return false;
    };
    match time {
        None => date_count > 0,
        Some(time) => elements(time, b"HMS").is_some_and(|n| n > 0),
    }
}

/// `uuid`: the hyphenated 8-4-4-4-12 form, hex digits in either case.
fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => is(*c, HEX),
        })
}

/// RFC 1123 hostname: dot-separated labels of 1–63 letters, digits and hyphens, no label
/// starting or ending with a hyphen, at most 253 characters.
fn is_hostname(s: &str) -> bool {
    let b = s.as_bytes();
    let b = b.strip_suffix(b".").unwrap_or(b);
    if b.is_empty() || b.len() > 253 {
        return false;
    }
    // One pass: each label 1–63 letters, digits and hyphens, not starting or ending with `-`.
    let mut label = 0usize;
    let mut previous = b'.';
    for &c in b {
        if c == b'.' {
            if label == 0 || previous == b'-' {
                return false;
            }
            label = 0;
        } else {
            let starts_with_hyphen = label == 0 && c == b'-';
            if !is(c, LABEL) || starts_with_hyphen || label == 63 {
                return false;
            }
            label += 1;
        }
        previous = c;
    }
    label > 0 && previous != b'-'
}

/// RFC 5321 mailbox: a dot-atom or quoted local part, `@`, then a hostname or an address
/// literal (`[192.0.2.1]`, `[IPv6:…]`).
fn is_email(s: &str) -> bool {
    let Some((local, domain)) = rsplit_once_byte(s, b'@') else {
        return false;
    };
    let local_ok = if let Some(quoted) = local.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        let mut escaped = false;
        quoted.chars().all(|c| {
            if escaped {
                escaped = false;
                return c.is_ascii() && !c.is_ascii_control() || c == '\t';
            }
            escaped = c == '\\';
            escaped || (c.is_ascii() && c != '"' && (!c.is_ascii_control() || c == '\t'))
        }) && !escaped
    } else {
        // A dot-atom: `atext` runs joined by single dots.
        let b = local.as_bytes();
        !b.is_empty()
            && b.first() != Some(&b'.')
            && b.last() != Some(&b'.')
            && !b.windows(2).any(|w| w == b"..")
            && b.iter().all(|&c| c == b'.' || is(c, ATEXT))
    };
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => match literal.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<Ipv6Addr>().is_ok(),
            None => literal.parse::<Ipv4Addr>().is_ok(),
        },
        None => is_hostname(domain),
    };
    local_ok && local.len() <= 64 && domain_ok
}

/// RFC 3986 `URI` (absolute, fragment allowed), narrowed to what the `url` crate accepts too.
fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = split_once_byte(s, b':') else {
        return false;
    };
    let mut scheme_bytes = scheme.bytes();
    if !scheme_bytes.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !scheme_bytes.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
    {
        return false;
    }
    let (rest, fragment) = match split_once_byte(rest, b'#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (rest, None),
    };
    let (hier, query) = match split_once_byte(rest, b'?') {
        Some((hier, query)) => (hier, Some(query)),
        None => (rest, None),
    };
    let encoded_ok = |part: &str, extra: &[u8]| {
        let b = part.as_bytes();
        let mut i = 0;
        while let Some(&c) = b.get(i) {
            if c == b'%' {
                if !b
                    .get(i + 1..i + 3)
                    .is_some_and(|h| h.iter().all(|&c| is(c, HEX)))
                {
                    return false;
                }
                i += 3;
            } else if is(c, PCHAR) || extra.contains(&c) {
                i += 1;
            } else {
                return false;
            }
        }
        true
    };
    if !query.is_none_or(|q| encoded_ok(q, b"/?")) || !fragment.is_none_or(|f| encoded_ok(f, b"/?"))
    {
        return false;
    }
    let needs_host = ["http", "https", "ws", "wss", "ftp"]
        .iter()
        .any(|special| scheme.eq_ignore_ascii_case(special));
    let Some(after) = hier.strip_prefix("//") else {
        return !needs_host && encoded_ok(hier, b"/");
    };
    let (authority, path) = match after.bytes().position(|c| c == b'/') {
        Some(slash) => after.split_at(slash),
        None => (after, ""),
    };
    let file = scheme.eq_ignore_ascii_case("file");
    let host_port = match rsplit_once_byte(authority, b'@') {
        // The `url` crate refuses credentials (and ports) in `file:` URLs.
        Some(_) if file => return false,
        Some((userinfo, host_port)) => {
            if !encoded_ok(userinfo, b"") {
                return false;
            }
            host_port
        }
        None => authority,
    };
    let literal = host_port.starts_with('[');
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        let Some((literal, after)) = split_once_byte(v6, b']') else {
            return false;
        };
        if literal.parse::<Ipv6Addr>().is_err() {
            return false;
        }
        match after {
            "" => (literal, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (literal, Some(port)),
                None => return false,
            },
        }
    } else {
        match rsplit_once_byte(host_port, b':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    // A special scheme's host whose last label is numeric is an IPv4 address to the `url`
    // crate: require the dotted-quad form.
    let special = needs_host || file;
    let trimmed = host.trim_end_matches('.');
    let last = rsplit_once_byte(trimmed, b'.').map_or(trimmed, |(_, last)| last);
    let numeric = last.bytes().all(|c| c.is_ascii_digit())
        || last.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("0x"));
    if special && !literal && !host.is_empty() && numeric && host.parse::<Ipv4Addr>().is_err() {
        return false;
    }
    // An empty host cannot carry a port or credentials (the `url` crate: "empty host").
    if host.is_empty() && (port.is_some() || host_port.len() != authority.len()) {
        return false;
    }
    let port_ok = port.is_none_or(|p| {
        !file && (p.is_empty() || digits(p.as_bytes()).is_some_and(|n| n <= 65535))
    });
    let host_ok =
        (literal || host.bytes().all(|c| is(c, UNRESERVED))) && !(needs_host && host.is_empty());
    port_ok && host_ok && encoded_ok(path, b"/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_accepts_and_refuses() {
        let cases: &[(Format, &[&str], &[&str])] = &[
            (
                Format::DateTime,
                &[
                    "2024-02-29T12:00:00Z",
                    "1998-12-31T15:59:60.5-08:00",
                    "2024-01-01t00:00:00z",
                ],
                &[
                    "2023-02-29T12:00:00Z",
                    "2024-01-01 00:00:00Z",
                    "2024-01-01T00:00:00",
                ],
            ),
            (
                Format::Date,
                &["2000-02-29"],
                &["1900-02-29", "2024-13-01", "2024-1-01"],
            ),
            (
                Format::Time,
                &["23:59:60Z", "00:29:60-23:30"],
                &["23:59:60+01:00", "12:00:00"],
            ),
            (
                Format::Duration,
                &["P1Y2M3DT4H5M6S", "PT0S", "P2W"],
                &["P", "PT", "P1Y2W", "P2D1Y"],
            ),
            (
                Format::Email,
                &["a.b@example.com", "\"a b\"@x.org", "x@[IPv6:::1]"],
                &[".a@x.com", "a..b@x.com", "a@-x.com"],
            ),
            (
                Format::Uri,
                &[
                    "https://example.com:443/a?b#c",
                    "urn:isbn:0451450523",
                    "mailto:a@b.c",
                ],
                &["/relative", "http://", "http://x:70000/", "http://a b"],
            ),
            (
                Format::Uuid,
                &["67E55044-10b1-426f-9247-bb680e5fe0c8"],
                &[
                    "67e5504410b1426f9247bb680e5fe0c8",
                    "{67e55044-10b1-426f-9247-bb680e5fe0c8}",
                ],
            ),
            (
                Format::Ipv4,
                &["192.0.2.1"],
                &["192.0.2.01", "256.0.0.1", "1.2.3"],
            ),
            (
                Format::Ipv6,
                &["::ffff:192.0.2.1", "2001:db8::1"],
                &["fe80::1%eth0", "1::2::3"],
            ),
            (
                Format::Hostname,
                &["example.com", "a-1.b"],
                &["-a.com", "a_b.com", ""],
            ),
        ];
        for (format, valid, invalid) in cases {
            for s in *valid {
                assert!(format.is_valid(s), "{format:?} {s}");
            }
            for s in *invalid {
                assert!(!format.is_valid(s), "{format:?} {s}");
            }
        }
    }

    #[test]
    fn byte_classes_are_the_rfc_sets() {
        for c in 0..=255u8 {
            let alnum = c.is_ascii_alphanumeric();
            assert_eq!(is(c, HEX), c.is_ascii_hexdigit(), "{c}");
            assert_eq!(is(c, LABEL), alnum || c == b'-', "{c}");
            assert_eq!(
                is(c, ATEXT),
                alnum || b"!#$%&'*+-/=?^_`{|}~".contains(&c),
                "{c}"
            );
            assert_eq!(is(c, UNRESERVED), alnum || b"-._~".contains(&c), "{c}");
            assert_eq!(
                is(c, PCHAR),
                alnum || b"-._~!$&'()*+,;=:@".contains(&c),
                "{c}"
            );
        }
    }

    #[test]
    fn names_round_trip() {
        for name in FORMAT_NAMES.split(", ") {
            assert!(Format::from_name(name).is_some(), "{name}");
        }
        assert_eq!(Format::from_name("uri-reference"), None);
    }
}
