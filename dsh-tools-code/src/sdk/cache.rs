//! [`SdkCache`]: the SDK of a tool set assembled from per-tool fragments printed once per tool
//! definition.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use dsh_tools::ToolDefinition;

use super::assemble::assemble;
use super::fragment::Fragment;
use super::ir::Types;
use super::render::{
    SdkTool, ToolView, name_order, sdk_declarations_whole, sdk_tool_from, section,
};
#[cfg(doc)]
use super::render_tools_sdk;

/// Printed SDK fragments, one per tool definition, shared by every tool set rendered through
/// the cache.
///
/// [`SdkCache::render`] gives exactly [`render_tools_sdk`]'s text for the same tools, but prints
/// only the tools it has no live fragment for; the others' `ToolArgsMap`/`ToolOutputMap`
/// members and aliases are reused and assembled (alias numbers are given at assembly, so a
/// fragment fits any tool set). A registry keeps one cache for all its scopes: a new scope, or
/// a change in another scope, never re-prints a tool.
///
/// Fragments are keyed by definition identity ([`ToolDefinition::ptr_eq`]): one lookup per
/// tool, no hashing of schemas; re-registering an equal definition prints it again. A fragment
/// lives as long as some [`RenderedSdk`] holding it (the cache keeps only weak references, and
/// sweeps dead ones as it grows), so fragments die with the tool sets that used them.
///
/// ```
/// use dsh_tools::ToolDefinition;
/// use dsh_tools_runtime::code::sdk::{SdkCache, render_tools_sdk, sdk_tool_from};
///
/// let tool = |name: &str| {
///     ToolDefinition::builder(name)
///         .description("A tool.")
///         .execute(|_, _| async { Ok(serde_json::Value::Null) })
///         .build()
///         .unwrap()
/// };
/// let (a, b) = (tool("a"), tool("b"));
/// let cache = SdkCache::new();
/// let first = cache.render(&[a.clone()]);
/// assert_eq!(cache.printed(), 1);
/// let second = cache.render(&[b.clone(), a.clone()]);
/// assert_eq!(cache.printed(), 2, "`a` is not printed again");
/// let expected = render_tools_sdk(&[sdk_tool_from(&b), sdk_tool_from(&a)]);
/// assert_eq!(second.text(), expected);
/// drop((first, second));
/// assert_eq!(cache.len(), 0, "fragments die with the SDKs holding them");
/// ```
#[derive(Default)]
pub struct SdkCache {
    /// By the address of the definition's parameter schema (stable and unique while the
    /// definition lives, which its fragment ensures).
    fragments: Mutex<Fragments>,
    printed: AtomicU64,
}

#[derive(Default)]
struct Fragments {
    map: HashMap<usize, Weak<Held>>,
    /// The map's size after the last sweep of dead entries.
    swept: usize,
}

/// A fragment and the definition it was printed from (kept alive, so its address stays its own).
struct Held {
    definition: ToolDefinition,
    fragment: Fragment,
}

/// A tool set's SDK section from an [`SdkCache`], holding the fragments it was assembled from
/// (they stay reusable while it lives).
pub struct RenderedSdk {
    text: Arc<str>,
    held: Vec<Arc<Held>>,
}

impl std::fmt::Debug for RenderedSdk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderedSdk")
            .field("bytes", &self.text.len())
            .field("fragments", &self.held.len())
            .finish()
    }
}

impl RenderedSdk {
    /// The `tools:sdk` section.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The `tools:sdk` section, shared.
    pub fn shared_text(&self) -> Arc<str> {
        Arc::clone(&self.text)
    }

    /// Whether `self` and `other` hold the same printed fragment of tool `name` (not just an
    /// equal one).
    pub fn shares_fragment(&self, other: &RenderedSdk, name: &str) -> bool {
        let find = |sdk: &RenderedSdk| {
            sdk.held
                .iter()
                .find(|h| h.definition.name() == name)
                .cloned()
        };
        matches!((find(self), find(other)), (Some(a), Some(b)) if Arc::ptr_eq(&a, &b))
    }
}

impl std::fmt::Debug for SdkCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SdkCache")
            .field("live", &self.len())
            .field("printed", &self.printed())
            .finish()
    }
}

fn key(definition: &ToolDefinition) -> usize {
    std::ptr::from_ref(definition.parameters()) as usize
}

impl SdkCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `tools:sdk` section for `tools` (TypeScript): [`render_tools_sdk`]'s text, printing
    /// only the tools without a live fragment.
    pub fn render(&self, tools: &[ToolDefinition]) -> RenderedSdk {
        let mut held: Vec<Option<Arc<Held>>> = {
            let fragments = self.lock();
            tools
                .iter()
                .map(|def| {
                    let live = fragments.map.get(&key(def)).and_then(Weak::upgrade);
                    live.filter(|h| h.definition.ptr_eq(def))
                })
                .collect()
        };
        let mut printed = Vec::new();
        let mut types: Option<Types<'_>> = None;
        for (slot, def) in held.iter_mut().zip(tools) {
            if slot.is_none() {
                let types = types.get_or_insert_with(Types::for_ast);
                let fragment = Fragment::of_in(ToolView::from(def), types);
                let new = Arc::new(Held {
                    definition: def.clone(),
                    fragment,
                });
                printed.push(Arc::clone(&new));
                *slot = Some(new);
            }
        }
        let held: Vec<Arc<Held>> = held.into_iter().flatten().collect();
        if !printed.is_empty() {
            self.printed
                .fetch_add(printed.len() as u64, Ordering::Relaxed);
            let mut fragments = self.lock();
            for new in &printed {
                fragments
                    .map
                    .insert(key(&new.definition), Arc::downgrade(new));
            }
            fragments.sweep_if_grown();
        }
        let mut sorted: Vec<&Held> = held.iter().map(Arc::as_ref).collect();
        sorted.sort_by(|a, b| name_order(a.definition.name(), b.definition.name()));
        let parts: Vec<&Fragment> = sorted.iter().map(|h| &h.fragment).collect();
        let text = assemble(&parts, true).unwrap_or_else(|| {
            let tools: Vec<SdkTool> = tools.iter().map(sdk_tool_from).collect();
            section(&sdk_declarations_whole(&tools))
        });
        RenderedSdk {
            text: text.into(),
            held,
        }
    }

    /// How many fragments are live (held by some [`RenderedSdk`]).
    pub fn len(&self) -> usize {
        let mut fragments = self.lock();
        fragments.sweep();
        fragments.map.len()
    }

    /// Whether no fragment is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many fragments [`SdkCache::render`] has printed so far (statistics).
    pub fn printed(&self) -> u64 {
        self.printed.load(Ordering::Relaxed)
    }

    /// The map's entries, dead ones included (the bound the sweeps keep).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.lock().map.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Fragments> {
        self.fragments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Fragments {
    /// Drops the entries of dead fragments once the map has doubled since the last sweep, so it
    /// stays within twice the live fragments (plus a constant) at amortised constant cost.
    fn sweep_if_grown(&mut self) {
        if self.map.len() > 2 * self.swept + 64 {
            self.sweep();
        }
    }

    fn sweep(&mut self) {
        self.map.retain(|_, fragment| fragment.strong_count() > 0);
        self.swept = self.map.len();
    }
}
