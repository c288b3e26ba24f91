"""Blind mutant (issue #25): ``beat`` refuses a record of exactly 4,096 bytes (RWQ-LIVE-002: at most
4,096)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("heartbeat", "#record > 4096", "#record >= 4096")


if __name__ == "__main__":
    serve(WorkQueue)
