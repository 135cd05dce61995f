//! The threads the in-process resize runs on: a `rayon` pool of one thread per core, started on
//! first use and kept. The work is all CPU, so more threads would only hold more pixels at once;
//! and the same few threads doing every job keep their freed buffers in the same few allocator
//! arenas, where Tokio's blocking pool (shared with every file operation, its threads coming and
//! going) spread them over many, each keeping some (the peak RSS of bench/processing: 0.79-1.08x
//! sharp's on the blocking pool with a job per core). Being rayon's, the pool also runs the JPEG
//! decoder's own parallel parts (its components and rows): no second set of threads. At most one
//! job per thread is handed to it ([`SLOTS`]): a thread waiting inside a decode for its parts
//! steals queued work, and another whole job taken that way would hold a second image's pixels
//! on that thread. A panic in a job is caught and becomes its error.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, LazyLock};

use tokio::sync::Semaphore;

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

static POOL: LazyLock<Option<rayon::ThreadPool>> = LazyLock::new(|| {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads())
        .thread_name(|i| format!("ferry-image-{i}"))
        .build()
        .ok()
});

/// Jobs in the pool at once: one per thread (a slot is held until its job ends, even when the
/// caller stopped waiting for it).
static SLOTS: LazyLock<Arc<Semaphore>> = LazyLock::new(|| Arc::new(Semaphore::new(threads())));

/// Runs `work` on one of the threads; `Err` says it panicked (with the panic's message) or
/// could not be run.
pub(crate) async fn run<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let pool = POOL.as_ref().ok_or("no image thread could be started")?;
    let slot = SLOTS
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| "the image threads have stopped".to_owned())?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    pool.spawn(move || {
        let _slot = slot;
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(|panic| {
            panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into())
        });
        let _ = tx.send(outcome);
    });
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_and_their_parallel_parts_run_on_the_pool_one_job_per_thread() {
        use rayon::iter::{IntoParallelIterator, ParallelIterator};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let jobs = (0..threads() * 4).map(|_| {
            let (running, most) = (running.clone(), most.clone());
            run(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // Parallel parts as the JPEG decoder makes them: on this pool, not another.
                let parts: Vec<bool> = (0..64)
                    .into_par_iter()
                    .map(|_| {
                        let name = std::thread::current().name().map(str::to_owned);
                        name.is_some_and(|n| n.starts_with("ferry-image-"))
                    })
                    .collect();
                running.fetch_sub(1, Ordering::SeqCst);
                parts.into_iter().all(|on_pool| on_pool)
            })
        });
        for outcome in futures_util::future::join_all(jobs).await {
            assert_eq!(outcome, Ok(true), "a part ran off the pool");
        }
        assert!(most.load(Ordering::SeqCst) <= threads());
    }
}
