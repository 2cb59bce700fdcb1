//! The dispatch-log waterfall (`docs/CONTRACTS.md`, "Dispatch events"): shapes the content a Code
//! Mode sub-call's `tool/code-dispatch` event records, e.g. to spill a large result to durable
//! storage and log a pointer to it instead. A hook kind of Code Mode's own, stored with the
//! pipeline's hooks.

use std::sync::Arc;

use dsh_tools::ContentBlock;
use serde_json::Value;

use dsh_tools_core::hooks::HookKind;

/// Dispatch-log listeners ([`DispatchLogFn`]), registered globally with
/// [`ToolRegistry::add_hook`](dsh_tools_core::ToolRegistry::add_hook) or for a scope's calls (and its
/// descendants') with [`Scope::add_hook`](dsh_tools_core::Scope::add_hook):
/// `registry.add_hook::<DispatchLog>(dispatch_log_fn(…))`.
#[derive(Debug, Clone, Copy)]
pub struct DispatchLog;

impl HookKind for DispatchLog {
    type Hook = DispatchLogFn;
}

/// What a dispatch-log listener knows about the settled sub-call whose log entry it shapes.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct DispatchLogEntry<'a> {
    /// The outermost call id.
    pub root_call_id: &'a str,
    /// The `run_code` call id.
    pub parent_call_id: &'a str,
    /// `<parent>:code:<n>`.
    pub sub_call_id: &'a str,
    /// The tool.
    pub name: &'a str,
    /// The arguments the program passed (the logged copy).
    pub arguments: &'a Value,
    /// Whether the sub-call failed.
    pub is_error: bool,
}

/// A dispatch-log listener: `(entry, content so far) -> content to log`.
///
/// Listeners run in registration order, each receiving what the previous one returned; the first
/// receives the sub-call's settled content. A panicking listener is contained: a warning is
/// traced and the settled content is logged unshaped. Listeners are synchronous and run on the
/// run's commit lane, so a slow one delays the program's next result: hand heavy I/O to a task.
pub type DispatchLogFn =
    Arc<dyn Fn(&DispatchLogEntry<'_>, Vec<ContentBlock>) -> Vec<ContentBlock> + Send + Sync>;

/// Wraps a closure as a dispatch-log listener.
///
/// ```
/// use dsh_tools::ContentBlock;
/// use dsh_tools_runtime::code::dispatch_log_fn;
/// // Keep the durable log small: anything over 1 KiB becomes a one-line summary.
/// let summarise = dispatch_log_fn(|entry, content| {
///     let bytes: usize = content.iter().map(|b| b.as_text().map_or(0, str::len)).sum();
///     if bytes > 1024 {
///         vec![ContentBlock::text(format!("[{} returned {bytes} bytes]", entry.name))]
///     } else {
///         content
///     }
/// });
/// # drop(summarise);
/// ```
pub fn dispatch_log_fn<F>(f: F) -> DispatchLogFn
where
    F: Fn(&DispatchLogEntry<'_>, Vec<ContentBlock>) -> Vec<ContentBlock> + Send + Sync + 'static,
{
    Arc::new(f)
}

/// Runs `chain` over `content`; a panic anywhere yields the settled content unshaped.
pub(crate) fn shape(
    chain: &[DispatchLogFn],
    entry: &DispatchLogEntry<'_>,
    content: &[ContentBlock],
) -> Vec<ContentBlock> {
    if chain.is_empty() {
        return content.to_vec();
    }
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        chain
            .iter()
            .fold(content.to_vec(), |shaped, listener| listener(entry, shaped))
    }));
    run.unwrap_or_else(|_| {
        tracing::warn!(
            sub_call_id = entry.sub_call_id,
            "tools/code-dispatch-log listener panicked; logging the settled content"
        );
        content.to_vec()
    })
}
