//! Where an async client (FalkorDB over the Redis wire, Qdrant over gRPC) runs its tasks. A
//! process that already runs a tokio runtime hands its handle over (the explorer's worker
//! does), so one runtime serves every client; a client opened anywhere else starts a small
//! runtime of its own. Calls block the calling thread, which must not be an async worker:
//! store and index calls run on blocking threads.

use std::future::Future;

use tokio::runtime::{Handle, Runtime};

pub struct ClientRuntime {
    handle: Handle,
    /// The runtime this client started, if it was given none; shut down without waiting
    /// when dropped, so that dropping the client inside another runtime's task is fine.
    own: Option<Runtime>,
}

impl ClientRuntime {
    /// Uses `given`, or starts a one-thread runtime named `name`.
    pub fn start(name: &'static str, given: Option<Handle>) -> std::io::Result<Self> {
        if let Some(handle) = given {
            return Ok(ClientRuntime { handle, own: None });
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(name)
            .enable_all()
            .build()?;
        Ok(ClientRuntime {
            handle: runtime.handle().clone(),
            own: Some(runtime),
        })
    }

    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Runs `future` with the runtime's I/O and timers, waiting on this (blocking) thread.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
    }
}

impl Drop for ClientRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.own.take() {
            runtime.shutdown_background();
        }
    }
}
