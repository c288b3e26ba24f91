-- Profile declared-keys (SPEC §20): a call with more KEYS than its {base} base KEYS declares every
-- key the script touches. The next KEYS are the header's DECLARED keys, in that order, then
-- one triple <P>:item:<id>, <P>:lease:<id>, <P>:leased_by_session:<id> per id whose keys the
-- call may touch. `declared[id]` is true for those ids; `declared` is nil when the profile is off.
local declared
if #KEYS > {base} then
  local declared_names = {names}
  declared = {{}}
  for i, name in ipairs(declared_names) do
    if KEYS[{base} + i] ~= prefix .. name then
      return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS[' .. ({base} + i) .. '] must be <prefix>:' .. name .. ' (profile declared-keys)')
    end
  end
  if (#KEYS - {base} - #declared_names) % 3 ~= 0 then
    return redis.error_reply('RWQ_INVALID_ARGUMENT declared item keys must come in triples (profile declared-keys)')
  end
  for i = {base} + #declared_names + 1, #KEYS, 3 do
    local id = string.sub(KEYS[i], #prefix + 6)
    if #id == 0 or KEYS[i] ~= prefix .. 'item:' .. id or KEYS[i + 1] ~= prefix .. 'lease:' .. id
        or KEYS[i + 2] ~= prefix .. 'leased_by_session:' .. id then
      return redis.error_reply('RWQ_INVALID_ARGUMENT KEYS[' .. i .. '..' .. (i + 2) .. '] must be <prefix>:item:<id>, <prefix>:lease:<id>, <prefix>:leased_by_session:<id> (profile declared-keys)')
    end
    declared[id] = true
  end
end
