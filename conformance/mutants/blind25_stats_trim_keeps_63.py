"""Blind mutant (issue #25): the trim deletes minutes up to ``minute - 63``, not ``minute - 62``, so
the series keeps one minute too many (RWQ-STATS-004)."""

from __future__ import annotations

from _blind25 import edit_all
from _mutant import serve
from rwq.client import WorkQueue

edit_all("minute - 123), minute - 62", "minute - 123), minute - 63")


if __name__ == "__main__":
    serve(WorkQueue)
