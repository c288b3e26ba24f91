-- rwq script: release                              RWQ/1 core, SPEC "release"
-- Gives leased items back at once: each goes to the back of the queue, as a new item would.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV     id_1, token_1, ..., id_n, token_n       1 <= n <= 1000; id 1..512 bytes, token 1..128
-- Reply    array of n integers: 1 = released, 0 = the item no longer exists (someone completed
--          it; the caller's lease was cleared), -1 = the caller does not hold the lease (untouched)
-- Errors   RWQ_INVALID_ARGUMENT (nothing is written)
-- Effects  DEL <P>:lease:<id> and <P>:leased_by_session:<id>; LREM <P>:processing -1 <id>;
--          LPUSH <P>:queue <id> when the item still exists
-- Cost     1 round trip; O(n) when releases come roughly in lease order
local queue, processing = KEYS[1], KEYS[2]
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue'
    or processing ~= string.sub(queue, 1, -6) .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing')
end
local n = #ARGV / 2
if n < 1 or n > 1000 or #ARGV % 2 ~= 0 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected 1..1000 id/token pairs') end
for i = 1, #ARGV, 2 do
  if #ARGV[i] == 0 or #ARGV[i] > 512 then return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes') end
  if #ARGV[i + 1] == 0 or #ARGV[i + 1] > 128 then return redis.error_reply('RWQ_INVALID_ARGUMENT token must be 1..128 bytes') end
end

local prefix = string.sub(queue, 1, -6)
local result = {}
for i = 1, #ARGV, 2 do
  local id, lease_key = ARGV[i], prefix .. 'lease:' .. ARGV[i]
  if redis.call('GET', lease_key) ~= ARGV[i + 1] then
    result[#result + 1] = -1
  else
    redis.call('DEL', lease_key, prefix .. 'leased_by_session:' .. id)
    redis.call('LREM', processing, -1, id)
    if redis.call('EXISTS', prefix .. 'item:' .. id) == 1 then
      redis.call('LPUSH', queue, id)
      result[#result + 1] = 1
    else
      result[#result + 1] = 0
    end
  end
end
return result
