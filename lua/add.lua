-- rwq script: add                                  RWQ/1 core, SPEC "add" and "add_many"
-- Adds items, idempotently by id: an id whose item key exists is left untouched.
-- KEYS[1]  <P>:queue
-- ARGV     id_1, payload_1, ..., id_n, payload_n       1 <= n <= 1000
--          id: UTF-8, 1..512 bytes; payload: any bytes
-- Reply    array of n integers: 1 = added, 0 = an item with that id already exists
--          (a repeated id within one call is added once and reported 0 the second time)
-- Errors   RWQ_INVALID_ARGUMENT (nothing is written)
-- Effects  SET <P>:item:<id> payload NX for each pair; one LPUSH of the added ids, in argument
--          order, so the first pair is leased first
-- Cost     1 round trip; O(n)
local queue = KEYS[1]
if #KEYS ~= 1 or string.sub(queue, -6) ~= ':queue' then
  return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS must be <prefix>:queue')
end
local n = #ARGV / 2
if n < 1 or n > 1000 or #ARGV % 2 ~= 0 then
  return redis.error_reply('RWQ_INVALID_ARGUMENT expected 1..1000 id/payload pairs')
end

-- Second bytes allowed after each UTF-8 lead byte (RFC 3629: no overlongs, no surrogates).
local function utf8_ok(s)
  local i, len = 1, #s
  while i <= len do
    local c = string.byte(s, i)
    local extra, lo, hi = 0, 0x80, 0xBF
    if c < 0x80 then extra = 0
    elseif c >= 0xC2 and c <= 0xDF then extra = 1
    elseif c == 0xE0 then extra, lo = 2, 0xA0
    elseif c == 0xED then extra, hi = 2, 0x9F
    elseif c >= 0xE1 and c <= 0xEF then extra = 2
    elseif c == 0xF0 then extra, lo = 3, 0x90
    elseif c == 0xF4 then extra, hi = 3, 0x8F
    elseif c >= 0xF1 and c <= 0xF3 then extra = 3
    else return false end
    for k = 1, extra do
      local b = string.byte(s, i + k)
      if not b or b < lo or b > hi then return false end
      lo, hi = 0x80, 0xBF
    end
    i = i + extra + 1
  end
  return true
end

for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  if #id == 0 or #id > 512 then
    return redis.error_reply('RWQ_INVALID_ARGUMENT id must be 1..512 bytes')
  end
  if string.find(id, '[\128-\255]') and not utf8_ok(id) then
    return redis.error_reply('RWQ_INVALID_ARGUMENT id must be valid UTF-8')
  end
end

local item = string.sub(queue, 1, -6) .. 'item:'
local added, result = {}, {}
for i = 1, #ARGV, 2 do
  if redis.call('SET', item .. ARGV[i], ARGV[i + 1], 'NX') then
    added[#added + 1] = ARGV[i]
    result[#result + 1] = 1
  else
    result[#result + 1] = 0
  end
end
if #added > 0 then
  redis.call('LPUSH', queue, unpack(added))
end
return result
