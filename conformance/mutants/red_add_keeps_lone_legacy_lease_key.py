"""add re-adds an id but deletes the stale lease keys of an earlier item with that id only when
``P:lease:<id>`` exists (an optimiser reading only the RWQ/1 key of the MGET values). A
``P:leased_by_session:<id>`` left alone by an older client then holds the new item back: leases
skip it as held until that key expires (RWQ-ADD-*, the add header: "deleting any stale lease keys
of that id").

Survived the whole suite (red team, #22). A case that catches it: with
``P:leased_by_session:a`` set (PX 60000) and no ``P:lease:a`` and no ``P:item:a``, ``add a`` and then
``lease`` must grant a, and ``P:leased_by_session:a`` must be gone after the add.
"""

from __future__ import annotations

from _script import edit
from rwq.conformance import reference_adapter

edit("add", "if types[keys[k + 2]] or types[keys[k + 3]] then", "if types[keys[k + 2]] then")

if __name__ == "__main__":
    reference_adapter.main()
