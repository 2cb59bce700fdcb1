//! The extension API: what an extension of the registry — Code Mode, or a host's own — builds
//! on. Code Mode (`dsh_tools_runtime::code`) uses nothing of the runtime but this module and the
//! other public items.
//!
//! - **Scope extensions** ([`ScopeExtension`], [`ReservedName`]): extra tools per presentation
//!   mode, tools hidden from direct calls, names no stored tool may take, the prompt of a
//!   non-native scope, scope disposal. A host installs one with
//!   [`ToolRegistry::install_extension`](crate::ToolRegistry::install_extension) and finds it
//!   again with [`ToolRegistry::extension`](crate::ToolRegistry::extension); an extension's own
//!   tools hold the registry weakly ([`WeakRegistry`]).
//! - **The lane** ([`Lane`], [`LaneIntake`], [`CallInput`], [`LaneEvent`], [`OnStart`]): calls
//!   submitted one by one while something runs (a Code Mode program's sub-calls), each through
//!   the whole pipeline, dispatches overlapping, commits in submission order.
//! - **Hook kinds**: the pipeline runs [`ApprovalWait`](crate::hooks::ApprovalWait),
//!   [`ApprovalGate`](crate::hooks::ApprovalGate) and
//!   [`RunApproval`](crate::hooks::RunApproval) hooks for extensions that take part in
//!   approval; an extension defines kinds of its own by implementing
//!   [`HookKind`](crate::hooks::HookKind) and runs them where it chooses, reading the hooks that
//!   apply to a call with [`ToolRegistry::applicable_hooks`](crate::ToolRegistry::applicable_hooks).
//!
//! A third extension, in a crate of its own (`ARCHITECTURE.md` walks through it): every scope
//! gets a `now` tool, the host's clock.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::{SystemTime, UNIX_EPOCH};
//!
//! use dsh_tools::ToolDefinition;
//! use dsh_tools::exec::ToolExecutionInput;
//! use dsh_tools_runtime::extension::{ReservedName, ScopeExtension};
//! use dsh_tools_runtime::{PresentationMode, RegistryError, ToolRegistry};
//! use serde_json::json;
//!
//! /// Gives every scope a `now` tool.
//! pub struct Clock {
//!     now: ToolDefinition,
//! }
//!
//! impl Clock {
//!     /// Installs the clock on `registry`.
//!     pub fn install(registry: &ToolRegistry) -> Result<(), RegistryError> {
//!         let now = ToolDefinition::builder("now")
//!             .description("The current UNIX time, in seconds.")
//!             .execute(|_, _| async {
//!                 let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
//!                 Ok(json!(since.as_secs()))
//!             })
//!             .build()?;
//!         registry.install_extension(Arc::new(Clock { now }))
//!     }
//! }
//!
//! impl ScopeExtension for Clock {
//!     fn reserved(&self) -> &[ReservedName] {
//!         &[ReservedName { name: "now", holder: "clock extension" }]
//!     }
//!     fn tool(&self, name: &str, _: PresentationMode) -> Option<ToolDefinition> {
//!         (name == "now").then(|| self.now.clone())
//!     }
//!     fn tools(&self, _: PresentationMode) -> Vec<ToolDefinition> {
//!         vec![self.now.clone()]
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! // The host, in one line:
//! let registry = ToolRegistry::new();
//! Clock::install(&registry).unwrap();
//! assert_eq!(registry.prompt(None).unwrap().known_names, ["now"]);
//! let result = registry.execute(ToolExecutionInput::new("c1", "now", json!({}))).await;
//! assert!(result.value().is_some_and(|v| v.as_u64().is_some()));
//! // The name is the clock's: no stored tool may take it.
//! assert!(matches!(
//!     registry.register(registry.get("now", None).unwrap()),
//!     Err(RegistryError::ReservedName { name: "now", .. })
//! ));
//! # });
//! ```

mod suspend;

pub use crate::error::panic_message;
pub use crate::pipeline::{CallInput, CallerCancel, LaneEvent, LaneIntake, OnStart, SharedStr};
pub use crate::registry::{Lane, ReservedName, ScopeExtension, WeakRegistry};
pub use suspend::{Suspendable, SuspendableCalls, SuspendedCall};
