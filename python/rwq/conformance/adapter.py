"""One adapter process: NDJSON requests on its stdin, replies on its stdout, stderr kept for reports.

Every wait is bounded by a watchdog; a reply that is not a well-formed protocol message, a
silent adapter and a dead one each raise an :class:`AdapterFailure`, never anything else.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar

from . import data
from .encoding import Json

PROTOCOL_VERSION = 1
MAX_LINE = 16 * 1024 * 1024
STDERR_TAIL = 200

Observer = Callable[[str, str, Json], None]
"""Called with (process label, "sent" | "received", message) for transcripts."""


class AdapterFailure(Exception):
    """The adapter did not answer as the protocol requires; ``kind`` names how."""

    kind: ClassVar[str] = "crash"


class AdapterCrashed(AdapterFailure):
    """The adapter exited or closed its stdout."""


class AdapterTimeout(AdapterFailure):
    """No reply before the watchdog fired."""

    kind = "timeout"


class ProtocolViolation(AdapterFailure):
    """A reply that is not valid JSON, not a valid envelope, or has the wrong id."""

    kind = "violation"


class HandshakeFailed(AdapterFailure):
    """``hello`` failed or returned something the runner cannot work with."""

    kind = "handshake"


@dataclass(frozen=True)
class Timeouts:
    """Watchdog limits in seconds, all scaled by one multiplier (slow CI machines)."""

    startup_s: float = 30.0
    request_s: float = 10.0
    shutdown_s: float = 2.0
    release_s: float = 2.0
    """How long a blocked call may take to return once the runner has released it (moved the
    server clock past its timeout, or made an item ready): a correct client's ``BLMOVE`` slices
    last at most 1 s of server time, and a frozen clock ends them as soon as it moves."""

    def scaled(self, multiplier: float) -> Timeouts:
        return Timeouts(
            self.startup_s * multiplier,
            self.request_s * multiplier,
            self.shutdown_s * multiplier,
            self.release_s * multiplier,
        )


@dataclass(frozen=True)
class Reply:
    """An adapter's answer: an ok payload, or an error object with kind, code and message."""

    ok: bool
    value: Json = None
    error: dict[str, Any] | None = None

    @property
    def kind(self) -> str:
        return str(self.error["kind"]) if self.error else ""

    @property
    def code(self) -> str:
        return str(self.error["code"]) if self.error else ""

    @property
    def message(self) -> str:
        return str(self.error.get("message", "")) if self.error else ""

    def describe(self) -> str:
        if self.ok:
            return f"ok {json.dumps(self.value)}"
        return f"{self.kind} error {self.code}: {self.message}".rstrip(": ")


@dataclass(frozen=True)
class Hello:
    """What an adapter said about itself in the handshake."""

    protocol: int
    implementation: dict[str, Any]
    profiles: tuple[str, ...]
    methods: tuple[str, ...]
    scripts: dict[str, str]
    raw: dict[str, Any]


_EOF = object()


class AdapterProcess:
    """An adapter subprocess speaking protocol version 1 over stdio."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        label: str,
        env: dict[str, str],
        timeouts: Timeouts,
        stderr_log: Path | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.argv = list(argv)
        self.label = label
        self.timeouts = timeouts
        self.observer = observer
        self.broken = False
        self.abandoned = False
        """The runner gave up on a call that should have returned (a blocked call after its
        release): the process is killed, and its restart does not count towards a crash loop."""
        self.hello: Hello | None = None
        self._next_id = 0
        self._ops: dict[int, str] = {}
        self._lines: queue.Queue[object] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self._stderr_count = 0
        self._stderr_lock = threading.Lock()
        self._log: IO[str] | None = stderr_log.open("a", encoding="utf-8") if stderr_log else None
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **env},
                start_new_session=True,
            )
        except OSError as exc:
            self._close_log()
            raise HandshakeFailed(f"cannot start adapter {self.argv!r}: {exc}") from exc
        threading.Thread(target=self._read_stdout, name=f"{label}-stdout", daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, name=f"{label}-stderr", daemon=True)
        self._stderr_reader.start()

    # -- threads -------------------------------------------------------------------------
    def _read_stdout(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        with contextlib.suppress(OSError, ValueError), stdout:
            for line in iter(lambda: stdout.readline(MAX_LINE), b""):
                self._lines.put(line)
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        with contextlib.suppress(OSError, ValueError), stderr:
            for raw in iter(stderr.readline, b""):
                text = raw.decode("utf-8", "replace").rstrip("\n")
                with self._stderr_lock:
                    self._stderr.append(text)
                    self._stderr_count += 1
                    if self._log is not None:
                        self._log.write(text + "\n")
                        self._log.flush()
        self._close_log()

    # -- stderr --------------------------------------------------------------------------
    def stderr_mark(self) -> int:
        """A position in the stderr stream, for :meth:`stderr_since`."""
        with self._stderr_lock:
            return self._stderr_count

    def stderr_since(self, mark: int) -> list[str]:
        """The stderr lines written after ``mark`` that are still in the kept tail."""
        with self._stderr_lock:
            kept = min(self._stderr_count - mark, len(self._stderr))
            return list(self._stderr)[len(self._stderr) - kept :] if kept > 0 else []

    # -- requests ------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self._process.poll() is None and not self.broken

    def handshake(self, redis_url: str, *, cluster: bool = False) -> Hello:
        """Send ``hello`` and check the answer; HandshakeFailed on anything unusable.

        ``cluster``: ``redis_url`` is one node of a Redis Cluster, sessions must open cluster clients."""
        redis_args: dict[str, Any] = {"url": redis_url, "cluster": True} if cluster else {"url": redis_url}
        args = {"protocols": [PROTOCOL_VERSION], "redis": redis_args}
        try:
            reply = self.request("hello", args, timeout_s=self.timeouts.startup_s)
        except AdapterFailure as exc:
            raise HandshakeFailed(f"hello: {exc}") from exc
        if not reply.ok:
            raise HandshakeFailed(f"hello was refused: {reply.describe()}")
        problems = data.schema_errors("adapter-protocol", reply.value, "/$defs/helloResult")
        if problems:
            raise HandshakeFailed("hello reply does not match the protocol: " + "; ".join(problems))
        value = reply.value
        self.hello = Hello(
            protocol=value["protocol"],
            implementation=value["implementation"],
            profiles=tuple(value["profiles"]),
            methods=tuple(value["methods"]),
            scripts=dict(value["scripts"]),
            raw=value,
        )
        return self.hello

    def send(self, op: str, args: dict[str, Any] | None = None) -> int:
        """Write one request; returns its id (pass it to :meth:`receive`)."""
        self._next_id += 1
        what = f"{op} {args['method']}" if op == "call" and args and "method" in args else op
        where = f" on session {args['session']!r}" if args and "session" in args else ""
        self._ops[self._next_id] = what + where
        message: dict[str, Any] = {"v": PROTOCOL_VERSION, "id": self._next_id, "op": op}
        if args is not None:
            message["args"] = args
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        if self.observer:
            self.observer(self.label, "sent", message)
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(line.encode("utf-8", "surrogateescape"))
            self._process.stdin.flush()
        except (OSError, ValueError) as exc:
            self.broken = True
            raise AdapterCrashed(f"cannot write to the adapter: {exc}{self._exit_note()}") from exc
        return self._next_id

    def receive(self, request_id: int, timeout_s: float) -> Reply:
        """Wait up to ``timeout_s`` for the reply to ``request_id``."""
        deadline = time.monotonic() + timeout_s
        try:
            line = self._lines.get(timeout=max(deadline - time.monotonic(), 0))
        except queue.Empty:
            self.broken = True
            what = self._ops.get(request_id, "a request")
            raise AdapterTimeout(
                f"the runner waited {timeout_s:.1f} s for the reply to request {request_id} ({what}); "
                "none came"
            ) from None
        self._ops.pop(request_id, None)
        if line is _EOF:
            self.broken = True
            self._wait_exit()
            raise AdapterCrashed(f"the adapter closed its stdout{self._exit_note()}")
        assert isinstance(line, bytes)
        return self._parse(line, request_id)

    @property
    def idle(self) -> bool:
        """Alive, with no request waiting for its reply and no reply left unread."""
        return self.alive and not self.abandoned and not self._ops and self._lines.empty()

    def replied(self) -> bool:
        """Whether a reply (or the end of stdout) is waiting to be received."""
        return not self._lines.empty()

    def request(
        self, op: str, args: dict[str, Any] | None = None, *, timeout_s: float | None = None
    ) -> Reply:
        """Send a request and wait for its reply."""
        request_id = self.send(op, args)
        return self.receive(request_id, self.timeouts.request_s if timeout_s is None else timeout_s)

    def _parse(self, line: bytes, request_id: int) -> Reply:
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        try:
            message = json.loads(text)
        except ValueError:
            self.broken = True
            raise ProtocolViolation(f"stdout line is not JSON: {text[:200]!r}") from None
        if self.observer:
            self.observer(self.label, "received", message)
        problems = data.schema_errors("adapter-protocol", message, "/$defs/response")
        if problems:
            self.broken = True
            raise ProtocolViolation(f"not a protocol response ({'; '.join(problems)}): {text[:200]}")
        if message["id"] != request_id:
            self.broken = True
            raise ProtocolViolation(f"reply has id {message['id']}, expected {request_id}")
        if "err" in message:
            return Reply(ok=False, error=message["err"])
        return Reply(ok=True, value=message["ok"])

    # -- ending --------------------------------------------------------------------------
    def _wait_exit(self) -> None:
        """Wait (bounded) for the process to exit and, if it did, for its last stderr lines."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(self.timeouts.shutdown_s)
            self._stderr_reader.join(self.timeouts.shutdown_s)

    def _exit_note(self) -> str:
        code = self._process.poll()
        if code is None:
            return ""
        if code < 0:
            return f" (killed by signal {signal.Signals(-code).name})"
        return f" (exit code {code})"

    def stop(self) -> None:
        """``shutdown`` politely, then SIGTERM, then SIGKILL; always returns within the grace periods."""
        if self._process.poll() is None and not self.broken:
            with contextlib.suppress(AdapterFailure):
                self.request("shutdown", timeout_s=self.timeouts.shutdown_s)
            with contextlib.suppress(OSError, ValueError):
                assert self._process.stdin is not None
                self._process.stdin.close()
            self._wait_exit()
        if self._process.poll() is None:
            self._signal(signal.SIGTERM)
            self._wait_exit()
        self.kill()

    def kill(self) -> None:
        """SIGKILL the adapter's process group (the group this object started) and reap it."""
        self.broken = True
        if self._process.poll() is None:
            self._signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(5)
        with contextlib.suppress(OSError, ValueError):
            assert self._process.stdin is not None
            self._process.stdin.close()
        # stdout and stderr are closed by their reader threads when they reach EOF; the stderr
        # log is complete once its reader is done.
        if self._process.poll() is not None:
            self._stderr_reader.join(self.timeouts.shutdown_s)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, sig)

    def _close_log(self) -> None:
        with self._stderr_lock:
            if self._log is not None:
                self._log.close()
                self._log = None
