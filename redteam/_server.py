"""A throwaway redis-server on a free loopback port, for the red team's reproducers (bounded:
every script stops it on exit)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator



def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def redis_server(*extra: str) -> Iterator[int]:
    """Start redis-server; yield its port; shut it down."""
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        proc = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", workdir, *extra],
            stdout=subprocess.DEVNULL,
        )
        try:
            for _ in range(200):
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    time.sleep(0.02)
            yield port
        finally:
            proc.terminate()
            proc.wait(timeout=10)
