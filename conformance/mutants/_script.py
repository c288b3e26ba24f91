"""Mutants that run a canonical script with one change: the port embeds its own, edited copy.

:func:`edit` puts the edited source in the registry the reference reads its scripts from, so that
every operation runs it, while the hello still reports the manifest's SHA1s (as a port that
edited its embedded copy and not its manifest would). The runner's wire check flags any script
of no manifest, so an edit that changes nothing fails with kind ``wire`` alone: a ledger line of
kind ``mismatch`` shows that the case caught what the edit broke.
"""

from __future__ import annotations

import hashlib

from rwq.conformance import reference_adapter
from rwq.protocol.scripts import Script, registry

_CANONICAL = dict(registry())
vars(reference_adapter)["registry"] = lambda: _CANONICAL  # its hello names the canonical SHA1s


def edit(name: str, old: str, new: str) -> None:
    """Replace ``old`` (which must occur) by ``new`` in the canonical script ``name``, and in
    complete_and_lease too where ``name`` is one of its parts."""
    for target in {name, "complete_and_lease"} if name in ("complete", "lease") else {name}:
        source = registry()[target].source
        if old.encode() not in source:
            if target == name:
                raise ValueError(f"{name}.lua has no {old!r}")
            continue
        edited = source.replace(old.encode(), new.encode())
        registry()[target] = Script(target, edited, hashlib.sha1(edited).hexdigest())
