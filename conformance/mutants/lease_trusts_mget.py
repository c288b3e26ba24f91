"""Mutant: ``lease.lua`` trusts MGET alone for the types of the item keys it reads: a key MGET
finds no string in counts as missing, also when it holds another type, so a lease key that is a
list is overwritten by the new lease instead of refused (RWQ-SCRIPT-007). The canonical check
compares MGET's count with one EXISTS of the same keys and reads TYPE when they differ."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "lease",
    "      if not values[i] and mistyped(strings[i], 'string') then return values, strings[i] end\n",
    "",
)

if __name__ == "__main__":
    serve(WorkQueue)
