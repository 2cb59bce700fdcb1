#![doc = include_str!("docs/crate.md")]
#![warn(missing_docs)]

#[cfg(feature = "acp")]
pub mod acp;
pub mod approval;
pub mod batch;
pub mod catalog;
#[cfg(feature = "code-mode")]
pub mod code;
pub mod dialect;
pub mod error;
pub mod hooks;
#[cfg(feature = "mcp")]
pub mod mcp;
mod pipeline;
#[cfg(feature = "provider")]
pub mod provider;
mod registry;
pub mod timeout;

pub use batch::BatchOptions;
pub use dsh_tools;
pub use error::{RUN_CODE_NAME, RegistryError, ToolNotFoundError};
pub use registry::ToolRestriction;
pub use registry::{
    PresentationMode, Registration, RegistryChange, RegistryConfig, Scope, ToolRegistry,
};
pub use timeout::{ToolTimeoutError, timeout_policy};

/// The message of a panic payload (`&str` or `String`; anything else is unprintable).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<unprintable thrown value>".to_owned()
    }
}
