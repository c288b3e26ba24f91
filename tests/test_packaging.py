"""A slim install: the wheel, installed in a fresh venv, is the client and the workers on redis-py
alone; the command line says which extra it needs; test data stays out of the wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
import zipfile
from importlib.metadata import requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
TOOLING = {"pip", "setuptools", "wheel"}


def _run(*command: str | Path) -> str:
    done = subprocess.run(
        [str(part) for part in command], check=False, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _dependencies_of_redis() -> set[str]:
    """redis-py's own runtime dependencies here, markers evaluated (none on recent Pythons)."""
    found: set[str] = set()
    for line in requires("redis") or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.add(canonicalize_name(requirement.name))
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, ROOT)
    (built,) = out.glob("rwq-*.whl")
    return built


@pytest.fixture(scope="module")
def slim_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its dependencies (redis-py from the index pip uses)."""
    where = tmp_path_factory.mktemp("venv")
    venv.create(where, with_pip=True)
    python = where / "bin" / "python"
    _run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel)
    return python


@pytest.mark.timeout(600)
def test_a_plain_install_is_redis_alone(slim_venv: Path) -> None:
    listed = json.loads(_run(slim_venv, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"))
    installed = {canonicalize_name(entry["name"]) for entry in listed} - TOOLING
    assert installed == {"rwq", "redis", *_dependencies_of_redis()}


@pytest.mark.timeout(600)
def test_the_client_and_workers_import_without_the_extras(slim_venv: Path) -> None:
    loaded = _run(
        slim_venv,
        "-c",
        "import sys, rwq, rwq.aio, rwq.worker, rwq.aio_worker, rwq.protocol.acl\n"
        "print(sorted(m for m in ('click', 'rich', 'jsonschema', 'hypothesis') if m in sys.modules))",
    )
    assert loaded.strip() == "[]"


@pytest.mark.timeout(600)
def test_the_command_names_its_extra(slim_venv: Path) -> None:
    command = [str(slim_venv.parent / "rwq"), "stats", "--prefix", "p"]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert done.stderr.strip() == "rwq: the command line needs the cli extra: pip install 'rwq[cli]'"
    assert "Traceback" not in done.stderr


def test_test_data_stays_out_of_the_wheel(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert not [name for name in names if "mutants" in name or name.startswith("tests/")]
    assert "rwq/lua/lease.lua" in names  # the canonical scripts are package data
    assert "rwq/conformance/cases/lease.json" in names
