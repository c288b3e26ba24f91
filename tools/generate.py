"""Regenerate the checked-in artefacts: composite scripts (lua/complete_and_lease.lua),
lua/manifest.json, conformance/requirements.json, conformance/cases/wrong-type.json,
conformance/cases/sharded.json, conformance/cases/boundaries.json, conformance/cases/paths.json,
conformance/cases/cron.json (from the cron vectors),
conformance/coverage/matrix.json (from the cases), go/lua/ (the
Go module's copy of the canonical scripts and their manifest, embedded with go:embed; committed
so that the module builds on its own) and typescript/src/scripts.generated.ts (the TypeScript
client's scripts).

``--check`` exits 1 if any is stale instead of writing."""

from __future__ import annotations

import sys
from pathlib import Path

from boundary_cases import document as boundary_cases
from compose_lua import composites
from coverage_matrix import MATRIX
from coverage_matrix import build as coverage_matrix
from cron_cases import document as cron_cases
from declared_keys import filled
from fragments import filled as fragments_filled
from path_cases import document as path_cases
from sharded_cases import document as sharded_cases
from ts_scripts import document as ts_scripts
from wrong_type_cases import document as wrong_type_cases

from rwq.conformance import requirements
from rwq.protocol.scripts import manifest_text, registry

ROOT = Path(__file__).resolve().parents[1]
GO_LUA = ROOT / "go" / "lua"


def derived() -> dict[Path, str]:
    """The files generated from the scripts and SPEC.md, and the text each must hold."""
    registry.cache_clear()  # the composites may just have been rewritten
    return {
        ROOT / "lua" / "manifest.json": manifest_text(),
        ROOT / "conformance" / "requirements.json": requirements.document((ROOT / "SPEC.md").read_text()),
        ROOT / "conformance" / "cases" / "wrong-type.json": wrong_type_cases(),
        ROOT / "conformance" / "cases" / "sharded.json": sharded_cases(),
        ROOT / "conformance" / "cases" / "boundaries.json": boundary_cases(),
        ROOT / "conformance" / "cases" / "paths.json": path_cases(),
        ROOT / "conformance" / "cases" / "cron.json": cron_cases(),
        ROOT / "typescript" / "src" / "scripts.generated.ts": ts_scripts(),
    }


def go_copy() -> dict[Path, str]:
    """The Go module's copy of the canonical scripts (as they are now: after the stages that
    rewrite them) and of their manifest."""
    copy = {GO_LUA / path.name: path.read_text() for path in sorted((ROOT / "lua").glob("*.lua"))}
    copy[GO_LUA / "manifest.json"] = manifest_text()
    return copy


def strays() -> list[Path]:
    """Files in go/lua/ that are no copy of a canonical script (one removed from lua/, say)."""
    keep = set(go_copy())
    return sorted(path for path in GO_LUA.glob("*") if path not in keep) if GO_LUA.is_dir() else []


def main(argv: list[str]) -> int:
    """Write every stale artefact, scripts' declared-keys and key-checks blocks and composites first
    (the manifest hashes them); ``--check``: list them."""
    check = "--check" in argv
    stale = []
    for stage in (
        lambda: filled(ROOT / "lua"),
        lambda: fragments_filled(ROOT / "lua"),
        lambda: composites(ROOT / "lua"),
        derived,
        lambda: {MATRIX: coverage_matrix()[0]},  # after the generated cases it counts
        go_copy,
    ):
        for path, text in stage().items():
            if not path.exists() or path.read_text() != text:
                stale.append(path)
                if not check:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
    for path in strays():
        stale.append(path)
        if not check:
            path.unlink()
    for path in stale if check else ():
        print(f"stale: {path.relative_to(ROOT)} (run: make generate)", file=sys.stderr)
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
