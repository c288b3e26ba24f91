"""Mutant: a scheduler reads any definition with the members it knows and ignores ``v``: a newer
client's schedule (v 2) is fired by version 1's rules (RWQ-SCHED-017)."""

from __future__ import annotations

import json

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol import periodic


def lenient(cls: type[periodic.Schedule], text: bytes) -> periodic.Schedule:
    try:
        doc = json.loads(text)
    except ValueError:
        raise InvalidArgument("not JSON") from None
    return cls.from_mapping(doc)


periodic.Schedule.from_json = classmethod(lenient)  # type: ignore[method-assign,assignment]

if __name__ == "__main__":
    serve(WorkQueue)
