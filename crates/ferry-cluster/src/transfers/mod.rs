//! The transfer registry in Redis: a record per transfer (hash) plus one entry per transfer in a
//! stream consumer group whose pending list says which instance owns it.
//!
//! The instance that registers a transfer owns it from the start (the entry is added and read
//! into its pending list in one script). The owner heartbeats: it refreshes its lease, keeps its
//! entry fresh (`XCLAIM … JUSTID`) and re-reads the wanted state (pause/resume/cancel; pub/sub
//! control messages can be lost). When an owner falls silent, its lease expires and, after
//! `transfer_takeover`, any instance's reaper takes the entry with `XAUTOCLAIM`; a script then
//! claims the record and bumps its epoch. Every owner write checks the epoch, so a zombie owner's
//! writes are refused and it learns it lost the transfer. At shutdown an owner hands over: its
//! entry is marked idle at once and reapers are woken, so another instance claims it immediately.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::Script;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cluster::{Cluster, ToRedisArgsDyn};
use crate::error::{ClusterError, Result};
use crate::pubsub::HubEvent;

/// The consumer group of the transfer stream.
pub(crate) const GROUP: &str = "ferry";
/// How long a live record is kept after its last write.
const RECORD_TTL_MS: u64 = 24 * 3600 * 1000;
/// How long the stream lives without any write (it is re-created on the next registration).
const STREAM_TTL_MS: u64 = 24 * 3600 * 1000;
/// A transfer claimed more often than this is failed instead (a poison transfer).
pub const MAX_ATTEMPTS: u64 = 5;
/// Idle time given to a handed-over entry: far past any takeover window.
const HANDED_OVER_IDLE_MS: u64 = 24 * 3600 * 1000;

const REGISTER: &str = r"
-- KEYS: stream, record, lease; ARGV: group, me, epoch, entry_ttl, lease_ms, record_ttl, now, pairs...
if redis.call('EXISTS', KEYS[2]) == 1 then return {0, ''} end
redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '$', 'MKSTREAM')
local id = redis.call('XADD', KEYS[1], '*', 'token', ARGV[8 + 1])
redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1000, 'STREAMS', KEYS[1], '>')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('HSET', KEYS[2], 'owner', ARGV[2], 'epoch', ARGV[3], 'entry', id, 'updated_ms', ARGV[7])
for i = 8, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('SET', KEYS[3], ARGV[2] .. '|' .. ARGV[3], 'PX', ARGV[5])
return {1, id}
";

const HEARTBEAT: &str = r"
-- KEYS: stream, record, lease; ARGV: group, me, epoch, entry, lease_ms, record_ttl, stream_ttl
if redis.call('EXISTS', KEYS[2]) == 0 then return {2, '', ''} end
if redis.call('HGET', KEYS[2], 'epoch') ~= ARGV[3] or redis.call('HGET', KEYS[2], 'owner') ~= ARGV[2] then
  return {0, '', ''}
end
redis.call('SET', KEYS[3], ARGV[2] .. '|' .. ARGV[3], 'PX', ARGV[5])
redis.pcall('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[4], 'JUSTID')
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
return {1, redis.call('HGET', KEYS[2], 'desired') or 'run', redis.call('HGET', KEYS[2], 'socket') or ''}
";

const WRITE: &str = r"
-- KEYS: record; ARGV: me, epoch, now, pairs...
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[2] or redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'updated_ms', ARGV[3])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
";

const FINISH: &str = r"
-- KEYS: stream, record, lease; ARGV: group, me, epoch, entry, keep_ms, now, pairs...
if redis.call('HGET', KEYS[2], 'epoch') ~= ARGV[3] or redis.call('HGET', KEYS[2], 'owner') ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[2], 'owner', '', 'updated_ms', ARGV[6])
for i = 7, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('DEL', KEYS[3])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[4])
redis.call('XDEL', KEYS[1], ARGV[4])
return 1
";

const HAND_OVER: &str = r"
-- KEYS: stream, record, lease; ARGV: group, me, epoch, entry, idle_ms, wake_channel, now, pairs...
if redis.call('HGET', KEYS[2], 'epoch') ~= ARGV[3] or redis.call('HGET', KEYS[2], 'owner') ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[2], 'owner', '', 'updated_ms', ARGV[7])
for i = 8, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('DEL', KEYS[3])
redis.pcall('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[4], 'IDLE', ARGV[5], 'JUSTID')
redis.call('PUBLISH', ARGV[6], ARGV[4])
return 1
";

const CLAIM: &str = r"
-- KEYS: stream, record, lease; ARGV: group, me, entry, lease_ms, record_ttl, max_attempts, now
local function drop()
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
  redis.call('XDEL', KEYS[1], ARGV[3])
end
if redis.call('EXISTS', KEYS[2]) == 0 or redis.call('HGET', KEYS[2], 'entry') ~= ARGV[3] then
  drop()
  return {0, {}}
end
local state = redis.call('HGET', KEYS[2], 'state')
if state == 'succeeded' or state == 'failed' or state == 'canceled' then
  drop()
  return {0, {}}
end
local lease = redis.call('GET', KEYS[3])
if lease then
  local owner = string.match(lease, '^(.*)|')
  if owner then redis.call('XCLAIM', KEYS[1], ARGV[1], owner, 0, ARGV[3], 'JUSTID') end
  return {3, {}}
end
local attempts = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
if attempts > tonumber(ARGV[6]) then
  redis.call('HSET', KEYS[2], 'state', 'failed', 'owner', '', 'last_error', 'taken over too often')
  drop()
  return {4, redis.call('HGETALL', KEYS[2])}
end
local epoch = redis.call('HINCRBY', KEYS[2], 'epoch', 1)
redis.call('HSET', KEYS[2], 'owner', ARGV[2], 'updated_ms', ARGV[7])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('SET', KEYS[3], ARGV[2] .. '|' .. epoch, 'PX', ARGV[4])
return {1, redis.call('HGETALL', KEYS[2])}
";

const CONTROL: &str = r"
-- KEYS: record; ARGV: field, value, channel, message
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
";

struct Scripts {
    register: Script,
    heartbeat: Script,
    write: Script,
    finish: Script,
    hand_over: Script,
    claim: Script,
    control: Script,
}

fn scripts() -> &'static Scripts {
    static SCRIPTS: std::sync::OnceLock<Scripts> = std::sync::OnceLock::new();
    SCRIPTS.get_or_init(|| Scripts {
        register: Script::new(REGISTER),
        heartbeat: Script::new(HEARTBEAT),
        write: Script::new(WRITE),
        finish: Script::new(FINISH),
        hand_over: Script::new(HAND_OVER),
        claim: Script::new(CLAIM),
        control: Script::new(CONTROL),
    })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().try_into().unwrap_or(u64::MAX))
}

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// Hint fields are stored as `h.<name>` so they never collide with the record's own fields.
const HINT: &str = "h.";

/// What the fleet wants a transfer to do (persisted in the record; set from any instance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Desired {
    #[default]
    Run,
    Pause,
    Cancel,
}

impl Desired {
    fn as_str(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Pause => "pause",
            Self::Cancel => "cancel",
        }
    }
    fn parse(s: &str) -> Self {
        match s {
            "pause" => Self::Pause,
            "cancel" => Self::Cancel,
            _ => Self::Run,
        }
    }
}

/// A request to a transfer's owner, from any instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Pause,
    Resume,
    Cancel,
    /// The client's progress socket connected (on some instance): the owner may start.
    SocketConnected,
}

/// What the owner currently must do; watched by the running transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Directives {
    pub desired: Desired,
    pub socket_seen: bool,
}

/// A transfer's record as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferRecord {
    pub token: String,
    /// The owning instance; empty while nobody owns it (handed over or finished).
    pub owner: String,
    /// Grows with every claim: the fencing token of ownership.
    pub epoch: u64,
    /// The caller's state name (`running`, `succeeded`, ...; `succeeded`, `failed` and
    /// `canceled` are terminal and never claimed).
    pub state: String,
    pub desired: Desired,
    pub socket_seen: bool,
    /// The serialised request needed to run or resume the transfer.
    pub request: String,
    /// Free-form checkpoint hints (destination offsets, upload URLs, validators).
    pub hints: HashMap<String, String>,
    /// How many instances have run it (1 for the first).
    pub attempts: u64,
    /// Error text of a transfer failed by the registry itself (too many takeovers).
    pub last_error: Option<String>,
}

impl TransferRecord {
    fn from_map(token: &str, mut map: HashMap<String, String>) -> Self {
        let mut take = |k: &str| map.remove(k).unwrap_or_default();
        let owner = take("owner");
        let epoch = take("epoch").parse().unwrap_or(0);
        let state = take("state");
        let desired = Desired::parse(&take("desired"));
        let socket_seen = take("socket") == "1";
        let request = take("request");
        let attempts = take("attempts").parse().unwrap_or(0);
        let last_error = map.remove("last_error");
        let hints = map
            .into_iter()
            .filter_map(|(k, v)| k.strip_prefix(HINT).map(|k| (k.to_owned(), v)))
            .collect();
        Self {
            token: token.to_owned(),
            owner,
            epoch,
            state,
            desired,
            socket_seen,
            request,
            hints,
            attempts,
            last_error,
        }
    }
}

fn pairs_to_map(flat: Vec<String>) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut it = flat.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        map.insert(k, v);
    }
    map
}

/// What an instance knows about a transfer it owns (for hand-over at shutdown).
#[derive(Debug, Clone)]
pub(crate) struct Owned {
    epoch: u64,
    entry: String,
    drain: CancellationToken,
}

/// What a reaper claim found for one entry.
#[derive(Debug)]
pub enum Claimed {
    /// This instance owns the transfer now and must resume it.
    Owned(OwnedTransfer),
    /// The transfer was claimed too often and was failed; report its error to the client.
    Failed(TransferRecord),
}

/// The fleet's transfer registry (from [`Cluster::transfers`]).
#[derive(Debug, Clone)]
pub struct TransferRegistry {
    cluster: Cluster,
}

impl Cluster {
    /// The transfer registry shared by the fleet.
    pub fn transfers(&self) -> TransferRegistry {
        TransferRegistry {
            cluster: self.clone(),
        }
    }
}

impl TransferRegistry {
    fn keys3(&self, token: &str) -> [String; 3] {
        let keys = &self.cluster.inner.keys;
        [
            keys.transfer_stream(),
            keys.transfer(token),
            keys.transfer_lease(token),
        ]
    }

    /// Records a new transfer owned by this instance (epoch 1) with its serialised `request` and
    /// initial `state`. [`ClusterError::AlreadyRegistered`] if the token exists.
    pub async fn register(&self, token: &str, request: &str, state: &str) -> Result<OwnedTransfer> {
        let fields = vec![
            ("token".to_owned(), token.to_owned()),
            ("state".to_owned(), state.to_owned()),
            ("desired".to_owned(), "run".to_owned()),
            ("request".to_owned(), request.to_owned()),
            ("attempts".to_owned(), "1".to_owned()),
        ];
        let entry = self.create(token, 1, &fields).await?;
        let record = TransferRecord {
            token: token.to_owned(),
            owner: self.cluster.inner.instance.clone(),
            epoch: 1,
            state: state.to_owned(),
            desired: Desired::Run,
            socket_seen: false,
            request: request.to_owned(),
            hints: HashMap::new(),
            attempts: 1,
            last_error: None,
        };
        Ok(OwnedTransfer::start(self, record, entry).await)
    }

    /// Creates the record and its entry (owned here); the `token` field must come first in
    /// `fields`. Used for registration and for restoring a record lost with a Redis restart.
    async fn create(&self, token: &str, epoch: u64, fields: &[(String, String)]) -> Result<String> {
        let inner = &self.cluster.inner;
        let [stream, record, lease] = self.keys3(token);
        let (lease_ms, now) = (ms(inner.config.transfer_lease()), now_ms());
        let mut args: Vec<&dyn ToRedisArgsDyn> = vec![
            &GROUP,
            &inner.instance,
            &epoch,
            &STREAM_TTL_MS,
            &lease_ms,
            &RECORD_TTL_MS,
            &now,
        ];
        for (k, v) in fields {
            args.push(k);
            args.push(v);
        }
        let (created, entry): (i64, String) = self
            .cluster
            .eval(&scripts().register, &[&stream, &record, &lease], &args)
            .await?;
        if created == 1 {
            Ok(entry)
        } else {
            Err(ClusterError::AlreadyRegistered)
        }
    }

    /// The record of `token`, if any.
    pub async fn get(&self, token: &str) -> Result<Option<TransferRecord>> {
        let map: HashMap<String, String> = self
            .cluster
            .query(redis::cmd("HGETALL").arg(self.cluster.inner.keys.transfer(token)))
            .await?;
        Ok((!map.is_empty()).then(|| TransferRecord::from_map(token, map)))
    }

    /// Sends a control to the transfer's owner wherever it runs, and records it (so an owner
    /// that missed the message, or the next claimer, still honours it). False if no such transfer.
    pub async fn control(&self, token: &str, control: Control) -> Result<bool> {
        let keys = &self.cluster.inner.keys;
        let (field, value, message) = match control {
            Control::Pause => ("desired", Desired::Pause.as_str(), "pause"),
            Control::Resume => ("desired", Desired::Run.as_str(), "resume"),
            Control::Cancel => ("desired", Desired::Cancel.as_str(), "cancel"),
            Control::SocketConnected => ("socket", "1", "connection"),
        };
        let done: i64 = self
            .cluster
            .eval(
                &scripts().control,
                &[&keys.transfer(token)],
                &[&field, &value, &keys.transfer_control(token), &message],
            )
            .await?;
        Ok(done == 1)
    }

    /// Claims up to `limit` transfers whose owner has been silent for `transfer_takeover` (or
    /// handed them over), bumping their epoch. Entries whose owner still holds its lease are
    /// given back to it untouched.
    pub async fn claim_stale(&self, limit: usize) -> Result<Vec<Claimed>> {
        let inner = &self.cluster.inner;
        let stream = inner.keys.transfer_stream();
        let mut claimed = Vec::new();
        let mut cursor = "0-0".to_owned();
        let mut remaining = limit;
        while remaining > 0 {
            let reply: redis::Value = match self
                .cluster
                .query(
                    redis::cmd("XAUTOCLAIM")
                        .arg(&stream)
                        .arg(GROUP)
                        .arg(&inner.instance)
                        .arg(ms(inner.config.transfer_takeover))
                        .arg(&cursor)
                        .arg("COUNT")
                        .arg(remaining)
                        .arg("JUSTID"),
                )
                .await
            {
                Ok(reply) => reply,
                // No stream or group yet: nothing to claim.
                Err(ClusterError::Unavailable(e)) if e.code() == Some("NOGROUP") => break,
                Err(e) => return Err(e),
            };
            let (next, ids) = parse_autoclaim(reply)?;
            for id in ids {
                remaining = remaining.saturating_sub(1);
                if let Some(found) = self.claim_entry(&id).await? {
                    claimed.push(found);
                }
            }
            if next == "0-0" {
                break;
            }
            cursor = next;
        }
        Ok(claimed)
    }

    async fn claim_entry(&self, id: &str) -> Result<Option<Claimed>> {
        let inner = &self.cluster.inner;
        let stream = inner.keys.transfer_stream();
        let fields: HashMap<String, String> = match self
            .cluster
            .query::<Vec<(String, HashMap<String, String>)>>(
                redis::cmd("XRANGE").arg(&stream).arg(id).arg(id),
            )
            .await?
            .pop()
        {
            Some((_, fields)) => fields,
            None => HashMap::new(),
        };
        let Some(token) = fields.get("token") else {
            // A deleted entry: acknowledge it away.
            let _: i64 = self
                .cluster
                .query(redis::cmd("XACK").arg(&stream).arg(GROUP).arg(id))
                .await?;
            return Ok(None);
        };
        let [stream, record, lease] = self.keys3(token);
        let (lease_ms, now) = (ms(inner.config.transfer_lease()), now_ms());
        let (code, flat): (i64, Vec<String>) = self
            .cluster
            .eval(
                &scripts().claim,
                &[&stream, &record, &lease],
                &[
                    &GROUP,
                    &inner.instance,
                    &id,
                    &lease_ms,
                    &RECORD_TTL_MS,
                    &MAX_ATTEMPTS,
                    &now,
                ],
            )
            .await?;
        let record = TransferRecord::from_map(token, pairs_to_map(flat));
        Ok(match code {
            1 => {
                inner.counters.takeovers.fetch_add(1, Ordering::Relaxed);
                Some(Claimed::Owned(
                    OwnedTransfer::start(self, record, id.to_owned()).await,
                ))
            }
            4 => Some(Claimed::Failed(record)),
            _ => None,
        })
    }

    /// Runs a reaper: every `every` (± 20 % jitter), and at once when another instance hands a
    /// transfer over, claims stale transfers and sends them on the returned channel (at most
    /// `limit` per round). Stops when the receiver is dropped or the instance halts; what it
    /// claimed but could no longer deliver is handed over again.
    pub async fn spawn_reaper(
        &self,
        every: Duration,
        limit: usize,
    ) -> Result<mpsc::Receiver<Claimed>> {
        let inner = &self.cluster.inner;
        let mut wake = inner
            .hub
            .subscribe(
                &inner.keys.transfer_wake(),
                inner.config.connect_timeout * 2,
            )
            .await?;
        let (sender, receiver) = mpsc::channel(limit.max(1));
        let registry = self.clone();
        let halt = inner.halt.clone();
        tokio::spawn(async move {
            loop {
                let jitter = every.mul_f64(rand::random_range(0.8..1.2));
                tokio::select! {
                    () = halt.cancelled() => return,
                    () = sender.closed() => return,
                    () = tokio::time::sleep(jitter) => {}
                    event = wake.recv() => if event.is_none() { return },
                }
                // The instance stopped taking transfers (it is shutting down): its own
                // hand-over wakes this reaper, which must not claim them back.
                if sender.is_closed() {
                    return;
                }
                match registry.claim_stale(limit).await {
                    Ok(found) => {
                        let mut found = found.into_iter();
                        while let Some(claimed) = found.next() {
                            if let Err(refused) = sender.send(claimed).await {
                                // Closed during the claim: give these back at once.
                                for claimed in std::iter::once(refused.0).chain(found) {
                                    if let Claimed::Owned(owned) = claimed {
                                        let _ = owned.hand_over(&[]).await;
                                    }
                                }
                                return;
                            }
                        }
                    }
                    Err(err) => tracing::debug!(error = %err, "transfer reaper round failed"),
                }
            }
        });
        Ok(receiver)
    }

    /// Tokens of the transfers this instance owns now.
    pub fn owned(&self) -> Vec<String> {
        let owned = self
            .cluster
            .inner
            .owned
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        owned.keys().cloned().collect()
    }

    /// For shutdown (SIGTERM): fires every owned transfer's [`OwnedTransfer::drain_signal`] so
    /// it checkpoints and calls [`OwnedTransfer::hand_over`]; waits up to `within`, then hands
    /// over whatever is still owned here itself. Returns how many were handed over by force.
    pub async fn drain(&self, within: Duration) -> Result<usize> {
        let started = Instant::now();
        let snapshot = || -> Vec<(String, Owned)> {
            let owned = self
                .cluster
                .inner
                .owned
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            owned.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        for (_, owned) in snapshot() {
            owned.drain.cancel();
        }
        while !snapshot().is_empty() && started.elapsed() < within {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut forced = 0;
        for (token, owned) in snapshot() {
            if self
                .hand_over_entry(&token, owned.epoch, &owned.entry, &[])
                .await?
            {
                forced += 1;
            }
            self.cluster
                .inner
                .owned
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&token);
        }
        Ok(forced)
    }

    async fn hand_over_entry(
        &self,
        token: &str,
        epoch: u64,
        entry: &str,
        pairs: &[(String, String)],
    ) -> Result<bool> {
        let inner = &self.cluster.inner;
        let [stream, record, lease] = self.keys3(token);
        let wake = inner.keys.transfer_wake();
        let now = now_ms();
        let mut args: Vec<&dyn ToRedisArgsDyn> = vec![
            &GROUP,
            &inner.instance,
            &epoch,
            &entry,
            &HANDED_OVER_IDLE_MS,
            &wake,
            &now,
        ];
        for (k, v) in pairs {
            args.push(k);
            args.push(v);
        }
        let done: i64 = self
            .cluster
            .eval(&scripts().hand_over, &[&stream, &record, &lease], &args)
            .await?;
        if done == 1 {
            inner.counters.handovers.fetch_add(1, Ordering::Relaxed);
        }
        Ok(done == 1)
    }
}

fn parse_autoclaim(reply: redis::Value) -> Result<(String, Vec<String>)> {
    use redis::FromRedisValue;
    let bad = || ClusterError::Protocol("XAUTOCLAIM reply".to_owned());
    let redis::Value::Array(mut parts) = reply else {
        return Err(bad());
    };
    if parts.len() < 2 {
        return Err(bad());
    }
    let ids = Vec::<String>::from_redis_value(parts.remove(1)).map_err(|_| bad())?;
    let next = String::from_redis_value(parts.remove(0)).map_err(|_| bad())?;
    Ok((next, ids))
}

/// What the owner caches to restore its record after Redis lost it.
#[derive(Debug, Default)]
struct Cache {
    fields: Vec<(String, String)>,
}

impl Cache {
    fn set(&mut self, pairs: &[(String, String)]) {
        for (k, v) in pairs {
            match self.fields.iter_mut().find(|(key, _)| key == k) {
                Some(slot) => slot.1.clone_from(v),
                None => self.fields.push((k.clone(), v.clone())),
            }
        }
    }
}

/// A transfer this instance owns. Heartbeats in the background while it lives; dropping it
/// without [`Self::finish`] or [`Self::hand_over`] leaves it to be taken over after the takeover
/// window (what a crash does).
#[derive(Debug)]
pub struct OwnedTransfer {
    registry: TransferRegistry,
    record: TransferRecord,
    entry: String,
    directives: watch::Receiver<Directives>,
    lost: CancellationToken,
    drain: CancellationToken,
    cache: Arc<Mutex<Cache>>,
    tasks: Vec<JoinHandle<()>>,
    done: bool,
}

impl OwnedTransfer {
    async fn start(registry: &TransferRegistry, record: TransferRecord, entry: String) -> Self {
        let cluster = &registry.cluster;
        let inner = &cluster.inner;
        let (tx, directives) = watch::channel(Directives {
            desired: record.desired,
            socket_seen: record.socket_seen,
        });
        let tx = Arc::new(tx);
        let lost = CancellationToken::new();
        let drain = CancellationToken::new();
        let mut cache = Cache::default();
        let mut fields = vec![
            ("token".to_owned(), record.token.clone()),
            ("state".to_owned(), record.state.clone()),
            ("desired".to_owned(), record.desired.as_str().to_owned()),
            ("request".to_owned(), record.request.clone()),
            ("attempts".to_owned(), record.attempts.to_string()),
        ];
        fields.extend(
            record
                .hints
                .iter()
                .map(|(k, v)| (format!("{HINT}{k}"), v.clone())),
        );
        cache.set(&fields);
        let cache = Arc::new(Mutex::new(cache));
        inner
            .owned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                record.token.clone(),
                Owned {
                    epoch: record.epoch,
                    entry: entry.clone(),
                    drain: drain.clone(),
                },
            );
        inner
            .counters
            .transfers_owned
            .fetch_add(1, Ordering::Relaxed);
        let mut tasks = Vec::new();
        // Control messages: a hint to re-read the record now rather than at the next beat.
        let (poke_tx, poke_rx) = mpsc::channel::<()>(1);
        if let Ok(mut controls) = inner
            .hub
            .subscribe(
                &inner.keys.transfer_control(&record.token),
                inner.config.connect_timeout * 2,
            )
            .await
        {
            tasks.push(tokio::spawn(async move {
                while let Some(event) = controls.recv().await {
                    if matches!(event, HubEvent::Message(_) | HubEvent::Resubscribed) {
                        let _ = poke_tx.try_send(());
                    }
                }
            }));
        }
        tasks.push(tokio::spawn(heartbeat(
            registry.clone(),
            record.token.clone(),
            record.epoch,
            entry.clone(),
            tx,
            lost.clone(),
            cache.clone(),
            poke_rx,
        )));
        Self {
            registry: registry.clone(),
            record,
            entry,
            directives,
            lost,
            drain,
            cache,
            tasks,
            done: false,
        }
    }

    /// The transfer's token.
    pub fn token(&self) -> &str {
        &self.record.token
    }

    /// This ownership's epoch (fencing token).
    pub fn epoch(&self) -> u64 {
        self.record.epoch
    }

    /// The record as it was when this instance took ownership (request, hints, attempts).
    pub fn record(&self) -> &TransferRecord {
        &self.record
    }

    /// Pause/resume/cancel and socket presence, as wanted by the fleet; changes wake watchers.
    pub fn directives(&self) -> watch::Receiver<Directives> {
        self.directives.clone()
    }

    /// Fires when ownership is lost (another instance claimed it; the epoch moved on): stop at
    /// once, write nothing more.
    pub fn lost_signal(&self) -> &CancellationToken {
        &self.lost
    }

    /// Fires when the instance shuts down: checkpoint and [`Self::hand_over`].
    pub fn drain_signal(&self) -> &CancellationToken {
        &self.drain
    }

    fn pairs(state: Option<&str>, hints: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = hints
            .iter()
            .map(|(k, v)| (format!("{HINT}{k}"), (*v).to_owned()))
            .collect();
        if let Some(state) = state {
            pairs.push(("state".to_owned(), state.to_owned()));
        }
        pairs
    }

    fn refused(&self) -> ClusterError {
        self.lost.cancel();
        ClusterError::LeaseLost
    }

    /// Records progress: an optional new state and hints (e.g. `offset`, `upload_url`), only if
    /// this ownership is still current; [`ClusterError::LeaseLost`] (and the lost signal) if not.
    pub async fn checkpoint(&self, state: Option<&str>, hints: &[(&str, &str)]) -> Result<()> {
        if self.lost.is_cancelled() {
            return Err(ClusterError::LeaseLost);
        }
        let pairs = Self::pairs(state, hints);
        let cluster = &self.registry.cluster;
        let now = now_ms();
        let mut args: Vec<&dyn ToRedisArgsDyn> =
            vec![&cluster.inner.instance, &self.record.epoch, &now];
        for (k, v) in &pairs {
            args.push(k);
            args.push(v);
        }
        let key = cluster.inner.keys.transfer(&self.record.token);
        let written: i64 = cluster.eval(&scripts().write, &[&key], &args).await?;
        if written != 1 {
            return Err(self.refused());
        }
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .set(&pairs);
        Ok(())
    }

    /// Ends the transfer with a final `state` (`succeeded`, `failed`, `canceled`) and hints; the
    /// record is kept `keep` for late sockets and status queries, the entry is removed.
    pub async fn finish(
        mut self,
        state: &str,
        hints: &[(&str, &str)],
        keep: Duration,
    ) -> Result<()> {
        self.stop_tasks();
        let pairs = Self::pairs(Some(state), hints);
        let cluster = self.registry.cluster.clone();
        let inner = &cluster.inner;
        let [stream, record, lease] = self.registry.keys3(&self.record.token);
        let (keep_ms, now) = (ms(keep).max(1), now_ms());
        let mut args: Vec<&dyn ToRedisArgsDyn> = vec![
            &GROUP,
            &inner.instance,
            &self.record.epoch,
            &self.entry,
            &keep_ms,
            &now,
        ];
        for (k, v) in &pairs {
            args.push(k);
            args.push(v);
        }
        let done: i64 = cluster
            .eval(&scripts().finish, &[&stream, &record, &lease], &args)
            .await?;
        if done == 1 {
            Ok(())
        } else {
            Err(self.refused())
        }
    }

    /// Gives the transfer up at once (shutdown): records the hints, drops the lease and makes the
    /// entry claimable now, and wakes the other instances' reapers.
    pub async fn hand_over(mut self, hints: &[(&str, &str)]) -> Result<()> {
        self.stop_tasks();
        let pairs = Self::pairs(None, hints);
        let (token, epoch, entry) = (
            self.record.token.clone(),
            self.record.epoch,
            self.entry.clone(),
        );
        if self
            .registry
            .hand_over_entry(&token, epoch, &entry, &pairs)
            .await?
        {
            Ok(())
        } else {
            Err(self.refused())
        }
    }

    /// Stops heartbeating without telling anyone, as a crash would: the transfer is taken over
    /// after the takeover window. For tests of that path.
    pub fn forget(mut self) {
        self.stop_tasks();
    }

    fn stop_tasks(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        for task in &self.tasks {
            task.abort();
        }
        let inner = &self.registry.cluster.inner;
        inner
            .owned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.record.token);
        inner
            .counters
            .transfers_owned
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for OwnedTransfer {
    fn drop(&mut self) {
        self.stop_tasks();
    }
}

/// The owner's beat: lease, entry freshness, record expiry; reads the wanted state back.
#[allow(clippy::too_many_arguments)]
async fn heartbeat(
    registry: TransferRegistry,
    token: String,
    epoch: u64,
    mut entry: String,
    directives: Arc<watch::Sender<Directives>>,
    lost: CancellationToken,
    cache: Arc<Mutex<Cache>>,
    mut poke: mpsc::Receiver<()>,
) {
    let cluster = registry.cluster.clone();
    let inner = &cluster.inner;
    let every = inner.config.transfer_heartbeat();
    let lease_ms = ms(inner.config.transfer_lease());
    let [stream, record, lease] = registry.keys3(&token);
    loop {
        let beat: Result<(i64, String, String)> = cluster
            .eval(
                &scripts().heartbeat,
                &[&stream, &record, &lease],
                &[
                    &GROUP,
                    &inner.instance,
                    &epoch,
                    &entry,
                    &lease_ms,
                    &RECORD_TTL_MS,
                    &STREAM_TTL_MS,
                ],
            )
            .await;
        match beat {
            Ok((1, desired, socket)) => {
                let next = Directives {
                    desired: Desired::parse(&desired),
                    socket_seen: socket == "1",
                };
                directives.send_if_modified(|current| {
                    let changed = *current != next;
                    *current = next;
                    changed
                });
            }
            Ok((2, _, _)) => {
                // Redis lost the record (restart without persistence): put it back, same epoch.
                let fields = cache
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .fields
                    .clone();
                match registry.create(&token, epoch, &fields).await {
                    Ok(new_entry) => {
                        entry = new_entry;
                        if let Some(owned) = inner
                            .owned
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_mut(&token)
                        {
                            owned.entry.clone_from(&entry);
                        }
                        continue;
                    }
                    Err(ClusterError::AlreadyRegistered) => continue,
                    Err(_) => {}
                }
            }
            Ok(_) => {
                lost.cancel();
                return;
            }
            // Redis unreachable: the transfer keeps running; the epoch check decides later.
            Err(_) => {}
        }
        tokio::select! {
            () = inner.halt.cancelled() => return,
            () = tokio::time::sleep(every) => {}
            _ = poke.recv() => {}
        }
    }
}
