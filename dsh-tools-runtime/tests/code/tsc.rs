//! The generated SDK, checked by the real TypeScript compiler (`tsc --noEmit --strict`).
//!
//! Tools come from the schema corpus `tests/fixtures/sdk/schemas/*.json` (real-world-style
//! schemas: MCP servers, zod and pydantic output, OpenAPI, the example coding tools). Each
//! fixture is `{name, description, parameters, output?, valid?, invalid?, valid_output?}`:
//! `valid` arguments (and `valid_output` values) must type-check against the SDK, `invalid`
//! ones must not; both are also checked against the schema itself with the `jsonschema` crate,
//! so the examples are right about the schema.
//!
//! Programs: `programs/ok/*.ts` must compile, `programs/err/*.ts` must fail with the
//! diagnostic codes named on their first line (`// expect: TS2345, TS2322`). Each program is
//! wrapped as the body of an async function with the SDK in scope.
//!
//! The compiler: `$DSH_TSC`, else `tests/node/node_modules/.bin/tsc` at the workspace root
//! (installed by `npm ci --prefix tests/node`, which `scripts/test` runs). Without it the
//! tests fail when `CI` is set, and are skipped with a printed reason otherwise.

#![cfg(feature = "code-mode")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use dsh_tools_runtime::code::sdk::{SdkTool, json_schema_to_ts, sdk_declarations};
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sdk");

/// One corpus file.
struct Fixture {
    file: String,
    tool: SdkTool,
    valid: Vec<Value>,
    invalid: Vec<Value>,
    valid_output: Vec<Value>,
    skip_validation: bool,
}

fn corpus() -> Vec<Fixture> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(FIXTURES).join("schemas"))
        .expect("the schema corpus exists")
        .map(|e| e.expect("readable corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable fixture");
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", path.display()));
            let list = |key: &str| {
                v.get(key)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            Fixture {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                tool: SdkTool {
                    name: v["name"].as_str().expect("fixture name").to_owned(),
                    description: v["description"].as_str().unwrap_or_default().to_owned(),
                    parameters: v["parameters"].clone(),
                    output: v.get("output").cloned().unwrap_or_else(|| json!({})),
                },
                valid: list("valid"),
                invalid: list("invalid"),
                valid_output: list("valid_output"),
                skip_validation: v.get("skip_validation").is_some(),
            }
        })
        .collect()
}

/// The compiler, or `None` (with the reason printed) when it is missing outside CI.
fn tsc() -> Option<PathBuf> {
    let path = std::env::var_os("DSH_TSC")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/node/node_modules/.bin/tsc")
        });
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "the TypeScript compiler is missing at {} — run `npm ci --prefix tests/node` at the \
         workspace root (scripts/test does) or point DSH_TSC at a tsc binary",
        path.display()
    );
    if ["CI", "DSH_REQUIRE_NODE"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
    {
        panic!("{message}");
    }
    eprintln!("skipped: {message}");
    None
}

/// A scratch directory for one compiler run.
fn scratch(label: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sdk-tsc-{label}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// The SDK's console: the sandbox's five methods.
const GLOBALS: &str = "declare const console: {\n  log(...data: unknown[]): void;\n  info(...data: unknown[]): void;\n  \
    warn(...data: unknown[]): void;\n  error(...data: unknown[]): void;\n  debug(...data: unknown[]): void;\n};\n";

/// Runs `tsc -p` on `files` (paths relative to `dir`); returns the diagnostics by file.
fn compile(tsc: &Path, dir: &Path, files: &[String]) -> BTreeMap<String, Vec<String>> {
    std::fs::write(dir.join("globals.d.ts"), GLOBALS).expect("write globals");
    let mut all = vec!["globals.d.ts".to_owned()];
    all.extend(files.iter().cloned());
    let config = json!({
        "compilerOptions": {
            "strict": true,
            "noEmit": true,
            "target": "es2022",
            "lib": ["es2022"],
            "module": "esnext",
            "types": [],
            "erasableSyntaxOnly": true,
            "skipLibCheck": false
        },
        "files": all
    });
    std::fs::write(dir.join("tsconfig.json"), config.to_string()).expect("write tsconfig");
    let output = Command::new(tsc)
        .arg("-p")
        .arg(dir.join("tsconfig.json"))
        .arg("--pretty")
        .arg("false")
        .output()
        .expect("run tsc");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut last: Option<String> = None;
    for line in stdout.lines() {
        // `file(line,col): error TS1234: message`; continuation lines are indented.
        if let Some((file, _)) = line
            .split_once('(')
            .filter(|_| line.contains("): error TS"))
        {
            let file = Path::new(file)
                .file_name()
                .map_or(file.to_owned(), |f| f.to_string_lossy().into_owned());
            by_file
                .entry(file.clone())
                .or_default()
                .push(line.to_owned());
            last = Some(file);
        } else if let (Some(file), true) = (&last, line.starts_with(' ')) {
            by_file
                .entry(file.clone())
                .or_default()
                .push(line.to_owned());
        } else if !line.trim().is_empty() {
            by_file
                .entry(String::from("<tsc>"))
                .or_default()
                .push(line.to_owned());
        }
    }
    if !output.status.success() && by_file.is_empty() {
        panic!("tsc failed without diagnostics:\n{stdout}\n{stderr}");
    }
    by_file
}

fn record_figure(name: &str, line: &str) {
    println!("{line}");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("figures");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(format!("{name}.txt")), format!("{line}\n"));
    }
}

fn sdk_for(fixtures: &[Fixture]) -> String {
    let tools: Vec<SdkTool> = fixtures.iter().map(|f| f.tool.clone()).collect();
    sdk_declarations(&tools)
}

#[test]
fn corpus_is_large_and_its_examples_agree_with_json_schema() {
    let fixtures = corpus();
    assert!(
        fixtures.len() >= 30,
        "only {} corpus schemas",
        fixtures.len()
    );
    let mut checked = 0;
    for f in &fixtures {
        if f.skip_validation {
            continue;
        }
        let args = jsonschema::validator_for(&f.tool.parameters)
            .unwrap_or_else(|e| panic!("{}: parameters do not compile: {e}", f.file));
        for v in &f.valid {
            assert!(
                args.is_valid(v),
                "{}: valid example rejected by the schema: {v}",
                f.file
            );
            checked += 1;
        }
        for v in &f.invalid {
            assert!(
                !args.is_valid(v),
                "{}: invalid example accepted by the schema: {v}",
                f.file
            );
            checked += 1;
        }
        if !f.valid_output.is_empty() {
            let output = jsonschema::validator_for(&f.tool.output)
                .unwrap_or_else(|e| panic!("{}: output does not compile: {e}", f.file));
            for v in &f.valid_output {
                assert!(output.is_valid(v), "{}: valid output rejected: {v}", f.file);
                checked += 1;
            }
        }
    }
    println!(
        "{} corpus schemas, {checked} examples validated with jsonschema",
        fixtures.len()
    );
}

#[test]
fn sdk_of_the_corpus_passes_tsc_strict() {
    let Some(tsc) = tsc() else { return };
    let fixtures = corpus();
    let dir = scratch("sdk");
    std::fs::write(dir.join("sdk.d.ts"), sdk_for(&fixtures)).expect("write sdk");
    let diagnostics = compile(&tsc, &dir, &["sdk.d.ts".to_owned()]);
    assert!(
        diagnostics.is_empty(),
        "tsc rejected the SDK:\n{diagnostics:#?}"
    );
    let (params, outputs) = (fixtures.len(), fixtures.len());
    record_figure(
        "sdk-tsc-schemas",
        &format!(
            "sdk/tsc: SDK of {params} corpus tools ({} schemas: {params} parameters + {outputs} outputs) passes tsc --strict",
            params + outputs
        ),
    );
}

/// The SDK of the real MCP tools corpus (`tests/fixtures/mcp-tools`, 26 servers' `tools/list`)
/// passes `tsc --strict`, and so does a program calling one of them.
#[test]
fn sdk_of_the_mcp_tools_corpus_passes_tsc_strict() {
    let Some(tsc) = tsc() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(FIXTURES).join("../mcp-tools"))
        .expect("the MCP tools corpus exists")
        .map(|e| e.expect("a readable corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut tools = Vec::new();
    for path in files {
        let list: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
        // Servers share tool names (GitHub's and GitLab's `create_issue`): a registry imports
        // them under per-server prefixes, and so does this test.
        let server = path
            .file_stem()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        tools.extend(list.into_iter().map(|t| SdkTool {
            name: format!("{server}__{}", t["name"].as_str().expect("a name")),
            description: t["description"].as_str().unwrap_or_default().to_owned(),
            parameters: t["parameters"].clone(),
            output: t.get("output").cloned().unwrap_or(json!({})),
        }));
    }
    assert_eq!(tools.len(), 353);
    let dir = scratch("mcp-tools");
    std::fs::write(dir.join("sdk.d.ts"), sdk_declarations(&tools)).expect("write sdk");
    std::fs::write(
        dir.join("program.ts"),
        "export {};\nasync function main() {\n  const page = await tools[\"notion-mcp-server__API-get-self\"]({});\n  \
         const typed = await tools[\"server-filesystem__read_text_file\"]({ path: \"a\" });\n  \
         const text: string | undefined = typed.content;\n  return [page, text];\n}\nvoid main;\n",
    )
    .expect("write program");
    let diagnostics = compile(
        &tsc,
        &dir,
        &["sdk.d.ts".to_owned(), "program.ts".to_owned()],
    );
    assert!(
        diagnostics.is_empty(),
        "tsc rejected the SDK:\n{diagnostics:#?}"
    );
}

/// For every tool: the `json_schema_to_ts` text means exactly the SDK's AST-printed type (a
/// mutual-assignability `Equals` check); valid examples type-check; invalid ones do not
/// (`@ts-expect-error`).
#[test]
fn text_types_and_examples_type_check() {
    let Some(tsc) = tsc() else { return };
    let fixtures = corpus();
    let dir = scratch("examples");
    std::fs::write(dir.join("sdk.d.ts"), sdk_for(&fixtures)).expect("write sdk");
    let mut check = String::from(
        "export {};\ntype Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends (<T>() => T extends Y ? 1 : 2) ? true : false;\n\
         type OutputOf<K> = K extends keyof ToolOutputMap ? ToolOutputMap[K] : JsonValue;\n",
    );
    let (mut equal, mut within, mut valid, mut invalid) = (0, 0, 0, 0);
    for (i, f) in fixtures.iter().enumerate() {
        let key = serde_json::to_string(&f.tool.name).unwrap();
        // A tool whose output is any JSON value has no `ToolOutputMap` member (`OutputOf`).
        let output = format!("OutputOf<{key}>");
        let args_text = json_schema_to_ts(&f.tool.parameters, 0);
        let output_text = json_schema_to_ts(&f.tool.output, 0);
        let _ = writeln!(
            check,
            "// {}\ntype Args{i} = {args_text};\ntype Output{i} = {output_text};",
            f.file
        );
        for (what, text, map) in [
            ("Args", &args_text, "ToolArgsMap"),
            ("Output", &output_text, "Output"),
        ] {
            let sdk_type = if map == "Output" {
                output.clone()
            } else {
                format!("{map}[{key}]")
            };
            if text.contains("unknown") {
                // A recursive schema: the text cuts the cycle with `unknown`, the SDK declares a
                // recursive alias — the SDK type must be assignable to the text type.
                let _ = writeln!(
                    check,
                    "const {what}Within{i}: [{sdk_type}] extends [{what}{i}] ? true : false = true;"
                );
                within += 1;
            } else {
                let _ = writeln!(
                    check,
                    "const {what}Equal{i}: Equals<{what}{i}, {sdk_type}> = true;"
                );
                equal += 1;
            }
        }
        for (j, v) in f.valid.iter().enumerate() {
            let _ = writeln!(check, "const valid{i}_{j}: ToolArgsMap[{key}] = {v};");
            valid += 1;
        }
        for (j, v) in f.valid_output.iter().enumerate() {
            let _ = writeln!(check, "const validOutput{i}_{j}: {output} = {v};");
            valid += 1;
        }
        for (j, v) in f.invalid.iter().enumerate() {
            let _ = writeln!(
                check,
                "// @ts-expect-error invalid example\nconst invalid{i}_{j}: ToolArgsMap[{key}] = {v};"
            );
            invalid += 1;
        }
    }
    std::fs::write(dir.join("check.ts"), &check).expect("write check");
    let diagnostics = compile(&tsc, &dir, &["sdk.d.ts".to_owned(), "check.ts".to_owned()]);
    assert!(
        diagnostics.is_empty(),
        "tsc diagnostics:\n{diagnostics:#?}\n--- check.ts ---\n{check}"
    );
    record_figure(
        "sdk-tsc-examples",
        &format!(
            "sdk/tsc: {equal} json_schema_to_ts texts equal their SDK types ({within} more contain them); \
             {valid} valid examples accepted, {invalid} invalid rejected"
        ),
    );
}

#[test]
fn model_programs_type_check_as_expected() {
    let Some(tsc) = tsc() else { return };
    let fixtures = corpus();
    let dir = scratch("programs");
    std::fs::write(dir.join("sdk.d.ts"), sdk_for(&fixtures)).expect("write sdk");
    let mut files = vec!["sdk.d.ts".to_owned()];
    let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut ok_files = Vec::new();
    for kind in ["ok", "err"] {
        let mut paths: Vec<PathBuf> =
            std::fs::read_dir(Path::new(FIXTURES).join("programs").join(kind))
                .expect("program directory")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "ts"))
                .collect();
        paths.sort();
        for path in paths {
            let body = std::fs::read_to_string(&path).expect("readable program");
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let name = format!("{kind}_{stem}.ts");
            let wrapped =
                format!("export {{}};\nasync function program() {{\n{body}\n}}\nvoid program;\n");
            std::fs::write(dir.join(&name), wrapped).expect("write program");
            if kind == "err" {
                let codes = body
                    .lines()
                    .next()
                    .and_then(|l| l.strip_prefix("// expect:"))
                    .unwrap_or_else(|| {
                        panic!("{}: first line must be `// expect: TS…`", path.display())
                    })
                    .split(',')
                    .map(|c| c.trim().to_owned())
                    .collect();
                expected.insert(name.clone(), codes);
            } else {
                ok_files.push(name.clone());
            }
            files.push(name);
        }
    }
    let diagnostics = compile(&tsc, &dir, &files);
    let mut failures = Vec::new();
    for (file, lines) in &diagnostics {
        if !expected.contains_key(file) {
            failures.push(format!("{file} must compile:\n  {}", lines.join("\n  ")));
        }
    }
    for (file, codes) in &expected {
        let lines = diagnostics.get(file).cloned().unwrap_or_default();
        for code in codes {
            if !lines.iter().any(|l| l.contains(&format!("error {code}:"))) {
                failures.push(format!(
                    "{file} must fail with {code}; got:\n  {}",
                    lines.join("\n  ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        ok_files.len() >= 10 && expected.len() >= 10,
        "too few programs"
    );
    record_figure(
        "sdk-tsc-programs",
        &format!(
            "sdk/tsc: {} model programs checked ({} compile, {} fail with their expected diagnostics)",
            ok_files.len() + expected.len(),
            ok_files.len(),
            expected.len()
        ),
    );
}
