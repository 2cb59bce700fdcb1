//! The authorization server of the MCP authorization tests: the npm `oidc-provider` package,
//! started on loopback by `tests/node/oidc/issuer.mjs` (installed by
//! `npm ci --prefix tests/node`). Missing Node.js or the package fails the test when `CI` or
//! `DSH_REQUIRE_NODE` is set, and skips it with a printed reason otherwise.

#![allow(dead_code, reason = "each test file uses a part of the helpers")]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running `oidc-provider` (killed on drop).
pub(crate) struct Issuer {
    pub(crate) url: String,
    http: reqwest::Client,
    _child: Child,
}

fn harness() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/node")
}

impl Issuer {
    /// Starts the authorization server, or `None` (skipped) outside CI when Node.js or the
    /// package is missing.
    pub(crate) async fn start() -> Option<Self> {
        let node = std::env::var_os("DSH_NODE").unwrap_or_else(|| "node".into());
        let installed = harness()
            .join("node_modules/oidc-provider/package.json")
            .exists();
        let spawned = installed
            .then(|| {
                Command::new(&node)
                    .arg(harness().join("oidc/issuer.mjs"))
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .kill_on_drop(true)
                    .spawn()
                    .ok()
            })
            .flatten();
        let Some(mut child) = spawned else {
            let message = "Node.js or the npm package oidc-provider is missing — run `npm ci \
                           --prefix tests/node` at the workspace root (scripts/test does)";
            assert!(!dsh_tools_tests::node_required(), "{message}");
            eprintln!("skipped: {message}");
            return None;
        };
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .await
            .unwrap();
        let started: Value = serde_json::from_str(&line).expect("the issuer's first line");
        Some(Self {
            url: started["issuer"].as_str().unwrap().to_owned(),
            http: reqwest::Client::new(),
            _child: child,
        })
    }

    /// An access token from the token endpoint: client_credentials for `client` (secret
    /// `<client>-secret`), `scope`, audience `resource` (RFC 8707).
    pub(crate) async fn token(&self, client: &str, scope: &str, resource: &str) -> String {
        let form = format!(
            "grant_type=client_credentials&scope={}&resource={}",
            form_encode(scope),
            form_encode(resource)
        );
        let response = self
            .http
            .post(format!("{}/token", self.url))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!(status, 200, "token endpoint: {body}");
        body["access_token"].as_str().unwrap().to_owned()
    }

    /// A JWS over exactly these header and claims, signed with the issuer's own key (see
    /// `issuer.mjs` for `alg` `none` and `HS256`).
    pub(crate) async fn sign(&self, header: Value, claims: Value) -> String {
        let body = json!({"header": header, "claims": claims}).to_string();
        let response = self
            .http
            .post(format!("{}/test/sign", self.url))
            .body(body)
            .send()
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        body["token"].as_str().unwrap().to_owned()
    }

    /// How often the JWKS has been fetched.
    pub(crate) async fn jwks_fetches(&self) -> u64 {
        let response = self
            .http
            .get(format!("{}/test/stats", self.url))
            .send()
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        body["jwks_fetches"].as_u64().unwrap()
    }
}

/// `application/x-www-form-urlencoded` of one value.
fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            b' ' => "+".into(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// The claims of a JWT (unverified: the test reads what it was given).
pub(crate) fn claims_of(token: &str) -> Value {
    jsonwebtoken::dangerous::insecure_decode_claims(token).unwrap()
}
