//! A remote MCP server behind a real authorization server, through the CLI: our own
//! `dsh-tools mcp serve --http --auth-issuer` protected by the npm `oidc-provider`
//! (`tests/node/oidc/issuer.mjs`), `mcp login URL` by the client-credentials grant, `--mcp URL`
//! listing and calling its tools (the call needs a scope the first token lacks: step-up), the
//! token file's mode, no token in any output, `mcp logout URL`. (The authorization-code flow
//! is the conformance suite's, `examples/tests/mcp_conformance.rs`.) Missing Node.js or the
//! package fails the test when `CI` or `DSH_REQUIRE_NODE` is set, and skips it otherwise.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dsh-tools");

/// A child killed when the test unwinds.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` and reads its first line of stdout.
fn first_line(mut command: Command) -> (Running, String) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Running(child), line)
}

/// The authorization server, or `None` (skipped) outside CI when it is not installed.
fn issuer() -> Option<(Running, String)> {
    let node_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/node");
    if !node_dir
        .join("node_modules/oidc-provider/package.json")
        .exists()
    {
        let message = "the npm package oidc-provider is missing — run `npm ci --prefix \
                       tests/node` at the workspace root (scripts/test does)";
        assert!(!dsh_tools_tests::node_required(), "{message}");
        eprintln!("skipped: {message}");
        return None;
    }
    let mut command = Command::new(std::env::var("DSH_NODE").unwrap_or_else(|_| "node".into()));
    command.arg(node_dir.join("oidc/issuer.mjs"));
    let (child, line) = first_line(command);
    let started: Value = serde_json::from_str(&line).expect(&line);
    Some((child, started["issuer"].as_str().unwrap().to_owned()))
}

/// Runs `dsh-tools <args>` with the data directory `data` and the `poster` client.
fn dsh_tools(data: &Path, cwd: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("DSH_TOOLS_DATA_DIR", data)
        .env("DSH_TOOLS_MCP_CLIENT_ID", "poster")
        .env("DSH_TOOLS_MCP_CLIENT_SECRET", "poster-secret")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The access tokens the token file holds.
fn tokens(file: &PathBuf) -> Vec<String> {
    let entries: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    entries["servers"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|c| c["token_response"]["access_token"].as_str())
        .map(str::to_owned)
        .collect()
}

#[test]
fn login_import_call_and_logout_against_oidc_provider() {
    let Some((_issuer, issuer)) = issuer() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "remote hello\n").unwrap();
    let mut serve = Command::new(BIN);
    serve
        .args([
            "mcp",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &issuer,
        ])
        .current_dir(work.path());
    let (_server, line) = first_line(serve);
    let url = serde_json::from_str::<Value>(&line).expect(&line)["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("mcp-tokens.json");
    let mut outputs = Vec::new();

    let login = dsh_tools(data.path(), work.path(), &["mcp", "login", &url], "");
    outputs.push(text(&login));
    assert!(login.status.success(), "{}", text(&login));
    let document: Value = serde_json::from_slice(&login.stdout).unwrap();
    assert_eq!(document["url"], url.as_str());
    assert_eq!(document["authorized"], true);
    assert!(document["tools"].as_u64().unwrap() > 5, "{document}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file's mode is {mode:o}");
    }
    let mut seen = tokens(&file);
    assert_eq!(seen.len(), 1);

    let list = dsh_tools(data.path(), work.path(), &["list", "--mcp", &url], "");
    outputs.push(text(&list));
    assert!(list.status.success(), "{}", text(&list));
    let listed: Value = serde_json::from_slice(&list.stdout).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"mcp__s1__read_file"), "{names:?}");

    // The login's token has no scope; the call needs tools:read (403 insufficient_scope), so
    // the client asks for a token with it and retries.
    let call = dsh_tools(
        data.path(),
        work.path(),
        &["call", "mcp__s1__read_file", "--mcp", &url],
        r#"{"path": "notes.txt"}"#,
    );
    outputs.push(text(&call));
    assert!(call.status.success(), "{}", text(&call));
    let result: Value = serde_json::from_slice(&call.stdout).unwrap();
    assert_eq!(result["isError"], false, "{result}");
    assert!(result.to_string().contains("remote hello"), "{result}");
    seen.extend(tokens(&file));
    assert_ne!(seen[0], seen[1], "the step-up stored a new token");

    let logout = dsh_tools(data.path(), work.path(), &["mcp", "logout", &url], "");
    outputs.push(text(&logout));
    let document: Value = serde_json::from_slice(&logout.stdout).unwrap();
    assert_eq!(document["forgotten"], true);
    assert!(tokens(&file).is_empty());
    let again = dsh_tools(data.path(), work.path(), &["mcp", "logout", &url], "");
    let document: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(document["forgotten"], false);

    for output in &outputs {
        for token in &seen {
            assert!(
                !output.contains(token.as_str()),
                "a token was printed:\n{output}"
            );
        }
        assert!(
            !output.contains("poster-secret"),
            "the secret was printed:\n{output}"
        );
    }
}

#[test]
fn mcp_header_needs_exactly_one_remote_server() {
    let data = tempfile::tempdir().unwrap();
    let output = dsh_tools(
        data.path(),
        data.path(),
        &["list", "--mcp-header", "X-Api-Key: k3y"],
        "",
    );
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim_end(),
        "dsh-tools: --mcp-header: goes to exactly one remote --mcp URL server; 0 given"
    );
}
