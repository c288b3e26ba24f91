"""A port whose scheduler reads a definition without looking at v, so it fires a schedule of
another version: RWQ-SCHED-017."""

import json

from _blind25p import patch, serve_reference
from rwq.errors import InvalidArgument
from rwq.protocol.periodic import Schedule


def from_json(cls: type[Schedule], text: bytes) -> Schedule:
    try:
        doc = json.loads(text)
    except ValueError:
        raise InvalidArgument("the definition is not JSON (RWQ-SCHED-017)") from None
    if not isinstance(doc, dict):
        raise InvalidArgument("the definition is not an object (RWQ-SCHED-017)")
    return cls.from_mapping(doc)


patch(Schedule, "from_json", classmethod(from_json))

if __name__ == "__main__":
    serve_reference()
