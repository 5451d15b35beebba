//! Waiting for something to happen in the worker without polling: a [`Notify`] wakes every
//! waiter when a condition they watch may have changed, and an [`Ended`] is a job's end
//! that callers await.
//!
//! The worker is one JS thread, so these are `Rc`/`RefCell` and never `Send`.

use std::cell::RefCell;
use std::future::{Future, poll_fn};
use std::rc::Rc;
use std::task::{Poll, Waker};

/// Wakes every task waiting on it when told; a waiter re-checks its condition then.
#[derive(Default)]
pub struct Notify {
    wakers: RefCell<Vec<Waker>>,
    /// Bumped at every notification, so a waiter can tell it was notified.
    epoch: std::cell::Cell<u64>,
}

impl Notify {
    pub fn notify(&self) {
        self.epoch.set(self.epoch.get() + 1);
        for waker in self.wakers.take() {
            waker.wake();
        }
    }

    /// Resolves at the next [`Notify::notify`].
    pub fn notified(&self) -> impl Future<Output = ()> + '_ {
        let start = self.epoch.get();
        poll_fn(move |cx| {
            if self.epoch.get() != start {
                return Poll::Ready(());
            }
            self.wakers.borrow_mut().push(cx.waker().clone());
            Poll::Pending
        })
    }

    /// Resolves once `done()` holds, checking it again at every notification.
    pub async fn until(&self, done: impl Fn() -> bool) {
        while !done() {
            self.notified().await;
        }
    }
}

/// A value that arrives once, which any number of callers await.
pub struct Ended<T: Clone> {
    value: RefCell<Option<T>>,
    notify: Notify,
}

impl<T: Clone> Default for Ended<T> {
    fn default() -> Self {
        Ended { value: RefCell::new(None), notify: Notify::default() }
    }
}

impl<T: Clone> Ended<T> {
    pub fn new() -> Rc<Ended<T>> {
        Rc::new(Ended::default())
    }

    /// Sets the value (the first one wins) and wakes every waiter.
    pub fn resolve(&self, value: T) {
        if self.value.borrow().is_none() {
            *self.value.borrow_mut() = Some(value);
        }
        self.notify.notify();
    }

    pub fn get(&self) -> Option<T> {
        self.value.borrow().clone()
    }

    /// The value, once it has arrived.
    pub async fn wait(self: Rc<Self>) -> T {
        loop {
            if let Some(value) = self.get() {
                return value;
            }
            self.notify.notified().await;
        }
    }
}

/// `future`'s output, or `None` after `ms`: the bound on a wait for an event.
pub async fn within<T>(ms: f64, future: impl Future<Output = T>) -> Option<T> {
    let mut work = std::pin::pin!(future);
    let mut timer = std::pin::pin!(wasm_bindgen_futures::JsFuture::from(crate::chrome::delay(ms)));
    poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        timer.as_mut().poll(cx).map(|_| None)
    })
    .await
}
