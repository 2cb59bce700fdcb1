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
//! `ARCHITECTURE.md` walks through a third extension written in a crate of its own.

pub use crate::error::panic_message;
pub use crate::pipeline::{CallInput, CallerCancel, LaneEvent, LaneIntake, OnStart, SharedStr};
pub use crate::registry::{Lane, ReservedName, ScopeExtension, WeakRegistry};
