//! A `dsh-tools mcp serve --http` child process and a streamable-HTTP MCP client (reqwest, the
//! HTTP client rmcp's own client transport uses) for the load and abuse tests.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// The server binary: this build's, or `DSH_TOOLS_LOAD_BIN` (to measure another build, e.g.
/// the figures before a change, with the tests that pass no limit flags).
fn bin() -> String {
    std::env::var("DSH_TOOLS_LOAD_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_dsh-tools").to_owned())
}

/// A running `dsh-tools mcp serve --http 127.0.0.1:0`; killed on drop.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>/mcp`.
    pub(crate) url: String,
    /// `127.0.0.1:<port>`.
    pub(crate) addr: String,
}

impl Server {
    /// Starts the server in `dir` with extra arguments, optionally under `ulimit -n <fds>`.
    pub(crate) fn start(dir: &Path, extra: &[&str], fds: Option<u32>) -> Self {
        let mut args = vec!["mcp", "serve", "--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut command = match fds {
            None => Command::new(bin()),
            Some(fds) => {
                let mut command = Command::new("prlimit");
                command
                    .arg(format!("--nofile={fds}:{fds}"))
                    .arg("--")
                    .arg(bin());
                command
            }
        };
        let mut child = command
            .args(&args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
            ["url"]
            .as_str()
            .unwrap()
            .to_owned();
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        Self { child, url, addr }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The resident set size in KiB (`VmRSS`).
    pub(crate) fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// User + system CPU time so far, in clock ticks (1/100 s on Linux).
    pub(crate) fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // Fields after the `(comm)`, which may contain spaces.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after.split(' ').collect();
        // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after `comm`.
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    /// Stops the server and returns everything it wrote on stderr.
    pub(crate) fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        stderr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A keep-alive HTTP client (no proxy).
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// The JSON-RPC messages of an SSE (or JSON) response body.
pub(crate) fn messages(body: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

/// The `initialize` request body.
pub(crate) fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "load", "version": "0"}}})
    .to_string()
}

/// One MCP session over a shared client.
pub(crate) struct Session {
    client: reqwest::Client,
    url: String,
    id: String,
    next: u64,
}

impl Session {
    /// `initialize` and `notifications/initialized`.
    pub(crate) async fn open(client: &reqwest::Client, url: &str) -> Result<Self, String> {
        let response = post(client, url, None, initialize_body()).await?;
        let id = response
            .headers()
            .get("mcp-session-id")
            .ok_or_else(|| format!("no session id ({})", response.status()))?
            .to_str()
            .unwrap()
            .to_owned();
        response.text().await.map_err(|e| e.to_string())?;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let ack = post(client, url, Some(&id), initialized.to_string()).await?;
        if ack.status() != 202 {
            return Err(format!("initialized: {}", ack.status()));
        }
        Ok(Self {
            client: client.clone(),
            url: url.to_owned(),
            id,
            next: 1,
        })
    }

    /// A request; its JSON-RPC `result` (or the error as `Err`).
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = post(&self.client, &self.url, Some(&self.id), body.to_string()).await?;
        let status = response.status();
        let text = response.text().await.map_err(|e| e.to_string())?;
        if status != 200 {
            return Err(format!("{status}: {text}"));
        }
        messages(&text)
            .into_iter()
            .find(|m| m["id"] == id)
            .and_then(|m| m.get("result").cloned())
            .ok_or_else(|| format!("no result in {text:?}"))
    }
}

/// A POST to the MCP endpoint with the headers the transport asks for.
pub(crate) async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: String,
) -> Result<reqwest::Response, String> {
    let mut request = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body);
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    request.send().await.map_err(|e| e.to_string())
}

/// The `p`-th percentile (0–100) of sorted samples.
pub(crate) fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}
