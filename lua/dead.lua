-- rwq script: dead                                 RWQ/1 profile retry, SPEC "dead-letter"
-- Lists, inspects, requeues, purges and trims dead-lettered items.
-- KEYS[1]  <P>:queue
-- ARGV[1]  mode:
--   "list"    ARGV[2] offset 0..100000000, ARGV[3] count 1..1000: newest first
--             reply [[id, dead_at_ms, info_json], ...]
--   "get"     ARGV[2] id: reply [id, dead_at_ms, info_json, payload], or nil if not dead
--   "requeue" ARGV[2..] 1..1000 ids: each dead item becomes a new ready item with its attempts
--             reset; reply per id 1 = requeued, 0 = not dead, or an item with that id is live or
--             delayed again
--   "purge"   ARGV[2..] 1..1000 ids: reply per id 1 = removed, 0 = not dead
--   "trim"    applies the retention of <P>:policy (dead_max_age_ms, then dead_max_count),
--             removing at most 1000 dead items, oldest first; reply [removed, remaining_excess]
-- Reply    per mode, as listed above
-- Errors   RWQ_INVALID_ARGUMENT, RWQ_WRONG_TYPE (nothing is written)
-- Effects  <P>:dead (zset id -> dead_at_ms), <P>:dead:data and <P>:dead:info (hashes by id);
--          requeue also SET <P>:item:<id> NX and LPUSH <P>:queue
-- Cost     1 round trip; O(log d + n)
local queue = KEYS[1]
if #KEYS ~= 1 or string.sub(queue, -6) ~= ':queue' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue')
end
local prefix = string.sub(queue, 1, -6)
local dead, dead_data, dead_info = prefix .. 'dead', prefix .. 'dead:data', prefix .. 'dead:info'
local mode = ARGV[1]
local function ids_ok()
  if #ARGV < 2 or #ARGV > 1001 then return false end
  for i = 2, #ARGV do
    if #ARGV[i] == 0 or #ARGV[i] > 512 then return false end
  end
  return true
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
-- The error reply for the first wrong-typed key among the dead-letter keys, the `extra` check
-- and the keys of `ids`; nil when all are right.
local function keys_wrong(extra, ids)
  local bad = mistyped('zset', dead) or mistyped('hash', dead_data, dead_info) or extra
  for _, id in ipairs(ids) do
    bad = bad or mistyped('string', prefix .. 'item:' .. id, prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
  end
  if bad then return redis.error_reply('RWQ_WRONG_TYPE ' .. bad .. ' holds another Redis type than SPEC 3 gives it') end
end
local function forget(id)
  redis.call('ZREM', dead, id)
  redis.call('HDEL', dead_data, id)
  redis.call('HDEL', dead_info, id)
end

if mode == 'list' then
  local offset = string.match(ARGV[2] or '', '^%d+$') and tonumber(ARGV[2])
  local count = string.match(ARGV[3] or '', '^[1-9]%d*$') and tonumber(ARGV[3])
  if #ARGV ~= 3 or not offset or offset > 100000000 or not count or count > 1000 then
    return redis.error_reply('RWQ_INVALID_ARGUMENT list takes offset 0..100000000 and count 1..1000')
  end
  local wrong = keys_wrong(nil, {})
  if wrong then return wrong end
  local flat = redis.call('ZREVRANGE', dead, offset, offset + count - 1, 'WITHSCORES')
  local result = {}
  for i = 1, #flat, 2 do
    result[#result + 1] = {flat[i], tonumber(flat[i + 1]), redis.call('HGET', dead_info, flat[i]) or '{}'}
  end
  return result
elseif mode == 'get' then
  if #ARGV ~= 2 or #ARGV[2] == 0 or #ARGV[2] > 512 then return redis.error_reply('RWQ_INVALID_ARGUMENT get takes one id of 1..512 bytes') end
  local wrong = keys_wrong(nil, {})
  if wrong then return wrong end
  local at = redis.call('ZSCORE', dead, ARGV[2])
  if not at then return nil end
  return {ARGV[2], tonumber(at), redis.call('HGET', dead_info, ARGV[2]) or '{}', redis.call('HGET', dead_data, ARGV[2]) or ''}
elseif mode == 'requeue' or mode == 'purge' then
  if not ids_ok() then return redis.error_reply('RWQ_INVALID_ARGUMENT expected 1..1000 ids of 1..512 bytes') end
  -- purge touches only the dead-letter keys; requeue also the queue, attempts, delayed and items.
  local wrong
  if mode == 'purge' then
    wrong = keys_wrong(nil, {})
  else
    wrong = keys_wrong(mistyped('list', queue) or mistyped('hash', prefix .. 'attempts') or mistyped('zset', prefix .. 'delayed'), {unpack(ARGV, 2)})
  end
  if wrong then return wrong end
  local result = {}
  for i = 2, #ARGV do
    local id = ARGV[i]
    local data = redis.call('HGET', dead_data, id)
    if not redis.call('ZSCORE', dead, id) then
      result[#result + 1] = 0
    elseif mode == 'purge' then
      forget(id)
      result[#result + 1] = 1
    elseif redis.call('ZSCORE', prefix .. 'delayed', id) or not redis.call('SET', prefix .. 'item:' .. id, data or '', 'NX') then
      result[#result + 1] = 0
    else
      redis.call('DEL', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id)
      redis.call('LPUSH', queue, id)
      redis.call('HDEL', prefix .. 'attempts', id)
      forget(id)
      result[#result + 1] = 1
    end
  end
  return result
elseif mode == 'trim' then
  if #ARGV ~= 1 then return redis.error_reply('RWQ_INVALID_ARGUMENT trim takes no arguments') end
  local wrong = keys_wrong(mistyped('hash', prefix .. 'policy'), {})
  if wrong then return wrong end
  local function stored_int(v)
    local n = string.match(v or '', '^%d+$') and tonumber(v)
    return (n and n <= 1e15) and n or 0
  end
  local max_count = stored_int(redis.call('HGET', prefix .. 'policy', 'dead_max_count'))
  local max_age = stored_int(redis.call('HGET', prefix .. 'policy', 'dead_max_age_ms'))
  local removed = 0
  if max_age > 0 then
    local t = redis.call('TIME')
    local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - max_age
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', dead, '-inf', '(' .. cutoff, 'LIMIT', 0, 1000)) do
      forget(id)
      removed = removed + 1
    end
  end
  local excess = max_count > 0 and redis.call('ZCARD', dead) - max_count or 0
  if excess > 0 and removed < 1000 then
    for _, id in ipairs(redis.call('ZRANGE', dead, 0, math.min(excess, 1000 - removed) - 1)) do
      forget(id)
      removed = removed + 1
      excess = excess - 1
    end
  end
  return {removed, math.max(excess, 0)}
end
return redis.error_reply('RWQ_INVALID_ARGUMENT mode must be list, get, requeue, purge or trim')
