-- rwq script: set_policy                           RWQ/1 profile retry, SPEC "set_policy"
-- Stores the queue's retry policy in <P>:policy, replacing any previous one, so that every
-- client in every language applies the same attempts limit, backoff and dead-letter retention.
-- With the single argument "clear" it removes the policy (attempts are no longer counted). With
-- "default" before the seven fields it writes them only if the queue has no policy yet, so that
-- a worker can bring its default without replacing an operator's (RWQ-RETRY-015).
-- KEYS[1]  <P>:queue
-- ARGV     ["default"]      optional: write only when <P>:policy does not exist
--          max_attempts     integer 0..1000000 (0: no limit)
--          backoff          "fixed" or "exponential"
--          base_ms          integer 0..31536000000: the fixed delay, or the first exponential one
--          cap_ms           integer 0..31536000000: the largest exponential delay (0: no cap)
--          jitter_pct       integer 0..100: each delay is reduced by up to this share, at random
--          dead_max_count   integer 0..100000000: dead items kept (0: no limit)
--          dead_max_age_ms  integer 0..31536000000: how long dead items are kept (0: no limit)
-- Reply    1 written; 0 "default" found a policy and changed nothing
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  DEL <P>:policy; HSET <P>:policy with the seven fields (nothing when "default" finds one)
-- Cost     1 round trip; O(1)
local queue = KEYS[1]
if #KEYS ~= 1 or string.sub(queue, -6) ~= ':queue' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue')
end
local policy = string.sub(queue, 1, -6) .. 'policy'
if #ARGV == 1 and ARGV[1] == 'clear' then
  if not ({none = true, hash = true})[redis.call('TYPE', policy).ok] then
    return redis.error_reply('RWQ_WRONG_TYPE ' .. policy .. ' holds another Redis type than SPEC 3 gives it')
  end
  redis.call('DEL', policy)
  return 1
end
local if_absent = ARGV[1] == 'default'
local fields = if_absent and {unpack(ARGV, 2)} or ARGV
if #fields ~= 7 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected 7 policy fields, "default" then 7 fields, or "clear"') end
local names = {'max_attempts', 'backoff', 'base_ms', 'cap_ms', 'jitter_pct', 'dead_max_count', 'dead_max_age_ms'}
local limits = {1000000, nil, 31536000000, 31536000000, 100, 100000000, 31536000000}
for i, name in ipairs(names) do
  if name == 'backoff' then
    if fields[i] ~= 'fixed' and fields[i] ~= 'exponential' then
      return redis.error_reply('RWQ_INVALID_ARGUMENT backoff must be fixed or exponential')
    end
  else
    local n = string.match(fields[i], '^%d+$') and tonumber(fields[i])
    if not n or n > limits[i] then
      return redis.error_reply('RWQ_INVALID_ARGUMENT ' .. name .. ' must be an integer in 0..' .. string.format('%d', limits[i]))
    end
  end
end
-- Key types (RWQ-SCRIPT-007), before the first write: the first key of `...` that exists with
-- another type than `want`, or nil.
local function mistyped(want, ...)
  for i = 1, select('#', ...) do
    local key = select(i, ...)
    local t = redis.call('TYPE', key).ok
    if t ~= 'none' and t ~= want then return key end
  end
end
local bad = mistyped('hash', policy)
if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end

if if_absent and redis.call('EXISTS', policy) == 1 then return 0 end
redis.call('DEL', policy)
for i, name in ipairs(names) do redis.call('HSET', policy, name, fields[i]) end
return 1
