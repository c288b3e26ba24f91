-- rwq script: light_clean                          RWQ/1 core, SPEC "light_clean"
-- Examines one bounded chunk of the processing list, oldest entries first, and puts abandoned
-- items (item key present, neither lease key present) back in the queue; ghost entries (no
-- item key) are dropped. A client cleans the whole list by calling again with the returned
-- cursor until it is 0.
-- KEYS[1]  <P>:queue
-- KEYS[2]  <P>:processing
-- ARGV[1]  cursor       integer >= 0: entries counted from the oldest end already examined and kept
-- ARGV[2]  max          integer, 1..1000: entries to examine in this call
-- Reply    [next_cursor, [requeued id, ...], dropped_ghosts]; next_cursor = 0 once the newest
--          entry has been examined
-- Errors   RWQ_INVALID_ARGUMENT (nothing is written)
-- Effects  abandoned: LREM <P>:processing -1 <id> then LPUSH <P>:queue <id>;
--          ghost: LREM <P>:processing -1 <id>
-- Cost     1 round trip per chunk; O(cursor + max) list walking plus O(1) per entry
local queue, processing = KEYS[1], KEYS[2]
if #KEYS ~= 2 or string.sub(queue, -6) ~= ':queue'
    or processing ~= string.sub(queue, 1, -6) .. 'processing' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue, <prefix>:processing')
end
local cursor = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
local max = string.match(ARGV[2] or '', '^[1-9]%d*$') and tonumber(ARGV[2])
if not cursor or cursor > 4294967295 then return redis.error_reply('RWQ_INVALID_ARGUMENT cursor must be an integer in 0..4294967295') end
if not max or max > 1000 then return redis.error_reply('RWQ_INVALID_ARGUMENT max must be an integer in 1..1000') end

local prefix = string.sub(queue, 1, -6)
local ids = redis.call('LRANGE', processing, -(cursor + max), -(cursor + 1))
local requeued, dropped, kept = {}, 0, 0
for i = #ids, 1, -1 do
  local id = ids[i]
  if redis.call('EXISTS', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id) > 0 then
    kept = kept + 1
  elseif redis.call('EXISTS', prefix .. 'item:' .. id) == 0 then
    redis.call('LREM', processing, -1, id)
    dropped = dropped + 1
  else
    redis.call('LREM', processing, -1, id)
    redis.call('LPUSH', queue, id)
    requeued[#requeued + 1] = id
  end
end
local next_cursor = 0
if #ids == max then next_cursor = cursor + kept end
return {next_cursor, requeued, dropped}
