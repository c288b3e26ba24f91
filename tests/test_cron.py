"""The cron walk of profile periodic (rwq.protocol.cron) against conformance/vectors/cron.json,
and the vectors file against its schema and its generator."""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from rwq.errors import InvalidArgument, InvalidType
from rwq.protocol.cron import MAX_AFTER_MS, CronSchedule

ROOT = Path(__file__).resolve().parents[1]
VECTORS: list[dict[str, Any]] = json.loads((ROOT / "conformance/vectors/cron.json").read_text())["vectors"]


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("cron_vectors", ROOT / "tools" / "cron_vectors.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["cron_vectors"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_vectors_match_their_schema() -> None:
    schema = json.loads((ROOT / "schemas/cron-vectors.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    document = json.loads((ROOT / "conformance/vectors/cron.json").read_text())
    errors = [error.message for error in Draft202012Validator(schema).iter_errors(document)]
    assert errors == []
    ids = [vector["id"] for vector in VECTORS]
    assert len(ids) == len(set(ids))


def test_vectors_are_fresh() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "cron_vectors.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["id"] for vector in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    if "refused" in vector:
        with pytest.raises(InvalidArgument, match=r"RWQ-SCHED-00[147]"):
            CronSchedule.parse(vector["expr"], vector["tz"])
        return
    schedule = CronSchedule.parse(vector["expr"], vector["tz"])
    got, after = [], vector["after_ms"]
    for _ in vector["next_ms"]:
        after = schedule.next_slot(after)
        got.append(after)
    assert got == vector["next_ms"]


def _item(rng: random.Random, least: int, greatest: int, names: tuple[str, ...]) -> str:
    def value(number: int) -> str:
        if names and rng.random() < 0.3:
            return rng.choice([str.lower, str.upper, str.title])(names[number - least])
        return f"{number:02d}" if rng.random() < 0.2 else str(number)

    kind = rng.random()
    if kind < 0.4:
        return value(rng.randint(least, greatest))
    start = rng.randint(least, greatest)
    base = "*" if kind < 0.6 else f"{value(start)}-{value(rng.randint(start, greatest))}"
    return base + (f"/{rng.randint(1, greatest - least + 1)}" if rng.random() < 0.6 else "")


def test_fields_match_a_hand_parser() -> None:
    """croniter's expansion, behind the grammar check, against the vectors generator's own parser
    on random expressions of the dialect (croniter 7.0.0 reads ``5-5`` as ``*``, for one)."""
    generator, rng = _generator(), random.Random(25)
    for _ in range(1500):
        texts = [
            ",".join(_item(rng, least, greatest, names) for _ in range(rng.choice((1, 1, 2, 3))))
            for _, least, greatest, names in generator.FIELDS
        ]
        expr = " ".join(texts)
        try:
            expected = generator.parse(expr)
        except generator.Refused:
            with pytest.raises(InvalidArgument):
                CronSchedule.parse(expr)
            continue
        got = CronSchedule.parse(expr)
        assert (got.minutes, got.hours, got.days_of_month, got.months, got.days_of_week) == (
            expected.minutes,
            expected.hours,
            expected.doms,
            expected.months,
            expected.dows,
        ), expr
        assert (got.hour_star, got.or_days) == (expected.hour_star, expected.or_days), expr


def test_bad_arguments_are_typed() -> None:
    with pytest.raises(InvalidType):
        CronSchedule.parse(5, "UTC")  # type: ignore[arg-type]
    with pytest.raises(InvalidType):
        CronSchedule.parse("* * * * *", None)  # type: ignore[arg-type]
    schedule = CronSchedule.parse("* * * * *", "UTC")
    with pytest.raises(InvalidType):
        schedule.next_slot(True)
    with pytest.raises(InvalidType):
        schedule.next_slot(1.5)  # type: ignore[arg-type]
    for bad in (-1, MAX_AFTER_MS):
        with pytest.raises(InvalidArgument, match="after_ms"):
            schedule.next_slot(bad)
    assert schedule.next_slot(MAX_AFTER_MS - 1) == MAX_AFTER_MS
    assert CronSchedule.parse("@daily", "UTC").expr == "@daily"
