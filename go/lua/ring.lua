-- rwq script: ring                                 RWQ/1 profile sharded, SPEC "sharded"
-- Rings the doorbell of a sharded queue: pushes tokens to the list {P#bell}, on which consumers
-- whose every shard was empty wait with BLPOP (one token wakes one consumer, which then visits
-- every shard). The bell is a hint: it holds at most 16 tokens and is dropped 1000 ms after the
-- last ring, so a token that no consumer took soon costs at most a few empty visits.
-- KEYS[1]  {P#bell}      the queue's doorbell key
-- ARGV[1]  tokens        integer, 1..16: how many consumers to wake (items made ready, at most 16)
-- Reply    the number of tokens the bell holds after this call
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  LPUSH {P#bell} 1 (tokens times); LTRIM {P#bell} 0 15; PEXPIRE {P#bell} 1000
-- Cost     1 round trip; O(tokens)
local bell = KEYS[1] or ''
if #KEYS ~= 1 or not string.match(bell, '^{.+#bell}$') then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be {<queue>#bell}')
end
local tokens = string.match(ARGV[1] or '', '^[1-9]%d*$') and tonumber(ARGV[1])
if not tokens or tokens > 16 then return redis.error_reply('RWQ_INVALID_ARGUMENT tokens must be an integer in 1..16') end
if #ARGV ~= 1 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected tokens') end
local kind = redis.call('TYPE', bell).ok
if kind ~= 'none' and kind ~= 'list' then
  return redis.error_reply('RWQ_WRONG_TYPE ' .. bell .. ' holds another Redis type than SPEC 3 gives it')
end
local held = 0
for _ = 1, tokens do held = redis.call('LPUSH', bell, '1') end
redis.call('LTRIM', bell, 0, 15)
redis.call('PEXPIRE', bell, 1000)
return math.min(held, 16)
