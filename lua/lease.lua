-- rwq script: lease                                RWQ/1 core, SPEC "lease" and "lease_many"
-- Leases up to `count` ready items without blocking. Ghost ids (no item key) are removed and
-- skipped; an id whose lease is held by someone else is skipped, and its moved entry removed
-- unless it is that item's only entry in processing.
-- Profile delay: first moves up to 100 due delayed items to the queue.
-- Profile retry: when <P>:policy exists, counts the attempt in <P>:attempts; an item leased more
-- than max_attempts times goes to the dead-letter set instead ("max attempts exceeded").
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV[1]  lease_ms     integer, 1..31536000000
-- ARGV[2]  token        the lease token, 1..128 bytes, fresh for every call
-- ARGV[3]  count        integer, 1..1000
-- ARGV[4]  legacy       "1" also writes <P>:leased_by_session:<id>, "0" does not
-- ARGV[5]  flat         "1" (profile flat): a leased id goes to <P>:in_flight, scored with its
--          lease deadline, instead of <P>:processing; "0": to <P>:processing
-- Reply    [again, now_ms, due_in_ms, [id, payload, attempt], ...] in lease order, where
--          again = 1 when the call stopped after skipping 1000 entries (call again), else 0;
--          now_ms = the server's time; due_in_ms = ms until the next delayed item is due, -1 if
--          none; attempt = this lease's attempt number, 0 when the queue has no retry policy
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  per leased item: LMOVE <P>:queue <P>:processing RIGHT LEFT (flat: RPOP <P>:queue,
--          ZADD <P>:in_flight (now + lease_ms) <id>);
--          SET <P>:lease:<id> token PX lease_ms (and the legacy key when asked);
--          retry: HSET <P>:attempts <id> (attempts + 1); delay: see "promotion" in SPEC
-- Cost     1 round trip; O(count + skipped + promoted)
local queue, processing = KEYS[1] or '', KEYS[2]
local prefix = string.sub(queue, 1, -6)
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue' or processing ~= prefix .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing')
end
local function int_arg(v, lo, hi)
  local n = string.match(v or '', '^[1-9]%d*$') and tonumber(v)
  if n and n >= lo and n <= hi then return n end
end
local lease_ms = int_arg(ARGV[1], 1, 31536000000)
local token, count = ARGV[2], int_arg(ARGV[3], 1, 1000)
if not lease_ms then return redis.error_reply('RWQ_INVALID_ARGUMENT lease_ms must be an integer in 1..31536000000') end
if not token or #token == 0 or #token > 128 then return redis.error_reply('RWQ_INVALID_ARGUMENT token must be 1..128 bytes') end
if not count then return redis.error_reply('RWQ_INVALID_ARGUMENT count must be an integer in 1..1000') end
if ARGV[4] ~= '0' and ARGV[4] ~= '1' then return redis.error_reply('RWQ_INVALID_ARGUMENT legacy must be 0 or 1') end
if ARGV[5] ~= '0' and ARGV[5] ~= '1' then return redis.error_reply('RWQ_INVALID_ARGUMENT flat must be 0 or 1') end
if #ARGV ~= 5 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected lease_ms, token, count, legacy, flat') end
-- rwq:arguments-valid (no write above this line; tools/generate.py composes scripts here)

-- A count stored by any client: a non-negative integer, anything else reads as 0.
local function stored_int(v)
  local n = string.match(v or '', '^%d+$') and tonumber(v)
  return (n and n <= 1e15) and n or 0
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local delayed, policy, in_flight = prefix .. 'delayed', prefix .. 'policy', prefix .. 'in_flight'
-- Key types (RWQ-SCRIPT-007), before the first write: the first key of `...` that exists with
-- another type than `want`, or nil.
local function mistyped(want, ...)
  for i = 1, select('#', ...) do
    local key = select(i, ...)
    local t = redis.call('TYPE', key).ok
    if t ~= 'none' and t ~= want then return key end
  end
end
local function item_mistyped(id)
  return mistyped('string', prefix .. 'item:' .. id, prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
end
local bad = mistyped('list', queue, processing) or mistyped('zset', delayed, in_flight) or mistyped('hash', policy)
-- One call answers the common case, a queue with neither profile key.
local extended = not bad and redis.call('EXISTS', delayed, policy) > 0
local promoting = extended and redis.call('EXISTS', delayed) == 1
local counting = extended and redis.call('EXISTS', policy) == 1
local max_attempts = counting and stored_int(redis.call('HGET', policy, 'max_attempts')) or 0
if promoting then bad = mistyped('hash', delayed .. ':data') end
if counting then
  bad = bad or mistyped('hash', prefix .. 'attempts', prefix .. 'dead:data', prefix .. 'dead:info')
    or mistyped('zset', prefix .. 'dead')
end
local due_ids = promoting and redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 100) or {}
for _, id in ipairs(due_ids) do bad = bad or item_mistyped(id) end
-- The queue entries the loop below will examine, walked from the tail as it will walk them
-- (promoted ids, pushed at the head, come after them and were checked above). An id that
-- complete_and_lease completes first will be a ghost, never granted: the walk goes past it.
local will_complete = {} -- rwq:completing (tools/compose_lua.py passes complete's ids here)
local consumed, will_grant, will_skip, seen = {}, 0, 0, 0
while not bad and will_grant < count and will_skip < 1000 do
  local size = seen == 0 and count or 100
  local page = redis.call('LRANGE', queue, -(seen + size), -(seen + 1))
  for j = #page, 1, -1 do
    local id = page[j]
    bad = item_mistyped(id)
    if bad then break end
    if not consumed[id] and not will_complete[id] and redis.call('EXISTS', prefix .. 'item:' .. id) == 1
        and redis.call('EXISTS', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id) == 0 then
      consumed[id] = true
      local attempt = counting and stored_int(redis.call('HGET', prefix .. 'attempts', id)) + 1 or 0
      if max_attempts > 0 and attempt > max_attempts then will_skip = will_skip + 1 else will_grant = will_grant + 1 end
    else
      will_skip = will_skip + 1
    end
    if will_grant >= count or will_skip >= 1000 then break end
  end
  if #page < size then break end
  seen = seen + size
end
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end
-- rwq:keys-checked (no error reply below this line: the composite's bodies run after both checks)

local due_in = -1
if promoting then
  for _, id in ipairs(due_ids) do
    local data = redis.call('HGET', delayed .. ':data', id)
    if data and redis.call('SET', prefix .. 'item:' .. id, data, 'NX') then
      redis.call('DEL', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
      redis.call('LPUSH', queue, id)
    end
    redis.call('ZREM', delayed, id)
    redis.call('HDEL', delayed .. ':data', id)
  end
  local next_due = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')[2]
  if next_due then due_in = math.max(tonumber(next_due) - now, 0) end
end

local result, skipped, flat = {0, now, due_in}, 0, ARGV[5] == '1'
while #result - 3 < count do
  local id
  if flat then id = redis.call('RPOP', queue) else id = redis.call('LMOVE', queue, processing, 'RIGHT', 'LEFT') end
  if not id then break end
  local item_key = prefix .. 'item:' .. id
  local data = redis.call('GET', item_key)
  local lease_key, legacy_key = prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id
  local granted = false
  if data and redis.call('EXISTS', lease_key, legacy_key) == 0 then
    local attempt = 0
    if counting then
      attempt = stored_int(redis.call('HGET', prefix .. 'attempts', id)) + 1
      redis.call('HSET', prefix .. 'attempts', id, attempt)
    end
    if max_attempts > 0 and attempt > max_attempts then
      -- Leased too often without a recorded failure (crashes, foreign cleaners): dead-letter it.
      if not flat then redis.call('LREM', processing, 1, id) end
      redis.call('DEL', item_key)
      redis.call('HDEL', prefix .. 'attempts', id)
      redis.call('ZADD', prefix .. 'dead', now, id)
      redis.call('HSET', prefix .. 'dead:data', id, data)
      redis.call('HSET', prefix .. 'dead:info', id, cjson.encode({reason = 'max attempts exceeded', attempts = attempt - 1}))
    else
      redis.call('SET', lease_key, token, 'PX', lease_ms)
      if ARGV[4] == '1' then redis.call('SET', legacy_key, token, 'PX', lease_ms) end
      if flat then redis.call('ZADD', in_flight, now + lease_ms, id) end
      result[#result + 1] = {id, data, attempt}
      granted = true
    end
  elseif flat then
    -- Popped: a ghost's entry is gone. A held item keeps one entry: ours goes to processing
    -- when its holder has none (a cleaner may have requeued it inside a foreign client's
    -- non-atomic lease, whose holder still needs it in processing to complete).
    if data and not redis.call('ZSCORE', in_flight, id) and not redis.call('LPOS', processing, id) then
      redis.call('LPUSH', processing, id)
    end
  elseif not data or redis.call('ZSCORE', in_flight, id) or #redis.call('LPOS', processing, id, 'COUNT', 2) == 2 then
    -- A ghost, or a duplicate entry of an item someone holds (its entry in processing, or in
    -- <P>:in_flight for a flat lease): drop the entry just moved. The only entry of a held item
    -- stays: a cleaner may have requeued it inside a foreign client's non-atomic lease, whose
    -- holder still needs it in processing to complete.
    redis.call('LREM', processing, 1, id)
  end
  if not granted then
    skipped = skipped + 1
    if skipped >= 1000 then
      result[1] = 1
      break
    end
  end
end
return result
