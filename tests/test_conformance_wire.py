"""Wire checks (``rwq.conformance.wire``): parsing MONITOR lines, the rules on synthetic traces,
and a wire failure reported by a real run."""

from __future__ import annotations

import io
import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from rwq.conformance.environment import raw_client
from rwq.conformance.redis_server import RedisServer
from rwq.conformance.runner import EXIT_CONFORMS, EXIT_NONCONFORMANT, RunConfig, run
from rwq.conformance.wire import Checker, CommandTable, Party, Seen, Violation, parse_line
from rwq.protocol import declared
from rwq.protocol.scripts import registry

NS = "rwqc:{0123456789ab}"
P = NS.encode() + b":"
MARKER = b"rwqc-wire:" + NS.encode() + b":"
SUBJECT, REFERENCE, RUNNER, ANONYMOUS = "127.0.0.1:1001", "127.0.0.1:1002", "127.0.0.1:1003", "127.0.0.1:1004"
ADD = registry()["add"]
ALL_CACHED = frozenset(script.sha1 for script in registry().values())


@pytest.fixture(scope="module")
def table(redis_server: RedisServer) -> CommandTable:
    client = raw_client(redis_server.url)
    version = client.execute_command("INFO", "server").decode().split("redis_version:")[1].split()[0]
    return CommandTable(client, version)


def feed(
    table: CommandTable,
    lines: list[Seen],
    cached: frozenset[str] = ALL_CACHED,
    finished: frozenset[str] = frozenset(),
) -> list[Violation]:
    parties = {
        "rwqc-0123-s": Party("session 's' (subject)", P, checked=True),
        "rwqc-0123-r": Party("session 'r' (reference)", P, checked=False),
    }
    names = {SUBJECT: "rwqc-0123-s", REFERENCE: "rwqc-0123-r", RUNNER: "rwqc-runner"}
    checker = Checker(
        parties, namespace=NS, cached=set(cached), names=names, table=table, marker=MARKER, finished=finished
    )
    for line in lines:
        checker.feed(line)
    return checker.finish()


def cmd(client: str, *args: str | bytes) -> Seen:
    return Seen(client, tuple(arg if isinstance(arg, bytes) else arg.encode() for arg in args))


def evalsha(client: str, *keys: bytes) -> Seen:
    return cmd(client, "EVALSHA", ADD.sha1, str(len(keys)), *keys, "0", "a", "A")


def messages(violations: list[Violation]) -> str:
    return "\n".join(v.message for v in violations)


# -- parsing -------------------------------------------------------------------------------------


def test_parse_monitor_lines() -> None:
    line = b'+1795336617.973936 [0 127.0.0.1:58108] "EVALSHA" "504f" "1" "k\\x00\\xc3\\xbf" "v"\r\n'
    assert parse_line(line) == Seen("127.0.0.1:58108", (b"EVALSHA", b"504f", b"1", b"k\x00\xc3\xbf", b"v"))
    assert parse_line(b'+1.5 [0 lua] "GET" "x\\n\\"y\\\\" ""\r\n') == Seen("lua", (b"GET", b'x\n"y\\', b""))
    assert parse_line(b"+OK\r\n") is None
    assert parse_line(b'+1.5 [0 lua] "GET" "unterminated\r\n') is None


# -- rules on synthetic traces -------------------------------------------------------------------


def test_a_conforming_session_passes(table: CommandTable) -> None:
    lines = [
        cmd("127.0.0.1:2000", "HELLO", "3"),
        cmd("127.0.0.1:2000", "CLIENT", "SETNAME", "rwqc-0123-s"),
        cmd("127.0.0.1:2000", "INFO", "server"),
        cmd("127.0.0.1:2000", "INFO", "memory"),
        evalsha("127.0.0.1:2000", P + b"queue"),
        cmd("lua", "SET", P + b"item:a", "A"),
        cmd("lua", "LPUSH", P + b"queue", "a"),
        cmd("127.0.0.1:2000", "BLMOVE", P + b"queue", P + b"processing", "RIGHT", "LEFT", "0.25"),
        cmd("127.0.0.1:2000", "SCAN", "0", "MATCH", P + b"item:*", "COUNT", "1000"),
        cmd("127.0.0.1:2000", "HGETALL", P + b"policy"),
        cmd(RUNNER, "LPUSH", "elsewhere", "x"),
        cmd(REFERENCE, "LPUSH", "elsewhere", "x"),
    ]
    assert feed(table, lines) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (cmd(SUBJECT, "LPUSH", P + b"queue", "a"), "LPUSH"),
        (cmd(SUBJECT, "SCRIPT", "FLUSH"), "SCRIPT FLUSH"),
        (cmd(SUBJECT, "KEYS", P + b"item:*"), "RWQ-DEEP-004"),
        (cmd(SUBJECT, "CONFIG", "GET", "maxmemory-policy"), "RWQ-SERVER-004"),
        (cmd(SUBJECT, "GET", P + b"lease:a"), "RWQ-SCRIPT-006"),
        (cmd(SUBJECT, "HGETALL", P + b"item:a"), "RWQ-SCRIPT-006"),
        (evalsha(SUBJECT, b"other:queue"), "RWQ-KEYS-006"),
        (cmd(SUBJECT, "SCAN", "0", "COUNT", "10"), "SCAN must MATCH"),
        (cmd(SUBJECT, "EVALSHA", "0" * 40, "0"), "not canonical"),
        (cmd(SUBJECT, "SCRIPT", "LOAD", "return 1"), "not canonical"),
        (cmd(SUBJECT, "EVAL", ADD.source, "1", P + b"queue", "0", "a", "A"), "without an EVALSHA"),
        (cmd(SUBJECT, "BLMOVE", P + b"queue", P + b"processing", "LEFT", "LEFT", "1"), "RWQ-LEASE-008"),
        (cmd(SUBJECT, "BLMOVE", P + b"queue", P + b"processing", "RIGHT", "LEFT", "0"), "RWQ-LEASE-012"),
        (cmd(SUBJECT, "BLMOVE", P + b"queue", P + b"processing", "RIGHT", "LEFT", "5"), "RWQ-LEASE-012"),
        (cmd(ANONYMOUS, "SET", P + b"x", "1"), "never set a name"),
        (cmd("127.0.0.1:3000", "CLIENT", "SETNAME", "rwqc-other-w1"), ""),
    ],
    ids=[
        "plain-write",
        "script-flush",
        "keys",
        "config-get",
        "read-in-the-client",
        "hgetall-not-policy",
        "script-keys-outside",
        "scan-everything",
        "foreign-evalsha",
        "foreign-script-load",
        "eval-first",
        "blmove-left",
        "blmove-forever",
        "blmove-long",
        "unnamed-connection",
        "naming-is-fine",
    ],
)
def test_each_rule(table: CommandTable, line: Seen, expected: str) -> None:
    found = feed(table, [line])
    if expected:
        assert len(found) == 1
        assert expected in found[0].message
        assert found[0].message.startswith(("session 's' (subject)", "connection"))
    else:
        assert found == []


def test_keys_the_scripts_touch_are_checked(table: CommandTable) -> None:
    found = feed(table, [evalsha(SUBJECT, P + b"queue"), cmd("lua", "SET", "rwq:stats", "1")])
    assert "its script ran SET rwq:stats 1, which touches key rwq:stats" in messages(found)
    assert feed(table, [evalsha(REFERENCE, P + b"queue"), cmd("lua", "SET", "rwq:stats", "1")]) == []


def test_connections_are_attributed_by_name(table: CommandTable) -> None:
    renamed = [
        cmd("127.0.0.1:3000", "HELLO", "3", "SETNAME", "rwqc-0123-s"),
        cmd("127.0.0.1:3000", "DEL", "x"),
    ]
    assert messages(feed(table, renamed)).startswith("session 's' (subject) sent DEL x")
    foreign = [cmd("127.0.0.1:3000", "CLIENT", "SETNAME", "rwqc-9999-w1"), cmd("127.0.0.1:3000", "DEL", "x")]
    assert "named 'rwqc-9999-w1', no session of this case" in messages(feed(table, foreign))
    # a session of an earlier case of the run, whose process still exits in the background
    assert feed(table, foreign, finished=frozenset({"rwqc-9999-w1"})) == []


def test_noscript_is_retried_with_eval_or_script_load(table: CommandTable) -> None:
    eval_add = cmd(SUBJECT, "EVAL", ADD.source, "1", P + b"queue", "0", "a", "A")
    load_add = cmd(SUBJECT, "SCRIPT", "LOAD", ADD.source)
    retried = [
        cmd(RUNNER, "SCRIPT", "FLUSH"),
        evalsha(SUBJECT, P + b"queue"),
        eval_add,
        evalsha(SUBJECT, P + b"queue"),
    ]
    assert feed(table, retried) == []
    loaded = [
        cmd(RUNNER, "SCRIPT", "FLUSH"),
        evalsha(SUBJECT, P + b"queue"),
        load_add,
        evalsha(SUBJECT, P + b"queue"),
    ]
    assert feed(table, loaded) == []
    # The reference client reloads the script between the subject's EVALSHA and its retry.
    raced = [evalsha(SUBJECT, P + b"queue"), cmd(REFERENCE, "EVAL", ADD.source, "0"), eval_add]
    assert feed(table, raced, cached=frozenset()) == []
    # Once the retry has reloaded the script, EVAL again is not a retry.
    assert "without an EVALSHA" in messages(feed(table, [*retried, eval_add]))


def test_noscript_not_retried_is_reported_at_its_step(table: CommandTable) -> None:
    lines = [
        cmd(RUNNER, "ECHO", MARKER + b"3"),
        cmd(RUNNER, "SCRIPT", "FLUSH"),
        cmd(RUNNER, "ECHO", MARKER + b"4"),
    ]
    lines.append(evalsha(SUBJECT, P + b"queue"))
    assert [(v.step, v.message) for v in feed(table, lines)] == [
        (
            4,
            "session 's' (subject) got NOSCRIPT for script 'add' and did not retry with EVAL or "
            "SCRIPT LOAD (RWQ-SCRIPT-002)",
        )
    ]


def test_a_sends_nothing_step_allows_handshakes_only(table: CommandTable) -> None:
    names = {SUBJECT: "rwqc-0123-s", REFERENCE: "rwqc-0123-r", RUNNER: "rwqc-runner"}
    parties = {
        "rwqc-0123-s": Party("session 's' (subject)", P, checked=True),
        "rwqc-0123-r": Party("session 'r' (reference)", P, checked=False),
    }
    checker = Checker(
        parties,
        namespace=NS,
        cached=set(ALL_CACHED),
        names=names,
        table=table,
        marker=MARKER,
        silent={4: "rwqc-0123-s", 5: "rwqc-0123-r"},
    )
    lines = [
        cmd(RUNNER, "ECHO", MARKER + b"4"),
        cmd(SUBJECT, "HELLO", "3"),
        cmd(SUBJECT, "CLIENT", "SETNAME", "rwqc-0123-s"),
        evalsha(REFERENCE, P + b"queue"),
        cmd(SUBJECT, "INFO", "server"),
        cmd(RUNNER, "ECHO", MARKER + b"5"),
        evalsha(SUBJECT, P + b"queue"),
        evalsha(REFERENCE, P + b"queue"),
    ]
    for line in lines:
        checker.feed(line)
    assert [(v.step, v.message) for v in checker.finish()] == [
        (
            4,
            "session 's' (subject) sent INFO server in a step that must send nothing: an invalid call "
            "is refused with INVALID_ARGUMENT before any I/O (RWQ-ERR-002)",
        )
    ]


# -- real runs -----------------------------------------------------------------------------------


def scratch_variant(tmp_path: Path) -> str:
    """The reference adapter, plus a harmless plain write (DEL of a key that never exists) per counts."""
    path = tmp_path / "scratch.py"
    path.write_text(
        textwrap.dedent(
            """
            from rwq.conformance import reference_adapter as ra


            class Variant(ra.Adapter):
                def call(self, args):
                    if args["method"] == "counts":
                        queue = self.sessions[args["session"]][1]
                        queue._redis.delete(queue.prefix + ":scratch")
                    return super().call(args)


            ra.Adapter = Variant
            ra.main()
            """
        )
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def conformance(tmp_path: Path, adapter: str, **options: Any) -> tuple[int, dict[str, Any]]:
    out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}"
    config = RunConfig(adapter=adapter, out=out, console=Console(file=io.StringIO()), **options)
    code = run(config)
    return code, json.loads((out / "report.json").read_text())


def test_a_plain_write_fails_the_case_at_its_step(tmp_path: Path) -> None:
    code, report = conformance(tmp_path, scratch_variant(tmp_path), pattern="counts/values/empty-queue")
    assert code == EXIT_NONCONFORMANT
    assert report["environment"]["wire_checks"] is True
    (record,) = report["cases"]
    assert record["status"] == "fail"
    failure = record["failure"]
    assert (failure["step"], failure["verb"], failure["kind"]) == (1, "call", "wire")
    assert failure["message"].startswith("session 'p' (subject) sent DEL rwqc:{")
    assert "RWQ-SCRIPT-001" in failure["message"]


def test_external_redis_is_not_traced(tmp_path: Path, redis_server: RedisServer) -> None:
    options = {"pattern": "counts/values/empty-queue", "redis_url": redis_server.url}
    code, report = conformance(tmp_path, scratch_variant(tmp_path), **options)
    assert code == EXIT_CONFORMS
    assert report["environment"]["wire_checks"] is False


def declared_feed(
    table: CommandTable, lines: list[Seen], queued: list[bytes] | None = None
) -> list[Violation]:
    """The violations of a declared session's ``lines``, after the runner queued ``queued`` (by
    default every id the lines' triples name, so that a window could hold them)."""
    if queued is None:
        queued = [
            arg[len(P + b"item:") :] for line in lines for arg in line.args if arg.startswith(P + b"item:")
        ]
    lines = [cmd(RUNNER, "LPUSH", P + b"queue", *queued), *lines] if queued else lines
    parties = {"rwqc-0123-s": Party("session 's' (subject)", P, checked=True, declared=True)}
    names = {SUBJECT: "rwqc-0123-s", RUNNER: "rwqc-runner"}
    checker = Checker(parties, namespace=NS, cached=set(ALL_CACHED), names=names, table=table, marker=MARKER)
    for line in lines:
        checker.feed(line)
    return checker.finish()


def declared_lease(count: int, ids: list[bytes]) -> Seen:
    """A declared EVALSHA of lease: its DECLARED keys, then a triple per id."""
    lease = registry()["lease"]
    names = [P + name for name in declared.declared_names(lease)]
    triples = [P + kind + item for item in ids for kind in (b"item:", b"lease:", b"leased_by_session:")]
    keys = [P + b"queue", P + b"processing", *names, *triples]
    return cmd(SUBJECT, "EVALSHA", lease.sha1, str(len(keys)), *keys, "1000", "tok", str(count), "0", "0")


def test_declared_sessions_touch_only_the_keys_they_pass(table: CommandTable) -> None:
    """RWQ-DECL-001: with the profile on, a key a script touches must be in the call's KEYS."""
    assert declared_feed(table, [declared_lease(1, [b"a"]), cmd("lua", "GET", P + b"item:a")]) == []
    found = declared_feed(table, [declared_lease(1, [b"a"]), cmd("lua", "GET", P + b"item:b")])
    assert "RWQ-DECL-001" in messages(found)
    assert feed(table, [evalsha(SUBJECT, P + b"queue"), cmd("lua", "GET", P + b"item:b")]) == []


def test_declared_calls_declare_no_more_than_their_last_window_holds(table: CommandTable) -> None:
    """RWQ-DECL-003: a lease of 1 declares at most 1 + 164 ids, unless the lease before asked for more."""
    ids = [b"i%d" % n for n in range(200)]
    assert "RWQ-DECL-003" in messages(declared_feed(table, [declared_lease(1, ids)]))
    assert declared_feed(table, [declared_lease(1, ids[:165])]) == []
    assert declared_feed(table, [declared_lease(100, ids[:10]), declared_lease(1, ids)]) == []
    found = declared_feed(
        table, [declared_lease(100, ids[:10]), declared_lease(1, ids), declared_lease(1, ids)]
    )
    assert "RWQ-DECL-003" in messages(found)


def test_declared_calls_declare_only_ids_a_window_can_hold(table: CommandTable) -> None:
    """RWQ-DECL-003: a declared id the call does not name was in a key or list of the queue before
    (pushed by anyone, or the key of an item a script set): an argument declared as an id is not."""
    one = [declared_lease(1, [b"a", b"b"])]
    assert declared_feed(table, one, queued=[b"a", b"b"]) == []
    assert "id b, which the call does not name" in messages(declared_feed(table, one, queued=[b"a"]))
    assert declared_feed(table, [cmd("lua", "SET", P + b"item:b", "B"), *one], queued=[b"a"]) == []
    assert declared_feed(table, [cmd("lua", "ZADD", P + b"delayed", "5", "b"), *one], queued=[b"a"]) == []
    assert "RWQ-DECL-003" in messages(
        declared_feed(table, [*one, cmd("lua", "LPUSH", P + b"queue", "b")], queued=[b"a"])
    )
