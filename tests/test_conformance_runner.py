"""The conformance runner: the shipped cases pass against the reference adapter, and broken
adapters, known-failure files and bad invocations get the right reports and exit codes."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from rich.console import Console

from rwq.conformance import data, redis_server
from rwq.conformance.adapter import Timeouts
from rwq.conformance.cases import load_cases, matches
from rwq.conformance.environment import raw_client
from rwq.conformance.execution import within_slack
from rwq.conformance.pool import AdapterPool, expand
from rwq.conformance.redis_server import FAKETIME_ENV, Faketime, RedisServer, find_faketime
from rwq.conformance.report import MAX_LISTED, Terminal, markdown_summary, summarise
from rwq.conformance.runner import (
    EXIT_ADAPTER_BROKEN,
    EXIT_CONFORMS,
    EXIT_NONCONFORMANT,
    EXIT_NOTHING_RAN,
    RunConfig,
    run,
)
from rwq.conformance.workload import Workload, WorkloadConfig
from rwq.console import EXIT_USAGE

# A whole run of the suite (over 540 cases) takes about a minute on 2 quiet cores, more on a busy
# machine: more than the default per-test timeout of pyproject.toml.
WHOLE_SUITE = pytest.mark.timeout(600)

REFERENCE = f"{shlex.quote(sys.executable)} -m rwq.conformance.reference_adapter"
CLOSING = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped$")


class Outcome:
    """One in-process run: exit code, report.json, events and the terminal text."""

    def __init__(self, code: int, out: Path, text: str) -> None:
        self.code = code
        self.text = text
        self.report: dict[str, Any] = json.loads((out / "report.json").read_text())
        self.events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
        assert not data.schema_errors("conformance-report", self.report)

    def status(self, case_id: str) -> str:
        return str(next(c["status"] for c in self.report["cases"] if c["id"] == case_id))

    def case(self, case_id: str) -> dict[str, Any]:
        return next(c for c in self.report["cases"] if c["id"] == case_id)

    @property
    def closing(self) -> tuple[int, int, int]:
        match = CLOSING.match(self.text.rstrip("\n").splitlines()[-1])
        assert match, self.text[-500:]
        return int(match[1]), int(match[2]), int(match[3])


def selected(pattern: str) -> int:
    """How many shipped cases (interop permutations counted) ``-k pattern`` selects."""
    return sum(matches(case, pattern) for case in expand(load_cases(data.cases_dir())))


def conformance(tmp_path: Path, adapter: str = REFERENCE, **options: Any) -> Outcome:
    """One in-process run; one case at a time unless ``jobs`` says otherwise (None: the CPU count)."""
    options.setdefault("jobs", 1)
    out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}"
    buffer = io.StringIO()
    config = RunConfig(adapter=adapter, out=out, console=Console(file=buffer, width=200), **options)
    code = run(config)
    return Outcome(code, out, buffer.getvalue())


def adapter_script(tmp_path: Path, name: str, body: str) -> str:
    """A throwaway adapter program; its command line for --adapter."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def reference_variant(tmp_path: Path, name: str, methods: str) -> str:
    """The reference adapter with some Adapter methods overridden (a deliberately wrong port)."""
    head = "import os, sys\nfrom rwq.conformance import reference_adapter as ra\n\n\n"
    head += "class Variant(ra.Adapter):\n"
    tail = "\n\nra.Adapter = Variant\nra.main()\n"
    body = head + textwrap.indent(textwrap.dedent(methods), "    ") + tail
    return adapter_script(tmp_path, name, body)


# -- the reference run ---------------------------------------------------------------------------


# An adapter whose complete always reports true: it fails complete/first-completer/*.
ALWAYS_FIRST = """
def call(self, args):
    result = super().call(args)
    return True if args["method"] == "complete" else result
"""


@WHOLE_SUITE
def test_reference_adapter_passes_every_case(reference_run: tuple[int, Path, str]) -> None:
    """The whole suite, the workload included (the run the coverage tests read too)."""
    outcome = Outcome(*reference_run)
    cluster_only = {c.id for c in expand(load_cases(data.cases_dir())) if "cluster" in c.needs}
    failed = {
        c["id"]: c["failure"] or c["note"]
        for c in outcome.report["cases"]
        if c["status"] != "pass" and c["id"] not in cluster_only
    }
    assert failed == {}
    assert outcome.code == EXIT_CONFORMS
    total = len(expand(load_cases(data.cases_dir()))) + 1  # and workload/faults
    assert outcome.status("workload/faults") == "pass"
    assert outcome.closing == (total - len(cluster_only), 0, len(cluster_only))
    assert outcome.report["verdict"] == "conforms"
    assert outcome.report["scripts_check"] == {"ok": True, "problems": []}
    assert outcome.report["implementation"]["language"] == "python"
    assert outcome.report["environment"]["clock"] == "frozen"
    verdicts = outcome.report["requirements"].values()
    assert all(v["verdict"] == "pass" for v in verdicts if not set(v["cases"]) <= cluster_only)
    names = [event["event"] for event in outcome.events]
    assert names[:2] == ["run_started", "adapter_ready"]
    assert names.count("case_finished") == total
    assert names[-1] == "run_finished"


@WHOLE_SUITE
def test_reference_adapter_passes_every_case_with_declared_keys(tmp_path: Path) -> None:
    """``--declared-keys`` (SPEC §20): every case again, each subject session with the profile on
    and every script call checked against its KEYS; cases that count on one script call doing
    what a cold window splits (capability undeclared-keys) do not apply."""
    outcome = conformance(tmp_path, declared_keys=True, jobs=None)
    cases = expand(load_cases(data.cases_dir()))
    skipped = {c.id for c in cases if "cluster" in c.needs or "undeclared-keys" in c.needs}
    failed = {
        c["id"]: c["failure"]
        for c in outcome.report["cases"]
        if c["status"] not in ("pass", "not-applicable")
    }
    assert failed == {}
    assert {c["id"] for c in outcome.report["cases"] if c["status"] != "pass"} == skipped
    assert len(skipped) >= 5
    assert outcome.code == EXIT_CONFORMS
    assert "declared-keys" in outcome.report["claimed_profiles"]


@pytest.mark.parametrize("pattern", ["property/", "workload/"])
def test_declared_keys_runs_the_generated_programs_declared(tmp_path: Path, pattern: str) -> None:
    """The property programs and the workload run with the profile on too: a port that reads a
    lease reply with its window still in it passes them without ``--declared-keys`` (the window
    is only sent when declaring) and fails them with it."""
    mutant = Path(__file__).parents[1] / "conformance" / "mutants" / "decl_window_left_in_reply.py"
    wrong = f"{shlex.quote(sys.executable)} {shlex.quote(str(mutant))}"
    options: dict[str, Any] = {"pattern": pattern, "property_examples": 5, "workload": True, "seed": 7}
    assert conformance(tmp_path, declared_keys=True, **options).code == EXIT_CONFORMS
    assert conformance(tmp_path, adapter=wrong, **options).code == EXIT_CONFORMS
    failed = conformance(tmp_path, adapter=wrong, declared_keys=True, **options)
    assert failed.code == EXIT_NONCONFORMANT
    assert failed.report["declared_keys"] is True
    assert f"--declared-keys -k {pattern.rstrip('/')}" in " ".join(failed.text.split())  # the rerun line
    regressions = list(tmp_path.glob("out-*/regressions/*.json"))
    assert len(regressions) == (pattern == "property/")
    for path in regressions:  # a property counterexample replays declared
        case = json.loads(path.read_text())["cases"][0]
        assert case["profiles"] == ["core", "declared-keys"]
        assert all(session["options"]["declared_keys"] for session in case["sessions"].values())


def test_declared_keys_needs_an_adapter_that_declares_the_profile(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "no_declared_keys",
        """
        def hello(self, args):
            hello = super().hello(args)
            return {**hello, "profiles": [p for p in hello["profiles"] if p != "declared-keys"]}
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, declared_keys=True, pattern="counts/")
    assert outcome.code == EXIT_USAGE
    assert "declares profile declared-keys" in outcome.text


def test_external_redis_uses_state_surgery_and_touches_only_its_namespaces(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    client = redis_server.client()
    client.set("someone-else", "keep", px=600_000)
    started = time.monotonic()
    outcome = conformance(tmp_path, redis_url=redis_server.url, pattern="clean/**")
    elapsed_ms = (time.monotonic() - started) * 1000
    assert outcome.code == EXIT_CONFORMS
    assert outcome.report["environment"]["clock"] == "surgery"
    assert outcome.status("clean/light/requeues-expired-lease@subject,subject,subject") == "pass"
    boundary = outcome.case("clean/light/expiry-boundary")
    assert (boundary["status"], boundary["note"]) == (
        "not-applicable",
        "environment lacks: frozen-clock (an external Redis: the runner cannot freeze its clock)",
    )
    assert client.keys("rwqc:*") == []
    assert client.get("someone-else") == b"keep"
    assert 600_000 - elapsed_ms - 1000 < client.pttl("someone-else") <= 600_000  # only time ran it down
    client.delete("someone-else")


def test_cli_end_to_end(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rwq.cli",
            "conformance",
            "--adapter",
            REFERENCE,
            "-k",
            "lease/fifo",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == EXIT_CONFORMS, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"{selected('lease/fifo')} passed, 0 failed, 0 skipped"


@pytest.mark.parametrize(
    "argv",
    [
        ["conformance"],
        ["conformance", "--adapter", "x", "--bogus"],
        ["conformance", "--adapter", REFERENCE, "-k", "no/such/case"],
    ],
)
def test_cli_usage_errors_exit_3(argv: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rwq.cli", *argv, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr


def test_undeclared_profile_is_a_usage_error(tmp_path: Path) -> None:
    outcome = conformance(tmp_path, profiles=("core", "sharding"), pattern="counts/")
    assert outcome.code == EXIT_USAGE
    assert "sharding" in outcome.report["aborted"]


def test_nothing_applicable_exits_4(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "no-core",
        """
        def hello(self, args):
            reply = super().hello(args)
            reply["profiles"] = ["delay"]
            return reply
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="counts/")
    assert outcome.code == EXIT_NOTHING_RAN
    assert outcome.closing == (0, 0, selected("counts/"))
    assert {c["status"] for c in outcome.report["cases"]} == {"not-applicable"}


# -- broken adapters -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "body", "expected"),
    [
        ("crash-on-hello", "import sys\nsys.stdin.readline()\nsys.exit(3)\n", "exit code 3"),
        ("garbage", "import sys\nsys.stdin.readline()\nprint('hello, world', flush=True)\n", "not JSON"),
        ("hang", "import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n", "none came"),
        (
            "wrong-id",
            'import sys\nsys.stdin.readline()\nprint(\'{"v":1,"id":99,"ok":{}}\', flush=True)\n'
            "sys.stdin.readline()\n",
            "id 99",
        ),
        ("missing", "", "exit code 0"),
    ],
    ids=["crash-on-hello", "garbage", "hang", "wrong-id", "missing"],
)
def test_broken_handshake_exits_2(tmp_path: Path, name: str, body: str, expected: str) -> None:
    outcome = conformance(tmp_path, adapter=adapter_script(tmp_path, name, body), timeout_multiplier=0.05)
    assert outcome.code == EXIT_ADAPTER_BROKEN
    assert outcome.report["verdict"] == "adapter-broken"
    assert expected in outcome.report["aborted"]
    assert outcome.report["cases"] == []
    assert outcome.closing == (0, 0, 0)


def test_unstartable_adapter_exits_2(tmp_path: Path) -> None:
    outcome = conformance(tmp_path, adapter=str(tmp_path / "does-not-exist"))
    assert outcome.code == EXIT_ADAPTER_BROKEN
    assert "cannot start adapter" in outcome.report["aborted"]


def test_wrong_results_fail_the_case(tmp_path: Path) -> None:
    adapter = reference_variant(tmp_path, "always-first", ALWAYS_FIRST)
    outcome = conformance(tmp_path, adapter=adapter, pattern="complete/first-completer/*")
    assert outcome.code == EXIT_NONCONFORMANT
    failure = outcome.case("complete/first-completer/only-first-gets-true@subject,subject,subject")["failure"]
    assert failure["kind"] == "mismatch"
    assert (failure["step"], failure["verb"]) == (4, "call")
    assert "expected false, got true" in failure["message"]
    assert outcome.report["requirements"]["RWQ-COMPLETE-002"]["verdict"] == "fail"


def test_wrong_state_fails_the_check(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "leaks-lease",
        """
        def call(self, args):
            result = super().call(args)
            if args["method"] == "complete":
                queue = self.sessions[args["session"]][1]
                queue._redis.set(queue.keys.lease(ra._id(args["params"]["lease"]["id"])), b"x")
            return result
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="complete/effects/removes-every-key")
    failure = outcome.case("complete/effects/removes-every-key")["failure"]
    assert outcome.code == EXIT_NONCONFORMANT
    assert "unexpected keys" in failure["message"]
    assert ":lease:a" in failure["message"]


def test_crash_mid_run_is_reported_and_the_adapter_restarted(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "dies-on-deep-clean",
        """
        def call(self, args):
            if args["method"] == "deep_clean":
                print("about to die", file=sys.stderr, flush=True)
                os._exit(7)
            return super().call(args)
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="clean/deep/requeues-orphan")
    record = outcome.case("clean/deep/requeues-orphan")
    assert outcome.code == EXIT_NONCONFORMANT
    assert record["status"] == "crash"
    assert "exit code 7" in record["failure"]["message"]
    assert any("about to die" in line for lines in record["stderr"].values() for line in lines)
    assert record["transcript"][-1]["direction"] == "sent"

    outcome = conformance(tmp_path, adapter=adapter, pattern="clean/**")
    assert outcome.code == EXIT_ADAPTER_BROKEN
    assert outcome.status("clean/light/requeues-expired-lease@subject,subject,subject") == "pass"
    assert "in a row" in outcome.report["aborted"]
    assert [event["event"] for event in outcome.events].count("adapter_restarted") == 2


def test_hang_mid_call_times_out(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "hangs-on-counts",
        """
        def call(self, args):
            if args["method"] == "counts":
                import time
                time.sleep(60)
            return super().call(args)
        """,
    )
    outcome = conformance(
        tmp_path, adapter=adapter, pattern="counts/values/empty-queue", timeout_multiplier=0.1
    )
    assert outcome.status("counts/values/empty-queue") == "timeout"
    assert outcome.code == EXIT_NONCONFORMANT


def test_stray_stdout_is_a_protocol_violation(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "chatty",
        """
        def call(self, args):
            if args["method"] == "counts":
                sys.__stdout__.write("debug: counting\\n")
                sys.__stdout__.flush()
            return super().call(args)
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="counts/values/empty-queue")
    record = outcome.case("counts/values/empty-queue")
    assert (record["status"], record["failure"]["kind"]) == ("error", "violation")
    assert "debug: counting" in record["failure"]["message"]


def test_result_shape_is_checked_against_the_protocol(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "bad-shape",
        """
        def call(self, args):
            result = super().call(args)
            return {"ready": 0} if args["method"] == "counts" else result
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="counts/values/empty-queue")
    failure = outcome.case("counts/values/empty-queue")["failure"]
    assert failure["kind"] == "violation"
    assert "queued" in failure["message"]


def test_unsupported_method_fails(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "no-counts",
        """
        def call(self, args):
            if args["method"] == "counts":
                raise ra.Unsupported("counts")
            return super().call(args)
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="counts/values/empty-queue")
    assert outcome.case("counts/values/empty-queue")["failure"]["kind"] == "unsupported"
    assert outcome.code == EXIT_NONCONFORMANT


def test_script_sha_mismatch_fails_every_case(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "old-scripts",
        """
        def hello(self, args):
            reply = super().hello(args)
            reply["scripts"]["lease"] = "0" * 40
            del reply["scripts"]["claim"]
            return reply
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="counts/")
    assert outcome.code == EXIT_NONCONFORMANT
    assert outcome.report["scripts_check"]["ok"] is False
    assert {c["failure"]["kind"] for c in outcome.report["cases"]} == {"scripts"}
    assert "lease: 0000" in outcome.case("counts/values/empty-queue")["failure"]["message"]
    assert outcome.closing == (0, selected("counts/"), 0)


# -- known failures ------------------------------------------------------------------------------


def known(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "known-failures.toml"
    path.write_text("format = 1\n" + textwrap.dedent(text))
    return path


def test_known_failure_that_passes_fails_the_run(tmp_path: Path) -> None:
    path = known(tmp_path, '[[fail]]\ncase = "counts/values/empty-queue"\nreason = "thought broken"\n')
    outcome = conformance(tmp_path, known_failures=path, pattern="counts/")
    assert outcome.status("counts/values/empty-queue") == "xpass"
    assert outcome.code == EXIT_NONCONFORMANT


def test_known_failure_entry_matching_nothing_fails_the_run(tmp_path: Path) -> None:
    path = known(tmp_path, '[[skip]]\ncase = "counts/no-such/case"\nreason = "typo"\n')
    outcome = conformance(tmp_path, known_failures=path, pattern="counts/")
    assert outcome.closing == (selected("counts/"), 0, 0)
    assert outcome.report["known_failures"]["unmatched"][0]["case"] == "counts/no-such/case"
    failure = ET.parse(tmp_path / "out-0" / "junit.xml").find("testsuite[@name='run']/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "[[skip]] counts/no-such/case matches no case"
    assert outcome.code == EXIT_NONCONFORMANT


def test_known_failures_xfail_and_skip_conform(tmp_path: Path) -> None:
    adapter = reference_variant(tmp_path, "always-first", ALWAYS_FIRST)
    path = known(
        tmp_path,
        """
        [[fail]]
        case = "complete/first-completer/*"
        reason = "complete always reports true"
        message = "expected false"

        [[skip]]
        case = "complete/unknown/**"
        reason = "not today"

        [[skip]]
        case = "complete/first-completer/after-redelivery@subject,ref,subject"
        reason = "the subject completes first in this permutation: it passes"
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, known_failures=path, pattern="complete/**")
    assert outcome.status("complete/first-completer/only-first-gets-true@subject,subject,subject") == "xfail"
    assert outcome.status("complete/unknown/unknown-id-false") == "skip"
    assert outcome.status("complete/require-lease/holder-succeeds") == "pass"
    assert outcome.code == EXIT_CONFORMS


def test_known_failure_with_other_message_stays_a_failure(tmp_path: Path) -> None:
    adapter = reference_variant(tmp_path, "always-first", ALWAYS_FIRST)
    path = known(
        tmp_path,
        '[[fail]]\ncase = "complete/first-completer/**"\nreason = "r"\nmessage = "something else"\n',
    )
    outcome = conformance(tmp_path, adapter=adapter, known_failures=path, pattern="complete/first-completer/")
    assert outcome.status("complete/first-completer/only-first-gets-true@subject,subject,subject") == "fail"
    assert outcome.code == EXIT_NONCONFORMANT


@pytest.mark.parametrize(
    "text",
    ['[[fail]]\ncase = "x/y"\n', "[[fail]\n", '[[fail]]\ncase = "BAD ID"\nreason = "r"\n'],
)
def test_invalid_known_failures_file_is_a_usage_error(tmp_path: Path, text: str) -> None:
    path = known(tmp_path, text)
    code = run(
        RunConfig(
            adapter=REFERENCE, out=tmp_path / "out", known_failures=path, console=Console(file=io.StringIO())
        )
    )
    assert code == EXIT_USAGE


# -- any Redis, any platform ---------------------------------------------------------------------


@WHOLE_SUITE
def test_reference_has_no_failure_on_an_external_unfrozen_redis(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Every case either passes on a running clock (TTL checks within the time the case took) or
    is skipped with its reason, counted in the summary: never a false failure."""
    outcome = conformance(tmp_path, redis_url=redis_server.url)
    statuses = {c["id"]: c["status"] for c in outcome.report["cases"]}
    assert set(statuses.values()) <= {"pass", "not-applicable"}, outcome.text[-3000:]
    assert outcome.code == EXIT_CONFORMS
    assert outcome.report["environment"]["clock"] == "surgery"
    # exact TTL checks that used to fail on a running clock
    assert statuses["complete-and-lease/effects/completes-then-leases-next@subject,subject"] == "pass"
    assert statuses["complete-and-lease/owner/lost-lease-reported-next-still-leased"] == "pass"
    frozen = [c for c in outcome.report["cases"] if "frozen-clock" in c["needs"]]
    assert frozen
    assert all(c["status"] == "not-applicable" for c in frozen)
    assert all("the runner cannot freeze its clock" in c["note"] for c in frozen)
    reasons = outcome.report["summary"]["skip_reasons"]
    assert sum(reasons.values()) == outcome.report["summary"]["skipped"] == outcome.closing[2]
    assert any("frozen-clock" in reason for reason in reasons)


def test_managed_redis_without_libfaketime_skips_frozen_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAKETIME_ENV, "none")
    outcome = conformance(tmp_path, pattern="complete-and-lease/")
    assert outcome.code == EXIT_CONFORMS, outcome.text[-3000:]
    environment = outcome.report["environment"]
    assert (environment["managed"], environment["clock"]) == (True, "surgery")
    assert environment["clock_note"] == f"{FAKETIME_ENV} disables the frozen clock"
    skipped = [c for c in outcome.report["cases"] if c["status"] != "pass"]
    assert skipped, "complete-and-lease has cases that need a frozen clock"
    for case in skipped:
        assert case["status"] == "not-applicable"
        assert case["note"] == f"environment lacks: frozen-clock ({FAKETIME_ENV} disables the frozen clock)"
    assert f"{FAKETIME_ENV} disables the frozen clock" in outcome.text


def test_ttl_checks_allow_only_what_a_running_clock_explains() -> None:
    expected = {"lease:a": {"pttl_ms": 30000, "type": "string"}, "list": [{"remaining_ms": 500}]}
    ran_down = {"lease:a": {"pttl_ms": 29990, "type": "string"}, "list": [{"remaining_ms": 499}]}
    assert within_slack(expected, ran_down, 10) == expected
    assert within_slack(expected, ran_down, 0) == ran_down  # frozen clock: exact
    too_low = {"lease:a": {"pttl_ms": 29989, "type": "string"}, "list": [{"remaining_ms": 500}]}
    assert within_slack(expected, too_low, 10)["lease:a"]["pttl_ms"] == 29989
    too_high = {"lease:a": {"pttl_ms": 30001, "type": "string"}, "list": [{"remaining_ms": 500}]}
    assert within_slack(expected, too_high, 10)["lease:a"]["pttl_ms"] == 30001
    no_ttl = {"lease:a": {"pttl_ms": -1, "type": "string"}, "list": [{"remaining_ms": None}]}
    assert within_slack({"lease:a": {"pttl_ms": -1}, "list": [{"remaining_ms": None}]}, no_ttl, 10) == no_ttl


TCMALLOC = "libtcmalloc_minimal.so.4"


def _touch(root: Path, relative: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    return path


@pytest.mark.parametrize(
    ("library", "tcmalloc"),
    [
        (
            "usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
            "usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
        ),
        (
            "usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
            "usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4",
        ),
        ("usr/lib64/faketime/libfaketime.so.1", "usr/lib64/libtcmalloc_minimal.so.4"),
        ("usr/lib/faketime/libfaketime.so.1", None),
    ],
    ids=["debian-amd64", "debian-arm64", "fedora", "alpine"],
)
def test_faketime_found_on_linux_paths(tmp_path: Path, library: str, tcmalloc: str | None) -> None:
    lib = _touch(tmp_path, library)
    malloc = _touch(tmp_path, tcmalloc) if tcmalloc else None
    found = find_faketime({}, tmp_path, probe=False)
    assert isinstance(found, Faketime), found
    assert found.library == lib
    assert found.preload == ((malloc, lib) if malloc else (lib,))
    assert found.environ() == {"LD_PRELOAD": ":".join(str(p) for p in found.preload)}


@pytest.mark.parametrize(
    "library",
    [
        "opt/homebrew/lib/faketime/libfaketime.1.dylib",
        "usr/local/lib/faketime/libfaketime.1.dylib",
        "opt/homebrew/Cellar/libfaketime/0.9.10/lib/faketime/libfaketime.1.dylib",
    ],
    ids=["homebrew-arm", "homebrew-intel", "homebrew-cellar"],
)
def test_faketime_found_on_macos(tmp_path: Path, library: str) -> None:
    lib = _touch(tmp_path, library)
    found = find_faketime({}, tmp_path, probe=False)
    assert isinstance(found, Faketime), found
    assert found.environ() == {"DYLD_INSERT_LIBRARIES": str(lib), "DYLD_FORCE_FLAT_NAMESPACE": "1"}


def test_faketime_override_and_absence(tmp_path: Path) -> None:
    usual = _touch(tmp_path, "usr/lib/faketime/libfaketime.so.1")
    mine = _touch(tmp_path, "opt/mine/libfaketime.so.1")
    found = find_faketime({FAKETIME_ENV: str(mine), "RWQ_LIBTCMALLOC": "none"}, tmp_path, probe=False)
    assert isinstance(found, Faketime)
    assert (found.library, found.preload, found.found_by) == (mine, (mine,), FAKETIME_ENV)
    assert find_faketime({FAKETIME_ENV: "none"}, tmp_path, probe=False) == (
        f"{FAKETIME_ENV} disables the frozen clock"
    )
    missing = find_faketime({FAKETIME_ENV: str(tmp_path / "nope.so")}, tmp_path, probe=False)
    assert isinstance(missing, str)
    assert "is not a file" in missing
    usual.unlink()
    absent = find_faketime({}, tmp_path, probe=False)
    assert absent == f"libfaketime not found: install it or set {FAKETIME_ENV}"


def test_faketime_found_by_ldconfig_and_pkg_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = _touch(tmp_path, "weird/place/libfaketime.so.1")
    from_pc = _touch(tmp_path, "pc/lib/faketime/libfaketime.so.1")
    outputs = {
        "-p": f"2 libs found in cache\n\tlibfaketime.so.1 (libc6,AArch64) => {cached}\n",
        "--variable=libdir": "",
    }
    monkeypatch.setattr(redis_server, "_run_quiet", lambda argv: outputs.get(argv[1], ""))
    found = find_faketime({}, tmp_path / "empty-root")
    assert isinstance(found, Faketime)
    assert (found.library, found.found_by) == (cached, "ldconfig")
    outputs["--variable=libdir"] = f"{tmp_path / 'pc' / 'lib'}\n"
    found = find_faketime({}, tmp_path / "empty-root")
    assert isinstance(found, Faketime)
    assert (found.library, found.found_by) == (from_pc, "pkg-config")


# -- reports for CI ------------------------------------------------------------------------------


def test_junit_and_markdown_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    junit = tmp_path / "ci" / "junit.xml"
    junit.parent.mkdir()
    adapter = reference_variant(tmp_path, "always-first", ALWAYS_FIRST)
    outcome = conformance(tmp_path, adapter=adapter, pattern="complete/first-completer/", junit=junit)
    assert outcome.code == EXIT_NONCONFORMANT
    out = tmp_path / "out-0"
    assert (out / "junit.xml").read_text() == junit.read_text()
    root = ET.parse(junit).getroot()
    cases = root.findall("testsuite/testcase")
    assert len(cases) == len(outcome.report["cases"]) == int(root.get("tests", "0"))
    failed = 0
    for element, record in zip(cases, outcome.report["cases"], strict=True):
        assert (element.get("classname"), element.get("name")) == ("complete", record["id"])
        reqs = [p.get("value") for p in element.findall("properties/property[@name='requirement']")]
        assert reqs == record["requirements"]
        failure = element.find("failure")
        if record["status"] == "fail":
            failed += 1
            assert failure is not None
            assert failure.get("message") == record["failure"]["message"]
            assert "rerun: rwq conformance" in (failure.text or "")
        else:
            assert failure is None
    assert failed
    assert root.get("failures") == str(failed)
    summary = (out / "summary.md").read_text()
    assert "**non-conformant**" in summary
    assert "### Failing requirements" in summary
    assert outcome.report["cases"][0]["requirements"][0] in summary
    assert step_summary.read_text() == "earlier step\n" + summary + "\n"
    assert not (out / "adapters").exists()  # nothing on stderr, so no log files


def test_failures_are_capped_and_grouped_by_requirement() -> None:
    records = [
        {
            "id": f"group/case-{n:02}",
            "title": "t",
            "source": "group.json",
            "status": "fail",
            "requirements": [f"RWQ-X-{n % 3:03}"],
            "needs": [],
            "duration_ms": 1,
            "failure": {"step": 1, "verb": "call", "kind": "mismatch", "message": f"wrong {n}"},
            "note": None,
        }
        for n in range(MAX_LISTED + 5)
    ]
    report: dict[str, Any] = {
        "adapter": {"command": "port --stdio"},
        "implementation": {"name": "port", "version": "1"},
        "environment": {"managed": True, "clock": "frozen", "version": "7"},
        "summary": summarise(records),
        "cases": records,
        "aborted": None,
        "verdict": "non-conformant",
        "exit_code": 1,
        "seed": 7,
        "duration_ms": 25,
        "known_failures": {"unmatched": []},
    }
    markdown = markdown_summary(report)
    assert "- 5 more failures (see report.json)" in markdown
    assert markdown.count("- **fail**") == MAX_LISTED
    assert "| RWQ-X-000 | 9: group/case-00, group/case-03, group/case-06, +6 more |" in markdown
    buffer = io.StringIO()
    Terminal(Console(file=buffer, width=80)).final(report)
    text = buffer.getvalue()
    assert "... and 5 more failures" in text
    assert "failing requirements (3):" in text
    assert "--seed 7" in text
    assert text.count("\nFAIL group/case-") == MAX_LISTED


def test_handshake_failure_shows_the_adapter_stderr(tmp_path: Path) -> None:
    body = "import sys\nprint('cannot connect to redis: ECONNREFUSED', file=sys.stderr)\nsys.exit(1)\n"
    outcome = conformance(tmp_path, adapter=adapter_script(tmp_path, "no-redis", body))
    assert outcome.code == EXIT_ADAPTER_BROKEN
    assert outcome.report["aborted_stderr"] == ["cannot connect to redis: ECONNREFUSED"]
    assert "cannot connect to redis: ECONNREFUSED" in outcome.text
    assert "ECONNREFUSED" in (tmp_path / "out-0" / "summary.md").read_text()
    root = ET.parse(tmp_path / "out-0" / "junit.xml").getroot()
    assert (root.get("tests"), root.get("errors")) == ("1", "1")  # a broken adapter is never green
    error = root.find("testsuite[@name='run']/testcase[@name='aborted']/error")
    assert error is not None
    assert error.get("message") == outcome.report["aborted"]
    assert error.text == "cannot connect to redis: ECONNREFUSED"


def test_cli_output_fits_80_columns_without_ansi(tmp_path: Path) -> None:
    adapter = reference_variant(tmp_path, "always-first", ALWAYS_FIRST)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rwq.cli",
            "conformance",
            "--adapter",
            adapter,
            "-k",
            "complete/first-completer/",
            "--out",
            str(tmp_path / "out"),
            "--seed",
            "2147483646",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": "80", "TERM": "xterm-256color"},
    )
    assert done.returncode == EXIT_NONCONFORMANT, done.stdout + done.stderr
    assert "\x1b" not in done.stdout
    first = "rwq conformance: seed 2147483646 (--seed 2147483646 replays this run)"
    assert done.stdout.splitlines()[0] == first  # the largest seed drawn still fits one line
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


# -- deterministic replay ------------------------------------------------------------------------


def test_same_seed_same_property_programs(tmp_path: Path) -> None:
    def programs(seed: int) -> str:
        outcome = conformance(tmp_path, pattern="property/", property_examples=3, seed=seed)
        assert outcome.report["seed"] == seed
        assert f"seed {seed}" in outcome.text.splitlines()[0]
        record = outcome.case("property/core-model")
        assert record["status"] == "pass", record
        return str(record["note"])

    first = programs(11)
    assert first.startswith("3 programs, ")
    assert programs(11) == first
    assert programs(12) != first


def test_same_seed_same_workload_schedule() -> None:
    """Each worker's choices and the nemesis' fault timing come from the run's seed."""
    env: Any = SimpleNamespace(new_namespace=lambda: "rwqc:{0123456789ab}", data_url="redis://127.0.0.1:1/0")

    def schedule(seed: int) -> list[list[float]]:
        workload = Workload(env, cast(AdapterPool, None), WorkloadConfig(seed=seed))
        return [[worker.rng.random() for _ in range(5)] for worker in workload.workers]

    assert schedule(5) == schedule(5)
    assert schedule(5) != schedule(6)
    assert len({tuple(rngs) for rngs in schedule(5)}) == WorkloadConfig().workers  # one stream each


def test_failure_time_may_explain_is_inconclusive_on_a_running_clock(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """On a running clock a failing case that took longer than its shortest lease is reported
    not-applicable (real time may have expired it), never failed; a failure no duration explains,
    or any failure under a frozen clock, still fails."""
    cases = tmp_path / "cases"
    cases.mkdir()
    add = {"call": "add", "session": "p", "args": {"id": {"utf8": "a"}, "data": {"utf8": "A"}}}
    wrong_counts = {"call": "counts", "session": "p", "expect": {"result": {"queued": 9, "processing": 9}}}
    document = {
        "format": 1,
        "group": "timing",
        "description": "always-failing cases, with and without a short lease",
        "defaults": {"profiles": ["core"], "sessions": {"p": {}}},
        "cases": [
            {
                "id": "timing/short-lease",
                "title": "fails after a 1 ms lease",
                "requirements": ["RWQ-COUNT-001"],
                "needs": ["clock-control"],
                "steps": [add, {"call": "lease", "session": "p", "args": {"lease_ms": 1}}, wrong_counts],
            },
            {
                "id": "timing/no-duration",
                "title": "fails with no duration in play",
                "requirements": ["RWQ-COUNT-001"],
                "steps": [add, wrong_counts],
            },
        ],
    }
    (cases / "timing.json").write_text(json.dumps(document))
    running = conformance(tmp_path, redis_url=redis_server.url, cases_dir=cases)
    short = running.case("timing/short-lease")
    assert short["status"] == "not-applicable", short
    assert short["note"].startswith("environment lacks: frozen-clock (inconclusive: the case took ")
    assert running.status("timing/no-duration") == "fail"
    frozen = conformance(tmp_path, cases_dir=cases)
    assert frozen.status("timing/short-lease") == frozen.status("timing/no-duration") == "fail"


def test_a_libfaketime_that_does_not_freeze_falls_back_to_a_running_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A preload the dynamic linker ignores (not a library, wrong architecture) leaves the clock
    real: the runner notices, and runs without frozen-clock cases instead of failing them."""
    bogus = _touch(tmp_path, "lib/libfaketime.so.1")
    monkeypatch.setenv(FAKETIME_ENV, str(bogus))
    outcome = conformance(tmp_path, pattern="complete-and-lease/effects/")
    assert outcome.code == EXIT_CONFORMS, outcome.text[-2000:]
    environment = outcome.report["environment"]
    assert environment["clock"] == "surgery"
    assert (
        environment["clock_note"]
        == f"no frozen clock with {bogus}: redis-server started, but its clock is not frozen"
    )
    assert {c["status"] for c in outcome.report["cases"]} <= {"pass", "not-applicable"}


def test_commands_an_external_redis_refuses_make_cases_not_applicable(tmp_path: Path) -> None:
    """A hosted Redis may forbid CLIENT LIST and CLIENT KILL (an ACL, renamed commands): the cases
    that need them are not-applicable with the server's refusal, not errors of the port."""
    with RedisServer() as server:
        admin = raw_client(server.url)
        admin.execute_command(
            "ACL", "SETUSER", "port", "on", ">secret", "~*", "&*", "+@all", "-client|list", "-client|kill"
        )
        url = f"redis://port:secret@127.0.0.1:{server.port}/0"
        outcome = conformance(tmp_path, redis_url=url, pattern="resilience/connection/recovers-after-kill")
        blocking = conformance(tmp_path, redis_url=url, pattern="lease/blocking/wakes-on-add")
        admin.close()
    for result in (outcome, blocking):
        assert result.code == EXIT_NOTHING_RAN, result.text[-2000:]
        for case in result.report["cases"]:
            assert case["status"] == "not-applicable"
            assert case["note"].startswith("environment lacks: a command the runner needs (")
            assert "no permissions" in case["note"]


SHORT_TOKENS = """
import secrets

from rwq.conformance import reference_adapter
from rwq.protocol import operations

operations.new_token = lambda: secrets.token_hex(4)  # 32 bits: RWQ-SEC-004 (a SHOULD) asks 128
reference_adapter.main()
"""


def test_a_missed_should_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    """A case of SHOULDs (should: true) that fails is status warn: reported in the report, the
    terminal, junit.xml and the requirement's verdict, but the run still conforms."""
    adapter = adapter_script(tmp_path, "short-tokens", SHORT_TOKENS)
    outcome = conformance(tmp_path, adapter=adapter, pattern="encoding/token/*")
    assert outcome.code == EXIT_CONFORMS
    assert outcome.status("encoding/token/at-least-16-bytes") == "warn"
    assert (
        "8 bytes is less than the minimum of 16"
        in outcome.case("encoding/token/at-least-16-bytes")["failure"]["message"]
    )
    assert outcome.status("encoding/token/unique-across-processes") == "pass"  # the MUSTs still hold
    assert outcome.report["requirements"]["RWQ-SEC-004"]["verdict"] == "warn"
    assert outcome.report["summary"]["warnings"] == 1
    assert outcome.report["verdict"] == "conforms"
    assert outcome.text.rstrip("\n").splitlines()[-1].endswith("failed, 0 skipped, 1 warning")
    assert "warning (a SHOULD)" in (tmp_path / "out-0" / "junit.xml").read_text()
    reference = conformance(tmp_path, pattern="encoding/token/at-least-16-bytes")
    assert reference.status("encoding/token/at-least-16-bytes") == "pass"
    assert reference.closing == (1, 0, 0)


def test_own_processes_are_parked_between_cases_unless_busy(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """An own process that ends its case idle answers ``reset`` and hosts a later case's own
    session (starting an adapter costs more than most cases), with its fault proxy disarmed; one
    with a call in flight, or killed, is retired, and the next case gets a new process."""
    pool = AdapterPool(
        shlex.split(REFERENCE),
        redis_url=redis_server.url,
        timeouts=Timeouts(),
        log_dir=tmp_path,
        emit=lambda event, **fields: None,
    )
    opening = {"session": "w1", "queue": "rwq-test-park", "client_name": "park-1"}
    try:
        first, _ = pool.own("subject")
        assert first.request("open", opening).ok
        assert pool.park("subject", first)
        assert pool.own("subject") == (first, None)
        assert first.request("call", {"session": "w1", "method": "counts", "params": {}}).ok is False

        first.send("open", opening)
        assert not pool.park("subject", first)  # its reply was never read: not reusable
        second, _ = pool.own("subject")
        assert second is not first

        second.kill()
        assert not pool.park("subject", second)
        third, _ = pool.own("subject")
        assert third is not second
        assert third.idle

        proxied, proxy = pool.own("subject", ("127.0.0.1", redis_server.port))
        assert proxy is not None
        assert proxied is not third
        proxy.arm("drop-call")
        assert pool.park("subject", proxied, proxy)
        assert pool.own("subject", ("127.0.0.1", redis_server.port)) == (proxied, proxy)
        assert proxy.armed is None
        assert proxied.request("open", opening).ok
        assert proxied.request("call", {"session": "w1", "method": "counts", "params": {}}).ok
    finally:
        pool.close()
