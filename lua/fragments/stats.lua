-- Profile stats (SPEC §22): while the string <P>:stats exists, a call counts its events in this
-- minute's fields of <P>:stats:series. The flag rides in the call's key check (its MGET or
-- EXISTS), so a queue without stats runs no command for them. stats_now: the call's server time
-- in ms, read once per call (a script that reads TIME sets it); stats_at: the index of <P>:stats
-- in `batch` when the flag rides in that check's MGET (batch_values[stats_at] is then the flag).
local stats_now, stats_at
-- Adds `amount` to `counter` in this minute's field of <P>:stats:series, after the writes of the
-- event it counts and with redis.pcall: a series of another type, or a role without it, counts
-- nothing (RWQ-STATS-005). The count that creates a field deletes the minutes older than 62 and
-- sets the key to expire 62 minutes after this one (RWQ-STATS-004).
local function stats_count(prefix, counter, amount)
  if amount < 1 then return end
  if not stats_now then
    local t = redis.call('TIME')
    stats_now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  local series, minute = prefix .. 'stats:series', math.floor(stats_now / 60000)
  if redis.pcall('HINCRBY', series, string.format('%d:%s', minute, counter), amount) ~= amount then return end
  local trimmed = redis.call('HGET', series, 'trimmed')
  trimmed = string.match(trimmed or '', '^%d+$') and tonumber(trimmed) or minute - 124
  local from, to = math.max(trimmed + 1, minute - 123), minute - 62
  if from <= to then
    local fields, names = {}, {'added', 'completed', 'failed', 'dead', 'recovered'}
    for m = from, to do
      for _, name in ipairs(names) do fields[#fields + 1] = string.format('%d:%s', m, name) end
    end
    redis.call('HDEL', series, unpack(fields))
    redis.call('HSET', series, 'trimmed', to)
  end
  redis.call('PEXPIREAT', series, (minute + 62) * 60000)
end
-- EXISTS of `keys`, one of them the flag `flag`; true second when Redis refused it. A role whose
-- ACL lines predate profile stats may not read the flag: the keys are counted again without it,
-- the flag read as missing and stats off for the call (RWQ-STATS-009); any other refusal is
-- raised by that second EXISTS.
local function stats_exists(keys, flag)
  local existing = redis.pcall('EXISTS', unpack(keys))
  if type(existing) ~= 'table' then return existing, false end
  local rest = {}
  for i = 1, #keys do
    if keys[i] ~= flag then rest[#rest + 1] = keys[i] end
  end
  return redis.call('EXISTS', unpack(rest)), true
end
