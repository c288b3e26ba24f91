"""The suite's data: case files, JSON Schemas and the canonical script manifest.

Each is looked up inside the installed package first, then in a source checkout, like
:func:`rwq.protocol.scripts.lua_dir`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]
from referencing import Registry, Resource

from ..protocol.scripts import lua_dir

REPO = Path(__file__).resolve().parents[3]
SCHEMA_FILES = {
    "adapter-protocol": "adapter-protocol.schema.json",
    "conformance-case": "conformance-case.schema.json",
    "conformance-report": "conformance-report.schema.json",
    "known-failures": "known-failures.schema.json",
    "conformance-audit": "conformance-audit.schema.json",
    "coverage-matrix": "coverage-matrix.schema.json",
}


def _located(packaged: str, in_repo: str) -> Path:
    path = Path(str(resources.files("rwq"))) / packaged
    return path if path.is_dir() else REPO / in_repo


def cases_dir() -> Path:
    """The shipped case files (``rwq/conformance/cases`` in a wheel, ``conformance/cases`` in a checkout)."""
    return _located("conformance/cases", "conformance/cases")


def schemas_dir() -> Path:
    """The JSON Schemas (``rwq/schemas`` in a wheel, ``schemas`` in a checkout)."""
    return _located("schemas", "schemas")


@cache
def schema(name: str) -> dict[str, Any]:
    """One of the suite's schemas by short name (a key of :data:`SCHEMA_FILES`)."""
    loaded: dict[str, Any] = json.loads((schemas_dir() / SCHEMA_FILES[name]).read_text())
    return loaded


@cache
def _registry() -> Registry[Any]:
    resources_ = [(schema(name)["$id"], Resource.from_contents(schema(name))) for name in SCHEMA_FILES]
    return Registry().with_resources(resources_)


@cache
def validator(name: str, pointer: str = "") -> Draft202012Validator:
    """A validator for a schema, or for the definition at ``pointer`` inside it (``/$defs/lease``)."""
    ref = f"{schema(name)['$id']}#{pointer}"
    return Draft202012Validator({"$ref": ref}, registry=_registry())


def schema_errors(name: str, instance: Any, pointer: str = "") -> list[str]:
    """Every way ``instance`` breaks the schema, as ``at /path: message`` lines (empty when valid)."""
    errors = sorted(validator(name, pointer).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"at /{'/'.join(str(part) for part in error.absolute_path)}: {error.message}" for error in errors]


@cache
def canonical_scripts() -> dict[str, str]:
    """Script name -> SHA1 from the canonical ``lua/manifest.json``."""
    manifest = json.loads((lua_dir() / "manifest.json").read_text())
    return {name: entry["sha1"] for name, entry in manifest["scripts"].items()}
