"""The ``rwq`` command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import cli_periodic, cli_policy, cli_queue, cli_worker
from .console import EXIT_USAGE, missing_extra


@click.group()
@click.version_option(package_name="rwq")
def cli() -> None:
    """rwq: tools for RWQ/1 work queues on Redis."""


@cli.command()
@click.option(
    "--adapter",
    required=True,
    metavar="CMD",
    help="Command that starts the adapter under test (shell-quoted).",
)
@click.option(
    "--profile",
    "profiles",
    multiple=True,
    metavar="NAME",
    help="Profile to claim (repeatable); default: every profile the adapter declares.",
)
@click.option(
    "--redis-url",
    metavar="URL",
    help="Use this Redis instead of starting one (only rwqc:{...} keys are touched).",
)
@click.option(
    "--cluster",
    is_flag=True,
    help="Run against Redis Cluster: a local 3-master cluster, or the one --redis-url is a node of.",
)
@click.option(
    "--known-failures",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="TOML file of cases the port is known to fail or must skip.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("rwq-conformance"),
    show_default=True,
    help="Directory for report.json, junit.xml, summary.md, events.jsonl and adapter stderr logs.",
)
@click.option(
    "-k",
    "pattern",
    metavar="PATTERN",
    help="Only cases whose id contains PATTERN (or matches it, with * and **).",
)
@click.option(
    "--cases",
    "cases_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Case directory to use instead of the shipped cases.",
)
@click.option(
    "--timeout-multiplier",
    type=float,
    default=1.0,
    show_default=True,
    envvar="RWQ_TIMEOUT_MULTIPLIER",
    help="Scale every watchdog timeout (slow machines).",
)
@click.option(
    "--property-examples",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    metavar="N",
    help="Random programs of the stateful property test property/core-model (0: skip it).",
)
@click.option(
    "--workload/--no-workload",
    default=True,
    show_default=True,
    help="Run workload/faults: concurrent workers under faults, checked from their history.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    envvar="RWQ_SEED",
    metavar="N",
    help="Seed of every random choice (property programs, workload schedule, fault timing); "
    "default: a new one, printed first and kept in report.json.",
)
@click.option(
    "--declared-keys",
    is_flag=True,
    help="Run every case with profile declared-keys on (SPEC 20): each script call must pass every "
    "key its script touches in KEYS.",
)
@click.option(
    "--junit",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also write the JUnit XML report here (OUT/junit.xml is always written).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    envvar="RWQ_JOBS",
    metavar="N",
    help="Cases run at once, each worker with its own adapter processes (and, with a managed "
    "Redis, its own server); default: the CPU count. --jobs 1 runs them one after another.",
)
@click.option(
    "--fail-fast",
    is_flag=True,
    help="Stop after the first unexpected failure; the cases not started yet are not-run.",
)
def conformance(
    *,
    adapter: str,
    profiles: tuple[str, ...],
    redis_url: str | None,
    cluster: bool,
    known_failures: Path | None,
    out: Path,
    pattern: str | None,
    cases_dir: Path | None,
    timeout_multiplier: float,
    property_examples: int,
    workload: bool,
    seed: int | None,
    junit: Path | None,
    declared_keys: bool,
    jobs: int | None,
    fail_fast: bool,
) -> None:
    """Run the RWQ/1 conformance suite against an adapter.

    Exit codes: 0 conforms, 1 non-conformant, 2 adapter broken, 3 usage error, 4 nothing ran.
    """
    try:
        from .conformance.runner import RunConfig, run  # noqa: PLC0415 - the conformance extra
    except ImportError as exc:
        extra = missing_extra(exc)
        if extra is None:
            raise
        click.echo(f"rwq conformance needs the {extra} extra: pip install 'rwq[{extra}]'", err=True)
        sys.exit(EXIT_USAGE)
    config = RunConfig(
        adapter=adapter,
        out=out,
        profiles=profiles,
        redis_url=redis_url,
        cluster=cluster,
        known_failures=known_failures,
        pattern=pattern,
        cases_dir=cases_dir,
        timeout_multiplier=timeout_multiplier,
        property_examples=property_examples,
        workload=workload,
        seed=seed,
        junit=junit,
        declared_keys=declared_keys,
        jobs=jobs,
        fail_fast=fail_fast,
    )
    sys.exit(run(config))


OPERATOR_COMMANDS = (
    cli_queue.stats,
    cli_queue.queues,
    cli_queue.top,
    cli_queue.clean,
    cli_queue.dead,
    cli_queue.workers,
    cli_periodic.schedule,
)
for command in (
    *OPERATOR_COMMANDS,
    cli_queue.acl_command,
    cli_queue.shards_command,
    cli_worker.worker_command,
    cli_periodic.scheduler_command,
    cli_policy.policy,
):
    cli.add_command(command)


def main() -> None:
    """Run the CLI: click's usage errors exit with 3 (click uses 2, which means "adapter broken" here)."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        sys.exit(1)
    except click.UsageError as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
