//! One transfer's handles as the runner and its progress sockets share them: the latest frame
//! (so a reconnecting socket gets it at once), the control the runner obeys (run, pause,
//! cancel, yield), whether a socket has connected, the checkpoint hints the transfer records
//! (upload URL, source validator), and how the run ended.
//!
//! Sockets never set the control themselves: they [`Job::ask`]. A job of the in-process
//! registry applies the ask at once; a job of a shared registry relays it to wherever the
//! transfer runs (see [`crate::registry`]), and the answer comes back as a new control.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

/// What the transfer must do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Run,
    Pause,
    Cancel,
    /// Stop at once and leave the destination as it is, publishing nothing: another instance
    /// carries the transfer on (this one shuts down, or lost its ownership).
    Yield,
}

/// What a progress socket asks of the transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    Pause,
    Resume,
    Cancel,
    /// A socket connected: the transfer may start.
    Connected,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed,
    Cancelled,
    /// Stopped on [`Control::Yield`]: another instance goes on from the checkpoint.
    Yielded,
    /// No socket connected in time: the transfer never started.
    Abandoned,
}

/// Checkpoint hints: what another instance needs to resume (names are the transfer's own).
pub type Hints = BTreeMap<String, String>;

/// One transfer's shared handles.
#[derive(Debug)]
pub struct Job {
    /// The latest frame (JSON text), `None` before the first one.
    pub frame: watch::Sender<Option<Arc<str>>>,
    /// What the runner must do; set by the registry.
    pub control: watch::Sender<Control>,
    /// Becomes true when the first socket connects (wherever it is).
    pub connected: watch::Sender<bool>,
    /// The subject it was started for under `--auth-secret`; only they may watch or steer it.
    pub owner: Option<String>,
    /// What the transfer has recorded for a resume elsewhere.
    pub hints: watch::Sender<Hints>,
    /// Set once, when the run ends.
    pub outcome: watch::Sender<Option<Outcome>>,
    /// Where asks go when the registry decides (a shared registry); `None`: applied here.
    relay: Option<mpsc::UnboundedSender<Ask>>,
}

impl Job {
    /// A job whose asks are applied in place (the in-process registry).
    pub fn local(owner: Option<String>) -> Self {
        Self::new(owner, None)
    }

    /// A job whose asks go to `relay` (a shared registry forwards them to the transfer's owner).
    pub fn relayed(owner: Option<String>, relay: mpsc::UnboundedSender<Ask>) -> Self {
        Self::new(owner, Some(relay))
    }

    fn new(owner: Option<String>, relay: Option<mpsc::UnboundedSender<Ask>>) -> Self {
        Self {
            frame: watch::channel(None).0,
            control: watch::channel(Control::Run).0,
            connected: watch::channel(false).0,
            owner,
            hints: watch::channel(Hints::new()).0,
            outcome: watch::channel(None).0,
            relay,
        }
    }

    /// Publishes `frame` as the latest state.
    pub fn publish(&self, frame: &Value) {
        self.publish_text(Arc::from(frame.to_string()));
    }

    /// Publishes an already serialised frame.
    pub fn publish_text(&self, text: Arc<str>) {
        self.frame.send_replace(Some(text));
    }

    /// A socket's request: relayed, or applied here (pause only while running, resume only
    /// while paused, cancel always; nothing after a yield).
    pub fn ask(&self, ask: Ask) {
        if let Some(relay) = &self.relay {
            // The relay ends with the job's registry task; an ask after that has nowhere to go.
            let _ = relay.send(ask);
            return;
        }
        self.apply(ask);
    }

    /// Applies `ask` to this job's own control (what the registry decided).
    pub fn apply(&self, ask: Ask) {
        if ask == Ask::Connected {
            self.connected.send_replace(true);
            return;
        }
        self.control.send_if_modified(|now| {
            let next = match (ask, *now) {
                (Ask::Pause, Control::Run) => Control::Pause,
                (Ask::Resume, Control::Pause) => Control::Run,
                (Ask::Cancel, Control::Run | Control::Pause) => Control::Cancel,
                _ => return false,
            };
            *now = next;
            true
        });
    }

    /// Records a checkpoint hint (kept only when it changes).
    pub fn remember(&self, name: &str, value: &str) {
        self.hints.send_if_modified(|hints| {
            if hints.get(name).map(String::as_str) == Some(value) {
                return false;
            }
            hints.insert(name.to_owned(), value.to_owned());
            true
        });
    }

    /// Records how the run ended.
    pub fn end(&self, outcome: Outcome) {
        self.outcome.send_replace(Some(outcome));
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

/// `{"action":"waiting",...}`: the source asked the transfer to wait `retry_after` seconds (a
/// provider's rate limit); progress frames follow once bytes move again. Uppy's released
/// client logs an action it does not know and carries on.
pub fn waiting_frame(retry_after: u64, message: &str) -> Value {
    json!({"action": "waiting", "payload": {"retryAfter": retry_after, "message": message}})
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
    fn local_asks_follow_the_state_machine() {
        let job = Job::local(None);
        job.ask(Ask::Resume);
        assert_eq!(*job.control.borrow(), Control::Run);
        job.ask(Ask::Pause);
        assert_eq!(*job.control.borrow(), Control::Pause);
        job.ask(Ask::Pause);
        job.ask(Ask::Resume);
        assert_eq!(*job.control.borrow(), Control::Run);
        job.ask(Ask::Connected);
        assert!(*job.connected.borrow());
        job.control.send_replace(Control::Yield);
        job.ask(Ask::Cancel);
        assert_eq!(*job.control.borrow(), Control::Yield, "a yield is final");
    }

    #[test]
    fn relayed_asks_leave_the_control_to_the_registry() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let job = Job::relayed(None, tx);
        job.ask(Ask::Pause);
        job.ask(Ask::Connected);
        assert_eq!(*job.control.borrow(), Control::Run);
        assert!(!*job.connected.borrow());
        assert_eq!(rx.try_recv().ok(), Some(Ask::Pause));
        assert_eq!(rx.try_recv().ok(), Some(Ask::Connected));
    }

    #[test]
    fn hints_notify_only_on_change() {
        let job = Job::local(None);
        let mut seen = job.hints.subscribe();
        job.remember("upload_url", "http://a/files/1");
        assert!(seen.has_changed().unwrap_or(false));
        seen.borrow_and_update();
        job.remember("upload_url", "http://a/files/1");
        assert!(!seen.has_changed().unwrap_or(true));
    }
}
