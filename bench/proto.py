"""Prototypes measured by the benchmark; none of this is part of rwq or RWQ/1.

(``complete_lease``, the first prototype here, shipped as the canonical ``complete_and_lease``;
``complete_lazy``, which left completed entries to the cleaner, gave way to profile flat.)
"""

from __future__ import annotations

import hashlib

import redis

from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, QueueKeys, new_token
from rwq.protocol.scripts import Script

_CLAIM_HEAD_SOURCE = b"""-- bench prototype: claim_head (NOT a canonical RWQ/1 script)
-- Sent in the same pipeline as BLMOVE <P>:queue <P>:processing RIGHT LEFT, so a woken consumer
-- needs no second round trip: claims the newest unclaimed entry among the 10 newest of
-- processing (not necessarily the one this caller moved: every mover claims one, so all are
-- claimed). No retry-policy counting, unlike claim.lua.
-- KEYS[1] <P>:queue  KEYS[2] <P>:processing  ARGV[1] lease_ms  ARGV[2] token
-- Reply {1, id, payload, 0} claimed; {0} nothing to claim
local queue, processing = KEYS[1], KEYS[2]
local prefix = string.sub(queue, 1, -6)
for _, id in ipairs(redis.call('LRANGE', processing, 0, 9)) do
  local data = redis.call('GET', prefix .. 'item:' .. id)
  if data and redis.call('EXISTS', prefix .. 'lease:' .. id, prefix .. 'leased_by_session:' .. id) == 0 then
    redis.call('SET', prefix .. 'lease:' .. id, ARGV[2], 'PX', tonumber(ARGV[1]))
    return {1, id, data, 0}
  end
end
return {0}
"""
CLAIM_HEAD = Script("claim_head", _CLAIM_HEAD_SOURCE, hashlib.sha1(_CLAIM_HEAD_SOURCE).hexdigest())


def blocking_lease_pipelined(r: redis.Redis, keys: QueueKeys, lease_ms: int, wait_s: float) -> Lease | None:
    """BLMOVE and claim_head in one pipeline: a woken consumer has its lease after one round trip."""
    token = new_token()
    pipe = r.pipeline(transaction=False)
    pipe.execute_command("BLMOVE", keys.queue, keys.processing, "RIGHT", "LEFT", wait_s)  # type: ignore[no-untyped-call]
    pipe.evalsha(CLAIM_HEAD.sha1, 2, keys.queue, keys.processing, lease_ms, token)
    _moved, claimed = pipe.execute()
    if claimed[0] != 1:
        return None
    return Lease(v.decode_id(claimed[1]), claimed[2], token, 0)
