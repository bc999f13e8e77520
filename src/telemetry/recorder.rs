//! Recording off the recall path: a recall hands its observation over a channel and goes on;
//! one thread per process writes whatever has queued up since its last write in one
//! transaction. [`Recorder::close`] (or dropping the last handle) writes what is left.

use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::counters::Counters;
use super::observation::Observation;

pub struct Recorder {
    sender: Mutex<Option<Sender<Observation>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl Recorder {
    /// Starts the writing thread over `counters`.
    pub fn start(counters: Counters) -> std::io::Result<Arc<Recorder>> {
        let (sender, queue) = mpsc::channel::<Observation>();
        let writer = std::thread::Builder::new()
            .name("strata-counters".into())
            .spawn(move || {
                let mut failing = false;
                while let Ok(first) = queue.recv() {
                    let mut batch = vec![first];
                    batch.extend(queue.try_iter());
                    match counters.apply(&batch) {
                        Ok(()) => failing = false,
                        // Said once per run of failures: recall goes on uncounted.
                        Err(e) if !failing => {
                            failing = true;
                            tracing::warn!(error = %e, lost = batch.len(), "recall counters not written");
                        }
                        Err(_) => {}
                    }
                }
            })?;
        Ok(Arc::new(Recorder {
            sender: Mutex::new(Some(sender)),
            writer: Mutex::new(Some(writer)),
        }))
    }

    /// Queues one recall; never waits for the write.
    pub fn record(&self, observation: Observation) {
        if let Ok(sender) = self.sender.lock()
            && let Some(sender) = sender.as_ref()
        {
            let _ = sender.send(observation);
        }
    }

    /// Writes everything queued and stops the thread; later records are dropped.
    pub fn close(&self) {
        if let Ok(mut sender) = self.sender.lock() {
            sender.take();
        }
        let writer = self.writer.lock().ok().and_then(|mut w| w.take());
        if let Some(writer) = writer
            && writer.join().is_err()
        {
            tracing::warn!("the recall counters' writer panicked");
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recorder")
    }
}
