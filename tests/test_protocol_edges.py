"""Edges of the sans-IO protocol layer that the conformance suite cannot reach through an adapter.

Each test kills generated mutants judged ``outside_fast_mode`` in
conformance/audit/generated/verdicts.json: the value involved cannot cross the adapter protocol
(a lone surrogate, a null policy for set_policy_if_absent, a prefix of 1 or 512 bytes the runner
cannot build), or every adapter call refuses it later with the same error. No Redis: each plan is
refused, or inspected, before its first command.
"""

from __future__ import annotations

import pytest

from rwq import InvalidArgument, RetryPolicy
from rwq.protocol import operations as ops
from rwq.protocol import validation as v


def test_fail_text_keeps_a_lone_surrogate_as_a_replacement() -> None:
    """A reason or detail holding a lone surrogate is stored with '?', never a UnicodeEncodeError."""
    reason, how, ms, detail = ops.fail_args("bad \ud800", detail="tb \udfff")
    assert (reason, how, ms, detail) == (b"bad ?", b"backoff", b"0", b"tb ?")


def test_a_token_with_a_lone_surrogate_is_an_invalid_argument() -> None:
    with pytest.raises(InvalidArgument, match="lone surrogate"):
        v.token("t\ud800")


def test_a_policy_holds_numbers_up_to_ten_to_the_fifteen() -> None:
    """RWQ-RETRY-014 reads stored numbers up to 10**15: a policy holds one, not one more."""
    assert RetryPolicy(max_attempts=10**15).max_attempts == 10**15
    for name in ("max_attempts", "base_ms", "dead_max_count"):
        with pytest.raises(InvalidArgument):
            RetryPolicy(**{name: 10**15 + 1})  # type: ignore[arg-type]


def test_set_policy_if_absent_needs_a_policy() -> None:
    plan = ops.set_policy(ops.QueueKeys("jobs"), None, if_absent=True)
    with pytest.raises(InvalidArgument, match="if_absent needs a policy"):
        next(plan)


@pytest.mark.parametrize(("length", "valid"), [(1, True), (512, True), (513, False)])
def test_prefix_is_1_to_512_bytes(length: int, valid: bool) -> None:
    """RWQ-KEYS-011, counted in bytes: 'é' is two."""
    value = "é" * (length // 2) + "p" * (length % 2)
    if valid:
        assert v.queue_prefix(value, cluster=False) == value
    else:
        with pytest.raises(InvalidArgument, match=r"1\.\.512 bytes"):
            v.queue_prefix(value, cluster=False)
