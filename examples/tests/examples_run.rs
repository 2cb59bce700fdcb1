//! The runnable examples under `examples/examples/` (the README lists their `cargo run` lines):
//! each one runs to completion and prints what its docs say it shows.

mod support;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;

use support::example_binary;

/// Runs the built example `name` and returns its stdout.
fn run_example(name: &str) -> String {
    run_example_with(name, &[])
}

/// Runs the built example `name` with `args` and returns its stdout.
fn run_example_with(name: &str, args: &[&str]) -> String {
    let binary = example_binary(name);
    let output = Command::new(&binary)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    assert!(
        output.status.success(),
        "{name} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn minimal_tool_validates_then_runs() {
    let out = run_example("minimal_tool");
    assert!(out.contains("value: 42\n"), "{out}");
    assert!(
        out.contains(
            "model sees: Error: invalid arguments: missing required property \"b\"; \"a\" must be an integer"
        ),
        "{out}"
    );
}

#[test]
fn stateful_tool_set_shares_its_state() {
    let out = run_example("stateful_tool_set");
    assert!(out.starts_with("add_note: 1\nadd_note: 2\n"), "{out}");
    assert!(
        out.contains("add_note: Error: a note needs some text"),
        "{out}"
    );
    assert!(
        out.contains(r#"list_notes: ["buy milk","call Ana"]"#),
        "{out}"
    );
}

#[test]
fn guarded_approval_asks_then_guards() {
    let out = run_example("guarded_approval");
    assert!(
        out.contains("tmp/cache.bin: deleted tmp/cache.bin"),
        "{out}"
    );
    assert!(
        out.contains("src/main.rs: Error: the user rejected tool \"delete_file\""),
        "{out}"
    );
    assert!(
        out.contains("(delete /etc/passwd): approved\n/etc/passwd: Error: /etc/passwd is outside the workspace"),
        "{out}"
    );
}

#[test]
fn code_mode_host_runs_a_program_against_the_sdk() {
    let out = run_example("code_mode_host");
    assert!(
        out.contains("--- prompt section tools:sdk (order 150) ---"),
        "{out}"
    );
    assert!(out.contains("\npopulation: number;"), "{out}");
    assert!(out.contains("--- wire tools: [\"run_code\"]"), "{out}");
    assert!(
        out.contains("Atlantis: no data for Atlantis\n{\n  \"total\": 0.97\n}"),
        "{out}"
    );
    assert_eq!(
        out.matches("\"type\":\"tool/code-dispatch\"").count(),
        4,
        "{out}"
    );
}

/// One JSON-RPC exchange with a stdio MCP server: writes `message`, then reads lines until the
/// response with the same id (skipping notifications and log lines).
fn exchange(
    stdin: &mut impl std::io::Write,
    stdout: &mut impl std::io::BufRead,
    message: serde_json::Value,
) -> serde_json::Value {
    writeln!(stdin, "{message}").expect("the server reads stdin");
    stdin.flush().expect("flushed");
    loop {
        let mut line = String::new();
        let read = stdout
            .read_line(&mut line)
            .expect("the server writes stdout");
        assert!(
            read > 0,
            "the server closed stdout before answering {message}"
        );
        let answer: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if answer.get("id") == message.get("id") {
            return answer;
        }
    }
}

#[test]
fn mcp_server_answers_a_stdio_client() {
    use serde_json::json;
    let binary = example_binary("mcp_server");
    let mut child = Command::new(&binary)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut stderr = child.stderr.take().unwrap();

    let init = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "examples-test", "version": "0"}}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "text-tools", "{init}");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();

    let listed = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let tools = listed["result"]["tools"].as_array().expect("a tool list");
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["replace_word", "text_stats"], "{listed}");
    let stats = tools.iter().find(|t| t["name"] == "text_stats").unwrap();
    assert_eq!(stats["annotations"]["readOnlyHint"], true, "{stats}");
    assert_eq!(
        stats["outputSchema"]["required"],
        json!(["words", "lines", "chars"]),
        "{stats}"
    );

    let call = |id: u64, name: &str, arguments: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})
    };
    let counted = exchange(
        &mut stdin,
        &mut stdout,
        call(3, "text_stats", json!({"text": "one two\nthree\n"})),
    );
    assert_eq!(
        counted["result"]["structuredContent"],
        json!({"words": 3, "lines": 2, "chars": 14}),
        "{counted}"
    );
    let invalid = exchange(
        &mut stdin,
        &mut stdout,
        call(4, "replace_word", json!({"text": 5, "from": "a"})),
    );
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    let message = invalid["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("missing required property \"to\"")
            && message.contains("\"text\" must be a string"),
        "{message}"
    );
    let guarded = exchange(
        &mut stdin,
        &mut stdout,
        call(
            5,
            "replace_word",
            json!({"text": "my secret", "from": "secret", "to": "password"}),
        ),
    );
    assert_eq!(guarded["result"]["isError"], true, "{guarded}");
    assert!(
        guarded["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("replacements must not contain passwords"),
        "{guarded}"
    );

    drop(stdin);
    let status = child.wait().expect("the server exits");
    assert!(
        status.success(),
        "the server exits cleanly when the client hangs up: {status}"
    );
    // The tool's stray `println!` went to stderr: every stdout line above parsed as a frame.
    let mut logged = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut logged).expect("stderr is read");
    assert!(
        logged.contains("text_stats: counting 14 bytes"),
        "the stray print reaches stderr: {logged}"
    );
}

#[test]
fn mcp_import_code_mode_runs_a_program_against_the_filesystem_server() {
    let script = std::env::var_os("DSH_MCP_SERVER_FILESYSTEM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
                "../tests/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
            )
        });
    if !script.exists() {
        let message = format!(
            "the filesystem MCP server is missing at {} — run `npm ci --prefix tests/node` \
             (scripts/test does)",
            script.display()
        );
        assert!(
            !["CI", "DSH_REQUIRE_NODE"]
                .iter()
                .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty())),
            "{message}"
        );
        eprintln!("skipped: {message}");
        return;
    }
    let node = std::env::var("DSH_NODE").unwrap_or_else(|_| "node".to_owned());
    let out = run_example_with("mcp_import_code_mode", &[&node, script.to_str().unwrap()]);
    assert!(out.contains("mcp__fs__read_text_file"), "{out}");
    // The server's `read_text_file` takes exactly the arguments of its deprecated `read_file`,
    // so the compact SDK writes its type as a reference to that earlier member.
    assert!(
        out.contains("sdk:\nmcp__fs__read_text_file: ToolArgsMap[\"mcp__fs__read_file\"];\n"),
        "{out}"
    );
    assert!(out.contains("outside the root: "), "{out}");
    assert!(
        out.contains(
            "\"files\": 3,\n  \"lines\": {\n    \"groceries.txt\": 3,\n    \"ideas.txt\": 1,\n    \"todo.txt\": 2\n  }"
        ),
        "{out}"
    );
}

#[test]
fn agent_loop_runs_the_scripted_model_to_its_answer() {
    let out = run_example("agent_loop");
    assert_eq!(
        out,
        "step 1: multiply({\"a\":17,\"b\":23}) -> 391\n\
         step 1: multiply({\"a\":2,\"b\":2}) -> 4\n\
         step 2: add({\"a\":391,\"b\":4}) -> 395\n\
         answer: 17 * 23 + 4 = 395.\n"
    );
}
