"""What the sync and asyncio shells share: client checks, routing and error translation."""

from __future__ import annotations

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

from .errors import InvalidArgument, InvalidType, RedisFailure, RwqError, error_from_script
from .protocol import validation
from .protocol.commands import Call, RunScript
from .protocol.operations import QueueKeys


def queue_keys(client: Any, prefix: str, *, cluster: bool) -> QueueKeys:
    """Validate the client and the prefix, and build the queue's keys."""
    if client.get_encoder().decode_responses:
        raise InvalidArgument("rwq needs a Redis client with decode_responses=False: payloads are bytes")
    return QueueKeys(validation.prefix(prefix, cluster=cluster))


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


def run_script_once(client: Any, command: RunScript) -> Any:
    """EVALSHA (EVAL after NOSCRIPT) on one pooled connection, each sent exactly once.

    redis-py retries commands after a connection error by default; a script whose reply was lost
    would then run again and its second answer be reported (``complete`` saying False to the
    call that completed). Sent once, a lost reply is a RedisFailure, as RWQ-FAIL-001 requires.
    """
    pool = client.connection_pool
    connection = pool.get_connection()
    try:
        try:
            connection.send_command("EVALSHA", command.script.sha1, *script_args(command))
            return connection.read_response()
        except NoScriptError:
            connection.send_command("EVAL", command.script.source, *script_args(command))
            return connection.read_response()
    except ResponseError:
        raise
    except BaseException:
        connection.disconnect()  # a reply may still be in flight: never reuse this connection
        raise
    finally:
        pool.release(connection)


async def run_script_once_async(client: Any, command: RunScript) -> Any:
    """:func:`run_script_once` for ``redis.asyncio`` clients."""
    pool = client.connection_pool
    connection = await pool.get_connection()
    try:
        try:
            await connection.send_command("EVALSHA", command.script.sha1, *script_args(command))
            return await connection.read_response()
        except NoScriptError:
            await connection.send_command("EVAL", command.script.source, *script_args(command))
            return await connection.read_response()
    except ResponseError:
        raise
    except BaseException:
        await connection.disconnect()  # a reply may still be in flight: never reuse this connection
        raise
    finally:
        await pool.release(connection)


REDIRECTS = (MovedError, AskError)  # the script did not run: the cluster client may follow them


def run_script_on_node(cluster: Any, command: RunScript) -> Any:
    """:func:`run_script_once` on the Redis Cluster node that serves the queue's slot."""
    node = cluster.get_node_from_key(command.keys[0])
    return run_script_once(node.redis_connection, command)


async def run_script_on_node_async(cluster: Any, command: RunScript) -> Any:
    """The same for ``redis.asyncio`` clusters, whose node connections never retry."""
    await cluster.initialize()
    node = cluster.get_node_from_key(command.keys[0])
    try:
        return await node.execute_command("EVALSHA", command.script.sha1, *script_args(command))
    except NoScriptError:
        return await node.execute_command("EVAL", command.script.source, *script_args(command))


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


def translate(exc: RedisError | RedisClusterException) -> RwqError:
    """A redis-py error as the matching rwq error."""
    if isinstance(exc, ResponseError):
        mapped = error_from_script(str(exc))
        if mapped is not None:
            return mapped
    return RedisFailure(f"{type(exc).__name__}: {exc}")
