"""lease does not check the item keys of the due ids it promotes (an optimiser thought promotion
only creates them). A due id whose ``P:item:<id>`` holds another type is then dropped silently:
``SET ... NX`` on an existing key of any type writes nothing, and the ZREM/HDEL that follow
delete the delayed entry and its payload, so the item is lost (RWQ-SCRIPT-007, and at-least-once).

Survived the whole suite (red team, #22): no wrong-type case puts the bad key on a due id. A case
that catches it: ``add d`` with a delay, advance the clock past it, make ``P:item:d`` a list, then
lease must fail with WRONG_TYPE naming ``P:item:d`` and ``P:delayed``/``P:delayed:data`` must keep d.
"""

from __future__ import annotations

from _script import edit
from rwq.conformance import reference_adapter

edit(
    "lease",
    "    if #due_ids > 0 then\n      local due_keys = {}",
    "    if false then\n      local due_keys = {}",
)

if __name__ == "__main__":
    reference_adapter.main()
