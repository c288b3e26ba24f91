-- rwq script: fail                                 RWQ/1 profile retry, SPEC "fail"
-- Records a failed attempt by the lease holder. With attempts left the item is retried after
-- the queue's backoff (in <P>:delayed, or at once when the backoff is 0); when its attempts are
-- used up (attempts >= max_attempts of <P>:policy) it is dead-lettered with the reason.
-- Without a retry policy, fail gives the item back at once, like release.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV[1]  id           1..512 bytes
-- ARGV[2]  token        the caller's lease token, 1..128 bytes
-- ARGV[3]  reason       0..1024 bytes, kept with a dead item
-- ARGV[4]  random       integer 0..999999, uniform, chosen by the client (drives the jitter)
-- Reply    [1, delay_ms] retry scheduled (delay 0: queued at once); [2, 0] dead-lettered;
--          [0, 0] the item no longer exists (its lease keys and a processing entry were cleared);
--          [-1, 0] the item exists and the caller does not hold its lease (nothing changed)
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  DEL both lease keys; ZREM <P>:in_flight <id>, and when it was not there
--          LREM <P>:processing -1 <id>; then LPUSH <P>:queue <id>, or move
--          the payload to <P>:delayed:data and ZADD <P>:delayed due <id>, or move the payload to
--          <P>:dead:data, ZADD <P>:dead now <id>, HSET <P>:dead:info <id> {reason, attempts}
--          and HDEL <P>:attempts <id>
-- Cost     1 round trip; O(log d), plus for a lease not flat the LREM's walk of processing
local queue, processing = KEYS[1] or '', KEYS[2]
local prefix = string.sub(queue, 1, -6)
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue' or processing ~= prefix .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing')
end
local id, token, reason = ARGV[1], ARGV[2], ARGV[3]
local random = string.match(ARGV[4] or '', '^%d+$') and tonumber(ARGV[4])
if #ARGV ~= 4 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected id, token, reason, random') end
if #id == 0 or #id > 512 then return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes') end
if #token == 0 or #token > 128 then return redis.error_reply('RWQ_INVALID_ARGUMENT token must be 1..128 bytes') end
if #reason > 1024 then return redis.error_reply('RWQ_INVALID_ARGUMENT reason must be at most 1024 bytes') end
if not random or random > 999999 then return redis.error_reply('RWQ_INVALID_ARGUMENT random must be an integer in 0..999999') end

local lease_key, item_key = prefix .. 'lease:' .. id, prefix .. 'item:' .. id
-- Key types (RWQ-SCRIPT-007), before the first write: the first key of `...` that exists with
-- another type than `want`, or nil.
local function mistyped(want, ...)
  for i = 1, select('#', ...) do
    local key = select(i, ...)
    local t = redis.call('TYPE', key).ok
    if t ~= 'none' and t ~= want then return key end
  end
end
local bad = mistyped('list', queue, processing) or mistyped('zset', prefix .. 'in_flight')
  or mistyped('string', item_key, lease_key, prefix .. 'leased_by_session:' .. id)
  or mistyped('hash', prefix .. 'policy', prefix .. 'attempts', prefix .. 'delayed:data', prefix .. 'dead:data', prefix .. 'dead:info')
  or mistyped('zset', prefix .. 'delayed', prefix .. 'dead')
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end
local data = redis.call('GET', item_key)
if data and redis.call('GET', lease_key) ~= token then return {-1, 0} end

-- Decide everything before the first write: a script that errors is not rolled back.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- A count stored by any client: a non-negative integer, anything else reads as 0.
local function stored_int(v)
  local n = string.match(v or '', '^%d+$') and tonumber(v)
  return (n and n <= 1e15) and n or 0
end
local policy = {}
local flat = redis.call('HGETALL', prefix .. 'policy')
for i = 1, #flat, 2 do policy[flat[i]] = flat[i + 1] end
local attempts = stored_int(redis.call('HGET', prefix .. 'attempts', id))
local max_attempts = stored_int(policy.max_attempts)
local dead = max_attempts > 0 and attempts >= max_attempts
local delay = math.min(stored_int(policy.base_ms), 31536000000)
if policy.backoff == 'exponential' then
  -- 2^40 keeps the product finite (no inf or NaN) and is past any cap.
  delay = delay * 2 ^ math.min(math.max(attempts - 1, 0), 40)
  local cap = stored_int(policy.cap_ms)
  if cap > 0 and delay > cap then delay = cap end
end
delay = math.min(delay, 31536000000)
delay = delay - math.floor(delay * math.min(stored_int(policy.jitter_pct), 100) * random / 100000000)
local info = cjson.encode({reason = reason, attempts = attempts})

redis.call('DEL', lease_key, prefix .. 'leased_by_session:' .. id)
if redis.call('ZREM', prefix .. 'in_flight', id) == 0 then redis.call('LREM', processing, -1, id) end
if not data then return {0, 0} end
if dead then
  redis.call('DEL', item_key)
  redis.call('HDEL', prefix .. 'attempts', id)
  redis.call('ZADD', prefix .. 'dead', now, id)
  redis.call('HSET', prefix .. 'dead:data', id, data)
  redis.call('HSET', prefix .. 'dead:info', id, info)
  return {2, 0}
end
if delay <= 0 then
  redis.call('LPUSH', queue, id)
  return {1, 0}
end
redis.call('HSET', prefix .. 'delayed:data', id, data)
redis.call('DEL', item_key)
redis.call('ZADD', prefix .. 'delayed', now + delay, id)
return {1, delay}
