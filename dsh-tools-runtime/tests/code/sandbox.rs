//! The QuickJS sandbox: hostile programs, resource limits, the global surface, binding calls,
//! lossless conversion, the output ledger and error positions.

#![cfg(feature = "code-mode")]
#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

#[path = "sandbox/calls.rs"]
mod calls;
#[path = "sandbox/limits.rs"]
mod limits;
#[path = "sandbox/output.rs"]
mod output;
#[path = "sandbox/pool.rs"]
mod pool;
#[path = "sandbox/recorded.rs"]
mod recorded;
use crate::sandbox_support as support;
#[path = "sandbox/surface.rs"]
mod surface;
