//! Code Mode: the bridge, the QuickJS sandbox, the TypeScript and Python SDKs, the type strip, tsc,
//! the Monty runtime, wrong programs, durable runs.
//!
//! One test binary for this area (each former `tests/<name>.rs` is a module of it): the
//! runtime is linked once for all of them. Tests that measure the process (leaks, resident
//! set, CPU time, a global allocator or tracing subscriber) keep binaries of their own:
//! `tests/leaks.rs`, `tests/durable_leaks.rs`, `tests/load.rs`, `tests/otel.rs`,
//! `tests/hostile.rs`, `tests/python_hostile.rs`; so does `tests/readme.rs`, whose README
//! text shows a type's path in the crate `readme` (`readme::Todos`).
#![cfg(feature = "code-mode")]

#[cfg(feature = "python")]
#[path = "../python/support.rs"]
#[allow(
    dead_code,
    missing_docs,
    unreachable_pub,
    reason = "the Python tests' helpers; each module uses a few"
)]
mod python_support;
#[path = "../sandbox/support.rs"]
#[allow(
    dead_code,
    missing_docs,
    unreachable_pub,
    reason = "the sandbox tests' helpers; each module uses a few"
)]
mod sandbox_support;
#[path = "../support/mod.rs"]
mod support;

mod cancellation;
mod code_bridge;
mod code_mode;
mod durable;
mod python_code_mode;
mod python_runtime;
mod python_sdk;
mod sandbox;
mod sdk;
mod sdk_fragments;
mod strip_differential;
mod strip_regressions;
mod tsc;
mod wrong_programs_py;
mod wrong_programs_ts;
