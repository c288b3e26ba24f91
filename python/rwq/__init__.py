"""rwq: the reference Python client of RWQ/1, a work queue protocol on Redis."""

from .aio import AsyncWorkQueue
from .aio_worker import AsyncJob, AsyncWorker
from .client import WorkQueue
from .errors import (
    InvalidArgument,
    InvalidType,
    LeaseLost,
    NonRetryable,
    NoPermission,
    NotReplicated,
    PolicyMissing,
    RedisFailure,
    RetryLater,
    RwqError,
    ShardCountUnrecorded,
    ShardMismatch,
    UnsupportedServer,
    WrongType,
)
from .periodic import AsyncScheduler, Scheduler
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
from .protocol.periodic import Schedule
from .protocol.scripts import PROTOCOL
from .protocol.stats import QueueStats, StatCounts
from .worker import Job, Worker, WorkerEvent, WorkerHealth, WorkerStats

__version__ = "1.0.0.dev0"

__all__ = [
    "PROTOCOL",
    "AsyncJob",
    "AsyncScheduler",
    "AsyncWorkQueue",
    "AsyncWorker",
    "CleanReport",
    "Counts",
    "DeadItem",
    "FailOutcome",
    "FailResult",
    "InvalidArgument",
    "InvalidType",
    "Job",
    "Lease",
    "LeaseLost",
    "NoPermission",
    "NonRetryable",
    "NotReplicated",
    "Outcome",
    "PolicyMissing",
    "QueueStats",
    "RedisFailure",
    "RetryLater",
    "RetryPolicy",
    "RwqError",
    "RwqWarning",
    "Schedule",
    "Scheduler",
    "ShardCountUnrecorded",
    "ShardMismatch",
    "StatCounts",
    "UnsupportedServer",
    "WorkQueue",
    "Worker",
    "WorkerEvent",
    "WorkerHealth",
    "WorkerStats",
    "WrongType",
    "__version__",
]
