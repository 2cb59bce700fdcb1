//! The argument digest an approval is bound to: SHA-256 of the arguments' canonical JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The digest of a call's arguments: `sha256:` and the lowercase hex SHA-256 of their
/// canonical JSON ([`canonical_json`]). Two argument objects that differ only in key order or
/// whitespace have the same digest.
///
/// ```
/// use dsh_tools_store::ArgsDigest;
/// use serde_json::json;
/// let a = ArgsDigest::of(&json!({"to": "ops@example.com", "amount": 12}));
/// let b = ArgsDigest::of(&json!({"amount": 12, "to": "ops@example.com"}));
/// assert_eq!(a, b);
/// assert_ne!(a, ArgsDigest::of(&json!({"amount": 13, "to": "ops@example.com"})));
/// assert!(a.as_str().starts_with("sha256:"));
/// assert_eq!(a.as_str().len(), 7 + 64);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ArgsDigest(String);

impl ArgsDigest {
    /// The digest of `arguments`.
    pub fn of(arguments: &Value) -> Self {
        Self(format!(
            "sha256:{}",
            sha256_hex(canonical_json(arguments).as_bytes())
        ))
    }

    /// The digest as text (`sha256:<hex>`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ArgsDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut text, byte| {
            let _ = write!(text, "{byte:02x}");
            text
        })
}

/// The canonical JSON of a value (RFC 8785), the text an [`ArgsDigest`] covers: the one of
/// the whole workspace, [`dsh_tools::json::canonical_json`] (re-exported).
pub use dsh_tools::json::canonical_json;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // By code point U+E000 comes first; by UTF-16 code units U+1F600 (0xD83D 0xDE00) does.
        let value = json!({"\u{1F600}": 1, "\u{E000}": 2, "a": 3});
        assert_eq!(
            canonical_json(&value),
            "{\"a\":3,\"\u{1F600}\":1,\"\u{E000}\":2}"
        );
    }

    #[test]
    fn the_digest_is_sha256_of_the_canonical_text() {
        // sha256("{}")
        assert_eq!(
            ArgsDigest::of(&json!({})).as_str(),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
