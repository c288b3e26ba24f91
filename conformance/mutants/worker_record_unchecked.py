"""Mutant: the client encodes any JSON value as a record and sends it, leaving the size and "is an
object" checks to the script: a list or an oversized record goes out before it is refused
(RWQ-ERR-002, RWQ-LIVE-002)."""

from __future__ import annotations

import json

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import live

vars(live)["record_json"] = lambda record: json.dumps(record, separators=(",", ":")).encode("utf-8")

if __name__ == "__main__":
    serve(WorkQueue)
