//! Where a login's outcome waits for the page's auth socket (`/api2/auth-callback/token/{id}`,
//! see [`super::auth_socket`]): the popup's `/send-token` publishes `{"token"}` or `{"error"}`
//! under the login's callback id, and the socket with that id takes it, once. The outcome is
//! kept a while, so a socket that connects after `/send-token` still gets it.
//!
//! This is the [`AuthHandoff`] seam: [`LocalHandoff`] keeps outcomes in this process (the
//! popup's `/send-token` and the page's socket must reach the same instance); a shared
//! implementation (Redis pub/sub with a kept last message) lets them meet on any instance.
//!
//! A waiter holds nothing once it is gone: [`AuthHandoff::wait`] is cancelled by dropping it
//! (the socket's peer went away), and the in-process table forgets the slot of a waiter that
//! left without an outcome. Waiters are capped by the socket route (per client and in all);
//! kept outcomes by [`MAX_SLOTS`], which never refuses a waiting socket.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// The outcome of a login, for the page at `origin`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct Outcome {
    pub origin: String,
    /// The Uppy auth token, or `None` when the login failed.
    pub token: Option<String>,
}

/// Where login outcomes wait for their auth socket.
#[async_trait::async_trait]
pub trait AuthHandoff: Send + Sync + std::fmt::Debug {
    /// Posts the outcome of login `id`, kept `keep` for a socket that connects late.
    async fn publish(&self, id: &str, outcome: Outcome, keep: Duration);
    /// The outcome of login `id`: the kept one at once, else the next one within `wait`.
    /// Dropping the future (the socket's peer left) must release whatever it holds.
    async fn wait(&self, id: &str, wait: Duration) -> Option<Outcome>;
    /// Forgets login `id` (its token was delivered, or its failure reported).
    async fn delivered(&self, id: &str);
}

/// Most outcomes kept at once in one process without a socket to take them; waiting sockets
/// are capped by the socket route, far below this, and never refused here.
pub const MAX_SLOTS: usize = 10_000;

type Slot = Arc<watch::Sender<Option<Outcome>>>;
type Slots = Mutex<HashMap<String, Slot>>;

/// The in-process [`AuthHandoff`].
#[derive(Debug, Default)]
pub struct LocalHandoff {
    slots: Arc<Slots>,
}

fn lock(slots: &Slots) -> MutexGuard<'_, HashMap<String, Slot>> {
    // A map of channels: a holder's panic cannot leave it inconsistent.
    slots.lock().unwrap_or_else(|p| p.into_inner())
}

/// Forgets `id`'s slot if it is still `slot`, holds no outcome and nobody waits on it.
fn forget_if_idle(slots: &Slots, id: &str, slot: &Slot) {
    let mut slots = lock(slots);
    if slots.get(id).is_some_and(|s| Arc::ptr_eq(s, slot))
        && slot.borrow().is_none()
        && slot.receiver_count() == 0
    {
        slots.remove(id);
    }
}

/// One socket waiting on a slot; when it goes (outcome, timeout or cancellation) an empty slot
/// nobody else waits on goes with it.
struct Waiter {
    slots: Arc<Slots>,
    id: String,
    slot: Slot,
    rx: Option<watch::Receiver<Option<Outcome>>>,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // The receiver first, so the slot's count no longer includes this waiter.
        self.rx.take();
        forget_if_idle(&self.slots, &self.id, &self.slot);
    }
}

impl LocalHandoff {
    /// Number of slots: sockets waiting plus outcomes kept.
    pub fn len(&self) -> usize {
        lock(&self.slots).len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait::async_trait]
impl AuthHandoff for LocalHandoff {
    async fn publish(&self, id: &str, outcome: Outcome, keep: Duration) {
        let slot = {
            let mut slots = lock(&self.slots);
            match slots.get(id) {
                Some(s) => s.clone(),
                None if slots.len() >= MAX_SLOTS => {
                    tracing::warn!("auth hand-off table full; outcome dropped");
                    return;
                }
                None => {
                    let s = Arc::new(watch::channel(None).0);
                    slots.insert(id.to_owned(), s.clone());
                    s
                }
            }
        };
        slot.send_replace(Some(outcome));
        let slots = self.slots.clone();
        let id = id.to_owned();
        // Detached on purpose: it only forgets the outcome after `keep` (dropped at shutdown).
        drop(tokio::spawn(async move {
            tokio::time::sleep(keep).await;
            let mut slots = lock(&slots);
            if slots.get(&id).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                slots.remove(&id);
            }
        }));
    }

    async fn wait(&self, id: &str, wait: Duration) -> Option<Outcome> {
        let slot = lock(&self.slots)
            .entry(id.to_owned())
            .or_insert_with(|| Arc::new(watch::channel(None).0))
            .clone();
        let mut waiter = Waiter {
            slots: self.slots.clone(),
            id: id.to_owned(),
            rx: Some(slot.subscribe()),
            slot,
        };
        let rx = waiter.rx.as_mut()?;
        tokio::time::timeout(wait, async {
            rx.wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|o| o.clone())
        })
        .await
        .ok()
        .flatten()
    }

    async fn delivered(&self, id: &str) {
        lock(&self.slots).remove(id);
    }
}

/// `authCallbackToken`s are UUIDs; accept URL-safe ids up to 128 characters (they also name
/// the binding cookie, so they must be valid cookie-name characters).
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(token: &str) -> Outcome {
        Outcome {
            origin: "https://app.example".into(),
            token: Some(token.into()),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_waiter_gets_the_kept_outcome_until_it_expires() {
        let hub = LocalHandoff::default();
        hub.publish("a", outcome("t1"), Duration::from_secs(60))
            .await;
        assert_eq!(
            hub.wait("a", Duration::from_secs(1)).await,
            Some(outcome("t1"))
        );
        hub.publish("b", outcome("t2"), Duration::from_secs(60))
            .await;
        tokio::time::sleep(Duration::from_secs(61)).await;
        assert_eq!(hub.wait("b", Duration::from_secs(1)).await, None);
        assert!(hub.is_empty(), "expired and timed-out slots are forgotten");
    }

    #[tokio::test(start_paused = true)]
    async fn an_early_waiter_gets_the_outcome_when_it_comes_and_delivery_is_once() {
        let hub = Arc::new(LocalHandoff::default());
        let waiter = {
            let hub = hub.clone();
            tokio::spawn(async move { hub.wait("c", Duration::from_secs(600)).await })
        };
        tokio::time::sleep(Duration::from_secs(5)).await;
        hub.publish("c", outcome("t3"), Duration::from_secs(60))
            .await;
        assert_eq!(waiter.await.expect("join"), Some(outcome("t3")));
        hub.delivered("c").await;
        assert_eq!(hub.wait("c", Duration::from_secs(1)).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancelled_waiter_leaves_no_slot_and_spares_a_shared_one() {
        let hub = Arc::new(LocalHandoff::default());
        let spawn = |id: &'static str| {
            let hub = hub.clone();
            tokio::spawn(async move { hub.wait(id, Duration::from_secs(600)).await })
        };
        let (alone, first, second) = (spawn("d"), spawn("e"), spawn("e"));
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(hub.len(), 2);
        alone.abort();
        first.abort();
        let _ = (alone.await, first.await);
        assert_eq!(hub.len(), 1, "the slot another socket waits on stays");
        hub.publish("e", outcome("t4"), Duration::from_secs(60))
            .await;
        assert_eq!(second.await.expect("join"), Some(outcome("t4")));
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_table_drops_new_outcomes_but_never_a_waiting_socket() {
        let hub = Arc::new(LocalHandoff::default());
        for i in 0..MAX_SLOTS {
            hub.publish(&format!("k{i}"), outcome("x"), Duration::from_secs(60))
                .await;
        }
        hub.publish("late", outcome("t5"), Duration::from_secs(60))
            .await;
        assert_eq!(hub.len(), MAX_SLOTS, "no outcome beyond the cap");
        let waiter = {
            let hub = hub.clone();
            tokio::spawn(async move { hub.wait("sock", Duration::from_secs(600)).await })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        hub.publish("sock", outcome("t6"), Duration::from_secs(60))
            .await;
        assert_eq!(waiter.await.expect("join"), Some(outcome("t6")));
    }
}
