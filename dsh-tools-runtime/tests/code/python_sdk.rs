//! The generated Python SDK, checked by Python itself: every module parses with CPython's `ast`
//! and passes `mypy --strict`, the corpus's valid arguments type-check and its invalid ones do
//! not, and model-style programs are accepted or rejected with the expected mypy error codes.
//!
//! Tools come from the schema corpus `tests/fixtures/sdk/schemas/*.json` (shared with the
//! TypeScript SDK's `tsc` tests). Programs: `tests/fixtures/python/programs/ok/*.py` must pass,
//! `err/*.py` must fail with the codes named on their first line (`# expect: arg-type,
//! typeddict-item`). Each program is wrapped as the body of an async function with the SDK in
//! scope.
//!
//! mypy: `$DSH_MYPY`, else `target/python-venv/bin/mypy` at the workspace root (installed by
//! `scripts/test`). Without it the mypy tests fail when `CI` is set, and are skipped with a
//! printed reason otherwise; the `ast` tests need only `python3`.

#![cfg(feature = "code-mode")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use dsh_tools_runtime::code::sdk::SdkTool;
use dsh_tools_runtime::code::sdk_py::{
    is_method_name, json_schema_to_py, python_string, render_tools_sdk_py, sdk_declarations_py,
};
use dsh_tools_runtime::code::{CodeMode, CodeModeExt};
use serde_json::{Value, json};

const SCHEMAS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sdk/schemas");
const PROGRAMS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/python/programs"
);

/// One corpus file.
struct Fixture {
    file: String,
    tool: SdkTool,
    valid: Vec<Value>,
    invalid: Vec<Value>,
    valid_output: Vec<Value>,
}

/// Examples Python's types cannot judge as the schema does, by fixture and index, with the
/// reason: invalid arguments mypy accepts, and valid outputs it rejects.
const INVALID_BUT_ACCEPTED: &[(&str, usize, &str)] = &[
    (
        "kubernetes_like.json",
        0,
        "`bool` is a subtype of `int` in Python: `True` is an int",
    ),
    (
        "reference_subset_literals.json",
        0,
        "`Literal` takes no floats: the const 1e21 is typed `float`",
    ),
    (
        "tuples.json",
        1,
        "JSON arrays are Python lists: tuple positions are not typed",
    ),
    (
        "authoring_search_issues.json",
        1,
        "a recursive `$ref` is `Any` where it recurs (the filter's `left`): the Python SDK emits no recursive TypedDicts yet",
    ),
];
const VALID_BUT_REJECTED: &[(&str, usize, &str)] = &[(
    "mcp_github_create_issue.json",
    0,
    "an open object's extra keys: `TypedDict` classes are closed before Python 3.13",
)];

fn corpus() -> Vec<Fixture> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(SCHEMAS)
        .expect("the schema corpus exists")
        .map(|e| e.expect("readable corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable fixture");
            let v: Value = serde_json::from_str(&text).expect("valid fixture JSON");
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
            }
        })
        .collect()
}

fn tools(fixtures: &[Fixture]) -> Vec<SdkTool> {
    fixtures.iter().map(|f| f.tool.clone()).collect()
}

/// A scratch directory for one check.
fn scratch(label: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sdk-py-{label}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// mypy, or `None` (with the reason printed) when it is missing outside CI.
fn mypy() -> Option<PathBuf> {
    let path = std::env::var_os("DSH_MYPY")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/python-venv/bin/mypy")
        });
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "mypy is missing at {} — run scripts/test (it installs mypy into target/python-venv) \
         or point DSH_MYPY at a mypy binary",
        path.display()
    );
    assert!(!in_ci(), "{message}");
    eprintln!("skipped: {message}");
    None
}

/// Parses every file with CPython's `ast` (`compile(..., "exec", ast.PyCF_ONLY_AST)`); returns
/// the errors by file.
fn python_parse(dir: &Path, files: &[String]) -> BTreeMap<String, String> {
    let script = "import ast, sys\nfor name in sys.argv[1:]:\n    try:\n        ast.parse(open(name, encoding='utf-8').read(), name)\n    except SyntaxError as e:\n        print(f'{name}: {e}')\n";
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(files)
        .current_dir(dir)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| {
            l.split_once(": ")
                .map(|(f, e)| (f.to_owned(), e.to_owned()))
        })
        .collect()
}

/// Runs `mypy --strict` on `files`; returns the error lines by file.
fn run_mypy(mypy: &Path, dir: &Path, files: &[String]) -> BTreeMap<String, Vec<String>> {
    let output = Command::new(mypy)
        .args([
            "--strict",
            "--no-error-summary",
            "--show-error-codes",
            "--python-version",
            "3.11",
        ])
        .arg("--cache-dir")
        .arg(dir.join(".mypy_cache"))
        .args(files)
        .current_dir(dir)
        .output()
        .expect("mypy runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in stdout.lines().filter(|l| l.contains(": error:")) {
        let file = line.split(':').next().unwrap_or_default().to_owned();
        by_file.entry(file).or_default().push(line.to_owned());
    }
    if !output.status.success() && by_file.is_empty() {
        panic!(
            "mypy failed without diagnostics:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
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

/// A JSON value as a Python literal.
fn literal(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => python_string(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(literal).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", python_string(k), literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How a program reaches `name`.
fn access(name: &str) -> String {
    if is_method_name(name) {
        format!("tools.{name}")
    } else {
        format!("tools[{}]", python_string(name))
    }
}

#[test]
fn every_module_parses_with_python_ast() {
    let fixtures = corpus();
    let dir = scratch("ast");
    let mut files = vec!["all.py".to_owned()];
    std::fs::write(dir.join("all.py"), sdk_declarations_py(&tools(&fixtures))).expect("write");
    for (i, f) in fixtures.iter().enumerate() {
        let name = format!("tool_{i}.py");
        std::fs::write(
            dir.join(&name),
            sdk_declarations_py(std::slice::from_ref(&f.tool)),
        )
        .expect("write");
        files.push(name);
        let name = format!("type_{i}.py");
        let types = format!(
            "from typing import Any, Literal, NotRequired, TypedDict\n\n\n{}\n\n{}\n",
            json_schema_to_py(&f.tool.parameters),
            json_schema_to_py(&f.tool.output)
        );
        std::fs::write(dir.join(&name), types).expect("write");
        files.push(name);
    }
    let errors = python_parse(&dir, &files);
    assert!(errors.is_empty(), "CPython cannot parse:\n{errors:#?}");
    record_figure(
        "sdk-py-ast",
        &format!(
            "sdk/python: {} modules of {} corpus tools parse with CPython's ast",
            files.len(),
            fixtures.len()
        ),
    );
}

#[test]
fn hostile_names_and_descriptions_stay_inside_their_literals() {
    // Each payload, if it escaped its literal or comment, would end the module with status 7.
    let hostile = [
        "\"\"\"; raise SystemExit(7); \"\"\"",
        "x\"\"\"\nraise SystemExit(7)\n#",
        "\"; raise SystemExit(7); \"",
        "\\\"; raise SystemExit(7) #",
        "]; raise SystemExit(7) #",
        "back\\slash\\",
        "\u{202e}rtl\u{2066}\u{0}nul\r\ncr",
        "a\u{2028}b\u{85}c",
        "'''",
        "}",
        "ﬁle",
        "__debug__",
        "class",
        "__x",
        "_private",
    ];
    // Every payload as a tool name (reached by subscript, declared in a comment) and as the
    // description of a method (a docstring), a field (a comment) and values (literals).
    let names = hostile
        .iter()
        .map(|text| (*text).to_owned())
        .chain((0..hostile.len()).map(|i| format!("method_{i}")));
    let tools: Vec<SdkTool> = names
        .zip(hostile.iter().cycle())
        .map(|(name, text)| SdkTool {
            name,
            description: (*text).to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    *text: {"type": "string", "description": text, "enum": [text]},
                    "ok": {"type": "object", "description": text, "properties": {*text: {"const": text}}}
                },
                "required": [text]
            }),
            output: json!({"description": text, "enum": [text, 1, true, null]}),
        })
        .collect();
    let sdk = sdk_declarations_py(&tools);
    let dir = scratch("hostile");
    std::fs::write(dir.join("sdk.py"), &sdk).expect("write");
    // Executed, not only parsed: nothing the descriptions say may run.
    let output = Command::new("python3")
        .arg("sdk.py")
        .current_dir(&dir)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}\n{sdk}",
        String::from_utf8_lossy(&output.stderr)
    );
    if let Some(mypy) = mypy() {
        let errors = run_mypy(&mypy, &dir, &["sdk.py".to_owned()]);
        assert!(
            errors.is_empty(),
            "mypy rejected the hostile SDK:\n{errors:#?}\n{sdk}"
        );
    }
}

#[test]
fn sdk_of_the_corpus_passes_mypy_strict() {
    let Some(mypy) = mypy() else { return };
    let fixtures = corpus();
    let dir = scratch("strict");
    let mut files = vec!["all.py".to_owned()];
    std::fs::write(dir.join("all.py"), sdk_declarations_py(&tools(&fixtures))).expect("write");
    for (i, f) in fixtures.iter().enumerate() {
        let name = format!("tool_{i}.py");
        std::fs::write(
            dir.join(&name),
            sdk_declarations_py(std::slice::from_ref(&f.tool)),
        )
        .expect("write");
        files.push(name);
    }
    let errors = run_mypy(&mypy, &dir, &files);
    assert!(
        errors.is_empty(),
        "mypy --strict rejected the SDK:\n{errors:#?}"
    );
    record_figure(
        "sdk-py-mypy",
        &format!(
            "sdk/python: SDK of {} corpus tools passes mypy --strict (all together and one by one)",
            fixtures.len()
        ),
    );
}

/// Valid examples type-check as the arguments of their tool (and valid outputs as its result);
/// invalid ones do not — except those listed in [`INVALID_BUT_ACCEPTED`] and
/// [`VALID_BUT_REJECTED`], each with its reason.
#[test]
fn examples_type_check_against_the_python_sdk() {
    let Some(mypy) = mypy() else { return };
    let fixtures = corpus();
    let dir = scratch("examples");
    let sdk = sdk_declarations_py(&tools(&fixtures));
    let mut files = Vec::new();
    let mut expect_error: BTreeMap<String, String> = BTreeMap::new();
    let (mut valid, mut invalid, mut accepted, mut rejected) = (0, 0, 0, 0);
    for (i, f) in fixtures.iter().enumerate() {
        let call = access(&f.tool.name);
        let mut ok = format!("{sdk}\n\nasync def check_{i}() -> None:\n");
        for v in &f.valid {
            let _ = writeln!(ok, "    await {call}({})", literal(v));
            valid += 1;
        }
        // Outputs: assigned to a variable typed by the call's result.
        if let (Some(first), false) = (f.valid.first(), f.valid_output.is_empty()) {
            let _ = writeln!(ok, "    result = await {call}({})", literal(first));
            for (j, v) in f.valid_output.iter().enumerate() {
                if VALID_BUT_REJECTED
                    .iter()
                    .any(|(file, index, _)| *file == f.file && *index == j)
                {
                    rejected += 1;
                    continue;
                }
                let _ = writeln!(ok, "    result = {}", literal(v));
                valid += 1;
            }
        }
        let _ = writeln!(ok, "    return None");
        let name = format!("valid_{i}.py");
        std::fs::write(dir.join(&name), ok).expect("write");
        files.push(name);
        for (j, v) in f.invalid.iter().enumerate() {
            let name = format!("invalid_{i}_{j}.py");
            let program = format!(
                "{sdk}\n\nasync def check() -> None:\n    await {call}({})\n",
                literal(v)
            );
            std::fs::write(dir.join(&name), program).expect("write");
            match INVALID_BUT_ACCEPTED
                .iter()
                .find(|(file, index, _)| *file == f.file && *index == j)
            {
                Some(_) => accepted += 1,
                None => {
                    expect_error.insert(name.clone(), format!("{}: {v}", f.file));
                    invalid += 1;
                }
            }
            files.push(name);
        }
    }
    let errors = run_mypy(&mypy, &dir, &files);
    let mut failures = Vec::new();
    for (file, lines) in &errors {
        if file.starts_with("valid_") {
            failures.push(format!("{file} must type-check:\n  {}", lines.join("\n  ")));
        }
    }
    for (file, what) in &expect_error {
        if !errors.contains_key(file) {
            failures.push(format!("{file} ({what}) must be rejected"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        accepted,
        INVALID_BUT_ACCEPTED.len(),
        "every listed example exists"
    );
    assert_eq!(
        rejected,
        VALID_BUT_REJECTED.len(),
        "every listed example exists"
    );
    record_figure(
        "sdk-py-examples",
        &format!(
            "sdk/python: {valid} valid examples type-check under mypy --strict, {invalid} invalid rejected \
             ({} examples Python's types cannot judge as the schema does, each with its reason)",
            accepted + rejected
        ),
    );
}

#[test]
fn model_programs_type_check_as_expected() {
    let Some(mypy) = mypy() else { return };
    let fixtures = corpus();
    let sdk = sdk_declarations_py(&tools(&fixtures));
    let dir = scratch("programs");
    let mut files = Vec::new();
    let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for kind in ["ok", "err"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(Path::new(PROGRAMS).join(kind))
            .expect("program directory")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .collect();
        paths.sort();
        for path in paths {
            let body = std::fs::read_to_string(&path).expect("readable program");
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let name = format!("{kind}_{stem}.py");
            let indented: String = body.lines().map(|l| format!("    {l}\n")).collect();
            let wrapped =
                format!("{sdk}\n\nasync def program() -> object:\n{indented}    return None\n");
            std::fs::write(dir.join(&name), wrapped).expect("write");
            if kind == "err" {
                let codes = body
                    .lines()
                    .next()
                    .and_then(|l| l.strip_prefix("# expect:"))
                    .unwrap_or_else(|| {
                        panic!("{}: first line must be `# expect: code, …`", path.display())
                    })
                    .split(',')
                    .map(|c| c.trim().to_owned())
                    .collect();
                expected.insert(name.clone(), codes);
            }
            files.push(name);
        }
    }
    let errors = run_mypy(&mypy, &dir, &files);
    let mut failures = Vec::new();
    for (file, lines) in &errors {
        if !expected.contains_key(file) {
            failures.push(format!("{file} must type-check:\n  {}", lines.join("\n  ")));
        }
    }
    for (file, codes) in &expected {
        let lines = errors.get(file).cloned().unwrap_or_default();
        for code in codes {
            if !lines.iter().any(|l| l.ends_with(&format!("[{code}]"))) {
                failures.push(format!(
                    "{file} must fail with [{code}]; got:\n  {}",
                    lines.join("\n  ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let ok = files.len() - expected.len();
    assert!(ok >= 8 && expected.len() >= 8, "too few programs");
    record_figure(
        "sdk-py-programs",
        &format!(
            "sdk/python: {} model programs checked with mypy --strict ({ok} accepted, {} rejected with their expected codes)",
            files.len(),
            expected.len()
        ),
    );
}

#[test]
fn section_shape_and_determinism() {
    let fixtures = corpus();
    let all = tools(&fixtures);
    let first = render_tools_sdk_py(&all);
    let mut reversed = all.clone();
    reversed.reverse();
    assert_eq!(first, render_tools_sdk_py(&reversed), "order-independent");
    assert!(first.starts_with("## Writing code for run_code"));
    assert!(first.contains("The available tools:\n\n```python\nfrom typing import "));
    assert!(first.ends_with("tools: Tools\n```"));
    for fragment in [
        "two required arguments",
        "`code`",
        "`description`",
        "raises `ToolCallError`",
        "MAY overlap under `asyncio.gather`",
        "lossless JSON",
    ] {
        assert!(first.contains(fragment), "missing {fragment}");
    }
    assert!(!first.contains("TypeScript"));
}

/// A runtime that only names its language: the prompt needs nothing else.
struct Named(&'static str);

impl dsh_tools_runtime::code::CodeRuntime for Named {
    fn language(&self) -> &str {
        self.0
    }

    fn isolation(&self) -> &str {
        "none"
    }

    fn run(
        &self,
        _: dsh_tools_runtime::code::CodeRunRequest,
    ) -> dsh_tools::definition::BoxFuture<
        'static,
        Result<dsh_tools_runtime::code::CodeRunResult, dsh_tools_runtime::code::CodeRuntimeError>,
    > {
        Box::pin(async { Ok(dsh_tools_runtime::code::CodeRunResult::default()) })
    }
}

/// The SDK section and the `run_code` texts follow the mounted runtime's language, whichever
/// runtime speaks it; an unknown language fails the prompt, naming the known ones.
#[test]
fn the_runtime_language_picks_the_flavour() {
    use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let text_of = |registry: &ToolRegistry| {
        let surface = registry.prompt(None).unwrap();
        let sdk = surface
            .sections
            .iter()
            .find(|s| s.name == "tools:sdk")
            .unwrap()
            .text
            .clone();
        let wire = serde_json::to_value(&surface.tools[0]).unwrap();
        (sdk, wire["description"].as_str().unwrap().to_owned())
    };
    CodeMode::new(std::sync::Arc::new(Named("python")))
        .install(&registry)
        .unwrap();
    let (sdk, description) = text_of(&registry);
    assert!(sdk.contains("```python\n") && description.starts_with("Execute a Python program"));
    registry.set_code_runtime(std::sync::Arc::new(Named("typescript")));
    let (sdk, description) = text_of(&registry);
    assert!(sdk.contains("```ts\n") && description.starts_with("Execute a TypeScript program"));
    registry.set_code_runtime(std::sync::Arc::new(Named("lua")));
    assert_eq!(
        registry.prompt(None).unwrap_err().to_string(),
        "dsh-tools: no SDK renderer registered for runtime language \"lua\" (known: \"typescript\", \"python\")"
    );
}

/// A bounded parameter shows the same tags in both SDKs (one source: the TypeScript SDK's member
/// doc), and the Python SDK says what `ToolCallError` is in this interpreter.
#[test]
fn bounds_are_the_typescript_sdks_and_tool_call_error_is_what_the_runtime_raises() {
    let tool = SdkTool {
        name: "list_items".into(),
        description: "List items.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many."},
                "prefix": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"}
            },
            "required": ["prefix"]
        }),
        output: json!({"type": "string"}),
    };
    let python = render_tools_sdk_py(std::slice::from_ref(&tool));
    let typescript = dsh_tools_runtime::code::sdk::render_tools_sdk(std::slice::from_ref(&tool));
    for (tags, member) in [
        (
            "How many. @minimum 1 @maximum 50",
            "limit: NotRequired[int]",
        ),
        ("@pattern ^[a-z]+$ @minLength 2", "prefix: str"),
    ] {
        assert!(
            python.contains(&format!("    # {tags}\n    {member}\n")),
            "{python}"
        );
        assert!(typescript.contains(tags), "{typescript}");
    }
    assert!(python.contains(
        "# A failed tool call raises ToolCallError; str(e) is \"<tool name>: <what went wrong>\".\n\
         # The interpreter cannot define exception classes: ToolCallError is the builtin\n\
         # NotADirectoryError under another name, raised for tool failures only.\n\
         ToolCallError = NotADirectoryError\n"
    ));
}
