//! Refresh-token rotation for providers whose refresh tokens work once (Box; Microsoft's may
//! rotate too). Two problems follow from one-use refresh tokens, and this module solves both:
//!
//! - Many requests of one session (a batch of imports, a listing and its thumbnails) find the
//!   access token expired at once; if each refreshed, all but the first would spend an already
//!   spent refresh token and the session would die. [`Rotation::refresh`] lets one caller per
//!   session refresh while the others wait and take its result.
//! - A client whose plugin never calls `/refresh-token` (`@uppy/box`) keeps sending its original
//!   sealed token, whose refresh token was spent by the server-side refresh. The ledger maps
//!   every access and refresh token a session has had (by SHA-256, never the token itself as a
//!   key) to the session's newest tokens, so [`Rotation::latest`] turns a stale session into the
//!   current one.
//!
//! The ledger is in memory: after a restart (or on another instance) a stale token's refresh is
//! refused and the person signs in again. Entries expire after `ttl` and the ledger holds at most
//! `capacity` sessions (the least recently refreshed go first).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::{ProviderError, Session};

type Key = [u8; 32];

fn key(token: &str) -> Key {
    Sha256::digest(token.as_bytes()).into()
}

/// One signed-in session across its rotations.
#[derive(Debug)]
struct Lineage {
    latest: Session,
    /// Every token the session has had (so stale copies find `latest`).
    keys: Vec<Key>,
    updated: Instant,
    /// Held while this session refreshes.
    gate: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Debug, Default)]
struct Ledger {
    by_token: HashMap<Key, u64>,
    lineages: HashMap<u64, Lineage>,
    next: u64,
}

impl Ledger {
    fn find(&self, s: &Session) -> Option<u64> {
        let refresh = s.refresh_token.as_deref().map(key);
        refresh
            .and_then(|k| self.by_token.get(&k))
            .or_else(|| self.by_token.get(&key(&s.access_token)))
            .copied()
    }

    fn remove(&mut self, id: u64) {
        if let Some(l) = self.lineages.remove(&id) {
            for k in l.keys {
                self.by_token.remove(&k);
            }
        }
    }

    fn prune(&mut self, ttl: Duration, capacity: usize) {
        let now = Instant::now();
        let old: Vec<u64> = self
            .lineages
            .iter()
            .filter(|(_, l)| now.duration_since(l.updated) > ttl)
            .map(|(id, _)| *id)
            .collect();
        for id in old {
            self.remove(id);
        }
        while self.lineages.len() > capacity {
            let oldest = self
                .lineages
                .iter()
                .min_by_key(|(_, l)| l.updated)
                .map(|(id, _)| *id);
            match oldest {
                Some(id) => self.remove(id),
                None => break,
            }
        }
    }
}

/// The rotation ledger of one provider.
#[derive(Debug)]
pub struct Rotation {
    ledger: Mutex<Ledger>,
    ttl: Duration,
    capacity: usize,
}

impl Rotation {
    /// A ledger keeping sessions for `ttl` after their last refresh, at most `capacity` of them.
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            ledger: Mutex::default(),
            ttl,
            capacity: capacity.max(1),
        }
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        // Plain maps: a holder's panic cannot leave them inconsistent.
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The newest tokens of the session `s` belongs to (`s` itself if it never rotated here).
    /// Fields the stale copy carries beyond the tokens (the username) are kept.
    pub fn latest(&self, s: &Session) -> Session {
        let ledger = self.ledger();
        match ledger.find(s).and_then(|id| ledger.lineages.get(&id)) {
            Some(l) => {
                let mut out = s.clone();
                out.access_token = l.latest.access_token.clone();
                out.refresh_token = l.latest.refresh_token.clone();
                if out.username.is_none() {
                    out.username = l.latest.username.clone();
                }
                out
            }
            None => s.clone(),
        }
    }

    /// Runs `call` with the newest tokens of `s`. When the provider refuses the access token and
    /// the session has a refresh token, the session is refreshed through `refresh` (the
    /// provider's own refresh, which goes through [`Rotation::refresh`] and so happens once per
    /// session) and `call` runs once more with the fresh tokens.
    pub async fn authed<T, F, Fut, R, RFut>(
        &self,
        s: &Session,
        refresh: R,
        call: F,
    ) -> Result<T, ProviderError>
    where
        F: Fn(Session) -> Fut,
        Fut: Future<Output = Result<T, ProviderError>>,
        R: FnOnce(Session) -> RFut,
        RFut: Future<Output = Result<Session, ProviderError>>,
    {
        let current = self.latest(s);
        match call(current.clone()).await {
            Err(ProviderError::Auth) if current.refresh_token.is_some() => {
                let fresh = refresh(current).await?;
                call(fresh).await
            }
            other => other,
        }
    }

    /// Refreshes the session `s` (whose access token was refused) through `call`, once per
    /// session however many callers ask at the same time: a caller that finds the session
    /// rotated while it waited gets the newer tokens without a call.
    pub async fn refresh<F, Fut>(&self, s: &Session, call: F) -> Result<Session, ProviderError>
    where
        F: FnOnce(Session) -> Fut,
        Fut: Future<Output = Result<Session, ProviderError>>,
    {
        let s = self.latest(s);
        let gate = {
            let mut ledger = self.ledger();
            let id = match ledger.find(&s) {
                Some(id) => id,
                None => {
                    let id = ledger.next;
                    ledger.next += 1;
                    let mut keys = vec![key(&s.access_token)];
                    keys.extend(s.refresh_token.as_deref().map(key));
                    for k in &keys {
                        ledger.by_token.insert(*k, id);
                    }
                    ledger.lineages.insert(
                        id,
                        Lineage {
                            latest: s.clone(),
                            keys,
                            updated: Instant::now(),
                            gate: Arc::default(),
                        },
                    );
                    id
                }
            };
            match ledger.lineages.get(&id) {
                Some(l) => l.gate.clone(),
                None => Arc::default(),
            }
        };
        let _held = gate.lock().await;
        let current = self.latest(&s);
        if current.access_token != s.access_token {
            // Rotated by the caller we waited for.
            return Ok(current);
        }
        let fresh = call(current).await?;
        let mut ledger = self.ledger();
        if let Some(id) = ledger.find(&s) {
            let mut new_keys = vec![key(&fresh.access_token)];
            new_keys.extend(fresh.refresh_token.as_deref().map(key));
            for k in &new_keys {
                ledger.by_token.insert(*k, id);
            }
            if let Some(l) = ledger.lineages.get_mut(&id) {
                l.latest = fresh.clone();
                l.keys.extend(new_keys);
                l.updated = Instant::now();
            }
        }
        ledger.prune(self.ttl, self.capacity);
        Ok(fresh)
    }

    /// Forgets the session `s` belongs to (after a logout).
    pub fn forget(&self, s: &Session) {
        let mut ledger = self.ledger();
        if let Some(id) = ledger.find(s) {
            ledger.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn session(access: &str, refresh: &str) -> Session {
        Session {
            access_token: access.into(),
            refresh_token: Some(refresh.into()),
            username: Some("u".into()),
            ..Session::default()
        }
    }

    /// A provider whose refresh tokens work once.
    async fn rotate(calls: &AtomicU32, s: Session) -> Result<Session, ProviderError> {
        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
        tokio::task::yield_now().await;
        Ok(Session {
            access_token: format!("a{n}"),
            refresh_token: Some(format!("r{n}")),
            ..s
        })
    }

    #[tokio::test]
    async fn concurrent_refreshes_of_one_session_spend_its_refresh_token_once() {
        let rotation = Rotation::new(Duration::from_secs(60), 10);
        let calls = AtomicU32::new(0);
        let stale = session("a0", "r0");
        let all = futures_util::future::join_all(
            (0..8).map(|_| rotation.refresh(&stale, |s| rotate(&calls, s))),
        )
        .await;
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        for fresh in all {
            let fresh = fresh.expect("refreshed");
            assert_eq!(
                (fresh.access_token.as_str(), fresh.refresh_token.as_deref()),
                ("a1", Some("r1"))
            );
        }
    }

    #[tokio::test]
    async fn stale_copies_find_the_newest_tokens_by_either_token() {
        let rotation = Rotation::new(Duration::from_secs(60), 10);
        let calls = AtomicU32::new(0);
        let first = session("a0", "r0");
        rotation
            .refresh(&first, |s| rotate(&calls, s))
            .await
            .expect("first");
        let second = rotation
            .refresh(&session("a1", "r1"), |s| rotate(&calls, s))
            .await
            .expect("second");
        assert_eq!(second.refresh_token.as_deref(), Some("r2"));
        // The client's original token, or a thumbnail grant holding only its access token.
        for stale in [
            first.clone(),
            Session {
                access_token: "a0".into(),
                ..Session::default()
            },
        ] {
            let latest = rotation.latest(&stale);
            assert_eq!(
                (
                    latest.access_token.as_str(),
                    latest.refresh_token.as_deref()
                ),
                ("a2", Some("r2"))
            );
        }
        // A stale copy refused again does not spend r2 twice: its newest tokens are refreshed.
        let third = rotation
            .refresh(&first, |s| rotate(&calls, s))
            .await
            .expect("third");
        assert_eq!(
            (third.access_token.as_str(), calls.load(Ordering::SeqCst)),
            ("a3", 3)
        );
        rotation.forget(&first);
        assert_eq!(rotation.latest(&first).access_token, "a0");
    }

    #[tokio::test]
    async fn a_refused_refresh_leaves_the_session_as_it_was() {
        let rotation = Rotation::new(Duration::from_secs(60), 10);
        let s = session("a0", "r0");
        let refused = rotation
            .refresh(&s, |_| async { Err(ProviderError::Auth) })
            .await;
        assert!(matches!(refused, Err(ProviderError::Auth)));
        assert_eq!(rotation.latest(&s).access_token, "a0");
    }

    #[tokio::test]
    async fn the_ledger_keeps_at_most_capacity_sessions() {
        let rotation = Rotation::new(Duration::from_secs(60), 2);
        let calls = AtomicU32::new(0);
        for i in 0..3 {
            let s = session(&format!("x{i}"), &format!("y{i}"));
            rotation
                .refresh(&s, |s| rotate(&calls, s))
                .await
                .expect("refresh");
        }
        assert_eq!(rotation.ledger().lineages.len(), 2);
        assert_eq!(rotation.latest(&session("x0", "y0")).access_token, "x0");
    }
}
