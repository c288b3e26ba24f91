"""Every Python snippet of the README and of docs/ runs, so that the docs cannot drift from the code.

Each ```python block runs as a script of its own against a real Redis (``redis.Redis()`` and
``redis.asyncio.Redis()`` are pointed at the test server). A block that does not make its own
queue gets one named ``jobs`` holding an item. A block that defines tests (``def test_...``) is
run by pytest, with rwq's plugin, as a service's own tests would be. A block that runs a worker
(``worker.run()``) must drain the queue and then stop cleanly on SIGTERM, as a service under a
supervisor would, unless it runs in burst mode.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from rwq.conformance.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)
PRELUDE = """import redis
from rwq import WorkQueue
queue = WorkQueue(redis.Redis(), "jobs")
queue.add("x", b"y")
"""
RUN_S = 30.0


def snippets() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for number, block in enumerate(BLOCK.findall(doc.read_text()), 1):
            found.append((f"{doc.relative_to(ROOT)}#{number}", block))
    return found


def test_the_readme_has_snippets() -> None:
    assert len([name for name, _ in snippets() if name.startswith("README.md")]) >= 2


@pytest.mark.parametrize(("name", "code"), snippets(), ids=[name for name, _ in snippets()])
def test_snippet_runs(
    name: str, code: str, redis_server: RedisServer, r: redis.Redis, tmp_path: Path
) -> None:
    r.flushall()
    if "\ndef test_" in f"\n{code}":  # a test of a user's service: pytest runs it, with rwq's plugin
        (tmp_path / "test_snippet.py").write_text(code)
        env = {**os.environ, "RWQ_TEST_REDIS_URL": redis_server.url}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)]
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=RUN_S, env=env)
        assert done.returncode == 0, f"{name} failed:\n{done.stdout}"
        assert " passed" in done.stdout, f"{name} ran no test:\n{done.stdout}"
        return
    script = ("" if "WorkQueue(" in code else PRELUDE) + code
    for client in ("redis.Redis()", "redis.asyncio.Redis()"):
        script = script.replace(client, f"{client[:-1]}port={redis_server.port})")
    if "worker.run()" not in script or "burst=True" in script:  # it ends by itself
        command = [sys.executable, "-c", script]
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=RUN_S)
        assert done.returncode == 0, f"{name} failed:\n{done.stderr}"
        return
    process = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + RUN_S
        while r.llen("jobs:queue") or r.llen("jobs:processing") or not r.exists("jobs:policy"):
            assert process.poll() is None, f"{name} exited early"
            assert time.monotonic() < deadline, f"{name} did not drain its queue"
            time.sleep(0.05)
        assert not r.keys("jobs:item:*"), f"{name} left items behind"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=RUN_S)
    finally:
        process.kill()
    assert process.returncode == 0, f"{name} did not stop cleanly on SIGTERM:\n{stderr}"
