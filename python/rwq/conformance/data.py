"""The suite's data: case files, JSON Schemas and the canonical script manifest.

Each is looked up inside the installed package first, then in a source checkout, like
:func:`rwq.protocol.scripts.lua_dir`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError  # type: ignore[import-untyped,unused-ignore]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]
from jsonschema.validators import extend  # type: ignore[import-untyped,unused-ignore]
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


def _canonical(value: Any) -> Any:
    """``value`` as JSON Schema compares it: a float with an integral value is that integer,
    ``true`` is not ``1`` (so it is kept apart by its type)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return ("array", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((key, _canonical(item)) for key, item in value.items()))
    return value


def _unique_items(validator: Any, unique: bool, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """``uniqueItems`` in linear time: jsonschema's own compares unhashable items (objects) pairwise,
    which costs seconds on the 1,000-lease replies the suite checks."""
    if unique and validator.is_type(instance, "array"):
        seen = set()
        for index, item in enumerate(instance):
            key = _canonical(item)
            if key in seen:
                yield ValidationError(f"item {index} repeats an earlier item (the items must be unique)")
                return
            seen.add(key)


Validator: Any = extend(Draft202012Validator, {"uniqueItems": _unique_items})
"""Draft 2020-12 with a linear ``uniqueItems``; every schema check of the suite uses it."""


class _Cyclic(Exception):
    """A schema refers to itself; it cannot be inlined."""


def _inlined(root: dict[str, Any], node: Any, seen: tuple[str, ...] = ()) -> Any:
    """``node`` with every local ``$ref`` (``#/...``) of ``root`` replaced by what it points to.
    Resolving references costs jsonschema a registry lookup each time it descends: twice the
    time of the check itself on a 1,000-lease reply. Raises _Cyclic on a recursive schema or a
    reference to another document."""
    if isinstance(node, list):
        return [_inlined(root, item, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if ref is None:
        return {key: _inlined(root, value, seen) for key, value in node.items()}
    if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
        raise _Cyclic(ref)
    target: Any = root
    for part in ref[2:].split("/"):
        target = target[part.replace("~1", "/").replace("~0", "~")]
    resolved = _inlined(root, target, (*seen, ref))
    siblings = {key: _inlined(root, value, seen) for key, value in node.items() if key != "$ref"}
    if set(siblings) <= {"title", "description"} and isinstance(resolved, dict):
        return {**resolved, **siblings}
    return {"allOf": [resolved], **siblings}


@cache
def validator(name: str, pointer: str = "") -> Any:
    """A validator for a schema, or for the definition at ``pointer`` inside it (``/$defs/lease``);
    with its local references inlined where the schema allows (:func:`_inlined`)."""
    document = schema(name)
    target: Any = document
    for part in pointer.strip("/").split("/") if pointer else ():
        target = target[part]
    try:
        return Validator(_inlined(document, target), registry=_registry())
    except _Cyclic:
        return Validator({"$ref": f"{document['$id']}#{pointer}"}, registry=_registry())


def where(path: Sequence[str | int], root: str = "") -> str:
    """A JSON path as a reader names it: ``result.leases[3].token`` (``root`` first)."""
    text = root
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the value"


def describe_error(error: ValidationError, root: str = "", units: str = "") -> str:
    """One schema error in plain words: the field (``root`` and the error's path), what the field
    is (the ``title`` of the schema it broke, when it has one) and what is wrong with it. A string's
    value is never shown for a length error (a token must not appear in a message); ``units`` names
    what a number counts (``bytes`` for a ``STRLEN``)."""
    title = error.schema.get("title") if isinstance(error.schema, dict) else None
    field = where(list(error.absolute_path), root) + (f" ({title})" if title else "")
    limit = error.validator_value
    if error.validator in ("minLength", "maxLength") and isinstance(error.instance, str):
        relation = "less than the minimum" if error.validator == "minLength" else "more than the maximum"
        message = f"{len(error.instance)} characters is {relation} of {limit}"
    elif units and error.validator in ("minimum", "maximum") and isinstance(error.instance, (int, float)):
        relation = "less than the minimum" if error.validator == "minimum" else "more than the maximum"
        message = f"{error.instance} {units} is {relation} of {limit}"
    else:
        message = error.message
    return f"{field}: {message}"


def schema_errors(name: str, instance: Any, pointer: str = "", root: str = "") -> list[str]:
    """Every way ``instance`` breaks the schema, one line each naming the field (``root`` and the
    path in the instance) and, where the schema has a title, what it is (empty when valid)."""
    errors = sorted(validator(name, pointer).iter_errors(instance), key=lambda e: list(e.absolute_path))
    # best_match descends into a oneOf's branches, to the error of the branch that came closest
    return [describe_error(best_match([error]), root) for error in errors]


@cache
def canonical_scripts() -> dict[str, str]:
    """Script name -> SHA1 from the canonical ``lua/manifest.json``."""
    manifest = json.loads((lua_dir() / "manifest.json").read_text())
    return {name: entry["sha1"] for name, entry in manifest["scripts"].items()}
