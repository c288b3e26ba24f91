-- rwq script: release                              RWQ/1 core, SPEC "release"
-- Gives leased items back: each goes to the back of the queue at once, as a new item would, or,
-- with delay_ms > 0 (profile delay), to <P>:delayed until due.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV[1]  delay_ms     integer, 0..31536000000
-- ARGV     id_1, token_1, ..., id_n, token_n from ARGV[2]   1 <= n <= 1000; id 1..512 bytes,
--          token 1..128 bytes
-- Reply    array of n integers: 1 = released, 0 = the item no longer exists (someone completed
--          it; its lease keys and a processing entry were cleared), -1 = the item exists and the
--          caller does not hold its lease (untouched)
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  DEL <P>:lease:<id> and <P>:leased_by_session:<id>; ZREM <P>:in_flight <id>, and when
--          it was not there LREM <P>:processing -1 <id>; when
--          the item still exists: LPUSH <P>:queue <id>, or with a delay, move the payload from
--          <P>:item:<id> to <P>:delayed:data and ZADD <P>:delayed (now + delay_ms) <id>
-- Cost     1 round trip; O(log n) per flat lease (profile flat), else O(position from the
--          oldest end of processing)
local queue, processing = KEYS[1] or '', KEYS[2]
local prefix = string.sub(queue, 1, -6)
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue' or processing ~= prefix .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing')
end
local delay_ms = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not delay_ms or delay_ms > 31536000000 then return redis.error_reply('RWQ_INVALID_ARGUMENT delay_ms must be an integer in 0..31536000000') end
local n = (#ARGV - 1) / 2
if n < 1 or n > 1000 or #ARGV % 2 ~= 1 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected 1..1000 id/token pairs') end
for i = 2, #ARGV, 2 do
  if #ARGV[i] == 0 or #ARGV[i] > 512 then return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes') end
  if #ARGV[i + 1] == 0 or #ARGV[i + 1] > 128 then return redis.error_reply('RWQ_INVALID_ARGUMENT token must be 1..128 bytes') end
end

local prefix_delayed = prefix .. 'delayed'
-- Key types (RWQ-SCRIPT-007), before the first write: the first key of `...` that exists with
-- another type than `want`, or nil.
local function mistyped(want, ...)
  for i = 1, select('#', ...) do
    local key = select(i, ...)
    local t = redis.call('TYPE', key).ok
    if t ~= 'none' and t ~= want then return key end
  end
end
local in_flight = prefix .. 'in_flight'
local bad = mistyped('list', queue, processing) or mistyped('zset', in_flight)
  or (delay_ms > 0 and (mistyped('zset', prefix_delayed) or mistyped('hash', prefix_delayed .. ':data')))
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  bad = bad or mistyped('string', prefix .. 'item:' .. id, prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
end
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end

local due
if delay_ms > 0 then
  local t = redis.call('TIME')
  due = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + delay_ms
end
local result = {}
for i = 2, #ARGV, 2 do
  local id, lease_key = ARGV[i], prefix .. 'lease:' .. ARGV[i]
  local item_key = prefix .. 'item:' .. id
  local exists = redis.call('EXISTS', item_key) == 1
  if exists and redis.call('GET', lease_key) ~= ARGV[i + 1] then
    result[#result + 1] = -1
  else
    -- Held, or the item is gone (completed meanwhile): its lease keys and entry are garbage.
    redis.call('DEL', lease_key, prefix .. 'leased_by_session:' .. id)
    if redis.call('ZREM', in_flight, id) == 0 then redis.call('LREM', processing, -1, id) end
    if not exists then
      result[#result + 1] = 0
    elseif due then
      redis.call('HSET', prefix .. 'delayed:data', id, redis.call('GET', item_key))
      redis.call('DEL', item_key)
      redis.call('ZADD', prefix .. 'delayed', due, id)
      result[#result + 1] = 1
    else
      redis.call('LPUSH', queue, id)
      result[#result + 1] = 1
    end
  end
end
return result
