-- A part that defers its check appends its string keys to `batch` and its profile keys to
-- `batch_absent`; the next check_keys(batch, batch_absent) checks them with its own, and its MGET
-- values are kept in `batch_values` (a composite's complete part defers to its lease part).
local batch, batch_absent, batch_values = {}, {}, nil
-- Checks the string keys `strings` and the keys of `absent` (alternately a key and its type:
-- profile keys, which a queue without that profile lacks) by one MGET and one EXISTS: equal
-- counts mean that every existing key of `strings` holds a string and no key of `absent` exists,
-- and no TYPE is read. Otherwise TYPE tells which keys of `absent` exist, in their order until
-- the counts agree (so the keys likeliest to exist come first), and, if the counts still
-- differ, which key of `strings` holds another type. Returns the MGET values (false: missing;
-- nil when there were no string keys) and the first key of another type, or nil. A key of
-- `absent` whose type is known already is not counted again.
-- check_keys again without the stats flag <P>:stats, which rides in the checks of the scripts
-- that count (profile stats): for a role whose ACL lines predate the profile and may not read it,
-- stats are off (the flag missing, RWQ-STATS-009); any other refusal is raised as redis.call
-- raises it. Returns the MGET values, the EXISTS count and the new end of `strings`.
local function checked_without_flag(strings, s, n)
  local flag, rest, kept, values, existing = string.sub(KEYS[1], 1, -6) .. 'stats', {}, 0, nil, 0
  types[flag] = false
  for i = 1, n do
    if strings[i] ~= flag then
      rest[#rest + 1] = strings[i]
      if i <= s then kept = kept + 1 end
    end
  end
  if s > 0 then
    local got, j = kept > 0 and redis.call('MGET', unpack(rest, 1, kept)) or {}, 0
    values = {}
    for i = 1, s do
      if strings[i] == flag then
        values[i] = false
      else
        j = j + 1
        values[i] = got[j]
      end
    end
  end
  if #rest > 0 then existing = redis.call('EXISTS', unpack(rest)) end
  local m = s
  for i = s + 1, n do
    if strings[i] ~= flag then
      m = m + 1
      strings[m] = strings[i]
    end
  end
  for i = n, m + 1, -1 do strings[i] = nil end
  return values, existing, m
end
local function check_keys(strings, absent)
  local s, n, values, existing, found = #strings, #strings, nil, 0, 0
  for i = 1, #absent, 2 do
    if types[absent[i]] == nil then
      types[absent[i]] = false -- missing, if the counts agree
      n = n + 1
      strings[n] = absent[i]
    end
  end
  if s > 0 then values = redis.pcall('MGET', unpack(strings, 1, s)) end
  if n > 0 then existing = redis.pcall('EXISTS', unpack(strings, 1, n)) end
  if type(existing) == 'table' or values and values.err then
    values, existing, n = checked_without_flag(strings, s, n)
  end
  for i = 1, values and s or 0 do
    if values[i] then found = found + 1 end
  end
  if existing ~= found then
    for i = s + 1, n do
      if existing == found then break end -- the rest are missing
      local key = strings[i]
      types[key] = nil
      for j = 1, #absent, 2 do
        if absent[j] == key then
          local bad = mistyped(key, absent[j + 1])
          if bad then
            for k = n, s + 1, -1 do strings[k] = nil end
            return values, bad
          end
          break
        end
      end
      if types[key] then existing = existing - 1 end
    end
  end
  for i = n, s + 1, -1 do strings[i] = nil end
  if existing ~= found then
    for i = 1, s do
      if not values[i] and mistyped(strings[i], 'string') then return values, strings[i] end
    end
  end
  return values
end
