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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import redis

FROZEN_START = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
FAKETIME_ENV = "RWQ_LIBFAKETIME"
"""A path to libfaketime (``libfaketime.so.1``, ``libfaketime.1.dylib``), or ``none`` for no frozen clock."""
TCMALLOC_ENV = "RWQ_LIBTCMALLOC"
"""A path to tcmalloc_minimal to preload before libfaketime, or ``none`` to preload nothing."""
DISABLED = frozenset({"", "0", "no", "none", "off", "false"})
FAKETIME_NAMES = ("libfaketime.so.1", "libfaketime.1.dylib")
TCMALLOC_NAMES = ("libtcmalloc_minimal.so.4", "libtcmalloc_minimal.4.dylib")
FAKETIME_GLOBS = (
    "usr/lib/*/faketime/libfaketime.so.1",  # Debian, Ubuntu: any architecture triplet
    "usr/lib64/faketime/libfaketime.so.1",  # Fedora, RHEL, openSUSE
    "usr/lib/faketime/libfaketime.so.1",  # Alpine, Arch
    "usr/local/lib/faketime/libfaketime.so.1",  # built from source
    "usr/local/lib*/faketime/libfaketime.so.1",
    "opt/homebrew/lib/faketime/libfaketime.1.dylib",  # macOS Homebrew, Apple silicon
    "usr/local/lib/faketime/libfaketime.1.dylib",  # macOS Homebrew, Intel
    "opt/homebrew/Cellar/libfaketime/*/lib/faketime/libfaketime.1.dylib",
    "usr/local/Cellar/libfaketime/*/lib/faketime/libfaketime.1.dylib",
)
TCMALLOC_GLOBS = (
    "usr/lib/*/libtcmalloc_minimal.so.4",
    "lib/*/libtcmalloc_minimal.so.4",
    "usr/lib64/libtcmalloc_minimal.so.4",
    "usr/lib/libtcmalloc_minimal.so.4",
    "usr/local/lib/libtcmalloc_minimal.so.4",
)


@dataclass(frozen=True)
class Faketime:
    """How to start a process under libfaketime: the libraries to preload, in order, and how."""

    library: Path
    preload: tuple[Path, ...]
    """Everything to preload: tcmalloc (when found) first, it dodges jemalloc's clash with
    libfaketime in Debian's redis-server; libfaketime last."""
    found_by: str

    def environ(self) -> dict[str, str]:
        """The variables that preload the libraries (``DYLD_INSERT_LIBRARIES`` on macOS)."""
        paths = ":".join(str(path) for path in self.preload)
        if self.library.suffix == ".dylib":
            return {"DYLD_INSERT_LIBRARIES": paths, "DYLD_FORCE_FLAT_NAMESPACE": "1"}
        return {"LD_PRELOAD": paths}


def _run_quiet(argv: list[str]) -> str:
    """``argv``'s stdout, or "" when it cannot run."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _ldconfig_paths(names: Iterable[str]) -> list[Path]:
    """Libraries named ``names`` in the dynamic linker's cache (``ldconfig -p``)."""
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(p, os.X_OK)), None
    )
    if ldconfig is None:
        return []
    wanted = set(names)
    found = []
    for line in _run_quiet([ldconfig, "-p"]).splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ", 1)[0] in wanted and path:
            found.append(Path(path.strip()))
    return found


def _pkg_config_paths() -> list[Path]:
    """libfaketime under the ``libdir`` pkg-config reports for it, if it ships a .pc file."""
    if shutil.which("pkg-config") is None:
        return []
    found = []
    for package in ("libfaketime", "faketime"):
        libdir = _run_quiet(["pkg-config", "--variable=libdir", package]).strip()
        if libdir:
            found += [Path(libdir) / sub / name for sub in ("faketime", "") for name in FAKETIME_NAMES]
    return found


def _globbed(root: Path, patterns: Iterable[str]) -> list[Path]:
    return [path for pattern in patterns for path in sorted(root.glob(pattern))]


def _override(environ: Mapping[str, str], name: str) -> Path | bool | None:
    """The path an override variable names; False when it disables; None when unset."""
    value = environ.get(name)
    if value is None:
        return None
    if value.strip().lower() in DISABLED:
        return False
    return Path(value)


def find_faketime(
    environ: Mapping[str, str] | None = None, root: Path = Path("/"), *, probe: bool = True
) -> Faketime | str:
    """Where libfaketime is, or why no frozen clock is possible (a sentence).

    Looks at ``$RWQ_LIBFAKETIME``, then pkg-config, ``ldconfig -p``, and the usual install paths
    under ``root`` (Debian/Ubuntu of any architecture, Fedora, Alpine, macOS Homebrew);
    ``probe=False`` skips the two commands (tests with fake directories)."""
    environ = os.environ if environ is None else environ
    override = _override(environ, FAKETIME_ENV)
    if override is False:
        return f"{FAKETIME_ENV} disables the frozen clock"
    if isinstance(override, Path):
        if not override.is_file():
            return f"{FAKETIME_ENV}={override} is not a file"
        library, found_by = override, FAKETIME_ENV
    else:
        candidates = [(path, "pkg-config") for path in (_pkg_config_paths() if probe else [])]
        candidates += [(path, "ldconfig") for path in (_ldconfig_paths(FAKETIME_NAMES) if probe else [])]
        candidates += [(path, "path") for path in _globbed(root, FAKETIME_GLOBS)]
        hit = next(((path, how) for path, how in candidates if path.is_file()), None)
        if hit is None:
            return f"libfaketime not found: install it or set {FAKETIME_ENV}"
        library, found_by = hit
    return Faketime(library, (*_tcmalloc(environ, root, library, probe=probe), library), found_by)


def _tcmalloc(environ: Mapping[str, str], root: Path, faketime: Path, *, probe: bool) -> list[Path]:
    """tcmalloc_minimal to preload before libfaketime: ``$RWQ_LIBTCMALLOC``, next to libfaketime's
    directory, the linker cache, the usual paths; none on macOS, where redis uses libc's malloc."""
    override = _override(environ, TCMALLOC_ENV)
    if override is not None:
        return [override] if isinstance(override, Path) and override.is_file() else []
    if faketime.suffix == ".dylib":
        return []
    near = [faketime.parent.parent / name for name in TCMALLOC_NAMES]
    cached = _ldconfig_paths(TCMALLOC_NAMES[:1]) if probe else []
    candidates = near + cached + _globbed(root, TCMALLOC_GLOBS)
    return next(([path] for path in candidates if path.is_file()), [])


class RedisUnavailable(RuntimeError):
    """No redis-server binary, or it would not start."""


def redis_server_binary() -> str:
    """``redis-server``: ``$RWQ_REDIS_SERVER``, else the one on PATH."""
    found = os.environ.get("RWQ_REDIS_SERVER") or shutil.which("redis-server")
    if found and os.access(found, os.X_OK):
        return found
    raise RedisUnavailable(
        "redis-server not found: install it (Debian: apt-get install redis-server), "
        "or name its path in RWQ_REDIS_SERVER"
    )


def faketime_available() -> bool:
    """Whether a frozen server clock is possible here (see :func:`find_faketime`)."""
    return isinstance(find_faketime(), Faketime)


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
            faketime = find_faketime()
            if not isinstance(faketime, Faketime):
                raise RedisUnavailable(f"no frozen clock: {faketime}")
            self._write_clock()
            env.update(
                **faketime.environ(),
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
                if self.frozen_clock and not self._clock_frozen():
                    self.stop()
                    raise RedisUnavailable("redis-server started, but its clock is not frozen")
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

    def _clock_frozen(self) -> bool:
        """Whether the server's clock reads the frozen start (a preload that failed leaves it real)."""
        with self.client(socket_timeout=5) as probe:
            seconds, _micros = probe.time()
        return abs(int(seconds) - self._now.timestamp()) < 3600

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
        with self.client(socket_timeout=5, client_name="rwqc-runner") as probe:
            while time.monotonic() < deadline:
                seconds, micros = probe.time()
                if seconds * 1_000_000 + micros >= target:
                    return
                time.sleep(0.001)
        raise RuntimeError("the server did not pick up the new fake time")

    def rewind(self, ms: int) -> None:
        """Move the frozen clock back by ``ms`` (a server clock jump backwards) and wait until the
        server sees it."""
        if not self.frozen_clock:
            raise RuntimeError("rewind() needs a server started with frozen_clock=True")
        if ms < 0:
            raise ValueError("rewind() takes a positive step; advance() moves forward")
        self._now -= dt.timedelta(milliseconds=ms)
        self._write_clock()
        target = round(self._now.timestamp() * 1_000_000)
        deadline = time.monotonic() + 5
        with self.client(socket_timeout=5, client_name="rwqc-runner") as probe:
            while time.monotonic() < deadline:
                seconds, micros = probe.time()
                if target <= seconds * 1_000_000 + micros < target + 1000:
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
