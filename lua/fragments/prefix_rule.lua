-- RWQ-KEYS-008, RWQ-SCRIPT-009: no segment of the prefix after its first may be item, lease,
-- leased_by_session or deep_clean. Clients refuse such a prefix before any I/O; the script
-- refuses it too, so that a caller holding only this queue's key patterns (SPEC §13.1) cannot
-- run a queue nested in the queue's own item, lease or cleaner keys. `prefix` ends with its
-- colon, so every segment after the first stands between two colons. The first find passes
-- most prefixes at once: no segment after the first starts with d, i or l.
if string.find(prefix, ':[dil]') and (string.find(prefix, ':item:', 1, true) or string.find(prefix, ':lease:', 1, true)
    or string.find(prefix, ':leased_by_session:', 1, true) or string.find(prefix, ':deep_clean:', 1, true)) then
  return redis.error_reply('RWQ_INVALID_ARGUMENT a segment of the prefix after its first is item, lease, leased_by_session or deep_clean (RWQ-KEYS-008)')
end
