"""The implementations measured side by side, by name; optional ones import lazily."""

from __future__ import annotations

import importlib

from bench.peers.base import Peer

PEERS: dict[str, str] = {
    "raw": "bench.peers.raw:Raw",
    "rwq": "bench.peers.rwq_peers:Rwq",
    "rwq-declared": "bench.peers.rwq_peers:RwqDeclared",
    "rwq-stats": "bench.peers.rwq_peers:RwqStats",
    "rwq-lean": "bench.peers.rwq_peers:RwqLean",
    "rwq-proto": "bench.peers.rwq_peers:RwqProto",
    "rwq015": "bench.peers.rwq015:Rwq015",
    "streams": "bench.peers.streams:Streams",
    "bullmq": "bench.peers.bullmq_peer:BullMQ",
    "rq": "bench.peers.rq_peer:Rq",
}
"""Name -> "module:class", in report column order."""


def peer_class(name: str) -> type[Peer]:
    """The class of the peer called ``name`` (ImportError when its package is missing)."""
    module, _, attr = PEERS[name].partition(":")
    cls: type[Peer] = getattr(importlib.import_module(module), attr)
    assert issubclass(cls, Peer)
    return cls
