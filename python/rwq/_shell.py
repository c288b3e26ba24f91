"""What the sync and asyncio shells share: client checks, routing and error translation."""

from __future__ import annotations

import contextlib
from typing import Any

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster
from redis.exceptions import (
    AskError,
    MovedError,
    NoScriptError,
    RedisClusterException,
    RedisError,
    ResponseError,
)

from .errors import InvalidArgument, InvalidType, NoPermission, RedisFailure, RwqError, error_from_script
from .protocol import validation
from .protocol.commands import Call, RunScript, Wait
from .protocol.operations import QueueKeys


def queue_keys(client: Any, prefix: str, *, cluster: bool) -> QueueKeys:
    """Validate the client and the prefix, and build the queue's keys."""
    if client.get_encoder().decode_responses:
        raise InvalidArgument("rwq needs a Redis client with decode_responses=False: payloads are bytes")
    return QueueKeys(validation.queue_prefix(prefix, cluster=cluster))


SYNC_CLIENTS = (redis.Redis, redis.cluster.RedisCluster)
ASYNC_CLIENTS = (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster)


def is_cluster(client: object, *, asyncio: bool) -> bool:
    """Check that ``client`` is a redis-py client of the queue's kind; True for a cluster client."""
    wanted, other = (ASYNC_CLIENTS, SYNC_CLIENTS) if asyncio else (SYNC_CLIENTS, ASYNC_CLIENTS)
    if isinstance(client, other):
        raise InvalidType(
            "AsyncWorkQueue needs a redis.asyncio client, not a synchronous one: use WorkQueue"
            if asyncio
            else "WorkQueue needs a synchronous redis client, not a redis.asyncio one: use AsyncWorkQueue"
        )
    if not isinstance(client, wanted):
        names = " or ".join(f"{cls.__module__}.{cls.__name__}" for cls in wanted)
        raise InvalidType(f"redis must be a {names}, not {type(client).__name__}")
    return isinstance(client, wanted[1])


def script_args(command: RunScript) -> tuple[Any, ...]:
    """EVALSHA/EVAL arguments after the script: numkeys, keys, argv."""
    return (len(command.keys), *command.keys, *command.args)


FAILURES = (RedisError, RedisClusterException)


def run_script_on_connection(connection: Any, command: RunScript) -> Any:
    """EVALSHA (EVAL after NOSCRIPT), then the WAIT of ``command.wait``, each sent exactly once.

    redis-py retries commands after a connection error by default; a script whose reply was lost
    would then run again and its second answer be reported (``complete`` saying False to the
    call that completed). Sent once, a lost reply is a RedisFailure, as RWQ-FAIL-001 requires.
    The WAIT goes on the same connection right after the script's reply: WAIT counts the
    replicas that have this connection's writes (RWQ-ACK-001). It is not pipelined with the
    EVALSHA, whose NOSCRIPT would make it wait for nothing, up to its whole timeout.
    """
    try:
        try:
            connection.send_command("EVALSHA", command.script.sha1, *script_args(command))
            reply = connection.read_response()
        except NoScriptError:
            connection.send_command("EVAL", command.script.source, *script_args(command))
            reply = connection.read_response()
        if command.wait is None:
            return reply
        connection.send_command("WAIT", command.wait.replicas, command.wait.timeout_ms)
        return reply, connection.read_response(timeout=_wait_timeout_s(connection, command.wait))
    except ResponseError:
        raise
    except BaseException:
        connection.disconnect()  # a reply may still be in flight: never reuse this connection
        raise


async def run_script_on_connection_async(connection: Any, command: RunScript) -> Any:
    """:func:`run_script_on_connection` for ``redis.asyncio`` connections."""
    try:
        try:
            await connection.send_command("EVALSHA", command.script.sha1, *script_args(command))
            reply = await connection.read_response()
        except NoScriptError:
            await connection.send_command("EVAL", command.script.source, *script_args(command))
            reply = await connection.read_response()
        if command.wait is None:
            return reply
        await connection.send_command("WAIT", command.wait.replicas, command.wait.timeout_ms)
        return reply, await connection.read_response(timeout=_wait_timeout_s(connection, command.wait))
    except ResponseError:
        raise
    except BaseException:
        await connection.disconnect()  # a reply may still be in flight: never reuse this connection
        raise


def _wait_timeout_s(connection: Any, wait: Wait) -> float | None:
    """How long to read WAIT's reply: the connection's own socket timeout, if any, plus WAIT's."""
    base = connection.socket_timeout
    return None if base is None else base + wait.timeout_ms / 1000


def run_script_once(client: Any, command: RunScript) -> Any:
    """:func:`run_script_on_connection` on one connection of ``client``'s pool."""
    pool = client.connection_pool
    connection = pool.get_connection()
    try:
        return run_script_on_connection(connection, command)
    finally:
        pool.release(connection)


async def run_script_once_async(client: Any, command: RunScript) -> Any:
    """:func:`run_script_once` for ``redis.asyncio`` clients."""
    pool = client.connection_pool
    connection = await pool.get_connection()
    try:
        return await run_script_on_connection_async(connection, command)
    finally:
        await pool.release(connection)


REDIRECTS = (MovedError, AskError)  # the script did not run: the cluster client may follow them


NODE_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
"""Failures after which the cluster's slot map may be stale (a master died and a replica took over)."""


def run_script_on_node(cluster: Any, command: RunScript) -> Any:
    """:func:`run_script_once` on the Redis Cluster node that serves the queue's slot.

    This bypasses the cluster client's own command path, so it also does what that path does
    when a node cannot be reached: it reloads the slot map, so that the next call goes to the
    master that took over; the failed call is still reported (it may or may not have run)."""
    node = cluster.get_node_from_key(command.keys[0])
    try:
        return run_script_once(node.redis_connection, command)
    except NODE_DOWN:
        with contextlib.suppress(RedisError, RedisClusterException):
            cluster.nodes_manager.initialize()
        raise


async def run_script_on_node_async(cluster: Any, command: RunScript) -> Any:
    """The same for ``redis.asyncio`` clusters, whose node connections never retry."""
    await cluster.initialize()
    node = cluster.get_node_from_key(command.keys[0])
    try:
        if command.wait is not None:  # the WAIT must share the script's connection
            connection = node.acquire_connection()
            try:
                return await run_script_on_connection_async(connection, command)
            finally:
                node.release(connection)
        try:
            return await node.execute_command("EVALSHA", command.script.sha1, *script_args(command))
        except NoScriptError:
            return await node.execute_command("EVAL", command.script.source, *script_args(command))
    except NODE_DOWN:
        with contextlib.suppress(RedisError, RedisClusterException):
            await cluster.nodes_manager.initialize()
        raise


def call_kwargs(client: Any, command: Call, *, cluster: bool) -> dict[str, Any]:
    """Route a plain command to the node that holds the queue's slot on Redis Cluster."""
    if cluster:
        return {"target_nodes": client.get_node_from_key(command.route_key)}
    return {}


def call_reply(command: Call, reply: Any, *, cluster: bool) -> Any:
    """A plain command's reply as a standalone server gives it.

    redis-py's cluster client answers SCAN with a ``{node: cursor}`` map even for one node.
    """
    if cluster and command.args[0] == "SCAN":
        cursors, keys = reply
        return next(iter(cursors.values())), keys
    return reply


REFUSALS = ("NOPERM", "no permissions", "can't run this command", "can't access at least one of the keys")
"""How Redis says its ACL refused a command: NOPERM, and (Redis 7.0) the text of a refusal inside a
script, whose reply starts with ERR."""


def translate(exc: RedisError | RedisClusterException) -> RwqError:
    """A redis-py error as the matching rwq error."""
    if isinstance(exc, ResponseError):
        mapped = error_from_script(str(exc))
        if mapped is not None:
            return mapped
        if any(sign in str(exc) for sign in REFUSALS):
            return NoPermission(
                "this user may not run this operation on this queue; nothing was written "
                f"(RWQ-SEC-006): {exc}"
            )
    return RedisFailure(f"{type(exc).__name__}: {exc}")
