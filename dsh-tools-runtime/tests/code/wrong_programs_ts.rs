//! A corpus of wrong TypeScript programs, each a mistake models make, with the exact text the
//! model gets back and how many tool bodies ran: none when the mistake was knowable before
//! the program started (the static check), and only the calls before the mistake otherwise.
//! The tools are small `#[tool]`s of this file, so their parameter objects are closed.
#![cfg(feature = "code-mode")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools::tool;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::QuickJsRuntime;
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::json;

/// Tool bodies that ran (every tool of this file counts itself).
static RUNS: AtomicUsize = AtomicUsize::new(0);

fn ran() {
    RUNS.fetch_add(1, Ordering::SeqCst);
}

/// Read a text file and return its lines.
#[tool]
async fn read_file(
    /// The file's path.
    path: String,
    /// The first line to return (1-based).
    #[schema(range(min = 1))]
    offset: Option<u32>,
    /// How many lines to return.
    limit: Option<u32>,
) -> String {
    ran();
    let _ = (offset, limit);
    format!("text of {path}")
}

/// Search file contents with a regular expression and return the matching lines.
#[tool]
async fn grep(
    /// The regular expression.
    pattern: String,
    /// The file or directory to search.
    path: Option<String>,
    /// The maximum number of matching lines to return.
    #[schema(range(min = 1, max = 1000))]
    max_matches: Option<u32>,
) -> Vec<String> {
    ran();
    let _ = max_matches;
    vec![format!("{}: {pattern}", path.unwrap_or_default())]
}

/// Find files by name with a glob pattern.
#[tool]
async fn glob(
    /// The glob pattern (`src/**/*.rs`).
    pattern: String,
) -> Vec<String> {
    ran();
    vec![pattern]
}

/// Return the last lines of a text file.
#[tool]
async fn tail(
    /// The file's path.
    path: String,
    /// How many lines.
    #[schema(range(min = 1, max = 1000))]
    lines: u32,
) -> String {
    ran();
    format!("the last {lines} lines of {path}")
}

/// Run a shell command.
#[tool(destructive)]
async fn bash(
    /// The command line.
    command: String,
    /// What the command does, for the user.
    description: String,
) -> String {
    ran();
    format!("{description}: {command}")
}

/// Deploy the site to a target.
#[tool]
async fn deploy(
    /// Where to deploy.
    target: String,
) -> Result<String, String> {
    ran();
    Err(format!("deploy to {target} failed: no credentials"))
}

/// A Code Mode registry with the tools above on QuickJS; `bash` asks, and nobody can answer.
fn registry() -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    for def in [
        read_file::definition(),
        grep::definition(),
        glob::definition(),
        tail::definition(),
        bash::definition(),
        deploy::definition(),
    ] {
        registry.register(def.unwrap()).unwrap().keep();
    }
    CodeMode::new(Arc::new(QuickJsRuntime::default()))
        .install(&registry)
        .unwrap();
    registry
        .on_pre_execute(pre_execute_fn(|exec, _| {
            let ask = exec.name.as_ref() == "bash";
            async move {
                if ask {
                    PreToolDecision::Ask { reason: None }
                } else {
                    PreToolDecision::Allow
                }
            }
        }))
        .keep();
    registry
}

/// What the model reads back from `run_code` running `program`.
async fn run(registry: &ToolRegistry, program: &str) -> String {
    let mut input = ToolExecutionInput::new(
        "c1",
        "run_code",
        json!({"code": program, "description": "Try the tools"}),
    );
    input.agent = Some(registry.new_scope().id());
    let result = registry.execute(input).await;
    result.content()[0].as_text().unwrap().to_owned()
}

/// One wrong program: what it does wrong, the program, the text the model gets, and how many
/// tool bodies ran.
struct Case {
    mistake: &'static str,
    program: &'static str,
    text: &'static str,
    runs: usize,
}

/// The static check's refusal of a program with these findings (one per line).
fn refused(findings: &str) -> String {
    let n = findings.lines().count();
    let noun = if n == 1 { "problem" } else { "problems" };
    format!(
        "Error: code run failed (static-check): the program was not run: {n} {noun} found before it started:\n{findings}"
    )
}

const CASES: &[Case] = &[
    Case {
        mistake: "an invented option (a shell tool's `cwd`)",
        program: "return await tools.bash({ command: 'ls', description: 'List', cwd: 'src' });",
        text: "1:63 tools.bash: \"cwd\" is not a parameter of bash; its parameters are \"command\", \"description\"",
        runs: 0,
    },
    Case {
        mistake: "an option in camelCase",
        program: "const hits = await tools.grep({ pattern: 'TODO', maxMatches: 3 });\nreturn hits;",
        text: "1:50 tools.grep: \"maxMatches\" is not a parameter of grep; did you mean \"max_matches\"?",
        runs: 0,
    },
    Case {
        mistake: "a misspelt key",
        program: "return await tools.read_file({ pth: 'a.txt' });",
        text: "1:30 tools.read_file: missing required property \"path\"\n\
               1:32 tools.read_file: \"pth\" is not a parameter of read_file; did you mean \"path\"?",
        runs: 0,
    },
    Case {
        mistake: "a missing required key",
        program: "return await tools.bash({ command: 'ls' });",
        text: "1:25 tools.bash: missing required property \"description\"",
        runs: 0,
    },
    Case {
        mistake: "a value of the wrong type",
        program: "return await tools.tail({ path: 'a.txt', lines: '10' });",
        text: "1:49 tools.tail: \"lines\" must be an integer",
        runs: 0,
    },
    Case {
        mistake: "a bound violated",
        program: "return await tools.tail({ path: 'a.txt', lines: 0 });",
        text: "1:49 tools.tail: \"lines\" must be at least 1",
        runs: 0,
    },
    Case {
        mistake: "a misspelt tool",
        program: "return await tools.raed_file({ path: 'a.txt' });",
        text: "1:14 tools.raed_file is not a tool of this run; did you mean tools.read_file?",
        runs: 0,
    },
    Case {
        mistake: "a tool of another harness",
        program: "return await tools.search_files({ pattern: 'TODO' });",
        text: "1:14 tools.search_files is not a tool of this run; did you mean tools.glob, tools.grep or tools.read_file?",
        runs: 0,
    },
    Case {
        mistake: "a forgotten `await`, the result used at once",
        program: "const n = tools.read_file({ path: 'a.txt' }).length;\nreturn n;",
        text: "1:11 `tools.read_file(...)` is not awaited: without `await` it is a pending call, not the tool's result (hint: write `(await tools.read_file(...)).length`)",
        runs: 0,
    },
    Case {
        mistake: "a forgotten `await`, the result dropped",
        program: "tools.bash({ command: 'make', description: 'Build' });\nreturn 'built';",
        text: "1:1 `tools.bash(...)` is not awaited: without `await` it is a pending call, not the tool's result (hint: write `await tools.bash(...)`)",
        runs: 0,
    },
    Case {
        mistake: "a forgotten `await`, the result read later",
        program: "const text = tools.read_file({ path: 'a.txt' });\nreturn text.split('\\n');",
        text: "2:8 `text` holds `tools.read_file(...)` not awaited: without `await` it is a pending call, not the tool's result (hint: write `const text = await tools.read_file(...)`)",
        runs: 0,
    },
];

/// One test, so the cases count the tool runs one at a time.
#[tokio::test]
async fn each_mistake_gets_the_text_that_names_it() {
    let registry = registry();
    let mut wrong = Vec::new();
    for case in CASES {
        RUNS.store(0, Ordering::SeqCst);
        let text = run(&registry, case.program).await;
        let expected = refused(case.text);
        let runs = RUNS.load(Ordering::SeqCst);
        if (text.as_str(), runs) != (expected.as_str(), case.runs) {
            wrong.push(format!(
                "{}:\n  got  {text:?} ({runs} runs)\n  want {expected:?}",
                case.mistake
            ));
        }
    }
    wrong.extend(mistakes_only_a_run_shows_are_named_when_they_happen(&registry).await);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Mistakes only a run shows: the calls before them ran. An uncaught failure of a call is
/// reported with the tool's name and where the program made the call.
const RUN_CASES: &[Case] = &[
    Case {
        mistake: "an `undefined` property from a computed argument",
        program: "const opts = { limit: undefined as number | undefined };\n\
                  return await tools.read_file({ path: 'a.txt', ...opts });",
        text: "Error: code run failed (exception): ToolCallError: read_file: tool arguments must be lossless JSON: arguments.limit is undefined\n    at program.ts:2:14",
        runs: 0,
    },
    Case {
        mistake: "a NaN from arithmetic on a missing number",
        program: "const first = await tools.read_file({ path: 'a.txt' });\n\
                  const n = Number(first.split(' ')[9]);\n\
                  return await tools.grep({ pattern: 'x', max_matches: n + 1 });",
        text: "Error: code run failed (exception): ToolCallError: grep: tool arguments must be lossless JSON: arguments.max_matches is NaN\n    at program.ts:3:14",
        runs: 1,
    },
    Case {
        mistake: "a Date where a string is expected",
        program: "return await tools.glob({ pattern: new Date(0) as unknown as string });",
        text: "Error: code run failed (exception): ToolCallError: glob: tool arguments must be lossless JSON: arguments.pattern is not a plain object (a Date, Map, Set or class instance: convert it to JSON data first)\n    at program.ts:1:14",
        runs: 0,
    },
    Case {
        mistake: "an unknown key built at run time",
        program: "const key = ['c', 'w', 'd'].join('');\n\
                  return await tools.glob({ pattern: '*.rs', [key]: 'src' });",
        text: "Error: code run failed (exception): ToolCallError: glob: invalid arguments: \"cwd\" is not a parameter of glob; its parameters are \"pattern\"\n    at program.ts:2:14",
        runs: 0,
    },
    Case {
        mistake: "a tool failure left uncaught",
        program: "const target = 'prod';\n\
                  const log = await tools.deploy({ target });\n\
                  return log;",
        text: "Error: code run failed (exception): ToolCallError: deploy: deploy to prod failed: no credentials\n    at program.ts:2:19",
        runs: 1,
    },
    Case {
        mistake: "a tool failure left uncaught in a helper, the call over two lines",
        program: "async function ship(where: string) {\n\
                  \x20 return await tools.deploy({\n    target: where.toUpperCase(),\n  });\n}\n\
                  return await ship('prod');",
        text: "Error: code run failed (exception): ToolCallError: deploy: deploy to PROD failed: no credentials\n    at program.ts:2:16",
        runs: 1,
    },
    Case {
        mistake: "a tool called from two places fails uncaught in a helper",
        program: "await tools.deploy({ target: 'stage' }).catch(() => null);\n\
                  async function ship(where: string) {\n\
                  \x20 return await tools.deploy({ target: where });\n}\n\
                  return await ship('prod');",
        text: "Error: code run failed (exception): ToolCallError: deploy: deploy to prod failed: no credentials\n    at ship (program.ts:3:16)\n    at __dsh_main__ (program.ts:5:14)",
        runs: 2,
    },
    Case {
        mistake: "approval refused (nobody to ask)",
        program: "await tools.glob({ pattern: '*.md' });\n\
                  return await tools.bash({ command: 'rm -rf build', description: 'Clean' });",
        text: "Error: code run failed (exception): ToolCallError: bash: tool \"bash\" requires approval, but no approval channel is available\n    at program.ts:2:14",
        runs: 1,
    },
    Case {
        mistake: "a bound violated by a computed value",
        program: "const lines = (await tools.read_file({ path: 'a.txt' })).length;\n\
                  return await tools.tail({ path: 'a.txt', lines: lines * 1000 });",
        text: "Error: code run failed (exception): ToolCallError: tail: invalid arguments: \"lines\" must be at most 1000\n    at program.ts:2:14",
        runs: 1,
    },
    Case {
        mistake: "a tool of another harness named at run time",
        program: "const name = 'search_files';\n\
                  return await tools[name]({ pattern: 'TODO' });",
        text: "Error: code run failed (exception): TypeError: tools has no function named 'search_files'\n    at __dsh_main__ (program.ts:2:20)",
        runs: 0,
    },
    Case {
        mistake: "a misspelt tool named at run time",
        program: "const verb = 'read';\n\
                  return await tools[`${verb}_files`]({ path: 'a.txt' });",
        text: "Error: code run failed (exception): TypeError: tools has no function named 'read_files'; did you mean tools[\"read_file\"]?\n    at __dsh_main__ (program.ts:2:23)",
        runs: 0,
    },
    Case {
        mistake: "a caught failure: the program reads the tool's name",
        program: "try {\n  await tools.deploy({ target: 'prod' });\n} catch (e) {\n\
                  \x20 if (e instanceof ToolCallError) console.log(`${e.toolName} failed: ${e.message}`);\n}\n\
                  return 'done';",
        text: "deploy failed: deploy to prod failed: no credentials\ndone",
        runs: 1,
    },
];

/// The SDK marks the tool that asks and promises the refusal the approval case gets.
#[test]
fn the_sdk_says_which_tools_ask_and_how_a_refusal_reads() {
    use dsh_tools_runtime::code::sdk::{render_tools_sdk, sdk_tool_from};
    let tools = [bash::definition().unwrap(), glob::definition().unwrap()];
    let sdk = render_tools_sdk(&tools.iter().map(sdk_tool_from).collect::<Vec<_>>());
    assert!(
        sdk.contains("A `(may ask for approval)` tool waits for a person; with no one to ask it rejects with `tool \"<name>\" requires approval, but no approval channel is available`."),
        "{sdk}"
    );
    assert!(
        sdk.contains("// Run a shell command. (may ask for approval)\nbash: "),
        "{sdk}"
    );
    assert!(
        sdk.contains("// Find files by name with a glob pattern.\nglob: "),
        "{sdk}"
    );
    // The prompt's SDK (assembled from per-tool fragments) marks it the same way.
    let prompt = registry().prompt(None).unwrap();
    let sections: Vec<&str> = prompt.sections.iter().map(|s| s.text.as_str()).collect();
    let sections = sections.join("\n");
    assert!(
        sections.contains("// Run a shell command. (may ask for approval)\nbash: "),
        "{sections}"
    );
    let refusal = RUN_CASES
        .iter()
        .find(|case| case.mistake.starts_with("approval refused"))
        .unwrap();
    assert!(
        refusal.text.contains(
            &"tool \"<name>\" requires approval, but no approval channel is available"
                .replace("<name>", "bash")
        )
    );
}

/// The cases of [`RUN_CASES`] that did not get their text (first line) or run count.
async fn mistakes_only_a_run_shows_are_named_when_they_happen(
    registry: &ToolRegistry,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for case in RUN_CASES {
        RUNS.store(0, Ordering::SeqCst);
        let text = run(registry, case.program).await;
        let runs = RUNS.load(Ordering::SeqCst);
        if (text.as_str(), runs) != (case.text, case.runs) {
            wrong.push(format!(
                "{}:\n  got  {text:?} ({runs} runs)\n  want {:?}",
                case.mistake, case.text
            ));
        }
    }
    wrong
}
