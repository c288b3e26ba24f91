"""A TCP proxy between one session's adapter process and Redis, for deterministic faults.

A session with ``proxied: true`` is hosted in a process of its own whose Redis URL points at a
:class:`FaultProxy`. The proxy forwards every byte both ways until a ``fault`` step arms it:

* ``lose-reply``: the next script call (``EVALSHA``/``EVAL``) the session sends is forwarded, and
  once Redis answers (the script has run) the reply is dropped and the connection closed: the
  client cannot tell whether its call took effect (RWQ-FAIL-001, RWQ-FAIL-004). A ``NOSCRIPT``
  reply passes (the script did not run): the fault moves on to the client's retry;
* ``drop-call``: the next script call is not forwarded; the connection is closed instead (the
  script never ran, but the client cannot know that either);
* ``script-error``: the next script call is not forwarded; the proxy answers it with the error
  reply the step gives (``RWQ_LEASE_LOST ...``, ``ERR ...``), which the client must map to an
  error code (RWQ-SCRIPT-004, RWQ-ERR-003);
* ``restart``: every connection through the proxy is closed at once, as when Redis restarts
  (the runner also flushes the script cache; the data survives, as with persistence).

Clients send commands as RESP arrays; the proxy parses them only to find script calls.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field

SCRIPT_CALLS = frozenset({b"EVALSHA", b"EVAL", b"EVALSHA_RO", b"EVAL_RO"})


def command_ends(buffer: bytes) -> list[tuple[int, bytes]]:
    """The complete RESP commands at the start of ``buffer``: (end offset, upper-case name) each."""
    found: list[tuple[int, bytes]] = []
    at = 0
    while at < len(buffer):
        if buffer[at : at + 1] != b"*":  # an inline command: one line
            end = buffer.find(b"\r\n", at)
            if end < 0:
                return found
            words = buffer[at:end].split()
            found.append((end + 2, words[0].upper() if words else b""))
            at = end + 2
            continue
        end = buffer.find(b"\r\n", at)
        if end < 0:
            return found
        count, cursor, name = int(buffer[at + 1 : end]), end + 2, b""
        for index in range(count):
            end = buffer.find(b"\r\n", cursor)
            if end < 0:
                return found
            size = int(buffer[cursor + 1 : end])
            if len(buffer) < end + 2 + size + 2:
                return found
            if index == 0:
                name = buffer[end + 2 : end + 2 + size].upper()
            cursor = end + 2 + size + 2
        found.append((cursor, name))
        at = cursor
    return found


@dataclass
class _Link:
    """One client connection and its upstream connection."""

    client: socket.socket
    upstream: socket.socket
    doomed: bool = False
    """Its script call was forwarded under ``lose-reply``: the next bytes from Redis are dropped."""


@dataclass
class FaultProxy:
    """Forwards connections from a loopback port to ``upstream``; faults are armed by the runner."""

    upstream: tuple[str, int]
    armed: str | None = None
    reply: str = ""
    _links: list[_Link] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._accept, name="rwqc-proxy", daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def arm(self, fault: str, reply: str = "") -> None:
        """Apply ``fault`` (``lose-reply``, ``drop-call`` or ``script-error`` with the error
        ``reply``) to the next script call."""
        with self._lock:
            self.armed, self.reply = fault, reply

    def disarm(self) -> None:
        """Forget a fault armed and not yet applied (the proxy is handed to another case)."""
        with self._lock:
            self.armed, self.reply = None, ""

    def sever(self) -> None:
        """Close every connection through the proxy now (new ones are still accepted)."""
        with self._lock:
            links = list(self._links)
        for link in links:
            self._close(link)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._server.close()
        self.sever()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            link = _Link(client, upstream)
            with self._lock:
                self._links.append(link)
            threading.Thread(target=self._requests, args=(link,), daemon=True).start()
            threading.Thread(target=self._replies, args=(link,), daemon=True).start()

    def _close(self, link: _Link) -> None:
        with self._lock:
            if link in self._links:
                self._links.remove(link)
        for sock in (link.client, link.upstream):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def _requests(self, link: _Link) -> None:
        buffer = b""
        try:
            while chunk := link.client.recv(65536):
                buffer += chunk
                start = 0
                for end, name in command_ends(buffer):
                    command, start = buffer[start:end], end
                    if not self._forward(link, command, name):
                        return
                buffer = buffer[start:]
        except OSError:
            pass
        self._close(link)

    def _forward(self, link: _Link, command: bytes, name: bytes) -> bool:
        """Send one command on, or apply the armed fault to it; False once the link is done."""
        with self._lock:
            fault, reply = (self.armed, self.reply) if name in SCRIPT_CALLS else (None, "")
            if fault is not None:
                self.armed = None
        if fault is None:
            link.upstream.sendall(command)
        elif fault == "lose-reply":
            link.doomed = True
            link.upstream.sendall(command)
        elif fault == "drop-call":
            self._close(link)
            return False
        else:
            link.client.sendall(b"-" + reply.encode() + b"\r\n")
        return True

    def _replies(self, link: _Link) -> None:
        try:
            while chunk := link.upstream.recv(65536):
                if link.doomed and chunk.startswith(b"-NOSCRIPT"):
                    with self._lock:  # the script did not run: lose the reply of the retry instead
                        link.doomed, self.armed = False, "lose-reply"
                elif link.doomed:  # the script ran: its reply is lost with the connection
                    break
                link.client.sendall(chunk)
        except OSError:
            pass
        self._close(link)
