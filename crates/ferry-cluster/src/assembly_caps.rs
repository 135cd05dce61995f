//! [`RedisCaps`]: ferry-process's [`SharedCaps`] in Redis, so `--assembly-max-active-per-client`,
//! `--assembly-max-per-client` and `--assembly-max-disk` hold for the whole fleet rather than
//! per instance.
//!
//! Per client, under one hash tag (`{cap:<client>}`, so the script stays legal on Redis Cluster):
//! `active`, a sorted set of its Assemblies in progress scored by when their lease ends, and
//! `win`, its creations in the current window (a counter that expires with the window). The
//! admission is one script: lapsed leases are dropped, both caps are checked, and only then is
//! the Assembly counted, so two instances admitting at once can never both take the last place.
//! A lease lasts two `--transfer-takeover` windows: a run of a dead instance is taken over within
//! about 1.25 windows and renewed by its new owner before it can lapse, while an Assembly only
//! the dead instance knew (still uploading) stops counting after two windows.
//!
//! For the disk, under `{cap:disk}`: `bytes`, each Assembly's bytes as last reported, and
//! `total`, their sum, kept by the same script that changes a figure. Every key expires, so
//! nothing stays behind once the fleet goes quiet.

use std::io;
use std::time::Duration;

use async_trait::async_trait;
use ferry_process::Quotas;
use ferry_process::id::Id;
use ferry_process::upkeep::shared::{Held, Refusal, SharedCaps};
use redis::Script;

use crate::clock::{ms, now_ms};
use crate::cluster::{Cluster, ToRedisArgsDyn};

const ADMIT: &str = r"
-- KEYS: active, win; ARGV: id, now, lease_ms, max_active, max_window, window_ms
local now = tonumber(ARGV[2])
local max_active = tonumber(ARGV[4])
local max_window = tonumber(ARGV[5])
if max_active > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    local n = redis.call('ZCARD', KEYS[1])
    if n >= max_active then return {1, n} end
  end
end
if max_window > 0 then
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl <= 0 then
    redis.call('SET', KEYS[2], 0, 'PX', ARGV[6])
  elseif tonumber(redis.call('GET', KEYS[2])) >= max_window then
    return {2, ttl}
  end
  redis.call('INCR', KEYS[2])
end
if max_active > 0 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return {0, 0}
";

const SET_BYTES: &str = r"
-- KEYS: bytes (hash: Assembly id -> bytes), total; ARGV: keep_ms, then id, bytes pairs
for i = 2, #ARGV, 2 do
  local old = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  local new = tonumber(ARGV[i + 1])
  if new == 0 then
    redis.call('HDEL', KEYS[1], ARGV[i])
  else
    redis.call('HSET', KEYS[1], ARGV[i], new)
  end
  redis.call('INCRBY', KEYS[2], new - old)
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return tonumber(redis.call('GET', KEYS[2]) or '0')
";

struct Scripts {
    admit: Script,
    set_bytes: Script,
}

fn scripts() -> &'static Scripts {
    static SCRIPTS: std::sync::OnceLock<Scripts> = std::sync::OnceLock::new();
    SCRIPTS.get_or_init(|| Scripts {
        admit: Script::new(ADMIT),
        set_bytes: Script::new(SET_BYTES),
    })
}

/// The fleet's per-client Assembly counts.
#[derive(Debug, Clone)]
pub struct RedisCaps {
    cluster: Cluster,
}

impl RedisCaps {
    /// Over `cluster` (the Assemblies' own, `{prefix}asm:`).
    pub fn new(cluster: &Cluster) -> Self {
        Self {
            cluster: cluster.clone(),
        }
    }

    fn key(&self, client: &str, suffix: &str) -> String {
        format!("{}{{cap:{client}}}:{suffix}", self.cluster.config().prefix)
    }
}

fn io_error(e: &crate::ClusterError) -> io::Error {
    io::Error::other(e.to_string())
}

#[async_trait]
impl SharedCaps for RedisCaps {
    async fn admit(
        &self,
        client: &str,
        id: &Id,
        quotas: &Quotas,
    ) -> io::Result<Result<(), Refusal>> {
        let (active, win) = (self.key(client, "active"), self.key(client, "win"));
        let max_window = if quotas.window.is_zero() {
            0
        } else {
            quotas.max_per_window
        };
        let (refused, n): (i64, u64) = self
            .cluster
            .eval(
                &scripts().admit,
                &[&active, &win],
                &[
                    &id.as_str(),
                    &now_ms(),
                    &ms(self.lease()),
                    &quotas.max_active_per_client,
                    &max_window,
                    &ms(quotas.window),
                ],
            )
            .await
            .map_err(|e| io_error(&e))?;
        Ok(match refused {
            0 => Ok(()),
            1 => Err(Refusal::Active(usize::try_from(n).unwrap_or(usize::MAX))),
            _ => Err(Refusal::Window(n)),
        })
    }

    async fn renew(&self, held: &[Held]) -> io::Result<()> {
        let until = now_ms().saturating_add(ms(self.lease()));
        let mut pipe = redis::pipe();
        for h in held {
            let key = self.key(&h.client, "active");
            pipe.cmd("ZADD")
                .arg(&key)
                .arg(until)
                .arg(h.id.as_str())
                .ignore();
            pipe.cmd("PEXPIRE").arg(&key).arg(ms(self.lease())).ignore();
        }
        self.cluster.pipe(&pipe).await.map_err(|e| io_error(&e))
    }

    async fn release(&self, ended: &[Held]) -> io::Result<()> {
        let mut pipe = redis::pipe();
        for h in ended {
            pipe.cmd("ZREM")
                .arg(self.key(&h.client, "active"))
                .arg(h.id.as_str())
                .ignore();
        }
        self.cluster.pipe(&pipe).await.map_err(|e| io_error(&e))
    }

    fn lease(&self) -> Duration {
        self.cluster.config().transfer_takeover * 2
    }

    async fn set_bytes(&self, bytes: &[(Id, u64)], keep: Duration) -> io::Result<u64> {
        let (hash, total) = (self.key("disk", "bytes"), self.key("disk", "total"));
        let keep = ms(keep);
        let ids: Vec<&str> = bytes.iter().map(|(id, _)| id.as_str()).collect();
        let mut args: Vec<&dyn ToRedisArgsDyn> = vec![&keep];
        for (id, (_, n)) in ids.iter().zip(bytes) {
            args.push(id);
            args.push(n);
        }
        let total: i64 = self
            .cluster
            .eval(&scripts().set_bytes, &[&hash, &total], &args)
            .await
            .map_err(|e| io_error(&e))?;
        Ok(u64::try_from(total).unwrap_or(0))
    }

    async fn total_bytes(&self) -> io::Result<u64> {
        let total: Option<i64> = self
            .cluster
            .query(redis::cmd("GET").arg(self.key("disk", "total")))
            .await
            .map_err(|e| io_error(&e))?;
        Ok(total.and_then(|t| u64::try_from(t).ok()).unwrap_or(0))
    }
}
