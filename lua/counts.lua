-- rwq script: counts                               RWQ/1 core, SPEC "counts"
-- Reads the ready, in-flight, delayed and dead counts at one instant. Writes nothing.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV     none
-- Reply    [LLEN <P>:queue, LLEN <P>:processing + ZCARD <P>:in_flight, ZCARD <P>:delayed,
--          ZCARD <P>:dead]
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE
-- Cost     1 round trip; O(1)
local queue, processing = KEYS[1], KEYS[2]
if #KEYS ~= 2 or #ARGV ~= 0 or string.sub(queue, -6) ~= ':queue'
    or processing ~= string.sub(queue, 1, -6) .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT expected KEYS <prefix>:queue, <prefix>:processing and no ARGV')
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
local bad = mistyped('list', queue, processing)
  or mistyped('zset', prefix .. 'in_flight', prefix .. 'delayed', prefix .. 'dead')
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end
return {redis.call('LLEN', queue), redis.call('LLEN', processing) + redis.call('ZCARD', prefix .. 'in_flight'),
        redis.call('ZCARD', prefix .. 'delayed'), redis.call('ZCARD', prefix .. 'dead')}
