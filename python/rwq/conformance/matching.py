"""Templates, JSON Pointers and comparisons: how cases say what they expect."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]

from .data import Validator, describe_error
from .encoding import Json, canonical, decode_bytes, is_bytes

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class TemplateError(ValueError):
    """A case refers to a variable that is not set, or a pointer that does not resolve."""


def substitute(value: Json, variables: dict[str, Json]) -> Json:
    """``value`` with ``${name}`` replaced: a string that is exactly one reference takes the
    variable's JSON value; references inside longer strings (and object keys) are spliced in
    as text, so the variable must then be a string or a UTF-8 bytes value."""
    if isinstance(value, str):
        whole = _VAR.fullmatch(value)
        if whole:
            return copy.deepcopy(_lookup(variables, whole.group(1)))
        return _VAR.sub(lambda m: _as_text(_lookup(variables, m.group(1)), m.group(1)), value)
    if isinstance(value, list):
        return [substitute(item, variables) for item in value]
    if isinstance(value, dict):
        return {substitute(key, variables): substitute(item, variables) for key, item in value.items()}
    return value


def _lookup(variables: dict[str, Json], name: str) -> Json:
    if name not in variables:
        raise TemplateError(
            f"${{{name}}} is not set (saved variables: {', '.join(sorted(variables)) or 'none'})"
        )
    return variables[name]


def _as_text(value: Json, name: str) -> str:
    if isinstance(value, str):
        return value
    if is_bytes(value):
        try:
            return decode_bytes(value).decode("utf-8")
        except ValueError:
            pass
    raise TemplateError(f"${{{name}}} is spliced into a string but is not text: {json.dumps(value)}")


def resolve_pointer(document: Json, pointer: str) -> Json:
    """RFC 6901: ``""`` is the whole document, ``/a/0/b`` walks into it."""
    if pointer == "":
        return document
    current = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            raise TemplateError(f"JSON Pointer {pointer!r} does not resolve in {json.dumps(document)[:200]}")
    return current


def show(value: Json) -> str:
    """A compact rendering of a JSON value for messages."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 300 else text[:297] + "..."


def difference(
    expected: Json, actual: Json, *, ignore_extra_members: bool = False, path: str = ""
) -> str | None:
    """The first place where ``actual`` differs from ``expected``, or None. Bytes values compare
    as bytes; booleans never equal numbers; ``ignore_extra_members`` skips object members that
    ``expected`` does not list (adapter payloads may carry more than a case asks about)."""
    expected, actual = canonical(expected), canonical(actual)
    at = f"at {path}: " if path else ""
    if isinstance(expected, dict) and isinstance(actual, dict) and not is_bytes(expected):
        for key, item in expected.items():
            if key not in actual:
                return f"at {path}/{key}: missing, expected {show(item)}"
            found = difference(
                item, actual[key], ignore_extra_members=ignore_extra_members, path=f"{path}/{key}"
            )
            if found:
                return found
        extra = sorted(set(actual) - set(expected))
        if extra and not ignore_extra_members:
            return f"{at}unexpected member(s) {', '.join(extra)} in {show(actual)}"
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{at}expected {show(expected)}, got {show(actual)} ({len(actual)} entries)"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found = difference(want, got, ignore_extra_members=ignore_extra_members, path=f"{path}/{index}")
            if found:
                return found
        return None
    same = type(expected) is type(actual) or (
        isinstance(expected, (int, float))
        and isinstance(actual, (int, float))
        and not isinstance(expected, bool)
        and not isinstance(actual, bool)
    )
    if same and expected == actual:
        return None
    return f"{at}expected {show(expected)}, got {show(actual)}"


def schema_mismatch(schema: Json, instance: Json, root: str = "", units: str = "") -> str | None:
    """Why ``instance`` (bytes in canonical form) breaks the JSON Schema, or None; the message
    names the field from ``root`` (``result``, ``state``) and the title of the schema it broke
    (:func:`.data.describe_error`)."""
    error = best_match(Validator(schema).iter_errors(canonical(instance)))
    return None if error is None else describe_error(error, root, units)


@dataclass(frozen=True)
class Outcome:
    """What a call or raw command produced: a value, or an error code and message."""

    ok: bool
    value: Json = None
    code: str = ""
    message: str = ""

    def describe(self) -> str:
        return f"ok {show(self.value)}" if self.ok else f"error {self.code}: {self.message}".rstrip(": ")


def expectation_failure(
    expect: dict[str, Any] | None, outcome: Outcome, root: str = "result", units: str = ""
) -> str | None:
    """Why ``outcome`` does not meet ``expect`` (a case's expect object), or None.
    Without an expectation the call only has to succeed. ``root`` names the value in messages
    (``result``, or the raw command a ``redis`` step ran); ``units`` what a number counts."""
    if not expect:
        return None if outcome.ok else f"expected success, got {outcome.describe()}"
    if "one_of" in expect:
        reasons = [expectation_failure(alternative, outcome, root, units) for alternative in expect["one_of"]]
        if all(reasons):
            return "no alternative of one_of holds: " + " | ".join(str(reason) for reason in reasons)
        return None
    if "error" in expect:
        if outcome.ok:
            return f"expected error {expect['error']}, got {outcome.describe()}"
        if outcome.code != expect["error"]:
            return f"expected error {expect['error']}, got {outcome.describe()}"
        return None
    if not outcome.ok:
        return f"expected success, got {outcome.describe()}"
    if "result" in expect:
        return difference(expect["result"], outcome.value, ignore_extra_members=True)
    return schema_mismatch(expect["result_matches"], outcome.value, root, units)
