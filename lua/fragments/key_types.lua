-- Key types (RWQ-SCRIPT-007), all read before the first write, each key at most once per call
-- (a composite's parts share them): types[key] is false for a missing key, else its type.
local types = {}
local function wrong_type(key)
  return redis.error_reply('RWQ_WRONG_TYPE ' .. key .. ' holds another Redis type than SPEC 3 gives it')
end
-- `key` if it exists with another type than `want` (its TYPE read once per call), else nil.
local function mistyped(key, want)
  local t = types[key]
  if t == nil then
    t = redis.call('TYPE', key).ok
    if t == 'none' then t = false end
    types[key] = t
  end
  if t and t ~= want then return key end
end
-- True when `reply` (of redis.pcall) is Redis refusing a key of another type: a read that
-- refuses before any write, or the first write, is then that key's check. Any other error is
-- raised, as redis.call would.
local function refused(reply)
  if type(reply) == 'table' and reply.err then
    if string.find(reply.err, 'WRONGTYPE', 1, true) then return true end
    error(reply)
  end
  return false
end
