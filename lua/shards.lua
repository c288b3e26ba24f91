-- rwq script: shards                               RWQ/1 profile sharded, SPEC "sharded"
-- Records the shard count of a sharded queue in its shard 0, or reads the count recorded there,
-- so that every client of the queue routes ids the same way: a client whose count differs from
-- the reply must not use the queue (SHARD_MISMATCH).
-- KEYS[1]  {P#0}:queue   shard 0's queue key (its prefix ends in "#0}")
-- ARGV[1]  shards        integer, 1..1024: this client's count
-- Reply    the recorded count: ARGV[1] when none was recorded before this call
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  SET {P#0}:shards shards NX (no TTL)
-- Cost     1 round trip; O(1)
local queue = KEYS[1] or ''
if #KEYS ~= 1 or not string.match(queue, '^{.+#0}:queue$') then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be {<queue>#0}:queue')
end
local shards = string.match(ARGV[1] or '', '^[1-9]%d*$') and tonumber(ARGV[1])
if not shards or shards > 1024 then return redis.error_reply('RWQ_INVALID_ARGUMENT shards must be an integer in 1..1024') end
if #ARGV ~= 1 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected shards') end
local key = string.sub(queue, 1, -6) .. 'shards'
local kind = redis.call('TYPE', key).ok
if kind ~= 'none' and kind ~= 'string' then
  return redis.error_reply('RWQ_WRONG_TYPE ' .. key .. ' holds another Redis type than SPEC 3 gives it')
end
redis.call('SET', key, shards, 'NX')
-- A count stored by any client: a positive integer, anything else reads as 0 (a mismatch).
local stored = redis.call('GET', key)
local n = string.match(stored, '^[1-9]%d*$') and tonumber(stored)
return (n and n <= 1024) and n or 0
