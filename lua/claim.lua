-- rwq script: claim                                RWQ/1 core, SPEC "lease" (blocking)
-- Second step of a blocking lease: the caller has just moved `id` with
-- BLMOVE <P>:queue <P>:processing RIGHT LEFT. Claims it unless it is a ghost, is held by
-- someone else, or a cleaner already moved it back to the queue (then it is not in processing).
-- Profile retry: counts the attempt and dead-letters an item leased too often, as lease does.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV[1]  id           the id BLMOVE returned, 1..512 bytes
-- ARGV[2]  lease_ms     integer, 1..31536000000
-- ARGV[3]  token        the lease token, 1..128 bytes, fresh for every call
-- ARGV[4]  legacy       "1" also writes <P>:leased_by_session:<id>, "0" does not
-- ARGV[5]  flat         "1" (profile flat) moves the claimed id from processing to <P>:in_flight,
--          scored with its lease deadline; "0" leaves it in processing
-- Reply    [1, payload, attempt] claimed (attempt 0 without a retry policy); [0] not claimed
--          (the caller goes back to waiting)
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  claimed: SET <P>:lease:<id> token PX lease_ms (and the legacy key when asked),
--          flat: LREM <P>:processing 1 <id>, ZADD <P>:in_flight (now + lease_ms) <id>,
--          retry: HSET <P>:attempts <id> (attempts + 1);
--          ghost: LREM <P>:processing 1 <id>; held elsewhere: the moved duplicate entry is removed
-- Cost     1 round trip; O(position of id in processing), normally O(1): it was pushed to the head
local queue, processing = KEYS[1], KEYS[2]
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue'
    or processing ~= string.sub(queue, 1, -6) .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing')
end
local id, token = ARGV[1], ARGV[3]
local lease_ms = string.match(ARGV[2] or '', '^[1-9]%d*$') and tonumber(ARGV[2])
if not id or #id == 0 or #id > 512 then return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes') end
if not lease_ms or lease_ms > 31536000000 then return redis.error_reply('RWQ_INVALID_ARGUMENT lease_ms must be an integer in 1..31536000000') end
if not token or #token == 0 or #token > 128 then return redis.error_reply('RWQ_INVALID_ARGUMENT token must be 1..128 bytes') end
if ARGV[4] ~= '0' and ARGV[4] ~= '1' then return redis.error_reply('RWQ_INVALID_ARGUMENT legacy must be 0 or 1') end
if ARGV[5] ~= '0' and ARGV[5] ~= '1' then return redis.error_reply('RWQ_INVALID_ARGUMENT flat must be 0 or 1') end
if #ARGV ~= 5 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected id, lease_ms, token, legacy, flat') end

local prefix = string.sub(queue, 1, -6)
-- Key types (RWQ-SCRIPT-007), before the first write: the first key of `...` that exists with
-- another type than `want`, or nil.
local function mistyped(want, ...)
  for i = 1, select('#', ...) do
    local key = select(i, ...)
    local t = redis.call('TYPE', key).ok
    if t ~= 'none' and t ~= want then return key end
  end
end
-- The retry keys are read and written only while a policy exists.
local bad = mistyped('list', processing)
  or mistyped('string', prefix .. 'item:' .. id, prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
  or mistyped('hash', prefix .. 'policy') or mistyped('zset', prefix .. 'in_flight')
if not bad and redis.call('EXISTS', prefix .. 'policy') == 1 then
  bad = mistyped('hash', prefix .. 'attempts', prefix .. 'dead:data', prefix .. 'dead:info') or mistyped('zset', prefix .. 'dead')
end
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end

local data = redis.call('GET', prefix .. 'item:' .. id)
if not data then
  redis.call('LREM', processing, 1, id)
  return {0}
end
local lease_key, legacy_key = prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id
if redis.call('EXISTS', lease_key, legacy_key) > 0 then
  -- Held by another worker: its entry (in processing, or in <P>:in_flight for a flat lease)
  -- plus ours means two; drop ours. One means a cleaner already took ours back, and the single
  -- entry belongs to the holder.
  if redis.call('ZSCORE', prefix .. 'in_flight', id) or #redis.call('LPOS', processing, id, 'COUNT', 2) == 2 then
    redis.call('LREM', processing, 1, id)
  end
  return {0}
end
if not redis.call('LPOS', processing, id) then
  -- A cleaner requeued it between BLMOVE and this claim: it will be delivered from the queue.
  return {0}
end
-- A count stored by any client: a non-negative integer, anything else reads as 0.
local function stored_int(v)
  local n = string.match(v or '', '^%d+$') and tonumber(v)
  return (n and n <= 1e15) and n or 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local attempt = 0
if redis.call('EXISTS', prefix .. 'policy') == 1 then
  attempt = stored_int(redis.call('HGET', prefix .. 'attempts', id)) + 1
  redis.call('HSET', prefix .. 'attempts', id, attempt)
  local max_attempts = stored_int(redis.call('HGET', prefix .. 'policy', 'max_attempts'))
  if max_attempts > 0 and attempt > max_attempts then
    redis.call('LREM', processing, 1, id)
    redis.call('DEL', prefix .. 'item:' .. id)
    redis.call('HDEL', prefix .. 'attempts', id)
    redis.call('ZADD', prefix .. 'dead', now, id)
    redis.call('HSET', prefix .. 'dead:data', id, data)
    redis.call('HSET', prefix .. 'dead:info', id, cjson.encode({reason = 'max attempts exceeded', attempts = attempt - 1}))
    return {0}
  end
end
redis.call('SET', lease_key, token, 'PX', lease_ms)
if ARGV[4] == '1' then redis.call('SET', legacy_key, token, 'PX', lease_ms) end
if ARGV[5] == '1' then
  redis.call('LREM', processing, 1, id)
  redis.call('ZADD', prefix .. 'in_flight', now + lease_ms, id)
end
return {1, data, attempt}
