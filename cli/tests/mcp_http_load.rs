//! `dsh-tools mcp serve --http` under load and abuse, on loopback (issue 35): keep-alive
//! latency, many clients, a pathological pattern, a session flood, slow connections, the
//! file-descriptor limit. Every loop is bounded in count and time; figures are printed and
//! recorded (`record_figure`).

#[path = "support/http.rs"]
mod http;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use dsh_tools_tests::record_figure;
use serde_json::json;

use http::{Server, Session, client, percentile, post};

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "fn main() {}\n").unwrap();
    dir
}

/// Sequential `tools/list` calls on one kept-alive connection: latencies, sorted.
async fn sequential(session: &mut Session, calls: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        session.request("tools/list", json!({})).await.unwrap();
        took.push(started.elapsed());
    }
    took.sort();
    took
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_keep_alive_calls_take_under_2_ms_at_p50() {
    let dir = workdir();
    let server = Server::start(dir.path(), &[], None);
    let client = client();
    let mut session = Session::open(&client, &server.url).await.unwrap();
    sequential(&mut session, 20).await;
    let started = Instant::now();
    let took = sequential(&mut session, 300).await;
    let rate = 300.0 / started.elapsed().as_secs_f64();
    let (p50, p99) = (percentile(&took, 50), percentile(&took, 99));
    record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "mcp-http-sequential",
        &format!(
            "mcp http: 1 client keep-alive tools/list: {rate:.0} calls/s, p50 {p50:?}, p99 {p99:?}"
        ),
    );
    assert!(p50 <= Duration::from_millis(2), "p50 {p50:?} (p99 {p99:?})");
}

/// `clients` sessions, each making `calls` `tools/call list_dir` calls: (calls/s, sorted
/// latencies, errors).
async fn concurrent(url: &str, clients: usize, calls: usize) -> (f64, Vec<Duration>, Vec<String>) {
    let client = client();
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(Session::open(&client, url).await.unwrap());
    }
    let started = Instant::now();
    let tasks: Vec<_> = sessions
        .into_iter()
        .map(|mut session| {
            tokio::spawn(async move {
                let mut took = Vec::new();
                let mut errors = Vec::new();
                for _ in 0..calls {
                    let t = Instant::now();
                    match session
                        .request(
                            "tools/call",
                            json!({"name": "list_dir", "arguments": {"path": "."}}),
                        )
                        .await
                    {
                        Ok(result) if result["isError"] != true => took.push(t.elapsed()),
                        Ok(result) => errors.push(result.to_string()),
                        Err(error) => errors.push(error),
                    }
                }
                (took, errors)
            })
        })
        .collect();
    let mut took = Vec::new();
    let mut errors = Vec::new();
    for task in tasks {
        let (t, e) = task.await.unwrap();
        took.extend(t);
        errors.extend(e);
    }
    let rate = (clients * calls) as f64 / started.elapsed().as_secs_f64();
    took.sort();
    (rate, took, errors)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_clients_make_200_calls_each_without_an_error() {
    let dir = workdir();
    let server = Server::start(dir.path(), &[], None);
    let mut figures = Vec::new();
    for (clients, calls) in [(1, 400), (16, 100), (64, 200)] {
        let (rate, took, errors) = concurrent(&server.url, clients, calls).await;
        assert!(
            errors.is_empty(),
            "{} errors, first: {}",
            errors.len(),
            errors[0]
        );
        assert_eq!(took.len(), clients * calls);
        figures.push(format!(
            "{clients} clients: {rate:.0} calls/s, p50 {:?}, p99 {:?}",
            percentile(&took, 50),
            percentile(&took, 99)
        ));
    }
    record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "mcp-http-clients",
        &format!("mcp http tools/call list_dir: {}", figures.join("; ")),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_4_mb_glob_pattern_is_refused_without_stalling_anyone() {
    let dir = workdir();
    let server = Server::start(dir.path(), &[], None);
    let client = client();
    let mut bystander = Session::open(&client, &server.url).await.unwrap();
    let mut attacker = Session::open(&client, &server.url).await.unwrap();
    let pattern = "*a".repeat(2_000_000);
    let attack = tokio::spawn(async move {
        attacker
            .request(
                "tools/call",
                json!({"name": "glob", "arguments": {"pattern": pattern}}),
            )
            .await
    });
    // What a normal client sees meanwhile (bounded: at least 20 calls, then until the attack
    // is answered, at most 30 s).
    let mut worst = Duration::ZERO;
    let mut calls = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while (calls < 20 || !attack.is_finished()) && Instant::now() < deadline {
        let started = Instant::now();
        bystander.request("tools/list", json!({})).await.unwrap();
        worst = worst.max(started.elapsed());
        calls += 1;
    }
    let result = attack.await.unwrap().unwrap();
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["content"][0]["text"],
        "Error: invalid arguments: \"pattern\" must be at most 1024 characters long"
    );
    // The longest pattern allowed compiles (or is refused) without a panic.
    let longest = bystander
        .request(
            "tools/call",
            json!({"name": "glob", "arguments": {"pattern": "*a".repeat(512)}}),
        )
        .await
        .unwrap();
    assert_eq!(longest["isError"], false, "{longest}");
    let stderr = server.stop();
    record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "mcp-http-pattern",
        &format!(
            "mcp http: a 4 MB glob pattern: {calls} bystander calls meanwhile, worst {worst:?}; \
             {} bytes on stderr",
            stderr.len()
        ),
    );
    assert!(worst < Duration::from_millis(100), "worst {worst:?}");
    assert!(
        !stderr.contains("*a*a*a"),
        "{}",
        &stderr[..stderr.len().min(500)]
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_20000_sessions_stays_under_the_cap() {
    let dir = workdir();
    let server = Server::start(dir.path(), &[], None);
    let client = client();
    let before = server.rss_kib();
    let flood = |n: usize| {
        let client = client.clone();
        let url = server.url.clone();
        tokio::spawn(async move {
            let mut statuses = Vec::new();
            for _ in 0..n {
                let response = post(&client, &url, None, http::initialize_body())
                    .await
                    .unwrap();
                let retry = response.headers().get("retry-after").cloned();
                statuses.push((response.status().as_u16(), retry));
                let _ = response.bytes().await;
            }
            statuses
        })
    };
    let started = Instant::now();
    let tasks: Vec<_> = (0..32).map(|_| flood(625)).collect();
    let (mut opened, mut refused) = (0, 0);
    for task in tasks {
        for (status, retry) in task.await.unwrap() {
            match status {
                200 => opened += 1,
                503 => {
                    assert_eq!(retry.unwrap(), "1");
                    refused += 1;
                }
                other => panic!("status {other}"),
            }
        }
    }
    let took = started.elapsed();
    let after = server.rss_kib();
    record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "mcp-http-sessions",
        &format!(
            "mcp http: 20,000 initialize in {took:?}: {opened} opened, {refused} refused (503); \
             RSS {} MiB before, {} MiB after",
            before / 1024,
            after / 1024
        ),
    );
    assert_eq!(opened + refused, 20_000);
    // The default cap is 1,024; sessions never initialized end after 10 s, so a flood
    // shorter than that opens at most the cap (a longer one a cap per 10 s).
    let windows = 1 + took.as_secs() as usize / 10;
    assert!(opened <= 1024 * windows, "{opened} opened in {took:?}");
    assert!(refused > 0);
    assert!(
        after < before + 200 * 1024,
        "RSS {before} KiB -> {after} KiB"
    );
}

/// Reads until the server closes the connection (or `within` passes): whether it closed, and
/// what it sent.
fn closed_within(stream: &mut TcpStream, within: Duration) -> (bool, String) {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (false, String::from_utf8_lossy(&seen).into_owned());
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return (true, String::from_utf8_lossy(&seen).into_owned()),
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return (true, String::from_utf8_lossy(&seen).into_owned());
            }
            Err(_) => return (false, String::from_utf8_lossy(&seen).into_owned()),
        }
    }
}

#[test]
fn two_hundred_slow_connections_are_closed_by_the_timeouts() {
    let dir = workdir();
    let server = Server::start(
        dir.path(),
        &["--header-timeout", "0.5", "--body-timeout", "0.5"],
        None,
    );
    let host = &server.addr;
    let head = |length: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    let started = Instant::now();
    let mut streams = Vec::new();
    for i in 0..200 {
        let mut stream = TcpStream::connect(host).unwrap();
        match i % 4 {
            // Idle: connects and says nothing.
            0 => {}
            // Slow header: half a request head.
            1 => stream.write_all(b"POST /mcp HTTP/1.1\r\nHost: ").unwrap(),
            // Slow body: a head announcing 100 bytes, then 10.
            2 => stream
                .write_all(format!("{}{{\"jsonrpc\"", head(100)).as_bytes())
                .unwrap(),
            // Idle after a complete request (kept alive).
            _ => {
                let body = http::initialize_body();
                stream
                    .write_all(format!("{}{body}", head(body.len())).as_bytes())
                    .unwrap();
            }
        }
        streams.push((i % 4, stream));
    }
    let mut open = Vec::new();
    for (kind, stream) in &mut streams {
        let (closed, seen) = closed_within(stream, Duration::from_secs(10));
        if !closed {
            open.push(*kind);
        }
        if *kind == 2 {
            assert!(seen.starts_with("HTTP/1.1 408"), "{seen:?}");
        }
    }
    let took = started.elapsed();
    record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "mcp-http-slow",
        &format!(
            "mcp http: 200 slow connections (0.5 s timeouts): {} closed in {took:?}",
            200 - open.len()
        ),
    );
    assert!(open.is_empty(), "still open (kinds): {open:?}");
}

#[test]
fn connections_past_the_cap_get_503() {
    let dir = workdir();
    let server = Server::start(dir.path(), &["--max-connections", "4"], None);
    let held: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    let mut extra = TcpStream::connect(&server.addr).unwrap();
    let (closed, seen) = closed_within(&mut extra, Duration::from_secs(5));
    assert!(closed);
    assert!(
        seen.starts_with("HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n"),
        "{seen:?}"
    );
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_fd_limit_new_clients_are_served_and_the_cpu_stays_idle() {
    let dir = workdir();
    // 64 descriptors: the runtime and the binary hold some; 100 idle connections exhaust the
    // rest, and the 1 s header timeout frees them.
    let server = Server::start(dir.path(), &["--header-timeout", "1"], Some(64));
    let held: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    let ticks = server.cpu_ticks();
    std::thread::sleep(Duration::from_millis(500));
    let busy = server.cpu_ticks() - ticks;
    // A new client is served once the idle connections time out (or refused): never left
    // hanging.
    let client = client();
    let started = Instant::now();
    let outcome =
        tokio::time::timeout(Duration::from_secs(10), Session::open(&client, &server.url)).await;
    let took = started.elapsed();
    drop(held);
    record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "mcp-http-fds",
        &format!(
            "mcp http at 64 fds: {busy} CPU ticks in 0.5 s while exhausted; a new client \
             answered in {took:?}"
        ),
    );
    assert!(busy <= 10, "{busy} ticks of CPU in 0.5 s at the fd limit");
    assert!(outcome.is_ok(), "a new client hung for 10 s");
}
