"""The adapter processes of a run: one shared process per implementation, restarted when it
breaks, plus processes of their own for sessions that need one."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .adapter import AdapterProcess, Hello, Observer, Timeouts
from .encoding import Json

SUBJECT = "subject"
REFERENCE = "reference"
REFERENCE_ARGV = (sys.executable, "-m", "rwq.conformance.reference_adapter")

EventSink = Callable[..., None]
"""Called as ``sink(event_name, **fields)``."""


def hosting_impl(impl: str) -> str:
    """Which adapter hosts a session: ``any`` runs in the subject until interop permutations exist."""
    return REFERENCE if impl == REFERENCE else SUBJECT


class AdapterPool:
    """Starts, hands out, restarts and stops adapter processes; counts restarts for crash loops."""

    def __init__(
        self,
        subject_argv: Sequence[str],
        *,
        redis_url: str,
        timeouts: Timeouts,
        log_dir: Path,
        emit: EventSink,
    ) -> None:
        self.argvs = {SUBJECT: list(subject_argv), REFERENCE: list(REFERENCE_ARGV)}
        self.redis_url = redis_url
        self.timeouts = timeouts
        self.log_dir = log_dir
        self.emit = emit
        self.restarts = 0
        self.observer: Observer | None = None
        self.hellos: dict[str, Hello] = {}
        self._shared: dict[str, AdapterProcess] = {}
        self._started = 0

    def _observe(self, label: str, direction: str, message: Json) -> None:
        if self.observer is not None:
            self.observer(label, direction, message)

    def start(self, impl: str) -> AdapterProcess:
        """A new process of ``impl`` that has completed its handshake (HandshakeFailed if not)."""
        self._started += 1
        label = f"{impl}-{self._started}"
        process = AdapterProcess(
            self.argvs[impl],
            label=label,
            env={"RWQ_CONFORMANCE": "1", "RWQ_REDIS_URL": self.redis_url, "RWQ_PROTOCOL": "1"},
            timeouts=self.timeouts,
            stderr_log=self.log_dir / f"{label}.stderr.log",
            observer=self._observe,
        )
        try:
            hello = process.handshake(self.redis_url)
        except BaseException:
            process.kill()
            raise
        self.hellos.setdefault(impl, hello)
        return process

    def shared(self, impl: str) -> AdapterProcess:
        """The shared process of ``impl``, started (or restarted after a failure) on demand."""
        process = self._shared.get(impl)
        if process is not None and process.alive:
            return process
        if process is not None:
            process.kill()
            del self._shared[impl]
            self.restarts += 1
            self.emit("adapter_restarted", impl=impl, previous=process.label, restarts=self.restarts)
        process = self.start(impl)
        self._shared[impl] = process
        return process

    def close(self) -> None:
        """Stop every shared process (own processes are stopped by their cases)."""
        for process in self._shared.values():
            process.stop()
        self._shared.clear()
