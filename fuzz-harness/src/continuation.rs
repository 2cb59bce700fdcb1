//! Continuations: what a resume does with text it did not seal, and with authenticated bodies
//! it cannot trust to be well formed.
//!
//! A continuation is authenticated before anything in it is read, so a fuzzer that only mutates
//! sealed text never gets past the tag. This harness therefore seals its own bodies: it holds
//! the host's key and writes the documented format
//! (`dshc1.<base64url(HMAC-SHA-256(key, "dshc1." ‖ body) ‖ body)>`, `body = deflate(JSON)`,
//! `dsh_tools_runtime::code::durable`'s continuation module), so the fuzzed JSON reaches the
//! payload decoder, the journal replay and the pending-call decisions as a tampering host's
//! own bug (or a leaked key) would deliver them. The test `sealing` checks this sealing against
//! a continuation the registry itself wrote.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use dsh_tools::ToolDefinition;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools::json::is_lossless;
use dsh_tools_runtime::approval::ApprovalScope;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::CodeModeExt;
use dsh_tools_runtime::code::durable::{
    ContinuationError, ContinuationKey, Decision, Durability, MemorySpentStore, Resume, RunOutcome,
};
use dsh_tools_runtime::code::quickjs::QuickJsRuntime;
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use sha2::Sha256;

use crate::run_code_config;

/// The version prefix of the format the harness writes.
const PREFIX: &str = "dshc1.";
/// The harness's key (any 32 bytes: the fuzzer never sees it, only bodies sealed with it).
const KEY: [u8; 32] = *b"dsh-tools fuzz continuation key!";
/// The key raw text is resumed under: the seeds' continuations, sealed with [`KEY`], are
/// foreign to it, so no input the fuzzer writes can open.
const OTHER_KEY: [u8; 32] = *b"another host's continuation key!";

/// A Code Mode host: `read` answers, `write` asks (so a run suspends at it), programs run under
/// the `run_code` target's budgets.
pub struct Host {
    tokio: tokio::runtime::Runtime,
    /// The registry the continuations resume on.
    pub registry: ToolRegistry,
}

impl Host {
    /// Resumes `continuation` on the host's registry (within 10 s: the run budgets are far
    /// shorter, so a run still going then is a finding).
    pub fn resume(
        &self,
        continuation: &str,
        resume: Resume,
        durability: &Durability,
    ) -> Result<RunOutcome, ContinuationError> {
        self.tokio.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(10),
                self.registry.resume_code(continuation, resume, durability),
            )
            .await
            .expect("the resumed run ended")
        })
    }
}

/// The harness's host, built once.
pub fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| {
        let registry = ToolRegistry::with_config(RegistryConfig {
            mode: PresentationMode::Code,
            ..RegistryConfig::default()
        });
        let runtime = QuickJsRuntime::new(run_code_config()).expect("a valid config");
        CodeMode::new(Arc::new(runtime))
            .install(&registry)
            .expect("Code Mode installs");
        for name in ["read", "write"] {
            let tool = ToolDefinition::builder(name)
                .description("A fuzz tool.")
                .parameters_json(json!({"type": "object"}))
                .concurrency_safe(true)
                .execute(|args, _| async move { Ok(json!({"got": *args})) })
                .build()
                .expect("a valid tool");
            registry.register(tool).expect("registered").keep();
        }
        registry
            .on_pre_execute(pre_execute_fn(|exec, next| async move {
                if &*exec.name == "write" {
                    PreToolDecision::Ask { reason: None }
                } else {
                    next.run().await
                }
            }))
            .keep();
        Host {
            tokio: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a Tokio runtime"),
            registry,
        }
    })
}

/// A durability with the harness's key and a fresh spent-id store.
pub fn durability() -> Durability {
    durability_with(KEY)
}

fn durability_with(key: [u8; 32]) -> Durability {
    Durability::new(
        ContinuationKey::new(key.to_vec()).expect("32 bytes"),
        Arc::new(MemorySpentStore::default()),
    )
}

fn mac() -> Hmac<Sha256> {
    <Hmac<Sha256> as KeyInit>::new_from_slice(&KEY).expect("HMAC takes any key length")
}

/// Seals `json` (any bytes) as a version-1 continuation under the harness's key.
pub fn seal(json: &[u8]) -> String {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(json).expect("deflate into memory");
    let body = encoder.finish().expect("deflate into memory");
    let mut mac = mac();
    mac.update(PREFIX.as_bytes());
    mac.update(&body);
    let mut sealed = mac.finalize().into_bytes().to_vec();
    sealed.extend_from_slice(&body);
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(sealed))
}

/// The JSON body of a continuation sealed under the harness's key (for seeds and the test).
pub fn unseal(continuation: &str) -> Vec<u8> {
    let encoded = continuation
        .strip_prefix(PREFIX)
        .expect("a dshc1 continuation");
    let sealed = URL_SAFE_NO_PAD.decode(encoded).expect("base64url");
    let mut json = Vec::new();
    DeflateDecoder::new(&sealed[32..])
        .read_to_end(&mut json)
        .expect("a deflated body");
    json
}

/// Runs `program` as a suspendable `run_code` call on the host (each under a call id of its
/// own: two durable runs of one id cannot run at once).
pub fn start(program: &str) -> RunOutcome {
    static RUNS: AtomicU64 = AtomicU64::new(1);
    let host = host();
    let input = ToolExecutionInput::new(
        format!("run-{}", RUNS.fetch_add(1, Ordering::Relaxed)),
        "run_code",
        json!({"code": program, "description": "A fuzz program"}),
    );
    host.tokio.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(10),
            host.registry.run_code_suspendable(input, &durability()),
        )
        .await
        .expect("the run ended")
    })
}

/// The continuation target. Input: a selector byte, then either (even selector) text handed to
/// `resume_code` as it is, or (odd) a continuation body's JSON, which the harness seals with
/// the host's key first. Bits 1–2 of the selector pick the decision (approve once, for the run,
/// deny) and bit 3 whether the resumed run may suspend again.
///
/// Properties: text not sealed with the resuming host's key (the seeds hold continuations of
/// another host) is refused as malformed, of another version or
/// tampered, and nothing runs; a sealed body either is refused with a stable code or resumes
/// to an outcome within the run budgets: a completed run's value is lossless and its failure
/// has a message; a new suspension has pending calls and a continuation that opens again.
pub fn continuation(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let sealed_by_us = selector & 1 == 1;
    let text = if sealed_by_us {
        seal(rest)
    } else {
        match std::str::from_utf8(rest) {
            Ok(text) => text.to_owned(),
            Err(_) => return,
        }
    };
    let decision = match (selector >> 1) & 3 {
        0 => Decision::APPROVE,
        1 => Decision::Approve(ApprovalScope::Run),
        _ => Decision::Deny,
    };
    let mut resume = Resume::new(decision);
    if selector & 8 != 0 {
        resume = resume.suspendable();
    }
    let durability = durability_with(if sealed_by_us { KEY } else { OTHER_KEY });
    let outcome = host().resume(&text, resume, &durability);
    match outcome {
        Err(error) => {
            let code = error.code();
            let expected: &[&str] = if sealed_by_us {
                &[
                    "CONTINUATION_BODY",
                    "CONTINUATION_VERSION",
                    "CONTINUATION_LANGUAGE",
                ]
            } else {
                &[
                    "CONTINUATION_MALFORMED",
                    "CONTINUATION_VERSION",
                    "CONTINUATION_TAMPERED",
                ]
            };
            assert!(expected.contains(&code), "{code}: {error}");
            assert!(
                !error.to_string().contains('\n'),
                "a two-line refusal: {error}"
            );
        }
        Ok(_) if !sealed_by_us => panic!("text under another key resumed: {text:.200}"),
        Ok(RunOutcome::Completed(result)) => {
            if let Some(value) = result.value() {
                assert!(is_lossless(value), "a lossy result: {value}");
            }
            if let Some(error) = result.error() {
                assert!(!error.message().is_empty(), "a failure without a message");
            }
        }
        Ok(RunOutcome::Suspended {
            continuation,
            pending,
        }) => {
            assert!(!pending.is_empty(), "a suspension without pending calls");
            durability
                .language_of(&continuation)
                .expect("a new continuation opens");
        }
    }
}
