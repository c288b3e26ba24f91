"""lease checks the keys of the first due id only (an off-by-one edit: ``for i = 1, 1``). Any later
due id whose ``P:item:<id>`` holds another type is promoted unchecked. ``SET ... NX`` on the existing
key writes nothing, and ZREM/HDEL drop the delayed entry, so the item is lost silently
(RWQ-SCRIPT-007; at-least-once).

Survived the whole suite (red team, #22): the due-id wrong-type check is not tested at all (see
red_lease_skips_due_id_checks), nor with more than one due id. A case that catches it: two delayed
items d1 and d2, both due, and ``P:item:d2`` a list. ``lease`` must fail with WRONG_TYPE naming
``P:item:d2``, and ``P:delayed`` must keep both.
"""

from __future__ import annotations

from _script import edit
from rwq.conformance import reference_adapter

edit(
    "lease",
    "      for i = 1, #due_ids do\n        local id = due_ids[i]",
    "      for i = 1, 1 do\n        local id = due_ids[i]",
)

if __name__ == "__main__":
    reference_adapter.main()
