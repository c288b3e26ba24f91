"""``python -m bench``: see :mod:`bench.run`."""

from bench.run import main

if __name__ == "__main__":  # spawned worker processes re-import this module as __mp_main__
    raise SystemExit(main())
