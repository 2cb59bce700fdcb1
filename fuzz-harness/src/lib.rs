//! The bodies of the fuzz targets, shared by the cargo-fuzz workspace under `fuzz/` (nightly,
//! libFuzzer) and by this crate's stable replay test (`tests/replay.rs`), which runs every
//! committed corpus file through the same function, so CI never needs nightly.
//!
//! Why a crate of its own: the product crates' public APIs gain nothing fuzz-specific (no
//! `#[doc(hidden)] pub` entry points), and the `dsh-tools-tests` crate stays light — its trybuild
//! UI tests rebuild every dependency of that crate, which would add the swc and QuickJS builds.
//!
//! Each harness takes raw bytes, ignores inputs that are not its format (not UTF-8, not JSON),
//! and panics only when a property fails. A panic is the finding.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use dsh_tools::json::is_lossless;
use dsh_tools::subset::{CompiledSchema, Vocabulary, unsupported_violations, validate_value};
use dsh_tools_runtime::code::quickjs::{DEFAULT_THREAD_STACK_BYTES, QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::sdk::json_schema_to_ts;
use dsh_tools_runtime::code::sdk::{SdkTool, json_schema_to_ts_wide, render_tools_sdk};
use dsh_tools_runtime::code::strip::{SourceLimits, strip_program};
use dsh_tools_runtime::code::{
    BindingFn, BindingNamespace, CodeRunRequest, CodeRuntime, ErrorClass,
};
use serde_json::{Value, json};

pub mod continuation;
mod mcp;
mod pattern;
mod provider;
mod refs;

pub use continuation::continuation;
pub use mcp::mcp_messages;
pub use pattern::pattern;
pub use provider::provider_turns;
pub use refs::ref_schema;

/// A fuzz target's body: one input, panics on a finding.
pub type Target = fn(&[u8]);

/// The targets, by name: the name of the fuzz target and of its corpus directory.
pub const TARGETS: &[(&str, Target)] = &[
    ("schema_validate", schema_validate),
    ("json_schema_to_ts", schema_to_ts),
    ("strip", strip),
    ("run_code", run_code),
    ("ref_schema", ref_schema),
    ("mcp_messages", mcp_messages),
    ("provider_turns", provider_turns),
    ("pattern", pattern),
    ("continuation", continuation),
];

/// For the libFuzzer targets that strip programs: libFuzzer's panic hook aborts on every panic,
/// caught or not, but a panic inside swc's parser is caught by the strip and reported as the
/// program's syntax error (FUZZING.md, "Crashes found"). This hook lets exactly those unwind to
/// the strip's `catch_unwind` and hands every other panic to the previous hook (which aborts).
pub fn tolerate_caught_swc_parser_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let in_swc_parser = info
            .location()
            .is_some_and(|at| at.file().contains("swc_ecma_parser"));
        if !in_swc_parser {
            previous(info);
        }
    }));
}

/// Runs `f` on a thread with the sandbox threads' stack size: swc and the SDK lowering get the
/// stack they get in production, whatever thread the fuzzer or the test runner calls from.
fn on_sandbox_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(DEFAULT_THREAD_STACK_BYTES)
            .spawn_scoped(scope, f)
            .expect("spawn a harness thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Schema assertion and validation. Input: a JSON schema, optionally followed by a NUL byte and
/// a JSON instance (without one, a few fixed instances are used).
///
/// Properties: the assertion is total and agrees with compilation; for a supported schema
/// every entry point agrees (`is_valid` ⇔ no violation, `validate_value` on the raw schema gives
/// the same list); an unsupported schema still validates leniently without panicking.
pub fn schema_validate(data: &[u8]) {
    let (schema_bytes, instance_bytes) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    let Ok(schema) = serde_json::from_slice::<Value>(schema_bytes) else {
        return;
    };
    let instances = match instance_bytes {
        Some(bytes) => match serde_json::from_slice::<Value>(bytes) {
            Ok(instance) => vec![instance],
            Err(_) => return,
        },
        None => vec![
            json!(null),
            json!(0),
            json!(1.5),
            json!(""),
            json!([]),
            json!({}),
        ],
    };
    for vocab in [Vocabulary::Reference, Vocabulary::Parameters] {
        let violations = unsupported_violations(&schema, vocab);
        let compiled = CompiledSchema::compile(&schema, vocab);
        assert_eq!(
            compiled.as_ref().err().map(|e| e.violations.clone()),
            (!violations.is_empty()).then_some(violations),
            "assertion and compilation disagree on {schema}"
        );
        for instance in &instances {
            let lenient = validate_value(&schema, instance, "v");
            let Ok(compiled) = &compiled else { continue };
            let messages = compiled.validate(instance, "v");
            assert_eq!(
                compiled.is_valid(instance),
                messages.is_empty(),
                "is_valid vs validate on {schema} / {instance}"
            );
            assert_eq!(
                lenient, messages,
                "raw vs compiled on {schema} / {instance}"
            );
            if !is_lossless(instance) {
                assert!(!messages.is_empty(), "-0 validated: {schema} / {instance}");
            }
        }
    }
}

/// The TypeScript of a schema. Input: a JSON schema.
///
/// Properties: both lowerings and the SDK render are total, and the printed type is TypeScript
/// that swc parses (as the annotation of a declaration in a program).
pub fn schema_to_ts(data: &[u8]) {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    on_sandbox_stack(|| {
        let ts = json_schema_to_ts(&schema, 0);
        let _ = json_schema_to_ts_wide(&schema, 2);
        let sdk = render_tools_sdk(&[SdkTool {
            name: "fuzzed".to_owned(),
            description: "A fuzzed tool.".to_owned(),
            parameters: schema.clone(),
            output: schema.clone(),
        }]);
        assert!(sdk.contains("fuzzed"), "the SDK lost the tool");
        let program = format!("let value: {ts} = null as any;\nreturn value;");
        if let Err(error) = strip_program(&program, &SourceLimits::default())
            && !error.is_source_limit()
        {
            panic!(
                "json_schema_to_ts printed a type swc does not parse ({error}):\n{ts}\nfor {schema}"
            );
        }
    });
}

/// The source guard and the type strip. Input: a program (UTF-8).
///
/// Properties: total at the default limits and at small ones, within the sandbox thread's
/// stack; refusals by a limit are reported as source limits.
pub fn strip(data: &[u8]) {
    let Ok(program) = std::str::from_utf8(data) else {
        return;
    };
    on_sandbox_stack(|| {
        let small = SourceLimits {
            max_source_bytes: 4096,
            max_depth: 16,
        };
        for limits in [SourceLimits::default(), small] {
            match strip_program(program, &limits) {
                Ok(script) => assert!(
                    script.contains("__dsh_main__"),
                    "the wrapper is gone: {script:.200}"
                ),
                Err(error) => {
                    let too_big = program.len() > limits.max_source_bytes;
                    assert!(
                        !too_big || error.is_source_limit(),
                        "an oversized program was not refused by size: {error}"
                    );
                    assert!(!error.to_string().is_empty());
                }
            }
        }
    });
}

/// The limits of the `run_code` target: OSS-Fuzz-like memory, a small stack and short budgets.
pub fn run_code_config() -> QuickJsConfig {
    QuickJsConfig {
        memory_limit_bytes: 16 << 20,
        max_stack_bytes: 64 * 1024,
        cpu_budget: Duration::from_millis(50),
        wall_clock: Duration::from_millis(500),
        max_output_bytes: 16 * 1024,
        max_tool_calls: 16,
        warm_sandboxes: 1,
        ..QuickJsConfig::default()
    }
}

struct Sandbox {
    tokio: tokio::runtime::Runtime,
    runtime: QuickJsRuntime,
}

fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| Sandbox {
        tokio: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a Tokio runtime"),
        runtime: QuickJsRuntime::new(run_code_config()).expect("a valid config"),
    })
}

/// The `tools` namespace of the `run_code` target: `echo` resolves with its arguments, `fail`
/// rejects, `later` resolves after yielding to the runtime. (No panicking binding: libFuzzer's
/// panic hook aborts on every panic, caught or not; `sandbox/calls.rs` covers those.)
fn tools() -> BindingNamespace {
    let echo: BindingFn = Arc::new(|args| Box::pin(async move { Ok(args) }));
    let fail: BindingFn = Arc::new(|_| Box::pin(async { Err("disk on fire".to_owned()) }));
    let later: BindingFn = Arc::new(|args| {
        Box::pin(async move {
            tokio::task::yield_now().await;
            Ok(args)
        })
    });
    BindingNamespace {
        global: "tools".to_owned(),
        functions: vec![
            ("echo".to_owned(), echo),
            ("fail".to_owned(), fail),
            ("later".to_owned(), later),
        ],
        error_class: Some(ErrorClass {
            name: "ToolCallError".to_owned(),
            member_name_property: "toolName".to_owned(),
        }),
    }
}

/// A whole program in the QuickJS sandbox. Input: a program (UTF-8).
///
/// Properties: every run resolves to a result (never a runtime error, never a host crash or
/// hang past the wall clock plus the stop grace); a completion value is lossless JSON; a failure
/// has a message; the captured logs fit the output budget.
pub fn run_code(data: &[u8]) {
    let Ok(program) = std::str::from_utf8(data) else {
        return;
    };
    let sandbox = sandbox();
    let request = CodeRunRequest::new(program, vec![tools()]);
    let run = sandbox.runtime.run(request);
    let outcome = sandbox.tokio.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), run)
            .await
            .expect("the run ended")
    });
    let result = outcome.expect("the bindings are valid");
    if let Some(value) = &result.value {
        assert!(is_lossless(value), "a lossy completion crossed: {value}");
    }
    if let Some(error) = &result.error {
        assert!(!error.message.is_empty(), "an empty {} message", error.kind);
        assert!(result.value.is_none(), "a failed run has a value");
    }
    let logged: usize = result.logs.iter().map(String::len).sum();
    assert!(
        logged <= run_code_config().max_output_bytes,
        "{logged} bytes of logs passed the output budget"
    );
}
