//! The journal of a durable run: every completed sub-call (`<run id>:code:<n>`), its tool, a
//! digest of its arguments and the settled result the program saw — what a replay answers
//! from instead of dispatching the call again.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use dsh_tools::ContextMessage;
use dsh_tools::json::canonical_json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What a sub-call's binding settled with: its value, or the failure message the program's
/// `ToolCallError` carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Settled {
    /// The call resolved to this value.
    Ok(Value),
    /// The call rejected with this message.
    Err(String),
}

impl Settled {
    /// The binding's answer.
    pub(crate) fn answer(&self) -> Result<Value, String> {
        match self {
            Self::Ok(value) => Ok(value.clone()),
            Self::Err(message) => Err(message.clone()),
        }
    }
}

/// One completed sub-call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JournalEntry {
    /// The tool the program called.
    pub(crate) tool: String,
    /// The digest of the arguments ([`arguments_digest`]).
    pub(crate) args: String,
    /// The settled result.
    #[serde(flatten)]
    pub(crate) settled: Settled,
    /// Context messages the call deferred to the outer call (images, additional contexts):
    /// a replay defers them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) contexts: Vec<ContextMessage>,
    /// The call concluded the turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) concludes_turn: bool,
}

/// The completed sub-calls of a run, by number (`n` is at index `n - 1`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Journal {
    entries: Vec<Option<JournalEntry>>,
}

impl Journal {
    /// A journal holding `entries` (numbers 1, 2, …).
    pub(crate) fn from_entries(entries: Vec<JournalEntry>) -> Self {
        Self {
            entries: entries.into_iter().map(Some).collect(),
        }
    }

    /// The entry of sub-call `number`, if recorded.
    pub(crate) fn get(&self, number: usize) -> Option<&JournalEntry> {
        self.entries.get(number.checked_sub(1)?)?.as_ref()
    }

    /// Records sub-call `number`.
    pub(crate) fn record(&mut self, number: usize, entry: JournalEntry) {
        let Some(index) = number.checked_sub(1) else {
            return;
        };
        if self.entries.len() <= index {
            self.entries.resize(index + 1, None);
        }
        self.entries[index] = Some(entry);
    }

    /// How many sub-calls the journal covers (the highest number recorded).
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entries 1..=n, or the first number missing among them.
    pub(crate) fn complete(&self) -> Result<Vec<JournalEntry>, usize> {
        self.entries
            .iter()
            .enumerate()
            .map(|(index, entry)| entry.clone().ok_or(index + 1))
            .collect()
    }
}

/// The digest of a call's arguments: SHA-256 of their canonical JSON
/// ([`dsh_tools::json::canonical_json`], RFC 8785), truncated to 128 bits, base64url. Replays
/// compare digests, never the arguments themselves.
pub(crate) fn arguments_digest(arguments: &Value) -> String {
    let digest = Sha256::digest(canonical_json(arguments).as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..16])
}

/// The prefix of a full digest (`sha256:<hex>`, the store's `ArgsDigest`): the digest a
/// journal entry made from a write-ahead intent carries.
const FULL: &str = "sha256:";

/// Whether `arguments` are those `digest` was made of: a journal digest
/// ([`arguments_digest`]) or a full one (`sha256:<hex>` of the same canonical JSON).
pub(crate) fn digest_matches(digest: &str, arguments: &Value) -> bool {
    match digest.strip_prefix(FULL) {
        Some(hex) => {
            let full = Sha256::digest(canonical_json(arguments).as_bytes());
            let text: String = full.iter().map(|byte| format!("{byte:02x}")).collect();
            text == hex
        }
        None => digest == arguments_digest(arguments),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn digests_ignore_key_order_and_nothing_else() {
        let a = arguments_digest(&json!({"path": "a", "n": [1, {"x": 1, "y": 2}]}));
        let b = arguments_digest(&json!({"n": [1, {"y": 2, "x": 1}], "path": "a"}));
        assert_eq!(a, b);
        assert_eq!(a.len(), 22);
        assert_ne!(
            a,
            arguments_digest(&json!({"path": "b", "n": [1, {"x": 1, "y": 2}]}))
        );
        assert_ne!(
            a,
            arguments_digest(&json!({"path": "a", "n": [{"x": 1, "y": 2}, 1]}))
        );
        assert_ne!(arguments_digest(&json!("1")), arguments_digest(&json!(1)));
        // 1.0 and 1 are the same JSON number.
        assert_eq!(
            arguments_digest(&json!([1.0])),
            arguments_digest(&json!([1]))
        );
    }

    #[test]
    fn full_digests_match_the_same_canonical_json() {
        let args = json!({"b": 1, "a": [2.0]});
        assert!(digest_matches(&arguments_digest(&args), &args));
        // sha256 of `{"a":[2],"b":1}`.
        let hex: String = Sha256::digest(br#"{"a":[2],"b":1}"#)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let full = format!("sha256:{hex}");
        assert!(digest_matches(&full, &args));
        assert!(!digest_matches(&full, &json!({"b": 1, "a": [3]})));
    }

    #[test]
    fn entries_serialise_compactly() {
        let entry = JournalEntry {
            tool: "read".into(),
            args: arguments_digest(&json!({})),
            settled: Settled::Ok(json!(3)),
            contexts: Vec::new(),
            concludes_turn: false,
        };
        let text = serde_json::to_string(&entry).unwrap();
        assert_eq!(
            text,
            format!(r#"{{"tool":"read","args":"{}","ok":3}}"#, entry.args)
        );
        assert_eq!(serde_json::from_str::<JournalEntry>(&text).unwrap(), entry);
        let failed = JournalEntry {
            settled: Settled::Err("no".into()),
            ..entry
        };
        let text = serde_json::to_string(&failed).unwrap();
        assert!(text.ends_with(r#""err":"no"}"#), "{text}");
        assert_eq!(serde_json::from_str::<JournalEntry>(&text).unwrap(), failed);
    }

    #[test]
    fn a_journal_with_a_gap_is_not_complete() {
        let entry = |tool: &str| JournalEntry {
            tool: tool.into(),
            args: String::new(),
            settled: Settled::Ok(Value::Null),
            contexts: Vec::new(),
            concludes_turn: false,
        };
        let mut journal = Journal::default();
        journal.record(1, entry("a"));
        journal.record(3, entry("c"));
        assert_eq!(journal.len(), 3);
        assert_eq!(journal.complete(), Err(2));
        journal.record(2, entry("b"));
        assert_eq!(journal.complete().map(|e| e.len()), Ok(3));
        assert_eq!(journal.get(2).map(|e| e.tool.as_str()), Some("b"));
        assert!(journal.get(0).is_none() && journal.get(4).is_none());
    }
}
