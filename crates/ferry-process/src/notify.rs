//! `notify_url`: when an Assembly ends, its final status is POSTed there as Transloadit does,
//! a urlencoded form with `transloadit` (the status JSON) and, when a secret is set,
//! `signature` (`sha384:` HMAC of that JSON with the Auth Secret). Failed deliveries (no answer,
//! a non-2xx) are retried with doubling waits, a bounded number of times; each try has a time
//! limit. Redirects are not followed.

use std::time::Duration;

use serde_json::Value;

/// How deliveries are retried.
#[derive(Clone, Copy, Debug)]
pub struct Retry {
    /// Tries in all (at least 1).
    pub attempts: u32,
    /// Wait after the first failure; doubled after each.
    pub first_wait: Duration,
    /// Time limit of one try.
    pub timeout: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Self {
            attempts: 5,
            first_wait: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
        }
    }
}

/// Sends notifications.
#[derive(Clone)]
pub struct Notifier {
    client: reqwest::Client,
    secret: Option<String>,
    retry: Retry,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl Notifier {
    /// A notifier signing with `secret`.
    pub fn new(secret: Option<String>, retry: Retry) -> std::io::Result<Self> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(retry.timeout)
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Self {
            client,
            secret,
            retry,
        })
    }

    /// Delivers `status` to `url`; the outcome for the status's `notify_status`.
    pub async fn send(&self, url: &str, status: &Value) -> String {
        let body = status.to_string();
        let mut form = vec![("transloadit", body.clone())];
        if let Some(secret) = &self.secret {
            form.push((
                "signature",
                crate::auth::sign_sha384(secret.as_bytes(), body.as_bytes()),
            ));
        }
        let mut wait = self.retry.first_wait;
        let mut last = String::new();
        for attempt in 1..=self.retry.attempts.max(1) {
            match self.client.post(url).form(&form).send().await {
                Ok(r) if r.status().is_success() => return "successful".to_owned(),
                Ok(r) => last = format!("the notify_url answered {}", r.status()),
                Err(e) => last = format!("the notify_url could not be reached: {e}"),
            }
            tracing::warn!(attempt, outcome = %last, "assembly notification failed");
            if attempt < self.retry.attempts {
                tokio::time::sleep(wait).await;
                wait = wait.saturating_mul(2);
            }
        }
        last
    }
}
