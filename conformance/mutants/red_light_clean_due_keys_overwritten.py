"""light_clean builds the keys of the expired ``P:in_flight`` entries (profile flat) from offset 0 of
the table that holds the due ids' keys, not after them: whenever a flat lease has expired, the
check covers the expired ids only, and a due id whose ``P:item:<id>`` holds another type is promoted
unchecked (SET NX writes nothing, its delayed entry is removed: the item is lost; RWQ-SCRIPT-007).

Survived the whole suite (red team, #22), and would survive the case proposed for
red_light_clean_skips_due_and_expired_checks if that case has no expired flat lease. A case that
catches it: a flat lease of ``a`` (lease_ms 1) past its deadline, and a delayed ``d`` now due whose
``P:item:d`` is a list. ``light_clean`` must fail with WRONG_TYPE naming ``P:item:d``, and
``P:delayed`` must keep d.
"""

from __future__ import annotations

from _script import edit
from rwq.conformance import reference_adapter

edit(
    "light_clean",
    "item_keys(expired, item_keys(due_ids, {}, 0), 3 * #due_ids)",
    "item_keys(expired, item_keys(due_ids, {}, 0), 0)",
)

if __name__ == "__main__":
    reference_adapter.main()
