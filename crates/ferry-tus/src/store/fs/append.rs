//! Appending a body to a data file.
//!
//! The body's chunks are gathered into a batch ([`Batch`]: kept as they arrive, not copied);
//! each full batch goes to the file in one vectored write on the blocking pool while the next
//! one fills, so the network and the disk work at the same time. Batches share a memory budget
//! ([`Appends`]): one upload gets [`MAX_BATCH`]-sized batches, hundreds at once get smaller ones.
//! A batch closes at the first chunk that reaches its size, so an append holds two batches and
//! two chunks at most.
//!
//! Why no copy: copying each chunk into a reused buffer (as this did until 2026-11) cost a
//! `memmove` of every byte on the task that also reads the socket; keeping the chunks makes the
//! receiver allocate a fresh read buffer per read instead, which the allocator must serve from
//! memory it already holds ([`raise_allocator_thresholds`]). Measured in bench/README.md
//! ("Writing without the copy").
//!
//! With [`Fsync::Always`] an `fdatasync` runs in the background every [`SYNC_EVERY`] bytes so
//! that the one which ends the write (and makes its offset durable) has little left to flush.
//! That last one runs together with any other sync the caller owes before answering
//! ([`Ending::also`]: a creation's, when the first bytes come with it).
//!
//! Every request writes through its own file handle, positioned once at the verified offset, so
//! a write still finishing for a dropped request lands at its own positions, with the same bytes
//! a resumed request sends again, and never after them.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::task::{JoinHandle, spawn_blocking};

use super::Fsync;
use super::batch::{self, Batch};
use super::syncs::{self, Job, Probe, Synced};
use crate::store::BodyStream;

/// The largest batch: big enough that system calls and task hand-offs are rare (two hand-offs
/// to the blocking pool per MiB at 512 KiB measured as a visible share of a PATCH's CPU).
const MAX_BATCH: usize = 1024 * 1024;

/// The smallest batch, however many uploads are being written.
const MIN_BATCH: usize = 64 * 1024;

/// Batch memory shared by all appends of a store (each holds two batches at most).
const BUFFER_BUDGET: usize = 32 * 1024 * 1024;

/// Counts a store's appends in progress, to size their batches.
#[derive(Debug, Default)]
pub(super) struct Appends(AtomicUsize);

impl Appends {
    /// Registers an append until the guard drops, and picks its batch size.
    fn begin(&self) -> (AppendGuard<'_>, usize) {
        let active = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        let batch = (BUFFER_BUDGET / 2 / active).clamp(MIN_BATCH, MAX_BATCH);
        (AppendGuard(self), batch)
    }
}

struct AppendGuard<'a>(&'a Appends);

impl Drop for AppendGuard<'_> {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Keeps the memory of freed read buffers in the process. The receiver's read buffers (a few
/// hundred KiB each) are freed here, a batch or two at a time. glibc maps blocks above its mmap
/// threshold afresh and hands freed memory above twice that threshold back to the kernel; the
/// threshold starts at 128 KiB and only rises when a larger mapped block is freed. Until then
/// every read buffer comes back as new pages, each faulted in and zeroed (measured: 40 to 250
/// faults per MiB of a PATCH, more CPU than the copy this path no longer makes). Freeing one
/// 4 MiB block raises the threshold to 4 MiB and the trim point to 8 MiB, as glibc itself does
/// after any larger free; other allocators just allocate and free it.
pub(super) fn raise_allocator_thresholds() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // black_box: an allocation freed unused may otherwise be optimised away.
    ONCE.call_once(|| drop(std::hint::black_box(Vec::<u8>::with_capacity(4 << 20))));
}

/// Bytes written between background syncs of a long write.
const SYNC_EVERY: u64 = 64 * 1024 * 1024;

/// How an append ends once its bytes are written.
pub(super) struct Ending {
    pub(super) probe: Probe,
    /// The data file, for the probe.
    pub(super) data: PathBuf,
    /// Syncs to run together with the data file's (whatever the policy: the caller made them
    /// only when they are owed).
    pub(super) also: Vec<Job>,
}

/// Writes `body` at `file`'s position until it ends, syncs (per `fsync`, together with
/// `ending`'s other syncs), and returns the bytes written. Bytes received before the body failed
/// are written and synced too, then its error returned, so the client can resume from them.
pub(super) async fn append(
    appends: &Appends,
    fsync: Fsync,
    file: File,
    body: BodyStream<'_>,
    ending: Ending,
) -> io::Result<u64> {
    let (_active, size) = appends.begin();
    let mut disk = Pipeline::new(file, fsync);
    let mut batch = Batch::default();
    let received = loop {
        match body.next().await {
            Some(Ok(chunk)) => {
                batch.push(chunk);
                if batch.len() >= size {
                    disk.submit(batch.take()).await?;
                }
            }
            Some(Err(e)) => break Err(e),
            None => break Ok(()),
        }
    };
    disk.submit(batch.take()).await?;
    let written = disk.finish(ending).await?;
    received.map(|()| written)
}

/// One write and one background sync in flight at most.
struct Pipeline {
    file: Arc<File>,
    fsync: Fsync,
    writing: Option<JoinHandle<io::Result<()>>>,
    syncing: Option<JoinHandle<io::Result<()>>>,
    written: u64,
    since_sync: u64,
}

impl Pipeline {
    fn new(file: File, fsync: Fsync) -> Self {
        Self {
            file: Arc::new(file),
            fsync,
            writing: None,
            syncing: None,
            written: 0,
            since_sync: 0,
        }
    }

    /// Waits for the previous write and starts writing `chunks`.
    async fn submit(&mut self, chunks: Vec<Bytes>) -> io::Result<()> {
        self.wait_write().await?;
        let len: u64 = chunks.iter().map(|c| c.len() as u64).sum();
        if len == 0 {
            return Ok(());
        }
        self.written += len;
        self.since_sync += len;
        let file = self.file.clone();
        // The chunks are freed on the blocking thread, once written.
        self.writing = Some(spawn_blocking(move || {
            batch::write_all(&mut &*file, &chunks)
        }));
        if self.fsync == Fsync::Always
            && self.since_sync >= SYNC_EVERY
            && self.syncing.as_ref().is_none_or(|s| s.is_finished())
        {
            // Syncs what earlier writes stored; the one in flight is covered by a later sync.
            let file = self.file.clone();
            self.syncing = Some(spawn_blocking(move || file.sync_data()));
            self.since_sync = 0;
        }
        Ok(())
    }

    /// Waits for every write, then syncs the file (per `fsync`) and runs `ending`'s other syncs,
    /// all at once, and returns the bytes written.
    async fn finish(mut self, ending: Ending) -> io::Result<u64> {
        self.wait_write().await?;
        if let Some(sync) = self.syncing.take() {
            joined(sync.await)?;
        }
        let mut jobs = ending.also;
        if self.fsync == Fsync::Always {
            let file = self.file.clone();
            jobs.push(Job::new(Synced::Data, ending.data, move || {
                file.sync_data()
            }));
        }
        syncs::together(&ending.probe, jobs).await?;
        Ok(self.written)
    }

    /// Waits for the write in flight.
    async fn wait_write(&mut self) -> io::Result<()> {
        match self.writing.take() {
            Some(write) => joined(write.await),
            None => Ok(()),
        }
    }
}

fn joined(result: Result<io::Result<()>, tokio::task::JoinError>) -> io::Result<()> {
    result.map_err(io::Error::other)?
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Seek, SeekFrom, Write};

    use bytes::Bytes;
    use futures_util::stream;

    use super::*;

    fn chunks(sizes: &[usize]) -> (Vec<io::Result<Bytes>>, Vec<u8>) {
        let mut all = Vec::new();
        let mut out = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            let chunk: Vec<u8> = (0..n).map(|j| (i * 31 + j * 7) as u8).collect();
            all.extend_from_slice(&chunk);
            out.push(Ok(Bytes::from(chunk)));
        }
        (out, all)
    }

    fn file_at(prefix: &[u8]) -> (tempfile::NamedTempFile, File) {
        let mut tmp = tempfile::NamedTempFile::new().expect("temp file");
        tmp.write_all(prefix).expect("prefix");
        let mut file = tmp.reopen().expect("reopen");
        file.seek(SeekFrom::End(0)).expect("seek");
        (tmp, file)
    }

    fn ending(tmp: &tempfile::NamedTempFile) -> Ending {
        Ending {
            probe: Probe::default(),
            data: tmp.path().to_path_buf(),
            also: Vec::new(),
        }
    }

    fn contents(tmp: &tempfile::NamedTempFile) -> Vec<u8> {
        let mut out = Vec::new();
        tmp.reopen()
            .expect("reopen")
            .read_to_end(&mut out)
            .expect("read");
        out
    }

    #[tokio::test]
    async fn batches_of_odd_chunks_land_in_order_after_the_prefix() {
        // Empty chunks, chunks straddling batch boundaries, one larger than a batch.
        let (body, sent) = chunks(&[1, 0, 700_000, 3, MAX_BATCH, 0, 400_001, 17]);
        let (tmp, file) = file_at(b"head");
        let mut body = stream::iter(body);
        let appends = Appends::default();
        let written = append(&appends, Fsync::Always, file, &mut body, ending(&tmp))
            .await
            .expect("append");
        assert_eq!(written, sent.len() as u64);
        assert_eq!(contents(&tmp), [b"head".as_slice(), &sent].concat());
    }

    #[tokio::test]
    async fn bytes_before_a_failure_are_kept_and_the_error_returned() {
        let (mut body, sent) = chunks(&[MAX_BATCH + 5, 1000]);
        body.push(Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "gone",
        )));
        body.extend(chunks(&[99]).0);
        let (tmp, file) = file_at(b"");
        let mut body = stream::iter(body);
        let appends = Appends::default();
        let err = append(&appends, Fsync::Never, file, &mut body, ending(&tmp))
            .await
            .expect_err("failed body");
        assert_eq!(err.kind(), io::ErrorKind::ConnectionAborted);
        assert_eq!(contents(&tmp), sent);
        assert_eq!(appends.0.load(Ordering::Relaxed), 0, "guard released");
    }

    #[test]
    fn batches_shrink_as_appends_share_the_budget() {
        let appends = Appends::default();
        let (first, alone) = appends.begin();
        assert_eq!(alone, MAX_BATCH);
        let crowd: Vec<_> = (0..199).map(|_| appends.begin()).collect();
        let (_, last) = crowd.last().expect("199 appends");
        assert_eq!(*last, BUFFER_BUDGET / 2 / 200);
        drop(crowd);
        drop(first);
        let many: Vec<_> = (0..10_000).map(|_| appends.begin()).collect();
        assert_eq!(many.first().map(|m| m.1), Some(MAX_BATCH), "alone again");
        assert_eq!(many.last().map(|m| m.1), Some(MIN_BATCH));
    }
}
