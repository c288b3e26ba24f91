"""A Redis Cluster for the suite and the tests: three masters the runner starts on free loopback
ports, or an existing cluster given by the URL of one of its nodes.

Every node of a local cluster can run under the same frozen fake clock (libfaketime, as
:class:`~.redis_server.RedisServer`); :meth:`LocalCluster.advance` moves them all. The node
timeout is far longer than any time a case advances, so moving the clock never fails a node.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import redis
from redis.crc import key_slot

from .redis_server import RedisServer, RedisUnavailable

SLOT_RANGES = ((0, 5460), (5461, 10922), (10923, 16383))
NODE_TIMEOUT_MS = 10**15  # ~31,000 years: no advance of the frozen clock makes a node look down
SETTLE_MS = 10_000
"""How far a frozen cluster's clock moves once while it forms: a master waits a moment of server
time (CLUSTER_WRITABLE_DELAY) before it declares the cluster ok."""


@dataclass(frozen=True)
class Node:
    """One master: its address and the slot ranges it serves."""

    host: str
    port: int
    slots: tuple[tuple[int, int], ...]

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def serves(self, slot: int) -> bool:
        return any(low <= slot <= high for low, high in self.slots)


def _command(client: Any, *args: Any) -> Any:
    return client.execute_command(*args)


def masters(url: str) -> list[Node]:
    """The masters of the cluster that the node at ``url`` belongs to (``CLUSTER SLOTS``), seed first."""
    parts = urlsplit(url)
    seed = (parts.hostname or "127.0.0.1", parts.port or 6379)
    client: Any = redis.Redis.from_url(url, socket_timeout=10)
    try:
        slots = _command(client, "CLUSTER", "SLOTS")
    finally:
        client.close()
    ranges: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for entry in slots:
        host = entry[2][0].decode() if isinstance(entry[2][0], bytes) else str(entry[2][0])
        ranges.setdefault((host or seed[0], int(entry[2][1])), []).append((int(entry[0]), int(entry[1])))
    nodes = [Node(host, port, tuple(sorted(spans))) for (host, port), spans in ranges.items()]
    return sorted(nodes, key=lambda node: ((node.host, node.port) != seed, node.slots))


def data_node(nodes: list[Node]) -> Node:
    """The master whose slots the run's namespaces use: not the seed (the first) when there is
    another, so a client must route by slot to reach them."""
    return nodes[1] if len(nodes) > 1 else nodes[0]


def namespace_on(node: Node, root: str) -> str:
    """A fresh ``root:{<random>}`` namespace whose hash tag hashes to a slot ``node`` serves."""
    while True:
        tag = secrets.token_hex(6)
        if node.serves(key_slot(tag.encode())):
            return f"{root}:{{{tag}}}"


@dataclass
class LocalCluster:
    """Three masters on 127.0.0.1, each a :class:`RedisServer` with cluster mode on, slots split evenly."""

    frozen_clock: bool = False
    servers: list[RedisServer] = field(default_factory=list)

    def start(self) -> LocalCluster:
        try:
            for _ in SLOT_RANGES:
                server = RedisServer(
                    frozen_clock=self.frozen_clock,
                    extra_args=(
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",  # relative to the server's own temporary --dir
                        "--cluster-node-timeout",
                        str(NODE_TIMEOUT_MS),
                    ),
                )
                self.servers.append(server.start())
            first = self.servers[0].client()
            for server in self.servers[1:]:
                _command(first, "CLUSTER", "MEET", "127.0.0.1", server.port)
            first.close()
            for server, (low, high) in zip(self.servers, SLOT_RANGES, strict=True):
                client = server.client()
                _command(client, "CLUSTER", "ADDSLOTSRANGE", low, high)
                client.close()
            if self.frozen_clock:
                self.advance(SETTLE_MS)
            self._wait_ok()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ok(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if all(self._ready(server) for server in self.servers):
                return
            time.sleep(0.05)
        raise RedisUnavailable("the local cluster did not reach cluster_state:ok")

    @staticmethod
    def _ready(server: RedisServer) -> bool:
        client = server.client()
        try:
            info = _command(client, "CLUSTER", "INFO")
            text = info.decode() if isinstance(info, bytes) else str(info)
            slots = _command(client, "CLUSTER", "SLOTS")
            return "cluster_state:ok" in text and len(slots) == len(SLOT_RANGES)
        except redis.RedisError:
            return False
        finally:
            client.close()

    @property
    def port(self) -> int:
        """The port of the first node (the seed a client is given)."""
        return self.servers[0].port

    @property
    def url(self) -> str:
        return self.servers[0].url

    def advance(self, ms: int) -> None:
        """Move every node's frozen clock forward by ``ms``."""
        for server in self.servers:
            server.advance(ms)

    def stop(self) -> None:
        for server in self.servers:
            with contextlib.suppress(OSError):
                server.stop()
