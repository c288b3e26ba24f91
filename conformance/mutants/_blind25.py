"""Shared part of the ``blind25_*`` mutants: wrong ports of profiles stats (SPEC §22) and workers
(SPEC §21) written by the red team of issue #25 from SPEC, the scripts' headers and the adapter
protocol alone, without reading the cases. :func:`edit_all` edits every canonical script that
holds a text (the stats fragment is in every counting script), as a port that edited its shared
copy of that fragment would."""

from __future__ import annotations

import hashlib

from _script import edit
from rwq.protocol.scripts import Script, registry


def edit_all(old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in every canonical script that holds it (at least one must)."""
    names = [name for name, script in registry().items() if old.encode() in script.source]
    if not names:
        raise ValueError(f"no script has {old!r}")
    for name in names:
        edited = registry()[name].source.replace(old.encode(), new.encode())
        registry()[name] = Script(name, edited, hashlib.sha1(edited).hexdigest())


__all__ = ["edit", "edit_all"]
