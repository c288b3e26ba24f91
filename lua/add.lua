-- rwq script: add                                  RWQ/1 core, SPEC "add" and "add_many"
-- Adds items, idempotently by id: an id that is live (item key), delayed or dead is left
-- untouched. Profile delay: with delay_ms > 0 the items wait in <P>:delayed until due.
-- KEYS[1]  <P>:queue
-- ARGV[1]  delay_ms     integer, 0..31536000000 (0: ready at once)
-- ARGV     id_1, payload_1, ..., id_n, payload_n from ARGV[2]     1 <= n <= 1000
--          id: UTF-8, 1..512 bytes; payload: any bytes
-- Reply    array of n integers: 1 = added, 0 = an item with that id already exists
--          (a repeated id within one call is added once and reported 0 the second time)
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  delay 0: SET <P>:item:<id> payload NX for each pair (deleting any stale lease keys
--          of that id), then one LPUSH of the added ids in argument order, so the first pair is
--          leased first;
--          delay > 0: ZADD <P>:delayed (now + delay_ms) <id>, HSET <P>:delayed:data <id> payload
-- Cost     1 round trip; O(n) (O(n log d) with d delayed items)
local queue = KEYS[1]
if #KEYS ~= 1 or string.sub(queue, -6) ~= ':queue' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue')
end
local delay_ms = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not delay_ms or delay_ms > 31536000000 then
  return redis.error_reply('RWQ_INVALID_ARGUMENT delay_ms must be an integer in 0..31536000000')
end
local n = (#ARGV - 1) / 2
if n < 1 or n > 1000 or #ARGV % 2 ~= 1 then
  return redis.error_reply('RWQ_INVALID_ARGUMENT expected 1..1000 id/payload pairs')
end

-- Second bytes allowed after each UTF-8 lead byte (RFC 3629: no overlongs, no surrogates).
local function utf8_ok(s)
  local i, len = 1, #s
  while i <= len do
    local c = string.byte(s, i)
    local extra, lo, hi = 0, 0x80, 0xBF
    if c < 0x80 then extra = 0
    elseif c >= 0xC2 and c <= 0xDF then extra = 1
    elseif c == 0xE0 then extra, lo = 2, 0xA0
    elseif c == 0xED then extra, hi = 2, 0x9F
    elseif c >= 0xE1 and c <= 0xEF then extra = 2
    elseif c == 0xF0 then extra, lo = 3, 0x90
    elseif c == 0xF4 then extra, hi = 3, 0x8F
    elseif c >= 0xF1 and c <= 0xF3 then extra = 3
    else return false end
    for k = 1, extra do
      local b = string.byte(s, i + k)
      if not b or b < lo or b > hi then return false end
      lo, hi = 0x80, 0xBF
    end
    i = i + extra + 1
  end
  return true
end

for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  if #id == 0 or #id > 512 then
    return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes')
  end
  if string.find(id, '[\128-\255]') and not utf8_ok(id) then
    return redis.error_reply('RWQ_INVALID_ARGUMENT id must be valid UTF-8')
  end
end

local prefix = string.sub(queue, 1, -6)
local delayed, dead = prefix .. 'delayed', prefix .. 'dead'
-- Key types (RWQ-SCRIPT-007), before the first write: the first key of `...` that exists with
-- another type than `want`, or nil.
local function mistyped(want, ...)
  for i = 1, select('#', ...) do
    local key = select(i, ...)
    local t = redis.call('TYPE', key).ok
    if t ~= 'none' and t ~= want then return key end
  end
end
local bad = mistyped('list', queue) or mistyped('zset', delayed, dead)
  or (delay_ms > 0 and mistyped('hash', delayed .. ':data'))
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  bad = bad or mistyped('string', prefix .. 'item:' .. id, prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
end
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end
-- One call answers the common case, a queue with neither profile key.
local extended = redis.call('EXISTS', delayed, dead) > 0
local check_delayed = extended and redis.call('EXISTS', delayed) == 1
local check_dead = extended and redis.call('EXISTS', dead) == 1
local due
if delay_ms > 0 then
  local t = redis.call('TIME')
  due = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + delay_ms
end
local added, result = {}, {}
for i = 2, #ARGV, 2 do
  local id, data = ARGV[i], ARGV[i + 1]
  local known = (check_delayed and redis.call('ZSCORE', delayed, id))
    or (check_dead and redis.call('ZSCORE', dead, id))
  if known then
    result[#result + 1] = 0
  elseif due then
    if redis.call('EXISTS', prefix .. 'item:' .. id) == 0 and redis.call('ZADD', delayed, 'NX', due, id) == 1 then
      redis.call('HSET', delayed .. ':data', id, data)
      check_delayed = true
      result[#result + 1] = 1
    else
      result[#result + 1] = 0
    end
  elseif redis.call('SET', prefix .. 'item:' .. id, data, 'NX') then
    -- A lease key left by an earlier item with this id (older clients' complete keeps one)
    -- must not hold the new item back.
    redis.call('DEL', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
    added[#added + 1] = id
    result[#result + 1] = 1
  else
    result[#result + 1] = 0
  end
end
if #added > 0 then
  redis.call('LPUSH', queue, unpack(added))
end
return result
