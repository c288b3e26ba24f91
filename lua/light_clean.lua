-- rwq script: light_clean                          RWQ/1 core, SPEC "light_clean"
-- Examines one bounded chunk of the processing list, oldest entries first, and puts abandoned
-- items (item key present, neither lease key present) back in the queue; ghost entries (no
-- item key) are dropped. A client cleans the whole list by calling again with the returned
-- cursor until it is -1.
-- Profile retry: an abandoned item counts as a failed attempt; one whose attempts are used up
-- (attempts >= max_attempts of <P>:policy) is dead-lettered ("lease expired") instead.
-- Profile delay: first moves up to `max` due delayed items to the queue.
-- Profile flat: every call also examines up to `max` entries of <P>:in_flight whose lease
-- deadline (the score) has passed: a lease still held (renewed) is rescored with its deadline,
-- a ghost is dropped, an abandoned item is requeued (or dead-lettered) as from processing.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV[1]  cursor       integer >= 0: entries counted from the oldest end already examined and kept
-- ARGV[2]  max          integer, 1..1000: entries to examine in this call
-- ARGV[3]  pace_ms      optional integer, 0..31536000000: with cursor 0, start a pass only if none
--          started within pace_ms (<P>:cleaned), so that a fleet of cleaners walks the list
--          once per pace_ms however many they are; 0 or absent: no pacing
-- Reply    [next_cursor, [requeued id, ...], dropped_ghosts, [dead-lettered id, ...], promoted];
--          next_cursor = -1 once the newest entry has been examined and fewer than `max` expired
--          <P>:in_flight entries were found, or at once (nothing done) when a paced pass is
--          not due
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  abandoned: LREM <P>:processing -1 <id> then LPUSH <P>:queue <id> (or dead-letter:
--          payload to <P>:dead:data, ZADD <P>:dead, HSET <P>:dead:info, HDEL <P>:attempts);
--          ghost: LREM <P>:processing -1 <id>; for <P>:in_flight entries ZREM instead of LREM,
--          and ZADD <P>:in_flight (now + PTTL, at least 1000) <id> for one still held;
--          promotion as in lease; a paced pass that starts:
--          SET <P>:cleaned <now> PX pace_ms
-- Cost     1 round trip per chunk; O(cursor + max) list walking plus O(1) per entry, plus
--          O(log n) per expired <P>:in_flight entry
local queue, processing = KEYS[1] or '', KEYS[2]
local prefix = string.sub(queue, 1, -6)
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue' or processing ~= prefix .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing')
end
local cursor = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
local max = string.match(ARGV[2] or '', '^[1-9]%d*$') and tonumber(ARGV[2])
if not cursor or cursor > 4294967295 then return redis.error_reply('RWQ_INVALID_ARGUMENT cursor must be an integer in 0..4294967295') end
if not max or max > 1000 then return redis.error_reply('RWQ_INVALID_ARGUMENT max must be an integer in 1..1000') end
local pace = ARGV[3] == nil and 0 or (string.match(ARGV[3], '^%d+$') and tonumber(ARGV[3]))
if not pace or pace > 31536000000 then return redis.error_reply('RWQ_INVALID_ARGUMENT pace_ms must be an integer in 0..31536000000') end
if #ARGV ~= 2 and #ARGV ~= 3 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected cursor, max[, pace_ms]') end
local gate = (pace > 0 and cursor == 0) and prefix .. 'cleaned' or nil

-- A count stored by any client: a non-negative integer, anything else reads as 0.
local function stored_int(v)
  local n = string.match(v or '', '^%d+$') and tonumber(v)
  return (n and n <= 1e15) and n or 0
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local delayed, promoted = prefix .. 'delayed', 0
-- Key types (RWQ-SCRIPT-007), before the first write: the first key of `...` that exists with
-- another type than `want`, or nil.
local function mistyped(want, ...)
  for i = 1, select('#', ...) do
    local key = select(i, ...)
    local t = redis.call('TYPE', key).ok
    if t ~= 'none' and t ~= want then return key end
  end
end
if gate then
  if mistyped('string', gate) then
    return redis.error_reply('RWQ_WRONG_TYPE ' .. gate .. ' holds another Redis type than SPEC 3 gives it')
  end
  if redis.call('EXISTS', gate) == 1 then return {-1, {}, 0, {}, 0} end -- a pass started within pace_ms
end
local in_flight = prefix .. 'in_flight'
local bad = mistyped('list', queue, processing) or mistyped('zset', delayed, prefix .. 'dead', in_flight)
  or mistyped('hash', delayed .. ':data', prefix .. 'policy', prefix .. 'attempts', prefix .. 'dead:data', prefix .. 'dead:info')
-- Both the due ids and the chunk are read before the first write (promotion does not touch
-- processing), so that every item's keys are checked first.
local due_ids = not bad and redis.call('EXISTS', delayed) == 1
  and redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, max) or {}
local ids = bad and {} or redis.call('LRANGE', processing, -(cursor + max), -(cursor + 1))
local expired = bad and {} or redis.call('ZRANGEBYSCORE', in_flight, '-inf', now, 'LIMIT', 0, max)
for _, list in ipairs({due_ids, ids, expired}) do
  for _, id in ipairs(list) do
    bad = bad or mistyped('string', prefix .. 'item:' .. id, prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
  end
end
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end

if gate then redis.call('SET', gate, now, 'PX', pace) end
if #due_ids > 0 then
  for _, id in ipairs(due_ids) do
    local data = redis.call('HGET', delayed .. ':data', id)
    if data and redis.call('SET', prefix .. 'item:' .. id, data, 'NX') then
      redis.call('DEL', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
      redis.call('LPUSH', queue, id)
      promoted = promoted + 1
    end
    redis.call('ZREM', delayed, id)
    redis.call('HDEL', delayed .. ':data', id)
  end
end
local max_attempts = stored_int(redis.call('HGET', prefix .. 'policy', 'max_attempts'))

local requeued, buried, dropped, kept = {}, {}, 0, 0
-- An abandoned item, its entry already removed: requeued, or dead-lettered when its attempts
-- are used up.
local function recover(id, item_key)
  local attempts = stored_int(redis.call('HGET', prefix .. 'attempts', id))
  if max_attempts > 0 and attempts >= max_attempts then
    redis.call('ZADD', prefix .. 'dead', now, id)
    redis.call('HSET', prefix .. 'dead:data', id, redis.call('GET', item_key))
    redis.call('HSET', prefix .. 'dead:info', id, cjson.encode({reason = 'lease expired', attempts = attempts}))
    redis.call('HDEL', prefix .. 'attempts', id)
    redis.call('DEL', item_key)
    buried[#buried + 1] = id
  else
    redis.call('LPUSH', queue, id)
    requeued[#requeued + 1] = id
  end
end
for i = #ids, 1, -1 do
  local id = ids[i]
  local item_key = prefix .. 'item:' .. id
  if redis.call('EXISTS', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id) > 0 then
    kept = kept + 1
  else
    redis.call('LREM', processing, -1, id)
    if redis.call('EXISTS', item_key) == 0 then dropped = dropped + 1 else recover(id, item_key) end
  end
end
for _, id in ipairs(expired) do
  local item_key = prefix .. 'item:' .. id
  local ttl = math.max(redis.call('PTTL', prefix .. 'lease:' .. id), redis.call('PTTL', prefix .. 'leased_by_session:' .. id))
  if ttl ~= -2 then
    -- Still held (renewed, or a lease without a time to live): look again at its deadline.
    redis.call('ZADD', in_flight, now + math.max(ttl, 1000), id)
  else
    redis.call('ZREM', in_flight, id)
    if redis.call('EXISTS', item_key) == 0 then dropped = dropped + 1 else recover(id, item_key) end
  end
end
local next_cursor = -1
if #ids == max or #expired == max then next_cursor = cursor + kept end
return {next_cursor, requeued, dropped, buried, promoted}
