//! The tool-update gate: deliveries started by `on_update`, joined before finalization.
//!
//! Mirrors pi-agent-core 0.85.1 `executePreparedToolCall`'s `acceptingUpdates` flag and
//! `updateEvents` list: while the gate is open each update starts its delivery at once — polled
//! once in place (so listeners see updates in emission order, as pi's synchronous emit gives), the
//! rest as a tokio task (so deliveries may overlap each other and the tool); closing the gate drops
//! later updates; [`UpdateGate::close_and_join`] awaits every started delivery and returns the
//! first failure. Finished deliveries are reaped whenever a new one starts, so the gate holds only
//! deliveries still in flight.

use std::panic::AssertUnwindSafe;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::task::{JoinError, JoinHandle};

use crate::error::{HookError, panic_message};

type Delivery = JoinHandle<Result<(), HookError>>;

#[derive(Default)]
struct GateState {
    closed: bool,
    running: Vec<Delivery>,
    failure: Option<HookError>,
}

/// Open until [`UpdateGate::close_and_join`].
pub(crate) struct UpdateGate {
    state: Mutex<GateState>,
    runtime: Option<tokio::runtime::Handle>,
}

fn outcome(r: Result<Result<(), HookError>, JoinError>) -> Result<(), HookError> {
    match r {
        Ok(r) => r,
        Err(join) if join.is_panic() => Err(HookError(panic_message(join.into_panic()))),
        Err(join) => Err(HookError(join.to_string())),
    }
}

impl UpdateGate {
    /// An open gate. Deliveries run on the current tokio runtime; without one, updates are
    /// dropped.
    pub(super) fn new() -> Self {
        UpdateGate {
            state: Mutex::new(GateState::default()),
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        crate::sync::lock(&self.state)
    }

    /// Starts a delivery unless the gate is closed. `make` builds it (it is not called when
    /// the update is dropped).
    pub(super) fn start(&self, make: impl FnOnce() -> BoxFuture<'static, Result<(), HookError>>) {
        let mut s = self.lock();
        let Some(runtime) = self.runtime.as_ref().filter(|_| !s.closed) else {
            return;
        };
        let mut failure = s.failure.take();
        s.running.retain_mut(|h| match h.now_or_never() {
            Some(r) => {
                if let (Err(e), None) = (outcome(r), &failure) {
                    failure = Some(e);
                }
                false
            }
            None => true,
        });
        s.failure = failure;
        let runtime = runtime.clone();
        drop(s);
        // pi's emit runs every listener up to its first `await` at once, so consecutive
        // updates reach listeners in order: poll the delivery once here (outside the lock, in
        // case a listener starts another update); only what is left runs as a task.
        let mut delivery = make();
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        let first = std::panic::catch_unwind(AssertUnwindSafe(|| delivery.poll_unpin(&mut cx)));
        let mut s = self.lock();
        match first {
            Ok(Poll::Pending) => s.running.push(runtime.spawn(delivery)),
            Ok(Poll::Ready(Ok(()))) => {}
            Ok(Poll::Ready(Err(e))) => {
                s.failure.get_or_insert(e);
            }
            Err(payload) => {
                s.failure.get_or_insert(HookError(panic_message(payload)));
            }
        }
    }

    /// Closes the gate and awaits every started delivery; the first failure wins.
    pub(super) async fn close_and_join(&self) -> Result<(), HookError> {
        let (running, mut failure) = {
            let mut s = self.lock();
            s.closed = true;
            (std::mem::take(&mut s.running), s.failure.take())
        };
        for handle in running {
            if let (Err(e), None) = (outcome(handle.await), &failure) {
                failure = Some(e);
            }
        }
        failure.map_or(Ok(()), Err)
    }
}
