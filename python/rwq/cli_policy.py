"""Admin commands of the ``rwq`` CLI: ``rwq policy show|set|clear``, a queue's retry policy.

The policy is data in Redis (``<P>:policy``, SPEC §15) that every client and worker applies; a
worker's own ``retry`` setting never replaces a stored one (RWQ-WORKER-003), so these commands
are how it is changed. ``set`` and ``clear`` take the admin role (``rwq acl admin --prefix P``);
``show`` also runs as the worker or the operator, who may read the policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar

import click
from rich.table import Table

from .cli_queue import emit, open_queue, shown, with_queue_options
from .errors import RwqError
from .protocol import validation as v
from .protocol.operations import RetryPolicy
from .worker import DEFAULT_RETRY

FC = TypeVar("FC", bound=Callable[..., Any])
FIELDS = ("max_attempts", "backoff", "base_ms", "cap_ms", "jitter_pct", "dead_max_count", "dead_max_age_ms")


def _emit(command: str, prefix: str, policy: RetryPolicy | None, as_json: bool) -> None:
    table = Table(title=shown(f"retry policy of {prefix}"))
    table.add_column("field")
    table.add_column("value")
    if policy is None:
        table.add_row("(none)", "failed items are given back at once, or after the worker's 1 s fallback")
    else:
        for name in FIELDS:
            table.add_row(name, str(getattr(policy, name)))
    emit(
        as_json,
        {"command": command, "prefix": prefix, "policy": None if policy is None else asdict(policy)},
        table,
    )


@click.group()
def policy() -> None:
    """A queue's retry policy (profile retry): attempts, backoff and dead-letter retention."""


@policy.command("show")
@with_queue_options
def policy_show(*, url: str, prefix: str, cluster: bool, shards: int, as_json: bool) -> None:
    """The retry policy every worker of the queue applies, or none."""
    with open_queue(url, prefix, cluster, shards) as queue:
        current = queue.retry_policy()
    _emit("policy show", prefix, current, as_json)


def _field_option(name: str, maximum: int, help_text: str) -> Callable[[FC], FC]:
    default = getattr(DEFAULT_RETRY, name)
    flag = "--" + name.replace("_", "-")
    return click.option(
        flag, name, type=click.IntRange(0, maximum), default=default, show_default=True, help=help_text
    )


@policy.command("set")
@with_queue_options
@_field_option("max_attempts", 1_000_000, "Leases an item may receive before it is dead; 0: no limit.")
@click.option(
    "--backoff",
    type=click.Choice(["fixed", "exponential"]),
    default=DEFAULT_RETRY.backoff,
    show_default=True,
    help="How the delay after a failure grows.",
)
@_field_option("base_ms", v.MAX_DURATION_MS, "The fixed delay, or the first exponential one (ms).")
@_field_option("cap_ms", v.MAX_DURATION_MS, "The largest exponential delay (ms); 0: no cap.")
@_field_option("jitter_pct", 100, "Each delay is shortened by up to this share, at random.")
@_field_option("dead_max_count", 100_000_000, "Dead items kept; 0: no limit.")
@_field_option("dead_max_age_ms", v.MAX_DURATION_MS, "How long dead items are kept (ms); 0: no limit.")
def policy_set(*, url: str, prefix: str, cluster: bool, shards: int, as_json: bool, **fields: Any) -> None:
    """Store the queue's retry policy, replacing the whole of any previous one (admin role).

    Every option left out takes the default workers bring (rwq.worker.DEFAULT_RETRY).
    """
    try:
        new = RetryPolicy(**fields)
    except RwqError as exc:
        raise click.UsageError(str(exc)) from exc
    with open_queue(url, prefix, cluster, shards) as queue:
        queue.set_retry_policy(new)
    _emit("policy set", prefix, new, as_json)


@policy.command("clear")
@with_queue_options
def policy_clear(*, url: str, prefix: str, cluster: bool, shards: int, as_json: bool) -> None:
    """Remove the queue's retry policy (admin role): attempts are no longer counted, and workers
    that bring a policy store theirs at their next start."""
    with open_queue(url, prefix, cluster, shards) as queue:
        queue.set_retry_policy(None)
    _emit("policy clear", prefix, None, as_json)
