"""Regenerate the checked-in artefacts: composite scripts (lua/complete_and_lease.lua),
lua/manifest.json, conformance/requirements.json, conformance/cases/wrong-type.json,
conformance/cases/sharded.json and typescript/src/scripts.generated.ts (the TypeScript client's scripts).

``--check`` exits 1 if any is stale instead of writing."""

from __future__ import annotations

import sys
from pathlib import Path

from compose_lua import composites
from declared_keys import filled
from sharded_cases import document as sharded_cases
from ts_scripts import document as ts_scripts
from wrong_type_cases import document as wrong_type_cases

from rwq.conformance import requirements
from rwq.protocol.scripts import manifest_text, registry

ROOT = Path(__file__).resolve().parents[1]


def derived() -> dict[Path, str]:
    """The files generated from the scripts and SPEC.md, and the text each must hold."""
    registry.cache_clear()  # the composites may just have been rewritten
    return {
        ROOT / "lua" / "manifest.json": manifest_text(),
        ROOT / "conformance" / "requirements.json": requirements.document((ROOT / "SPEC.md").read_text()),
        ROOT / "conformance" / "cases" / "wrong-type.json": wrong_type_cases(),
        ROOT / "conformance" / "cases" / "sharded.json": sharded_cases(),
        ROOT / "typescript" / "src" / "scripts.generated.ts": ts_scripts(),
    }


def main(argv: list[str]) -> int:
    """Write every stale artefact, scripts' declared-keys blocks and composites first (the manifest
    hashes them); ``--check``: list them."""
    check = "--check" in argv
    stale = []
    for stage in (lambda: filled(ROOT / "lua"), lambda: composites(ROOT / "lua"), derived):
        for path, text in stage().items():
            if not path.exists() or path.read_text() != text:
                stale.append(path)
                if not check:
                    path.write_text(text)
    for path in stale if check else ():
        print(f"stale: {path.relative_to(ROOT)} (run: make generate)", file=sys.stderr)
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
