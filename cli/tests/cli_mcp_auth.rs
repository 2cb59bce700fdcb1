//! `dsh-tools mcp serve --http` authorization flags (`docs/CONTRACTS.md`, "MCP server
//! authorization"): a bind other than loopback without authorization is refused, and
//! `--auth-issuer` makes the server challenge requests without a token. (Tokens against a real
//! authorization server: dsh-tools-runtime/tests/mcp/mcp_auth.rs.)

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dsh-tools");

/// Runs `dsh-tools mcp serve <args>`, which must exit by itself within 60 s: (status, stderr).
fn refused(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(BIN)
        .args(["mcp", "serve"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (done, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = done.send(text);
    });
    let Ok(stderr) = exited.recv_timeout(Duration::from_secs(60)) else {
        child.kill().unwrap();
        panic!("mcp serve {args:?} kept serving");
    };
    (child.wait().unwrap().code().unwrap(), stderr)
}

/// Starts `dsh-tools mcp serve <args>` and reads the URL it prints.
fn serving(args: &[&str]) -> (Child, String) {
    let mut server = Command::new(BIN)
        .args(["mcp", "serve"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = serde_json::from_str::<Value>(&line).expect(&line)["url"]
        .as_str()
        .unwrap()
        .to_owned();
    (server, url)
}

#[test]
fn a_public_bind_without_authorization_is_refused() {
    let (status, stderr) = refused(&["--http", "0.0.0.0:0"]);
    assert_eq!(status, 2);
    assert_eq!(
        stderr.trim_end(),
        "dsh-tools: mcp serve: refusing to serve 0.0.0.0:0 without authorization: anyone who can \
         reach it could run every tool; pass --auth-issuer URL, or --insecure-no-auth to serve \
         it unprotected"
    );
    // Saying so explicitly serves it.
    let (mut server, url) = serving(&["--http", "0.0.0.0:0", "--insecure-no-auth"]);
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(url.starts_with("http://0.0.0.0:"), "{url}");
    // The flags make sense only together.
    let (status, stderr) = refused(&["--insecure-no-auth"]);
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("--http <ADDR>"), "{stderr}");
    let (status, stderr) = refused(&[
        "--http",
        "127.0.0.1:0",
        "--auth-issuer",
        "http://127.0.0.1:1",
        "--insecure-no-auth",
    ]);
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

#[test]
fn a_bad_scope_map_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("scopes.json");
    std::fs::write(&map, r#"{"read_only": "x"}"#).unwrap();
    let map = map.to_str().unwrap();
    let (status, stderr) = refused(&[
        "--http",
        "127.0.0.1:0",
        "--auth-issuer",
        "http://127.0.0.1:1",
        "--scope-map",
        map,
    ]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "dsh-tools: {map}: invalid scope map: unknown field `read_only`, expected one of"
        )),
        "{stderr}"
    );
}

#[test]
fn auth_issuer_challenges_a_request_without_a_token() {
    // The issuer is contacted only to verify a token; none is sent here.
    let (mut server, url) = serving(&[
        "--http",
        "127.0.0.1:0",
        "--auth-issuer",
        "http://127.0.0.1:1",
    ]);
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let request = |path: &str| {
        let mut stream = TcpStream::connect(&addr).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
             Connection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    };
    let challenge = request("/mcp");
    let metadata = request("/.well-known/oauth-protected-resource/mcp");
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(challenge.starts_with("HTTP/1.1 401 "), "{challenge}");
    assert!(
        challenge.to_ascii_lowercase().contains(&format!(
            "www-authenticate: bearer resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource/mcp\""
        )),
        "{challenge}"
    );
    assert!(metadata.starts_with("HTTP/1.1 200 "), "{metadata}");
    let document: Value = serde_json::from_str(metadata.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(document["resource"], url.as_str());
    assert_eq!(document["authorization_servers"][0], "http://127.0.0.1:1");
}
