//! The registry and the execution pipeline for native tools: stages, hooks, scopes, batches,
//! timeouts, budgets, policies, progress, callers, deferred tools, search and token counts.
//!
//! One test binary for this area (each former `tests/<name>.rs` is a module of it): the
//! runtime is linked once for all of them. Tests that measure the process (leaks, resident
//! set, CPU time, a global allocator or tracing subscriber) keep binaries of their own:
//! `tests/leaks.rs`, `tests/durable_leaks.rs`, `tests/load.rs`, `tests/otel.rs`,
//! `tests/hostile.rs`, `tests/python_hostile.rs`; so does `tests/readme.rs`, whose README
//! text shows a type's path in the crate `readme` (`readme::Todos`).

#[cfg(feature = "mcp")]
#[path = "../mcp_support/mod.rs"]
mod mcp_support;
#[path = "../support/mod.rs"]
mod support;

mod batch;
mod batch_outcomes;
mod budgets;
mod callers;
mod deferred;
mod hooks;
mod malformed_args;
mod pipeline;
mod policy_matrix;
mod progress;
mod registry;
mod scopes;
mod search;
mod timeout;
mod tokens;
