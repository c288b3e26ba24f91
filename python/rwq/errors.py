"""Typed exceptions, one per RWQ/1 error code (SPEC "Errors")."""

from __future__ import annotations

from typing import ClassVar


class RwqError(Exception):
    """Base of every rwq error; ``code`` is the SPEC error code."""

    code: ClassVar[str] = "REDIS_ERROR"


class InvalidArgument(RwqError, ValueError):
    """Bad input (id, payload, duration, count, prefix); nothing was written to Redis."""

    code = "INVALID_ARGUMENT"


class InvalidType(InvalidArgument, TypeError):
    """An argument of the wrong type or shape (code INVALID_ARGUMENT); also a TypeError."""


class LeaseLost(RwqError):
    """The caller no longer holds the lease this owner-checked operation needs; nothing changed."""

    code = "LEASE_LOST"


class UnsupportedServer(RwqError):
    """The Redis server cannot run RWQ/1 (older than 6.2)."""

    code = "UNSUPPORTED_SERVER"


class RedisFailure(RwqError):
    """Redis failed or could not be reached; the operation's outcome may be unknown."""

    code = "REDIS_ERROR"


class NoPermission(RedisFailure):
    """The server's ACL refused a command of this call (code REDIS_ERROR, SPEC RWQ-SEC-006): the
    caller's role does not include this operation on this queue. Nothing was written."""


class ShardCountUnrecorded(NoPermission):
    """Profile sharded: no shard count is recorded for the queue, and this user may not record it
    (only the admin role may, RWQ-SHARD-009). The message names the fix, ``rwq shards --prefix P
    --shards N`` run as the admin. Nothing was written."""


class NotReplicated(RedisFailure):
    """The write took effect on the primary, but fewer replicas than asked acknowledged it in time.

    The outcome is ambiguous: a failover before the replicas catch up may lose the write. Retrying
    is safe where the operation is (``add`` is idempotent by id).
    """

    code = "NOT_REPLICATED"


class WrongType(RwqError):
    """A key of the queue's layout holds another Redis type than SPEC §3 gives it; nothing was written."""

    code = "WRONG_TYPE"


class ShardMismatch(RwqError):
    """Profile sharded: the queue's shard 0 records another shard count than this client's, so the
    two would route ids to different shards; nothing was written."""

    code = "SHARD_MISMATCH"


class PolicyMissing(RwqError):
    """A worker that brings a retry policy may not store it (its ACL user can only read
    ``<P>:policy``) and the queue has none: it refuses to start (RWQ-WORKER-001). The message is
    one line naming the admin command that fixes it."""

    code = "POLICY_MISSING"


class NonRetryable(Exception):
    """Raise it from a worker's handler for a failure no retry can fix (a malformed payload, a
    permanent refusal): the item goes to the dead-letter set now, whatever attempts are left
    (RWQ-RETRY-016). ``raise NonRetryable("bad payload") from exc`` keeps the cause in the
    traceback the dead item keeps."""


class RetryLater(Exception):
    """Raise it from a worker's handler to retry the item after ``delay_ms`` milliseconds
    instead of the queue's backoff (RWQ-RETRY-017); the attempt still counts, and an item out of
    attempts goes to the dead-letter set."""

    def __init__(self, delay_ms: int, message: str = "") -> None:
        # A bad delay is the handler's bug: raised here, it fails the item like any exception.
        if isinstance(delay_ms, bool) or not isinstance(delay_ms, int):
            raise InvalidType(f"delay_ms must be an int of milliseconds, not {type(delay_ms).__name__}")
        if not 0 <= delay_ms <= 31_536_000_000:
            raise InvalidArgument(f"delay_ms must be in 0..31536000000 ms, got {delay_ms}")
        super().__init__(message or f"retry in {delay_ms} ms")
        self.delay_ms = delay_ms


_BY_CODE: dict[str, type[RwqError]] = {
    cls.code: cls
    for cls in (
        InvalidArgument,
        LeaseLost,
        UnsupportedServer,
        RedisFailure,
        NotReplicated,
        WrongType,
        ShardMismatch,
    )
}


def error_from_script(message: str) -> RwqError | None:
    """Map a script error reply (``RWQ_<CODE> <text>``) to its exception, or None if not ours."""
    head, _, text = message.partition(" ")
    if not head.startswith("RWQ_"):
        return None
    cls = _BY_CODE.get(head[4:], RwqError)
    return cls(text or head)
