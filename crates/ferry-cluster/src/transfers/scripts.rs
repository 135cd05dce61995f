//! The registry's Lua scripts: each owner write checks the record's owner and epoch in the same
//! script, so a zombie owner can never overwrite its successor. Named, loaded once, run with
//! EVALSHA by [`crate::Cluster`].

use redis::Script;

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

pub(super) struct Scripts {
    pub(super) register: Script,
    pub(super) heartbeat: Script,
    pub(super) write: Script,
    pub(super) finish: Script,
    pub(super) hand_over: Script,
    pub(super) claim: Script,
    pub(super) control: Script,
}

pub(super) fn scripts() -> &'static Scripts {
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
