//! The bindings' replies waiting for their commits, by lane index.

use std::collections::VecDeque;

use super::Pending;

/// Submitted calls by lane index. Indices are given out in order and each is taken once, so a
/// window from the oldest untaken index is enough: no hashing on the per-call path.
#[derive(Default)]
pub(super) struct Replies {
    /// The lane index of `slots[0]`.
    base: usize,
    slots: VecDeque<Option<Pending>>,
}

impl Replies {
    /// Adds the reply of the call with lane index `index` (the next one: every earlier index
    /// was added before).
    pub(super) fn insert(&mut self, index: usize, pending: Pending) {
        debug_assert_eq!(
            index,
            self.base + self.slots.len(),
            "lane indices come in order"
        );
        self.slots.push_back(Some(pending));
    }

    /// Takes the reply of lane index `index`, if it is still waiting.
    pub(super) fn take(&mut self, index: usize) -> Option<Pending> {
        let taken = self.slots.get_mut(index.checked_sub(self.base)?)?.take();
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        taken
    }
}
