"""The canonical Lua scripts: loading, SHA1s and the generated manifest (SPEC "Scripts")."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

PROTOCOL = "RWQ/1"
SCRIPT_NAMES = (
    "add",
    "lease",
    "claim",
    "renew",
    "complete",
    "complete_and_lease",
    "release",
    "counts",
    "light_clean",
    "deep_clean",
    "set_policy",
    "fail",
    "dead",
    "shards",
    "ring",
    "heartbeat",
    "stats",
    "schedule",
    "fire",
)


@dataclass(frozen=True, slots=True)
class Script:
    """One canonical script: its name, exact source bytes and SHA1 (the EVALSHA handle)."""

    name: str
    source: bytes
    sha1: str


def lua_dir() -> Path:
    """Where the scripts live: inside the installed package, or ``lua/`` of a source checkout."""
    packaged = Path(str(resources.files("rwq"))) / "lua"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "lua"


@cache
def registry() -> dict[str, Script]:
    """All canonical scripts by name, read once."""
    scripts = {}
    for name in SCRIPT_NAMES:
        source = (lua_dir() / f"{name}.lua").read_bytes()
        scripts[name] = Script(name, source, hashlib.sha1(source).hexdigest())
    return scripts


def manifest() -> dict[str, Any]:
    """The manifest document: protocol and script name -> file and SHA1."""
    return {
        "protocol": PROTOCOL,
        "scripts": {s.name: {"file": f"{s.name}.lua", "sha1": s.sha1} for s in registry().values()},
    }


def manifest_text() -> str:
    """The manifest exactly as ``lua/manifest.json`` stores it."""
    return json.dumps(manifest(), indent=2, sort_keys=True) + "\n"
