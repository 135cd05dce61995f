//! Lingering close: an answer sent before the request body was read still reaches the client.
//!
//! Routes answer early on purpose (413 too large, 409 wrong offset, 401, ...), without reading
//! a body the client is still sending. Hyper then closes the connection. Closing a TCP socket
//! with unread bytes in its receive buffer sends a reset, and a reset makes the client's kernel
//! drop what it had received but not yet read, the answer included: the client sees
//! "broken pipe" or "connection reset" instead of the status (hyper#2384). The cure is the
//! one web servers use: send FIN after the answer, then read and discard what still arrives
//! until the client closes, within a bound of bytes and time, and only then close.
//!
//! [`Tracked`] marks the connection while a request body is unread; an answer given then says
//! `Connection: close` ([`Unread::close_if_unread`]), so the client does not send its next
//! request on a connection the server is closing; [`LingerIo`] lingers in `poll_shutdown`
//! (hyper's last call on a connection it closes) only when it is marked, so connections that
//! read their bodies close as before.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How much a lingering close reads and discards at most, and for how long at most. A client
/// reads an answer as it arrives, so these only need to cover the bytes already in flight;
/// they also cap what a client can make the server read for nothing.
#[derive(Clone, Copy, Debug)]
pub struct Linger {
    pub bytes: u64,
    pub time: Duration,
}

impl Linger {
    /// 64 MiB or 5 s, whichever comes first.
    pub const DEFAULT: Self = Self {
        bytes: 64 * 1024 * 1024,
        time: Duration::from_secs(5),
    };
}

/// Shared by a connection's IO and the body of its current request.
#[derive(Debug, Default)]
pub struct Unread(AtomicBool);

impl Unread {
    fn set(&self, unread: bool) {
        self.0.store(unread, Ordering::Relaxed);
    }

    fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Adds `Connection: close` to an answer given while the request body is unread: hyper
    /// closes such a connection after the answer, and a client that pooled it would send its
    /// next request into the lingering close and get "socket hang up".
    pub fn close_if_unread<B>(&self, response: &mut http::Response<B>) {
        if self.get() {
            response.headers_mut().insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
        }
    }
}

/// A request body that clears its connection's mark once it has been read to the end.
#[derive(Debug)]
pub struct Tracked<B> {
    inner: B,
    unread: Arc<Unread>,
}

impl<B: Body> Tracked<B> {
    pub fn new(inner: B, unread: Arc<Unread>) -> Self {
        unread.set(!inner.is_end_stream());
        Self { inner, unread }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Tracked<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if frame.is_none() || self.inner.is_end_stream() {
            self.unread.set(false);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Where a lingering close stands.
enum Closing {
    Open,
    /// FIN sent; reading until the client closes or a bound is reached.
    Draining {
        read: u64,
        deadline: Pin<Box<tokio::time::Sleep>>,
    },
    Closed,
}

/// A connection's IO that lingers on shutdown while its request body is unread.
pub struct LingerIo<T> {
    inner: T,
    unread: Arc<Unread>,
    bounds: Linger,
    closing: Closing,
}

impl<T> LingerIo<T> {
    pub fn new(inner: T, unread: Arc<Unread>, bounds: Linger) -> Self {
        Self {
            inner,
            unread,
            bounds,
            closing: Closing::Open,
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> LingerIo<T> {
    /// Reads and discards until end of stream, an error, the byte bound or the deadline.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Closing::Draining { read, deadline } = &mut self.closing else {
            return Poll::Ready(());
        };
        let mut scratch = [0u8; 16 * 1024];
        loop {
            if *read >= self.bounds.bytes {
                return Poll::Ready(());
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(()),
                Poll::Ready(Ok(())) => *read += buf.filled().len() as u64,
                Poll::Ready(Err(_)) => return Poll::Ready(()),
                Poll::Pending => return deadline.as_mut().poll(cx),
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for LingerIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for LingerIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Closing::Open = this.closing {
            // FIN after the answer, so the client reads it and knows no more is coming.
            ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            this.closing = if this.unread.get() {
                Closing::Draining {
                    read: 0,
                    deadline: Box::pin(tokio::time::sleep(this.bounds.time)),
                }
            } else {
                Closing::Closed
            };
        }
        ready!(this.poll_drain(cx));
        this.closing = Closing::Closed;
        Poll::Ready(Ok(()))
    }
}
