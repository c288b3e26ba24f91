"""rwq: the reference Python client of RWQ/1, a work queue protocol on Redis."""

from .aio import AsyncWorkQueue
from .client import WorkQueue
from .errors import InvalidArgument, LeaseLost, RedisFailure, RwqError, UnsupportedServer
from .protocol.operations import (
    CleanReport,
    Counts,
    DeadItem,
    FailOutcome,
    FailResult,
    Lease,
    Outcome,
    RetryPolicy,
    RwqWarning,
)
from .protocol.scripts import PROTOCOL

__version__ = "1.0.0.dev0"

__all__ = [
    "PROTOCOL",
    "AsyncWorkQueue",
    "CleanReport",
    "Counts",
    "DeadItem",
    "FailOutcome",
    "FailResult",
    "InvalidArgument",
    "Lease",
    "LeaseLost",
    "Outcome",
    "RedisFailure",
    "RetryPolicy",
    "RwqError",
    "RwqWarning",
    "UnsupportedServer",
    "WorkQueue",
    "__version__",
]
