"""Players of the three-language interop tests: one role on one queue, in Python, Go or TypeScript.

Every player takes a role (produce, lease, clean, work, dead), a prefix and the role's options as a
JSON object, and gives back what it did as JSON of one shape in all three languages (payloads in
base64). Go and TypeScript run as subprocesses (``go/cmd/rwq-interop``,
``typescript/bin/rwq-interop.ts``) that call their library and its real Worker; Python plays in
this process, on the rwq package and its Worker. A worker works until ``done_key`` exists and the
queue has nothing queued, processing or delayed: its handler fails ids ``fail-*`` always and
``flaky-*`` at their first attempt.
"""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from rwq import Job, RetryPolicy, Worker, WorkQueue
from rwq.protocol.operations import CleanReport
from rwq.sharded import ShardedWorkQueue

Json = Any
ROOT = Path(__file__).resolve().parent.parent
LANGS = ("python", "go", "typescript")
RUN_TIMEOUT_S = 30  # any one role; the worker's own deadline_ms is shorter


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def report(clean: CleanReport) -> Json:
    return {
        "requeued": list(clean.requeued),
        "dropped": clean.dropped,
        "dead": list(clean.dead),
        "promoted": clean.promoted,
    }


class Running:
    """A role being played; ``result()`` waits (bounded) for its JSON."""

    def wait_ready(self) -> None:
        raise NotImplementedError

    def result(self) -> Json:
        raise NotImplementedError


@dataclass
class Subprocess(Running):
    proc: subprocess.Popen[str]
    what: str
    _ready: bool = False

    def wait_ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the program prints "ready" at once, or exits
        assert line == "ready\n", f"{self.what} did not start: {line!r}, {self._stderr()}"
        self._ready = True

    def kill(self) -> None:
        """SIGKILL: the program dies at once, holding what it holds (a crash)."""
        self.proc.kill()
        self.proc.communicate(timeout=RUN_TIMEOUT_S)

    def _stderr(self) -> str:
        try:
            return self.proc.communicate(timeout=5)[1]
        except subprocess.TimeoutExpired:
            return ""

    def result(self) -> Json:
        try:
            out, err = self.proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise AssertionError(f"{self.what} ran over {RUN_TIMEOUT_S} s") from None
        assert self.proc.returncode == 0, f"{self.what} exited {self.proc.returncode}: {err}"
        lines = out.splitlines()
        if lines and lines[0] == "ready":
            lines = lines[1:]
        assert len(lines) == 1, f"{self.what} printed {out!r}"
        return json.loads(lines[0])


@dataclass
class Program:
    """A Go or TypeScript interop program: ``argv + [role, url, prefix]``, options on stdin."""

    lang: str
    argv: list[str]
    url: str

    def start(self, role: str, prefix: str, options: Json) -> Running:
        proc = subprocess.Popen(
            [*self.argv, role, self.url, prefix],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(options))
        proc.stdin.close()
        proc.stdin = None  # written and closed: communicate() must not flush it again
        return Subprocess(proc, f"{self.lang} {role}")

    def run(self, role: str, prefix: str, options: Json) -> Json:
        return self.start(role, prefix, options).result()


@dataclass
class InThread(Running):
    thread: threading.Thread
    out: list[Json] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def wait_ready(self) -> None:
        pass

    def result(self) -> Json:
        self.thread.join(RUN_TIMEOUT_S)
        assert not self.thread.is_alive(), f"the python role ran over {RUN_TIMEOUT_S} s"
        if self.errors:
            raise self.errors[0]
        return self.out[0]


@dataclass
class PythonPlayer:
    """The rwq package, in this process, with a client of its own per role."""

    server_client: Callable[[], redis.Redis]
    lang: str = "python"

    def start(self, role: str, prefix: str, options: Json) -> Running:
        running = InThread(threading.Thread(target=lambda: None))

        def play() -> None:
            try:
                running.out.append(self.run(role, prefix, options))
            except BaseException as exc:  # handed to result()
                running.errors.append(exc)

        running.thread = threading.Thread(target=play, daemon=True)
        running.thread.start()
        return running

    def run(self, role: str, prefix: str, options: Json) -> Json:
        db = self.server_client()
        try:
            shards = options.get("shards", 0)
            queue: WorkQueue | ShardedWorkQueue = (
                ShardedWorkQueue(db, prefix, shards=shards) if shards else WorkQueue(db, prefix)
            )
            return getattr(self, f"_{role}")(db, queue, options)
        finally:
            db.close()

    def _produce(self, db: redis.Redis, queue: WorkQueue | ShardedWorkQueue, options: Json) -> Json:
        if options.get("policy"):
            queue.set_retry_policy(RetryPolicy(**options["policy"]))
        added = []
        for item in options.get("items", []):
            data = base64.b64decode(item["data"])
            added.append(queue.add(item["id"], data, delay_ms=item.get("delay_ms", 0)))
        return {"added": added}

    def _lease(self, db: redis.Redis, queue: WorkQueue | ShardedWorkQueue, options: Json) -> Json:
        leased, completed = [], []
        block_ms = options.get("block_ms", 0)
        for _ in range(options.get("count", 1)):
            lease = queue.lease(options.get("lease_ms", 30_000), block=block_ms > 0, timeout_ms=block_ms)
            if lease is None:
                break
            leased.append({"id": lease.id, "data": b64(lease.data), "attempt": lease.attempt})
            if options.get("complete"):
                completed.append(queue.complete(lease, require_lease=True))
        return {"leased": leased, "completed": completed}

    def _clean(self, db: redis.Redis, queue: WorkQueue | ShardedWorkQueue, options: Json) -> Json:
        return {"light": report(queue.light_clean()), "deep": report(queue.deep_clean())}

    def _dead(self, db: redis.Redis, queue: WorkQueue | ShardedWorkQueue, options: Json) -> Json:
        """The dead items, each read again by id for its payload."""
        listed = queue.dead_items(count=1000)
        return [
            {
                "id": dead.id,
                "dead_at_ms": dead.dead_at_ms,
                "reason": dead.reason,
                "attempts": dead.attempts,
                "detail": dead.detail,
                **({"data": b64(dead.data)} if dead.data is not None else {}),
            }
            for dead in (queue.dead_item(item.id) or item for item in listed)
        ]

    def _work(self, db: redis.Redis, queue: WorkQueue | ShardedWorkQueue, options: Json) -> Json:
        calls: list[Json] = []
        handler_s = options.get("handler_ms", 0) / 1000

        def handler(job: Job) -> None:
            if handler_s:
                time.sleep(handler_s)
            attempt = job.lease.attempt
            ok = not job.id.startswith("fail-") and not (job.id.startswith("flaky-") and attempt == 1)
            calls.append({"id": job.id, "data": b64(job.data), "attempt": attempt, "ok": ok})
            if not ok:
                raise RuntimeError(f"python handler failed {job.id} at attempt {attempt}")

        worker = Worker(
            queue,
            handler,
            concurrency=options.get("concurrency", 1),
            lease_ms=options.get("lease_ms", 30_000),
            poll_timeout_ms=100,
            clean_interval_ms=None,
            shutdown_grace_ms=5000,
        )
        thread = threading.Thread(target=worker.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + max(options.get("deadline_ms", 0), 1000) / 1000
        timed_out = False
        while True:
            time.sleep(0.05)
            if time.monotonic() > deadline:
                timed_out = True
                break
            if not db.exists(options["done_key"]):
                continue
            counts = queue.counts()
            if counts.queued + counts.processing + counts.delayed == 0:
                break
        worker.stop()
        thread.join(RUN_TIMEOUT_S)
        assert not thread.is_alive(), "the python worker did not stop"
        stats = worker.stats
        return {
            "calls": calls,
            "stats": {"completed": stats.completed, "failed": stats.failed},
            "timed_out": timed_out,
        }
