"""Requirement ids extracted from SPEC.md, the source of ``conformance/requirements.json``."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

_ITEM = re.compile(r"^- \*\*(RWQ-[A-Z]+-\d{3})\*\* (.*)$")
_LEVELS = (
    "MUST NOT",
    "SHALL NOT",
    "SHOULD NOT",
    "MUST",
    "SHALL",
    "REQUIRED",
    "SHOULD",
    "RECOMMENDED",
    "MAY",
    "OPTIONAL",
)
_CANONICAL = {
    "SHALL NOT": "MUST NOT",
    "SHALL": "MUST",
    "REQUIRED": "MUST",
    "RECOMMENDED": "SHOULD",
    "OPTIONAL": "MAY",
}
_STRENGTH = ("MUST NOT", "MUST", "SHOULD NOT", "SHOULD", "MAY")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One normative statement of SPEC.md."""

    id: str
    level: str
    section: str
    text: str
    sha256: str


def extract(spec_text: str) -> list[Requirement]:
    """Parse SPEC.md: each requirement is a list item starting with its bold id."""
    found: list[Requirement] = []
    section = ""
    lines = spec_text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            continue
        match = _ITEM.match(line)
        if not match:
            continue
        body = [match.group(2)]
        for follow in lines[index + 1 :]:
            if not follow.startswith("  ") or not follow.strip():
                break
            body.append(follow.strip())
        text = " ".join(body)
        levels = {_CANONICAL.get(word, word) for word in _LEVELS if re.search(rf"\b{word}\b", text)}
        if not levels:
            raise ValueError(f"{match.group(1)} has no RFC 2119 key word")
        level = next(word for word in _STRENGTH if word in levels)
        found.append(
            Requirement(match.group(1), level, section, text, hashlib.sha256(text.encode()).hexdigest())
        )
    ids = [req.id for req in found]
    duplicates = sorted({req_id for req_id in ids if ids.count(req_id) > 1})
    if duplicates:
        raise ValueError(f"duplicate requirement ids in SPEC.md: {duplicates}")
    return found


def document(spec_text: str) -> str:
    """``conformance/requirements.json`` as it must be checked in."""
    reqs = [asdict(req) for req in extract(spec_text)]
    return json.dumps({"protocol": "RWQ/1", "requirements": reqs}, indent=2) + "\n"


def requirements_path() -> Path:
    """The generated requirement list: packaged, or in the source checkout."""
    packaged = Path(str(resources.files("rwq.conformance"))) / "requirements.json"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[3] / "conformance" / "requirements.json"


@cache
def load() -> dict[str, dict[str, Any]]:
    """The requirement records by id."""
    data = json.loads(requirements_path().read_text())
    return {req["id"]: req for req in data["requirements"]}
