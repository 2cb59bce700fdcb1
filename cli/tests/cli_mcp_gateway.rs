//! The Code Mode gateway (issue 27): `dsh-tools mcp serve --http --mode code` over two real npm
//! MCP servers (`@modelcontextprotocol/server-everything` and `server-filesystem`, from
//! `npm ci --prefix tests/node`) imported with `--mcp`, driven by rmcp's own streamable-HTTP
//! client at 2026-07-28: the client lists exactly `run_code`, whose description carries the
//! SDK of every tool, and one program calls tools of both servers.
//!
//! Without the npm packages the tests fail under `CI` and are skipped otherwise.

#[path = "support/http.rs"]
#[allow(
    dead_code,
    reason = "the load tests' helpers; these tests start the server only"
)]
mod http;
mod support;

use std::path::{Path, PathBuf};

use dsh_tools_runtime::code::{CODE_ONLY_TEXT, RUN_CODE_DESCRIPTION};
use dsh_tools_runtime::mcp::rmcp;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

/// `node <package's entry point>` as a `--mcp` value, or `None` (reason printed) when the
/// package is missing outside CI.
fn npm_server(package: &str) -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/node/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    if !script.exists() {
        let message = format!(
            "{} is missing — run `npm ci --prefix tests/node` (scripts/test does)",
            script.display()
        );
        assert!(
            !["CI", "DSH_REQUIRE_NODE"]
                .iter()
                .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty())),
            "{message}"
        );
        eprintln!("skipped: {message}");
        return None;
    }
    let node = std::env::var("DSH_NODE").unwrap_or_else(|_| "node".to_owned());
    Some(format!("{node} {}", script.display()))
}

/// The two imported servers' `--mcp` flags (everything as s1, the filesystem over `root` as
/// s2), or `None` when they are missing outside CI.
fn imports(root: &Path) -> Option<Vec<String>> {
    let everything = npm_server("server-everything")?;
    let filesystem = npm_server("server-filesystem")?;
    Some(vec![
        "--mcp".to_owned(),
        everything,
        "--mcp".to_owned(),
        format!("{filesystem} {}", root.display()),
    ])
}

/// A directory holding `notes.txt` (canonical: the filesystem server compares real paths).
fn notes() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    (dir, root)
}

/// rmcp's client (`handler`) of the server at `url`, at 2026-07-28.
async fn connect<C: rmcp::ClientHandler>(url: &str, handler: C) -> RunningService<RoleClient, C> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    handler
        .serve_with_lifecycle(transport, current())
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A gateway over both servers, serving `root`, and its client.
struct Gateway<C: rmcp::ClientHandler = ()> {
    _dir: tempfile::TempDir,
    root: PathBuf,
    server: http::Server,
    client: RunningService<RoleClient, C>,
    /// What the client lists.
    tools: Vec<rmcp::model::Tool>,
}

impl Gateway {
    /// `mcp serve --http 127.0.0.1:0 <flags> --mcp everything --mcp filesystem`, or `None`
    /// when the servers are missing outside CI.
    async fn start(flags: &[&str]) -> Option<Self> {
        Self::start_with(flags, ()).await
    }
}

impl<C: rmcp::ClientHandler> Gateway<C> {
    /// [`Gateway::start`] with the client's `handler`.
    async fn start_with(flags: &[&str], handler: C) -> Option<Self> {
        let (dir, root) = notes();
        let imports = imports(&root)?;
        let mut all = flags.to_vec();
        all.extend(imports.iter().map(String::as_str));
        let server = http::Server::start(&root, &all, None);
        let client = connect(&server.url, handler).await;
        let tools = client.list_all_tools().await.unwrap();
        Some(Self {
            _dir: dir,
            root,
            server,
            client,
            tools,
        })
    }

    fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| &*t.name).collect()
    }

    fn stop(self) {
        drop(self.client);
        self.server.stop();
    }
}

/// A `tools/call` of `name` with `arguments`.
fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap())
}

/// A `run_code` call of `program`.
fn run_code(program: &str) -> CallToolRequestParams {
    call(
        "run_code",
        json!({"code": program, "description": "Run a program"}),
    )
}

/// The program: one tool of each server, both results returned.
const PROGRAM: &str = r#"
const echoed = await tools.mcp__s1__echo({ message: "hello gateway" });
const read = await tools.mcp__s2__read_text_file({ path: `${ROOT}/notes.txt` });
const text = (r: { content: JsonValue[] }) => (r.content[0] as { text: string }).text;
return { echoed: text(echoed), read: text(read) };
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_runs_one_program_over_two_imported_servers() {
    let Some(gateway) = Gateway::start(&["--mode", "code"]).await else {
        return;
    };
    assert_eq!(gateway.names(), ["run_code"]);
    // The description: the tool's own, the code-only rule, then the SDK of every tool (the
    // example tools' and both servers').
    let description = gateway.tools[0].description.as_deref().unwrap_or_default();
    let opening =
        format!("{RUN_CODE_DESCRIPTION}\n\n{CODE_ONLY_TEXT}\n\n## Writing code for run_code\n\n");
    assert!(description.starts_with(&opening), "{description}");
    for declaration in [
        "\n// Echoes back the input string\nmcp__s1__echo: {\n// Message to echo\nmessage: string;\n} & JsonObject;\n",
        "\nmcp__s2__read_text_file: ToolArgsMap[\"mcp__s2__read_file\"];\n",
        "\nread_file: {\n",
    ] {
        assert!(
            description.contains(declaration),
            "{declaration} in {description}"
        );
    }

    let code = format!("const ROOT = {};\n{PROGRAM}", json!(gateway.root));
    let result = gateway.client.call_tool(run_code(&code)).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let value = result.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(
        value["result"],
        json!({"echoed": "Echo: hello gateway", "read": "alpha\nbeta\n"}),
        "{value}"
    );
    // A tool the gateway does not list is the protocol's unknown tool.
    let direct = call("mcp__s1__echo", json!({"message": "x"}));
    let refused = gateway.client.call_tool(direct).await.unwrap_err();
    assert!(
        refused.to_string().contains("unknown tool: mcp__s1__echo"),
        "{refused}"
    );
    gateway.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_lists_the_tools_and_run_code() {
    let Some(gateway) = Gateway::start(&["--mode", "both"]).await else {
        return;
    };
    let names = gateway.names();
    assert_eq!(names.last(), Some(&"run_code"), "{names:?}");
    for name in ["read_file", "mcp__s1__echo", "mcp__s2__read_text_file"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    // Both: a listed tool is called directly too.
    let direct = call("mcp__s1__echo", json!({"message": "x"}));
    let result = gateway.client.call_tool(direct).await.unwrap();
    assert_eq!(text(&result), "Echo: x");
    gateway.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_set_is_listed_as_tool_search_and_run_code() {
    let Some(gateway) = Gateway::start(&["--mode", "code", "--defer-beyond", "3"]).await else {
        return;
    };
    assert_eq!(gateway.names(), ["tool_search", "run_code"]);
    // A program finds a deferred tool of a server and calls it.
    let program = "const [hit] = await tools.$search(\"echo back the input string\");\n\
                   const echoed = await tools[hit.name]({ message: \"found\" });\n\
                   return [hit.name, (echoed.content[0] as { text: string }).text];";
    let result = gateway.client.call_tool(run_code(program)).await.unwrap();
    let value = result.structured_content.clone().unwrap_or(Value::Null);
    assert_eq!(
        value["result"],
        json!(["mcp__s1__echo", "Echo: found"]),
        "{value}"
    );
    gateway.stop();
}

/// Over streamable HTTP: a program calls a server's tool and a command that asks; the user
/// approves through the input-required result and the run resumes: the command ran once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_programs_approval_is_an_input_required_result() {
    let user = User {
        approve: true,
        asked: std::sync::Arc::default(),
    };
    let Some(gateway) = Gateway::start_with(&["--mode", "code"], user.clone()).await else {
        return;
    };
    let program = "const echoed = await tools.mcp__s1__echo({ message: \"before\" });\n\
                   await tools.bash({ command: \"echo one >> log.txt\", description: \"Append\" });\n\
                   return (echoed.content[0] as { text: string }).text;";
    let result = gateway.client.call_tool(run_code(program)).await.unwrap();
    assert_eq!(text(&result), "Echo: before");
    assert_eq!(*user.asked.lock().unwrap(), [ASKED[0]]);
    let log = std::fs::read_to_string(gateway.root.join("log.txt")).unwrap();
    assert_eq!(log, "one\n");
    gateway.stop();
}

#[test]
fn code_mode_flags_without_a_code_mode_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) =
        support::dsh_tools(dir.path(), &["mcp", "serve", "--language", "python"], "");
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        "dsh-tools: --language: programs run only with --mode code or --mode both\n"
    );
    let (code, _, stderr) =
        support::dsh_tools(dir.path(), &["mcp", "serve", "--defer-beyond", "3"], "");
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        "dsh-tools: --defer-beyond: tools are deferred only with --mode code or --mode both\n"
    );
}

/// The client's user: answers each elicitation with `approve` and remembers the question.
#[derive(Clone)]
struct User {
    approve: bool,
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl rmcp::ClientHandler for User {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let capabilities = json!({"elicitation": {"form": {}}});
        rmcp::model::ClientConfig::new(
            serde_json::from_value(capabilities).unwrap(),
            rmcp::model::Implementation::new("user", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        if let rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({"approve": self.approve})),
        )
    }
}

/// A `run_code` program that writes a file, served in code mode over stdio in `language` to
/// a 2025-11-25 client (`initialize`) whose user answers `approve`: what the user was asked,
/// the program's text, and whether the file was written.
async fn program_writes(
    language: &str,
    program: &str,
    approve: bool,
) -> (Vec<String>, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    let lifecycle = ClientLifecycleMode::Initialize;
    let (client, user, _child) = code_server(dir.path(), language, &[], approve, lifecycle).await;
    let result = client.call_tool(run_code(program)).await.unwrap();
    drop(client);
    let written = dir.path().join("out.txt").exists();
    let asked = user.asked.lock().unwrap().clone();
    (asked, text(&result), written)
}

const QUESTION: &str = "Allow the tool \"write_file\" to run (out.txt)? It asks because it can \
                        change files or run commands.";

#[tokio::test]
async fn an_older_client_approves_a_programs_call_while_the_run_waits() {
    // (language, program, the program's answer when the user says no)
    let programs = [
        (
            "typescript",
            "try { await tools.write_file({path: \"out.txt\", content: \"x\"}); return \"wrote\"; } \
             catch (e) { return (e as ToolCallError).message; }",
            "the user rejected tool \"write_file\"",
        ),
        (
            "python",
            "try:\n    await tools.write_file({\"path\": \"out.txt\", \"content\": \"x\"})\n    return \"wrote\"\nexcept ToolCallError as e:\n    return str(e)",
            "write_file: the user rejected tool \"write_file\"",
        ),
    ];
    for (language, program, refused) in programs {
        let (asked, answer, written) = program_writes(language, program, true).await;
        assert_eq!(asked, [QUESTION], "{language}");
        assert_eq!(answer, "wrote", "{language}");
        assert!(written, "{language}");
        let (asked, answer, written) = program_writes(language, program, false).await;
        assert_eq!(asked, [QUESTION], "{language}");
        assert_eq!(answer, refused, "{language}");
        assert!(!written, "{language}: the user said no");
    }
}

/// `dsh-tools mcp serve --mode code --language <language> [extra]` over stdio, and rmcp's
/// client of it (`lifecycle`: 2026-07-28 or `initialize`) whose user answers `approve` (kept
/// alive with the child).
async fn code_server(
    dir: &Path,
    language: &str,
    extra: &[&str],
    approve: bool,
    lifecycle: ClientLifecycleMode,
) -> (
    RunningService<RoleClient, User>,
    User,
    tokio::process::Child,
) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["mcp", "serve", "--mode", "code", "--language", language])
        .args(extra)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let user = User {
        approve,
        asked: std::sync::Arc::default(),
    };
    let client = user
        .clone()
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .unwrap();
    (client, user, child)
}

/// The 2026-07-28 lifecycle (`server/discover`, stateless requests).
fn current() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// Two shell commands that append to `log.txt` (each asks), in each language.
const APPENDS: [(&str, &str); 2] = [
    (
        "typescript",
        "await tools.bash({command: \"echo one >> log.txt\", description: \"Append one\"});\n\
         await tools.bash({command: \"echo two >> log.txt\", description: \"Append two\"});\n\
         return \"appended\";",
    ),
    (
        "python",
        "await tools.bash({\"command\": \"echo one >> log.txt\", \"description\": \"Append one\"})\n\
         await tools.bash({\"command\": \"echo two >> log.txt\", \"description\": \"Append two\"})\n\
         return \"appended\"",
    ),
];

const ASKED: [&str; 2] = [
    "Allow the tool \"bash\" to run (echo one >> log.txt)? It asks because it can change files or run commands.",
    "Allow the tool \"bash\" to run (echo two >> log.txt)? It asks because it can change files or run commands.",
];

#[tokio::test]
async fn a_2026_client_approves_a_programs_calls_by_input_required_results() {
    for (language, program) in APPENDS {
        let dir = tempfile::tempdir().unwrap();
        let (client, user, _child) = code_server(dir.path(), language, &[], true, current()).await;
        let result = client.call_tool(run_code(program)).await.unwrap();
        assert_eq!(text(&result), "appended", "{language}");
        // Two approvals, two rounds; each command ran exactly once.
        assert_eq!(*user.asked.lock().unwrap(), ASKED, "{language}");
        let log = std::fs::read_to_string(dir.path().join("log.txt")).unwrap();
        assert_eq!(log, "one\ntwo\n", "{language}");
    }
}

#[tokio::test]
async fn a_2026_client_that_says_no_stops_the_programs_call() {
    for (language, program) in APPENDS {
        let dir = tempfile::tempdir().unwrap();
        let (client, user, _child) = code_server(dir.path(), language, &[], false, current()).await;
        let result = client.call_tool(run_code(program)).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{language}");
        assert_eq!(user.asked.lock().unwrap().len(), 1, "{language}");
        // The program sees the refusal (Code Mode's error text, tested with Code Mode).
        let text = text(&result);
        assert!(
            text.starts_with("Error: code run failed (exception): ")
                && text.contains("bash: the user rejected tool \"bash\""),
            "{language}: {text}"
        );
        assert!(!dir.path().join("log.txt").exists(), "{language}");
    }
}

/// The retry of a suspended run by hand: `state` answered with approve.
fn retry(program: &str, state: &str) -> CallToolRequestParams {
    let mut params = run_code(program);
    params.request_state = Some(state.to_owned());
    let answer = json!({"action": "accept", "content": {"approve": true}});
    params.input_responses = Some([("approval".to_owned(), answer)].into());
    params
}

/// The sealed state of a run's first input-required result.
async fn first_state(client: &RunningService<RoleClient, User>, program: &str) -> String {
    match client.call_tool_once(run_code(program)).await.unwrap() {
        rmcp::model::CallToolResponse::InputRequired(asked) => {
            asked.request_state.expect("a request state")
        }
        other => panic!("an input-required result, not {other:?}"),
    }
}

/// The message of a protocol error (-32602), or a panic.
fn refused(outcome: Result<rmcp::model::CallToolResponse, rmcp::service::ServiceError>) -> String {
    match outcome {
        Err(rmcp::service::ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            error.message.to_string()
        }
        other => panic!("a protocol error, not {other:?}"),
    }
}

#[tokio::test]
async fn a_suspended_runs_state_is_refused_when_tampered_or_reused() {
    for (language, program) in APPENDS {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log.txt");
        let (client, _user, _child) = code_server(dir.path(), language, &[], true, current()).await;
        let state = first_state(&client, program).await;
        assert!(!log.exists(), "{language}: nothing ran yet");
        // Tampered: refused, nothing runs.
        let mut altered = state.clone().into_bytes();
        let middle = altered.len() / 2;
        altered[middle] = if altered[middle] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).unwrap();
        let message = refused(client.call_tool_once(retry(program, &altered)).await);
        assert!(
            message.starts_with("requestState does not verify for this call: "),
            "{language}: {message}"
        );
        assert!(!log.exists(), "{language}");
        // Answered: the first command runs, the run asks again.
        let second = client.call_tool_once(retry(program, &state)).await.unwrap();
        assert!(
            matches!(second, rmcp::model::CallToolResponse::InputRequired(_)),
            "{language}: {second:?}"
        );
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "one\n",
            "{language}"
        );
        // Reused: refused, nothing runs again.
        let message = refused(client.call_tool_once(retry(program, &state)).await);
        assert_eq!(
            message, "requestState was already used: ask again by calling without it",
            "{language}"
        );
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "one\n",
            "{language}"
        );
    }
}

#[tokio::test]
async fn a_suspended_runs_expired_state_is_refused() {
    let (language, program) = APPENDS[0];
    let dir = tempfile::tempdir().unwrap();
    let (client, _user, _child) =
        code_server(dir.path(), language, &["--state-ttl", "1"], true, current()).await;
    let state = first_state(&client, program).await;
    // The user answers after the one-second TTL (this waits for the wall clock, not for
    // another task).
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let message = refused(client.call_tool_once(retry(program, &state)).await);
    assert_eq!(
        message,
        "requestState does not verify for this call: request state has expired"
    );
    assert!(!dir.path().join("log.txt").exists(), "nothing ran");
}
