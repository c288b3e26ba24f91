"""Shared part of the ``blind25p_*`` mutants: wrong ports of profile periodic (SPEC §23) written
by the red team of issue #25 from SPEC, the scripts' headers and the reference client alone,
without reading the cases. A mutant either edits a canonical script (:func:`edit`) or replaces one
function of the reference's cron walk, slot plan or scheduler (:func:`patch`), then calls
:func:`serve_reference`. :func:`patch_instants` rewrites how the cron walk turns one wall time
into instants, as a port handling DST folds and gaps its own way would."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import date, datetime
from typing import Any

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue
from rwq.protocol import cron
from rwq.protocol.cron import CronSchedule

Choose = Callable[[int, int, bool], list[int]]
"""The instants of one wall time from its fold-0 and fold-1 readings and whether the hour field
is ``*``: the reference keeps fold 0 unless it is a gap under ``*``, and adds fold 1 for a repeat
under ``*``."""


def patch(owner: Any, name: str, value: Any) -> None:
    """Replace ``owner.name`` (which must exist) by ``value``, as the port's own code."""
    if not hasattr(owner, name):
        raise AttributeError(f"{owner!r} has no {name}")
    setattr(owner, name, value)


def patch_parse(change: Callable[[CronSchedule, str], CronSchedule]) -> None:
    """Parse as the reference does, then ``change(schedule, expr)`` what the port got wrong."""
    original = CronSchedule.parse.__func__  # type: ignore[attr-defined]

    def parse(cls: type[CronSchedule], expr: str, tz: str = "UTC") -> CronSchedule:
        return change(original(cls, expr, tz), expr)

    patch(CronSchedule, "parse", classmethod(parse))


def replace(schedule: CronSchedule, **changes: Any) -> CronSchedule:
    """``schedule`` with some fields changed."""
    return dataclasses.replace(schedule, **changes)


def patch_instants(choose: Choose) -> None:
    """The reference's walk of one local date, with ``choose`` deciding each wall time near an
    offset change."""

    def instants(self: CronSchedule, d: date, after_ms: int) -> Iterator[int]:
        midnight = cron._naive_ms(d)
        offset = self._offset_ms(midnight - cron._DAY_MS)
        plain = offset == self._offset_ms(midnight + 2 * cron._DAY_MS)
        for hour in sorted(self.hours):
            for minute in sorted(self.minutes):
                naive = midnight + (hour * 60 + minute) * 60_000
                if plain:
                    if naive - offset > after_ms:
                        yield naive - offset
                        return
                    continue
                if naive + cron._DAY_MS <= after_ms:
                    continue
                wall = datetime(d.year, d.month, d.day, hour, minute, tzinfo=self.zone)
                first = int(wall.timestamp()) * 1000
                second = int(wall.replace(fold=1).timestamp()) * 1000
                if first == second:
                    yield first
                else:
                    yield from choose(first, second, self.hour_star)

    patch(CronSchedule, "_instants", instants)


def serve_reference() -> None:
    """Serve the reference adapter with whatever this mutant patched or edited."""
    serve(WorkQueue)


__all__ = ["edit", "patch", "patch_instants", "patch_parse", "replace", "serve_reference"]
