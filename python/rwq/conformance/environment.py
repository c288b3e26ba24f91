"""The Redis a run uses: one the runner starts (frozen clock when possible) or an external one.

On an external server the runner only ever touches keys under its own ``rwqc:{...}``
namespaces and never flushes anything; time is then advanced by "state surgery": every TTL
under the case's namespace is shortened by the delta.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

import redis
from redis.exceptions import RedisError

from .cluster import LocalCluster, Node, data_node, masters, namespace_on
from .redis_server import Faketime, RedisServer, RedisUnavailable, faketime_available, find_faketime

NAMESPACE_ROOT = "rwqc"
_GLOB_SPECIAL = "*?[]\\"


def glob_escape(text: str) -> str:
    """``text`` as a literal in a Redis MATCH pattern."""
    return "".join("\\" + ch if ch in _GLOB_SPECIAL else ch for ch in text)


def raw_client(url: str) -> Any:
    """A client whose replies are exactly what Redis sent (bytes, no per-command parsing).

    Typed ``Any``: redis-py's ``execute_command`` is untyped, and it is all the runner calls."""
    client: Any = redis.Redis.from_url(url, protocol=2, socket_timeout=10, client_name="rwqc-runner")
    client.response_callbacks = {}
    return client


class RedisEnvironment:
    """A Redis server for a run, with a clock the runner moves and faults it injects."""

    clock_note: str | None = None
    """Why the clock is not frozen (None when it is)."""

    def __init__(
        self,
        url: str,
        *,
        server: RedisServer | None = None,
        cluster: bool = False,
        local_cluster: LocalCluster | None = None,
    ) -> None:
        self.url = url
        self.server = server
        self.local_cluster = local_cluster
        self.nodes: list[Node] = masters(url) if cluster or local_cluster else []
        self.node = data_node(self.nodes) if self.nodes else None
        self.client: Any = raw_client(self.data_url)
        self.version = (
            self.client.execute_command("INFO", "server").decode().split("redis_version:")[1].split()[0]
        )

    @classmethod
    def managed(cls) -> RedisEnvironment:
        """Start a redis-server on a free loopback port; frozen clock when libfaketime is found and
        redis-server starts under it, else a running clock (and :attr:`clock_note` says why)."""
        faketime = find_faketime()
        note = None if isinstance(faketime, Faketime) else faketime
        server = None
        if isinstance(faketime, Faketime):
            try:
                server = RedisServer(frozen_clock=True).start()
            except RedisUnavailable as exc:
                note = f"no frozen clock with {faketime.library}: {exc}"
        server = server or RedisServer().start()
        env = cls(server.url, server=server)
        env.clock_note = note
        return env

    @classmethod
    def external(cls, url: str, *, cluster: bool = False) -> RedisEnvironment:
        """Use a server (or the cluster of the node at ``url``) someone else runs; fails fast
        (RedisError) if it cannot be reached."""
        env = cls(url, cluster=cluster)
        env.client.execute_command("PING")
        env.clock_note = "an external Redis: the runner cannot freeze its clock"
        return env

    @classmethod
    def managed_cluster(cls) -> RedisEnvironment:
        """Start a local 3-master cluster (:class:`LocalCluster`); frozen clock when possible."""
        local = LocalCluster(frozen_clock=faketime_available()).start()
        try:
            return cls(local.url, local_cluster=local)
        except BaseException:
            local.stop()
            raise

    @property
    def cluster(self) -> bool:
        """Whether the run targets Redis Cluster: adapters get the URL of one node (the seed) and
        open cluster clients; the runner reads and traces the node that serves every case's
        namespace (:attr:`data_url`), which is not the seed."""
        return bool(self.nodes)

    @property
    def data_url(self) -> str:
        """The server that holds the cases' keys: the one server, or the data node of a cluster."""
        return self.node.url if self.node is not None else self.url

    @property
    def is_managed(self) -> bool:
        """Whether the runner started the server (or the cluster) itself."""
        return self.server is not None or self.local_cluster is not None

    @property
    def frozen(self) -> bool:
        if self.local_cluster is not None:
            return self.local_cluster.frozen_clock
        return self.server is not None and self.server.frozen_clock

    @property
    def clock(self) -> str:
        """``frozen`` (a fake clock only the runner moves) or ``surgery`` (TTLs rewritten)."""
        return "frozen" if self.frozen else "surgery"

    @property
    def capabilities(self) -> frozenset[str]:
        """The case ``needs`` this environment meets."""
        caps = {
            "clock-control",
            "multi-process",
            "monitor",
            "undeclared-keys",
        }  # the runner may drop the last
        if self.is_managed:
            caps.add("managed-redis")
        if self.cluster:
            caps.add("cluster")
        else:
            caps.add("standalone")
        if self.clock == "frozen":
            caps.add("frozen-clock")
        if self.server is not None and self.server.frozen_clock:
            caps.add("clock-rewind")
        return frozenset(caps)

    @property
    def wire_checks(self) -> bool:
        """Whether cases are traced with MONITOR (:mod:`.wire`): on a managed server, whose
        traffic is all the run's own; on a cluster, MONITOR of the data node)."""
        return self.is_managed

    def describe(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "version": self.version,
            "managed": self.is_managed,
            "cluster": [node.url for node in self.nodes] or None,
            "clock": self.clock,
            "clock_note": self.clock_note,
            "capabilities": sorted(self.capabilities),
            "wire_checks": self.wire_checks,
        }

    # -- namespaces ----------------------------------------------------------------------
    def new_namespace(self) -> str:
        """A fresh key namespace with a hash tag, so all of a case's keys share one cluster slot
        (on a cluster, a slot of the data node)."""
        if self.node is not None:
            return namespace_on(self.node, NAMESPACE_ROOT)
        return f"{NAMESPACE_ROOT}:{{{secrets.token_hex(6)}}}"

    def namespace_keys(self, ns: str) -> list[bytes]:
        """Every key under ``ns`` (SCAN, never KEYS), the keys of sharded queues named after it
        included: ``{<ns without braces>...#i}:...`` and their doorbells (SPEC 19)."""
        keys: list[bytes] = []
        for pattern in (ns, "{" + ns.replace("{", "").replace("}", "")):
            cursor = b"0"
            while True:
                cursor, batch = self.client.execute_command(
                    "SCAN", cursor, "MATCH", glob_escape(pattern) + "*", "COUNT", 1000
                )
                keys += batch
                if cursor == b"0":
                    break
        return sorted(set(keys))

    def drop_namespace(self, ns: str) -> None:
        """Delete every key under ``ns``."""
        keys = self.namespace_keys(ns)
        for start in range(0, len(keys), 500):
            self.client.execute_command("DEL", *keys[start : start + 500])

    def drop_prefix(self, prefix: str) -> None:
        """Delete every key of the queue at ``prefix`` (a case's literal prefix, managed Redis)."""
        keys: list[bytes] = []
        cursor = b"0"
        while True:
            cursor, batch = self.client.execute_command(
                "SCAN", cursor, "MATCH", glob_escape(prefix) + ":*", "COUNT", 1000
            )
            keys += batch
            if cursor == b"0":
                break
        for start in range(0, len(keys), 500):
            self.client.execute_command("DEL", *keys[start : start + 500])

    # -- time ----------------------------------------------------------------------------
    def server_ms(self) -> int:
        """The data server's clock (TIME), in ms."""
        seconds, micros = self.client.execute_command("TIME")
        return int(seconds) * 1000 + int(micros) // 1000

    def advance(self, ns: str, ms: int) -> None:
        """Move time forward by ``ms`` for the keys under ``ns``."""
        if self.local_cluster is not None and self.local_cluster.frozen_clock:
            self.local_cluster.advance(ms)
            return
        if self.server is not None and self.server.frozen_clock:
            self.server.advance(ms)
            return
        for key in self.namespace_keys(ns):
            pttl = int(self.client.execute_command("PTTL", key))
            if pttl < 0:
                continue
            if pttl <= ms:
                self.client.execute_command("DEL", key)
            else:
                self.client.execute_command("PEXPIRE", key, pttl - ms)

    def rewind(self, ms: int) -> None:
        """Move the runner's own frozen server clock back by ``ms`` (capability clock-rewind)."""
        if self.server is None or not self.server.frozen_clock:
            raise RuntimeError("rewind_time_ms needs the runner's own frozen-clock server (clock-rewind)")
        self.server.rewind(ms)

    # -- faults and observation ----------------------------------------------------------
    def script_flush(self) -> None:
        self.client.execute_command("SCRIPT", "FLUSH", "SYNC")

    def clients(self) -> list[dict[str, str]]:
        """``CLIENT LIST`` as one dict per connection."""
        text = self.client.execute_command("CLIENT", "LIST").decode("utf-8", "replace")
        return [
            dict(field.split("=", 1) for field in line.split() if "=" in field) for line in text.splitlines()
        ]

    def kill_clients(self, names: set[str]) -> int:
        """Close every connection whose CLIENT SETNAME is in ``names``; returns how many."""
        killed = 0
        for entry in self.clients():
            if entry.get("name") in names:
                try:
                    killed += int(self.client.execute_command("CLIENT", "KILL", "ID", entry["id"]))
                except RedisError:
                    continue  # it went away by itself
        return killed

    def is_blocked(self, name: str) -> bool:
        """Whether a connection named ``name`` is blocked in a blocking command."""
        return any(entry.get("name") == name and "b" in entry.get("flags", "") for entry in self.clients())

    def wait_blocked(self, name: str, timeout_s: float, gave_up: Callable[[], bool] = lambda: False) -> bool:
        """Poll until a connection named ``name`` blocks, up to ``timeout_s``; stop early (False)
        when ``gave_up()`` says it never will (the call being waited for has returned)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not gave_up():
            if self.is_blocked(name):
                return True
            time.sleep(0.005)
        return False

    def close(self) -> None:
        self.client.close()
        if self.server is not None:
            self.server.stop()
        if self.local_cluster is not None:
            self.local_cluster.stop()
