//! Served tasks survive the server (`docs/CONTRACTS.md`, "Tasks over MCP"): `dsh-tools mcp serve
//! --http --store URL` answers a task handle for a `bash` call of a client that declared the
//! tasks extension (MCP 2026-07-28, stateless requests over reqwest); the server is killed
//! (SIGKILL) while one task's command blocks on a FIFO, restarted on the same store, and
//! `tasks/get` then reads the completed task's result as it was and the interrupted one as
//! `failed`, saying it was orphaned. Synchronisation is by FIFOs; the only waiting is polling
//! `tasks/get` (the protocol's way to follow a task).

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `dsh-tools mcp serve --http 127.0.0.1:0 <flags>` in `dir`, its data (and continuation key,
/// which authenticates the store's records) in `data`.
fn start(dir: &Path, data: &Path, flags: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["mcp", "serve", "--http", "127.0.0.1:0"])
        .args(flags)
        .current_dir(dir)
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .env_remove("DSH_TOOLS_CONTINUATION_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url =
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))["url"]
            .as_str()
            .unwrap()
            .to_owned();
    (child, url)
}

/// One stateless request; its result, or its error object.
async fn rpc(url: &str, method: &str, mut params: Value) -> Result<Value, Value> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "restart-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}},
    });
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .unwrap_or_default()
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    let message: Value = serde_json::from_str(&text)
        .ok()
        .or_else(|| {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .find(|m: &Value| m.get("id").is_some())
        })
        .unwrap_or_else(|| panic!("no response in {text:?}"));
    match message.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(message["result"].clone()),
    }
}

/// Calls `bash` with `command`: the task's id.
async fn bash_task(url: &str, command: &str) -> String {
    let handle = rpc(
        url,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": command, "description": "test"}}),
    )
    .await
    .unwrap();
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert_eq!(handle["status"], "working", "{handle}");
    handle["taskId"].as_str().unwrap().to_owned()
}

/// `tasks/get` until the task is over (polling is how a client follows a task).
async fn until_over(url: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let task = rpc(url, "tasks/get", json!({"taskId": id})).await.unwrap();
        if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap()) {
            return task;
        }
        assert!(Instant::now() < deadline, "task {id} never ended: {task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

async fn survives_a_restart(store: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("started"));
    mkfifo(&dir.path().join("release"));
    let flags = ["--yes", "--store", store];
    let (mut server, url) = start(dir.path(), data.path(), &flags);

    let done = bash_task(&url, "echo finished").await;
    let completed = until_over(&url, &done).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let blocked = bash_task(&url, "echo running > started; cat release").await;
    // The command runs: it has written to the FIFO.
    let started = dir.path().join("started");
    let said = tokio::task::spawn_blocking(move || std::fs::read_to_string(started).unwrap())
        .await
        .unwrap();
    assert_eq!(said.trim(), "running");
    let working = rpc(&url, "tasks/get", json!({"taskId": blocked}))
        .await
        .unwrap();
    assert_eq!(working["status"], "working", "{working}");

    server.kill().unwrap(); // SIGKILL
    server.wait().unwrap();
    let (mut server, url) = start(dir.path(), data.path(), &flags);

    let after = rpc(&url, "tasks/get", json!({"taskId": done}))
        .await
        .unwrap();
    assert_eq!(after["status"], "completed", "{after}");
    assert_eq!(after["result"], completed["result"]);
    assert!(
        after["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("finished"),
        "{after}"
    );
    let orphaned = rpc(&url, "tasks/get", json!({"taskId": blocked}))
        .await
        .unwrap();
    assert_eq!(orphaned["status"], "failed", "{orphaned}");
    assert_eq!(orphaned["error"]["code"], -32603, "{orphaned}");
    assert_eq!(
        orphaned["error"]["message"],
        format!(
            "task {blocked} was orphaned: the server that ran it stopped before it finished, \
             so its outcome is unknown (the tool may or may not have taken effect)"
        )
    );
    assert!(orphaned.get("result").is_none(), "{orphaned}");
    // Cancelling an ended task is an empty acknowledgement; it stays failed.
    let ack = rpc(&url, "tasks/cancel", json!({"taskId": blocked}))
        .await
        .unwrap();
    assert_eq!(ack, json!({"resultType": "complete"}));
    let still = rpc(&url, "tasks/get", json!({"taskId": blocked}))
        .await
        .unwrap();
    assert_eq!(still["status"], "failed");
    let unknown = rpc(&url, "tasks/get", json!({"taskId": "task-nope"}))
        .await
        .unwrap_err();
    assert_eq!(unknown["code"], -32602, "{unknown}");
    assert_eq!(
        unknown["message"],
        "unknown task: task-nope (never created here, or expired)"
    );

    let _ = server.kill();
    let _ = server.wait();
    // The killed server's command still waits on the FIFO: release it.
    let release = dir.path().join("release");
    std::thread::spawn(move || std::fs::write(release, "go\n"));
}

/// `tasks/get` until the task waits for input.
async fn until_asked(url: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let task = rpc(url, "tasks/get", json!({"taskId": id})).await.unwrap();
        if task["status"] == "input_required" {
            return task;
        }
        assert_eq!(task["status"], "working", "{task}");
        assert!(Instant::now() < deadline, "task {id} never asked: {task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_asks_its_approval_and_runs_once_or_never() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (_server, url) = start(dir.path(), data.path(), &[]);
    let server = Killed(_server);
    // Approved: the command runs once. Denied: it never runs (the file keeps one line).
    for (approve, expected) in [(true, "approved"), (false, "approved")] {
        let id = bash_task(&url, "echo approved >> ran.txt; echo approved").await;
        let asked = until_asked(&url, &id).await;
        let question = &asked["inputRequests"]["approval"];
        assert_eq!(question["method"], "elicitation/create", "{asked}");
        assert_eq!(
            question["params"]["message"],
            "Allow the tool \"bash\" to run (echo approved >> ran.txt; echo approved)? It asks \
             because it can change files or run commands.",
            "{asked}"
        );
        let answer = json!({"approval": {"action": "accept", "content": {"approve": approve}}});
        let ack = rpc(
            &url,
            "tasks/update",
            json!({"taskId": id, "inputResponses": answer}),
        );
        assert_eq!(ack.await.unwrap(), json!({"resultType": "complete"}));
        let over = until_over(&url, &id).await;
        assert_eq!(over["status"], "completed", "{over}");
        assert_eq!(over["result"]["isError"], !approve, "{over}");
        let ran = std::fs::read_to_string(dir.path().join("ran.txt")).unwrap_or_default();
        assert_eq!(ran.trim(), expected, "approve: {approve}");
    }
    drop(server);
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_survive_a_killed_server_in_a_file_store() {
    let store = tempfile::tempdir().unwrap();
    survives_a_restart(&format!("file:{}", store.path().display())).await;
}

/// The URL of a test server from `var` (scripts/services); a test without one fails under CI.
fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{var} is not set: scripts/test starts the servers (scripts/services)")
        }
        _ => {
            eprintln!("skipped: {var} is not set (eval \"$(scripts/services start)\" sets it)");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_survive_a_killed_server_in_postgres() {
    if let Some(url) = server_url("DSH_TEST_POSTGRES_URL") {
        survives_a_restart(&url).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_survive_a_killed_server_in_redis() {
    if let Some(url) = server_url("DSH_TEST_REDIS_URL") {
        survives_a_restart(&url).await;
    }
}
