"""A Redis Cluster for the suite and the tests: three masters the runner starts on free loopback
ports, or an existing cluster given by the URL of one of its nodes.

Every node of a local cluster can run under the same frozen fake clock (libfaketime, as
:class:`~.redis_server.RedisServer`); :meth:`LocalCluster.advance` moves them all. The node
timeout is far longer than any time a case advances, so moving the clock never fails a node.

A local cluster can also give each master a replica, with a shorter node timeout, for failover
tests (tests/test_sharded_failover.py): :meth:`LocalCluster.kill` SIGKILLs a node,
:meth:`LocalCluster.wait_promoted` waits for the cluster to promote its replica and
:meth:`LocalCluster.add_replica` replaces the lost node.
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

from .redis_server import RedisServer, RedisUnavailable, free_port
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
    """Three masters on 127.0.0.1, each a :class:`RedisServer` with cluster mode on, slots split evenly.

    ``replicas`` (0 or 1) starts that many replicas per master, attached with ``CLUSTER
    REPLICATE``; :meth:`start` returns once every replica's link is up and every node sees the
    cluster ok with a replica on every slot range. ``node_timeout_ms`` is the nodes'
    ``cluster-node-timeout``: a failover test shortens it so that the cluster promotes a killed
    master's replica within seconds. ``servers`` stays the three masters as started, in slot
    order, whatever roles failovers give them later; ``replica_servers`` holds the replicas.
    """

    frozen_clock: bool = False
    servers: list[RedisServer] = field(default_factory=list)
    replicas: int = 0
    node_timeout_ms: int = NODE_TIMEOUT_MS
    replica_servers: list[RedisServer] = field(default_factory=list)

    def start(self) -> LocalCluster:
        if self.replicas not in (0, 1):
            raise ValueError("a local cluster has 0 or 1 replica per master")
        if self.replicas and self.frozen_clock:
            raise ValueError("replicas need the real clock: a frozen one would stall their failover")
        try:
            for _ in SLOT_RANGES:
                self.servers.append(self._node().start())
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
            for master in self.servers[: len(self.servers) * self.replicas]:
                self._attach_replica(master)
            self._wait_ok()
        except BaseException:
            self.stop()
            raise
        return self

    def _node(self) -> RedisServer:
        args = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",  # relative to the server's own temporary --dir
            "--cluster-node-timeout",
            str(self.node_timeout_ms),
        ]
        if self.replicas:
            # A replica's first sync starts at once; a master pings its replicas every second, so
            # their offsets move, and CLUSTER SLOTS lists a replica only once its offset is not 0.
            args += ["--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1"]
        return RedisServer(frozen_clock=self.frozen_clock, extra_args=tuple(args), port=cluster_port())

    def _attach_replica(self, master: RedisServer) -> RedisServer:
        """Start a node, introduce it to the cluster and make it a replica of ``master``; return
        once its replication link is up."""
        replica = self._node().start()
        self.replica_servers.append(replica)  # stopped by stop(), even if attaching fails
        master_id = self.node_id(master)
        client = replica.client(socket_timeout=10)
        try:
            _command(client, "CLUSTER", "MEET", "127.0.0.1", master.port)
            deadline = time.monotonic() + 30
            while True:  # REPLICATE needs the master's id in the new node's table
                try:
                    _command(client, "CLUSTER", "REPLICATE", master_id)
                    break
                except redis.ResponseError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            while not self._link_up(client):
                if time.monotonic() > deadline:
                    raise RedisUnavailable(f"replica {replica.port} never synced with {master.port}")
                time.sleep(0.05)
        finally:
            client.close()
        return replica

    @staticmethod
    def _link_up(client: Any) -> bool:
        info = client.info("replication")
        return bool(info.get("role") == "slave" and info.get("master_link_status") == "up")

    def add_replica(self, master: RedisServer) -> RedisServer:
        """A new node made a replica of ``master`` (say the master a failover promoted, whose old
        master is gone); returns once its link is up and every live node sees the cluster ok."""
        replica = self._attach_replica(master)
        self._wait_ok(replicas=False)
        return replica

    @staticmethod
    def node_id(server: RedisServer) -> str:
        """The server's cluster node id (``CLUSTER MYID``)."""
        client = server.client(socket_timeout=10)
        try:
            reply = _command(client, "CLUSTER", "MYID")
        finally:
            client.close()
        return reply.decode() if isinstance(reply, bytes) else str(reply)

    @property
    def all_servers(self) -> list[RedisServer]:
        """Every node started, masters first: dead ones too."""
        return [*self.servers, *self.replica_servers]

    @property
    def live_servers(self) -> list[RedisServer]:
        return [server for server in self.all_servers if alive(server)]

    @staticmethod
    def role(server: RedisServer) -> str:
        """``master`` or ``slave``, as the server says now."""
        client = server.client(socket_timeout=10)
        try:
            return str(client.info("replication")["role"])
        finally:
            client.close()

    def replica_of(self, master: RedisServer) -> RedisServer:
        """The live node that replicates ``master`` now."""
        for server in self.live_servers:
            if server is master:
                continue
            client = server.client(socket_timeout=10)
            try:
                info = client.info("replication")
            finally:
                client.close()
            if info.get("role") == "slave" and int(info.get("master_port", 0)) == master.port:
                return server
        raise LookupError(f"no live replica of 127.0.0.1:{master.port}")

    def master_of_slot(self, slot: int) -> RedisServer:
        """The live node that serves ``slot`` now, as a live node's ``CLUSTER SLOTS`` says."""
        client = self.live_servers[0].client(socket_timeout=10)
        try:
            slots = _command(client, "CLUSTER", "SLOTS")
        finally:
            client.close()
        for entry in slots:
            if int(entry[0]) <= slot <= int(entry[1]):
                port = int(entry[2][1])
                return next(server for server in self.all_servers if server.port == port)
        raise LookupError(f"slot {slot} is not served")

    def kill(self, server: RedisServer) -> None:
        """SIGKILL the server's process (no shutdown, no goodbye to the cluster) and reap it."""
        process = server._process
        if process is None or process.poll() is not None:
            raise RuntimeError(f"127.0.0.1:{server.port} is not running")
        process.kill()  # SIGKILL on POSIX
        process.wait(10)

    def wait_promoted(
        self, server: RedisServer, timeout_s: float = 30, *, takeover_after_s: float | None = None
    ) -> None:
        """Until ``server`` is a master, and every live node sees the cluster ok with every slot
        range served by a live master. With ``takeover_after_s``, a replica the cluster has not
        elected by then is told to take over (``CLUSTER FAILOVER TAKEOVER``, which needs no
        votes): for tests of what clients do after a failover, not of the election, which now
        and then stalls on a loaded machine."""
        started = time.monotonic()
        deadline, told = started + timeout_s, False
        while time.monotonic() < deadline:
            with contextlib.suppress(redis.RedisError):
                if self.role(server) == "master" and self._settled(master=server.port):
                    return
                late = takeover_after_s is not None and time.monotonic() - started > takeover_after_s
                if late and not told and self.role(server) != "master":
                    told = True
                    client = server.client(socket_timeout=10)
                    try:
                        _command(client, "CLUSTER", "FAILOVER", "TAKEOVER")
                    finally:
                        client.close()
            time.sleep(0.05)
        raise RedisUnavailable(f"127.0.0.1:{server.port} was not promoted within {timeout_s} s")

    def _settled(self, *, replicas: bool = False, master: int = 0) -> bool:
        """Every live node is ready (:meth:`_ready`) and, given ``master``, lists that port as
        the master of a slot range."""
        ports = {server.port for server in self.live_servers}
        return all(
            self._ready(server, ports, replicas=replicas, master=master) for server in self.live_servers
        )

    def _wait_ok(self, *, replicas: bool = True) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._settled(replicas=replicas and self.replicas > 0):
                return
            time.sleep(0.05)
        raise RedisUnavailable("the local cluster did not reach cluster_state:ok")

    @staticmethod
    def _ready(server: RedisServer, live_ports: set[int], *, replicas: bool, master: int = 0) -> bool:
        """``server`` sees the cluster ok, every slot range served by a live master (and, with
        ``replicas``, replicated by a live node)."""
        client = server.client(socket_timeout=10)
        try:
            info = _command(client, "CLUSTER", "INFO")
            text = info.decode() if isinstance(info, bytes) else str(info)
            slots = _command(client, "CLUSTER", "SLOTS")
            served = all(int(entry[2][1]) in live_ports for entry in slots)
            copied = all(any(int(node[1]) in live_ports for node in entry[3:]) for entry in slots)
            return (
                "cluster_state:ok" in text
                and len(slots) == len(SLOT_RANGES)
                and served
                and (copied or not replicas)
                and (not master or any(int(entry[2][1]) == master for entry in slots))
            )
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
        for server in self.all_servers:
            server.advance(ms)

    def stop(self) -> None:
        for server in self.all_servers:
            with contextlib.suppress(OSError):
                server.stop()


BUS_OFFSET = 10_000
"""A cluster node listens on its port + 10000 for the cluster bus too."""


def cluster_port() -> int:
    """A free loopback port whose cluster bus port (+10000) is a valid port and free too: a node
    given a port above 55535 exits at start, and :class:`RedisServer` tries another after
    seconds of retried connections."""
    for _ in range(100):
        port = free_port()
        if port + BUS_OFFSET > 65535:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + BUS_OFFSET))
            except OSError:
                continue
        return port
    return 0  # RedisServer picks one itself


def alive(server: RedisServer) -> bool:
    """Whether the server's process runs."""
    process = server._process
    return process is not None and process.poll() is None


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
