//! The threads the in-process resize runs on: one per core, started on first use and kept. The
//! work is all CPU, so more threads would only hold more pixels at once; and the same few
//! threads doing every job keep their freed buffers in the same few allocator arenas, where
//! Tokio's blocking pool (shared with every file operation, its threads coming and going) spread
//! them over many, each keeping some (the peak RSS of bench/processing: 0.79-1.08x sharp's on the
//! blocking pool with a job per core). A panic in a job is caught and becomes its error; the
//! thread goes on with the next job.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, LazyLock, Mutex};

type Task = Box<dyn FnOnce() + Send>;

static POOL: LazyLock<Option<Sender<Task>>> = LazyLock::new(|| {
    let (tx, rx) = channel::<Task>();
    let rx = Arc::new(Mutex::new(rx));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let mut started = 0;
    for i in 0..threads {
        let rx = rx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("ferry-image-{i}"))
            .spawn(move || serve(&rx));
        started += usize::from(spawned.is_ok());
    }
    (started > 0).then_some(tx)
});

fn serve(rx: &Mutex<Receiver<Task>>) {
    loop {
        // The lock is held only while waiting for the next job, never while running one.
        let next = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        match next {
            Ok(task) => task(),
            Err(_) => return,
        }
    }
}

/// Runs `work` on one of the threads; `Err` says it panicked (with the panic's message) or
/// could not be run.
pub(crate) async fn run<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task: Task = Box::new(move || {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(|panic| {
            panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into())
        });
        let _ = tx.send(outcome);
    });
    let pool = POOL.as_ref().ok_or("no image thread could be started")?;
    pool.send(task)
        .map_err(|_| "the image threads have stopped".to_owned())?;
    rx.await
        .map_err(|_| "the image thread dropped the job".to_owned())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_the_jobs_error_and_the_threads_go_on() {
        let err = run(|| -> u8 { panic!("decoder bug") })
            .await
            .expect_err("the panic");
        assert_eq!(err, "decoder bug");
        for i in 0..8u8 {
            assert_eq!(run(move || i * 2).await, Ok(i * 2));
        }
    }
}
