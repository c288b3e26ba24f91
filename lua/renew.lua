-- rwq script: renew                                RWQ/1 core, SPEC "renew" and "renew_many"
-- Extends leases the caller still holds: the lease key must hold the caller's token and the
-- item must still exist. A lease that expired, was taken over or was completed is not renewed.
-- KEYS[1]  <P>:queue
-- ARGV[1]  lease_ms     integer, 1..31536000000: the new time to live, from now
-- ARGV[2]  legacy       "1" also writes <P>:leased_by_session:<id>, "0" does not
-- ARGV     id_1, token_1, ..., id_n, token_n from ARGV[3]   1 <= n <= 1000
-- Reply    array of n integers: 1 = renewed, 0 = the caller no longer holds that lease
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  per renewed lease: SET <P>:lease:<id> token PX lease_ms (and the legacy key when asked);
--          profile flat: ZADD <P>:in_flight XX (now + lease_ms) <id>
-- Cost     1 round trip; O(n)
local queue = KEYS[1]
if #KEYS ~= 1 or string.sub(queue, -6) ~= ':queue' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue')
end
local lease_ms = string.match(ARGV[1] or '', '^[1-9]%d*$') and tonumber(ARGV[1])
if not lease_ms or lease_ms > 31536000000 then return redis.error_reply('RWQ_INVALID_ARGUMENT lease_ms must be an integer in 1..31536000000') end
if ARGV[2] ~= '0' and ARGV[2] ~= '1' then return redis.error_reply('RWQ_INVALID_ARGUMENT legacy must be 0 or 1') end
local n = (#ARGV - 2) / 2
if n < 1 or n > 1000 or #ARGV % 2 ~= 0 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected 1..1000 id/token pairs') end
for i = 3, #ARGV, 2 do
  if #ARGV[i] == 0 or #ARGV[i] > 512 then return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes') end
  if #ARGV[i + 1] == 0 or #ARGV[i + 1] > 128 then return redis.error_reply('RWQ_INVALID_ARGUMENT token must be 1..128 bytes') end
end

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
local bad = mistyped('zset', in_flight)
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  bad = bad or mistyped('string', prefix .. 'item:' .. id, prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
end
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end

-- A flat lease's member (profile flat) takes the new deadline as its score, so that a cleaner
-- finds it when the renewed lease, shorter or longer, expires.
local deadline
if redis.call('EXISTS', in_flight) == 1 then
  local t = redis.call('TIME')
  deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + lease_ms
end
local result = {}
for i = 3, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  local lease_key = prefix .. 'lease:' .. id
  if redis.call('GET', lease_key) == token and redis.call('EXISTS', prefix .. 'item:' .. id) == 1 then
    redis.call('SET', lease_key, token, 'PX', lease_ms)
    if ARGV[2] == '1' then redis.call('SET', prefix .. 'leased_by_session:' .. id, token, 'PX', lease_ms) end
    if deadline then redis.call('ZADD', in_flight, 'XX', deadline, id) end
    result[#result + 1] = 1
  else
    result[#result + 1] = 0
  end
end
return result
