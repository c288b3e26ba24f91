"""The user guide keeps up with the code: every public name, worker setting and CLI command is
documented, and what the guide says of ``--json`` is what the commands accept (issue #21 §12)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click
import pytest

import rwq
from rwq.aio_worker import AsyncWorker
from rwq.cli import cli
from rwq.worker import Worker

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide"


def _text(*pages: str) -> str:
    return "\n".join((GUIDE / page).read_text() for page in pages or [p.name for p in GUIDE.glob("*.md")])


def _commands(group: click.Group = cli, path: str = "rwq") -> dict[str, click.Command]:
    """Every command of the ``rwq`` CLI by its full name (``rwq dead list``)."""
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        found[f"{path} {name}"] = command
        if isinstance(command, click.Group):
            found.update(_commands(command, f"{path} {name}"))
    return found


@pytest.mark.parametrize("name", [n for n in rwq.__all__ if not n.startswith("__")])
def test_every_public_name_is_in_the_guide(name: str) -> None:
    assert f"`{name}" in _text() or f"{name}(" in _text(), f"rwq.{name} is not in docs/guide"


@pytest.mark.parametrize("worker", [Worker, AsyncWorker], ids=lambda w: w.__name__)
def test_every_worker_setting_is_in_the_workers_page(worker: type[Worker] | type[AsyncWorker]) -> None:
    settings = [
        p for p in inspect.signature(worker.__init__).parameters if p not in ("self", "queue", "handler")
    ]
    missing = [name for name in settings if f"`{name}" not in _text("workers.md")]
    assert not missing, f"docs/guide/workers.md does not describe {missing}"


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_command_is_in_the_guide(command: str) -> None:
    if command == "rwq conformance":  # for port teams: conformance/README.md
        return
    assert command in _text(), f"{command} is not in docs/guide"


def test_the_guide_names_exactly_the_commands_that_take_json() -> None:
    sentence = re.search(r"^(.*?) take `--json`", _text("operating.md"), re.M | re.S)
    assert sentence, "operating.md says which commands take --json"
    said = set(re.findall(r"`([a-z]+)`", sentence.group(1).rsplit("\n\n", 1)[-1]))
    have = {
        name.split()[1]
        for name, command in _commands().items()
        if any("--json" in getattr(p, "opts", ()) for p in command.params)
    }
    assert said == have
