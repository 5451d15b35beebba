//! [`Control`]: how the shell steers a running task.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::{Poll, Waker};

use crate::repair::WaitWatcher;

#[derive(Default)]
pub struct Control {
    pub(super) pause: Cell<bool>,
    pub(super) cancel: Cell<bool>,
    /// Why the run was stopped from outside (its tab closed): it ends failed with this.
    ended: RefCell<Option<String>>,
    pub(super) follow_ups: RefCell<Vec<String>>,
    wakers: RefCell<Vec<Waker>>,
    /// Who hears when the run's model calls wait on the provider.
    waits: WaitWatcher,
}

impl Control {
    /// A control whose run tells `waits` about provider waits.
    pub fn watching(waits: WaitWatcher) -> Control {
        Control { waits, ..Control::default() }
    }

    /// The watcher a run's ledger reports provider waits to.
    pub fn waits(&self) -> WaitWatcher {
        self.waits.clone()
    }

    pub fn request_pause(&self) {
        self.pause.set(true);
        self.wake();
    }
    pub fn request_cancel(&self) {
        self.cancel.set(true);
        self.wake();
    }
    /// Stops the run because of something outside it (its tab closed): it ends as failed
    /// with `why`, never as a cancel the person did not ask for.
    pub fn request_end(&self, why: &str) {
        *self.ended.borrow_mut() = Some(why.to_owned());
        self.request_cancel();
    }
    /// Why [`Control::request_end`] stopped the run, if it did.
    pub fn end_reason(&self) -> Option<String> {
        self.ended.borrow().clone()
    }
    /// Steering while running: applied at the next step.
    pub fn push_follow_up(&self, text: &str) {
        self.follow_ups.borrow_mut().push(text.to_owned());
    }
    /// The steering pushed since the last call, oldest first; loops outside the executor
    /// (workflow replay) read it this way.
    pub fn take_follow_ups(&self) -> Vec<String> {
        self.follow_ups.take()
    }
    /// Whether a pause was asked for; loops outside the executor (workflow replay) check it.
    pub fn pause_requested(&self) -> bool {
        self.pause.get()
    }
    pub fn cancel_requested(&self) -> bool {
        self.cancel.get()
    }
    pub(super) fn interrupted(&self) -> bool {
        self.pause.get() || self.cancel.get()
    }
    fn wake(&self) {
        for waker in self.wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }
    /// Runs `work` unless a pause or cancel comes first; then `work` is dropped (an HTTP
    /// request in it is aborted) and `None` returned.
    pub async fn race<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        let mut work = pin!(work);
        poll_fn(|cx| {
            if self.interrupted() {
                return Poll::Ready(None);
            }
            if let Poll::Ready(value) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(value));
            }
            self.wakers.borrow_mut().push(cx.waker().clone());
            // A request made while `work` was being polled has woken no one yet.
            if self.interrupted() { Poll::Ready(None) } else { Poll::Pending }
        })
        .await
    }
}
