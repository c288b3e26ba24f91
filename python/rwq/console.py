"""The ``rwq`` console script: the command line lives in the ``cli`` extra (click and rich).

A plain ``pip install rwq`` is the client and the workers on redis-py alone; without the extra,
the command says what to install instead of failing with a traceback.
"""

from __future__ import annotations

import sys

EXIT_USAGE = 3  # a missing extra, a bad option (click's own 2 means "adapter broken" to rwq conformance)
EXTRAS = {"click": "cli", "rich": "cli", "jsonschema": "conformance", "hypothesis": "conformance"}


def missing_extra(exc: ImportError) -> str | None:
    """The extra that provides the module ``exc`` could not import, if it is one of ours."""
    return EXTRAS.get((exc.name or "").partition(".")[0])


def main() -> None:
    """Run the rwq command line, or say which extra it needs."""
    try:
        from .cli import main as run  # noqa: PLC0415 - the extra may be missing
    except ImportError as exc:
        extra = missing_extra(exc)
        if extra is None:
            raise
        print(f"rwq: the command line needs the {extra} extra: pip install 'rwq[{extra}]'", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    run()


if __name__ == "__main__":
    main()
