"""Bytes in JSON, as the adapter protocol and the cases write them: ``{"utf8": s}`` or ``{"base64": s}``.

Kept free of heavy imports: the reference adapter uses it too.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

Json = Any


def encode_bytes(raw: bytes) -> dict[str, str]:
    """The canonical form of ``raw``: ``utf8`` when it is valid UTF-8, else ``base64``."""
    try:
        return {"utf8": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}


def is_bytes(value: Json) -> bool:
    """Whether ``value`` is a bytes value (one member, ``utf8`` or ``base64``, a string)."""
    return (
        isinstance(value, dict)
        and len(value) == 1
        and isinstance(next(iter(value.values())), str)
        and next(iter(value)) in ("utf8", "base64")
    )


def decode_bytes(value: Json) -> bytes:
    """The bytes a bytes value stands for; ValueError if it is not one."""
    if not is_bytes(value):
        raise ValueError(f"not a bytes value ({{'utf8': ...}} or {{'base64': ...}}): {value!r}")
    if "utf8" in value:
        return str(value["utf8"]).encode("utf-8")  # a lone surrogate raises (a ValueError)
    try:
        return base64.b64decode(value["base64"], validate=True)
    except binascii.Error as exc:
        raise ValueError(f"invalid base64: {value['base64']!r}") from exc


def canonical(value: Json) -> Json:
    """``value`` with every bytes value in canonical form, so equal bytes compare equal."""
    if is_bytes(value):
        try:
            return encode_bytes(decode_bytes(value))
        except ValueError:
            return value
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value
