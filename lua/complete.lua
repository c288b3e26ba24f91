-- rwq script: complete                             RWQ/1 core, SPEC "complete" and "complete_many"
-- Completes items. The call that deletes an item's key is its first completer and the only
-- one told 1. In "owner" mode an item is completed only if the caller still holds its lease.
-- Profile delay: in "any" mode a delayed item is completed (cancelled) too.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV[1]  mode         "any": ARGV[2..] are ids; "owner": ARGV[2..] are id, token pairs
-- ARGV     1..1000 ids (or pairs), each id 1..512 bytes, each token 1..128 bytes
-- Reply    array, one integer per item: 1 = completed by this call, 0 = no such item (already
--          completed), -1 = "owner" mode and the caller does not hold the lease (item untouched)
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  DEL <P>:item:<id>; ZREM <P>:in_flight <id>, and when it was not there
--          LREM <P>:processing -1 <id>; DEL <P>:lease:<id> and
--          <P>:leased_by_session:<id>; when the item was not in processing (a cleaner had put it
--          back), LREM <P>:queue 1 <id> so no ghost copy stays queued; HDEL <P>:attempts <id>;
--          a delayed item: ZREM <P>:delayed <id>, HDEL <P>:delayed:data <id>
-- Cost     1 round trip; O(log n) for an item a profile flat lease holds (in <P>:in_flight);
--          else O(position from the oldest end of processing), which LREM scans
local queue, processing = KEYS[1], KEYS[2]
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue'
    or processing ~= string.sub(queue, 1, -6) .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing')
end
local owner = ARGV[1] == 'owner'
if not owner and ARGV[1] ~= 'any' then return redis.error_reply('RWQ_INVALID_ARGUMENT mode must be any or owner') end
local step = owner and 2 or 1
local n = (#ARGV - 1) / step
if n < 1 or n > 1000 or n ~= math.floor(n) then return redis.error_reply('RWQ_INVALID_ARGUMENT expected 1..1000 items') end
for i = 2, #ARGV, step do
  if #ARGV[i] == 0 or #ARGV[i] > 512 then return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes') end
  if owner and (#ARGV[i + 1] == 0 or #ARGV[i + 1] > 128) then return redis.error_reply('RWQ_INVALID_ARGUMENT token must be 1..128 bytes') end
end
-- rwq:arguments-valid (no write above this line; tools/generate.py composes scripts here)

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
local in_flight = prefix .. 'in_flight'
local bad = mistyped('list', queue, processing) or mistyped('zset', in_flight) or mistyped('hash', prefix .. 'attempts')
  or (not owner and (mistyped('zset', prefix .. 'delayed') or mistyped('hash', prefix .. 'delayed:data')))
-- TYPE also tells whether each item exists, so that one DEL removes its three keys below.
local present = {}
for i = 2, #ARGV, step do
  local id = ARGV[i]
  if not bad then
    local item_type = redis.call('TYPE', prefix .. 'item:' .. id).ok
    if item_type ~= 'none' and item_type ~= 'string' then bad = prefix .. 'item:' .. id end
    present[id] = item_type == 'string'
  end
  bad = bad or mistyped('string', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
end
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end
-- rwq:keys-checked (no error reply below this line: the composite's bodies run after both checks)

-- A queue with no flat lease or no attempt count skips those per-item calls.
local flat = redis.call('EXISTS', in_flight) == 1
local counted = redis.call('EXISTS', prefix .. 'attempts') == 1
local result = {}
for i = 2, #ARGV, step do
  local id = ARGV[i]
  local lease_key = prefix .. 'lease:' .. id
  if owner and redis.call('GET', lease_key) ~= ARGV[i + 1] then
    result[#result + 1] = -1
  else
    local deleted = present[id] and 1 or 0
    present[id] = false -- the id again, later in this call, finds the item gone
    redis.call('DEL', prefix .. 'item:' .. id, lease_key, prefix .. 'leased_by_session:' .. id)
    -- A flat lease's entry is in <P>:in_flight (profile flat), any other in processing.
    local unlisted = not (flat and redis.call('ZREM', in_flight, id) == 1) and redis.call('LREM', processing, -1, id) == 0
    if deleted == 1 and unlisted then redis.call('LREM', queue, 1, id) end
    if counted then redis.call('HDEL', prefix .. 'attempts', id) end
    if deleted == 0 and not owner and redis.call('ZREM', prefix .. 'delayed', id) == 1 then
      redis.call('HDEL', prefix .. 'delayed:data', id)
      deleted = 1
    end
    result[#result + 1] = deleted
  end
end
return result
