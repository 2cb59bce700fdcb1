//! The MCP bridge: importing servers' tools, serving a registry, approval and elicitation,
//! authorization, names, protocol conformance, real peers.
//!
//! One test binary for this area (each former `tests/<name>.rs` is a module of it): the
//! runtime is linked once for all of them. Tests that measure the process (leaks, resident
//! set, CPU time, a global allocator or tracing subscriber) keep binaries of their own:
//! `tests/leaks.rs`, `tests/durable_leaks.rs`, `tests/load.rs`, `tests/otel.rs`,
//! `tests/hostile.rs`, `tests/python_hostile.rs`; so does `tests/readme.rs`, whose README
//! text shows a type's path in the crate `readme` (`readme::Todos`).
#![cfg(feature = "mcp")]

#[path = "../mcp_auth_support/mod.rs"]
mod mcp_auth_support;
#[path = "../mcp_support/mod.rs"]
mod mcp_support;

mod mcp_approval;
mod mcp_ask;
mod mcp_auth;
mod mcp_headers;
mod mcp_hostile_peers;
mod mcp_import;
mod mcp_import_asks;
mod mcp_import_expiry;
mod mcp_names;
mod mcp_peers;
mod mcp_protocol;
mod mcp_serve;
