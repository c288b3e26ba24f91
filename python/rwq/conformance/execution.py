"""Running one case: its sessions, its namespace, and the step verbs.

A step verb is a function ``(CaseContext, step) -> None`` registered in :data:`VERBS`; it raises
:class:`StepFailure` when the step does not hold. New verbs (hypothesis-driven steps, workload
runs) register the same way and get a matching ``step`` branch in the case schema. With a managed
Redis, :func:`run_case` also traces each case and checks the trace (:mod:`.wire`).
"""

from __future__ import annotations

import collections
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from redis.exceptions import RedisError, ResponseError

from ..protocol.scripts import registry
from . import data
from .adapter import AdapterFailure, AdapterProcess, AdapterTimeout, Reply
from .cases import Case, SessionSpec
from .cluster import OtherNodesTrace
from .encoding import Json, decode_bytes, encode_bytes, is_bytes
from .environment import RedisEnvironment
from .matching import (
    Outcome,
    TemplateError,
    difference,
    expectation_failure,
    resolve_pointer,
    schema_mismatch,
    substitute,
)
from .pool import SUBJECT, AdapterPool, hosting_impl
from .proxy import FaultProxy
from .state import logical_state, raw_keys
from .wire import ONE_SCRIPT, Party, Trace, WireError

TRANSCRIPT_LIMIT = 200
TTL_FIELDS = frozenset({"pttl_ms", "remaining_ms"})
"""Members of ``check`` states and keys that hold a key's remaining time to live."""
STDERR_LIMIT = 60

CASE_ERROR = "case-error"
STATUS_BY_KIND = {
    "mismatch": "fail",
    "unsupported": "fail",
    "scripts": "fail",
    "adapter-error": "error",
    "violation": "error",
    CASE_ERROR: "error",
    "redis": "error",
    "timeout": "timeout",
    "blocked": "timeout",
    "crash": "crash",
    "handshake": "crash",
    "wire": "fail",
}
"""Case status for each kind of failure."""


class StepFailure(Exception):
    """A step did not hold; ``kind`` is a key of :data:`STATUS_BY_KIND`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class WireFailure(StepFailure):
    """The case's wire trace broke a rule (:mod:`.wire`) at ``step`` (0: while opening sessions)."""

    def __init__(self, step: int, message: str) -> None:
        super().__init__("wire", message)
        self.step = step


@dataclass(frozen=True)
class Failure:
    """Where and why a case failed."""

    step: int | None
    verb: str | None
    kind: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "verb": self.verb, "kind": self.kind, "message": self.message}


@dataclass
class CaseRun:
    """The result of executing one case."""

    status: str
    duration_ms: int
    failure: Failure | None = None
    stderr: dict[str, list[str]] = field(default_factory=dict)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None
    """What the run did, for the report (e.g. how many random programs)."""


@dataclass
class Session:
    """A session of a running case and the process that hosts it (None after it was killed)."""

    spec: SessionSpec
    prefix: str
    client_name: str
    process: AdapterProcess | None = None
    refused: Reply | None = None
    closed: bool = False
    """Closed by a ``close`` or ``reset`` step: its next call opens it again first."""

    @property
    def shards(self) -> int:
        """The shard count of a sharded session (option ``shards``, SPEC 19), else 0."""
        return int((self.spec.options or {}).get("shards", 0))

    @property
    def declared(self) -> bool:
        """Whether the session passes every key in KEYS (option ``declared_keys``, SPEC 20)."""
        return bool((self.spec.options or {}).get("declared_keys", False))


@dataclass(frozen=True)
class Pending:
    """An async call in flight: where it was made, and for a blocking call (``block: true``) its
    ``timeout_ms`` and where the server clock stood when it was sent, so that a call that does
    not return can be reported with what the runner did meanwhile."""

    session: str
    request_id: int
    method: str
    step: int = 0
    timeout_ms: int | None = None
    """``timeout_ms`` of a blocking call (0: no limit); None for a call that does not block."""
    advanced_ms: int = 0
    """How far the runner had moved the clock in this case when the call was sent."""
    sent_ms: int | None = None
    """The server's clock when the call was sent, on a running clock (None on a frozen one)."""


def script_vars() -> dict[str, Json]:
    """``${lua_<name>}``: each canonical script's source, for ``redis`` steps that EVAL a script
    directly (to check what the script itself does with arguments no client would send)."""
    return {f"lua_{name}": script.source.decode() for name, script in registry().items()}


class CaseContext:
    """Everything a step verb needs: the environment, the case's sessions and saved variables."""

    def __init__(self, case: Case, env: RedisEnvironment, pool: AdapterPool) -> None:
        self.case = case
        self.env = env
        self.pool = pool
        self.ns = env.new_namespace()
        self.started_ms = None if env.frozen else env.server_ms()
        bare = self.ns.replace("{", "").replace("}", "")  # a sharded queue's name (SPEC 19)
        self.vars: dict[str, Json] = {"ns": self.ns, "bare": bare, **script_vars()}
        self.sessions: dict[str, Session] = {}
        self.pending: dict[str, Pending] = {}
        self.transcript: collections.deque[dict[str, Any]] = collections.deque(maxlen=TRANSCRIPT_LIMIT)
        self._marks: dict[AdapterProcess, int] = {}
        self._own: dict[AdapterProcess, tuple[str, FaultProxy | None]] = {}
        """The processes of own sessions: their implementation and proxy (proxied sessions)."""
        self.proxies: dict[str, FaultProxy] = {}
        self.position = 0
        self.advanced_ms = 0
        """How far the case has moved the server clock so far (``advance_time_ms`` steps)."""
        self.invalid_steps: set[int] = set()
        """Steps whose call the subject refused with INVALID_ARGUMENT: they must send nothing."""
        token = self.ns[self.ns.index("{") + 1 : self.ns.index("}")]
        for spec in case.sessions.values():
            prefix = self.prefix(spec.queue, tagged=not spec.untagged)
            if spec.as_shard is not None:
                prefix = f"{{{bare}#{spec.as_shard}}}" + (f":{spec.queue}" if spec.queue else "")
            if spec.empty_prefix:
                prefix = ""
            if spec.literal_prefix is not None:
                prefix = spec.literal_prefix
            self.sessions[spec.name] = Session(spec, prefix, f"rwqc-{token}-{spec.name}")

    @property
    def request_s(self) -> float:
        return self.pool.timeouts.request_s

    def template(self, value: Json) -> Json:
        return substitute(value, self.vars)

    def prefix(self, queue: str | None, *, tagged: bool = True) -> str:
        """The key prefix of a case queue: ``${ns}``, or ``${ns}:<queue>`` for a named one;
        ``tagged=False`` drops the braces of the namespace's hash tag."""
        base = self.ns if tagged else self.ns.replace("{", "").replace("}", "")
        return base if queue is None else f"{base}:{queue}"

    def record(self, label: str, direction: str, message: Json) -> None:
        self.transcript.append({"process": label, "direction": direction, "message": message})

    def _track(self, process: AdapterProcess) -> AdapterProcess:
        self._marks.setdefault(process, process.stderr_mark())
        return process

    def process_for(self, name: str) -> AdapterProcess:
        """The process hosting session ``name``; a killed own process is replaced and reopened."""
        session = self.sessions[name]
        if session.process is None:
            self._open(session)
        elif session.closed:
            self._send_open(session, session.process)
        assert session.process is not None
        return session.process

    def open_all(self) -> None:
        for session in self.sessions.values():
            self._open(session)

    def _open(self, session: Session) -> None:
        impl = hosting_impl(session.spec.impl)
        if session.spec.proxied:
            proxy = self.proxies.get(session.spec.name)
            if proxy is None:
                parts = urlsplit(self.env.url)
                process, proxy = self.pool.own(impl, (parts.hostname or "127.0.0.1", parts.port or 6379))
                assert proxy is not None
                self.proxies[session.spec.name] = proxy
            else:  # its process was killed: a new one behind the same proxy
                process = self.pool.start(impl, proxy.url)
            self._own[process] = (impl, proxy)
        elif session.spec.own_process:
            process, _ = self.pool.own(impl)
            self._own[process] = (impl, None)
        else:
            process = self.pool.shared(impl)
        session.process = self._track(process)
        self._send_open(session, process)

    def _send_open(self, session: Session, process: AdapterProcess) -> None:
        session.closed = False
        args: dict[str, Any] = {
            "session": session.spec.name,
            "queue": session.prefix,
            "client_name": session.client_name,
        }
        if session.spec.options:
            args["options"] = session.spec.options
        reply = process.request("open", args)
        if not reply.ok and session.spec.refusable and reply.kind == "domain":
            session.refused = reply  # every call on the session now gets this error
        elif not reply.ok:
            raise StepFailure("adapter-error", f"open {session.spec.name!r} was refused: {reply.describe()}")

    def stderr(self) -> dict[str, list[str]]:
        """Each process's stderr written during this case (the last lines)."""
        tails = {
            process.label: process.stderr_since(mark)[-STDERR_LIMIT:] for process, mark in self._marks.items()
        }
        return {label: lines for label, lines in tails.items() if lines}

    def close(self) -> None:
        """Stop own processes, reset shared ones, delete the namespace; never raises."""
        self.pool.finished_sessions.update(session.client_name for session in self.sessions.values())
        kept = [
            id(proxy) for process, (impl, proxy) in self._own.items() if self.pool.park(impl, process, proxy)
        ]
        for proxy in self.proxies.values():
            if id(proxy) not in kept:
                proxy.close()
        for process in self._marks:
            if process not in self._own and process.alive:
                with contextlib.suppress(AdapterFailure):
                    if not process.request("reset").ok:
                        process.broken = True
        with contextlib.suppress(RedisError):
            self.env.drop_namespace(self.ns)
            for session in self.sessions.values():
                if session.spec.literal_prefix is not None:
                    self.env.drop_prefix(session.spec.literal_prefix)


Verb = Callable[[CaseContext, dict[str, Any]], None]


def _settle(ctx: CaseContext, method: str, reply: Reply, step: dict[str, Any]) -> None:
    if reply.ok:
        problems = data.schema_errors("adapter-protocol", reply.value, f"/$defs/results/{method}", "result")
        if problems:
            raise StepFailure("violation", f"the {method} result breaks the protocol: {'; '.join(problems)}")
        outcome = Outcome(True, reply.value)
    elif reply.kind == "domain":
        outcome = Outcome(False, code=reply.code, message=reply.message)
    elif reply.kind == "unsupported":
        raise StepFailure("unsupported", f"the adapter does not support {method}: {reply.message}")
    else:
        raise StepFailure("adapter-error", f"the adapter reported {reply.describe()}")
    _expect(ctx, step, outcome)


def _expect(
    ctx: CaseContext, step: dict[str, Any], outcome: Outcome, root: str = "result", units: str = ""
) -> None:
    expect = ctx.template(step["expect"]) if "expect" in step else None
    problem = expectation_failure(expect, outcome, root, units)
    if problem:
        raise StepFailure("mismatch", problem)
    for var, pointer in step.get("save", {}).items():
        if not outcome.ok:
            raise StepFailure(CASE_ERROR, f"cannot save {var!r} from an error")
        ctx.vars[var] = resolve_pointer(outcome.value, pointer)


def _call(ctx: CaseContext, step: dict[str, Any]) -> None:
    name, method = step["session"], step["call"]
    params = ctx.template(step.get("args", {}))
    problems = data.schema_errors("adapter-protocol", params, f"/$defs/params/{method}", "args")
    if problems:
        raise StepFailure(CASE_ERROR, f"args of {method} break the protocol: {'; '.join(problems)}")
    process = ctx.process_for(name)
    refused = ctx.sessions[name].refused
    if refused is not None and "async" not in step:
        _settle(ctx, method, refused, step)
        return
    args = {"session": name, "method": method, "params": params}
    timeout_ms = params.get("timeout_ms", 0)  # a case may pass a non-integer that must be refused
    blocking = params.get("block") is True and type(timeout_ms) in (int, float)
    if "async" in step:
        ctx.pending[step["async"]] = Pending(
            name,
            process.send("call", args),
            method,
            ctx.position,
            int(timeout_ms) if blocking else None,
            ctx.advanced_ms,
            None if ctx.env.frozen or not blocking else ctx.env.server_ms(),
        )
        return
    # On a running clock a blocking call takes its timeout in real time; on a frozen one it
    # returns at once (an item is ready, or the case expects an error) or never.
    wait_s = timeout_ms / 1000 if blocking and not ctx.env.frozen else 0
    reply = process.request("call", args, timeout_s=ctx.request_s + wait_s)
    invalid = not reply.ok and reply.kind == "domain" and reply.code == "INVALID_ARGUMENT"
    if invalid and not step.get("script_refusal"):
        ctx.invalid_steps.add(ctx.position)  # refused before any I/O (RWQ-ERR-002), checked on the wire
    _settle(ctx, method, reply, step)


def step_label(step: dict[str, Any]) -> str:
    """A step in a few words, for messages: ``call add on 'p'``, ``advance_time_ms 3001``."""
    verb = verb_of(step)
    if verb == "call":
        return f"call {step['call']} on {step['session']!r}"
    if verb == "redis":
        return "redis " + " ".join(str(arg) for arg in step["redis"][:1])
    if verb == "check":
        return "check"
    if verb == "fault":
        return f"fault {step['fault']}"
    return f"{verb} {step[verb]}"


def _since(ctx: CaseContext, pending: Pending) -> str:
    """What the runner did between a call and now, e.g. ``steps 2-3 (wait_blocked w1; call add on 'p')``."""
    steps = ctx.case.steps[pending.step : ctx.position - 1]
    if not steps:
        return "no step ran in between"
    span = f"step {pending.step + 1}" if len(steps) == 1 else f"steps {pending.step + 1}-{ctx.position - 1}"
    return f"in between the runner ran {span} ({'; '.join(step_label(step) for step in steps)})"


def blocked_message(ctx: CaseContext, pending: Pending, waited_s: float) -> str:
    """Why a blocking call that has not returned should have: what the runner did to the server
    clock (or what it ran) since the call, against the call's timeout."""
    call = f"the {pending.method} of step {pending.step} (session {pending.session!r})"
    timeout = pending.timeout_ms or 0
    moved = ctx.advanced_ms - pending.advanced_ms
    waited = f"the call has not returned {waited_s:.1f} s after the await began"
    if ctx.env.frozen and timeout and moved >= timeout:
        # the clock stood still from the request to the first advance: the call's first lease
        # script saw the server time of the request
        return (
            f"server clock advanced {moved:,} ms past the first call of {call}; "
            f"its timeout was {timeout:,} ms; {waited} (a blocking call returns nothing once its "
            "timeout of server time has passed, RWQ-LEASE-010)"
        )
    if pending.sent_ms is not None and timeout:
        elapsed = ctx.env.server_ms() - pending.sent_ms
        return (
            f"{elapsed:,} ms of server time have passed since {call} was sent; its timeout was "
            f"{timeout:,} ms; {waited} (RWQ-LEASE-010)"
        )
    limit = f"its timeout was {timeout:,} ms" if timeout else "its timeout_ms was 0 (no limit)"
    clock = f", and moved the server clock {moved:,} ms" if moved else ""
    return f"{call} is blocked: {limit}; {_since(ctx, pending)}{clock}; {waited}"


def _await(ctx: CaseContext, step: dict[str, Any]) -> None:
    pending = ctx.pending.pop(step["await"])
    process = ctx.sessions[pending.session].process
    if process is None:
        raise StepFailure(CASE_ERROR, f"the process of {pending.session!r} was killed before the await")
    if pending.timeout_ms is None:
        _settle(ctx, pending.method, process.receive(pending.request_id, ctx.request_s), step)
        return
    # A blocking call: by the await the runner has released it (moved the clock past its timeout,
    # or made an item ready), so it returns within the release budget, plus on a running clock
    # what is left of its timeout in real time.
    budget = ctx.pool.timeouts.release_s
    if pending.sent_ms is not None:
        budget += max(pending.timeout_ms - (ctx.env.server_ms() - pending.sent_ms), 0) / 1000
    try:
        reply = process.receive(pending.request_id, budget)
    except AdapterTimeout:
        process.abandoned = True  # killed with the case; its restart is not a crash
        raise StepFailure("blocked", blocked_message(ctx, pending, budget)) from None
    _settle(ctx, pending.method, reply, step)


def _close(ctx: CaseContext, step: dict[str, Any]) -> None:
    """``close``: the adapter's ``close`` op on one session, or ``reset`` (every session of the
    session's process), mid-case, so that what a client sends while it closes is traced and checked
    like any step (RWQ-SCRIPT-006: no ``QUIT``). The session's next call opens it again first."""
    name, op = (step["close"], "close") if "close" in step else (step["reset"], "reset")
    process = ctx.process_for(name)
    reply = process.request(op, {"session": name} if op == "close" else None)
    if not reply.ok:
        raise StepFailure("adapter-error", f"{op} of {name!r} was refused: {reply.describe()}")
    for session in ctx.sessions.values():
        if session.spec.name == name or (op == "reset" and session.process is process):
            session.closed = True


def _wait_blocked(ctx: CaseContext, step: dict[str, Any]) -> None:
    """Wait until the session's connection blocks in Redis; fail at once when the call that
    should block has already returned (a blocking lease that never blocks), unless the step says
    ``or_returned`` (a call the client may refuse before any I/O)."""
    session = ctx.sessions[step["wait_blocked"]]
    process = session.process
    call = next((p for p in ctx.pending.values() if p.session == session.spec.name), None)

    def returned() -> bool:
        return call is not None and process is not None and process.replied()

    if ctx.env.wait_blocked(session.client_name, ctx.request_s, returned):
        return
    if call is not None and process is not None and returned():
        if step.get("or_returned"):
            return  # a call a client may refuse before any I/O: the await checks its reply
        ctx.pending = {key: p for key, p in ctx.pending.items() if p is not call}
        raise StepFailure(
            "mismatch",
            f"the {call.method} of step {call.step} (session {session.spec.name!r}) returned before its "
            f"connection blocked in Redis: {process.receive(call.request_id, 0).describe()}",
        )
    raise StepFailure(
        "mismatch",
        f"no connection of session {session.spec.name!r} (CLIENT SETNAME {session.client_name}) "
        f"blocked in Redis within {ctx.request_s:.1f} s",
    )


def _redis_value(value: Json) -> Any:
    if is_bytes(value):
        return decode_bytes(value)
    return value


def _as_json(reply: Any) -> Json:
    if isinstance(reply, bytes):
        return encode_bytes(reply)
    if isinstance(reply, (list, tuple)):
        return [_as_json(item) for item in reply]
    return reply


KEY_ROLES = {
    "lease": "the lease token of item {!r}",
    "item": "the payload of item {!r}",
    "queue": "the ready list",
    "processing": "the in-flight list",
}
"""What a key of a case's queue holds (SPEC 4), by its name after the prefix, for messages."""
UNITS = {"STRLEN": "bytes", "LLEN": "entries", "HLEN": "fields", "ZCARD": "members", "DBSIZE": "keys"}
"""What the integer reply of a raw command counts, for messages."""


def command_subject(ctx: CaseContext, command: list[Any]) -> str:
    """How a message names the reply of a ``redis`` step: the command and its key, with what the
    key holds when it is one of the queue's (``STRLEN rwqc:{..}:lease:a (the lease token of item 'a')``)."""
    shown = " ".join(str(arg) for arg in command[:2])
    key = command[1] if len(command) > 1 and isinstance(command[1], str) else ""
    rest = key[len(ctx.ns) + 1 :].split(":", 1) if key.startswith(ctx.ns + ":") else []
    role = KEY_ROLES.get(rest[0]) if rest else None
    if role is None or ("{" in role) != (len(rest) == 2):
        return shown
    return f"{shown} ({role.format(rest[1]) if len(rest) == 2 else role})"


def _redis(ctx: CaseContext, step: dict[str, Any]) -> None:
    command = [_redis_value(arg) for arg in ctx.template(step["redis"])]
    try:
        outcome = Outcome(True, _as_json(ctx.env.client.execute_command(*command)))
    except ResponseError as exc:
        text = str(exc)
        outcome = Outcome(False, code=text.split(" ", 1)[0], message=text)
    name = str(command[0]).upper() if command else ""
    _expect(ctx, step, outcome, command_subject(ctx, command), UNITS.get(name, ""))


def _advance(ctx: CaseContext, step: dict[str, Any]) -> None:
    ctx.env.advance(ctx.ns, step["advance_time_ms"])
    ctx.advanced_ms += step["advance_time_ms"]


def _rewind(ctx: CaseContext, step: dict[str, Any]) -> None:
    ctx.env.rewind(step["rewind_time_ms"])
    ctx.advanced_ms -= step["rewind_time_ms"]


def _fault(ctx: CaseContext, step: dict[str, Any]) -> None:
    kind = step["fault"]
    targets = [step["session"]] if "session" in step else list(ctx.sessions)
    if kind == "script-flush":
        ctx.env.script_flush()
    elif kind == "kill-connections":
        ctx.env.kill_clients({ctx.sessions[name].client_name for name in targets})
    elif kind in ("lose-reply", "drop-call", "script-error"):
        for name in targets:
            ctx.proxies[name].arm(kind, step.get("reply", ""))
    elif kind == "restart":
        for name in targets:
            ctx.proxies[name].sever()
        ctx.env.script_flush()
    elif kind == "kill-session-process":
        for name in targets:
            session = ctx.sessions[name]
            if session.process is not None:
                session.process.kill()
                session.process = None
            ctx.pending = {key: p for key, p in ctx.pending.items() if p.session != name}


def ttl_slack_ms(ctx: CaseContext) -> int:
    """How far a TTL set during the case may have run down: 0 under a frozen clock, else the
    server time elapsed since the case started (every round trip of the case included), plus the
    millisecond the server's clock may tick across."""
    return 0 if ctx.started_ms is None else ctx.env.server_ms() - ctx.started_ms + 1


def within_slack(expected: Json, actual: Json, slack_ms: int) -> Json:
    """``actual`` with every TTL member (:data:`TTL_FIELDS`) that is at most ``slack_ms`` below
    the positive value ``expected`` gives it replaced by that value; on a running clock a TTL
    only runs down, so a higher value, or one further below, still fails the comparison."""
    if not slack_ms:
        return actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        adjusted = dict(actual)
        for key, want in expected.items():
            if key not in actual:
                continue
            got = actual[key]
            ttl = key in TTL_FIELDS and type(want) is int and type(got) is int and want > 0
            if ttl and want - slack_ms <= got <= want:
                adjusted[key] = want
            elif not ttl:
                adjusted[key] = within_slack(want, got, slack_ms)
        return adjusted
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [within_slack(want, got, slack_ms) for want, got in zip(expected, actual, strict=True)]
    return actual


def _check(ctx: CaseContext, step: dict[str, Any]) -> None:
    spec = ctx.template(step["check"])
    if "state" in spec or "state_matches" in spec:
        prefix = ctx.prefix(spec.get("queue"))
        if "shard" in spec:  # shard i of a sharded queue (SPEC 19), whose name has no hash tag
            prefix = f"{{{ctx.prefix(spec.get('queue'), tagged=False)}#{spec['shard']}}}"
        state = logical_state(ctx.env.client, prefix)
        for name, expected in spec.get("state", {}).items():
            problem = difference(expected, within_slack(expected, state[name], ttl_slack_ms(ctx)))
            if problem:
                raise StepFailure("mismatch", f"state.{name} {problem}")
        if "state_matches" in spec:
            problem = schema_mismatch(spec["state_matches"], state, "state")
            if problem:
                raise StepFailure("mismatch", problem)
    if "keys" in spec:
        _check_keys(ctx, dict(spec["keys"]))


def _check_keys(ctx: CaseContext, expected: dict[str, Any]) -> None:
    only = expected.pop("$only", False)
    actual = raw_keys(ctx.env.client, ctx.env.namespace_keys(ctx.ns))
    for name, want in expected.items():
        got = actual.get(name)
        if want is None and got is not None:
            raise StepFailure("mismatch", f"key {name} exists ({got['type']}), expected no such key")
        if want is not None and got is None:
            raise StepFailure("mismatch", f"key {name} does not exist")
        if isinstance(want, dict):
            assert got is not None
            for part, value in want.items():
                problem = difference(value, within_slack({part: value}, got, ttl_slack_ms(ctx))[part])
                if problem:
                    raise StepFailure("mismatch", f"key {name} {part} {problem}")
    if only:
        extra = sorted(set(actual) - {name for name, want in expected.items() if want is not None})
        if extra:
            raise StepFailure("mismatch", f"unexpected keys under {ctx.ns}: {', '.join(extra)}")


VERBS: dict[str, Verb] = {
    "call": _call,
    "await": _await,
    "wait_blocked": _wait_blocked,
    "close": _close,
    "reset": _close,
    "redis": _redis,
    "advance_time_ms": _advance,
    "rewind_time_ms": _rewind,
    "fault": _fault,
    "check": _check,
}


def verb_of(step: dict[str, Any]) -> str:
    return next(verb for verb in VERBS if verb in step)


def _check_wire(ctx: CaseContext, trace: Trace) -> None:
    """Check the case's trace: the subject's sessions are checked, the reference's only followed."""
    parties = {}
    for name, session in ctx.sessions.items():
        impl = hosting_impl(session.spec.impl)
        shards = session.shards
        parties[session.client_name] = Party(
            f"session {name!r} ({impl})",
            (session.prefix + ("" if shards else ":")).encode(),
            checked=impl == SUBJECT,
            shards=shards,
            declared=session.declared,
        )
    one_script, silent = {}, {}
    for position, step in enumerate(ctx.case.steps, 1):
        quiet = step.get("sends_nothing") or position in ctx.invalid_steps
        if quiet and hosting_impl(ctx.sessions[step["session"]].spec.impl) == SUBJECT:
            silent[position] = ctx.sessions[step["session"]].client_name
        one = ONE_SCRIPT.get(step.get("call", ""))
        # A sharded queue's operation is a call per shard (RWQ-SHARD-005 chooses the composite by
        # the rotation, which starts at random), so it is not one script call.
        sharded = "session" in step and ctx.sessions[step["session"]].shards
        if one and not sharded and "async" not in step and "error" not in step.get("expect", {}):
            session = ctx.sessions[step["session"]]
            if hosting_impl(session.spec.impl) == SUBJECT:
                one_script[position] = (session.client_name, *one)
    violations = trace.check(parties, one_script, silent, frozenset(ctx.pool.finished_sessions))
    if violations:
        more = f" (and {len(violations) - 1} more wire violations)" if len(violations) > 1 else ""
        raise WireFailure(violations[0].step, violations[0].message + more)


def _check_strays(strays: OtherNodesTrace) -> None:
    """On a cluster: nothing about the case's queue reached a node that does not serve its slot."""
    found = strays.strays()
    if found:
        step, what = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise WireFailure(
            step,
            f"a session sent {what}, a node that does not serve the queue's slot: a client sends "
            f"every command about its queue to the node of the slot (RWQ-CLUSTER-002){more}",
        )


def run_case(case: Case, env: RedisEnvironment, pool: AdapterPool) -> CaseRun:
    """Execute ``case`` in a fresh namespace; every failure becomes part of the returned CaseRun.

    With wire checks on (a managed Redis), the case is traced with MONITOR and a case whose
    steps all held still fails when the trace breaks a wire rule."""
    started = time.monotonic()
    ctx = CaseContext(case, env, pool)
    pool.observer = ctx.record
    index: int | None = None
    verb: str | None = None
    failure: Failure | None = None
    trace: Trace | None = None
    strays: OtherNodesTrace | None = None
    try:
        if env.wire_checks:
            trace = Trace(env, namespace=ctx.ns, timeout_s=ctx.request_s)
            if env.cluster:
                others = [node for node in env.nodes if node != env.node]
                strays = OtherNodesTrace(others, ctx.ns, ctx.request_s)
        ctx.open_all()
        for position, step in enumerate(case.steps, 1):
            index, verb = position, verb_of(step)
            ctx.position = position
            if trace is not None:
                trace.mark(position)
            if strays is not None:
                strays.mark(position)
            VERBS[verb](ctx, step)
        if strays is not None:
            _check_strays(strays)
        if trace is not None:
            _check_wire(ctx, trace)
    except WireFailure as exc:
        at = case.steps[exc.step - 1] if exc.step else None
        failure = Failure(exc.step or None, verb_of(at) if at else None, exc.kind, str(exc))
    except StepFailure as exc:
        failure = Failure(index, verb, exc.kind, str(exc))
    except WireError as exc:
        failure = Failure(index, verb, "redis", f"the runner's MONITOR trace failed: {exc}")
    except TemplateError as exc:
        failure = Failure(index, verb, CASE_ERROR, str(exc))
    except AdapterFailure as exc:
        where = f"step {index} ({step_label(case.steps[index - 1])})" if index else "opening the sessions"
        failure = Failure(index, verb, exc.kind, f"{where}: {exc}")
    except RedisError as exc:
        failure = Failure(
            index, verb, "redis", f"the runner's Redis command failed: {type(exc).__name__}: {exc}"
        )
    finally:
        if trace is not None:
            trace.close()
        if strays is not None:
            strays.close()
        ctx.close()
        pool.observer = None
    run = CaseRun(
        "pass" if failure is None else STATUS_BY_KIND[failure.kind], int((time.monotonic() - started) * 1000)
    )
    if failure is not None:
        run.failure = failure
        run.stderr = ctx.stderr()
        run.transcript = list(ctx.transcript)
    return run
