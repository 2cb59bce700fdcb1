//! Provider turns and dialects: tool calls in and results out of the providers' shapes, their
//! official SDKs, the dialects' schema rendering, ACP tool cards, async-openai types.
//!
//! One test binary for this area (each former `tests/<name>.rs` is a module of it): the
//! runtime is linked once for all of them. Tests that measure the process (leaks, resident
//! set, CPU time, a global allocator or tracing subscriber) keep binaries of their own:
//! `tests/leaks.rs`, `tests/durable_leaks.rs`, `tests/load.rs`, `tests/otel.rs`,
//! `tests/hostile.rs`, `tests/python_hostile.rs`; so does `tests/readme.rs`, whose README
//! text shows a type's path in the crate `readme` (`readme::Todos`).

#[cfg(feature = "provider")]
mod kit;

mod acp;
mod async_openai;
mod dialect;
mod provider_sdk;
mod provider_turn;
