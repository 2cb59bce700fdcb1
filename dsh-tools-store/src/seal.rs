//! Record authentication: every stored record is `base64url(tag) "." body`, where the tag is
//! HMAC-SHA-256 under the host's [`StoreKey`] over the record's kind, its place (run id and
//! entry index, task id, …) and its body. A record altered in the database, forged without the
//! key, or moved to another run or key fails to open.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::Sha256;

use crate::StoreError;

/// Shortest accepted store key.
pub const MIN_KEY_BYTES: usize = 32;

/// Domain separation: a tag of this format can never equal a continuation's tag or another
/// version's.
const DOMAIN: &[u8] = b"dsh-tools-store/v1";

/// The host's secret that authenticates every stored record (HMAC-SHA-256). Every process
/// that shares a store must hold the same key. Its `Debug` shows no key material.
///
/// ```
/// use dsh_tools_store::StoreKey;
/// let key = StoreKey::generate();
/// assert_eq!(key.as_bytes().len(), 32);
/// assert_eq!(StoreKey::new(vec![7; 16]).unwrap_err().code(), "STORE_KEY_TOO_SHORT");
/// assert_eq!(format!("{key:?}"), "StoreKey(..)");
/// ```
#[derive(Clone)]
pub struct StoreKey(Vec<u8>);

impl StoreKey {
    /// A key from the host's secret bytes (at least [`MIN_KEY_BYTES`]).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, StoreError> {
        let bytes = bytes.into();
        if bytes.len() < MIN_KEY_BYTES {
            return Err(StoreError::KeyTooShort { bytes: bytes.len() });
        }
        Ok(Self(bytes))
    }

    /// A fresh random key of 32 bytes from the operating system.
    ///
    /// # Panics
    ///
    /// When the operating system has no randomness to give (a key must not be guessable).
    pub fn generate() -> Self {
        let mut bytes = vec![0u8; 32];
        getrandom::fill(&mut bytes).expect("the operating system's random source");
        Self(bytes)
    }

    /// The key's bytes (to keep it; store them 0600).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    fn mac(&self, kind: Kind, place: &[&str], body: &[u8]) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(DOMAIN);
        // Length-prefixed fields: no two (kind, place, body) triples feed the same bytes.
        for field in [kind.what().as_bytes()]
            .into_iter()
            .chain(place.iter().map(|part| part.as_bytes()))
        {
            mac.update(&(field.len() as u64).to_be_bytes());
            mac.update(field);
        }
        mac.update(body);
        mac
    }

    /// Seals `body` as a record of `kind` at `place`.
    pub(crate) fn seal(&self, kind: Kind, place: &[&str], body: &impl Serialize) -> String {
        let json = serde_json::to_string(body).expect("store records serialize");
        let tag = self
            .mac(kind, place, json.as_bytes())
            .finalize()
            .into_bytes();
        format!("{}.{json}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// Opens a record of `kind` at `place`, verifying its tag in constant time before parsing
    /// it. `location` names the place in the error.
    pub(crate) fn open<T: DeserializeOwned>(
        &self,
        kind: Kind,
        place: &[&str],
        sealed: &str,
    ) -> Result<T, StoreError> {
        let tampered = || StoreError::Tampered {
            what: kind.what(),
            location: kind.location(place),
        };
        let (tag, json) = sealed.split_once('.').ok_or_else(tampered)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| tampered())?;
        self.mac(kind, place, json.as_bytes())
            .verify_slice(&tag)
            .map_err(|_| tampered())?;
        serde_json::from_str(json).map_err(|_| tampered())
    }
}

impl std::fmt::Debug for StoreKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreKey(..)")
    }
}

/// The kinds of stored record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Run,
    Entry,
    Intent,
    Spent,
    Approval,
    Task,
    Checkpoint,
}

impl Kind {
    /// The record's name in errors (and in the tag).
    pub(crate) fn what(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Entry => "journal entry",
            Self::Intent => "intent",
            Self::Spent => "spent id",
            Self::Approval => "approval",
            Self::Task => "task",
            Self::Checkpoint => "checkpoint",
        }
    }

    /// Where a record of this kind at `place` is, for errors: `run r1, entry 3`.
    pub(crate) fn location(self, place: &[&str]) -> String {
        let name = |i: usize| place.get(i).copied().unwrap_or_default();
        match self {
            Self::Run => format!("run {}", name(0)),
            Self::Entry => format!("run {}, entry {}", name(0), name(1)),
            Self::Intent => format!("run {}, call {}", name(0), name(1)),
            Self::Spent => format!("continuation {}", name(0)),
            Self::Approval => format!("key {}", name(0)),
            Self::Task => format!("task {}", name(0)),
            Self::Checkpoint => format!("run {}, checkpoint", name(0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_opens_only_at_its_place_and_unaltered() {
        let key = StoreKey::generate();
        let sealed = key.seal(Kind::Entry, &["r1", "3"], &serde_json::json!({"v": 1}));
        let open: serde_json::Value = key.open(Kind::Entry, &["r1", "3"], &sealed).unwrap();
        assert_eq!(open, serde_json::json!({"v": 1}));
        let moved = key.open::<serde_json::Value>(Kind::Entry, &["r2", "3"], &sealed);
        assert_eq!(
            moved.unwrap_err().to_string(),
            "journal entry at run r2, entry 3 refused: it was altered or moved (authentication failed)"
        );
        let altered = sealed.replace("1}", "2}");
        assert!(
            key.open::<serde_json::Value>(Kind::Entry, &["r1", "3"], &altered)
                .is_err()
        );
        // Place fields are length-prefixed: ("r1", "3") and ("r", "13") differ.
        assert!(
            key.open::<serde_json::Value>(Kind::Entry, &["r", "13"], &sealed)
                .is_err()
        );
        let other = StoreKey::generate();
        assert!(
            other
                .open::<serde_json::Value>(Kind::Entry, &["r1", "3"], &sealed)
                .is_err()
        );
    }
}
