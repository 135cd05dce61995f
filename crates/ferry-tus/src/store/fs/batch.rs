//! A write batch that holds the body's chunks instead of copying them.
//!
//! The network's chunks (hyper hands out slices of its read buffer, a few hundred KiB each) are
//! kept as they arrive and go to the file in one vectored write: the only copy left is the
//! kernel's, from the chunk into the page cache. Tiny chunks (a
//! client trickling bytes, a chunked body in small frames) are copied into a run of their own
//! instead: keeping each one would cost a slice per few bytes and more `writev` calls than the
//! copy costs. So a batch holds few slices, each at least [`COPY_BELOW`] long but for the last.

use std::io::{self, IoSlice, Write};

use bytes::{Bytes, BytesMut};

/// Chunks shorter than this are copied into a run rather than kept.
pub(super) const COPY_BELOW: usize = 16 * 1024;

/// The length at which a run of copied chunks is closed and kept like a chunk.
const RUN: usize = 64 * 1024;

/// Chunks waiting for the disk, in order.
#[derive(Debug, Default)]
pub(super) struct Batch {
    chunks: Vec<Bytes>,
    /// Tiny chunks copied together; always after every chunk in `chunks`.
    run: BytesMut,
    len: usize,
}

impl Batch {
    /// Bytes held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Adds `chunk` after everything held.
    pub(super) fn push(&mut self, chunk: Bytes) {
        if chunk.is_empty() {
            return;
        }
        self.len += chunk.len();
        if chunk.len() < COPY_BELOW {
            if self.run.capacity() == 0 {
                self.run.reserve(RUN);
            }
            self.run.extend_from_slice(&chunk);
            if self.run.len() >= RUN {
                self.close_run();
            }
        } else {
            // The run holds earlier bytes: it goes first.
            self.close_run();
            self.chunks.push(chunk);
        }
    }

    /// Everything held, in order, leaving the batch empty.
    pub(super) fn take(&mut self) -> Vec<Bytes> {
        self.close_run();
        self.len = 0;
        std::mem::take(&mut self.chunks)
    }

    fn close_run(&mut self) {
        if !self.run.is_empty() {
            self.chunks.push(self.run.split().freeze());
        }
    }
}

/// Writes every chunk, in order, with as few `writev` calls as the kernel allows: a call may
/// store fewer bytes than asked (a signal, a full disk's last blocks, `IOV_MAX`), and the next
/// one resumes exactly where it stopped, mid-chunk if need be.
pub(super) fn write_all(out: &mut impl Write, chunks: &[Bytes]) -> io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = chunks.iter().map(|c| IoSlice::new(c)).collect();
    let mut rest = &mut slices[..];
    IoSlice::advance_slices(&mut rest, 0);
    while !rest.is_empty() {
        match out.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes at most `limit` bytes per call, and only from the first two slices (a kernel
    /// stopping short, mid-slice and between slices); every `interrupt_every`th call fails
    /// with `Interrupted` (a signal), which is retried.
    struct Stingy {
        out: Vec<u8>,
        limit: usize,
        calls: usize,
        interrupt_every: usize,
    }

    impl Write for Stingy {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[IoSlice::new(buf)])
        }

        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            self.calls += 1;
            if self.interrupt_every > 0 && self.calls % self.interrupt_every == 0 {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let mut left = self.limit;
            for buf in bufs.iter().take(2) {
                let take = buf.len().min(left);
                self.out.extend_from_slice(&buf[..take]);
                left -= take;
                if left == 0 {
                    break;
                }
            }
            Ok(self.limit - left)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn pattern(n: usize, seed: usize) -> Bytes {
        (0..n).map(|i| (i * 7 + seed * 31) as u8).collect()
    }

    #[test]
    fn short_vectored_writes_resume_mid_chunk_in_order() {
        let chunks: Vec<Bytes> = [0, 5, 100_000, 0, 1, 70_001, 3]
            .iter()
            .enumerate()
            .map(|(i, &n)| pattern(n, i))
            .collect();
        let want: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        for limit in [1, 7, 4096, 99_999, 1 << 20] {
            let mut out = Stingy {
                out: Vec::new(),
                limit,
                calls: 0,
                interrupt_every: 3,
            };
            write_all(&mut out, &chunks).expect("write");
            assert_eq!(out.out, want, "limit {limit}");
        }
    }

    #[test]
    fn a_writer_taking_nothing_is_an_error_not_a_loop() {
        let mut out = Stingy {
            out: Vec::new(),
            limit: 0,
            calls: 0,
            interrupt_every: 0,
        };
        let err = write_all(&mut out, &[pattern(10, 0)]).expect_err("no progress");
        assert_eq!(err.kind(), io::ErrorKind::WriteZero);
        write_all(&mut out, &[Bytes::new(), Bytes::new()]).expect("nothing to write");
    }

    #[test]
    fn tiny_chunks_are_copied_into_runs_and_large_ones_kept() {
        let mut batch = Batch::default();
        let mut want = Vec::new();
        let mut sizes = vec![1; 70_000];
        sizes.extend([COPY_BELOW, 3, 200_000, 0, 9]);
        for (i, &n) in sizes.iter().enumerate() {
            let chunk = pattern(n, i);
            want.extend_from_slice(&chunk);
            batch.push(chunk);
        }
        assert_eq!(batch.len(), want.len());
        let chunks = batch.take();
        assert_eq!(batch.len(), 0);
        // 70,000 one-byte chunks: two runs (64 KiB, then the rest); the 16 KiB chunk kept;
        // 3 bytes in a run of their own (a large chunk follows); the large one kept; 9 bytes.
        let lens: Vec<usize> = chunks.iter().map(Bytes::len).collect();
        assert_eq!(lens, [RUN, 70_000 - RUN, COPY_BELOW, 3, 200_000, 9]);
        let got: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        assert_eq!(got, want);
    }
}
