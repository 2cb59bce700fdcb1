//! `dsh-tools mcp serve` driven by the real `@modelcontextprotocol/inspector` CLI (stdio and
//! HTTP), and `--mcp` importing a server's tools into `list`, `call`, `sdk` and `run`.
//!
//! The inspector comes from `npm ci --prefix tests/node` (`DSH_MCP_INSPECTOR` overrides the
//! path, `DSH_NODE` the Node.js binary); without it those tests fail under `CI` and are skipped
//! otherwise. The `--mcp` tests import `dsh-tools mcp serve` itself and need no Node.js.

mod support;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use dsh_tools_runtime::mcp::rmcp;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dsh-tools");

/// The `--mcp` value that imports this very binary's `mcp serve`.
fn ourselves() -> String {
    format!("{BIN} mcp serve")
}

/// `node <inspector> --cli <args…>`, or `None` (reason printed) when the inspector is missing
/// outside CI.
fn inspector(args: &[&str], cwd: &Path) -> Option<Value> {
    let script = std::env::var_os("DSH_MCP_INSPECTOR").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/node/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
    });
    let node = std::env::var_os("DSH_NODE").unwrap_or_else(|| "node".into());
    if !script.exists() {
        let message = format!(
            "the MCP inspector is missing at {} — run `npm ci --prefix tests/node` (scripts/test does)",
            script.display()
        );
        if ["CI", "DSH_REQUIRE_NODE"]
            .iter()
            .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
        {
            panic!("{message}");
        }
        eprintln!("skipped: {message}");
        return None;
    }
    let output = Command::new(node)
        .arg(&script)
        .arg("--cli")
        .args(args)
        .current_dir(cwd)
        .env("MCP_CATALOG_PATH", cwd.join("mcp-catalog.json"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let start = stdout
        .find('{')
        .unwrap_or_else(|| panic!("no JSON in {stdout}{stderr}"));
    let answer: Value =
        serde_json::from_str(&stdout[start..]).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    // The inspector exits non-zero exactly when the tool result is an error.
    assert_eq!(
        output.status.success(),
        answer["isError"] != true,
        "{stdout}{stderr}"
    );
    Some(answer)
}

fn notes() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    dir
}

fn tool_names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_inspector_lists_and_calls_mcp_serve_over_stdio() {
    let dir = notes();
    let cwd = dir.path();
    let Some(listed) = inspector(&[BIN, "mcp", "serve", "--method", "tools/list"], cwd) else {
        return;
    };
    let names = tool_names(&listed);
    for name in [
        "bash",
        "edit_file",
        "glob",
        "grep",
        "list_dir",
        "read_file",
        "write_file",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    let read = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    assert!(read["inputSchema"].get("$schema").is_none());

    let args = [
        BIN,
        "mcp",
        "serve",
        "--method",
        "tools/call",
        "--tool-name",
        "read_file",
        "--tool-arg",
        "path=notes.txt",
    ];
    let called = inspector(&args, cwd).unwrap();
    assert_ne!(called["isError"], true, "{called}");
    assert!(
        called["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("alpha"),
        "{called}"
    );
    assert_eq!(called["structuredContent"]["total_lines"], 2, "{called}");

    // A tool that asks for approval is refused on a stdio server: an isError result.
    let args = [
        BIN,
        "mcp",
        "serve",
        "--method",
        "tools/call",
        "--tool-name",
        "write_file",
        "--tool-arg",
        "path=out.txt",
        "content=x",
    ];
    let refused = inspector(&args, cwd).unwrap();
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["content"][0]["text"],
        "Error: tool \"write_file\" requires approval, but no approval channel is available"
    );
    assert!(!cwd.join("out.txt").exists());
}

/// A child process killed (and reaped) when dropped, so a test that fails midway leaves no
/// server behind holding the test's output pipes.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_inspector_lists_mcp_serve_over_http() {
    let dir = notes();
    let mut server = Killed(
        Command::new(BIN)
            .args(["mcp", "serve", "--http", "127.0.0.1:0"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = serde_json::from_str::<Value>(&line).unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let listed = inspector(
        &[&url, "--transport", "http", "--method", "tools/list"],
        dir.path(),
    );
    let called = inspector(
        &[
            &url,
            "--transport",
            "http",
            "--method",
            "tools/call",
            "--tool-name",
            "list_dir",
            "--tool-arg",
            "path=.",
        ],
        dir.path(),
    );
    drop(server);
    let (Some(listed), Some(called)) = (listed, called) else {
        return;
    };
    assert!(tool_names(&listed).iter().any(|n| n == "read_file"));
    assert!(
        called["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("notes.txt"),
        "{called}"
    );
}

#[test]
fn list_and_sdk_include_the_tools_of_mcp_servers() {
    let dir = notes();
    let (code, stdout, stderr) =
        support::dsh_tools(dir.path(), &["list", "--mcp", &ourselves()], "");
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"read_file") && names.contains(&"mcp__s1__read_file"),
        "{names:?}"
    );
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);

    let (code, sdk, stderr) = support::dsh_tools(dir.path(), &["sdk", "--mcp", &ourselves()], "");
    assert_eq!(code, 0, "{stderr}");
    assert!(sdk.contains("mcp__s1__read_file"), "{sdk}");
}

#[test]
fn call_and_run_reach_an_imported_tool() {
    let dir = notes();
    let mcp = ourselves();
    let (code, stdout, stderr) = support::dsh_tools(
        dir.path(),
        &["call", "mcp__s1__read_file", "--mcp", &mcp],
        r#"{"path": "notes.txt"}"#,
    );
    assert_eq!(code, 0, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["value"]["structuredContent"]["total_lines"], 2,
        "{result}"
    );

    let program = "const r = await tools.mcp__s1__read_file({path: \"notes.txt\"});\nreturn r.structuredContent.total_lines;";
    let (code, stdout, stderr) = support::dsh_tools(dir.path(), &["run", "--mcp", &mcp], program);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "2");
}

#[test]
fn a_bad_mcp_flag_is_a_clear_error() {
    let dir = notes();
    let (code, _, stderr) = support::dsh_tools(dir.path(), &["list", "--mcp", "'unclosed"], "");
    assert_eq!(code, 2);
    assert_eq!(stderr, "dsh-tools: --mcp \"'unclosed\": unclosed ' quote\n");
    let (code, _, stderr) =
        support::dsh_tools(dir.path(), &["list", "--mcp", "/nonexistent/server"], "");
    assert_eq!(code, 2);
    assert!(stderr.starts_with("dsh-tools: --mcp \"/nonexistent/server\": mcp-client(s1): cannot start the server process: "), "{stderr}");
}

/// The client's user of the approval tests: answers each elicitation with `approve` and
/// remembers the question.
#[derive(Clone)]
struct User {
    approve: bool,
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl rmcp::ClientHandler for User {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let capabilities = serde_json::json!({"elicitation": {"form": {}}});
        rmcp::model::ClientConfig::new(
            serde_json::from_value(capabilities).unwrap(),
            rmcp::model::Implementation::new("user", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::service::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        if let rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(serde_json::json!({"approve": self.approve})),
        )
    }
}

/// `write_file` through `dsh-tools mcp serve [flags]` (stdio) from a 2026-07-28 client whose
/// user answers `approve`: what the user was asked, and whether the file was written.
async fn write_through_serve(flags: &[&str], approve: bool) -> (Vec<String>, bool) {
    use rmcp::service::ClientServiceExt as _;
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(BIN)
        .args(["mcp", "serve"])
        .args(flags)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let user = User {
        approve,
        asked: std::sync::Arc::default(),
    };
    let lifecycle = rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    let client = user
        .clone()
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .unwrap();
    let arguments = serde_json::json!({"path": "out.txt", "content": "x"});
    let call = rmcp::model::CallToolRequestParams::new("write_file")
        .with_arguments(arguments.as_object().cloned().unwrap());
    client.call_tool(call).await.unwrap();
    drop(client);
    let written = dir.path().join("out.txt").exists();
    let asked = user.asked.lock().unwrap().clone();
    (asked, written)
}

#[tokio::test]
async fn mcp_serve_asks_the_clients_user_before_a_write() {
    let (asked, written) = write_through_serve(&[], true).await;
    assert_eq!(
        asked,
        [
            "Allow the tool \"write_file\" to run (out.txt)? It asks because it can change files \
          or run commands."
        ]
    );
    assert!(written);
    let (asked, written) = write_through_serve(&[], false).await;
    assert_eq!(asked.len(), 1);
    assert!(!written, "the user said no");
    // `--yes` approves without asking anyone.
    let (asked, written) = write_through_serve(&["--yes"], false).await;
    assert!(asked.is_empty());
    assert!(written);
}
