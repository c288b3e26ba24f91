"""A Redis Cluster for the suite and the tests: three masters the runner starts on free loopback
ports, or an existing cluster given by the URL of one of its nodes.

Every node of a local cluster can run under the same frozen fake clock (libfaketime, as
:class:`~.redis_server.RedisServer`); :meth:`LocalCluster.advance` moves them all. The node
timeout is far longer than any time a case advances, so moving the clock never fails a node.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import redis
from redis.crc import key_slot

from .redis_server import RedisServer, RedisUnavailable
from .wire import WireError, parse_line, show

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


class OtherNodesTrace:
    """``MONITOR`` of the masters that do not serve a case's namespace. A client sends every command
    about its queue to the node of the queue's slot (RWQ-CLUSTER-002), so any command these nodes
    see that names the namespace (a key, a ``SCAN`` pattern) is a violation: a ``SCAN`` fanned out to
    every master, say, whose merged result is right."""

    def __init__(self, nodes: list[Node], namespace: str, timeout_s: float) -> None:
        self.namespace = namespace.encode()
        self.marker = b"rwqc-wire:" + self.namespace + b":"
        self.timeout_s = timeout_s
        self._monitors: list[tuple[Node, socket.socket, BinaryIO]] = []
        self._clients: list[Any] = []
        try:
            for node in nodes:
                self._monitor(node)
                self._clients.append(redis.Redis(host=node.host, port=node.port, client_name="rwqc-runner"))
        except BaseException:
            self.close()
            raise

    def _monitor(self, node: Node) -> None:
        try:
            sock = socket.create_connection((node.host, node.port), timeout=self.timeout_s)
            stream = sock.makefile("rb")
            self._monitors.append((node, sock, stream))
            sock.sendall(b"CLIENT SETNAME rwqc-wire\r\nMONITOR\r\n")
            replies = (stream.readline(), stream.readline())
        except OSError as exc:
            raise WireError(f"cannot MONITOR {node.host}:{node.port}: {exc}") from exc
        if replies != (b"+OK\r\n", b"+OK\r\n"):
            raise WireError(f"MONITOR was refused by {node.host}:{node.port}: {replies!r}")

    def mark(self, step: int) -> None:
        """Mark the start of step ``step`` in every node's trace."""
        for client in self._clients:
            client.echo(self.marker + str(step).encode())

    def strays(self) -> list[tuple[int, str]]:
        """(step, description) of every command naming the namespace that reached these nodes, up
        to an end marker sent now; closes the trace."""
        end = self.marker + b"end"
        found: list[tuple[int, str]] = []
        try:
            for (node, sock, stream), client in zip(self._monitors, self._clients, strict=True):
                client.echo(end)
                step = 0
                deadline = time.monotonic() + self.timeout_s
                while True:
                    sock.settimeout(max(deadline - time.monotonic(), 0.001))
                    line = stream.readline()
                    if not line:
                        raise WireError(f"the MONITOR connection to {node.host}:{node.port} closed")
                    seen = parse_line(line)
                    if seen is None:
                        continue
                    if seen.name == b"ECHO" and seen.args[-1].startswith(self.marker):
                        if seen.args[-1] == end:
                            break
                        step = int(seen.args[-1][len(self.marker) :])
                    elif any(self.namespace in arg for arg in seen.args):
                        found.append((step, f"{show(seen.args)} to {node.host}:{node.port}"))
        except OSError as exc:
            raise WireError(f"the other nodes' MONITOR trace did not arrive: {exc}") from exc
        finally:
            self.close()
        return sorted(found)

    def close(self) -> None:
        for _, sock, stream in self._monitors:
            for closable in (stream, sock):
                with contextlib.suppress(OSError):
                    closable.close()
        self._monitors.clear()
        for client in self._clients:
            client.close()
        self._clients.clear()
