"""Blind mutant (issue #25): ``beat`` takes any JSON value as the record, an array or a string too:
the client encodes whatever it is given and the script checks only that it decodes
(RWQ-LIVE-002: a JSON object)."""

from __future__ import annotations

import json

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import live


def _encode(record: object) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


live.encode_record = _encode
edit("heartbeat", " or type(decoded) ~= 'table' or not string.find(record, '^%s*{') then", " then")

if __name__ == "__main__":
    serve(WorkQueue)
