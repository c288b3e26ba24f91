-- rwq script: deep_clean                           RWQ/1 core, SPEC "deep_clean"
-- Finds items that are in neither list nor <P>:in_flight (profile flat) and hold no lease
-- (orphans) and puts them in the queue;
-- drops ghost ids from both lists. A deep clean is a run of calls, each bounded:
--   1. "index" calls copy both lists, chunk by chunk from their newest end, into a run index set;
--   2. the client SCANs <P>:item:* and passes the ids it finds to "requeue" calls;
--   3. one "finish" call deletes the index.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- KEYS[3]  <P>:deep_clean:<run>   the run's index set, <run> 1..64 bytes chosen by the client
-- ARGV[1]  "index":   ARGV[2] list ("queue" | "processing"), ARGV[3] start >= 0, ARGV[4] max 1..1000
--          "requeue": ARGV[2..] 1..1000 ids, each 1..512 bytes
--          "finish":  nothing more
-- Reply    index: [next_start, dropped_ghosts], next_start = -1 once the list end was read
--          requeue: [requeued id, ...];  finish: 1
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  index: SADD to the run index (PEXPIRE 600000), LREM <list> 1 <ghost>;
--          requeue: LPUSH <P>:queue <id> for each orphan; finish: DEL the run index
-- Cost     1 round trip per call; index O(start + max); requeue O(n) for ids in the index or
--          leased, O(length of both lists) for each id that is neither (orphans, and items that
--          entered a list after the index was taken)
local queue, processing, index = KEYS[1] or '', KEYS[2], KEYS[3] or ''
local prefix = string.sub(queue, 1, -6)
if #KEYS ~= 3 or string.sub(queue, -6) ~= ':queue' or processing ~= prefix .. 'processing'
    or string.sub(index, 1, #prefix + 11) ~= prefix .. 'deep_clean:'
    or #index == #prefix + 11 or #index > #prefix + 75 then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing, <prefix>:deep_clean:<run>')
end
local mode = ARGV[1]
-- Key types (RWQ-SCRIPT-007), before the first write: the first key of `...` that exists with
-- another type than `want`, or nil.
local function mistyped(want, ...)
  for i = 1, select('#', ...) do
    local key = select(i, ...)
    local t = redis.call('TYPE', key).ok
    if t ~= 'none' and t ~= want then return key end
  end
end
-- The error reply for the first wrong-typed key among the lists and the index (with no ids),
-- or among the keys of `ids`; nil when all are right.
local function keys_wrong(ids)
  local bad = not ids and (mistyped('list', queue, processing) or mistyped('set', index)
    or mistyped('zset', prefix .. 'in_flight'))
  for _, id in ipairs(ids or {}) do
    bad = bad or mistyped('string', prefix .. 'item:' .. id, prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
  end
  if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end
end

if mode == 'index' then
  local list = ({queue = queue, processing = processing})[ARGV[2] or '']
  local start = string.match(ARGV[3] or '', '^%d+$') and tonumber(ARGV[3])
  local max = string.match(ARGV[4] or '', '^[1-9]%d*$') and tonumber(ARGV[4])
  if not list then return redis.error_reply('RWQ_INVALID_ARGUMENT list must be queue or processing') end
  if not start or start > 4294967295 then return redis.error_reply('RWQ_INVALID_ARGUMENT start must be an integer in 0..4294967295') end
  if not max or max > 1000 then return redis.error_reply('RWQ_INVALID_ARGUMENT max must be an integer in 1..1000') end
  if #ARGV ~= 4 then return redis.error_reply('RWQ_INVALID_ARGUMENT index takes list, start, max') end
  local wrong = keys_wrong()
  if wrong then return wrong end
  local ids = redis.call('LRANGE', list, start, start + max - 1)
  wrong = keys_wrong(ids)
  if wrong then return wrong end
  local dropped = 0
  for _, id in ipairs(ids) do
    if redis.call('EXISTS', prefix .. 'item:' .. id) == 0 then
      redis.call('LREM', list, 1, id)
      dropped = dropped + 1
    else
      redis.call('SADD', index, id)
    end
  end
  redis.call('PEXPIRE', index, 600000)
  if #ids < max then return {-1, dropped} end
  return {start + #ids - dropped, dropped}
elseif mode == 'requeue' then
  if #ARGV < 2 or #ARGV > 1001 then return redis.error_reply('RWQ_INVALID_ARGUMENT expected 1..1000 ids') end
  for i = 2, #ARGV do
    if #ARGV[i] == 0 or #ARGV[i] > 512 then return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes') end
  end
  local wrong = keys_wrong() or keys_wrong({unpack(ARGV, 2)})
  if wrong then return wrong end
  local requeued = {}
  for i = 2, #ARGV do
    local id = ARGV[i]
    if redis.call('EXISTS', prefix .. 'item:' .. id) == 1
        and redis.call('EXISTS', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id) == 0
        and redis.call('SISMEMBER', index, id) == 0
        and not redis.call('ZSCORE', prefix .. 'in_flight', id)
        and not redis.call('LPOS', queue, id)
        and not redis.call('LPOS', processing, id) then
      redis.call('LPUSH', queue, id)
      requeued[#requeued + 1] = id
    end
  end
  return requeued
elseif mode == 'finish' then
  if #ARGV ~= 1 then return redis.error_reply('RWQ_INVALID_ARGUMENT finish takes no arguments') end
  -- Only the index is touched: finish also ends a run that another key's type refused.
  local bad = mistyped('set', index)
  if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end
  redis.call('DEL', index)
  return 1
end
return redis.error_reply('RWQ_INVALID_ARGUMENT mode must be index, requeue or finish')
