//! Durable Code Mode: suspension at an `ask`, resumption by deterministic replay, the
//! continuation's authentication and single use, divergence, and the static check; Python runs suspended by snapshot.

#![cfg(feature = "code-mode")]
#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

#[path = "durable/continuations.rs"]
mod continuations;
#[path = "durable/precheck.rs"]
mod precheck;
#[cfg(feature = "python")]
#[path = "durable/python.rs"]
mod python;
#[path = "durable/replay.rs"]
mod replay;
#[path = "durable/scopes.rs"]
mod scopes;
#[cfg(feature = "store")]
#[path = "durable/stored.rs"]
mod stored;
#[path = "durable/support.rs"]
mod support;
#[path = "durable/suspend.rs"]
mod suspend;
