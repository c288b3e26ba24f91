"""Regenerate the checked-in artefacts: lua/manifest.json and conformance/requirements.json.

``--check`` exits 1 if any is stale instead of writing."""

from __future__ import annotations

import sys
from pathlib import Path

from rwq.conformance import requirements
from rwq.protocol.scripts import manifest_text

ROOT = Path(__file__).resolve().parents[1]


def artefacts() -> dict[Path, str]:
    """Every generated file and the text it must hold."""
    return {
        ROOT / "lua" / "manifest.json": manifest_text(),
        ROOT / "conformance" / "requirements.json": requirements.document((ROOT / "SPEC.md").read_text()),
    }


def main(argv: list[str]) -> int:
    stale = [path for path, text in artefacts().items() if not path.exists() or path.read_text() != text]
    if "--check" in argv:
        for path in stale:
            print(f"stale: {path.relative_to(ROOT)} (run: make generate)", file=sys.stderr)
        return 1 if stale else 0
    for path, text in artefacts().items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
