//! A body drawn from a byte budget: every chunk asks the budget how much of it may pass; when
//! the budget gives less, what fitted passes and the body then ends with an error of its own
//! kind ([`Stop::OverBudget`]). The budget remembers which limit said no, so the route can
//! answer with that limit's status and message.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;

use crate::Stop;

/// Bytes a body may still deliver.
pub trait Budget {
    /// Spends up to `n` bytes and returns how many were granted; fewer than `n` ends the body.
    fn take(&mut self, n: u64) -> u64;
}

/// No budget: everything passes.
impl<B: Budget> Budget for Option<B> {
    fn take(&mut self, n: u64) -> u64 {
        match self {
            Some(budget) => budget.take(n),
            None => n,
        }
    }
}

/// A body stream spending from `budget` as its chunks pass.
#[derive(Debug)]
pub struct Metered<S, B> {
    inner: S,
    budget: B,
    exhausted: bool,
}

impl<S, B> Metered<S, B> {
    pub fn new(inner: S, budget: B) -> Self {
        Self {
            inner,
            budget,
            exhausted: false,
        }
    }

    /// The stream inside.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }
}

impl<S, B> Stream for Metered<S, B>
where
    S: Stream<Item = io::Result<Bytes>> + Unpin,
    B: Budget + Unpin,
{
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.exhausted {
            return Poll::Ready(Some(Err(Stop::OverBudget.error())));
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(mut chunk))) => {
                let wanted = chunk.len() as u64;
                let granted = self.budget.take(wanted);
                if granted >= wanted {
                    return Poll::Ready(Some(Ok(chunk)));
                }
                self.exhausted = true;
                // In range: `granted` is below this chunk's length.
                chunk.truncate(granted as usize);
                match chunk.is_empty() {
                    true => Poll::Ready(Some(Err(Stop::OverBudget.error()))),
                    false => Poll::Ready(Some(Ok(chunk))),
                }
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    struct Left(u64);

    impl Budget for Left {
        fn take(&mut self, n: u64) -> u64 {
            let granted = n.min(self.0);
            self.0 -= granted;
            granted
        }
    }

    fn chunks(sizes: &[usize]) -> impl Stream<Item = io::Result<Bytes>> + Unpin {
        let items: Vec<_> = sizes
            .iter()
            .map(|n| Ok(Bytes::from(vec![1u8; *n])))
            .collect();
        futures_util::stream::iter(items)
    }

    #[tokio::test]
    async fn what_fits_passes_then_the_body_ends_over_budget() {
        let mut body = Metered::new(chunks(&[4, 4, 4]), Left(6));
        assert_eq!(body.next().await.expect("chunk").expect("ok").len(), 4);
        assert_eq!(body.next().await.expect("chunk").expect("ok").len(), 2);
        let end = body.next().await.expect("an error").expect_err("over");
        assert_eq!(Stop::of(&end), Some(Stop::OverBudget));

        let mut body = Metered::new(chunks(&[4]), Left(0));
        let end = body.next().await.expect("an error").expect_err("over");
        assert_eq!(Stop::of(&end), Some(Stop::OverBudget));

        let mut body = Metered::new(chunks(&[4, 4]), None::<Left>);
        assert_eq!(body.next().await.expect("chunk").expect("ok").len(), 4);
        assert_eq!(body.next().await.expect("chunk").expect("ok").len(), 4);
        assert!(body.next().await.is_none());
    }
}
