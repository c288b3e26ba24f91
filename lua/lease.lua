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
-- Effects  per leased item: the id from the right of <P>:queue to the left of <P>:processing (as
--          LMOVE RIGHT LEFT would; flat: ZADD <P>:in_flight (now + lease_ms) <id> instead);
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
local function key_type(key) return redis.call('TYPE', key).ok end
-- The first of an id's three string keys that holds another type, given their types (or read).
local function item_mistyped(id, item_type, lease_type, legacy_type)
  local names = {'item:', 'lease:', 'leased_by_session:'}
  local types = {item_type, lease_type, legacy_type}
  for i = 1, 3 do
    local t = types[i] or key_type(prefix .. names[i] .. id)
    if t ~= 'none' and t ~= 'string' then return prefix .. names[i] .. id end
  end
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
-- free[id]: the walk found neither lease key of id. Nothing before the loop below creates one
-- (promotion and the composite's complete only delete them), so the loop trusts it.
-- payload[id]: the item the walk read; the loop uses it once (an id completed first is left out:
-- the composite deletes its item before the loop).
local consumed, free, payload, will_grant, will_skip, seen = {}, {}, {}, 0, 0, 0
while not bad and will_grant < count and will_skip < 1000 do
  local size = seen == 0 and count or 100
  local page = redis.call('LRANGE', queue, -(seen + size), -(seen + 1))
  for j = #page, 1, -1 do
    local id = page[j]
    -- TYPE both checks a key and tells whether it exists ('none'); for the item, GET does both
    -- (it refuses another type) and reads the payload the loop will reply with.
    local data = redis.pcall('GET', prefix .. 'item:' .. id)
    local item_type = type(data) == 'table' and 'other' or (data and 'string' or 'none')
    local lease_type, legacy_type = key_type(prefix .. 'lease:' .. id), key_type(prefix .. 'leased_by_session:' .. id)
    bad = item_mistyped(id, item_type, lease_type, legacy_type)
    if bad then break end
    free[id] = lease_type == 'none' and legacy_type == 'none'
    if data and not will_complete[id] then payload[id] = data end
    if not consumed[id] and not will_complete[id] and item_type == 'string' and lease_type == 'none' and legacy_type == 'none' then
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

-- Entries are popped a batch at a time; those that stay in flight are pushed once at the end, in
-- pop order, which leaves processing as one LMOVE per entry would. `entered` marks the ids this
-- call gave an entry, which the checks below count as entries already there.
local result, skipped, flat = {0, now, due_in}, 0, ARGV[5] == '1'
local to_processing, to_in_flight, entered = {}, {}, {}
while #result - 3 < count and skipped < 1000 do
  local popped = redis.call('RPOP', queue, math.min(count - (#result - 3), 1000 - skipped))
  if not popped then break end
  for _, id in ipairs(popped) do
    local item_key = prefix .. 'item:' .. id
    local data = payload[id] or redis.call('GET', item_key)
    payload[id] = nil
    local lease_key, legacy_key = prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id
    local granted = false
    local held = entered[id] or not free[id] and redis.call('EXISTS', lease_key, legacy_key) > 0
    if data and not held then
      local attempt = 0
      if counting then
        attempt = stored_int(redis.call('HGET', prefix .. 'attempts', id)) + 1
        redis.call('HSET', prefix .. 'attempts', id, attempt)
      end
      if max_attempts > 0 and attempt > max_attempts then
        -- Leased too often without a recorded failure (crashes, foreign cleaners): dead-letter it.
        redis.call('DEL', item_key)
        redis.call('HDEL', prefix .. 'attempts', id)
        redis.call('ZADD', prefix .. 'dead', now, id)
        redis.call('HSET', prefix .. 'dead:data', id, data)
        redis.call('HSET', prefix .. 'dead:info', id, cjson.encode({reason = 'max attempts exceeded', attempts = attempt - 1}))
      else
        redis.call('SET', lease_key, token, 'PX', lease_ms)
        if ARGV[4] == '1' then redis.call('SET', legacy_key, token, 'PX', lease_ms) end
        if flat then to_in_flight[#to_in_flight + 1] = id else to_processing[#to_processing + 1] = id end
        entered[id] = true
        result[#result + 1] = {id, data, attempt}
        granted = true
      end
    elseif data and not entered[id] and not redis.call('ZSCORE', in_flight, id) and not redis.call('LPOS', processing, id) then
      -- Held, and its holder has no entry (in processing, or in <P>:in_flight for a flat
      -- lease): a cleaner requeued it inside a foreign client's non-atomic lease, whose holder
      -- still needs it in processing to complete. Any other entry (a ghost's, a duplicate of a
      -- held item's) is dropped.
      to_processing[#to_processing + 1] = id
      entered[id] = true
    end
    if not granted then skipped = skipped + 1 end
  end
end
if skipped >= 1000 then result[1] = 1 end
if #to_processing > 0 then redis.call('LPUSH', processing, unpack(to_processing)) end
if #to_in_flight > 0 then
  local scored = {}
  for i, id in ipairs(to_in_flight) do scored[2 * i - 1], scored[2 * i] = now + lease_ms, id end
  redis.call('ZADD', in_flight, unpack(scored))
end
return result
