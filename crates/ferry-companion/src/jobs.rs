//! The job table: one entry per `/url/get` token, holding the latest frame for the progress
//! socket (so a reconnecting socket gets it at once), the client's pause/resume/cancel control
//! and whether a socket has connected yet.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rand::RngCore;
use serde_json::{Value, json};
use tokio::sync::watch;

/// What the client wants the transfer to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Run,
    Pause,
    Cancel,
}

/// One transfer's shared handles.
#[derive(Debug)]
pub struct Job {
    /// The latest frame (JSON text), `None` before the first one.
    pub frame: watch::Sender<Option<Arc<str>>>,
    pub control: watch::Sender<Control>,
    /// Becomes true when the first socket connects.
    pub connected: watch::Sender<bool>,
    /// The subject it was started for under `--auth-secret`; only they may watch or steer it.
    pub owner: Option<String>,
}

/// Tokens to jobs.
#[derive(Debug, Default)]
pub struct Jobs {
    map: Mutex<HashMap<String, Arc<Job>>>,
}

impl Jobs {
    /// Registers a new job for `owner` under a fresh unguessable token.
    pub fn create(&self, owner: Option<String>) -> (String, Arc<Job>) {
        let mut raw = [0u8; 24];
        rand::rng().fill_bytes(&mut raw);
        let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let job = Arc::new(Job {
            frame: watch::channel(None).0,
            control: watch::channel(Control::Run).0,
            connected: watch::channel(false).0,
            owner,
        });
        self.lock().insert(token.clone(), job.clone());
        (token, job)
    }

    pub fn get(&self, token: &str) -> Option<Arc<Job>> {
        self.lock().get(token).cloned()
    }

    pub fn remove(&self, token: &str) {
        self.lock().remove(token);
    }

    /// Number of jobs in the table.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Job>>> {
        // A panic while holding this lock cannot leave the map inconsistent: recover it.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Job {
    /// Publishes `frame` as the latest state.
    pub fn publish(&self, frame: Value) {
        let text: Arc<str> = Arc::from(frame.to_string());
        self.frame.send_replace(Some(text));
    }
}

/// `{"action":"progress",...}` with the percentage as a two-decimal string.
pub fn progress_frame(uploaded: u64, total: Option<u64>) -> Value {
    let total = total.unwrap_or(0);
    let pct = if total > 0 {
        (uploaded as f64 * 100.0 / total as f64).min(100.0)
    } else {
        0.0
    };
    json!({"action": "progress", "payload": {
        "progress": format!("{pct:.2}"), "bytesUploaded": uploaded, "bytesTotal": total
    }})
}

/// `{"action":"success",...}`.
pub fn success_frame(url: &str, response: Option<Value>) -> Value {
    let mut payload = json!({"complete": true, "url": url});
    if let Some(r) = response {
        payload["response"] = r;
    }
    json!({"action": "success", "payload": payload})
}

/// `{"action":"error",...}`.
pub fn error_frame(message: &str) -> Value {
    json!({"action": "error", "payload": {"error": {"message": message}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_has_two_decimals() {
        let f = progress_frame(228_278_784, Some(1_073_741_824));
        assert_eq!(
            f.to_string(),
            r#"{"action":"progress","payload":{"bytesTotal":1073741824,"bytesUploaded":228278784,"progress":"21.26"}}"#
        );
        assert_eq!(progress_frame(5, None)["payload"]["progress"], "0.00");
    }

    #[test]
    fn tokens_are_distinct_and_long() {
        let jobs = Jobs::default();
        let (a, _) = jobs.create(None);
        let (b, _) = jobs.create(None);
        assert_ne!(a, b);
        assert_eq!(a.len(), 48);
        assert!(jobs.get(&a).is_some() && jobs.get("nope").is_none());
    }
}
