"""add that adds nothing (every id already exists, or repeats an earlier one) returns before it
checks the queue's type: on ``P:queue`` of another type it replies 0 per id, not
``RWQ_WRONG_TYPE P:queue`` (RWQ-SCRIPT-007: every key a call reads or writes, its KEYS included).

Survived the whole suite (red team, #22): the wrong-type cases for add give it a new id, so the
LPUSH (the queue's check) runs. A case that catches it: ``P:item:a`` exists and ``P:queue`` is a
hash; ``add a`` must fail with WRONG_TYPE and leave both keys as they were.
"""

from __future__ import annotations

from _script import edit
from rwq.conformance import reference_adapter

edit(
    "add",
    "  bad = mistyped(queue, 'list')\n  return bad and wrong_type(bad) or result\n",
    "  return result\n",
)

if __name__ == "__main__":
    reference_adapter.main()
