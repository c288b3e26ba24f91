-- rwq script: lease                                RWQ/1 core, SPEC "lease" and "lease_many"
-- Leases up to `count` ready items without blocking. Ghost ids (no item key) and ids whose
-- lease is held by someone else are removed from the processing list and skipped.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV[1]  lease_ms     integer, 1..31536000000
-- ARGV[2]  token        the lease token, 1..128 bytes, fresh for every call
-- ARGV[3]  count        integer, 1..1000
-- ARGV[4]  legacy       "1" also writes <P>:leased_by_session:<id>, "0" does not
-- Reply    array: [again, [id, payload], [id, payload], ...] in lease order; again = 1 when the
--          call stopped after skipping 1000 entries (call again), else 0
-- Errors   RWQ_INVALID_ARGUMENT (nothing is written)
-- Effects  per leased item: LMOVE <P>:queue <P>:processing RIGHT LEFT;
--          SET <P>:lease:<id> token PX lease_ms (and the legacy key when asked)
-- Cost     1 round trip; O(count + skipped)
local queue, processing = KEYS[1], KEYS[2]
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue'
    or processing ~= string.sub(queue, 1, -6) .. 'processing' then
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

local prefix = string.sub(queue, 1, -6)
local result, skipped = {0}, 0
while #result - 1 < count do
  local id = redis.call('LMOVE', queue, processing, 'RIGHT', 'LEFT')
  if not id then break end
  local data = redis.call('GET', prefix .. 'item:' .. id)
  local lease_key, legacy_key = prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id
  if data and redis.call('EXISTS', lease_key, legacy_key) == 0 then
    redis.call('SET', lease_key, token, 'PX', lease_ms)
    if ARGV[4] == '1' then redis.call('SET', legacy_key, token, 'PX', lease_ms) end
    result[#result + 1] = {id, data}
  else
    -- A ghost, or a duplicate entry of an item someone holds: drop the entry just moved.
    redis.call('LREM', processing, 1, id)
    skipped = skipped + 1
    if skipped >= 1000 then
      result[1] = 1
      break
    end
  end
end
return result
