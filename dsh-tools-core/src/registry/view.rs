//! What one scope sees (`docs/CONTRACTS.md`, "The registry", visibility).

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ScopeId;

use super::layer::{RegistryState, scope_layer};

/// The visible tools of a scope and the names it may restrict.
pub(crate) struct View {
    /// Visible definitions, in visible order.
    pub(crate) visible: Vec<ToolDefinition>,
    /// Every inherited name plus the scope's own names (pre-restriction).
    pub(crate) known_names: Vec<String>,
    /// The inherited names (global + ancestors): what `restrict` accepts.
    pub(crate) restrictable: Vec<String>,
}

/// Computes the view of `scope` (`None` = the global view).
pub(crate) fn view(state: &RegistryState, scope: Option<ScopeId>) -> View {
    let chain = scope.map(|s| state.chain(s)).unwrap_or_default();
    let (ancestors, own) = match chain.split_last() {
        Some((own, ancestors)) if Some(*own) == scope => (ancestors, Some(*own)),
        _ => (&chain[..], None),
    };

    // Inherited: global tools, then each ancestor's (farthest first); a nearer same-name entry
    // replaces the value but keeps the first position.
    let mut inherited: Vec<ToolDefinition> =
        state.global.tools.iter().map(|(_, d)| d.clone()).collect();
    for id in ancestors {
        if let Some(layer) = scope_layer(state, *id) {
            for (_, def) in &layer.tools {
                match inherited.iter_mut().find(|d| d.name() == def.name()) {
                    Some(slot) => *slot = def.clone(),
                    None => inherited.push(def.clone()),
                }
            }
        }
    }
    let restrictable: Vec<String> = inherited.iter().map(|d| d.name().to_owned()).collect();
    let mut known_names = restrictable.clone();

    // Visible: inherited entries admitted by every chain layer's restrictions.
    let mut visible: Vec<ToolDefinition> = inherited
        .into_iter()
        .filter(|def| {
            chain
                .iter()
                .filter_map(|id| scope_layer(state, *id))
                .all(|layer| layer.admits(def.name()))
        })
        .collect();

    // Own registrations: unfiltered, shadowing in place or appended.
    if let Some(layer) = own.and_then(|id| scope_layer(state, id)) {
        for (_, def) in &layer.tools {
            match visible.iter_mut().find(|d| d.name() == def.name()) {
                Some(slot) => *slot = def.clone(),
                None => visible.push(def.clone()),
            }
            if !known_names.iter().any(|n| n == def.name()) {
                known_names.push(def.name().to_owned());
            }
        }
    }
    View {
        visible,
        known_names,
        restrictable,
    }
}

/// The visible definition named `name`, without building the whole view.
pub(crate) fn get(
    state: &RegistryState,
    name: &str,
    scope: Option<ScopeId>,
) -> Option<ToolDefinition> {
    let Some(scope) = scope else {
        return state.global.tool(name).cloned();
    };
    let chain = state.chain(scope);
    if let Some(own) = chain.last().filter(|id| **id == scope)
        && let Some(def) = scope_layer(state, *own).and_then(|l| l.tool(name))
    {
        return Some(def.clone());
    }
    let ancestors = match chain.split_last() {
        Some((own, rest)) if *own == scope => rest,
        _ => &chain[..],
    };
    let inherited = ancestors
        .iter()
        .rev()
        .find_map(|id| scope_layer(state, *id).and_then(|l| l.tool(name)))
        .or_else(|| state.global.tool(name))?;
    let admitted = chain
        .iter()
        .filter_map(|id| scope_layer(state, *id))
        .all(|layer| layer.admits(name));
    admitted.then(|| inherited.clone())
}
