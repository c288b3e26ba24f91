"""Mutant: a port whose error map stops at the four codes it was written for: a script's
``RWQ_WRONG_TYPE`` reply is reported as ``REDIS_ERROR``, as if the server had failed."""

from __future__ import annotations

from _mutant import serve
from rwq import errors
from rwq.client import WorkQueue

if __name__ == "__main__":
    del errors._BY_CODE["WRONG_TYPE"]
    serve(WorkQueue)
