//! Host state handed to tool bodies by type.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Shared host state, keyed by type. The host fills it once; tool bodies read it through a
/// [`State<T>`] parameter (the model never sees it).
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools::exec::StateMap;
/// let mut states = StateMap::default();
/// states.insert(Arc::new(String::from("/workspace")));
/// assert_eq!(states.get::<String>().unwrap().as_str(), "/workspace");
/// assert!(states.get::<u32>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct StateMap {
    entries: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl StateMap {
    /// Stores `value` as the state of type `T` (replacing an earlier one).
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.entries.insert(TypeId::of::<T>(), value);
    }

    /// The state of type `T`, if the host provided one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let entry = self.entries.get(&TypeId::of::<T>())?;
        Arc::clone(entry).downcast::<T>().ok()
    }

    /// Whether no state is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the state a tool [needs](StateNeed) is stored.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dsh_tools::exec::{StateMap, StateNeed};
    /// let mut states = StateMap::default();
    /// states.insert(Arc::new(7_u32));
    /// assert!(states.provides(&StateNeed::of::<u32>()));
    /// assert!(!states.provides(&StateNeed::of::<String>()));
    /// ```
    pub fn provides(&self, need: &StateNeed) -> bool {
        self.entries.contains_key(&need.type_id)
    }
}

/// Host state a tool's body reads (a `State<T>` parameter of a `#[tool]`, or
/// [`ToolBuilder::needs_state`](crate::ToolBuilder::needs_state)): the registry checks that it
/// is provided before the tool reaches a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateNeed {
    type_id: TypeId,
    type_name: &'static str,
}

impl StateNeed {
    /// The need of state of type `T`.
    pub fn of<T: Send + Sync + 'static>() -> Self {
        Self {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        }
    }

    /// The type's name, as `std::any::type_name` gives it.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateMap")
            .field("entries", &self.entries.len())
            .finish()
    }
}

/// A tool parameter that receives host state of type `T` instead of a model-written argument.
///
/// ```
/// use dsh_tools::exec::State;
/// let root = State(std::sync::Arc::new(String::from("/srv")));
/// assert_eq!(root.len(), 4); // derefs to the state
/// ```
#[derive(Debug)]
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
