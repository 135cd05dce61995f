//! The lock's Lua scripts: each checks the lock's value in the same script as its write, so only
//! the current grant can renew, release or write a fenced record. Named, loaded once, run with
//! EVALSHA by [`crate::Cluster`].

use redis::Script;

const ACQUIRE: &str = r"
-- KEYS: lock, fence, want, fenced; ARGV: owner, ttl_ms, fence_ttl_ms, mode, want_ttl_ms
local mode = ARGV[4]
if mode == 'new' then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[5])
elseif mode == 'retry' then
  local w = redis.call('GET', KEYS[3])
  if w and w ~= ARGV[1] then return {2, w} end
end
local cur = redis.call('GET', KEYS[1])
if cur then return {0, cur} end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local seed = redis.call('HGET', KEYS[4], 'fence')
  if seed then redis.call('SET', KEYS[2], seed) end
end
local fence = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
local val = ARGV[1] .. '|' .. fence
redis.call('SET', KEYS[1], val, 'PX', ARGV[2])
return {1, val}
";

const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end
return 0
";

const RELEASE_OWNER: &str = r"
-- KEYS: lock, released channel; ARGV: owner (without the fence)
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[2], v)
  return 1
end
return 0
";

const WRITE_FENCED: &str = r"
-- KEYS: lock, fenced; ARGV: value, fence, ttl_ms, field, value, ...
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], 'fence', ARGV[2])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
";

pub(super) struct Scripts {
    /// Takes the lock (new, retrying or trying), the fence from the counter.
    pub(super) acquire: Script,
    /// Extends the lease of the current grant.
    pub(super) renew: Script,
    /// Deletes the lock of the current grant and publishes the release notice.
    pub(super) release: Script,
    /// Deletes a lock granted to an owner regardless of its fence (an orphan of a timed-out
    /// attempt).
    pub(super) release_owner: Script,
    /// Writes the fenced record if the grant still holds the lock.
    pub(super) write_fenced: Script,
}

pub(super) fn scripts() -> &'static Scripts {
    static SCRIPTS: std::sync::OnceLock<Scripts> = std::sync::OnceLock::new();
    SCRIPTS.get_or_init(|| Scripts {
        acquire: Script::new(ACQUIRE),
        renew: Script::new(RENEW),
        release: Script::new(RELEASE),
        release_owner: Script::new(RELEASE_OWNER),
        write_fenced: Script::new(WRITE_FENCED),
    })
}
