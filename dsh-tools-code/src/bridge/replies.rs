//! The bindings' replies, by lane index: a submitted call's record waits here for its commit,
//! and the commit's answer waits here for the binding's future to take it.
//!
//! A call is submitted and committed on the thread that drives the run, and the run's lane is
//! polled before the binding futures: a call that completes at once is answered before its
//! future is first polled, which then takes the answer without registering a waker. A slot in
//! a window costs less than a channel per call.

use std::collections::VecDeque;
use std::task::{Context, Poll, Waker};

use serde_json::Value;

use super::Pending;

/// What a binding's future resolves to.
pub(super) type Answer = Result<Value, String>;

/// Submitted calls by lane index. Indices are given out in order and each call is answered and
/// taken once, so a window from the oldest index still in use is enough: no hashing on the
/// per-call path.
#[derive(Default)]
pub(super) struct Replies {
    /// The lane index of `slots[0]`.
    base: usize,
    slots: VecDeque<Slot>,
}

/// One submitted call.
struct Slot {
    /// Its record, until the commit takes it.
    pending: Option<Pending>,
    /// The commit's answer, until the binding's future takes it.
    answer: Option<Answer>,
    /// The binding's future, when it found no answer yet.
    waker: Option<Waker>,
    /// The binding's future took the answer: the slot is done.
    taken: bool,
}

impl Replies {
    /// Adds the call with lane index `index` (the next one: every earlier index was added
    /// before).
    pub(super) fn insert(&mut self, index: usize, pending: Pending) {
        debug_assert_eq!(
            index,
            self.base + self.slots.len(),
            "lane indices come in order"
        );
        self.slots.push_back(Slot {
            pending: Some(pending),
            answer: None,
            waker: None,
            taken: false,
        });
    }

    fn slot(&mut self, index: usize) -> Option<&mut Slot> {
        self.slots.get_mut(index.checked_sub(self.base)?)
    }

    /// Takes the record of lane index `index` for its commit, if it is still waiting.
    pub(super) fn take(&mut self, index: usize) -> Option<Pending> {
        self.slot(index)?.pending.take()
    }

    /// Answers the call of lane index `index` (its record was taken), waking its future.
    pub(super) fn answer(&mut self, index: usize, answer: Answer) {
        if let Some(slot) = self.slot(index) {
            slot.answer = Some(answer);
            if let Some(waker) = slot.waker.take() {
                waker.wake();
            }
        }
    }

    /// The answer of lane index `index` once there is one (`None`: no such call waits here).
    pub(super) fn poll_answer(
        &mut self,
        index: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Answer>> {
        let Some(slot) = self.slot(index).filter(|slot| !slot.taken) else {
            return Poll::Ready(None);
        };
        match slot.answer.take() {
            Some(answer) => {
                slot.taken = true;
                while self.slots.front().is_some_and(|slot| slot.taken) {
                    self.slots.pop_front();
                    self.base += 1;
                }
                Poll::Ready(Some(answer))
            }
            None => {
                if !slot
                    .waker
                    .as_ref()
                    .is_some_and(|waker| waker.will_wake(cx.waker()))
                {
                    slot.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn pending(number: usize) -> Pending {
        Pending {
            number,
            name: "t".into(),
            arguments: None,
        }
    }

    #[test]
    fn answers_reach_their_futures_in_any_order_and_the_window_shrinks() {
        let woken = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&woken));
        let mut cx = Context::from_waker(&waker);
        let mut replies = Replies::default();
        for index in 0..3 {
            replies.insert(index, pending(index + 1));
        }
        // The second call's future waits; the third is answered before its future polls.
        assert!(replies.poll_answer(1, &mut cx).is_pending());
        assert_eq!(replies.take(2).map(|p| p.number), Some(3));
        replies.answer(2, Ok(Value::from(3)));
        assert_eq!(
            replies.poll_answer(2, &mut cx),
            Poll::Ready(Some(Ok(Value::from(3))))
        );
        assert_eq!(replies.take(1).map(|p| p.number), Some(2));
        replies.answer(1, Err("no".into()));
        assert_eq!(
            woken.0.load(Ordering::SeqCst),
            1,
            "the waiting future was woken"
        );
        assert_eq!(
            replies.poll_answer(1, &mut cx),
            Poll::Ready(Some(Err("no".into())))
        );
        // Index 0 is still in use: the window keeps every slot from it.
        assert_eq!(replies.slots.len(), 3);
        assert!(replies.take(1).is_none(), "a record is taken once");
        replies.take(0);
        replies.answer(0, Ok(Value::Null));
        assert_eq!(
            replies.poll_answer(0, &mut cx),
            Poll::Ready(Some(Ok(Value::Null)))
        );
        assert_eq!((replies.base, replies.slots.len()), (3, 0));
        assert_eq!(replies.poll_answer(0, &mut cx), Poll::Ready(None), "taken");
    }
}
