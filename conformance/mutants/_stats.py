"""Shared by the stats mutants: an edit of the count every counting script carries
(lua/fragments/stats.lua, profile stats, SPEC §22)."""

from __future__ import annotations

from _script import edit

COUNTING = ("add", "complete", "fail", "lease", "claim", "light_clean", "deep_clean")
"""The scripts that carry the stats fragment (complete_and_lease through complete and lease)."""


def edit_count(old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the stats count of every counting script."""
    for name in COUNTING:
        edit(name, old, new)
