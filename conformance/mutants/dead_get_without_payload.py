"""Mutant: ``dead_get`` parses its reply with the list entries' parser and drops the payload."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import DeadItem


class NoPayloadQueue(WorkQueue):
    def dead_item(self, item_id: str) -> DeadItem | None:
        item = super().dead_item(item_id)
        return None if item is None else dataclasses.replace(item, data=None)


if __name__ == "__main__":
    serve(NoPayloadQueue)
