//! The continuation: a suspended run, self-contained — the program, its run id, the journal,
//! the recorded sources and the pending calls — as one compact, versioned, authenticated
//! string:
//!
//! ```text
//! dshc1.<base64url(HMAC-SHA-256(key, "dshc1." ‖ body) ‖ body)>     body = deflate(JSON)
//! ```
//!
//! Opening checks the prefix (the version), decodes, and verifies the tag in constant time
//! before it decompresses or parses anything: a tampered, truncated or foreign-key continuation
//! is refused before any of it is used.

use std::io::{Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::PendingCall;
use crate::durable_run::journal::JournalEntry;
use crate::record::RecordedRun;
use crate::runtime::RunSnapshot;

/// The continuation format this build writes and reads.
pub const CONTINUATION_VERSION: u32 = 1;

/// The prefix of every version-1 continuation.
const PREFIX: &str = "dshc1.";
/// Bytes of the tag.
const TAG: usize = 32;
/// Largest decompressed body accepted (a continuation is authenticated before this applies;
/// the limit only bounds the memory a bug elsewhere could make us spend).
const MAX_BODY: u64 = 256 * 1024 * 1024;

/// Shortest accepted key.
pub const MIN_KEY_BYTES: usize = 32;

/// The host's secret that authenticates its continuations (HMAC-SHA-256). Its `Debug` shows
/// no key material.
///
/// ```
/// use dsh_tools_runtime::code::durable::ContinuationKey;
/// let key = ContinuationKey::generate();
/// assert_eq!(key.as_bytes().len(), 32);
/// assert!(ContinuationKey::new(vec![7; 16]).is_err(), "too short");
/// assert_eq!(format!("{key:?}"), "ContinuationKey(..)");
/// ```
#[derive(Clone)]
pub struct ContinuationKey(Vec<u8>);

impl ContinuationKey {
    /// A key from the host's secret bytes (at least [`MIN_KEY_BYTES`]).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, ContinuationError> {
        let bytes = bytes.into();
        if bytes.len() < MIN_KEY_BYTES {
            return Err(ContinuationError::KeyTooShort { bytes: bytes.len() });
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

    /// The key's bytes (to store it).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("HMAC takes any key length")
    }
}

impl std::fmt::Debug for ContinuationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ContinuationKey(..)")
    }
}

/// Why a continuation could not be sealed, opened or resumed. Each has a stable code
/// ([`ContinuationError::code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContinuationError {
    /// Not a continuation: wrong prefix, not base64url, too short to hold a tag.
    #[error("not a dsh-tools continuation: {0}")]
    Malformed(String),
    /// A continuation of another format version.
    #[error(
        "continuation version {found} is not supported (this build reads version {CONTINUATION_VERSION})"
    )]
    UnsupportedVersion {
        /// The version the continuation names.
        found: String,
    },
    /// The tag does not match: the continuation was altered, truncated, or sealed with
    /// another key.
    #[error(
        "continuation refused: it was altered, truncated or sealed with another key (authentication failed)"
    )]
    Unauthenticated,
    /// The continuation was already resumed.
    #[error("continuation {id} was already resumed (a continuation resumes once)")]
    Spent {
        /// Its id.
        id: String,
    },
    /// The spent-id store failed; nothing ran.
    #[error("the spent-continuation store failed: {0}")]
    Store(String),
    /// The key is shorter than [`MIN_KEY_BYTES`].
    #[error("a continuation key needs at least {MIN_KEY_BYTES} bytes (got {bytes})")]
    KeyTooShort {
        /// The length given.
        bytes: usize,
    },
    /// The continuation is of a program in another language than the registry's code
    /// runtime runs.
    #[error(
        "continuation is of a {found} program, but the registry's code runtime runs {expected}"
    )]
    Language {
        /// The continuation's language.
        found: String,
        /// The runtime's.
        expected: String,
    },
    /// The durable store has no run of that id (`resume_run`).
    #[error("the durable store has no run \"{run}\"")]
    NoRun {
        /// The run id asked for.
        run: String,
    },
    /// The run already finished (`resume_run`): there is nothing to resume.
    #[error("run \"{run}\" already finished: there is nothing to resume")]
    RunFinished {
        /// The run id.
        run: String,
    },
    /// The authenticated body could not be read (a bug, or a key shared with something else
    /// that writes other data).
    #[error("continuation body is unreadable: {0}")]
    Body(String),
}

impl ContinuationError {
    /// The stable code: `CONTINUATION_MALFORMED`, `CONTINUATION_VERSION`,
    /// `CONTINUATION_TAMPERED`, `CONTINUATION_SPENT`, `CONTINUATION_STORE`,
    /// `CONTINUATION_KEY`, `CONTINUATION_LANGUAGE`, `CONTINUATION_BODY`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Malformed(_) => "CONTINUATION_MALFORMED",
            Self::UnsupportedVersion { .. } => "CONTINUATION_VERSION",
            Self::Unauthenticated => "CONTINUATION_TAMPERED",
            Self::Spent { .. } => "CONTINUATION_SPENT",
            Self::Store(_) => "CONTINUATION_STORE",
            Self::KeyTooShort { .. } => "CONTINUATION_KEY",
            Self::Language { .. } => "CONTINUATION_LANGUAGE",
            Self::Body(_) => "CONTINUATION_BODY",
            Self::NoRun { .. } => "RUN_NOT_FOUND",
            Self::RunFinished { .. } => "RUN_FINISHED",
        }
    }
}

/// What a continuation holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Payload {
    /// The format version (also in the prefix).
    pub(crate) v: u32,
    /// A fresh random id: the spent-id store's key.
    pub(crate) id: String,
    /// The run id: the `run_code` call id (sub-calls are `<run>:code:<n>`).
    pub(crate) run: String,
    /// The outermost call id, when it is not the run's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) root: Option<String>,
    /// The program's language (the code runtime's, `typescript` when absent).
    #[serde(default = "typescript")]
    pub(crate) language: String,
    /// The program, as the model wrote it.
    pub(crate) program: String,
    /// The run's `description` argument.
    pub(crate) description: String,
    /// The completed sub-calls, 1..=n.
    pub(crate) journal: Vec<JournalEntry>,
    /// The recorded sources and delivery rounds.
    pub(crate) record: RecordedRun,
    /// The calls awaiting a decision.
    pub(crate) pending: Vec<PendingCall>,
    /// The tools approved for the rest of this run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) grants: Vec<String>,
    /// The paused program, for a runtime that snapshots (then nothing is replayed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) snapshot: Option<RunSnapshot>,
}

fn typescript() -> String {
    crate::flavour::TYPESCRIPT.language.to_owned()
}

/// A fresh random continuation id (128 bits, base64url).
pub(crate) fn fresh_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Seals `payload` with `key`.
pub(crate) fn seal(payload: &Payload, key: &ContinuationKey) -> Result<String, ContinuationError> {
    let json = serde_json::to_vec(payload).map_err(|e| ContinuationError::Body(e.to_string()))?;
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::default());
    encoder
        .write_all(&json)
        .map_err(|e| ContinuationError::Body(e.to_string()))?;
    let body = encoder
        .finish()
        .map_err(|e| ContinuationError::Body(e.to_string()))?;
    let mut mac = key.mac();
    mac.update(PREFIX.as_bytes());
    mac.update(&body);
    let mut sealed = mac.finalize().into_bytes().to_vec();
    sealed.extend_from_slice(&body);
    Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(sealed)))
}

/// Opens a continuation sealed with `key` (surrounding whitespace ignored).
pub(crate) fn open(text: &str, key: &ContinuationKey) -> Result<Payload, ContinuationError> {
    let text = text.trim();
    let Some(encoded) = text.strip_prefix(PREFIX) else {
        if let Some(version) = text
            .strip_prefix("dshc")
            .and_then(|rest| rest.split_once('.'))
            .map(|(version, _)| version)
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(ContinuationError::UnsupportedVersion {
                found: version.to_owned(),
            });
        }
        return Err(ContinuationError::Malformed(
            "it does not start with \"dshc1.\"".to_owned(),
        ));
    };
    let sealed = URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|e| ContinuationError::Malformed(format!("it is not base64url: {e}")))?;
    if sealed.len() <= TAG {
        // Too short to hold a tag and a body: a truncation, as far as anyone can tell.
        return Err(ContinuationError::Unauthenticated);
    }
    let (tag, body) = sealed.split_at(TAG);
    let mut mac = key.mac();
    mac.update(PREFIX.as_bytes());
    mac.update(body);
    mac.verify_slice(tag)
        .map_err(|_| ContinuationError::Unauthenticated)?;
    let mut json = Vec::new();
    DeflateDecoder::new(body)
        .take(MAX_BODY)
        .read_to_end(&mut json)
        .map_err(|e| ContinuationError::Body(e.to_string()))?;
    let payload: Payload =
        serde_json::from_slice(&json).map_err(|e| ContinuationError::Body(e.to_string()))?;
    if payload.v != CONTINUATION_VERSION {
        return Err(ContinuationError::UnsupportedVersion {
            found: payload.v.to_string(),
        });
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::durable_run::journal::Settled;

    fn payload() -> Payload {
        Payload {
            v: CONTINUATION_VERSION,
            id: fresh_id(),
            run: "run-1".into(),
            root: None,
            language: typescript(),
            program: "await tools.write({ path: 'a' });".into(),
            description: "Write a".into(),
            journal: vec![JournalEntry {
                tool: "read".into(),
                args: "x".into(),
                settled: Settled::Ok(json!("text")),
                contexts: Vec::new(),
                concludes_turn: false,
            }],
            record: RecordedRun {
                seed: 5,
                clock: vec![1.0],
                rounds: vec![1],
            },
            pending: Vec::new(),
            grants: Vec::new(),
            snapshot: None,
        }
    }

    #[test]
    fn a_sealed_payload_opens_with_its_key_only() {
        let key = ContinuationKey::generate();
        let sealed = seal(&payload(), &key).unwrap();
        assert!(sealed.starts_with("dshc1."));
        assert!(
            sealed[PREFIX.len()..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "base64url: {sealed}"
        );
        let opened = open(&format!("  {sealed}\n"), &key).unwrap();
        assert_eq!(opened.journal, payload().journal);
        let other = ContinuationKey::generate();
        assert_eq!(
            open(&sealed, &other),
            Err(ContinuationError::Unauthenticated)
        );
    }

    #[test]
    fn every_altered_byte_and_every_truncation_is_refused() {
        let key = ContinuationKey::generate();
        let sealed = seal(&payload(), &key).unwrap();
        let encoded = &sealed[PREFIX.len()..];
        let bytes = URL_SAFE_NO_PAD.decode(encoded).unwrap();
        for index in 0..bytes.len() {
            let mut altered = bytes.clone();
            altered[index] ^= 0x01;
            let text = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&altered));
            assert_eq!(
                open(&text, &key),
                Err(ContinuationError::Unauthenticated),
                "byte {index}"
            );
        }
        for cut in 1..encoded.len() {
            let error = open(&sealed[..PREFIX.len() + cut], &key).unwrap_err();
            assert!(
                matches!(
                    error,
                    ContinuationError::Unauthenticated | ContinuationError::Malformed(_)
                ),
                "cut at {cut}: {error:?}"
            );
        }
    }

    #[test]
    fn foreign_strings_and_other_versions_are_named() {
        let key = ContinuationKey::generate();
        let error = open("hello", &key).unwrap_err();
        assert_eq!(error.code(), "CONTINUATION_MALFORMED");
        let error = open("dshc2.AAAA", &key).unwrap_err();
        assert_eq!(
            error,
            ContinuationError::UnsupportedVersion { found: "2".into() }
        );
        assert_eq!(
            error.to_string(),
            "continuation version 2 is not supported (this build reads version 1)"
        );
        let error = open("dshc1.!!", &key).unwrap_err();
        assert_eq!(error.code(), "CONTINUATION_MALFORMED");
    }
}
