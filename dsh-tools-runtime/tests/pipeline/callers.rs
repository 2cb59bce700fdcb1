//! The caller dimension of the presentation matrix (`docs/CONTRACTS.md`, "Presentation modes"):
//! every presentation mode × every `callers` value × every way the model meets a tool — the wire
//! list, the SDK, a model-direct call and a call from a program.
//!
//! The program column runs a `run_code` call on a scripted code runtime whose "program" calls
//! the probe's binding; in a `native` scope (no `run_code`) it is a nested call, the shape every
//! program's call has. Each cell asserts the outcome and how often the probe's body ran.
#![cfg(feature = "code-mode")]

use crate::support;

use std::sync::Arc;

use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools::{Callers, ToolDefinition};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::{CodeRunRequest, CodeRunResult};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, Scope, ToolRegistry};
use serde_json::{Value, json};
use support::scripted_runtime::{ScriptedRuntime, find_binding};
use support::{Counted, call_as, code, counted_with, nested};

/// A runtime whose program calls `probe` once and returns what it got: `{ok}` or `{err}`.
fn calls_probe() -> Arc<ScriptedRuntime> {
    Arc::new(ScriptedRuntime(Arc::new(|request: CodeRunRequest| {
        let probe = find_binding(&request, "probe");
        Box::pin(async move {
            let value = match probe {
                None => json!({"err": "no binding"}),
                Some(probe) => match probe(json!({})).await {
                    Ok(value) => json!({"ok": value}),
                    Err(message) => json!({"err": message}),
                },
            };
            Ok(CodeRunResult {
                value: Some(value),
                logs: Vec::new(),
                error: None,
            })
        })
    })))
}

/// What one cell saw.
#[derive(Debug)]
struct Cell {
    on_wire: bool,
    in_sdk: bool,
    direct: Result<(), String>,
    program: Result<(), String>,
    body_runs: usize,
}

const DESCRIPTION: &str = "Probe the caller matrix.";

fn probe(callers: Callers) -> (Counted, ToolDefinition) {
    let counted = counted_with(
        ToolDefinition::builder("probe")
            .description(DESCRIPTION)
            .output_json(json!({"type": "string"}))
            .callers(callers),
        |_| Ok(json!("probed")),
    );
    let def = counted.def.clone();
    (counted, def)
}

fn outcome(result: &ToolExecutionResult) -> Result<(), String> {
    match result.error() {
        None => Ok(()),
        Some(error) => {
            assert_eq!(code(result).as_deref(), Some("UNKNOWN_TOOL"), "{error:?}");
            Err(error.message().to_owned())
        }
    }
}

async fn cell(mode: PresentationMode, callers: Callers) -> Cell {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode,
        ..RegistryConfig::default()
    });
    CodeMode::new(calls_probe()).install(&registry).unwrap();
    let (counted, def) = probe(callers);
    registry.register(def).unwrap().keep();
    let agent: Scope = registry.new_scope();

    let surface = registry.prompt(Some(agent.id())).unwrap();
    let on_wire = surface.tools.iter().any(|t| t.name == "probe");
    assert_eq!(
        on_wire,
        surface.known_names.iter().any(|n| n == "probe"),
        "the tool order may list exactly the wire tools"
    );
    let in_sdk = surface
        .sections
        .iter()
        .any(|s| s.name == "tools:sdk" && s.text.contains(DESCRIPTION));

    let direct = outcome(&registry.execute(call_as("probe", &agent)).await);
    let program = if mode == PresentationMode::Native {
        outcome(&registry.execute(nested(call_as("probe", &agent))).await)
    } else {
        let mut input = ToolExecutionInput::new(
            "run-1",
            "run_code",
            json!({"code": "/* scripted */", "description": "Call the probe"}),
        );
        input.agent = Some(agent.id());
        let result = registry.execute(input).await;
        let value = result.value().expect("run_code succeeds").clone();
        match &value["result"] {
            Value::Object(o) if o.contains_key("ok") => Ok(()),
            other => Err(other["err"].as_str().unwrap_or_default().to_owned()),
        }
    };
    Cell {
        on_wire,
        in_sdk,
        direct,
        program,
        body_runs: counted.runs(),
    }
}

const RUNS: Result<(), &str> = Ok(());
const BY_MODEL: &str =
    "tool \"probe\" is callable by the model directly, not from code (callers = \"native\")";

/// One expected row: wire, SDK, direct call, program call.
fn expected(
    mode: PresentationMode,
    callers: Callers,
) -> (
    bool,
    bool,
    Result<(), &'static str>,
    Result<(), &'static str>,
) {
    use Callers as C;
    use PresentationMode as M;
    match (mode, callers) {
        (M::Native, C::Native) => (true, false, RUNS, Err(BY_MODEL)),
        (M::Native, C::Code) => (
            false,
            false,
            Err(
                "unknown tool \"probe\": it is callable only from Code Mode programs (callers = \"code\"), and this scope presents its tools natively",
            ),
            RUNS,
        ),
        (M::Native, C::Both) => (true, false, RUNS, RUNS),
        (M::Code, C::Native) => (true, false, RUNS, Err(BY_MODEL)),
        (M::Code | M::Both, C::Code) => (
            false,
            true,
            Err(
                "unknown tool \"probe\": it is code-only — call `probe` from inside a `run_code` program instead",
            ),
            RUNS,
        ),
        (M::Code, C::Both) => (
            false,
            true,
            Err(
                "unknown tool \"probe\": only `run_code` is callable directly — call `probe` from inside a `run_code` program instead",
            ),
            RUNS,
        ),
        (M::Both, C::Native) => (true, false, RUNS, Err(BY_MODEL)),
        (M::Both, C::Both) => (true, true, RUNS, RUNS),
    }
}

#[tokio::test]
async fn every_cell_of_mode_by_callers() {
    let modes = [
        PresentationMode::Native,
        PresentationMode::Code,
        PresentationMode::Both,
    ];
    for mode in modes {
        for callers in Callers::ALL {
            let cell = cell(mode, callers).await;
            let (wire, sdk, direct, program) = expected(mode, callers);
            let label = format!("{} scope, callers = {callers}", mode.as_str());
            assert_eq!(cell.on_wire, wire, "wire list: {label}");
            assert_eq!(cell.in_sdk, sdk, "SDK: {label}");
            assert_eq!(
                cell.direct.as_ref().copied().map_err(String::as_str),
                direct,
                "direct call: {label}"
            );
            assert_eq!(
                cell.program.as_ref().copied().map_err(String::as_str),
                program,
                "program call: {label}"
            );
            let runs = usize::from(direct.is_ok()) + usize::from(program.is_ok());
            assert_eq!(cell.body_runs, runs, "body runs: {label}");
        }
    }
}

#[tokio::test]
async fn a_code_scope_lists_native_only_tools_beside_run_code_and_says_so() {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    CodeMode::new(calls_probe()).install(&registry).unwrap();
    let (_, ask) = probe(Callers::Native);
    let both = counted_with(
        ToolDefinition::builder("search").description("Search."),
        |_| Ok(json!(null)),
    );
    registry.register(ask).unwrap().keep();
    registry.register(both.def).unwrap().keep();
    let surface = registry.prompt(None).unwrap();
    let tools: Vec<&str> = surface.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["probe", "run_code"]);
    assert_eq!(surface.known_names, ["probe", "run_code"]);
    let rule = &surface.sections[0];
    assert_eq!(rule.name, "tools:code-only");
    assert!(
        rule.text
            .starts_with("`run_code` and `probe` are the only tools you can call directly"),
        "{}",
        rule.text
    );
    assert!(surface.sections[1].text.contains("search"));
    assert!(!surface.sections[1].text.contains(DESCRIPTION));
    // `schemas` never lists a code-only tool.
    let code_only = counted_with(
        ToolDefinition::builder("crunch")
            .description("Crunch.")
            .callers(Callers::Code),
        |_| Ok(json!(null)),
    );
    registry.register(code_only.def).unwrap().keep();
    let names: Vec<String> = registry.schemas(None).into_iter().map(|s| s.name).collect();
    assert!(!names.contains(&"crunch".to_owned()), "{names:?}");
}

#[tokio::test]
async fn a_registry_without_a_presentation_still_hides_code_only_tools() {
    // Native mode, no runtime mounted: a code-only tool is invisible to the model.
    let registry = ToolRegistry::new();
    let (counted, def) = probe(Callers::Code);
    registry.register(def).unwrap().keep();
    let surface = registry.prompt(None).unwrap();
    assert!(surface.tools.is_empty() && surface.known_names.is_empty());
    let result = registry.execute(support::call("probe")).await;
    assert_eq!(code(&result).as_deref(), Some("UNKNOWN_TOOL"));
    assert_eq!(counted.runs(), 0);
}

#[tokio::test]
async fn a_typescript_program_is_told_why_it_cannot_call_a_native_only_tool() {
    use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};

    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    CodeMode::new(Arc::new(
        QuickJsRuntime::new(QuickJsConfig::default()).unwrap(),
    ))
    .install(&registry)
    .unwrap();
    let (counted, def) = probe(Callers::Native);
    registry.register(def).unwrap().keep();
    let run = |id: &str, code: &str| {
        ToolExecutionInput::new(
            id,
            "run_code",
            json!({"code": code, "description": "Call the probe"}),
        )
    };
    // Named in the program: refused before it runs.
    let named = registry
        .execute(run("r1", "return await tools.probe({});"))
        .await;
    assert_eq!(
        named.error().map(|e| e.message().to_owned()),
        Some("code run failed (static-check): the program was not run: 1 problem found before it started:\n1:14 tools.probe is callable by the model directly, not from code (callers = \"native\")".to_owned())
    );
    // Reached dynamically: the call rejects with the pipeline's refusal.
    let dynamic = registry
        .execute(run(
            "r2",
            "const name = ['pro', 'be'].join(''); try { await tools[name]({}); return 'ran'; } catch (e) { return `${e.name}: ${e.message}`; }",
        ))
        .await;
    assert_eq!(
        dynamic.value().map(|v| v["result"].clone()),
        Some(json!(format!("ToolCallError: {BY_MODEL}")))
    );
    assert_eq!(counted.runs(), 0);
}
