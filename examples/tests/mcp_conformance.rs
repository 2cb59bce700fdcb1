//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/node/package.json`) against both ends of our MCP: every server scenario against our
//! streamable-HTTP server, every client scenario against our MCP client (the example
//! `mcp_conformance`, which serves the example tools plus the tools the scenarios call).
//!
//! Each scenario's outcome is asserted: the ones listed as passing must pass, and the ones that
//! do not apply to dsh-tools (README, "MCP conformance") must be exactly the rest, so a
//! regression fails here and so does a stale list. The suite runs on Node.js 20 through
//! `tests/node/conformance/node20.mjs` (one missing `fs` export, used only by a command we do
//! not run). Without the suite (`npm ci --prefix tests/node`) the tests are skipped, and fail
//! under `CI` or `DSH_REQUIRE_NODE=1`.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// How a scenario must come out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Every check succeeds (no failure, no warning).
    Pass,
    /// Exactly these checks fail or warn, for the reason given; the others succeed.
    Partly(&'static [&'static str], &'static str),
    /// It tests something dsh-tools does not do (the reason): it does not pass.
    NotApplicable(&'static str),
}

use Expect::{NotApplicable, Partly, Pass};

const NO_RESOURCES: Expect = NotApplicable("resources: the server serves tools only");
const NO_PROMPTS: Expect = NotApplicable("prompts: the server serves tools only");
const NO_SAMPLING: Expect = NotApplicable("sampling: tools do not ask the client's model");
const NO_ELICITATION: Expect =
    NotApplicable("elicitation: approval is the host's, tools do not ask the user");
const NO_OAUTH: Expect = NotApplicable("authorization: the client has no OAuth flow");

/// Every server scenario of the pinned suite (`--suite all`), and how it comes out.
const SERVER: &[(&str, Expect)] = &[
    ("server-initialize", Pass),
    ("ping", Pass),
    ("tools-list", Pass),
    ("tools-call-simple-text", Pass),
    ("tools-call-image", Pass),
    ("tools-call-audio", Pass),
    ("tools-call-embedded-resource", Pass),
    ("tools-call-mixed-content", Pass),
    ("tools-call-error", Pass),
    ("tools-call-with-progress", Pass),
    ("server-sse-multiple-streams", Pass),
    ("dns-rebinding-protection", Pass),
    (
        "json-schema-2020-12",
        Partly(
            &["json-schema-2020-12-$schema"],
            "listings drop the root $schema: our schemas have one dialect, 2020-12, which is \
             MCP's default without one ($defs and additionalProperties are kept)",
        ),
    ),
    (
        "server-sse-polling",
        Partly(
            &["server-sse-disconnect-resume"],
            "the server sends the priming event and the retry field, but does not close a \
             call's stream early, so there is no response to resume after a reconnect (a warning)",
        ),
    ),
    (
        "logging-set-level",
        NotApplicable("logging: the server declares no logging capability"),
    ),
    (
        "tools-call-with-logging",
        NotApplicable("logging: tools report through their results and progress"),
    ),
    (
        "completion-complete",
        NotApplicable("completion: there are no prompts or resource templates to complete"),
    ),
    ("tools-call-sampling", NO_SAMPLING),
    ("tools-call-elicitation", NO_ELICITATION),
    ("elicitation-sep1034-defaults", NO_ELICITATION),
    ("elicitation-sep1330-enums", NO_ELICITATION),
    ("resources-list", NO_RESOURCES),
    ("resources-read-text", NO_RESOURCES),
    ("resources-read-binary", NO_RESOURCES),
    ("resources-templates-read", NO_RESOURCES),
    ("resources-subscribe", NO_RESOURCES),
    ("resources-unsubscribe", NO_RESOURCES),
    ("prompts-list", NO_PROMPTS),
    ("prompts-get-simple", NO_PROMPTS),
    ("prompts-get-with-args", NO_PROMPTS),
    ("prompts-get-embedded-resource", NO_PROMPTS),
    ("prompts-get-with-image", NO_PROMPTS),
];

/// Every client scenario of the pinned suite, and how it comes out.
const CLIENT: &[(&str, Expect)] = &[
    ("initialize", Pass),
    ("tools_call", Pass),
    ("sse-retry", Pass),
    // A draft scenario that checks the client does *not* authorize against a resource other
    // than the server: it passes because the client starts no OAuth flow at all.
    ("auth/resource-mismatch", Pass),
    ("elicitation-sep1034-client-defaults", NO_ELICITATION),
    ("auth/metadata-default", NO_OAUTH),
    ("auth/metadata-var1", NO_OAUTH),
    ("auth/metadata-var2", NO_OAUTH),
    ("auth/metadata-var3", NO_OAUTH),
    ("auth/basic-cimd", NO_OAUTH),
    ("auth/scope-from-www-authenticate", NO_OAUTH),
    ("auth/scope-from-scopes-supported", NO_OAUTH),
    ("auth/scope-omitted-when-undefined", NO_OAUTH),
    ("auth/scope-step-up", NO_OAUTH),
    ("auth/scope-retry-limit", NO_OAUTH),
    ("auth/token-endpoint-auth-basic", NO_OAUTH),
    ("auth/token-endpoint-auth-post", NO_OAUTH),
    ("auth/token-endpoint-auth-none", NO_OAUTH),
    ("auth/pre-registration", NO_OAUTH),
    ("auth/2025-03-26-oauth-metadata-backcompat", NO_OAUTH),
    ("auth/2025-03-26-oauth-endpoint-fallback", NO_OAUTH),
    ("auth/offline-access-scope", NO_OAUTH),
    ("auth/offline-access-not-supported", NO_OAUTH),
    ("auth/client-credentials-jwt", NO_OAUTH),
    ("auth/client-credentials-basic", NO_OAUTH),
    ("auth/cross-app-access-complete-flow", NO_OAUTH),
];

/// The suite's command line: `node --import <node20.mjs> <bundle>`.
struct Suite {
    node: String,
    shim: PathBuf,
    bundle: PathBuf,
}

impl Suite {
    /// The installed suite, or `None` (reason printed) when it is missing outside CI.
    fn find() -> Option<Self> {
        let node_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/node");
        let bundle = std::env::var_os("DSH_MCP_CONFORMANCE")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                node_dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
            });
        if !bundle.exists() {
            let message = format!(
                "the MCP conformance suite is missing at {} — run `npm ci --prefix tests/node` \
                 (scripts/test does)",
                bundle.display()
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
        Some(Self {
            node: std::env::var("DSH_NODE").unwrap_or_else(|_| "node".to_owned()),
            shim: node_dir.join("conformance/node20.mjs"),
            bundle,
        })
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.node);
        command
            .arg("--import")
            .arg(&self.shim)
            .arg(&self.bundle)
            .args(args)
            .stdin(Stdio::null());
        command
    }

    /// The scenario names `conformance list --server` (or `--client`) prints.
    fn list(&self, side: &str) -> Vec<String> {
        let output = self
            .command(&["list", &format!("--{side}")])
            .output()
            .expect("node runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.trim().strip_prefix("- "))
            .filter_map(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
            .collect()
    }

    /// Runs `conformance <args> --output-dir <dir>` and adds every scenario's checks it wrote
    /// to `into`, by scenario name (the suite names server results `server-<scenario>-…`).
    fn run(&self, args: &[&str], into: &mut BTreeMap<String, Vec<Value>>) {
        let prefix = if args.first() == Some(&"server") {
            "server-"
        } else {
            ""
        };
        let results = tempfile::tempdir().unwrap();
        let output = self
            .command(args)
            .arg("--output-dir")
            .arg(results.path())
            .output()
            .expect("node runs");
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        // Exit status 1 means some check failed, which the scenarios that do not apply do;
        // anything else (a crash, a refused option) is the suite not running at all.
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "the suite did not run: {}\n{log}",
            output.status
        );
        let before = into.len();
        collect_checks(results.path(), results.path(), prefix, into);
        assert!(into.len() > before, "no results were written:\n{log}");
    }
}

/// Every `<prefix><scenario>-<timestamp>/checks.json` under `dir` (scenario names may hold `/`).
fn collect_checks(root: &Path, dir: &Path, prefix: &str, into: &mut BTreeMap<String, Vec<Value>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let checks = path.join("checks.json");
        if !checks.exists() {
            collect_checks(root, &path, prefix, into);
            continue;
        }
        let relative = path.strip_prefix(root).unwrap().to_str().unwrap();
        // `<scenario>-2026-12-02T02-52-43-635Z`: the timestamp is ISO 8601 with `:` and `.`
        // replaced by `-` (24 characters).
        let scenario = &relative[..relative.len() - "-2026-12-02T02-52-43-635Z".len()];
        let scenario = scenario.strip_prefix(prefix).unwrap_or(scenario);
        let parsed: Value = serde_json::from_str(&std::fs::read_to_string(&checks).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", checks.display()));
        let Value::Array(list) = parsed else {
            panic!("{}: not an array of checks", checks.display())
        };
        into.insert(scenario.to_owned(), list);
    }
}

/// The failures and warnings of a scenario, one line each.
fn problems(checks: &[Value]) -> String {
    checks
        .iter()
        .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
        .map(|c| {
            format!(
                "    {} {}: {}",
                c["status"].as_str().unwrap_or_default(),
                c["id"].as_str().unwrap_or_default(),
                c["errorMessage"]
                    .as_str()
                    .or(c["description"].as_str())
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The ids of the checks that failed or warned.
fn not_succeeded(checks: &[Value]) -> BTreeSet<&str> {
    checks
        .iter()
        .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
        .filter_map(|c| c["id"].as_str())
        .collect()
}

/// Compares the outcomes with `expected` (which must name every scenario the suite `listed`).
/// Returns how many scenarios pass, pass in part, and do not apply.
fn assert_outcomes(
    side: &str,
    listed: &[String],
    outcomes: &BTreeMap<String, Vec<Value>>,
    expected: &[(&str, Expect)],
) -> (usize, usize, usize) {
    let expected: BTreeMap<&str, Expect> = expected.iter().copied().collect();
    let mut wrong = Vec::new();
    for scenario in listed {
        if !expected.contains_key(scenario.as_str()) {
            wrong.push(format!(
                "{scenario}: a scenario this test does not know; add it to the {side} table"
            ));
        }
    }
    for (scenario, expect) in &expected {
        let Some(checks) = outcomes.get(*scenario) else {
            wrong.push(format!(
                "{scenario}: expected, but the suite did not run it"
            ));
            continue;
        };
        let succeeded = checks.iter().any(|c| c["status"] == "SUCCESS");
        let short = not_succeeded(checks);
        match expect {
            Pass if !(succeeded && short.is_empty()) => wrong.push(format!(
                "{scenario}: expected to pass, did not:\n{}",
                problems(checks)
            )),
            Partly(failing, reason) if !succeeded || short != failing.iter().copied().collect() => {
                wrong.push(format!(
                    "{scenario}: expected exactly {failing:?} to fail ({reason}), got:\n{}",
                    problems(checks)
                ));
            }
            NotApplicable(reason) if succeeded && short.is_empty() => wrong.push(format!(
                "{scenario}: listed as not applicable ({reason}) but passes; move it to Pass \
                 and update the README"
            )),
            _ => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "{side} conformance differs from what is expected:\n{}",
        wrong.join("\n")
    );
    let count = |wanted: fn(&Expect) -> bool| expected.values().filter(|e| wanted(e)).count();
    (
        count(|e| *e == Pass),
        count(|e| matches!(e, Partly(..))),
        count(|e| matches!(e, NotApplicable(_))),
    )
}

/// The example serving over HTTP; killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Self {
        let mut child = Command::new(support::example_binary("mcp_conformance"))
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the example starts");
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        let url = url.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
        Self { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_server_passes_every_server_scenario_that_applies() {
    let Some(suite) = Suite::find() else { return };
    let server = Server::start();
    let mut outcomes = BTreeMap::new();
    suite.run(
        &["server", "--url", &server.url, "--suite", "all"],
        &mut outcomes,
    );
    let listed = suite.list("server");
    let (pass, partly, not_applicable) = assert_outcomes("server", &listed, &outcomes, SERVER);
    eprintln!(
        "server scenarios: {pass} pass, {partly} pass in part, {not_applicable} do not apply"
    );
}

#[test]
fn the_client_passes_every_client_scenario_that_applies() {
    let Some(suite) = Suite::find() else { return };
    let client = support::example_binary("mcp_conformance");
    let command = format!("{} client", client.display());
    let listed = suite.list("client");
    let mut outcomes = BTreeMap::new();
    // One scenario at a time: `sse-retry` times the client's reconnection, which a loaded
    // machine (the suite's own parallel mode) would make late.
    for scenario in &listed {
        suite.run(
            &["client", "--command", &command, "--scenario", scenario],
            &mut outcomes,
        );
    }
    let (pass, partly, not_applicable) = assert_outcomes("client", &listed, &outcomes, CLIENT);
    eprintln!(
        "client scenarios: {pass} pass, {partly} pass in part, {not_applicable} do not apply"
    );
}
