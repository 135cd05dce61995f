//! Which failed S3 calls are sent again, and after how long.
//!
//! Stores answer 503 `SlowDown` when they shed load, and 500/502/504 when one of their own
//! nodes hiccups; S3's documentation asks clients to repeat such requests with a growing
//! pause, and so do the AWS SDKs. A refused connection is repeated too. Only a call whose body
//! can be sent again (none, or bytes in memory) is repeated: a streamed part's bytes are gone
//! once sent, so its failure goes to the caller, whose upload resumes from what was stored.
//! A call that stalled is not repeated: it already waited the whole idle time.

use std::time::Duration;

use rand::Rng;
use reqwest::StatusCode;

use reqwest::{Method, Response, Url};

use crate::{Payload, S3Client, S3Error};

/// Repeats after the first attempt.
pub(crate) const RETRIES: u32 = 3;

/// How one attempt failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Worth repeating if the body allows it.
    Again(S3Error),
    /// The answer stands.
    Final(S3Error),
}

impl Failure {
    pub(crate) fn into_error(self) -> S3Error {
        match self {
            Self::Again(error) | Self::Final(error) => error,
        }
    }
}

/// The statuses a store uses for "try again".
pub(crate) fn retryable(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::INTERNAL_SERVER_ERROR
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
}

/// The pause before repeat number `retry` (0-based): 100 ms, 400 ms, 1.6 s, each taken at
/// random from its upper half so that many callers shed by one store do not return together.
pub(crate) fn backoff(retry: u32) -> Duration {
    let ceiling = Duration::from_millis(100) * 4u32.pow(retry.min(4));
    ceiling.mul_f64(rand::rng().random_range(0.5..=1.0))
}

impl S3Client {
    /// Sends a signed request, repeating it when the store asks to (see [`crate::retry`]).
    pub(crate) async fn send(
        &self,
        what: &'static str,
        method: Method,
        url: Url,
        headers: &[(String, String)],
        mut body: Option<Payload>,
    ) -> Result<Response, S3Error> {
        let mut retry = 0;
        loop {
            let spare = match &body {
                None => Some(None),
                Some(payload) => payload.replay().map(Some),
            };
            let failure = match self
                .send_once(what, method.clone(), url.clone(), headers, body)
                .await
            {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            match (failure, spare) {
                (Failure::Again(error), Some(spare)) if retry < RETRIES => {
                    let pause = backoff(retry);
                    tracing::debug!(what, error = %error, ?pause, "S3 call repeated");
                    tokio::time::sleep(pause).await;
                    retry += 1;
                    body = spare;
                }
                (failure, _) => return Err(failure.into_error()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_and_stay_within_their_ceiling() {
        for (retry, ceiling_ms) in [(0, 100), (1, 400), (2, 1600)] {
            let pause = backoff(retry);
            let ceiling = Duration::from_millis(ceiling_ms);
            assert!(
                pause <= ceiling && pause >= ceiling / 2,
                "{retry}: {pause:?}"
            );
        }
    }

    #[test]
    fn only_the_stores_try_again_statuses_are_repeated() {
        for code in [500, 502, 503, 504] {
            assert!(retryable(StatusCode::from_u16(code).expect("status")));
        }
        for code in [200, 400, 403, 404, 409, 412, 501] {
            assert!(!retryable(StatusCode::from_u16(code).expect("status")));
        }
    }
}
