"""Prototypes measured by the benchmark; none of this is part of rwq or RWQ/1.

``complete_lease``: one script call that completes the items just processed and leases the next
ones, composed verbatim from the canonical ``complete.lua`` and ``lease.lua`` (each wrapped as a
local function with its own KEYS/ARGV), so the only thing it saves is a round trip. Its plan and
shell below mirror :mod:`rwq.protocol.operations` and :class:`rwq.WorkQueue` (validation, token,
``Lease``/``Outcome`` parsing, EVALSHA with an EVAL fallback), so its client-side cost is what a
shipped ``complete_and_lease`` would cost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from typing import Any

import redis
from redis.exceptions import NoScriptError

from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, Outcome, QueueKeys, new_token
from rwq.protocol.scripts import Script, registry

_HEADER = b"""-- bench prototype: complete_lease (NOT a canonical RWQ/1 script)
-- Completes ARGV[5..] ("any" mode, as complete.lua) then leases up to ARGV[3] items (as lease.lua).
-- KEYS[1] <P>:queue  KEYS[2] <P>:processing
-- ARGV[1] lease_ms  ARGV[2] token  ARGV[3] count (0: complete only)  ARGV[4] legacy  ARGV[5..] ids
-- Reply {complete reply, lease reply}; either part {} when it did not run.
-- A shipped version would validate the lease arguments before completing anything.
"""


@cache
def complete_lease_script() -> Script:
    """The composed script (its source is also written next to the JSON report)."""
    scripts = registry()
    source = b"".join(
        [
            _HEADER,
            b"local function complete_part(KEYS, ARGV)\n",
            scripts["complete"].source,
            b"end\nlocal function lease_part(KEYS, ARGV)\n",
            scripts["lease"].source,
            b"""end
local done, leased = {}, {}
if #ARGV > 4 then
  local args = {'any'}
  for i = 5, #ARGV do args[#args + 1] = ARGV[i] end
  done = complete_part(KEYS, args)
  if done.err then return done end
end
if ARGV[3] ~= '0' then
  leased = lease_part(KEYS, {ARGV[1], ARGV[2], ARGV[3], ARGV[4]})
  if leased.err then return leased end
end
return {done, leased}
""",
        ]
    )
    return Script("complete_lease", source, hashlib.sha1(source).hexdigest())


def complete_and_lease(
    keys: QueueKeys, done: Sequence[Lease], lease_ms: int, count: int
) -> Plan[tuple[list[Outcome], list[Lease]]]:
    """Complete ``done`` and lease up to ``count`` more, in one round trip."""
    v.duration_ms(lease_ms, "lease_ms")
    if count:
        v.batch_size(count, "count")
    if len(done) > v.MAX_BATCH:
        raise ValueError("at most 1000 items per call")
    ids = [v.encode_id(held.id) for held in done]
    token = new_token()
    completed, leased = yield RunScript(
        complete_lease_script(), (keys.queue, keys.processing), (lease_ms, token.encode(), count, b"0", *ids)
    )
    outcomes = [Outcome(code) for code in completed]
    if not leased:
        return outcomes, []
    _again, _now, _due_in, *entries = leased
    return outcomes, [Lease(v.decode_id(raw_id), data, token, attempt) for raw_id, data, attempt in entries]


def drive(r: redis.Redis, plan: Plan[Any]) -> Any:
    """Run a plan of RunScript commands the way :class:`rwq.WorkQueue` does."""
    try:
        command = next(plan)
        while True:
            assert isinstance(command, RunScript)
            args = (len(command.keys), *command.keys, *command.args)
            try:
                reply = r.evalsha(command.script.sha1, *args)  # type: ignore[arg-type]
            except NoScriptError:
                reply = r.eval(command.script.source, *args)  # type: ignore[arg-type]
            command = plan.send(reply)
    except StopIteration as stop:
        return stop.value


_LREM_LINE = b"local unlisted = redis.call('LREM', processing, -1, id) == 0"


@cache
def complete_lazy_script() -> Script:
    """complete.lua without its LREM of the processing list: the entry is left as a ghost.

    What it shows: the cost of ``complete`` with many items in flight is that one LREM, which scans
    the processing list. light_clean already drops ghosts (near the oldest end, where its cursor
    is), so removal could be deferred to it, at the price of ``processing_len`` counting
    completed items until the next clean.
    """
    source = registry()["complete"].source
    if _LREM_LINE not in source:
        raise RuntimeError("complete.lua changed: update the complete_lazy prototype")
    source = b"-- bench prototype: complete_lazy (NOT a canonical RWQ/1 script)\n" + source.replace(
        _LREM_LINE, b"local unlisted = false"
    )
    return Script("complete_lazy", source, hashlib.sha1(source).hexdigest())


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
